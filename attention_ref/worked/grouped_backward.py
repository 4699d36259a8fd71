r"""The backward of a trace with K/V heads laid out step by step
(`attention_ref.reference.attention_backward`), for the examples of today's attention (their
forward: `attention_ref.worked.layout`).

The backward's JSON has the layout of the other examples' (``"output"``, ``"W_O"``,
``"concat"``, ``"X"``, and per query head ``"H"``, ``"A"``, ``"S_masked"``, ``"S"``, ``"Q"``,
``"K"``, ``"V"``, ``"W_Q"``, ``"W_K"``, ``"W_V"``), where a query head's ``"K"``, ``"V"``,
``"W_K"``, ``"W_V"`` are the part of its K/V head's gradient that comes through it; the sums
over each group are under ``"kv_heads"``.
"""

from __future__ import annotations

from torch import Tensor

from attention_ref import reference as ref
from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked.gradients import check_grad_output, grad_mat
from attention_ref.worked.layout import rotated_symbol, share, sup, supT
from attention_ref.worked.trace import L, column_names, grads_layout
from attention_ref.worked.words import GRADIENTS
from attention_ref.worked.words_grouped import GROUPED_BACKWARD

# --- the backward -------------------------------------------------------------------------------


def _through(tr: ref.AttentionTrace, dK_rep_i: Tensor) -> Tensor:
    """One query head's share of its K/V head's key gradient, before RoPE (undone)."""
    if tr.rope_base is None:
        return dK_rep_i
    return ref_rope.rope_backward(dK_rep_i, tr.positions, tr.rope_base)


def backward_sections(
    tr: ref.AttentionTrace, gr: ref.GradientTrace, *, G_note: str, lang: str = "en"
) -> list[Section]:
    """The chain rule of `attention_backward`, one section per step, in ``lang``'s words
    (`attention_ref.worked.words_grouped.GROUPED_BACKWARD`)."""
    say, notation = GROUPED_BACKWARD[lang], GRADIENTS[lang]["notation"]
    tok, h, g, d_k = list(tr.tokens), tr.h, tr.g, tr.d_k
    rope = tr.rope_base is not None
    groups = [ref_gqa.kv_group(i, h, g) for i in range(h)]
    out_cols = column_names("y", int(tr.output.shape[-1]))
    sections = [
        Section(
            title=say["upstream"],
            text=f"{G_note} {notation}",
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
            title=say["projection"],
            text=say["projection_text"],
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
            title=say["heads"],
            text=say["heads_text"],
            items=items,
        )
    )
    items = []
    for i in range(h):
        s, j = sup(i), sup(groups[i])
        Qr, Kr = rotated_symbol(f"Q{s}", rope), rotated_symbol(f"K{j}", rope)
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
            title=say["shares"],
            text=say["shares_text"],
            items=items,
        )
    )
    members = {j: [i for i in range(h) if groups[i] == j] for j in range(g)}
    items = []
    for j in range(g):
        Kr = rotated_symbol(f"K{sup(j)}", rope)
        k_sum = " + ".join(f"\\partial {share('K', j, i, rope)}" for i in members[j])
        v_sum = " + ".join(f"\\partial {share('V', j, i, False)}" for i in members[j])
        items += [
            grad_mat(Kr, gr.K_rot[j], k_sum, rows=tok),
            grad_mat(f"V{sup(j)}", gr.V[j], v_sum, rows=tok),
        ]
    sections.append(
        Section(
            title=say["collect"],
            text=say["collect_text"]
            + (say["collect_own"] if g == h else say["collect_grouped"].format(r=h // g)),
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
                title=say["rope"],
                text=say["rope_text"],
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
            title=say["weights"],
            text=say["weights_text"].format(
                **{
                    role: say[f"{role}_{'one' if n == 1 else 'many'}"].format(n=n)
                    for role, n in (("q", h), ("k", g), ("v", g))
                }
            ),
            items=items,
        )
    )
    return sections


def grads_json(tr: ref.AttentionTrace, gr: ref.GradientTrace) -> dict[str, JSONValue]:
    """The backward's numbers in the other examples' layout, plus ``"kv_heads"`` (module
    docstring; written by `attention_ref.worked.trace.grads_layout`): a query head's ``K`` is its
    share of its K/V head's ``∂K`` (RoPE undone)."""
    heads = []
    for i in range(tr.h):
        dK_i = _through(tr, gr.K_rep[i])
        heads.append(
            {
                "H": gr.H[i],
                "A": gr.A[i],
                "S_masked": gr.S_masked[i],
                "S": gr.S[i],
                "Q": gr.Q[i],
                "K": dK_i,
                "V": gr.V_rep[i],
                "W_Q": gr.W_Q[i],
                "W_K": tr.X.T @ dK_i,
                "W_V": tr.X.T @ gr.V_rep[i],
            }
        )
    kv_heads = [
        {"K": gr.K[j], "V": gr.V[j], "W_K": gr.W_K[j], "W_V": gr.W_V[j]} for j in range(tr.g)
    ]
    return grads_layout(heads, kv_heads, output=gr.output, W_O=gr.W_O, concat=gr.concat, X=gr.X)


def with_gqa_backward(
    forward: Explanation, tr: ref.AttentionTrace, G: Matrix | None, lang: str = "en"
) -> Explanation:
    """The forward's explanation followed by its backward (``G`` ``None``: all ones), in
    ``lang``'s words (the forward's own language)."""
    gr = ref.attention_backward(tr, check_grad_output(G, tr.output, lang))
    say = GRADIENTS[lang]
    note = say["default_g" if G is None else "given_g"]
    return Explanation(
        title=forward.title + say["with_backward"],
        source=forward.source,
        sections=[*forward.sections, *backward_sections(tr, gr, G_note=note, lang=lang)],
        data={
            **forward.data,
            "loss": "sum" if G is None else "grad-output",
            "grads": grads_json(tr, gr),
        },
        precision=forward.precision,
        lang=lang,
    )
