"""The worked examples, run through the reference and laid out step by step.

Each ``explain_*`` function takes the data of `attention_ref.examples` (or a user's
`attention_ref.inputs.AttentionInput`), computes every step with
`attention_ref.reference` and returns an `attention_ref.render.Explanation`
(plain lists of floats), which `attention_ref.render` prints in any format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from attention_ref import examples as ex
from attention_ref import reference as ref
from attention_ref.inputs import AttentionInput
from attention_ref.render import Explanation, Mat, Section, Shape

DTYPE = torch.float64


def t(m: Any) -> Tensor:
    """Nested lists -> float64 tensor."""
    return torch.tensor(m, dtype=DTYPE)


def L(x: Tensor) -> list[list[float]]:
    """A tensor as a list of rows (a vector becomes one row)."""
    x = x.detach().to(DTYPE)
    return (x.unsqueeze(0) if x.dim() == 1 else x).tolist()


def _cols(prefix: str, k: int) -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(k)]


# --- traces (life-is-awesome and --input) -----------------------------------------------------


def trace_to_json(trace: ref.AttentionTrace) -> dict[str, Any]:
    """The JSON of ``explain --format json`` for a single-sequence trace.

    ``{"tokens", "M", "heads": [{"Q","K","V","scores","S","S_masked","A","H"}...],
    "concat", "W_O", "output"}``; ``M`` is all zeros when no mask was applied.
    """
    n = len(trace.tokens)
    M = trace.M if trace.M is not None else torch.zeros(n, n, dtype=trace.X.dtype)
    heads = []
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
    """Every step of seed 000's development for a single-sequence trace, in its order."""
    tok, h, d_k, d_v = list(trace.tokens), trace.h, trace.d_k, trace.d_v
    n, d_model = trace.X.shape
    sup = [f"^({i + 1})" for i in range(h)]
    lsup = [f"^{{({i + 1})}}" for i in range(h)]
    ltop = [f"^{{({i + 1})\\top}}" for i in range(h)]
    weights = Section(
        "Inputs: X and the weights of each head",
        f"n = {n} tokens, d_model = {d_model}, h = {h} heads, d_k = {d_k}, d_v = {d_v}. "
        "Row convention: a token is a row of X and Q = X W_Q.",
        [Mat("X", "X", L(trace.X), rows=tok, cols=_cols("x", d_model))],
    )
    for i in range(h):
        for role, W in (("Q", W_Q), ("K", W_K), ("V", W_V)):
            weights.items.append(Mat(f"W_{role}{sup[i]}", f"W_{role}{lsup[i]}", L(W[i])))
    proj = Section(
        "Projections: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾, V⁽ⁱ⁾ = X W_V⁽ⁱ⁾",
        "Each head projects every token with its own matrices.",
    )
    score = Section(
        f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, with d_k = {d_k}",
        f"Entry (i, j) is q_i · k_j, the match of token i's query with token j's key, "
        f"divided by √{d_k}.",
    )
    if trace.M is not None:
        mask = Section(
            "Causal mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
            "M is 0 on and below the diagonal and −∞ above: token t sees itself and the tokens "
            "before it, never the future (j > t).",
            [Mat("M", "M", L(trace.M), rows=tok, cols=tok)],
        )
    else:
        mask = Section("No mask", "causal = false: every token sees every token (S̃ = S).")
    soft = Section(
        "Softmax, row by row: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "Each row is a probability distribution over the visible tokens; e^(−∞) = 0, so "
        "with the mask the first row is (1, 0, …, 0).",
    )
    outs = Section(
        "Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾", "Row t is a weighted average of the value rows."
    )
    for i in range(h):
        hd = trace.head(i)
        for role in ("Q", "K", "V"):
            proj.items.append(
                Mat(f"{role}{sup[i]}", f"{role}{lsup[i]}", L(hd[role]),
                    f"X W_{role}{sup[i]}", f"X W_{role}{lsup[i]}", tok)
            )  # fmt: skip
        score.items.extend([
            Mat(f"Q{sup[i]} K{sup[i]}ᵀ", f"Q{lsup[i]} K{ltop[i]}", L(hd["QKt"]),
                rows=tok, cols=tok),
            Mat(f"S{sup[i]}", f"S{lsup[i]}", L(hd["S"]), f"Q{sup[i]} K{sup[i]}ᵀ / √{d_k}",
                f"\\frac{{Q{lsup[i]} K{ltop[i]}}}{{\\sqrt{{{d_k}}}}}", tok, tok),
        ])  # fmt: skip
        if trace.M is not None:
            mask.items.append(
                Mat(f"S̃{sup[i]}", f"\\tilde S{lsup[i]}", L(hd["S_masked"]), f"S{sup[i]} + M",
                    f"S{lsup[i]} + M", tok, tok)
            )  # fmt: skip
        soft.items.append(
            Mat(f"A{sup[i]}", f"A{lsup[i]}", L(hd["A"]), "softmax(S̃" + sup[i] + ")",
                f"\\operatorname{{softmax}}(\\tilde S{lsup[i]})", tok, tok)
        )  # fmt: skip
        outs.items.append(
            Mat(f"H{sup[i]}", f"H{lsup[i]}", L(hd["H"]), f"A{sup[i]} V{sup[i]}",
                f"A{lsup[i]} V{lsup[i]}", tok)
        )  # fmt: skip
    heads = " | ".join(f"H{s}" for s in sup)
    lheads = " \\mid ".join(f"H{s}" for s in lsup)
    final = Section(
        "Concat and output projection: MultiHead = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O",
        W_O_note or "The heads side by side, then one linear map W_O back to d_model.",
        [
            Mat("Concat", "\\operatorname{Concat}", L(trace.concat), f"[{heads}]",
                f"[{lheads}]", tok),
            Mat("W_O", "W_O", L(trace.W_O)),
            Mat("Output", "\\operatorname{MultiHead}", L(trace.output), "Concat · W_O",
                "\\operatorname{Concat} \\cdot W_O", tok, _cols("y", d_model)),
        ],
    )  # fmt: skip
    return [weights, proj, score, mask, soft, outs, final]


