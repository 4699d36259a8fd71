"""The documents' worked examples, computed once per version of the code and kept as data.

``attnref explain -e NAME`` computes its example with the reference, in torch, and importing
torch takes about a second before any number is computed. What it computes depends only on
the code: the same example, the same `attention_ref.render.Explanation`, every time. So the
first run writes the document as JSON in the user cache (``$XDG_CACHE_HOME/attnref/explain/``,
``~/.cache`` by default) and the next runs read it back, without torch.

The file's name holds the example, its language and a key (`code_key`): a sha256 of every
``.py`` file of the package, of torch's ``version.py`` (the version and build that computed the
numbers), of the Python version and the machine's architecture. Any change to any of them is
another key, so a stale document is never read: it is computed again (and the old files of that
example are removed). A document is kept only when it reads back equal to itself (`to_json` /
`from_json`: the four types of the document model, plain numbers and strings; nothing that JSON
would change), and a file that cannot be read or decoded is computed again. Nothing is cached
when the cache folder cannot be written.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import sys
import tempfile
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from attention_ref.render.document import Explanation, Mat, Section, Shape
from attention_ref.worked.registry import LANGS, check_example, check_lang, explain_example

#: bump when the JSON form of a document changes
FORMAT = 1
#: the document types a cached file may hold, by name
TYPES: dict[str, type] = {t.__name__: t for t in (Explanation, Section, Mat, Shape)}
PACKAGE = Path(__file__).resolve().parents[1]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/attnref/explain`` (``~/.cache`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnref" / "explain"


def code_key(package: Path = PACKAGE) -> str:
    """sha256 of what a worked example's numbers depend on: every ``.py`` file of
    ``package`` (path and bytes), torch's ``version.py``, Python's version, the architecture
    (no torch import: its files are found, not loaded)."""
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    spec = importlib.util.find_spec("torch")
    origin = Path(spec.origin) if spec and spec.origin else None
    version = origin.with_name("version.py") if origin else None
    h.update(version.read_bytes() if version and version.is_file() else b"no torch")
    h.update(f"{sys.version}\0{platform.machine()}".encode())
    return h.hexdigest()


def _encode(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        name = type(obj).__name__
        if TYPES.get(name) is not type(obj):
            raise TypeError(f"not a document type: {name}")
        return {"__type__": name, **{f.name: _encode(getattr(obj, f.name)) for f in fields(obj)}}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj) or "__type__" in obj or "__tuple__" in obj:
            raise TypeError("a mapping with keys JSON would change")
        return {k: _encode(v) for k, v in obj.items()}
    if obj is None or type(obj) in (str, int, float, bool):
        return obj
    raise TypeError(f"not plain data: {type(obj).__name__}")


def _decode(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tuple__" in obj:
        return tuple(_decode(v) for v in obj["__tuple__"])
    if "__type__" in obj:
        cls = TYPES[obj["__type__"]]  # KeyError: not a document type
        return cls(**{k: _decode(v) for k, v in obj.items() if k != "__type__"})
    return {k: _decode(v) for k, v in obj.items()}


def to_json(expl: Explanation) -> str:
    """The document as JSON (`TypeError` for anything but the document types and plain
    data: lists, tuples, string-keyed dicts, strings, numbers, booleans, None)."""
    return json.dumps(_encode(expl))


def from_json(text: str) -> Explanation:
    """The document of `to_json` (`ValueError`, `KeyError` or `TypeError` for anything else)."""
    expl = _decode(json.loads(text))
    if not isinstance(expl, Explanation):
        raise TypeError("not an explanation")
    return expl


def explain_example_cached(name: str, lang: str = LANGS[0]) -> Explanation:
    """`attention_ref.worked.registry.explain_example` in ``lang``, read from the cache when
    this code computed it before (see the module docstring): ``NAME.LANG-KEY.json``."""
    check_lang(lang)
    check_example(name, lang)
    folder = cache_dir()
    path = folder / f"{name}.{lang}-{code_key()}.json"
    try:
        return from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not computed by this code yet, or unreadable: compute it
    expl = explain_example(name, lang)
    try:
        text = to_json(expl)
        if from_json(text) != expl:  # e.g. a NaN (never equal to itself): do not keep it
            return expl
        folder.mkdir(parents=True, exist_ok=True)
        key = "?" * 64  # this example's older versions, and those of before the languages
        for old in [*folder.glob(f"{name}.{lang}-{key}.json"), *folder.glob(f"{name}-{key}.json")]:
            old.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)  # whole or not at all: a reader never sees half a file
        finally:
            Path(tmp).unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        pass  # a cache that cannot be written costs the next run its second, nothing else
    return expl
