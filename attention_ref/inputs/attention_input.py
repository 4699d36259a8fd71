"""A user's own numbers for ``attnref explain --input FILE``: read, validate, explain errors.

The file is JSON, per-head form (seeds 000/003):

```text
    {"tokens": ["Life", "is", "awesome"],          # optional, n names
     "X": [[...], ...],                              # n x d_model
     "heads": [{"W_Q": d_model x d_k, "W_K": d_model x d_k, "W_V": d_model x d_v,
                "b_Q": d_k, "b_K": d_k, "b_V": d_v}, ...],   # biases optional
     "W_O": (h*d_v) x d_out,                         # optional: none = output is the concat
     "b_O": d_out,                                   # optional, needs W_O
     "causal": true}                                 # optional, default true
```

or fused form (seeds 001/002): ``"W_Q"``, ``"W_K"``, ``"W_V"`` of ``d_model x (h*d_k)``
(optional ``"b_Q"``, ``"b_K"``, ``"b_V"`` of ``h*d_k`` entries) and ``"h"`` instead of
``"heads"``; the columns (and bias entries) are split into ``h`` heads. A bias is a plain
list of numbers, added to every row: ``Q = X W_Q + b_Q`` (``nn.Linear``: ``W = weight.T``,
``b = bias``). ``d_out`` may be any width; without ``W_O`` (missing or ``null``) there is no
output projection and the output is the concat, ``n x h*d_v``.

The JSON that ``attnref explain --format json`` prints is accepted too: it carries the
numbers it used under ``"input"`` (this very format), and only that object is read; the
rest of that document is what explain computed from it.

Every problem raises `InputError` with one line that names the matrix, what was
expected and what came, in the command's language (``lang``: the words are
`attention_ref.inputs.input_words.WORDS`, a table per language). This module does not import
torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from attention_ref.inputs.errors import MAX_FILE_BYTES, InputError
from attention_ref.inputs.input_words import error, words
from attention_ref.inputs.jsonfile import read_json

Matrix = list[list[float]]

MAX_TOKENS = 256
MAX_D_MODEL = 1024
MAX_HEADS = 64

PER_HEAD_KEYS = frozenset({"tokens", "X", "heads", "W_O", "b_O", "causal"})
FUSED_KEYS = frozenset(
    {"tokens", "X", "W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "h", "W_O", "b_O", "causal"}
)
HEAD_KEYS = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V")
#: The key under which an ``explain --format json`` document carries its input.
INPUT_KEY = "input"


@dataclass(frozen=True)
class AttentionInput:
    """Validated numbers, per-head view: ``W_Q[i]`` is ``W_Q^(i+1)`` (d_model x d_k).

    ``b_Q[i]`` is ``b_Q^(i+1)`` (``d_k`` numbers), or ``b_Q`` is ``None`` (no bias); ``W_O``
    is ``(h*d_v) x d_out`` or ``None`` (no output projection), ``b_O`` has ``d_out`` numbers.
    ``fused`` records the form the file used (`to_json` writes it back in that form).
    """

    X: Matrix
    W_Q: list[Matrix]
    W_K: list[Matrix]
    W_V: list[Matrix]
    W_O: Matrix | None
    causal: bool
    tokens: tuple[str, ...]
    fused: bool
    b_Q: Matrix | None = None  # noqa: N815
    b_K: Matrix | None = None  # noqa: N815
    b_V: Matrix | None = None  # noqa: N815
    b_O: list[float] | None = None  # noqa: N815

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.X)

    @property
    def d_model(self) -> int:
        """Embedding width."""
        return len(self.X[0])

    @property
    def h(self) -> int:
        """Number of heads."""
        return len(self.W_Q)

    @property
    def d_v(self) -> int:
        """Width of a value head."""
        return len(self.W_V[0][0])

    @property
    def d_out(self) -> int:
        """Width of the output: the columns of ``W_O``, or ``h*d_v`` without ``W_O``."""
        return len(self.W_O[0]) if self.W_O is not None else self.h * self.d_v

    def to_json(self) -> dict[str, object]:
        """The ``--input`` document of these numbers, in the form the file used.

        `parse_input` of the result gives back an equal `AttentionInput`; biases and ``W_O``
        are written only when present.
        """
        doc: dict[str, object] = {"tokens": list(self.tokens), "X": self.X}
        biases = {"b_Q": self.b_Q, "b_K": self.b_K, "b_V": self.b_V}
        if self.fused:
            doc["h"] = self.h
            for role, Ws in (("W_Q", self.W_Q), ("W_K", self.W_K), ("W_V", self.W_V)):
                # h blocks (d_model x d) side by side: row r joins row r of every head
                doc[role] = [[v for W in Ws for v in W[r]] for r in range(self.d_model)]
            doc |= {k: [v for bi in b for v in bi] for k, b in biases.items() if b is not None}
        else:
            heads: list[dict[str, object]] = []
            for i in range(self.h):
                head: dict[str, object] = {
                    "W_Q": self.W_Q[i],
                    "W_K": self.W_K[i],
                    "W_V": self.W_V[i],
                }
                head |= {k: b[i] for k, b in biases.items() if b is not None}
                heads.append(head)
            doc["heads"] = heads
        if self.W_O is not None:
            doc["W_O"] = self.W_O
        if self.b_O is not None:
            doc["b_O"] = self.b_O
        doc["causal"] = self.causal
        return doc


def _dims(m: Matrix) -> str:
    return f"{len(m)}×{len(m[0]) if m else 0}"


def matrix(obj: object, name: str, *, max_rows: int, max_cols: int, lang: str = "en") -> Matrix:
    """A non-empty rectangular list of lists of finite numbers, else `InputError` (in
    ``lang``)."""
    if not isinstance(obj, list) or not all(isinstance(r, list) for r in obj):
        raise error(lang, "rows", name=name)
    if not obj:
        raise error(lang, "empty", name=name)
    if len(obj) > max_rows:
        raise error(lang, "too_many_rows", name=name, rows=len(obj), limit=max_rows)
    width = len(obj[0])
    if width == 0:
        raise error(lang, "empty_row", name=name)
    if width > max_cols:
        raise error(lang, "too_many_cols", name=name, cols=width, limit=max_cols)
    rows: Matrix = []
    for i, row in enumerate(obj):
        if len(row) != width:
            raise error(lang, "ragged", name=name, i=i + 1, k=len(row), width=width)
        for j, v in enumerate(row):
            _number(v, f"{name}[{i + 1}][{j + 1}]", lang)
        rows.append([float(v) for v in row])
    return rows


def _number(v: object, where: str, lang: str) -> None:
    """Refuse ``v`` (the entry ``where``) unless it is a finite number (a bool is not)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise error(lang, "not_number", where=where, shown=json.dumps(v))
    if not math.isfinite(v):
        raise error(lang, "not_finite", where=where, value=v)