def explain_life() -> Explanation:
    """Seed 000: "Life is awesome", d_model = 4, h = 2, causal mask, W_O = I_4."""
    W_Q, W_K, W_V = t(ex.LIFE_W_Q), t(ex.LIFE_W_K), t(ex.LIFE_W_V)
    trace = ref.masked_multihead_attention(
        t(ex.LIFE_X), W_Q, W_K, W_V, t(ex.LIFE_W_O), tokens=ex.LIFE_TOKENS
    )
    sections = trace_sections(
        trace, W_Q, W_K, W_V, W_O_note="W_O = I_4 in the document, so the output is the concat."
    )
    return Explanation(
        'Masked multi-head attention: "Life is awesome"',
        "seed 000, MAE5911 homework, Questão 01 (d_model = 4, h = 2, causal mask, W_O = I_4)",
        sections,
        trace_to_json(trace),
    )


def explain_input(inp: AttentionInput) -> Explanation:
    """A user's own numbers (``--input FILE``), through the same steps as seed 000."""
    X = t(inp.X)
    W_Q, W_K, W_V = t(inp.W_Q), t(inp.W_K), t(inp.W_V)
    W_O = t(inp.W_O) if inp.W_O is not None else None
    trace = ref.masked_multihead_attention(
        X, W_Q, W_K, W_V, W_O, causal=inp.causal, tokens=inp.tokens
    )
    view = "fused matrices split into heads" if inp.fused else "per-head matrices"
    return Explanation(
        "Masked multi-head attention: your input"
        if inp.causal
        else "Multi-head attention: your input",
        f"--input file ({view}, h = {inp.h}, causal = {str(inp.causal).lower()})",
        trace_sections(trace, W_Q, W_K, W_V),
        trace_to_json(trace),
    )


