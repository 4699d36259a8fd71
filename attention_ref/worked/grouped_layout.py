r"""Shared by the examples of today's attention: a `GQATrace` laid out step by step and as
JSON (the backward: `attention_ref.worked.grouped_backward`).

`attention_ref.reference.gqa.grouped_query_attention` is the reference of every variant here
(GQA, MQA, RoPE, sliding windows, ALiBi: they differ by ``g``, ``rope_base`` and the mask
``M``), so one layout serves the examples ``gqa``, ``rope``, ``sliding-window`` and ``alibi``:

$$
Q^{(i)} = X W_Q^{(i)},\ K^{(j)} = X W_K^{(j)},\ V^{(j)} = X W_V^{(j)},\quad
S^{(i)} = \frac{Q^{(i)} K^{(\gamma(i))\top}}{\sqrt{d_k}},\quad
A^{(i)} = \operatorname{softmax}(S^{(i)} + M),\quad H^{(i)} = A^{(i)} V^{(\gamma(i))}
$$

Each example adds its own sections (RoPE's angles, the window's mask, ALiBi's biases, the
cache's sizes).
"""

from __future__ import annotations

from collections.abc import Sequence

from attention_ref.reference import gqa as ref_gqa
from attention_ref.render import JSONValue, Mat, Section
from attention_ref.worked.trace import L, column_names
from attention_ref.worked.words_grouped import GROUPED


def sup(i: int) -> str:
    """The LaTeX superscript of head ``i`` (0-based): ``^{(1)}`` for head 0."""
    return f"^{{({i + 1})}}"


def supT(i: int) -> str:
    """The superscript of head ``i`` transposed: ``^{(1)\\top}`` (one superscript, for TeX)."""
    return f"^{{({i + 1})\\top}}"


def counted(n: int, noun: str) -> str:
    """``1 query weight``, ``2 query weights``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def groups_text(h: int, g: int, lang: str = "en") -> str:
    """Which query heads read which K/V head, in words (1-based, as the sections print)."""
    say = GROUPED[lang]
    r = h // g
    if g == h == 1:
        return say["groups_one"]
    if g == h:
        return say["groups_own"]
    parts = []
    for j in range(g):
        heads = ", ".join(str(i + 1) for i in range(j * r, (j + 1) * r))
        parts.append(say["group"].format(heads=heads, j=j + 1))
    return "; ".join(parts)


def share(role: str, j: int, i: int, rope: bool) -> str:
    """Query head ``i``'s share of K/V head ``j``'s gradient: ``K_{[i]}^{(j)}`` (0-based in,
    1-based out), ``K_{\\text{rot},[i]}^{(j)}`` for rotated keys: one subscript, for TeX."""
    sub = f"\\text{{rot}},[{i + 1}]" if rope else f"[{i + 1}]"
    return f"{role}_{{{sub}}}{sup(j)}"


def rotated_symbol(symbol: str, rope: bool) -> str:
    """``Q^{(1)}`` or, with RoPE, its rotated ``Q_{\\text{rot}}^{(1)}``."""
    if not rope:
        return symbol
    name, _, rest = symbol.partition("^")
    return f"{name}_{{\\text{{rot}}}}" + (f"^{rest}" if rest else "")


def input_section(tr: ref_gqa.GQATrace, *, text: str = "", lang: str = "en") -> Section:
    """X and every weight: ``h`` query heads' ``W_Q``, ``g`` K/V heads' ``W_K``, ``W_V``."""
    say = GROUPED[lang]
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
    shapes = say["shapes"].format(
        n=n,
        d_model=d_model,
        h=h,
        hs="s" * (h > 1),
        g=g,
        gs="s" * (g > 1),
        d_k=d_k,
        d_v=d_v,
        groups=groups_text(h, g, lang),
    )
    return Section(title=say["inputs"], text=" ".join(x for x in (shapes, text) if x), items=items)


def projection_mat(tr: ref_gqa.GQATrace, role: str, k: int) -> Mat:
    """``Q⁽ᵏ⁾ = X W_Q⁽ᵏ⁾`` (query head ``k``), or ``K``, ``V`` of K/V head ``k``."""
    return Mat(
        symbol=f"{role}{sup(k)}",
        value=L(getattr(tr, role)[k]),
        formula=f"X W_{role}{sup(k)}",
        rows=list(tr.tokens),
    )


def projection_section(tr: ref_gqa.GQATrace, lang: str = "en") -> Section:
    """``Q`` per query head, ``K``, ``V`` per K/V head."""
    say = GROUPED[lang]
    items = [projection_mat(tr, "Q", i) for i in range(tr.h)]
    items += [projection_mat(tr, role, j) for j in range(tr.g) for role in ("K", "V")]
    grouped = tr.g < tr.h
    return Section(
        title=say["projections"],
        text=say["projections_grouped" if grouped else "projections_own"].format(h=tr.h, g=tr.g),
        items=items,
    )


def score_mats(tr: ref_gqa.GQATrace) -> list[Mat]:
    r"""``Q^{(i)} K^{(\gamma(i))\top}`` (rotated with RoPE) and ``S^{(i)}``, per query head."""
    tok, rope = list(tr.tokens), tr.rope_base is not None
    items: list[Mat] = []
    for i in range(tr.h):
        j = ref_gqa.kv_group(i, tr.h, tr.g)
        key = rotated_symbol(f"K^{{({j + 1})", rope) + "\\top}"  # K^{(j)\top}, rotated with RoPE
        QKt = f"{rotated_symbol(f'Q{sup(i)}', rope)} {key}"
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
    return items


def score_section(tr: ref_gqa.GQATrace, lang: str = "en") -> Section:
    """Each query head's scores against its group's keys (rotated ones with RoPE)."""
    say = GROUPED[lang]
    rope = "_rope" if tr.rope_base is not None else ""
    if tr.g == tr.h:  # every head its own keys: no group to name
        title = say["scores_own"].format(d_k=tr.d_k)
        text = say[f"own{rope}_{'many' if tr.h > 1 else 'one'}"]
    else:
        title = say["scores_grouped"].format(d_k=tr.d_k)
        text = say[f"grouped{rope}"]
    entry = say["entry"].format(d_k=tr.d_k)
    return Section(title=title, text=text + entry, items=score_mats(tr))


def mask_section(
    tr: ref_gqa.GQATrace, *, title: str, text: str, per_head: bool = False, symbol: str = "M"
) -> Section:
    """The mask (one, or one per head: ``symbol⁽ⁱ⁾ + M``) and the masked scores
    ``S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M``."""
    return Section(title=title, text=text, items=mask_mats(tr, per_head=per_head, symbol=symbol))


def mask_mats(tr: ref_gqa.GQATrace, *, per_head: bool = False, symbol: str = "M") -> list[Mat]:
    """`mask_section`'s matrices: the mask, then ``S̃⁽ⁱ⁾`` per query head."""
    tok = list(tr.tokens)
    assert tr.M is not None
    if per_head:
        added = [f"{symbol}{sup(i)} + M" if symbol != "M" else f"M{sup(i)}" for i in range(tr.h)]
        masks = [Mat(symbol=added[i], value=L(tr.M[i]), rows=tok, cols=tok) for i in range(tr.h)]
    else:
        added = [symbol] * tr.h
        masks = [Mat(symbol=symbol, value=L(tr.M), rows=tok, cols=tok)]
    masked = [
        Mat(
            symbol=f"\\tilde S{sup(i)}",
            value=L(tr.S_masked[i]),
            rows=tok,
            cols=tok,
            formula=f"S{sup(i)} + {added[i]}",
        )
        for i in range(tr.h)
    ]
    return [*masks, *masked]


