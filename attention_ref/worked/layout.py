r"""The one layout of a worked trace: every step of an attention laid out as sections.

A trace is the one `attention_ref.reference.AttentionTrace`, ``h`` query heads and ``g`` K/V
heads: the homework's (``g = h``, no rotation; its biases and ``b_O`` where it has them), GQA,
MQA, RoPE, sliding windows, ALiBi (they differ by ``g``, ``rope_base`` and the mask ``M``),
or the exercise key's numbers in the same fields (`attention_ref.exercises.numbers`). One
builder per step serves them all, the exercise's key (`attention_ref.exercises.key`) and every
example:

$$
Q^{(i)} = X W_Q^{(i)},\ K^{(j)} = X W_K^{(j)},\ V^{(j)} = X W_V^{(j)},\quad
S^{(i)} = \frac{Q^{(i)} K^{(\gamma(i))\top}}{\sqrt{d_k}},\quad
A^{(i)} = \operatorname{softmax}(S^{(i)} + M),\quad H^{(i)} = A^{(i)} V^{(\gamma(i))}
$$

(with :math:`g = h`, one head's weights and projections after the other). Two sequences of
sections say them: `trace_sections` in the documents' words (`attention_ref.worked.words.TRACE`:
life-is-awesome and ``--input`` files) and `forward_sections` in today's
(`attention_ref.worked.words_grouped.GROUPED`); each example adds its own sections (RoPE's
angles, the window's mask, ALiBi's biases, the cache's sizes). The backward:
`attention_ref.worked.grouped_backward`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

from attention_ref.reference.spec import kv_group
from attention_ref.render import Mat, Section
from attention_ref.worked.trace import L, column_names
from attention_ref.worked.words import TRACE
from attention_ref.worked.words_grouped import GROUPED

if TYPE_CHECKING:  # the layout reads a trace's fields: torch's tensors or numpy's arrays
    from torch import Tensor

    from attention_ref import reference as ref

#: What the layout lays out: ``h`` query heads, ``g`` K/V heads (``g = h`` for the homework's);
#: the exercises' key gives numpy's arrays in the same fields, without the biases.
Laid: TypeAlias = "ref.AttentionTrace"

#: The roles of a head's projections, in the documents' order.
ROLES = ("Q", "K", "V")


def sup(i: int) -> str:
    """The LaTeX superscript of head ``i`` (0-based): ``^{(1)}`` for head 0."""
    return f"^{{({i + 1})}}"


def supT(i: int) -> str:
    """The superscript of head ``i`` transposed: ``^{(1)\\top}`` (one superscript, for TeX)."""
    return f"^{{({i + 1})\\top}}"


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


def input_mats(tr: Laid) -> list[Mat]:
    """X and every weight: with :math:`g = h`, each head's ``W_Q``, ``W_K``, ``W_V`` (then its
    ``b_Q``, ``b_K``, ``b_V``, where the trace has them) one head after the other; with
    :math:`g < h`, the ``h`` query heads' ``W_Q``, then each K/V head's ``W_K``, ``W_V``."""
    tok, W, b = list(tr.tokens), {"Q": tr.W_Q, "K": tr.W_K, "V": tr.W_V}, bias_of(tr)
    items = [Mat(symbol="X", value=L(tr.X), rows=tok, cols=column_names("dim ", tr.X.shape[-1]))]
    if tr.g < tr.h:
        items += [Mat(symbol=f"W_Q{sup(i)}", value=L(W["Q"][i])) for i in range(tr.h)]
        return items + [
            Mat(symbol=f"W_{r}{sup(j)}", value=L(W[r][j])) for j in range(tr.g) for r in "KV"
        ]
    for i in range(tr.h):
        items += [Mat(symbol=f"W_{r}{sup(i)}", value=L(W[r][i])) for r in ROLES]
        items += [Mat(symbol=f"b_{r}{sup(i)}", value=L(b[r][i])) for r in ROLES if r in b]
    return items


def bias_of(tr: Laid) -> dict[str, Tensor]:
    """The biases the trace has, by role: ``Q``, ``K``, ``V`` per head, ``O`` of the output
    projection (the exercises' numbers have none)."""
    if not hasattr(tr, "b_Q"):  # the exercises' numpy numbers
        return {}
    got = {"Q": tr.b_Q, "K": tr.b_K, "V": tr.b_V, "O": tr.b_O}
    return {r: b for r, b in got.items() if b is not None}


def input_section(tr: Laid, *, text: str = "", lang: str = "en") -> Section:
    """`input_mats` under today's words: the shapes and who reads which K/V head."""
    say = GROUPED[lang]
    n, d_model = tr.X.shape
    h, g, d_k, d_v = tr.h, tr.g, tr.d_k, int(tr.V.shape[-1])
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
    return Section(
        title=say["inputs"], text=" ".join(x for x in (shapes, text) if x), items=input_mats(tr)
    )


def projection_mat(tr: Laid, role: str, k: int) -> Mat:
    """``Q⁽ᵏ⁾ = X W_Q⁽ᵏ⁾ (+ b_Q⁽ᵏ⁾)`` (query head ``k``), or ``K``, ``V`` of K/V head ``k``."""
    bias = f" + b_{role}{sup(k)}" if role in bias_of(tr) else ""
    return Mat(
        symbol=f"{role}{sup(k)}",
        value=L(getattr(tr, role)[k]),
        formula=f"X W_{role}{sup(k)}{bias}",
        rows=list(tr.tokens),
    )


def projection_mats(tr: Laid) -> list[Mat]:
    """``Q`` per query head, ``K``, ``V`` per K/V head; with :math:`g = h` head by head."""
    if tr.g == tr.h:
        return [projection_mat(tr, role, i) for i in range(tr.h) for role in ROLES]
    items = [projection_mat(tr, "Q", i) for i in range(tr.h)]
    return items + [projection_mat(tr, role, j) for j in range(tr.g) for role in ("K", "V")]


def projection_section(tr: Laid, lang: str = "en") -> Section:
    """`projection_mats` under today's words."""
    say = GROUPED[lang]
    grouped = tr.g < tr.h
    return Section(
        title=say["projections"],
        text=say["projections_grouped" if grouped else "projections_own"].format(h=tr.h, g=tr.g),
        items=projection_mats(tr),
    )


def score_mats(tr: Laid) -> list[Mat]:
    r"""``Q^{(i)} K^{(\gamma(i))\top}`` (rotated with RoPE) and ``S^{(i)}``, per query head."""
    tok, rope = list(tr.tokens), tr.rope_base is not None
    items: list[Mat] = []
    for i in range(tr.h):
        j = kv_group(i, tr.h, tr.g)
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


def score_section(tr: Laid, lang: str = "en") -> Section:
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
    tr: Laid, *, title: str, text: str, per_head: bool = False, symbol: str = "M"
) -> Section:
    """The mask (one, or one per head: ``symbol⁽ⁱ⁾ + M``) and the masked scores
    ``S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M``."""
    return Section(title=title, text=text, items=mask_mats(tr, per_head=per_head, symbol=symbol))


