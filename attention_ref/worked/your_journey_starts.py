r"""Seed 001's code (rasbt's LLMs-from-scratch ch03) on "Your journey starts with one step".

Three modules of the code, recomputed with the reference from weights drawn exactly as the
code draws them: ``SelfAttention_v2`` (``Z = \operatorname{softmax}(Q K^\top / \sqrt{d_k}) V``,
no mask), ``CausalAttention`` (the same plus ``M``) and ``MultiHeadAttention``
(``\operatorname{Concat}(H^{(1)} | H^{(2)}) W_O + b_O``). ``BOOK_*`` are what the notebook
prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, TypedDict

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, Shape, said
from attention_ref.worked.journey_mask import mask_section
from attention_ref.worked.trace import DTYPE, L, column_names, t, trace_input_json
from attention_ref.worked.words_documents import JOURNEY

JOURNEY_TOKENS: Final = ("Your", "journey", "starts", "with", "one", "step")
JOURNEY_X: Final[Matrix] = [
    [0.43, 0.15, 0.89],
    [0.55, 0.87, 0.66],
    [0.57, 0.85, 0.64],
    [0.22, 0.58, 0.33],
    [0.77, 0.25, 0.10],
    [0.05, 0.80, 0.55],
]
JOURNEY_D_IN: Final = 3
JOURNEY_D_OUT: Final = 2
#: Seeds of the document's code: ``torch.manual_seed(789)`` before ``SelfAttention_v2``,
#: ``torch.manual_seed(123)`` before ``CausalAttention`` and before ``MultiHeadAttention``.
JOURNEY_SEED_SELF: Final = 789
JOURNEY_SEED_CAUSAL: Final = 123
JOURNEY_SEED_MULTIHEAD: Final = 123
JOURNEY_HEADS: Final = 2
#: What that code prints in rasbt's ch03 notebook (the seed quotes the code, not its output;
#: these are the notebook's printed values, 4 decimals). Row i = token i.
BOOK_JOURNEY_SELF: Final[Matrix] = [
    [-0.0739, 0.0713],
    [-0.0748, 0.0703],
    [-0.0749, 0.0702],
    [-0.0760, 0.0685],
    [-0.0763, 0.0679],
    [-0.0754, 0.0693],
]
BOOK_JOURNEY_CAUSAL: Final[Matrix] = [
    [-0.4519, 0.2216],
    [-0.5874, 0.0058],
    [-0.6300, -0.0632],
    [-0.5675, -0.0843],
    [-0.5526, -0.0981],
    [-0.5299, -0.1081],
]
BOOK_JOURNEY_MULTIHEAD: Final[Matrix] = [
    [0.3190, 0.4858],
    [0.2943, 0.3897],
    [0.2856, 0.3593],
    [0.2693, 0.3873],
    [0.2639, 0.3928],
    [0.2575, 0.4028],
]


def draw_linear_weights(
    seed: int, shapes: Sequence[tuple[int, int, bool]]
) -> list[tuple[Tensor, Tensor | None]]:
    """Weights drawn exactly as the document's code draws them.

    ``torch.manual_seed(seed)`` and then one ``nn.Linear(d_in, d_out, bias)`` per entry of
    ``shapes``, in order (PyTorch's default init: Kaiming-uniform weight,
    ``U(-1/√d_in, 1/√d_in)``; the bias from the same interval). Returns ``(W, b)`` in the
    document's row convention, ``W = linear.weight.T``, as float64.
    """
    torch.manual_seed(seed)  # the bound is 1/√fan_in of *each* layer: see `init_bound`
    out: list[tuple[Tensor, Tensor | None]] = []
    for d_in, d_out, bias in shapes:
        lin = torch.nn.Linear(d_in, d_out, bias=bias)
        W = lin.weight.detach().T.to(DTYPE)  # nn.Linear stores (d_out, d_in); ours is (d_in, d_out)
        b = lin.bias.detach().to(DTYPE) if lin.bias is not None else None
        out.append((W, b))
    return out


class JourneyModule(TypedDict):
    """One module of the code: its weights (row convention) and the reference's trace."""

    W_query: Tensor
    W_key: Tensor
    W_value: Tensor
    trace: ref.AttentionTrace


class JourneyMultiHead(JourneyModule):
    """``MultiHeadAttention`` adds ``out_proj``: ``W_O = out_proj.weight.T`` and its bias."""

    W_O: Tensor
    b_O: Tensor


class JourneyNumbers(TypedDict):
    """`journey_numbers`: the three modules, in the code's order."""

    self: JourneyModule
    causal: JourneyModule
    multihead: JourneyMultiHead


