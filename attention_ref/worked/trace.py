r"""Shared by the worked examples: tensors in and out, and seed 000's steps for any trace.

`trace_sections` lays out one single-sequence `attention_ref.reference.AttentionTrace` as
seed 000 develops it (projections, scores, mask, softmax, head outputs, concat and
``W_O``); life-is-awesome and ``--input`` files both go through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import JSONValue, Mat, Section

DTYPE = torch.float64

#: Numbers nested as the documents print them: a vector, a matrix, a stack of matrices.
Nested: TypeAlias = (
    Sequence[float] | Sequence[Sequence[float]] | Sequence[Sequence[Sequence[float]]]
)


def t(m: Nested) -> Tensor:
    """Nested lists -> float64 tensor."""
    return torch.tensor(m, dtype=DTYPE)


def L(x: Tensor) -> list[list[float]]:
    """A tensor as a list of rows (a vector becomes one row)."""
    x = x.detach().to(DTYPE)
    return (x.unsqueeze(0) if x.dim() == 1 else x).tolist()  # (k,) -> (1, k)


def column_names(prefix: str, k: int) -> list[str]:
    """``x1 … xk``: the column labels of a ``k``-wide matrix."""
    return [f"{prefix}{j + 1}" for j in range(k)]


def trace_to_json(trace: ref.AttentionTrace) -> dict[str, JSONValue]:
    """The JSON of ``explain --format json`` for a single-sequence trace.

    ``{"tokens", "M", "heads": [{"Q","K","V","scores","S","S_masked","A","H"}...],
    "concat", "W_O", "output"}``; ``M`` is all zeros when no mask was applied.
    """
    n = len(trace.tokens)
    M = trace.M if trace.M is not None else torch.zeros(n, n, dtype=trace.X.dtype)
    heads: list[JSONValue] = []
    for i in range(trace.h):
        hd = trace.head(i)
        heads.append(
            {
                "Q": L(hd["Q"]),
                "K": L(hd["K"]),
                "V": L(hd["V"]),
                "scores": L(hd["QKt"]),
                "S": L(hd["S"]),
                "S_masked": L(hd["S_masked"]),
                "A": L(hd["A"]),
                "H": L(hd["H"]),
            }
        )
    return {
        "tokens": list(trace.tokens),
        "causal": trace.M is not None,
        "h": trace.h,
        "d_k": trace.d_k,
        "d_v": trace.d_v,
        "X": L(trace.X),
        "M": L(M),
        "heads": heads,
        "concat": L(trace.concat),
        "W_O": L(trace.W_O),
        "output": L(trace.output),
    }


def trace_sections(
    trace: ref.AttentionTrace,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    *,
    W_O_note: str = "",
) -> list[Section]:
    r"""Every step of seed 000's development for a single-sequence trace, in its order.

    Per head ``i``: ``Q^{(i)} = X W_Q^{(i)}`` (and ``K``, ``V``),
    ``S^{(i)} = Q^{(i)} K^{(i)\top} / \sqrt{d_k}``, ``\tilde S^{(i)} = S^{(i)} + M``,
    ``A^{(i)} = \operatorname{softmax}(\tilde S^{(i)})``, ``H^{(i)} = A^{(i)} V^{(i)}``; then
    ``\operatorname{MultiHead} = \operatorname{Concat}(H^{(1)} \mid … \mid H^{(h)}) W_O``.
    ``W_Q`` etc. are the per-head weights, ``(h, d_model, d_k)``.
    """
    tok, h, d_k, d_v = list(trace.tokens), trace.h, trace.d_k, trace.d_v
    n, d_model = trace.X.shape
    sup = [f"^{{({i + 1})}}" for i in range(h)]  # Q^{(1)}: printed Q^(1) in plain text
    heads = [trace.head(i) for i in range(h)]
    weights: list[Mat] = [
        Mat(symbol="X", value=L(trace.X), rows=tok, cols=column_names("x", d_model))
    ]
    for i in range(h):
        for role, W in (("Q", W_Q), ("K", W_K), ("V", W_V)):
            weights.append(Mat(symbol=f"W_{role}{sup[i]}", value=L(W[i])))
    projections = [
        Mat(symbol=f"{role}{s}", value=L(hd[role]), formula=f"X W_{role}{s}", rows=tok)
        for s, hd in zip(sup, heads, strict=True)
        for role in ("Q", "K", "V")
    ]
    scores: list[Mat] = []
    for i, (s, hd) in enumerate(zip(sup, heads, strict=True)):
        QKt = f"Q{s} K^{{({i + 1})\\top}}"
        scores += [
            Mat(symbol=QKt, value=L(hd["QKt"]), rows=tok, cols=tok),
            Mat(symbol=f"S{s}", value=L(hd["S"]), formula=f"\\frac{{{QKt}}}{{\\sqrt{{{d_k}}}}}",
                rows=tok, cols=tok),
        ]  # fmt: skip
    softmax = [
        Mat(symbol=f"A{s}", value=L(hd["A"]), formula=f"\\operatorname{{softmax}}(\\tilde S{s})",
            rows=tok, cols=tok)
        for s, hd in zip(sup, heads, strict=True)
    ]  # fmt: skip
    outputs = [
        Mat(symbol=f"H{s}", value=L(hd["H"]), formula=f"A{s} V{s}", rows=tok)
        for s, hd in zip(sup, heads, strict=True)
    ]
    if trace.M is not None:
        mask = Section(
            title="Causal mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
            text="M is 0 on and below the diagonal and −∞ above: token t sees itself and the "
            "tokens before it, never the future (j > t).",
            items=[
                Mat(symbol="M", value=L(trace.M), rows=tok, cols=tok),
                *(
                    Mat(symbol=f"\\tilde S{s}", value=L(hd["S_masked"]), formula=f"S{s} + M",
                        rows=tok, cols=tok)
                    for s, hd in zip(sup, heads, strict=True)
                ),
            ],
        )  # fmt: skip
    else:
        mask = Section(
            title="No mask", text="causal = false: every token sees every token (S̃ = S)."
        )
    return [
        Section(
            title="Inputs: X and the weights of each head",
            text=f"n = {n} tokens, d_model = {d_model}, h = {h} heads, d_k = {d_k}, d_v = {d_v}. "
            "Row convention: a token is a row of X and Q = X W_Q.",
            items=weights,
        ),
        Section(
            title="Projections: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾, V⁽ⁱ⁾ = X W_V⁽ⁱ⁾",
            text="Each head projects every token with its own matrices.",
            items=projections,
        ),
        Section(
            title=f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, with d_k = {d_k}",
            text="Entry (i, j) is q_i · k_j, the match of token i's query with token j's key, "
            f"divided by √{d_k}.",
            items=scores,
        ),
        mask,
        Section(
            title="Softmax, row by row: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
            text="Each row is a probability distribution over the visible tokens; e^(−∞) = 0, "
            "so with the mask the first row is (1, 0, …, 0).",
            items=softmax,
        ),
        Section(
            title="Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾",
            text="Row t is a weighted average of the value rows.",
            items=outputs,
        ),
        Section(
            title="Concat and output projection: MultiHead = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O",
            text=W_O_note or "The heads side by side, then one linear map W_O back to d_model.",
            items=[
                Mat(
                    symbol="\\operatorname{Concat}",
                    value=L(trace.concat),
                    formula="[" + " \\mid ".join(f"H{s}" for s in sup) + "]",
                    rows=tok,
                ),
                Mat(symbol="W_O", value=L(trace.W_O)),
                Mat(
                    symbol="\\operatorname{MultiHead}",
                    text="Output",
                    value=L(trace.output),
                    formula="\\operatorname{Concat} \\cdot W_O",
                    rows=tok,
                    cols=column_names("y", d_model),
                ),
            ],
        ),
    ]
