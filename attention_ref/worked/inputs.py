"""A user's own numbers for ``attnref explain --input FILE``: read, validate, explain errors.

The file is JSON, per-head form (seeds 000/003)::

    {"tokens": ["Life", "is", "awesome"],          # optional, n names
     "X": [[...], ...],                              # n x d_model
     "heads": [{"W_Q": d_model x d_k, "W_K": d_model x d_k, "W_V": d_model x d_v}, ...],
     "W_O": (h*d_v) x d_model,                       # optional, default identity
     "causal": true}                                 # optional, default true

or fused form (seeds 001/002): ``"W_Q"``, ``"W_K"``, ``"W_V"`` of ``d_model x (h*d_k)`` and
``"h"`` instead of ``"heads"``; the columns are split into ``h`` heads.

Every problem raises `InputError` with one line that names the matrix, what was
expected and what came. This module does not import torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

Matrix = list[list[float]]

MAX_FILE_BYTES = 5_000_000
MAX_TOKENS = 256
MAX_D_MODEL = 1024
MAX_HEADS = 64

PER_HEAD_KEYS = frozenset({"tokens", "X", "heads", "W_O", "causal"})
FUSED_KEYS = frozenset({"tokens", "X", "W_Q", "W_K", "W_V", "h", "W_O", "causal"})


class InputError(ValueError):
    """A user's input cannot be used; the message is one line for the CLI."""


@dataclass(frozen=True)
class AttentionInput:
    """Validated numbers, per-head view: ``W_Q[i]`` is ``W_Q^(i+1)`` (d_model x d_k)."""

    X: Matrix
    W_Q: list[Matrix]
    W_K: list[Matrix]
    W_V: list[Matrix]
    W_O: Matrix | None
    causal: bool
    tokens: tuple[str, ...]
    fused: bool

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


def _expect_shape(m: Matrix, name: str, rows: int | None, cols: int | None, hint: str) -> None:
    r_ok = rows is None or len(m) == rows
    c_ok = cols is None or len(m[0]) == cols
    if not (r_ok and c_ok):
        want = f"{rows if rows is not None else '*'}×{cols if cols is not None else '*'}"
        raise InputError(f"{name} has shape {_dims(m)}, expected {want} ({hint})")


def parse_input(doc: object) -> AttentionInput:
    """Validate a decoded JSON document; see the module docstring for the format."""
    if not isinstance(doc, dict):
        raise InputError('the input must be a JSON object with at least "X" and "heads"')
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
        W_Q, W_K, W_V = _fused_heads(doc, d_model)
    else:
        W_Q, W_K, W_V = _per_head(doc, d_model)
    h, d_v = len(W_Q), len(W_V[0][0])

    W_O = None
    if doc.get("W_O") is not None:
        W_O = matrix(doc["W_O"], "W_O", max_rows=MAX_HEADS * MAX_D_MODEL, max_cols=MAX_D_MODEL)
        _expect_shape(W_O, "W_O", h * d_v, d_model, f"h·d_v × d_model with h={h}, d_v={d_v}")
    elif h * d_v != d_model:
        raise InputError(
            f"W_O is missing and the identity needs h·d_v = d_model, but h·d_v = {h * d_v} "
            f"and d_model = {d_model}: give W_O ({h * d_v}×{d_model})"
        )

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
    return AttentionInput(X, W_Q, W_K, W_V, W_O, causal, tokens, fused)


def _per_head(doc: dict[str, object], d_model: int) -> tuple[list[Matrix], ...]:
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
        extra = sorted(set(head) - {"W_Q", "W_K", "W_V"})
        if extra:
            raise InputError(f"{where} has unknown key {extra[0]!r}; expected W_Q, W_K, W_V")
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
    return out


def _fused_heads(doc: dict[str, object], d_model: int) -> tuple[list[Matrix], ...]:
    h = doc.get("h")
    if isinstance(h, bool) or not isinstance(h, int):
        raise InputError(
            f'"h" (the number of heads) must be a positive integer, got {json.dumps(h)}'
        )
    if not 1 <= h <= MAX_HEADS:
        raise InputError(f'"h" must be between 1 and {MAX_HEADS}, got {h}')
    out: tuple[list[Matrix], ...] = ([], [], [])
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
    return out


def load_input_file(path: str | Path) -> AttentionInput:
    """Read and validate ``path``; every failure is an `InputError` with one line."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError(f"input file not found: {p}") from None
    except OSError as e:
        raise InputError(f"cannot read {p}: {e.strerror}") from None
    if p.is_dir():
        raise InputError(f"{p} is a directory, not a JSON file")
    if size > MAX_FILE_BYTES:
        raise InputError(f"{p} is {size:,} bytes; input files are limited to {MAX_FILE_BYTES:,}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p} is not UTF-8 text") from None
    except OSError as e:
        raise InputError(f"cannot read {p}: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{p} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    return parse_input(doc)