def causal_section(tr: ref_gqa.GQATrace, lang: str = "en") -> Section:
    """The causal mask of seed 000."""
    return mask_section(tr, title=GROUPED[lang]["causal"], text=GROUPED[lang]["causal_text"])


def softmax_mats(tr: ref_gqa.GQATrace, scores: str = "\\tilde S") -> list[Mat]:
    """``A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)`` per query head (``scores``: ``S`` where nothing is masked)."""
    tok = list(tr.tokens)
    return [
        Mat(
            symbol=f"A{sup(i)}",
            value=L(tr.A[i]),
            rows=tok,
            cols=tok,
            formula=f"\\operatorname{{softmax}}({scores}{sup(i)})",
        )
        for i in range(tr.h)
    ]


def softmax_section(tr: ref_gqa.GQATrace, lang: str = "en") -> Section:
    """``A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)`` per query head."""
    say = GROUPED[lang]
    return Section(title=say["softmax"], text=say["softmax_text"], items=softmax_mats(tr))


def head_output_mats(tr: ref_gqa.GQATrace) -> list[Mat]:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾`` per query head."""
    tok = list(tr.tokens)
    return [
        Mat(
            symbol=f"H{sup(i)}",
            value=L(tr.H[i]),
            rows=tok,
            formula=f"A{sup(i)} V{sup(ref_gqa.kv_group(i, tr.h, tr.g))}",
        )
        for i in range(tr.h)
    ]


def head_output_section(tr: ref_gqa.GQATrace, lang: str = "en") -> Section:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾``."""
    whose = "own" if tr.g == tr.h else "grouped"  # every head its own values: no group to name
    say = GROUPED[lang]
    return Section(
        title=say[f"heads_{whose}"], text=say[f"heads_{whose}_text"], items=head_output_mats(tr)
    )


def concat_mat(tr: ref_gqa.GQATrace) -> Mat:
    """``Concat = [H⁽¹⁾ | … | H⁽ʰ⁾]``."""
    tok = list(tr.tokens)
    return Mat(
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


def output_section(tr: ref_gqa.GQATrace, note: str, lang: str = "en") -> Section:
    """Concat of the ``h`` heads and the output projection."""
    tok = list(tr.tokens)
    items = [concat_mat(tr)]
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
    return Section(title=GROUPED[lang]["output"], text=note, items=items)


def forward_sections(
    tr: ref_gqa.GQATrace,
    *,
    input_text: str = "",
    after_projections: Sequence[Section] = (),
    mask: Section | None = None,
    output_note: str = "",
    lang: str = "en",
) -> list[Section]:
    """Every forward step of a single-sequence `GQATrace`, in order, in ``lang``'s words
    (`attention_ref.worked.words_grouped.GROUPED`); ``mask`` replaces the causal-mask step (a
    window, ALiBi), ``after_projections`` come before the scores (RoPE)."""
    if tr.X.dim() != 2:
        raise ValueError(f"a worked example is one sequence, got X {tuple(tr.X.shape)}")
    return [
        input_section(tr, text=input_text, lang=lang),
        projection_section(tr, lang),
        *after_projections,
        score_section(tr, lang),
        mask if mask is not None else causal_section(tr, lang),
        softmax_section(tr, lang),
        head_output_section(tr, lang),
        output_section(tr, output_note, lang),
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
