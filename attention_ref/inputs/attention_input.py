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
expected and what came. This module does not import torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from attention_ref.inputs.errors import MAX_FILE_BYTES, InputError
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


def matrix(obj: object, name: str, *, max_rows: int, max_cols: int) -> Matrix:
    """A non-empty rectangular list of lists of finite numbers, else `InputError`."""
    if not isinstance(obj, list) or not all(isinstance(r, list) for r in obj):
        raise InputError(f"{name} must be a list of rows (a list of lists of numbers)")
    if not obj:
        raise InputError(f"{name} is empty: it needs at least one row")
    if len(obj) > max_rows:
        raise InputError(f"{name} has {len(obj)} rows; at most {max_rows} are supported")
    width = len(obj[0])
    if width == 0:
        raise InputError(f"{name} row 1 is empty: it needs at least one column")
    if width > max_cols:
        raise InputError(f"{name} has {width} columns; at most {max_cols} are supported")
    rows: Matrix = []
    for i, row in enumerate(obj):
        if len(row) != width:
            raise InputError(
                f"{name} is ragged: row {i + 1} has {len(row)} entries but row 1 has {width}"
            )
        for j, v in enumerate(row):
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InputError(f"{name}[{i + 1}][{j + 1}] is {json.dumps(v)}, not a number")
            if not math.isfinite(v):
                raise InputError(
                    f"{name}[{i + 1}][{j + 1}] is {v}: only finite numbers are allowed"
                )
        rows.append([float(v) for v in row])
    return rows


def vector(obj: object, name: str, length: int, hint: str) -> list[float]:
    """A list of exactly ``length`` finite numbers (a bias), else `InputError`."""
    if not isinstance(obj, list):
        raise InputError(f"{name} must be a list of {length} numbers ({hint})")
    if len(obj) != length:
        raise InputError(f"{name} has {len(obj)} entries, expected {length} ({hint})")
    for j, v in enumerate(obj):
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise InputError(f"{name}[{j + 1}] is {json.dumps(v)}, not a number")
        if not math.isfinite(v):
            raise InputError(f"{name}[{j + 1}] is {v}: only finite numbers are allowed")
    return [float(v) for v in obj]


def _expect_shape(m: Matrix, name: str, rows: int | None, cols: int | None, hint: str) -> None:
    r_ok = rows is None or len(m) == rows
    c_ok = cols is None or len(m[0]) == cols
    if not (r_ok and c_ok):
        want = f"{rows if rows is not None else '*'}×{cols if cols is not None else '*'}"
        raise InputError(f"{name} has shape {_dims(m)}, expected {want} ({hint})")


def parse_input(doc: object) -> AttentionInput:
    """Validate a decoded JSON document; see the module docstring for the format.

    An ``explain --format json`` document (it has the key ``"input"``) is read through that
    object alone.
    """
    if isinstance(doc, dict) and INPUT_KEY in doc:
        inner = doc[INPUT_KEY]
        if not isinstance(inner, dict):
            raise InputError(
                f'"{INPUT_KEY}" must be the JSON object of an --input file (with "X" and '
                f'"heads"), got {type(inner).__name__}'
            )
        doc = inner
    if not isinstance(doc, dict):
        raise InputError('the input must be a JSON object with at least "X" and "heads"')
    variant = doc.get("variant")
    if isinstance(variant, str) and variant != "mha":
        raise InputError(
            f"this is the problem of an attnref exercise --variant {variant[:20]}, not an --input "
            "file (which has no variants): its key is attnref exercise --variant … --key, and "
            "attnref check grades the answer.json written beside it"
        )
    fused = "heads" not in doc and any(k in doc for k in ("W_Q", "W_K", "W_V", "h"))
    allowed = FUSED_KEYS if fused else PER_HEAD_KEYS
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r}; expected keys: {', '.join(sorted(allowed))}")
    if "X" not in doc:
        raise InputError('missing "X": the n×d_model matrix of token embeddings (rows = tokens)')
    X = matrix(doc["X"], "X", max_rows=MAX_TOKENS, max_cols=MAX_D_MODEL)
    n, d_model = len(X), len(X[0])

    if fused:
        W_Q, W_K, W_V, b_Q, b_K, b_V = _fused_heads(doc, d_model)
    else:
        W_Q, W_K, W_V, b_Q, b_K, b_V = _per_head(doc, d_model)
    h, d_v = len(W_Q), len(W_V[0][0])

    W_O = None
    if doc.get("W_O") is not None:
        W_O = matrix(doc["W_O"], "W_O", max_rows=MAX_HEADS * MAX_D_MODEL, max_cols=MAX_D_MODEL)
        _expect_shape(W_O, "W_O", h * d_v, None, f"h·d_v × d_out with h={h}, d_v={d_v}")
    b_O = None
    if doc.get("b_O") is not None:
        if W_O is None:
            raise InputError(
                "b_O is given but W_O is not: b_O is the bias of the output projection W_O "
                "(without W_O the output is the concat)"
            )
        b_O = vector(doc["b_O"], "b_O", len(W_O[0]), "d_out = the number of columns of W_O")

    causal = doc.get("causal", True)
    if not isinstance(causal, bool):
        raise InputError(f'"causal" must be true or false, got {json.dumps(causal)}')

    tokens_obj = doc.get("tokens")
    if tokens_obj is None:
        tokens = tuple(f"t{i + 1}" for i in range(n))
    else:
        if not isinstance(tokens_obj, list) or not all(isinstance(t, str) for t in tokens_obj):
            raise InputError('"tokens" must be a list of strings, one per row of X')
        if len(tokens_obj) != n:
            raise InputError(f'"tokens" has {len(tokens_obj)} names but X has {n} rows')
        tokens = tuple(tokens_obj)
    return AttentionInput(
        X, W_Q, W_K, W_V, W_O, causal, tokens, fused, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O
    )