def vector(obj: object, name: str, length: int, hint: str, lang: str = "en") -> list[float]:
    """A list of exactly ``length`` finite numbers (a bias), else `InputError` (in ``lang``;
    ``hint``, already in ``lang``, says what the length is)."""
    if not isinstance(obj, list):
        raise error(lang, "vector", name=name, length=length, hint=hint)
    if len(obj) != length:
        raise error(lang, "vector_length", name=name, k=len(obj), length=length, hint=hint)
    for j, v in enumerate(obj):
        _number(v, f"{name}[{j + 1}]", lang)
    return [float(v) for v in obj]


def _expect_shape(
    m: Matrix, name: str, rows: int | None, cols: int | None, hint: str, lang: str
) -> None:
    r_ok = rows is None or len(m) == rows
    c_ok = cols is None or len(m[0]) == cols
    if not (r_ok and c_ok):
        want = f"{rows if rows is not None else '*'}×{cols if cols is not None else '*'}"
        raise error(lang, "shape", name=name, dims=_dims(m), want=want, hint=hint)


def parse_input(doc: object, lang: str = "en") -> AttentionInput:
    """Validate a decoded JSON document; see the module docstring for the format. Every
    problem is one `InputError` line in ``lang``.

    An ``explain --format json`` document (it has the key ``"input"``) is read through that
    object alone.
    """
    if isinstance(doc, dict) and INPUT_KEY in doc:
        inner = doc[INPUT_KEY]
        if not isinstance(inner, dict):
            raise error(lang, "input_object", key=INPUT_KEY, kind=type(inner).__name__)
        doc = inner
    if not isinstance(doc, dict):
        raise error(lang, "not_object")
    variant = doc.get("variant")
    if isinstance(variant, str) and variant != "mha":
        raise error(lang, "variant", variant=variant[:20])
    fused = "heads" not in doc and any(k in doc for k in ("W_Q", "W_K", "W_V", "h"))
    allowed = FUSED_KEYS if fused else PER_HEAD_KEYS
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise error(lang, "unknown_key", key=unknown[0], keys=", ".join(sorted(allowed)))
    if "X" not in doc:
        raise error(lang, "missing_X")
    X = matrix(doc["X"], "X", max_rows=MAX_TOKENS, max_cols=MAX_D_MODEL, lang=lang)
    n, d_model = len(X), len(X[0])

    if fused:
        W_Q, W_K, W_V, b_Q, b_K, b_V = _fused_heads(doc, d_model, lang)
    else:
        W_Q, W_K, W_V, b_Q, b_K, b_V = _per_head(doc, d_model, lang)
    h, d_v = len(W_Q), len(W_V[0][0])

    W_O = None
    if doc.get("W_O") is not None:
        W_O = matrix(
            doc["W_O"], "W_O", max_rows=MAX_HEADS * MAX_D_MODEL, max_cols=MAX_D_MODEL, lang=lang
        )
        hint = words(lang, "hint_out", h=h, d_v=d_v)
        _expect_shape(W_O, "W_O", h * d_v, None, hint, lang)
    b_O = None
    if doc.get("b_O") is not None:
        if W_O is None:
            raise error(lang, "b_O_alone")
        b_O = vector(doc["b_O"], "b_O", len(W_O[0]), words(lang, "hint_b_O"), lang)

    causal = doc.get("causal", True)
    if not isinstance(causal, bool):
        raise error(lang, "causal", shown=json.dumps(causal))

    tokens_obj = doc.get("tokens")
    if tokens_obj is None:
        tokens = tuple(f"t{i + 1}" for i in range(n))
    else:
        if not isinstance(tokens_obj, list) or not all(isinstance(t, str) for t in tokens_obj):
            raise error(lang, "tokens_list")
        if len(tokens_obj) != n:
            raise error(lang, "tokens_count", k=len(tokens_obj), n=n)
        tokens = tuple(tokens_obj)
    return AttentionInput(
        X, W_Q, W_K, W_V, W_O, causal, tokens, fused, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O
    )


