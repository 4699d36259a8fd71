r"""Shared by the examples of today's attention: a `GQATrace` laid out step by step, forwards
and backwards, and as JSON.

`attention_ref.reference.gqa.grouped_query_attention` is the reference of every variant here
(GQA, MQA, RoPE, sliding windows, ALiBi: they differ by ``g``, ``rope_base`` and the mask
``M``), so one layout serves the examples ``gqa``, ``rope``, ``sliding-window`` and ``alibi``:

$$
Q^{(i)} = X W_Q^{(i)},\ K^{(j)} = X W_K^{(j)},\ V^{(j)} = X W_V^{(j)},\quad
S^{(i)} = \frac{Q^{(i)} K^{(\gamma(i))\top}}{\sqrt{d_k}},\quad
A^{(i)} = \operatorname{softmax}(S^{(i)} + M),\quad H^{(i)} = A^{(i)} V^{(\gamma(i))}
$$

and the backward of `attention_ref.reference.gqa.gqa_backward`. Each example adds its own
sections (RoPE's angles, the window's mask, ALiBi's biases, the cache's sizes).

The backward's JSON has the layout of the other examples' (``"output"``, ``"W_O"``,
``"concat"``, ``"X"``, and per query head ``"H"``, ``"A"``, ``"S_masked"``, ``"S"``, ``"Q"``,
``"K"``, ``"V"``, ``"W_Q"``, ``"W_K"``, ``"W_V"``), where a query head's ``"K"``, ``"V"``,
``"W_K"``, ``"W_V"`` are the part of its K/V head's gradient that comes through it; the sums
over each group are under ``"kv_heads"``.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor

from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked.gradients import DEFAULT_G, NOTATION, check_grad_output, grad_mat
from attention_ref.worked.trace import L, column_names


def sup(i: int) -> str:
    """The LaTeX superscript of head ``i`` (0-based): ``^{(1)}`` for head 0."""
    return f"^{{({i + 1})}}"


def supT(i: int) -> str:
    """The superscript of head ``i`` transposed: ``^{(1)\\top}`` (one superscript, for TeX)."""
    return f"^{{({i + 1})\\top}}"


def _count(n: int, noun: str) -> str:
    """``1 query weight``, ``2 query weights``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def groups_text(h: int, g: int) -> str:
    """Which query heads read which K/V head, in words (1-based, as the sections print)."""
    r = h // g
    if g == h == 1:
        return "one head, with its own keys and values (h = g = 1)"
    if g == h:
        return "each query head has its own K/V head (g = h: multi-head attention)"
    parts = []
    for j in range(g):
        heads = ", ".join(str(i + 1) for i in range(j * r, (j + 1) * r))
        parts.append(f"query heads {heads} read K/V head {j + 1}")
    return "; ".join(parts)


def share(role: str, j: int, i: int, rope: bool) -> str:
    """Query head ``i``'s share of K/V head ``j``'s gradient: ``K_{[i]}^{(j)}`` (0-based in,
    1-based out), ``K_{\\text{rot},[i]}^{(j)}`` for rotated keys: one subscript, for TeX."""
    sub = f"\\text{{rot}},[{i + 1}]" if rope else f"[{i + 1}]"
    return f"{role}_{{{sub}}}{sup(j)}"


def _rot(symbol: str, rope: bool) -> str:
    """``Q^{(1)}`` or, with RoPE, its rotated ``Q_{\\text{rot}}^{(1)}``."""
    if not rope:
        return symbol
    name, _, rest = symbol.partition("^")
    return f"{name}_{{\\text{{rot}}}}" + (f"^{rest}" if rest else "")


def input_section(tr: ref_gqa.GQATrace, *, text: str = "") -> Section:
    """X and every weight: ``h`` query heads' ``W_Q``, ``g`` K/V heads' ``W_K``, ``W_V``."""
    tok = list(tr.tokens)
    n, d_model = tr.X.shape
    h, g, d_k, d_v = tr.h, tr.g, tr.d_k, int(tr.V.shape[-1])
    items: list[Mat] = [
        Mat(symbol="X", value=L(tr.X), rows=tok, cols=column_names("dim ", d_model))
    ]
    items += [Mat(symbol=f"W_Q{sup(i)}", value=L(tr.W_Q[i])) for i in range(h)]
    for j in range(g):
        items += [
            Mat(symbol=f"W_K{sup(j)}", value=L(tr.W_K[j])),
            Mat(symbol=f"W_V{sup(j)}", value=L(tr.W_V[j])),
        ]
    shapes = (
        f"n = {n} tokens, d_model = {d_model}, h = {h} query head{'s' * (h > 1)}, g = {g} K/V "
        f"head{'s' * (g > 1)}, "
        f"d_k = {d_k}, d_v = {d_v}: {groups_text(h, g)}."
    )
    return Section(
        title="Inputs: X, the query heads' W_Q and the K/V heads' W_K, W_V",
        text=" ".join(x for x in (shapes, text) if x),
        items=items,
    )