def journey_numbers() -> JourneyNumbers:
    """The three modules of the seed's code, recomputed with the reference.

    * ``SelfAttention_v2`` (seed 789): one head, no mask, ``d_out = 2``.
    * ``CausalAttention`` (seed 123): one head, causal mask, dropout 0, batch of 2 copies.
    * ``MultiHeadAttention`` (seed 123): ``d_out = 2``, ``num_heads = 2`` (``head_dim = 1``),
      fused ``W_query``/``W_key``/``W_value`` split into heads, then ``out_proj`` (with bias).
    """
    X = t(JOURNEY_X)
    d_in, d_out, h = JOURNEY_D_IN, JOURNEY_D_OUT, JOURNEY_HEADS
    qkv = [(d_in, d_out, False)] * 3
    (Wq, _), (Wk, _), (Wv, _) = draw_linear_weights(JOURNEY_SEED_SELF, qkv)
    eye = torch.eye(d_out, dtype=DTYPE)
    self_attn = ref.masked_multihead_attention_fused(
        X, Wq, Wk, Wv, eye, h=1, causal=False, tokens=JOURNEY_TOKENS
    )
    (cWq, _), (cWk, _), (cWv, _) = draw_linear_weights(JOURNEY_SEED_CAUSAL, qkv)
    batch = torch.stack((X, X), dim=0)  # (6, 3) -> (2, 6, 3), as the code's torch.stack
    causal = ref.masked_multihead_attention_fused(batch, cWq, cWk, cWv, eye, h=1)
    mha_w = draw_linear_weights(JOURNEY_SEED_MULTIHEAD, [*qkv, (d_out, d_out, True)])
    (mWq, _), (mWk, _), (mWv, _), (mWo, mbo) = mha_w
    assert mbo is not None  # out_proj is nn.Linear(..., bias=True)
    mha = ref.masked_multihead_attention_fused(batch, mWq, mWk, mWv, mWo, h=h, b_O=mbo)
    return {
        "self": {"W_query": Wq, "W_key": Wk, "W_value": Wv, "trace": self_attn},
        "causal": {"W_query": cWq, "W_key": cWk, "W_value": cWv, "trace": causal},
        "multihead": {
            "W_query": mWq,
            "W_key": mWk,
            "W_value": mWv,
            "W_O": mWo,
            "b_O": mbo,
            "trace": mha,
        },
    }


def init_bound(fan_in: int) -> float:
    r"""PyTorch's default ``nn.Linear`` init bound, weight and bias alike: ``1/\sqrt{fan_{in}}``.

    Kaiming-uniform with ``a = √5`` gives ``gain·√(3/fan_in) = √(1/3)·√(3/fan_in)``; the bias
    is drawn from ``U(−1/√fan_in, 1/√fan_in)``. ``fan_in`` is the layer's ``in_features``: 3
    for ``W_query``, ``W_key``, ``W_value`` here, but ``d_out = 2`` for ``out_proj``.
    """
    return 1.0 / math.sqrt(fan_in)


def draw_text(seed: int, layers: Sequence[tuple[str, int]], lang: str = "en") -> str:
    """How a module's weights are drawn: seed, layer order, each layer's bound from its
    fan-in, in ``lang`` (`attention_ref.worked.words_documents.JOURNEY`)."""
    w = JOURNEY[lang]
    order = ", ".join(name for name, _ in layers)
    by_fan_in: dict[int, list[str]] = {}
    for name, fan_in in layers:
        by_fan_in.setdefault(fan_in, []).append(name)
    bounds = "; ".join(
        w["bound"].format(names=", ".join(names), f=f, bound=said(init_bound(f), ".3f", lang))
        for f, names in by_fan_in.items()
    )
    return w["draw"].format(seed=seed, order=order, bounds=bounds)


QKV_LAYERS: Final = (("W_query", JOURNEY_D_IN), ("W_key", JOURNEY_D_IN), ("W_value", JOURNEY_D_IN))


def mha_layers(lang: str = "en") -> tuple[tuple[str, int], ...]:
    """`QKV_LAYERS`, then ``out_proj = nn.Linear(d_out, d_out)``: its input is the concat of
    the heads, width 2."""
    return (*QKV_LAYERS, (JOURNEY[lang]["out_proj"], JOURNEY_D_OUT))


def b_o_note(b_O: Tensor, lang: str = "en") -> str:
    """Where ``b_O`` lies against ``out_proj``'s bound (1/√2) and the inputs' (1/√3)."""
    w, big = JOURNEY[lang], float(b_O.abs().max())
    wide, narrow = init_bound(JOURNEY_D_OUT), init_bound(JOURNEY_D_IN)
    return w["b_o"].format(
        big=said(big, ".4f", lang),
        inside=w["inside" if big <= wide else "outside"],
        d_out=JOURNEY_D_OUT,
        wide=said(wide, ".3f", lang),
        beyond=w["beyond" if big > narrow else "within"],
        d_in=JOURNEY_D_IN,
        narrow=said(narrow, ".3f", lang),
    )