Weights = tuple[
    list[Matrix], list[Matrix], list[Matrix], Matrix | None, Matrix | None, Matrix | None
]


def _per_head(doc: dict[str, object], d_model: int) -> Weights:
    heads = doc.get("heads")
    if heads is None:
        raise InputError('missing "heads": a list of {"W_Q", "W_K", "W_V"} objects, one per head')
    if not isinstance(heads, list) or not heads:
        raise InputError('"heads" must be a non-empty list of {"W_Q", "W_K", "W_V"} objects')
    if len(heads) > MAX_HEADS:
        raise InputError(f'"heads" has {len(heads)} entries; at most {MAX_HEADS} are supported')
    out: tuple[list[Matrix], ...] = ([], [], [])
    d_k = d_v = None
    for i, head in enumerate(heads):
        where = f"heads[{i}]"
        if not isinstance(head, dict):
            raise InputError(f"{where} must be an object with W_Q, W_K and W_V")
        extra = sorted(set(head) - set(HEAD_KEYS))
        if extra:
            raise InputError(
                f"{where} has unknown key {extra[0]!r}; expected {', '.join(HEAD_KEYS)}"
            )
        for role, acc in zip(("W_Q", "W_K", "W_V"), out, strict=True):
            if role not in head:
                raise InputError(f"{where} is missing {role} (d_model×d, d_model = {d_model})")
            m = matrix(head[role], f"{where}.{role}", max_rows=MAX_D_MODEL, max_cols=MAX_D_MODEL)
            if role == "W_V":
                _expect_shape(
                    m, f"{where}.W_V", d_model, d_v, "d_model × d_v, d_model = width of X"
                )
                d_v = len(m[0])
            else:
                _expect_shape(
                    m, f"{where}.{role}", d_model, d_k, "d_model × d_k, d_model = width of X"
                )
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
            i = given.index(False)
            raise InputError(
                f"heads[{i}] has no {role} but heads[{given.index(True)}] has one: "
                f"give {role} to every head or to none"
            )
        biases.append(
            [
                vector(head[role], f"heads[{i}].{role}", width, f"{sym} = {width}, a bias per head")
                for i, head in enumerate(heads)
            ]
        )
    return out[0], out[1], out[2], biases[0], biases[1], biases[2]


def _fused_heads(doc: dict[str, object], d_model: int) -> Weights:
    h = doc.get("h")
    if isinstance(h, bool) or not isinstance(h, int):
        raise InputError(
            f'"h" (the number of heads) must be a positive integer, got {json.dumps(h)}'
        )
    if not 1 <= h <= MAX_HEADS:
        raise InputError(f'"h" must be between 1 and {MAX_HEADS}, got {h}')
    out: tuple[list[Matrix], ...] = ([], [], [])
    biases: list[Matrix | None] = []
    width_qk = None
    for role, acc in zip(("W_Q", "W_K", "W_V"), out, strict=True):
        if role not in doc:
            raise InputError(f"missing {role}: the fused d_model×(h·d) matrix")
        m = matrix(doc[role], role, max_rows=MAX_D_MODEL, max_cols=MAX_HEADS * MAX_D_MODEL)
        want_cols = width_qk if role == "W_K" else None
        _expect_shape(m, role, d_model, want_cols, "d_model × h·d_k, d_model = width of X")
        width = len(m[0])
        if width % h:
            raise InputError(
                f"{role} has {width} columns, which cannot be split into h={h} heads "
                f"({width} is not divisible by {h})"
            )
        if role == "W_Q":
            width_qk = width
        d = width // h
        acc.extend([[row[i * d : (i + 1) * d] for row in m] for i in range(h)])
        b_role = "b" + role[1:]  # W_Q -> b_Q
        if doc.get(b_role) is None:
            biases.append(None)
            continue
        b = vector(doc[b_role], b_role, width, f"one entry per column of {role}")
        biases.append([b[i * d : (i + 1) * d] for i in range(h)])  # head i: entries i*d ..
    return out[0], out[1], out[2], biases[0], biases[1], biases[2]


def load_input_file(path: str | Path) -> AttentionInput:
    """Read and validate ``path`` (through `attention_ref.inputs.jsonfile`, the one bounded
    JSON loader); every failure is an `InputError` with one line."""
    return parse_input(read_json(path, "input file"))


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
