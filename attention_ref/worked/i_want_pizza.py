r"""Seed 002 (Russian): "Я хочу пиццу <eos>", splitting into heads shape by shape.

Batch 1, ``seq_len = 4``, ``embedding_dim = 6``, 3 heads of ``head_dim = 2``: the fused
projection ``Q = X W_q`` is reshaped ``(B, T, d) -> (B, T, h, d_k)`` and swapped to
``(B, h, T, d_k)``; the concat is the inverse: swap back, then reshape. The document numbers
the entries of ``Q`` row by row; ``X`` with rows 1..6, 7..12, … and identity weights reproduce
them. Two slips of the document are shown with its own numbers: its text says to undo the
split by "first reshape, then swap" (that order reads the numbers head by head and scrambles
tokens and heads; only swap-then-reshape, the order of its own shape list, restores them), and
its shape list writes ``(batch_size, text, seq_len, head_dim)`` where the axis is ``heads``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, Shape
from attention_ref.worked.trace import DTYPE, L, column_names, t, trace_input_json

PIZZA_TOKENS: Final = ("Я", "Хочу", "Пиццу", "<eos>")
PIZZA_BATCH: Final = 1
PIZZA_SEQ_LEN: Final = 4
PIZZA_D_MODEL: Final = 6
PIZZA_HEADS: Final = 3
#: The document's picture 2 numbers the entries of Q row by row: token t (0-based) holds
#: 6t+1 .. 6t+6, so "Пиццу" (t = 2) is [13..18]. With W_Q = I this X gives that Q.
PIZZA_X: Final[Matrix] = [[float(6 * t + j + 1) for j in range(6)] for t in range(4)]
DOC_PIZZA_TOKEN: Final = "Пиццу"
DOC_PIZZA_ROW: Final[list[float]] = [13, 14, 15, 16, 17, 18]
DOC_PIZZA_SPLIT: Final[Matrix] = [[13, 14], [15, 16], [17, 18]]
#: The shapes the document lists, in its order.
DOC_PIZZA_SHAPES: Final[dict[str, tuple[int, ...]]] = {
    "X": (1, 4, 6),
    "W": (6, 6),
    "Q": (1, 4, 6),
    "Q after reshape": (1, 4, 3, 2),
    "Q after swap": (1, 3, 4, 2),
    "head output": (1, 3, 4, 2),
    "after swap back": (1, 4, 3, 2),
    "after reshape back": (1, 4, 6),
    "W_O": (6, 6),
    "final output": (1, 4, 6),
}


@dataclass(frozen=True, kw_only=True)
class PizzaNumbers:
    """Every tensor of the walkthrough, batch axis kept: ``X``, ``Q`` ``(B, T, d)``, …"""

    X: Tensor  # (B, T, d)
    Q: Tensor  # (B, T, d)
    Q_reshaped: Tensor  # (B, T, h, d_k)
    Q_swapped: Tensor  # (B, h, T, d_k)
    H_swapped: Tensor  # (B, T, h, d_k)
    Q_reshape_first: Tensor  # the split Q undone in the document's words' order, (B, T, h, d_k)
    trace: ref.AttentionTrace


def _floor6(x: float) -> float:
    """``x`` truncated (not rounded) to 6 decimals: a lower bound as printed."""
    return math.floor(x * 1e6) / 1e6


def pizza_numbers() -> PizzaNumbers:
    r"""``Q = X W_q`` with ``W_q = W_k = W_v = W_o = I_6``, split into 3 heads, no mask.

    ``H^{(i)} = \operatorname{softmax}(Q^{(i)} K^{(i)\top} / \sqrt{2}) V^{(i)}`` per head,
    then ``\operatorname{Concat}(H^{(1)} | H^{(2)} | H^{(3)}) W_o``.
    """
    B, T, d, h = PIZZA_BATCH, PIZZA_SEQ_LEN, PIZZA_D_MODEL, PIZZA_HEADS
    d_k = d // h
    X = t(PIZZA_X).unsqueeze(0)  # (T, d) -> (B=1, T, d)
    eye = torch.eye(d, dtype=DTYPE)
    trace = ref.masked_multihead_attention_fused(
        X, eye, eye, eye, eye, h=h, causal=False, tokens=PIZZA_TOKENS
    )
    Q = ref.project(X, eye)  # (1, 4, 6)
    Q_reshaped = Q.reshape(B, T, h, d_k)  # (1, 4, 6) -> (1, 4, 3, 2)
    Q_swapped = Q_reshaped.transpose(1, 2)  # (1, 4, 3, 2) -> (1, 3, 4, 2)
    return PizzaNumbers(
        X=X,
        Q=Q,
        Q_reshaped=Q_reshaped,
        Q_swapped=Q_swapped,
        H_swapped=trace.H.transpose(1, 2),  # (1, 3, 4, 2) -> (1, 4, 3, 2)
        # "first reshape": (1, 3, 4, 2) -> (1, 4, 3, 2) read in (head, token) order
        Q_reshape_first=Q_swapped.reshape(B, T, h, d_k),
        trace=trace,
    )


def provenance(r: PizzaNumbers, piece: Tensor) -> tuple[int, int]:
    """``(head, token)``, 0-based, of a ``d_k`` piece of the split ``Q`` (entries are unique)."""
    hits = (r.Q_swapped[0] == piece).all(dim=-1).nonzero().tolist()  # (h, T) -> [[k, t]]
    if len(hits) != 1:
        raise ValueError(f"piece {piece.tolist()} is not one piece of the split Q")
    k, t_ = hits[0]
    return k, t_


def reshape_first_note(r: PizzaNumbers) -> str:
    """What "first reshape, then swap" does to the split ``Q``, on the document's numbers."""
    tok = list(PIZZA_TOKENS)
    i = tok.index(DOC_PIZZA_TOKEN)
    B, T, d = PIZZA_BATCH, PIZZA_SEQ_LEN, PIZZA_D_MODEL
    row = r.Q_reshape_first[0, i]  # (h, d_k): what "Пиццу" gets
    where = [provenance(r, piece) for piece in row]
    holds = ", ".join(f"head {k + 1} of `{tok[t_]}`" for k, t_ in where)  # `<eos>`: not HTML
    restored = bool(torch.equal(r.Q_swapped.transpose(1, 2).reshape(B, T, d), r.Q))
    scrambled = not torch.equal(r.Q_reshape_first.reshape(B, T, d), r.Q)
    verdict = "tokens and heads are scrambled" if scrambled else "the tokens happen to come back"
    return (
        f'The document\'s text says to undo the split "first reshape, then swap". Reshaping '
        f"{tuple(r.Q_swapped.shape)} first reads the numbers head by head: the row of "
        f"`{tok[i]}` becomes {[[int(v) for v in p] for p in row.tolist()]}, that is {holds}, "
        f"instead of its own {[int(v) for v in r.Q[0, i].tolist()]}: {verdict}, and the swap "
        f"that follows cannot sort them back (it only moves whole axes). Swap first, then "
        f"reshape (the order of the document's own shape list) gives Q back: "
        f"{'exactly' if restored else 'NOT'}. Its list also writes (batch_size, text, seq_len, "
        f"head_dim) for the head outputs; the axis is heads: {tuple(r.trace.H.shape)}."
    )


