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
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, Shape, said
from attention_ref.worked.trace import DTYPE, L, column_names, t, trace_input_json
from attention_ref.worked.words_documents import PIZZA

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


def reshape_first_note(r: PizzaNumbers, lang: str = "en") -> str:
    """What "first reshape, then swap" does to the split ``Q``, on the document's numbers, in
    ``lang`` (`attention_ref.worked.words_documents.PIZZA`)."""
    w, tok = PIZZA[lang], list(PIZZA_TOKENS)
    i = tok.index(DOC_PIZZA_TOKEN)
    B, T, d = PIZZA_BATCH, PIZZA_SEQ_LEN, PIZZA_D_MODEL
    row = r.Q_reshape_first[0, i]  # (h, d_k): what "Пиццу" gets
    where = [provenance(r, piece) for piece in row]
    # `<eos>` in backticks: not HTML
    holds = ", ".join(w["holds"].format(k=k + 1, token=tok[t_]) for k, t_ in where)
    restored = bool(torch.equal(r.Q_swapped.transpose(1, 2).reshape(B, T, d), r.Q))
    scrambled = not torch.equal(r.Q_reshape_first.reshape(B, T, d), r.Q)
    return w["note"].format(
        shape=tuple(r.Q_swapped.shape),
        token=tok[i],
        row=[[int(v) for v in p] for p in row.tolist()],
        holds=holds,
        own=[int(v) for v in r.Q[0, i].tolist()],
        verdict=w["scrambled" if scrambled else "come_back"],
        restored=w["exactly" if restored else "not"],
        heads_shape=tuple(r.trace.H.shape),
    )


def pizza_sections(r: PizzaNumbers, lang: str = "en") -> list[Section]:
    """Input, split (reshape then swap), attention per head, concat (the inverse), in
    ``lang``'s words."""
    w, tok = PIZZA[lang], list(PIZZA_TOKENS)
    B, T, d, h = PIZZA_BATCH, PIZZA_SEQ_LEN, PIZZA_D_MODEL, PIZZA_HEADS
    d_k = d // h
    X, Q, Q_reshaped, Q_swapped, trace = r.X, r.Q, r.Q_reshaped, r.Q_swapped, r.trace
    i = tok.index(DOC_PIZZA_TOKEN)
    heads = [w["head"].format(k=k + 1) for k in range(h)]
    return [
        Section(
            title=w["input"],
            text=w["input_text"].format(B=B, T=T, d=d, h=h),
            items=[
                Mat(symbol="X", text="X[0]", value=L(X[0]), rows=tok, cols=column_names("e", d)),
                Shape(name="X", operation=w["embeddings"], before=(B, T), after=tuple(X.shape)),
                Shape(
                    name="Q, K, V",
                    operation=w["qkv"],
                    before=tuple(X.shape),
                    after=tuple(Q.shape),
                ),
            ],
        ),
        Section(
            title=w["split"],
            text=w["split_text"].format(d_k=d_k, h=h, T=T),
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
                    text=w["reshaped"].format(i=i, token=tok[i]),
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
                        text=f"Q[0, {heads[k]}]",
                        value=L(Q_swapped[0, k]),
                        rows=tok,
                    )
                    for k in range(h)
                ),
            ],
        ),
        Section(
            title=w["at_once"],
            text=w["at_once_text"].format(
                least=said(_floor6(float(trace.A.max(-1).values.min())), ".6f", lang)
            ),
            items=[
                Shape(
                    name="Q Kᵀ",
                    operation="(B, h, T, d_k) @ (B, h, d_k, T)",
                    before=tuple(trace.Q.shape),
                    after=tuple(trace.S.shape),
                ),
                Shape(
                    name=w["outputs"],
                    operation="A V",
                    before=tuple(trace.A.shape),
                    after=tuple(trace.H.shape),
                ),
                *(
                    Mat(
                        symbol=f"A^{{({k + 1})}}",
                        text=f"A[0, {heads[k]}]",
                        value=L(trace.A[0, k]),
                        rows=tok,
                        cols=tok,
                    )
                    for k in range(h)
                ),
            ],
        ),
        Section(
            title=w["concat"],
            text=w["concat_text"] + reshape_first_note(r, lang),
            items=[
                Shape(
                    name=w["outputs"],
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
                    name=w["final"],
                    operation="concat × W_o, W_o (6, 6)",
                    before=tuple(trace.concat.shape),
                    after=tuple(trace.output.shape),
                ),
                Mat(
                    symbol="\\operatorname{reshape}(Q_{split})",
                    text=w["reshape_first"],
                    formula_text=w["reshape_first_formula"],
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


def explain(lang: str = "en") -> Explanation:
    """Seed 002: batch 1, seq_len 4, embedding 6, 3 heads; every reshape and transpose, in the
    words of ``lang`` (`attention_ref.worked.words_documents.PIZZA`)."""
    r, w = pizza_numbers(), PIZZA[lang]
    return Explanation(
        title=w["title"],
        source=w["source"],
        sections=pizza_sections(r, lang),
        data={**pizza_json(r), "input": trace_input_json(r.trace, fused=True)},  # for --input
        lang=lang,
    )