# --- hello-shiny-sun (seeds 001/004) ---------------------------------------------------------


def hello_numbers() -> dict[str, Any]:
    """Dot-product self-attention for the query "shiny", exactly and as the document has it.

    ``omega = x_shiny X^T`` (no weights, no scaling), ``alpha = softmax(omega)``,
    ``z = alpha X``. The document's weighted embeddings imply, entry by entry, the weight
    ``doc_weighted[j][d] / X[j][d]``; comparing that with the exact ``alpha_j`` shows where the
    document's rounded numbers drift.
    """
    X = t(ex.HELLO_X)
    q = X[ex.HELLO_TOKENS.index(ex.HELLO_QUERY)].unsqueeze(0)  # (1, 3)
    omega = ref.scores(q, X)  # (1, 3) @ (3, 3)ᵀ -> (1, 3): no 1/√d scaling in this first example
    alpha = ref.softmax_rows(omega)
    weighted = alpha.T * X  # row j = alpha_j x_j
    z = ref.weighted_sum(alpha, X)  # (1, 3) @ (3, 3) -> (1, 3)
    doc_weighted = t(ex.DOC_HELLO_WEIGHTED)
    implied = doc_weighted / X  # the weight each printed product implies
    doc_z = t(ex.DOC_HELLO_CONTEXT)
    return {
        "scores": omega[0],
        "weights": alpha[0],
        "weighted": weighted,
        "context": z[0],
        "doc_weighted": doc_weighted,
        "doc_context": doc_z,
        "doc_context_sum": doc_weighted.sum(dim=0),
        "implied_weights": implied,
        "difference": doc_z - z[0],
    }