def document_words(r: JourneyNumbers, lang: str = "en") -> str:
    """Seed 001's words about trainable weights beside what its own code computes, the
    document quoted in ``lang``."""
    w, X, st = JOURNEY[lang], t(JOURNEY_X), r["self"]["trace"]
    Q = st.Q[0]  # (T, d_out): one row per token
    same = tuple(Q.shape) == tuple(X.shape) and bool(torch.equal(Q, X))
    # the code's three layers are the same nn.Linear; is its weight a trained parameter?
    trainable = torch.nn.Linear(JOURNEY_D_IN, JOURNEY_D_OUT, bias=False).weight.requires_grad
    query = w["query"].format(trainable=trainable, shape=tuple(Q.shape)) + (
        w["is_data"] if same else w["not_data"].format(x_shape=tuple(X.shape))
    )
    per_token = w["per_token"].format(d=Q.shape[-1], w_shape=tuple(r["self"]["W_query"].shape))
    return query + per_token


def weight_mats(m: JourneyModule) -> list[Mat]:
    """``W_query``, ``W_key``, ``W_value`` of one module."""
    return [
        Mat(symbol="W_{query}", value=L(m["W_query"])),
        Mat(symbol="W_{key}", value=L(m["W_key"])),
        Mat(symbol="W_{value}", value=L(m["W_value"])),
    ]


def journey_sections(r: JourneyNumbers, lang: str = "en") -> list[Section]:
    """Inputs, then each module: its weights, its steps under the code's names, the book's;
    the words in ``lang``."""
    w, tok = JOURNEY[lang], list(JOURNEY_TOKENS)
    s, c, m = r["self"], r["causal"], r["multihead"]
    st, ct, mt = s["trace"], c["trace"], m["trace"]
    d_k = JOURNEY_D_OUT
    return [
        Section(
            title=w["inputs"],
            text=w["inputs_text"],
            items=[Mat(symbol="X", value=L(t(JOURNEY_X)), rows=tok, cols=column_names("dim ", 3))],
        ),
        Section(
            title=w["self"],
            text=draw_text(JOURNEY_SEED_SELF, QKV_LAYERS, lang) + w["self_text"],
            items=[
                *weight_mats(s),
                Mat(symbol="Q", text="queries", value=L(st.Q[0]), formula="X W_{query}", rows=tok),
                Mat(symbol="K", text="keys", value=L(st.K[0]), formula="X W_{key}", rows=tok),
                Mat(symbol="V", text="values", value=L(st.V[0]), formula="X W_{value}", rows=tok),
                Mat(
                    symbol="Q K^\\top",
                    text="attn_scores",
                    value=L(st.QKt[0]),
                    formula_text="queries keysᵀ",
                    rows=tok,
                    cols=tok,
                ),
                Mat(
                    symbol="A",
                    text="attn_weights",
                    value=L(st.A[0]),
                    formula=f"\\operatorname{{softmax}}(Q K^\\top / \\sqrt{{{d_k}}})",
                    formula_text=f"softmax(attn_scores / √{d_k})",
                    rows=tok,
                    cols=tok,
                ),
                Mat(
                    symbol="Z",
                    text="context_vec",
                    value=L(st.output),
                    formula="A V",
                    formula_text="attn_weights values",
                    rows=tok,
                ),
                Mat(symbol="Z_{book}", text=w["book"], value=BOOK_JOURNEY_SELF, rows=tok),
            ],
        ),
        Section(
            title=w["says"],
            text=document_words(r, lang),
        ),
        Section(
            title=w["causal"],
            text=draw_text(JOURNEY_SEED_CAUSAL, QKV_LAYERS, lang) + w["causal_text"],
            items=[
                *weight_mats(c),
                Mat(
                    symbol="\\tilde S",
                    text=w["masked_scores"],
                    value=L(ct.S_masked[0, 0]),
                    formula_text=f"queries keysᵀ / √{d_k} + M",
                    rows=tok,
                    cols=tok,
                ),
                Mat(
                    symbol="A",
                    text="attn_weights",
                    value=L(ct.A[0, 0]),
                    formula_text=w["masked_formula"],
                    rows=tok,
                    cols=tok,
                ),
                Mat(
                    symbol="Z",
                    text="context_vecs[0]",
                    value=L(ct.output[0]),
                    formula="A V",
                    formula_text="attn_weights values",
                    rows=tok,
                ),
                Mat(symbol="Z_{book}", text=w["book"], value=BOOK_JOURNEY_CAUSAL, rows=tok),
                Shape(
                    name="batch",
                    operation="torch.stack((inputs, inputs))",
                    before=(6, 3),
                    after=tuple(ct.X.shape),
                ),
                Shape(
                    name="context_vecs",
                    operation=w["causal_op"],
                    before=tuple(ct.X.shape),
                    after=tuple(ct.output.shape),
                ),
            ],
        ),
        mask_section(ct.S[0, 0], tok, lang),
        Section(
            title=w["multihead"],
            text=draw_text(JOURNEY_SEED_MULTIHEAD, mha_layers(lang), lang)
            + f" {b_o_note(m['b_O'], lang)}"
            + w["multihead_text"],
            items=[
                *weight_mats(m),
                Mat(symbol="W_O", text="W_O = out_proj.weight.T", value=L(m["W_O"])),
                Mat(symbol="b_O", text="b_O = out_proj.bias", value=L(m["b_O"])),
                Shape(
                    name="queries", operation="X W_query", before=tuple(mt.X.shape), after=(2, 6, 2)
                ),
                Shape(
                    name="queries",
                    operation="view (b, T, heads, head_dim)",
                    before=(2, 6, 2),
                    after=(2, 6, 2, 1),
                ),
                Shape(
                    name="queries",
                    operation="transpose(1, 2)",
                    before=(2, 6, 2, 1),
                    after=tuple(mt.Q.shape),
                ),
                Shape(
                    name="attn_weights",
                    operation="softmax(Q Kᵀ / √head_dim + M)",
                    before=tuple(mt.Q.shape),
                    after=tuple(mt.A.shape),
                ),
                Shape(
                    name="context_vec",
                    operation="(attn_weights V).transpose(1, 2).view",
                    before=tuple(mt.H.shape),
                    after=tuple(mt.concat.shape),
                ),
                Shape(
                    name="output",
                    operation="out_proj",
                    before=tuple(mt.concat.shape),
                    after=tuple(mt.output.shape),
                ),
                *(
                    Mat(
                        symbol=f"A^{{({i + 1})}}",
                        text=w["head"].format(i=i + 1),
                        value=L(mt.A[0, i]),
                        rows=tok,
                        cols=tok,
                    )
                    for i in range(JOURNEY_HEADS)
                ),
                Mat(
                    symbol="Z",
                    text="context_vecs[0]",
                    value=L(mt.output[0]),
                    formula="\\operatorname{Concat}(H^{(1)} | H^{(2)}) W_O + b_O",
                    formula_text="Concat(H¹|H²) W_O + b_O",
                    rows=tok,
                ),
                Mat(symbol="Z_{book}", text=w["book"], value=BOOK_JOURNEY_MULTIHEAD, rows=tok),
            ],
        ),
    ]