def projection_section(tr: ref_gqa.GQATrace) -> Section:
    """``Q`` per query head, ``K``, ``V`` per K/V head."""
    tok = list(tr.tokens)
    items = [
        Mat(symbol=f"Q{sup(i)}", value=L(tr.Q[i]), formula=f"X W_Q{sup(i)}", rows=tok)
        for i in range(tr.h)
    ]
    for j in range(tr.g):
        items += [
            Mat(symbol=f"K{sup(j)}", value=L(tr.K[j]), formula=f"X W_K{sup(j)}", rows=tok),
            Mat(symbol=f"V{sup(j)}", value=L(tr.V[j]), formula=f"X W_V{sup(j)}", rows=tok),
        ]
    return Section(
        title="Projections: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ for the h query heads, K⁽ʲ⁾ = X W_K⁽ʲ⁾ and "
        "V⁽ʲ⁾ = X W_V⁽ʲ⁾ for the g K/V heads",
        text=(
            f"{tr.h} queries per token but only {tr.g} keys and {tr.g} values: the K/V "
            "projections are computed once per group, not once per query head."
            if tr.g < tr.h
            else "Every query head has its own key and value head here (g = h)."
        ),
        items=items,
    )


def score_section(tr: ref_gqa.GQATrace) -> Section:
    """Each query head's scores against its group's keys (rotated ones with RoPE)."""
    tok, rope = list(tr.tokens), tr.rope_base is not None
    items: list[Mat] = []
    for i in range(tr.h):
        j = ref_gqa.kv_group(i, tr.h, tr.g)
        key = _rot(f"K^{{({j + 1})", rope) + "\\top}"  # K^{(j)\top}, rotated with RoPE
        QKt = f"{_rot(f'Q{sup(i)}', rope)} {key}"
        items += [
            Mat(symbol=QKt, value=L(tr.QKt[i]), rows=tok, cols=tok),
            Mat(
                symbol=f"S{sup(i)}",
                value=L(tr.S[i]),
                rows=tok,
                cols=tok,
                formula=f"\\frac{{{QKt}}}{{\\sqrt{{{tr.d_k}}}}}",
            ),
        ]
    which = "the rotated queries and keys" if rope else "its query and the keys of its group"
    if tr.g == tr.h:  # every head its own keys: no group to name
        title = f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, d_k = {tr.d_k}"
        whose = "its own keys" if tr.h > 1 else "the keys"
        text = (f"Each head scores {'the rotated queries against ' if rope else ''}{whose}. "
                f"Entry (t, u) is the match of token t's query with token u's key, divided by "
                f"√{tr.d_k}.")  # fmt: skip
    else:
        title = f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k with j = γ(i), d_k = {tr.d_k}"
        text = (f"Query head i scores {which}: K/V head γ(i). Entry (t, u) is the match of "
                f"token t's query with token u's key, divided by √{tr.d_k}.")  # fmt: skip
    return Section(
        title=title,
        text=text,
        items=items,
    )


def mask_section(
    tr: ref_gqa.GQATrace, *, title: str, text: str, per_head: bool = False, symbol: str = "M"
) -> Section:
    """The mask (one, or one per head: ``symbol⁽ⁱ⁾ + M``) and the masked scores
    ``S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M``."""
    tok = list(tr.tokens)
    assert tr.M is not None
    if per_head:
        added = [f"{symbol}{sup(i)} + M" if symbol != "M" else f"M{sup(i)}" for i in range(tr.h)]
        masks = [Mat(symbol=added[i], value=L(tr.M[i]), rows=tok, cols=tok) for i in range(tr.h)]
    else:
        added = [symbol] * tr.h
        masks = [Mat(symbol=symbol, value=L(tr.M), rows=tok, cols=tok)]
    masked = [
        Mat(symbol=f"\\tilde S{sup(i)}", value=L(tr.S_masked[i]), rows=tok, cols=tok,
            formula=f"S{sup(i)} + {added[i]}")
        for i in range(tr.h)
    ]  # fmt: skip
    return Section(title=title, text=text, items=[*masks, *masked])