def explain_hello() -> Explanation:
    """Seeds 001/004: plain dot-product attention for the query "shiny", with the rounding note."""
    r = hello_numbers()
    tok = list(ex.HELLO_TOKENS)
    p = ex.DOC_HELLO_DECIMALS
    exact = r["context"].tolist()
    imp = r["implied_weights"]
    w = r["weights"].tolist()
    ranges = "; ".join(
        f"{name}: exact {w[j]:.{p}f}, implied {imp[j].min():.{p}f}–{imp[j].max():.{p}f}"
        for j, name in enumerate(tok)
    )
    diff = max(abs(d) for d in r["difference"].tolist())
    drift = [
        name
        for j, name in enumerate(tok)
        if any(round(v, p) != round(w[j], p) for v in imp[j].tolist())
    ]
    why = (
        f"The document's vector is the sum of its printed weighted embeddings (that sum is right: "
        f"{', '.join(f'{v:.{p}f}' for v in r['doc_context_sum'].tolist())}). Those products were "
        f"computed from rounded attention weights, not from the exact softmax: dividing each "
        f"printed "
        f"product by its embedding entry gives the weight it implies ({ranges}). "
        f"The implied weights of {' and '.join(repr(d) for d in drift)} differ from the exact "
        f"softmax at {p} decimals and are not even one number per token, so the error is in the "
        f"rounded intermediate values, not in the method; it reaches {diff:.{p}f} in the context "
        f"vector."
    )
    sections = [
        Section(
            "Embeddings",
            "Three tokens, 3-dimensional embeddings; the query is the embedding of \"shiny\" "
            "itself "
            "(no trainable weights yet).",
            [Mat("X", "X", L(t(ex.HELLO_X)), rows=tok, cols=_cols("x", 3))],
        ),
        Section(
            "Step 1, attention scores: ω_j = x_shiny · x_j",
            "",
            [Mat("ω", "\\omega", L(r["scores"]), "x_shiny Xᵀ", "x_{shiny} X^\\top", ["shiny"],
                 tok)],
        ),
        Section(
            "Step 2, attention weights: α = softmax(ω)",
            "The weights sum to 1.",
            [Mat("α", "\\alpha", L(r["weights"]), "softmax(ω)",
                 "\\operatorname{softmax}(\\omega)", ["shiny"], tok)],
        ),
        Section(
            "Step 3, context vector: z = Σ_j α_j x_j",
            "",
            [
                Mat("α_j x_j", "\\alpha_j x_j", L(r["weighted"]), "weighted embeddings (exact)",
                    rows=tok, cols=_cols("x", 3)),
                Mat("z", "z", L(r["context"]), "Σ_j α_j x_j (exact)", "\\sum_j \\alpha_j x_j",
                    ["shiny"], _cols("z", 3)),
            ],
        ),
        Section(
            "The document's numbers beside the exact ones",
            why,
            [
                Mat("document: α_j x_j", "\\text{doc } \\alpha_j x_j", L(r["doc_weighted"]),
                    rows=tok, cols=_cols("x", 3)),
                Mat("implied α_j", "\\text{implied } \\alpha_j", L(r["implied_weights"]),
                    "document's α_j x_j / x_j", rows=tok, cols=_cols("x", 3)),
                Mat("document: z", "z_{doc}", L(r["doc_context"]), rows=["shiny"],
                    cols=_cols("z", 3)),
                Mat("exact: z", "z", L(r["context"]), rows=["shiny"], cols=_cols("z", 3)),
                Mat("document − exact", "z_{doc} - z", L(r["difference"]), rows=["shiny"],
                    cols=_cols("z", 3)),
            ],
        ),
    ]  # fmt: skip
    data = {
        "tokens": tok,
        "query": ex.HELLO_QUERY,
        "X": L(t(ex.HELLO_X)),
        "scores": r["scores"].tolist(),
        "weights": w,
        "weighted": L(r["weighted"]),
        "context": exact,
        "document": {
            "weighted": L(r["doc_weighted"]),
            "context": r["doc_context"].tolist(),
            "implied_weights": L(r["implied_weights"]),
        },
        "difference": r["difference"].tolist(),
    }
    return Explanation(
        'Dot-product attention by hand: "Hello shiny sun!"',
        'seeds 001 (Portuguese) and 004 (English/Korean): context vector of "shiny"',
        sections,
        data,
        precision=p,
    )


# --- your-journey-starts (seed 001 code) ------------------------------------------------------


def draw_linear_weights(
    seed: int, shapes: Sequence[tuple[int, int, bool]]
) -> list[tuple[Tensor, Tensor | None]]:
    """Weights drawn exactly as the document's code draws them.

    ``torch.manual_seed(seed)`` and then one ``nn.Linear(d_in, d_out, bias)`` per entry of
    ``shapes``, in order (PyTorch's default init: Kaiming-uniform weight,
    ``U(-1/√d_in, 1/√d_in)``; the bias from the same interval). Returns ``(W, b)`` in the
    document's row convention, ``W = linear.weight.T``, as float64.
    """
    torch.manual_seed(seed)
    out = []
    for d_in, d_out, bias in shapes:
        lin = torch.nn.Linear(d_in, d_out, bias=bias)
        W = lin.weight.detach().T.to(DTYPE)  # nn.Linear stores (d_out, d_in); ours is (d_in, d_out)
        b = lin.bias.detach().to(DTYPE) if lin.bias is not None else None
        out.append((W, b))
    return out


