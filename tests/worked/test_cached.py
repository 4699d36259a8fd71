"""The worked examples kept as data: the same output as computing them, never a stale one.

Every example is read back from the cache and printed in every format: the same text as the
document computed now. A second run in a fresh interpreter imports no torch. A file written
by other code (another key), a damaged file, a cache that cannot be written, a document JSON
would change: each is computed again, never shown.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from attention_ref.render import FORMATS, render
from attention_ref.render.document import Explanation, Mat, Section
from attention_ref.worked import cached
from attention_ref.worked.registry import EXAMPLE_NAMES, explain_example

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "attnref" / "explain"


def printed(expl: Explanation, fmt: str) -> str:
    """What ``attnref explain`` prints of ``expl`` in ``fmt`` (rich: on a 100-column console)."""
    out = render(expl, fmt, None)
    if isinstance(out, str):
        return out
    console = Console(file=io.StringIO(), width=100, record=True, color_system=None)
    for part in out:
        console.print(part)
    return console.export_text()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_a_cached_example_prints_what_computing_it_prints(cache, name):
    fresh = explain_example(name)
    first = cached.explain_example_cached(name)  # computed, then written
    (path,) = cache.glob(f"{name}.*.json")
    assert path.name == f"{name}.en-{cached.code_key()}.json"
    again = cached.explain_example_cached(name)  # read back
    assert again == fresh == first
    for fmt in FORMATS:
        assert printed(again, fmt) == printed(fresh, fmt), fmt


def test_the_comparison_can_fail(cache):
    """A document with one number changed prints differently in every format."""
    expl = explain_example("life-is-awesome")
    sec = next(s for s in expl.sections if any(isinstance(i, Mat) for i in s.items))
    i, mat = next((i, m) for i, m in enumerate(sec.items) if isinstance(m, Mat))
    rows = [list(r) for r in mat.value]
    rows[0][0] += 0.5
    items = list(sec.items)
    items[i] = replace(mat, value=rows)
    sections = [replace(s, items=items) if s is sec else s for s in expl.sections]
    changed = replace(expl, sections=sections)
    for fmt in ("rich", "markdown", "latex"):
        assert printed(changed, fmt) != printed(expl, fmt), fmt


def test_a_second_run_imports_no_torch_and_prints_the_same(tmp_path):
    code = (
        "import contextlib, io, sys\n"
        "from attention_ref.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    main(['explain', '-e', 'i-want-pizza', '--format', 'markdown'])\n"
        "print(repr(out.getvalue()))\n"
        "print('torch' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        ).stdout.splitlines()
        for _ in range(2)
    ]
    assert runs[0][1] == "True" and runs[1][1] == "False"  # computed, then read back
    assert runs[0][0] == runs[1][0]
    assert "Я хочу пиццу" in runs[1][0] or "pizza" in runs[1][0].lower()


def test_another_versions_file_is_never_read_and_is_removed(cache):
    """A file under another key (written by other code) holding other numbers: not shown."""
    expl = explain_example("life-is-awesome")
    stale = replace(expl, title="STALE " + expl.title)
    cache.mkdir(parents=True)
    old = cache / f"life-is-awesome-{'0' * 64}.json"
    old.write_text(cached.to_json(stale), encoding="utf-8")
    assert cached.explain_example_cached("life-is-awesome") == expl
    assert not old.exists()


def test_a_damaged_file_is_computed_again(cache):
    expl = explain_example("life-is-awesome")
    cache.mkdir(parents=True)
    path = cache / f"life-is-awesome.en-{cached.code_key()}.json"
    for damage in ("", "{", json.dumps({"__type__": "Popen", "args": "x"}), "[1, 2]"):
        path.write_text(damage, encoding="utf-8")
        assert cached.explain_example_cached("life-is-awesome") == expl
        assert cached.from_json(path.read_text(encoding="utf-8")) == expl  # and rewritten


def test_a_cache_that_cannot_be_written_costs_nothing_but_time(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache folder cannot be made
    assert cached.explain_example_cached("life-is-awesome") == explain_example("life-is-awesome")


def test_the_key_follows_the_code(tmp_path):
    package = tmp_path / "attention_ref"
    shutil.copytree(cached.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    key = cached.code_key(package)
    assert key == cached.code_key(package) == cached.code_key()  # the same code, the same key
    target = package / "reference" / "attention.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert cached.code_key(package) != key  # any change to any file
    (package / "reference" / "new.py").write_text("x = 1\n", encoding="utf-8")
    assert len({key, cached.code_key(package)}) == 2


def test_only_plain_documents_are_kept(cache):
    """JSON would change these, so they are refused (and a NaN is never equal to itself)."""
    doc = explain_example("life-is-awesome")

    class Number(float):
        pass

    odd = Section(title="x", items=[Mat(symbol="X", value=[[Number(1.0)]])])
    with pytest.raises(TypeError, match="not plain data"):
        cached.to_json(replace(doc, sections=[odd]))
    with pytest.raises(TypeError, match="keys JSON would change"):
        cached.to_json(replace(doc, data={1: "a"}))
    nan = Section(title="x", items=[Mat(symbol="X", value=[[float("nan")]])])
    text = cached.to_json(replace(doc, sections=[nan]))
    assert cached.from_json(text) != replace(doc, sections=[nan])  # what the cache checks