def pizza_sections(r: PizzaNumbers) -> list[Section]:
    """Input, split (reshape then swap), attention per head, concat (the inverse)."""
    tok = list(PIZZA_TOKENS)
    B, T, d, h = PIZZA_BATCH, PIZZA_SEQ_LEN, PIZZA_D_MODEL, PIZZA_HEADS
    d_k = d // h
    X, Q, Q_reshaped, Q_swapped, trace = r.X, r.Q, r.Q_reshaped, r.Q_swapped, r.trace
    i = tok.index(DOC_PIZZA_TOKEN)
    heads = [f"head {k + 1}" for k in range(h)]
    return [
        Section(
            title="Input and weights",
            text=f"batch_size = {B}, seq_len = {T}, embedding_dim = {d}, heads = {h}. The document "
            'numbers the entries of Q row by row ("Пиццу" = [13..18]); to get exactly those '
            "numbers this example takes X with rows 1..6, 7..12, 13..18, 19..24 and "
            "W_q = W_k = W_v = W_o = I_6, so Q = K = V = X. As in the document, no mask.",
            items=[
                Mat(symbol="X", text="X[0]", value=L(X[0]), rows=tok, cols=column_names("e", d)),
                Shape(name="X", operation="token embeddings", before=(B, T), after=tuple(X.shape)),
                Shape(
                    name="Q, K, V",
                    operation="X W_q, X W_k, X W_v with W (6, 6)",
                    before=tuple(X.shape),
                    after=tuple(Q.shape),
                ),
            ],
        ),
        Section(
            title="Split into heads: reshape, then swap",
            text=f"head_dim = embedding_dim / heads = {d_k}. Reshape cuts each token's vector "
            f"into {h} pieces of {d_k}; swap moves the head axis before the tokens so every head "
            f"is a ({T}, {d_k}) matrix.",
            items=[
                Shape(
                    name="Q",
                    operation="reshape(B, T, heads, head_dim)",
                    before=tuple(Q.shape),
                    after=tuple(Q_reshaped.shape),
                ),
                Mat(
                    symbol="q_{Пиццу}",
                    text=f'Q[0, {i}] ("{tok[i]}")',
                    value=L(Q[0, i]),
                    rows=[tok[i]],
                ),
                Mat(
                    symbol="\\operatorname{reshape}(q_{Пиццу})",
                    text=f'Q reshaped[0, {i}] ("{tok[i]}")',
                    value=L(Q_reshaped[0, i]),
                    rows=heads,
                    cols=column_names("d", d_k),
                ),
                Shape(
                    name="Q",
                    operation="swap = transpose(1, 2)",
                    before=tuple(Q_reshaped.shape),
                    after=tuple(Q_swapped.shape),
                ),
                *(
                    Mat(
                        symbol=f"Q^{{({k + 1})}}",
                        text=f"Q[0, head {k + 1}]",
                        value=L(Q_swapped[0, k]),
                        rows=tok,
                    )
                    for k in range(h)
                ),
            ],
        ),
        Section(
            title="Attention in every head at once",
            text="softmax(Q Kᵀ / √head_dim) V per head. These integer embeddings give large "
            "scores, so the weights are almost one-hot (the largest weight of each row is at "
            f"least {_floor6(float(trace.A.max(-1).values.min())):.6f}): the walkthrough is "
            "about shapes.",
            items=[
                Shape(
                    name="Q Kᵀ",
                    operation="(B, h, T, d_k) @ (B, h, d_k, T)",
                    before=tuple(trace.Q.shape),
                    after=tuple(trace.S.shape),
                ),
                Shape(
                    name="head outputs",
                    operation="A V",
                    before=tuple(trace.A.shape),
                    after=tuple(trace.H.shape),
                ),
                *(
                    Mat(
                        symbol=f"A^{{({k + 1})}}",
                        text=f"A[0, head {k + 1}]",
                        value=L(trace.A[0, k]),
                        rows=tok,
                        cols=tok,
                    )
                    for k in range(h)
                ),
            ],
        ),
        Section(
            title="Concat: the inverse operations",
            text="Swap back, then reshape: each token's three head outputs become one vector of "
            "6. " + reshape_first_note(r),
            items=[
                Shape(
                    name="head outputs",
                    operation="swap = transpose(1, 2)",
                    before=tuple(trace.H.shape),
                    after=tuple(r.H_swapped.shape),
                ),
                Shape(
                    name="concat",
                    operation="reshape(B, T, heads × head_dim)",
                    before=tuple(r.H_swapped.shape),
                    after=tuple(trace.concat.shape),
                ),
                Mat(
                    symbol="\\operatorname{Concat}",
                    text="concat[0]",
                    value=L(trace.concat[0]),
                    rows=tok,
                ),
                Shape(
                    name="final output",
                    operation="concat × W_o, W_o (6, 6)",
                    before=tuple(trace.concat.shape),
                    after=tuple(trace.output.shape),
                ),
                Mat(
                    symbol="\\operatorname{reshape}(Q_{split})",
                    text="reshape first[0]",
                    formula_text="the split Q reshaped to (B, T, heads, head_dim) first",
                    value=[[v for p in row for v in p] for row in L(r.Q_reshape_first[0])],
                    rows=tok,
                ),
            ],
        ),
    ]


