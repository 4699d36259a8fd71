r"""The solution key of an exercise (``attnref exercise --key``): one writer, every problem, both
languages.

The key answers the statement's questions under their own titles and in their order: the data
as given (with RoPE, its table of angles), then

1. ``Q^{(i)} = X W_Q^{(i)}`` per query head, ``K^{(j)}``, ``V^{(j)}`` per K/V head (for the
   homework's :math:`g = h`, one head's three after the other);
2. with RoPE, the rotated ``Q_{rot}^{(i)}`` and ``K_{rot}^{(j)}``;
3. the scores ``Q^{(i)} K^{(\gamma(i))\top}`` (answer.json's ``"scores"``, before the
   division) and ``S^{(i)} = Q^{(i)} K^{(\gamma(i))\top} / \sqrt{d_k}`` (``"S"``), with
   :math:`j = \gamma(i)` the K/V head query head ``i`` reads;
4. the mask ``M`` (causal, or a sliding window's), ``\tilde S^{(i)} = S^{(i)} + M`` and
   ``A^{(i)} = \operatorname{softmax}(\tilde S^{(i)})``;
5. ``H^{(i)} = A^{(i)} V^{(\gamma(i))}``, the concat and ``\operatorname{Concat} \cdot W_O``;
6. with ``--backward``, for ``L = \sum \text{output}``: ``\partial W_O``, ``\partial A^{(1)}``,
   ``\partial \tilde S^{(1)}``, ``\partial W_Q^{(1)}``, ``\partial X``.

Every number is computed once, by the grader's own float64 chain
(`attention_ref.exercises.numbers`: the chain's exact steps, held equal to the reference of
`attention_ref.reference.gqa` by a test on every problem), for both languages, without importing
torch: only the words differ, and they are `attention_ref.exercises.words.TEXT`'s. The JSON
(``data``) is the same in every language; the document is marked with its language, so the
writers print decimal commas in Portuguese. ``attnref explain --input exercise.json`` walks
through every step of the homework's problem, the backward's too.
"""

from __future__ import annotations

from attention_ref.exercises.feature_table import features_of
from attention_ref.exercises.numbers import (
    BackwardNumbers,
    ForwardNumbers,
    backward_numbers,
    forward_numbers,
)
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.exercises.statement import plural
from attention_ref.exercises.words import TEXT
from attention_ref.render import Explanation, JSONValue, Mat, Section
from attention_ref.worked.backward_sections import grad_mat
from attention_ref.worked.layout import (
    concat_mat,
    head_output_mats,
    mask_mats,
    output_mat,
    projection_mats,
    score_mats,
    softmax_mats,
    sup,
)
from attention_ref.worked.trace import L, grads_layout, trace_json


def rotated_mats(tr: ProblemTrace, ref: ForwardNumbers, lang: str) -> list[Mat]:
    """``Q_rot`` per query head, ``K_rot`` per K/V head."""
    tok, rows = list(tr.tokens), TEXT[lang]["row_by_row"]
    items = [
        Mat(
            symbol=f"Q_{{\\text{{rot}}}}{sup(i)}",
            value=L(ref.Q_rot[i]),
            rows=tok,
            formula=f"Q{sup(i)} R_m^\\top",
            formula_text=f"Q^({i + 1}) R_mᵀ, {rows}",
        )
        for i in range(tr.h)
    ]
    items += [
        Mat(
            symbol=f"K_{{\\text{{rot}}}}{sup(j)}",
            value=L(ref.K_rot[j]),
            rows=tok,
            formula=f"K{sup(j)} R_m^\\top",
            formula_text=f"K^({j + 1}) R_mᵀ, {rows}",
        )
        for j in range(tr.g)
    ]
    return items


def _softmax(tr: ProblemTrace, ref: ForwardNumbers, lang: str) -> list[Mat]:
    """The mask and ``S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M`` (where there is a mask), then ``A⁽ⁱ⁾``."""
    if tr.M is None:
        return softmax_mats(ref, scores="S")
    symbol = TEXT[lang]["window_symbol"] if features_of(tr).windowed else "M"
    return [*mask_mats(ref, symbol=symbol), *softmax_mats(ref)]