def journey_json(r: JourneyNumbers) -> dict[str, JSONValue]:
    """The payload of ``--format json``: each module's seed, weights and results."""
    s, c, m = r["self"], r["causal"], r["multihead"]
    st, ct, mt = s["trace"], c["trace"], m["trace"]
    return {
        "tokens": list(JOURNEY_TOKENS),
        "X": L(t(JOURNEY_X)),
        "self_attention": {
            "seed": JOURNEY_SEED_SELF,
            "W_query": L(s["W_query"]),
            "W_key": L(s["W_key"]),
            "W_value": L(s["W_value"]),
            "A": L(st.A[0]),
            "context_vec": L(st.output),
        },
        "causal_attention": {
            "seed": JOURNEY_SEED_CAUSAL,
            "A": L(ct.A[0, 0]),
            "context_vecs_shape": list(ct.output.shape),
            "context_vec": L(ct.output[0]),
        },
        "multihead_attention": {
            "seed": JOURNEY_SEED_MULTIHEAD,
            "heads": JOURNEY_HEADS,
            "A": [L(mt.A[0, i]) for i in range(JOURNEY_HEADS)],
            "context_vecs_shape": list(mt.output.shape),
            "context_vec": L(mt.output[0]),
        },
    }


def journey_input(r: JourneyNumbers) -> dict[str, JSONValue]:
    """``MultiHeadAttention``'s numbers as an ``--input`` document (fused, as the code has them)."""
    return trace_input_json(r["multihead"]["trace"], fused=True, tokens=JOURNEY_TOKENS)


def explain(lang: str = "en") -> Explanation:
    """Seed 001's code on "Your journey starts with one step": self, causal, 2-head attention,
    in the words of ``lang`` (`attention_ref.worked.words_documents.JOURNEY`)."""
    r, w = journey_numbers(), JOURNEY[lang]
    return Explanation(
        title=w["title"],
        source=w["source"],
        sections=journey_sections(r, lang),
        # for --input: the multi-head module's numbers (its output is multihead_attention's)
        data={**journey_json(r), "input": journey_input(r)},
        precision=4,
        lang=lang,
    )