def mask_mats(tr: Laid, *, per_head: bool = False, symbol: str = "M") -> list[Mat]:
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


def causal_section(tr: Laid, lang: str = "en") -> Section:
    """The causal mask of seed 000."""
    return mask_section(tr, title=GROUPED[lang]["causal"], text=GROUPED[lang]["causal_text"])


def softmax_mats(tr: Laid, scores: str = "\\tilde S") -> list[Mat]:
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


def softmax_section(tr: Laid, lang: str = "en") -> Section:
    """``A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)`` per query head."""
    say = GROUPED[lang]
    return Section(title=say["softmax"], text=say["softmax_text"], items=softmax_mats(tr))


def head_output_mats(tr: Laid) -> list[Mat]:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾`` per query head."""
    tok = list(tr.tokens)
    return [
        Mat(
            symbol=f"H{sup(i)}",
            value=L(tr.H[i]),
            rows=tok,
            formula=f"A{sup(i)} V{sup(kv_group(i, tr.h, tr.g))}",
        )
        for i in range(tr.h)
    ]


def head_output_section(tr: Laid, lang: str = "en") -> Section:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾``."""
    whose = "own" if tr.g == tr.h else "grouped"  # every head its own values: no group to name
    say = GROUPED[lang]
    return Section(
        title=say[f"heads_{whose}"], text=say[f"heads_{whose}_text"], items=head_output_mats(tr)
    )


def concat_mat(tr: Laid) -> Mat:
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


def output_mat(tr: Laid, label: str, symbol: str = "\\operatorname{MultiHead}") -> Mat:
    """The output, ``Concat · W_O (+ b_O)``, or the concat itself without ``W_O``."""
    formula = "\\operatorname{Concat}"
    if tr.W_O is not None:
        formula += " \\cdot W_O"
    if "O" in bias_of(tr):
        formula += " + b_O"
    return Mat(
        symbol=symbol,
        text=label,
        value=L(tr.output),
        formula=formula,
        rows=list(tr.tokens),
        cols=column_names("y", int(tr.output.shape[-1])),
    )