def journey_numbers() -> dict[str, Any]:
    """The three modules of the seed's code, recomputed with the reference.

    * ``SelfAttention_v2`` (seed 789): one head, no mask, ``d_out = 2``.
    * ``CausalAttention`` (seed 123): one head, causal mask, dropout 0, batch of 2 copies.
    * ``MultiHeadAttention`` (seed 123): ``d_out = 2``, ``num_heads = 2`` (``head_dim = 1``),
      fused ``W_query``/``W_key``/``W_value`` split into heads, then ``out_proj`` (with bias).
    """
    X = t(ex.JOURNEY_X)
    d_in, d_out, h = ex.JOURNEY_D_IN, ex.JOURNEY_D_OUT, ex.JOURNEY_HEADS
    qkv = [(d_in, d_out, False)] * 3
    (Wq, _), (Wk, _), (Wv, _) = draw_linear_weights(ex.JOURNEY_SEED_SELF, qkv)
    eye = torch.eye(d_out, dtype=DTYPE)
    self_attn = ref.masked_multihead_attention_fused(
        X, Wq, Wk, Wv, eye, h=1, causal=False, tokens=ex.JOURNEY_TOKENS
    )
    (cWq, _), (cWk, _), (cWv, _) = draw_linear_weights(ex.JOURNEY_SEED_CAUSAL, qkv)
    batch = torch.stack((X, X), dim=0)  # (6, 3) -> (2, 6, 3), as the code's torch.stack
    causal = ref.masked_multihead_attention_fused(batch, cWq, cWk, cWv, eye, h=1)
    mha_w = draw_linear_weights(ex.JOURNEY_SEED_MULTIHEAD, [*qkv, (d_out, d_out, True)])
    (mWq, _), (mWk, _), (mWv, _), (mWo, mbo) = mha_w
    mha = ref.masked_multihead_attention_fused(batch, mWq, mWk, mWv, mWo, h=h, b_O=mbo)
    return {
        "self": {"W_query": Wq, "W_key": Wk, "W_value": Wv, "trace": self_attn},
        "causal": {"W_query": cWq, "W_key": cWk, "W_value": cWv, "trace": causal},
        "multihead": {"W_query": mWq, "W_key": mWk, "W_value": mWv, "W_O": mWo, "b_O": mbo,
                      "trace": mha},
    }  # fmt: skip