Weights = tuple[
    list[Matrix], list[Matrix], list[Matrix], Matrix | None, Matrix | None, Matrix | None
]


def _per_head(doc: dict[str, object], d_model: int, lang: str) -> Weights:
    heads = doc.get("heads")
    if heads is None:
        raise error(lang, "missing_heads")
    if not isinstance(heads, list) or not heads:
        raise error(lang, "heads_list")
    if len(heads) > MAX_HEADS:
        raise error(lang, "too_many_heads", k=len(heads), limit=MAX_HEADS)
    out: tuple[list[Matrix], ...] = ([], [], [])
    d_k = d_v = None
    for i, head in enumerate(heads):
        where = f"heads[{i}]"
        if not isinstance(head, dict):
            raise error(lang, "head_object", where=where)
        extra = sorted(set(head) - set(HEAD_KEYS))
        if extra:
            raise error(
                lang, "head_unknown_key", where=where, key=extra[0], keys=", ".join(HEAD_KEYS)
            )
        for role, acc in zip(("W_Q", "W_K", "W_V"), out, strict=True):
            if role not in head:
                raise error(lang, "head_missing", where=where, role=role, d_model=d_model)
            name = f"{where}.{role}"
            m = matrix(head[role], name, max_rows=MAX_D_MODEL, max_cols=MAX_D_MODEL, lang=lang)
            if role == "W_V":
                hint = words(lang, "hint_width", d="d_v")
                _expect_shape(m, name, d_model, d_v, hint, lang)
                d_v = len(m[0])
            else:
                hint = words(lang, "hint_width", d="d_k")
                _expect_shape(m, name, d_model, d_k, hint, lang)
                d_k = len(m[0])
            acc.append(m)
    assert d_k is not None and d_v is not None  # at least one head was read
    widths = {"b_Q": (d_k, "d_k"), "b_K": (d_k, "d_k"), "b_V": (d_v, "d_v")}
    biases: list[Matrix | None] = []
    for role, (width, sym) in widths.items():
        given = [role in head for head in heads]  # every entry is a dict by now
        if not any(given):
            biases.append(None)
            continue
        if not all(given):
            i, j = given.index(False), given.index(True)
            raise error(lang, "bias_some_heads", i=i, j=j, role=role)
        hint = words(lang, "hint_head_bias", sym=sym, width=width)
        biases.append(
            [
                vector(head[role], f"heads[{i}].{role}", width, hint, lang)
                for i, head in enumerate(heads)
            ]
        )
    return out[0], out[1], out[2], biases[0], biases[1], biases[2]