def _outputs(tr: ProblemTrace, ref: ForwardNumbers, lang: str) -> list[Mat]:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾``, the concat and the output."""
    return [*head_output_mats(ref), concat_mat(ref), output_mat(ref, TEXT[lang]["output"])]


def gradient_section(tr: ProblemTrace, gr: BackwardNumbers, title: str, lang: str) -> Section:
    """The statement's gradient question answered: ∂W_O, ∂A⁽¹⁾, ∂S̃⁽¹⁾, ∂W_Q⁽¹⁾ and ∂X of
    the chain's backward (`backward_numbers`; ``G`` all ones: ``L = Σ output``)."""
    tok, w, first = list(tr.tokens), TEXT[lang], gr.heads[0]
    items: list[Mat] = []
    if gr.W_O is not None:
        items.append(grad_mat("W_O", gr.W_O, "\\operatorname{Concat}^\\top G"))
    items += [
        grad_mat("A^{(1)}", first["A"], "\\partial H^{(1)} V^{(1)\\top}", rows=tok, cols=tok),
        grad_mat(
            "\\tilde S^{(1)}",
            first["S_masked"],
            "A^{(1)} \\odot (\\partial A^{(1)} - "
            "\\operatorname{rowsum}(\\partial A^{(1)} \\odot A^{(1)}))",
            rows=tok,
            cols=tok,
        ),
        grad_mat("W_Q^{(1)}", first["W_Q"], "X^\\top \\partial Q^{(1)}"),
        grad_mat("X", gr.X, rows=tok),
    ]
    kv = "⁽ʲ⁾" if features_of(tr).grouped else "⁽ⁱ⁾"  # K and V: the K/V head j query head i reads
    dq = w["dq_rope" if features_of(tr).rotary else "dq"].format(kv=kv)
    text = w["key_q5" if tr.W_O is not None else "key_q5_nowo"].format(dq=dq, kv=kv)
    if features_of(tr).grouped:
        text += " " + w["key_q5_kv"]
    if features_of(tr).rotary:
        text += " " + w["key_q5_rope"]
    return Section(title=title, text=text, items=items)


def key_sections(tr: ProblemTrace, statement: Explanation, backward: bool) -> list[Section]:
    """The statement's questions answered under its own titles, in its language: the one
    writer of the key (the module docstring)."""
    lang = statement.lang
    w, f, ref = TEXT[lang], features_of(tr), forward_numbers(tr)
    titles = [s.title for s in statement.sections]
    first = statement.sections[0]
    sections = [Section(title=first.title, text=first.text, items=list(first.items))]
    if f.rotary:
        sections.append(statement.sections[1])  # the table of angles, as given

    def answer(text: str, items: list[Mat]) -> None:
        sections.append(Section(title=titles[len(sections)], text=text, items=items))

    r = tr.h // tr.g
    answer(w["key_q1_gqa"].format(r=r) if f.grouped else w["key_q1"], projection_mats(ref))
    if f.rotary:
        pairs = tr.d_k // 2
        answer(
            w["key_rope_text"].format(d_k=tr.d_k, pairs=pairs, **plural(pairs)),
            rotated_mats(tr, ref, lang),
        )
    scores = "key_scores" + "_rope" * f.rotary + "_gqa" * f.grouped  # K⁽ʲ⁾ where grouped
    answer(w[scores].format(d_k=tr.d_k), score_mats(ref))
    if f.windowed:
        win = tr.window or 1
        mask = w["key_window"].format(w=win, before=win - 1, **plural(win - 1))
    else:
        mask = w["key_mask" if tr.M is not None else "key_nomask"]
    answer(mask, _softmax(tr, ref, lang))
    wo = w["key_out_wo" if tr.W_O is not None else "key_out_nowo"]
    answer(w["key_out"].format(wo=wo), _outputs(tr, ref, lang))
    if backward:
        sections.append(gradient_section(tr, backward_numbers(tr), titles[len(sections)], lang))
    return sections


def key_data(tr: ProblemTrace, backward: bool) -> dict[str, JSONValue]:
    """The key's JSON, the same in every language: `trace_json` of the chain's numbers
    (``"window"`` with a window), and with ``backward`` its gradients (``"loss": "sum"``)."""
    data: dict[str, JSONValue] = {**trace_json(forward_numbers(tr))}  # type: ignore[arg-type]
    if tr.window is not None:
        data["window"] = tr.window
    if backward:  # L = Σ output: G all ones
        gr = backward_numbers(tr)
        grads = grads_layout(
            gr.heads, gr.kv_heads, output=gr.output, W_O=gr.W_O, concat=gr.concat, X=gr.X
        )
        data |= {"loss": "sum", "grads": grads}
    return data


def key(
    opt: ExerciseOptions,
    problem: dict[str, JSONValue],
    statement: Explanation,
    tr: ProblemTrace,
) -> Explanation:
    """The key of the drawn ``problem`` (its numbers ``tr``, its statement ``statement``)."""
    del problem  # its numbers are tr's
    return Explanation(
        title=TEXT[opt.lang]["key_title"].format(seed=opt.seed),
        source=statement.source,  # the command that drew it, --backward included
        sections=key_sections(tr, statement, opt.backward),
        data=key_data(tr, opt.backward),
        precision=opt.decimals,
        lang=opt.lang,
    )


__all__ = ["gradient_section", "key", "key_data", "key_sections", "rotated_mats"]