def explain_journey() -> Explanation:
    """Seed 001's code on "Your journey starts with one step": self, causal, 2-head attention."""
    r = journey_numbers()
    tok = list(ex.JOURNEY_TOKENS)
    X = t(ex.JOURNEY_X)
    s, c, m = r["self"], r["causal"], r["multihead"]
    st, ct, mt = s["trace"], c["trace"], m["trace"]
    d_k = ex.JOURNEY_D_OUT
    book = "rasbt's ch03 notebook prints"
    draw = (
        "Weights are drawn exactly as the document's code draws them: torch.manual_seed({seed}), "
        "then nn.Linear layers created in the order {order} (PyTorch's default init, "
        "Kaiming-uniform: U(−1/√d_in, 1/√d_in) with d_in = {d_in}); in the row convention "
        "W = linear.weight.T."
    )
    sections = [
        Section("Inputs", "Six tokens, 3-dimensional embeddings (the code's `inputs`).",
                [Mat("X", "X", L(X), rows=tok, cols=_cols("x", 3))]),
        Section(
            "Self-attention with trainable weights (SelfAttention_v2)",
            draw.format(seed=ex.JOURNEY_SEED_SELF, order="W_query, W_key, W_value", d_in=3)
            + " No mask. queries = X W_query, keys = X W_key, values = X W_value; "
            "attn_weights = softmax(queries keysᵀ / √d_k); context_vec = attn_weights values.",
            [
                Mat("W_query", "W_{query}", L(s["W_query"])),
                Mat("W_key", "W_{key}", L(s["W_key"])),
                Mat("W_value", "W_{value}", L(s["W_value"])),
                Mat("queries", "Q", L(st.Q[0]), "X W_query", "X W_{query}", tok),
                Mat("keys", "K", L(st.K[0]), "X W_key", "X W_{key}", tok),
                Mat("values", "V", L(st.V[0]), "X W_value", "X W_{value}", tok),
                Mat("attn_scores", "Q K^\\top", L(st.QKt[0]), "queries keysᵀ", "Q K^\\top",
                    tok, tok),
                Mat("attn_weights", "A", L(st.A[0]), f"softmax(attn_scores / √{d_k})",
                    f"\\operatorname{{softmax}}(Q K^\\top / \\sqrt{{{d_k}}})", tok, tok),
                Mat("context_vec", "Z", L(st.output), "attn_weights values", "A V", tok),
                Mat(f"{book}", "Z_{book}", ex.BOOK_JOURNEY_SELF, rows=tok),
            ],
        ),
        Section(
            "Causal attention (CausalAttention, dropout 0)",
            draw.format(seed=ex.JOURNEY_SEED_CAUSAL, order="W_query, W_key, W_value", d_in=3)
            + " Scores above the diagonal are set to −∞ before the softmax, so each token "
            "averages only itself and its predecessors. The code stacks the input twice: "
            "batch (2, 6, 3) → context_vecs (2, 6, 2), both copies identical. Dropout on the "
            "weights (seed 001) is a training-time step; here p = 0.",
            [
                Mat("W_query", "W_{query}", L(c["W_query"])),
                Mat("W_key", "W_{key}", L(c["W_key"])),
                Mat("W_value", "W_{value}", L(c["W_value"])),
                Mat("masked attn_scores", "\\tilde S", L(ct.S_masked[0, 0]),
                    f"queries keysᵀ / √{d_k} + M", rows=tok, cols=tok),
                Mat("attn_weights", "A", L(ct.A[0, 0]), "softmax(masked scores)", rows=tok,
                    cols=tok),
                Mat("context_vecs[0]", "Z", L(ct.output[0]), "attn_weights values", "A V", tok),
                Mat(f"{book}", "Z_{book}", ex.BOOK_JOURNEY_CAUSAL, rows=tok),
                Shape("batch", "torch.stack((inputs, inputs))", (6, 3), tuple(ct.X.shape)),
                Shape("context_vecs", "causal attention", tuple(ct.X.shape),
                      tuple(ct.output.shape)),
            ],
        ),
        Section(
            "Multi-head attention (MultiHeadAttention, d_out = 2, num_heads = 2)",
            draw.format(seed=ex.JOURNEY_SEED_MULTIHEAD,
                        order="W_query, W_key, W_value, out_proj (with bias)", d_in=3)
            + " head_dim = d_out / num_heads = 1: the fused projections are split into 2 heads "
            "of width 1 by view + transpose, each head attends causally, the heads are merged "
            "back and out_proj (W_O and its bias b_O) mixes them.",
            [
                Mat("W_query", "W_{query}", L(m["W_query"])),
                Mat("W_key", "W_{key}", L(m["W_key"])),
                Mat("W_value", "W_{value}", L(m["W_value"])),
                Mat("W_O = out_proj.weight.T", "W_O", L(m["W_O"])),
                Mat("b_O = out_proj.bias", "b_O", L(m["b_O"])),
                Shape("queries", "X W_query", tuple(mt.X.shape), (2, 6, 2)),
                Shape("queries", "view (b, T, heads, head_dim)", (2, 6, 2), (2, 6, 2, 1)),
                Shape("queries", "transpose(1, 2)", (2, 6, 2, 1), tuple(mt.Q.shape)),
                Shape("attn_weights", "softmax(Q Kᵀ / √head_dim + M)", tuple(mt.Q.shape),
                      tuple(mt.A.shape)),
                Shape("context_vec", "(attn_weights V).transpose(1, 2).view", tuple(mt.H.shape),
                      tuple(mt.concat.shape)),
                Shape("output", "out_proj", tuple(mt.concat.shape), tuple(mt.output.shape)),
                Mat("A (head 1)", "A^{(1)}", L(mt.A[0, 0]), rows=tok, cols=tok),
                Mat("A (head 2)", "A^{(2)}", L(mt.A[0, 1]), rows=tok, cols=tok),
                Mat("context_vecs[0]", "Z", L(mt.output[0]), "Concat(H¹|H²) W_O + b_O",
                    "\\operatorname{Concat}(H^{(1)} | H^{(2)}) W_O + b_O", tok),
                Mat(f"{book}", "Z_{book}", ex.BOOK_JOURNEY_MULTIHEAD, rows=tok),
            ],
        ),
    ]  # fmt: skip
    data = {
        "tokens": tok,
        "X": L(X),
        "self_attention": {"seed": ex.JOURNEY_SEED_SELF, "W_query": L(s["W_query"]),
                           "W_key": L(s["W_key"]), "W_value": L(s["W_value"]),
                           "A": L(st.A[0]), "context_vec": L(st.output)},
        "causal_attention": {"seed": ex.JOURNEY_SEED_CAUSAL, "A": L(ct.A[0, 0]),
                             "context_vecs_shape": list(ct.output.shape),
                             "context_vec": L(ct.output[0])},
        "multihead_attention": {"seed": ex.JOURNEY_SEED_MULTIHEAD, "heads": ex.JOURNEY_HEADS,
                                "A": [L(mt.A[0, i]) for i in range(ex.JOURNEY_HEADS)],
                                "context_vecs_shape": list(mt.output.shape),
                                "context_vec": L(mt.output[0])},
    }  # fmt: skip
    return Explanation(
        'Trainable weights, causal and multi-head attention: "Your journey starts with one step"',
        "seed 001, code from rasbt's LLMs-from-scratch ch03",
        sections,
        data,
        precision=4,
    )