def output_section(tr: Laid, note: str, lang: str = "en") -> Section:
    """Concat of the ``h`` heads and the output projection."""
    say = GROUPED[lang]
    items = [concat_mat(tr)]
    if tr.W_O is not None:
        items += [
            Mat(symbol="W_O", value=L(tr.W_O)),
            output_mat(tr, say["output_label"], "\\operatorname{out}"),
        ]
    return Section(title=say["output"], text=note, items=items)


def forward_sections(
    tr: Laid,
    *,
    input_text: str = "",
    after_projections: Sequence[Section] = (),
    mask: Section | None = None,
    output_note: str = "",
    lang: str = "en",
) -> list[Section]:
    """Every forward step of a single-sequence trace, in order, in today's words
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


def _trace_output_section(tr: ref.AttentionTrace, W_O_note: str, lang: str) -> Section:
    """Concat, then ``W_O`` (and ``b_O``) when there is an output projection; words to match."""
    w = TRACE[lang]
    heads, bias = "Concat(H⁽¹⁾ | … | H⁽ʰ⁾)", "O" in bias_of(tr)
    output = output_mat(tr, w["output_label"])
    if tr.W_O is None:
        text = w["concat_text"].format(h=tr.h, d_v=tr.d_v, d_out=tr.d_out)
        return Section(
            title=w["concat"].format(heads=heads),
            text=W_O_note or text,
            items=[concat_mat(tr), output],
        )
    where = w["to_d_model"] if tr.d_out == tr.d_model else w["to_d_out"].format(d_out=tr.d_out)
    items = [concat_mat(tr), Mat(symbol="W_O", value=L(tr.W_O))]
    if tr.b_O is not None:
        items.append(Mat(symbol="b_O", value=L(tr.b_O)))
    return Section(
        title=w["output"].format(heads=heads, bias=" + b_O" if bias else ""),
        text=W_O_note or w["output_bias" if bias else "output_text"].format(where=where),
        items=[*items, output],
    )


def trace_sections(
    tr: ref.AttentionTrace, *, W_O_note: str = "", lang: str = "en"
) -> list[Section]:
    r"""Every step of seed 000's development for a single-sequence trace, in its order, in the
    documents' words (`TRACE` in ``lang``).

    Per head ``i``: ``Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)}`` (and ``K``, ``V``; the biases only
    where the trace has them), ``S^{(i)} = Q^{(i)} K^{(i)\top} / \sqrt{d_k}``,
    ``\tilde S^{(i)} = S^{(i)} + M``, ``A^{(i)} = \operatorname{softmax}(\tilde S^{(i)})``,
    ``H^{(i)} = A^{(i)} V^{(i)}``; then
    ``\operatorname{MultiHead} = \operatorname{Concat}(H^{(1)} \mid … \mid H^{(h)}) W_O + b_O``,
    or the concat itself when the trace has no ``W_O``.
    """
    w = TRACE[lang]
    n, d_model = tr.X.shape
    biases = [f"b_{r}⁽ⁱ⁾" for r in bias_of(tr) if r != "O"]
    proj_title = ", ".join(
        f"{r}⁽ⁱ⁾ = X W_{r}⁽ⁱ⁾" + (f" + b_{r}⁽ⁱ⁾" if r in bias_of(tr) else "") for r in ROLES
    )
    shapes = w["shapes"].format(n=n, d_model=d_model, h=tr.h, d_k=tr.d_k, d_v=tr.d_v)
    if tr.d_out != d_model:
        shapes += w["d_out"].format(d_out=tr.d_out)
    if tr.M is not None:
        mask = Section(title=w["mask"], text=w["mask_text"], items=mask_mats(tr))
    else:
        mask = Section(title=w["no_mask"], text=w["no_mask_text"])
    return [
        Section(
            title=w["inputs"],
            text=w["inputs_text"].format(shapes=shapes),
            items=input_mats(tr),
        ),
        Section(
            title=w["projections"].format(formulas=proj_title),
            text=w["proj_bias" if biases else "proj_text"].format(biases=", ".join(biases)),
            items=projection_mats(tr),
        ),
        Section(
            title=w["scores"].format(d_k=tr.d_k),
            text=w["scores_text"].format(d_k=tr.d_k),
            items=score_mats(tr),
        ),
        mask,
        Section(title=w["softmax"], text=w["softmax_text"], items=softmax_mats(tr)),
        Section(title=w["heads"], text=w["heads_text"], items=head_output_mats(tr)),
        _trace_output_section(tr, W_O_note, lang),
    ]
