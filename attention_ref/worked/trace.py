r"""Shared by the worked examples: tensors in and out, a trace's numbers as JSON.

`trace_to_json` (the homework's layout of an `attention_ref.reference.AttentionTrace`, per
head) and `trace_json` (today's, with its K/V heads and groups) write a trace's steps;
`input_json` writes the numbers an example used as an ``--input`` document, which every
``explain --format json`` carries under ``"input"`` so that it can be fed back to ``--input``.
The steps laid out as sections: `attention_ref.worked.layout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from attention_ref import reference as ref  # its names resolve (and import torch) on first use
from attention_ref.reference.spec import kv_group
from attention_ref.render import JSONValue

if TYPE_CHECKING:
    from torch import Tensor


def __getattr__(name: str) -> Any:
    """``DTYPE``, torch's float64, imported on first use: this module writes numpy's arrays as
    well as torch's tensors, and the exercises' key is written without importing torch."""
    if name == "DTYPE":
        import torch

        return torch.float64
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Numbers nested as the documents print them: a vector, a matrix, a stack of matrices.
Nested: TypeAlias = (
    Sequence[float] | Sequence[Sequence[float]] | Sequence[Sequence[Sequence[float]]]
)


def t(m: Nested) -> Tensor:
    """Nested lists -> float64 tensor."""
    import torch

    return torch.tensor(m, dtype=torch.float64)


def L(x: Tensor | np.ndarray) -> list[list[float]]:
    """A tensor (or numpy's array) as a list of rows (a vector becomes one row)."""
    if hasattr(x, "detach"):  # a tensor: torch is imported already
        import torch

        x = x.detach().to(torch.float64)
        return (x.unsqueeze(0) if x.dim() == 1 else x).tolist()  # (k,) -> (1, k)
    a = np.asarray(x, dtype=np.float64)
    return (a[None] if a.ndim == 1 else a).tolist()


def column_names(prefix: str, k: int) -> list[str]:
    """``dim 1 … dim k``: the column labels of a ``k``-wide matrix (``prefix`` = ``"dim "``)."""
    return [f"{prefix}{j + 1}" for j in range(k)]


def _vec(b: Tensor) -> list[float]:
    """A bias as a plain list of numbers."""
    return L(b.reshape(-1))[0]


def input_json(
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    tokens: Sequence[str],
    causal: bool,
    h: int | None = None,
    b_Q: Tensor | None = None,
    b_K: Tensor | None = None,
    b_V: Tensor | None = None,
    b_O: Tensor | None = None,
) -> dict[str, JSONValue]:
    """The ``--input`` document of these numbers (`attention_ref.inputs.attention_input` reads it).

    Per-head form when ``h`` is ``None`` (``W_Q`` is ``(h, d_model, d_k)``, ``b_Q`` is
    ``(h, d_k)``), fused form otherwise (``W_Q`` is ``(d_model, h*d_k)``, ``b_Q`` is
    ``(h*d_k,)``). ``X`` is one sequence ``(n, d_model)``. ``W_O`` and the biases are written
    only when given; ``W_O = None`` means no output projection.
    """
    doc: dict[str, JSONValue] = {"tokens": list(tokens), "X": L(X)}
    biases = {"b_Q": b_Q, "b_K": b_K, "b_V": b_V}
    if h is None:
        heads: list[JSONValue] = []
        for i in range(W_Q.shape[0]):
            head: dict[str, JSONValue] = {"W_Q": L(W_Q[i]), "W_K": L(W_K[i]), "W_V": L(W_V[i])}
            head |= {k: _vec(b[i]) for k, b in biases.items() if b is not None}
            heads.append(head)
        doc["heads"] = heads
    else:
        doc |= {"h": h, "W_Q": L(W_Q), "W_K": L(W_K), "W_V": L(W_V)}
        doc |= {k: _vec(b) for k, b in biases.items() if b is not None}
    if W_O is not None:
        doc["W_O"] = L(W_O)
    if b_O is not None:
        doc["b_O"] = _vec(b_O)
    doc["causal"] = causal
    return doc


def trace_input_json(
    trace: ref.AttentionTrace,
    *,
    fused: bool = False,
    sequence: int = 0,
    tokens: Sequence[str] | None = None,
) -> dict[str, JSONValue]:
    """The numbers a trace used, as an ``--input`` document: fed back, the same output.

    Per-head form, or fused (``h`` and ``W_Q = [W_Q^(1) | … | W_Q^(h)]``, `fuse_heads`) with
    ``fused``. A batched trace gives its sequence ``sequence``; ``tokens`` replaces the
    trace's token names (a batched trace has only ``t1 … tn``).
    """
    X = trace.X if trace.X.dim() == 2 else trace.X[sequence]  # (B, n, d_model) -> (n, d_model)
    names = trace.tokens if tokens is None else tokens
    weights, biases = (trace.W_Q, trace.W_K, trace.W_V), (trace.b_Q, trace.b_K, trace.b_V)
    if fused:
        weights = tuple(ref.fuse_heads(W) for W in weights)  # (h, d_model, d) -> (d_model, h*d)
        biases = tuple(b.reshape(-1) if b is not None else None for b in biases)  # (h*d,)
    return input_json(
        X,
        *weights,
        trace.W_O,
        tokens=names,
        causal=trace.M is not None,
        h=trace.h if fused else None,
        b_Q=biases[0],
        b_K=biases[1],
        b_V=biases[2],
        b_O=trace.b_O,
    )


def unscaled_input_json(X: Tensor, tokens: Sequence[str]) -> dict[str, JSONValue]:
    r"""Plain dot-product self-attention of seeds 001/004 as an ``--input`` document.

    Those examples use no weights and no scaling: $A = \operatorname{softmax}(X X^\top)$,
    $Z = A X$. ``--input`` always divides by $\sqrt{d_k}$, so one head with
    $W_Q = \sqrt{d}\, I_d$, $W_K = W_V = I_d$ ($d_k = d$) gives
    $Q K^\top / \sqrt{d} = X X^\top$ (equal up to rounding), no mask and no ``W_O``.
    """
    import torch

    d = X.shape[-1]
    eye = torch.eye(d, dtype=torch.float64)
    root_d = torch.tensor(float(d), dtype=torch.float64).sqrt()
    # (d, d) -> (1, d, d): one head
    W_Q, W_K, W_V = (root_d * eye).unsqueeze(0), eye.unsqueeze(0), eye.unsqueeze(0)
    return input_json(X, W_Q, W_K, W_V, tokens=tokens, causal=False)


def trace_to_json(trace: ref.AttentionTrace) -> dict[str, JSONValue]:
    """The JSON of ``explain --format json`` for a single-sequence trace.

    ``{"tokens", "M", "heads": [{"Q","K","V","scores","S","S_masked","A","H"}...],
    "concat", "W_O", "output", "input"}``; ``M`` is all zeros when no mask was applied,
    ``W_O`` is ``null`` when there was no output projection (the output is the concat);
    ``b_O`` and each head's ``b_Q``, ``b_K``, ``b_V`` appear when the trace has them.
    ``input`` is `trace_input_json`: fed to ``--input`` it gives this output again.
    """
    import torch

    n = len(trace.tokens)
    M = trace.M if trace.M is not None else torch.zeros(n, n, dtype=trace.X.dtype)
    heads: list[JSONValue] = []
    for i in range(trace.h):
        hd = trace.head(i)
        head: dict[str, JSONValue] = {
            "Q": L(hd["Q"]),
            "K": L(hd["K"]),
            "V": L(hd["V"]),
            "scores": L(hd["QKt"]),
            "S": L(hd["S"]),
            "S_masked": L(hd["S_masked"]),
            "A": L(hd["A"]),
            "H": L(hd["H"]),
        }
        for role, b in (("b_Q", trace.b_Q), ("b_K", trace.b_K), ("b_V", trace.b_V)):
            if b is not None:
                head[role] = _vec(b[i])
        heads.append(head)
    out: dict[str, JSONValue] = {
        "tokens": list(trace.tokens),
        "causal": trace.M is not None,
        "h": trace.h,
        "d_k": trace.d_k,
        "d_v": trace.d_v,
        "X": L(trace.X),
        "M": L(M),
        "heads": heads,
        "concat": L(trace.concat),
        "W_O": L(trace.W_O) if trace.W_O is not None else None,
    }
    if trace.b_O is not None:
        out["b_O"] = _vec(trace.b_O)
    out["output"] = L(trace.output)
    out["input"] = trace_input_json(trace)
    return out


#: A query head's gradients in the layout, and a K/V head's, in their order.
GRAD_HEAD_LAYOUT = ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")
GRAD_KV_LAYOUT = ("K", "V", "W_K", "W_V")


def grads_layout(
    heads: Sequence[dict[str, Any]],
    kv_heads: Sequence[dict[str, Any]],
    *,
    output: Any,
    W_O: Any,
    concat: Any,
    X: Any,
) -> dict[str, JSONValue]:
    """The backward's numbers in the examples' layout (tensors or numpy's arrays): ``{"output",
    "W_O", "concat", "X", "heads": [∂H, ∂A, ∂S̃, ∂S, ∂Q, ∂K, ∂V, ∂W_Q, ∂W_K, ∂W_V of what
    comes through each query head], "kv_heads": [∂K, ∂V, ∂W_K, ∂W_V: each its group's sum]}``."""
    return {
        "output": L(output),
        "W_O": L(W_O) if W_O is not None else None,
        "concat": L(concat),
        "X": L(X),
        "heads": [{k: L(hd[k]) for k in GRAD_HEAD_LAYOUT} for hd in heads],
        "kv_heads": [{k: L(kv[k]) for k in GRAD_KV_LAYOUT} for kv in kv_heads],
    }


def trace_json(tr: ref.AttentionTrace) -> dict[str, JSONValue]:
    """The forward's numbers: ``{"tokens", "h", "g", "groups", "X", "M", "heads": [{"Q", "K",
    "V", "scores", "S", "S_masked", "A", "H", "kv_head"}], "kv_heads": [{"K", "V"}], "concat",
    "W_O", "output"}``; with RoPE ``"rope": {"base", "positions"}`` and per head ``"Q_rot"``,
    per K/V head ``"K_rot"``. ``"kv_head"`` and ``"groups"`` are 1-based; ``"M"`` is one
    matrix or one per query head (ALiBi), ``null`` without a mask."""
    rope = tr.rope_base is not None
    heads: list[JSONValue] = []
    for i in range(tr.h):
        j = kv_group(i, tr.h, tr.g)
        head: dict[str, JSONValue] = {
            "kv_head": j + 1,
            "Q": L(tr.Q[i]),
            "K": L(tr.K_rep[i]),
            "V": L(tr.V_rep[i]),
            "scores": L(tr.QKt[i]),
            "S": L(tr.S[i]),
            "S_masked": L(tr.S_masked[i]),
            "A": L(tr.A[i]),
            "H": L(tr.H[i]),
        }
        if rope:
            head["Q_rot"] = L(tr.Q_rot[i])
        heads.append(head)
    kv_heads: list[JSONValue] = []
    for j in range(tr.g):
        kv: dict[str, JSONValue] = {"K": L(tr.K[j]), "V": L(tr.V[j])}
        if rope:
            kv["K_rot"] = L(tr.K_rot[j])
        kv_heads.append(kv)
    M: JSONValue = None
    if tr.M is not None:
        M = [L(m) for m in tr.M] if len(tr.M.shape) == 3 else L(tr.M)
    out: dict[str, JSONValue] = {
        "tokens": list(tr.tokens),
        "h": tr.h,
        "g": tr.g,
        "d_k": tr.d_k,
        "groups": [kv_group(i, tr.h, tr.g) + 1 for i in range(tr.h)],
        "X": L(tr.X),
        "M": M,
        "heads": heads,
        "kv_heads": kv_heads,
        "concat": L(tr.concat),
        "W_O": L(tr.W_O) if tr.W_O is not None else None,
        "output": L(tr.output),
    }
    if rope:
        out["rope"] = {"base": tr.rope_base, "positions": tr.positions.tolist()}
    return out