# --- i-want-pizza (seed 002) -----------------------------------------------------------------


def explain_pizza() -> Explanation:
    """Seed 002: batch 1, seq_len 4, embedding 6, 3 heads; every reshape and transpose."""
    tok = list(ex.PIZZA_TOKENS)
    B, T, d, h = ex.PIZZA_BATCH, ex.PIZZA_SEQ_LEN, ex.PIZZA_D_MODEL, ex.PIZZA_HEADS
    d_k = d // h
    X = t(ex.PIZZA_X).unsqueeze(0)  # (T, d) -> (B=1, T, d)
    eye = torch.eye(d, dtype=DTYPE)
    trace = ref.masked_multihead_attention_fused(X, eye, eye, eye, eye, h=h, causal=False,
                                                 tokens=tok)  # fmt: skip
    Q = ref.project(X, eye)  # (1, 4, 6)
    Q_reshaped = Q.reshape(B, T, h, d_k)  # (1, 4, 6) -> (1, 4, 3, 2)
    Q_swapped = Q_reshaped.transpose(1, 2)  # (1, 4, 3, 2) -> (1, 3, 4, 2)
    H_swapped = trace.H.transpose(1, 2)  # (1, 3, 4, 2) -> (1, 4, 3, 2)
    i = tok.index(ex.DOC_PIZZA_TOKEN)
    heads = [f"head {k + 1}" for k in range(h)]
    sections = [
        Section(
            "Input and weights",
            f"batch_size = {B}, seq_len = {T}, embedding_dim = {d}, heads = {h}. The document "
            "numbers the entries of Q row by row (\"Пиццу\" = [13..18]); to get exactly those "
            "numbers this example takes X with rows 1..6, 7..12, 13..18, 19..24 and "
            "W_q = W_k = W_v = W_o = I_6, so Q = K = V = X. As in the document, no mask.",
            [Mat("X[0]", "X", L(X[0]), rows=tok, cols=_cols("e", d)),
             Shape("X", "token embeddings", (B, T), tuple(X.shape)),
             Shape("Q, K, V", "X W_q, X W_k, X W_v with W (6, 6)", tuple(X.shape), tuple(Q.shape))],
        ),
        Section(
            "Split into heads: reshape, then swap",
            f"head_dim = embedding_dim / heads = {d_k}. Reshape cuts each token's vector into "
            f"{h} pieces of {d_k}; swap moves the head axis before the tokens so every head is a "
            f"({T}, {d_k}) matrix.",
            [Shape("Q", "reshape(B, T, heads, head_dim)", tuple(Q.shape), tuple(Q_reshaped.shape)),
             Mat(f"Q[0, {i}] (\"{tok[i]}\")", "q_{Пиццу}", L(Q[0, i]), rows=[tok[i]]),
             Mat(f"Q reshaped[0, {i}] (\"{tok[i]}\")", "q_{Пиццу}", L(Q_reshaped[0, i]),
                 rows=heads, cols=_cols("d", d_k)),
             Shape("Q", "swap = transpose(1, 2)", tuple(Q_reshaped.shape), tuple(Q_swapped.shape))]
            + [Mat(f"Q[0, head {k + 1}]", f"Q^{{({k + 1})}}", L(Q_swapped[0, k]), rows=tok)
               for k in range(h)],
        ),
        Section(
            "Attention in every head at once",
            "softmax(Q Kᵀ / √head_dim) V per head. These integer embeddings give large scores, "
            "so the weights are almost one-hot: the walkthrough is about shapes.",
            [Shape("Q Kᵀ", "(B, h, T, d_k) @ (B, h, d_k, T)", tuple(trace.Q.shape),
                   tuple(trace.S.shape)),
             Shape("head outputs", "A V", tuple(trace.A.shape), tuple(trace.H.shape))]
            + [Mat(f"A[0, head {k + 1}]", f"A^{{({k + 1})}}", L(trace.A[0, k]), rows=tok, cols=tok)
               for k in range(h)],
        ),
        Section(
            "Concat: the inverse operations",
            "Swap back, then reshape: each token's three head outputs become one vector of 6.",
            [Shape("head outputs", "swap = transpose(1, 2)", tuple(trace.H.shape),
                   tuple(H_swapped.shape)),
             Shape("concat", "reshape(B, T, heads × head_dim)", tuple(H_swapped.shape),
                   tuple(trace.concat.shape)),
             Mat("concat[0]", "\\operatorname{Concat}", L(trace.concat[0]), rows=tok),
             Shape("final output", "concat × W_o, W_o (6, 6)", tuple(trace.concat.shape),
                   tuple(trace.output.shape))],
        ),
    ]  # fmt: skip
    shapes = {
        "X": list(X.shape),
        "Q": list(Q.shape),
        "Q_reshaped": list(Q_reshaped.shape),
        "Q_swapped": list(Q_swapped.shape),
        "head_output": list(trace.H.shape),
        "head_output_swapped": list(H_swapped.shape),
        "concat": list(trace.concat.shape),
        "output": list(trace.output.shape),
    }
    data = {
        "tokens": tok,
        "shapes": shapes,
        "token": tok[i],
        "token_row": Q[0, i].tolist(),
        "token_split": L(Q_reshaped[0, i]),
        "Q_heads": [L(Q_swapped[0, k]) for k in range(h)],
        "A": [L(trace.A[0, k]) for k in range(h)],
        "concat": L(trace.concat[0]),
        "output": L(trace.output[0]),
    }
    return Explanation(
        'Splitting into heads, shape by shape: "Я хочу пиццу <eos>"',
        "seed 002 (Russian): batch 1, seq_len 4, embedding 6, 3 heads",
        sections,
        data,
    )


EXAMPLES: dict[str, Callable[[], Explanation]] = {
    "life-is-awesome": explain_life,
    "hello-shiny-sun": explain_hello,
    "your-journey-starts": explain_journey,
    "i-want-pizza": explain_pizza,
}


def explain_example(name: str) -> Explanation:
    """The explanation of a named example; ``ValueError`` lists the valid names."""
    try:
        build = EXAMPLES[name]
    except KeyError:
        raise ValueError(
            f"unknown example {name!r}; choose one of: {', '.join(ex.EXAMPLE_NAMES)}"
        ) from None
    return build()