def pizza_json(r: PizzaNumbers) -> dict[str, JSONValue]:
    """The payload of ``--format json``: every shape, the token's row and pieces, each head."""
    tok = list(PIZZA_TOKENS)
    i = tok.index(DOC_PIZZA_TOKEN)
    trace = r.trace
    shapes = {
        "X": list(r.X.shape),
        "Q": list(r.Q.shape),
        "Q_reshaped": list(r.Q_reshaped.shape),
        "Q_swapped": list(r.Q_swapped.shape),
        "head_output": list(trace.H.shape),
        "head_output_swapped": list(r.H_swapped.shape),
        "concat": list(trace.concat.shape),
        "output": list(trace.output.shape),
    }
    return {
        "tokens": tok,
        "shapes": shapes,
        "token": tok[i],
        "token_row": r.Q[0, i].tolist(),
        "token_split": L(r.Q_reshaped[0, i]),
        "Q_heads": [L(r.Q_swapped[0, k]) for k in range(PIZZA_HEADS)],
        "A": [L(trace.A[0, k]) for k in range(PIZZA_HEADS)],
        "concat": L(trace.concat[0]),
        "output": L(trace.output[0]),
        "reshape_first": L(r.Q_reshape_first[0]),
    }


def explain() -> Explanation:
    """Seed 002: batch 1, seq_len 4, embedding 6, 3 heads; every reshape and transpose."""
    r = pizza_numbers()
    return Explanation(
        title='Splitting into heads, shape by shape: "Я хочу пиццу <eos>"',
        source="seed 002 (Russian): batch 1, seq_len 4, embedding 6, 3 heads",
        sections=pizza_sections(r),
        data={**pizza_json(r), "input": trace_input_json(r.trace, fused=True)},  # for --input
    )