def _fused_heads(doc: dict[str, object], d_model: int, lang: str) -> Weights:
    h = doc.get("h")
    if isinstance(h, bool) or not isinstance(h, int):
        raise error(lang, "h_type", shown=json.dumps(h))
    if not 1 <= h <= MAX_HEADS:
        raise error(lang, "h_range", limit=MAX_HEADS, h=h)
    out: tuple[list[Matrix], ...] = ([], [], [])
    biases: list[Matrix | None] = []
    width_qk = None
    for role, acc in zip(("W_Q", "W_K", "W_V"), out, strict=True):
        if role not in doc:
            raise error(lang, "fused_missing", role=role)
        m = matrix(
            doc[role], role, max_rows=MAX_D_MODEL, max_cols=MAX_HEADS * MAX_D_MODEL, lang=lang
        )
        want_cols = width_qk if role == "W_K" else None
        hint = words(lang, "hint_width", d="h·d_k")
        _expect_shape(m, role, d_model, want_cols, hint, lang)
        width = len(m[0])
        if width % h:
            raise error(lang, "not_divisible", role=role, width=width, h=h)
        if role == "W_Q":
            width_qk = width
        d = width // h
        acc.extend([[row[i * d : (i + 1) * d] for row in m] for i in range(h)])
        b_role = "b" + role[1:]  # W_Q -> b_Q
        if doc.get(b_role) is None:
            biases.append(None)
            continue
        b = vector(doc[b_role], b_role, width, words(lang, "hint_fused_bias", role=role), lang)
        biases.append([b[i * d : (i + 1) * d] for i in range(h)])  # head i: entries i*d ..
    return out[0], out[1], out[2], biases[0], biases[1], biases[2]


def load_input_file(path: str | Path, lang: str = "en") -> AttentionInput:
    """Read and validate ``path`` (through `attention_ref.inputs.jsonfile`, the one bounded
    JSON loader); every failure is an `InputError` with one line, in ``lang`` (its ``.lang``)."""
    return parse_input(read_json(path, "input file", lang=lang), lang)


__all__ = [
    "FUSED_KEYS",
    "HEAD_KEYS",
    "INPUT_KEY",
    "MAX_D_MODEL",
    "MAX_FILE_BYTES",
    "MAX_HEADS",
    "MAX_TOKENS",
    "PER_HEAD_KEYS",
    "AttentionInput",
    "InputError",
    "Matrix",
    "load_input_file",
    "matrix",
    "parse_input",
    "vector",
]