def causal_section(tr: ref_gqa.GQATrace) -> Section:
    """The causal mask of seed 000."""
    return mask_section(
        tr,
        title="Causal mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
        text="M is 0 on and below the diagonal and −∞ above: a token sees itself and the "
        "tokens before it.",
    )


def softmax_section(tr: ref_gqa.GQATrace) -> Section:
    """``A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)`` per query head."""
    tok = list(tr.tokens)
    items = [
        Mat(
            symbol=f"A{sup(i)}",
            value=L(tr.A[i]),
            rows=tok,
            cols=tok,
            formula=f"\\operatorname{{softmax}}(\\tilde S{sup(i)})",
        )
        for i in range(tr.h)
    ]
    return Section(
        title="Softmax, row by row: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        text="Each row is a probability distribution over the keys it may see.",
        items=items,
    )


def head_output_section(tr: ref_gqa.GQATrace) -> Section:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾``."""
    tok = list(tr.tokens)
    items = [
        Mat(
            symbol=f"H{sup(i)}",
            value=L(tr.H[i]),
            rows=tok,
            formula=f"A{sup(i)} V{sup(ref_gqa.kv_group(i, tr.h, tr.g))}",
        )
        for i in range(tr.h)
    ]
    own = tr.g == tr.h  # every head its own values: no group to name
    return Section(
        title="Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾"
        if own
        else "Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ with j = γ(i)",
        text="Row t is a weighted average of the value rows of "
        + ("the head's own values." if own else "the head's group."),
        items=items,
    )


def output_section(tr: ref_gqa.GQATrace, note: str) -> Section:
    """Concat of the ``h`` heads and the output projection."""
    tok = list(tr.tokens)
    concat = Mat(
        symbol="\\operatorname{Concat}",
        value=L(tr.concat),
        rows=tok,
        # more than two heads: the first and the last, so the display fits a phone's width
        formula="["
        + (
            " \\mid ".join(f"H{sup(i)}" for i in range(tr.h))
            if tr.h <= 2
            else f"H{sup(0)} \\mid \\dots \\mid H{sup(tr.h - 1)}"
        )
        + "]",
        formula_text=None if tr.h <= 2 else f"[H^(1) | … | H^({tr.h})]",
    )
    items = [concat]
    if tr.W_O is not None:
        items += [
            Mat(symbol="W_O", value=L(tr.W_O)),
            Mat(
                symbol="\\operatorname{out}",
                text="Output",
                value=L(tr.output),
                rows=tok,
                formula="\\operatorname{Concat} \\cdot W_O",
                cols=column_names("y", int(tr.output.shape[-1])),
            ),
        ]
    return Section(
        title="Concat and output projection: output = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O",
        text=note,
        items=items,
    )


def forward_sections(
    tr: ref_gqa.GQATrace,
    *,
    input_text: str = "",
    after_projections: Sequence[Section] = (),
    mask: Section | None = None,
    output_note: str = "",
) -> list[Section]:
    """Every forward step of a single-sequence `GQATrace`, in order; ``mask`` replaces the
    causal-mask step (a window, ALiBi), ``after_projections`` come before the scores (RoPE)."""
    if tr.X.dim() != 2:
        raise ValueError(f"a worked example is one sequence, got X {tuple(tr.X.shape)}")
    return [
        input_section(tr, text=input_text),
        projection_section(tr),
        *after_projections,
        score_section(tr),
        mask if mask is not None else causal_section(tr),
        softmax_section(tr),
        head_output_section(tr),
        output_section(tr, output_note),
    ]


def trace_json(tr: ref_gqa.GQATrace) -> dict[str, JSONValue]:
    """The forward's numbers: ``{"tokens", "h", "g", "groups", "X", "M", "heads": [{"Q", "K",
    "V", "scores", "S", "S_masked", "A", "H", "kv_head"}], "kv_heads": [{"K", "V"}], "concat",
    "W_O", "output"}``; with RoPE ``"rope": {"base", "positions"}`` and per head ``"Q_rot"``,
    per K/V head ``"K_rot"``. ``"kv_head"`` and ``"groups"`` are 1-based; ``"M"`` is one
    matrix or one per query head (ALiBi), ``null`` without a mask."""
    rope = tr.rope_base is not None
    heads: list[JSONValue] = []
    for i in range(tr.h):
        j = ref_gqa.kv_group(i, tr.h, tr.g)
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
        M = [L(m) for m in tr.M] if tr.M.dim() == 3 else L(tr.M)
    out: dict[str, JSONValue] = {
        "tokens": list(tr.tokens),
        "h": tr.h,
        "g": tr.g,
        "d_k": tr.d_k,
        "groups": [ref_gqa.kv_group(i, tr.h, tr.g) + 1 for i in range(tr.h)],
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


# --- the backward -------------------------------------------------------------------------------


def _through(tr: ref_gqa.GQATrace, dK_rep_i: Tensor) -> Tensor:
    """One query head's share of its K/V head's key gradient, before RoPE (undone)."""
    if tr.rope_base is None:
        return dK_rep_i
    return ref_rope.rope_backward(dK_rep_i, tr.positions, tr.rope_base)


def backward_sections(
    tr: ref_gqa.GQATrace, gr: ref_gqa.GQAGradientTrace, *, G_note: str
) -> list[Section]:
    """The chain rule of `gqa_backward`, one section per step."""
    tok, h, g, d_k = list(tr.tokens), tr.h, tr.g, tr.d_k
    rope = tr.rope_base is not None
    groups = [ref_gqa.kv_group(i, h, g) for i in range(h)]
    out_cols = column_names("y", int(tr.output.shape[-1]))
    sections = [
        Section(
            title="Backward pass: the upstream gradient G = ∂L/∂output",
            text=f"{G_note} {NOTATION}",
            items=[
                Mat(
                    symbol="G",
                    value=L(gr.output),
                    rows=tok,
                    cols=out_cols,
                    formula="\\partial L / \\partial \\operatorname{out}",
                    formula_text="∂L/∂output",
                )
            ],
        ),
    ]
    proj = [grad_mat("\\operatorname{Concat}", gr.concat, "G W_O^\\top", rows=tok)]
    if gr.W_O is not None:
        proj.insert(0, grad_mat("W_O", gr.W_O, "\\operatorname{Concat}^\\top G"))
    sections.append(
        Section(
            title="Output projection: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
            text="A matrix product's gradient is a product with the other factor transposed.",
            items=proj,
        )
    )
    items: list[Mat] = []
    for i in range(h):
        s, j = sup(i), sup(groups[i])
        items += [
            grad_mat(f"H{s}", gr.H[i], rows=tok),
            grad_mat(f"A{s}", gr.A[i], f"\\partial H{s} V{supT(groups[i])}", rows=tok, cols=tok),
            grad_mat(
                f"\\tilde S{s}",
                gr.S_masked[i],
                f"A{s} \\odot (\\partial A{s} - "
                f"\\operatorname{{rowsum}}(\\partial A{s} \\odot A{s}))",
                rows=tok,
                cols=tok,
            ),
        ]
    sections.append(
        Section(
            title="Through each query head: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ʲ⁾ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − "
            "rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))",
            text="The same steps as in multi-head attention, once per query head; masked entries "
            "have A = 0, so their gradient is exactly 0.",
            items=items,
        )
    )
    items = []
    for i in range(h):
        s, j = sup(i), sup(groups[i])
        Qr, Kr = _rot(f"Q{s}", rope), _rot(f"K{j}", rope)
        items += [
            grad_mat(
                Qr, gr.Q_rot[i], f"\\frac{{\\partial S{s} {Kr}}}{{\\sqrt{{{d_k}}}}}", rows=tok
            ),
            grad_mat(
                share("K", groups[i], i, rope),
                gr.K_rep[i],
                f"\\frac{{\\partial S{supT(i)} {Qr}}}{{\\sqrt{{{d_k}}}}}",
                rows=tok,
            ),
            grad_mat(
                share("V", groups[i], i, False), gr.V_rep[i], f"A{supT(i)} \\partial H{s}", rows=tok
            ),
        ]
    sections.append(
        Section(
            title="Queries, and each query head's share of its keys and values",
            text="Subscript [i] marks what query head i sends back to the K/V head it reads: "
            "∂K⁽ʲ⁾[i] = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k and ∂V⁽ʲ⁾[i] = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾.",
            items=items,
        )
    )
    members = {j: [i for i in range(h) if groups[i] == j] for j in range(g)}
    items = []
    for j in range(g):
        Kr = _rot(f"K{sup(j)}", rope)
        k_sum = " + ".join(f"\\partial {share('K', j, i, rope)}" for i in members[j])
        v_sum = " + ".join(f"\\partial {share('V', j, i, False)}" for i in members[j])
        items += [
            grad_mat(Kr, gr.K_rot[j], k_sum, rows=tok),
            grad_mat(f"V{sup(j)}", gr.V[j], v_sum, rows=tok),
        ]
    sections.append(
        Section(
            title="The K/V heads collect their group: ∂K⁽ʲ⁾ = Σ over i with γ(i) = j of ∂K⁽ʲ⁾[i]",
            text="The backward of repeating a K/V head for r = h/g query heads is the sum of their "
            "gradients (sum_kv_groups). "
            + (
                "With g = h every group has one head: nothing is added."
                if g == h
                else f"Here each K/V head serves {h // g} query heads."
            ),
            items=items,
        )
    )
    if rope:
        items = [
            grad_mat(f"Q{sup(i)}", gr.Q[i], f"\\partial Q_{{\\text{{rot}}}}{sup(i)} R", rows=tok)
            for i in range(h)
        ]
        items += [
            grad_mat(f"K{sup(j)}", gr.K[j], f"\\partial K_{{\\text{{rot}}}}{sup(j)} R", rows=tok)
            for j in range(g)
        ]
        sections.append(
            Section(
                title="Through RoPE: the rotation's transpose, ∂Q = ∂Q_rot R, ∂K = ∂K_rot R",
                text="Row m was rotated by x R_mᵀ; its gradient is rotated back by R_m, the "
                "rotation by −m θ_i (rope_backward).",
                items=items,
            )
        )
    items = [grad_mat(f"W_Q{sup(i)}", gr.W_Q[i], f"X^\\top \\partial Q{sup(i)}") for i in range(h)]
    items += [
        m
        for j in range(g)
        for m in (
            grad_mat(f"W_K{sup(j)}", gr.W_K[j], f"X^\\top \\partial K{sup(j)}"),
            grad_mat(f"W_V{sup(j)}", gr.W_V[j], f"X^\\top \\partial V{sup(j)}"),
        )
    ]
    items.append(
        grad_mat(
            "X",
            gr.X,
            "\\sum_i \\partial Q^{(i)} W_Q^{(i)\\top} + \\sum_j "
            "(\\partial K^{(j)} W_K^{(j)\\top} + \\partial V^{(j)} W_V^{(j)\\top})",
            rows=tok,
            cols=column_names("dim ", int(tr.X.shape[-1])),
        )
    )
    sections.append(
        Section(
            title="Weights and input: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾, "
            "∂W_V⁽ʲ⁾ = Xᵀ ∂V⁽ʲ⁾, ∂X",
            text=f"{_count(h, 'query weight')}, {_count(g, 'key weight')} and "
            f"{_count(g, 'value weight')}; X collects every path.",
            items=items,
        )
    )
    return sections


def grads_json(tr: ref_gqa.GQATrace, gr: ref_gqa.GQAGradientTrace) -> dict[str, JSONValue]:
    """The backward's numbers in the other examples' layout, plus ``"kv_heads"`` (module
    docstring): a query head's ``K`` is its share of its K/V head's ``∂K`` (RoPE undone)."""
    heads: list[JSONValue] = []
    for i in range(tr.h):
        dK_i = _through(tr, gr.K_rep[i])
        heads.append(
            {
                "H": L(gr.H[i]),
                "A": L(gr.A[i]),
                "S_masked": L(gr.S_masked[i]),
                "S": L(gr.S[i]),
                "Q": L(gr.Q[i]),
                "K": L(dK_i),
                "V": L(gr.V_rep[i]),
                "W_Q": L(gr.W_Q[i]),
                "W_K": L(tr.X.T @ dK_i),
                "W_V": L(tr.X.T @ gr.V_rep[i]),
            }
        )
    kv_heads: list[JSONValue] = [
        {"K": L(gr.K[j]), "V": L(gr.V[j]), "W_K": L(gr.W_K[j]), "W_V": L(gr.W_V[j])}
        for j in range(tr.g)
    ]
    return {
        "output": L(gr.output),
        "W_O": L(gr.W_O) if gr.W_O is not None else None,
        "concat": L(gr.concat),
        "X": L(gr.X),
        "heads": heads,
        "kv_heads": kv_heads,
    }


def with_gqa_backward(forward: Explanation, tr: ref_gqa.GQATrace, G: Matrix | None) -> Explanation:
    """The forward's explanation followed by its backward (``G`` ``None``: all ones)."""
    gr = ref_gqa.gqa_backward(tr, check_grad_output(G, tr.output))
    note = DEFAULT_G if G is None else "G is the matrix of --grad-output."
    return Explanation(
        title=forward.title + ", with its backward pass",
        source=forward.source,
        sections=[*forward.sections, *backward_sections(tr, gr, G_note=note)],
        data={
            **forward.data,
            "loss": "sum" if G is None else "grad-output",
            "grads": grads_json(tr, gr),
        },
        precision=forward.precision,
    )
