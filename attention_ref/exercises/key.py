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

from dataclasses import replace

from attention_ref.exercises.feature_table import (
    active,
    features_of,
    fields_of,
    gathered,
    questions_of,
    words_of,
)
from attention_ref.exercises.numbers import (
    BackwardNumbers,
    ForwardNumbers,
    backward_numbers,
    forward_numbers,
)
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.problem import ProblemTrace
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
from attention_ref.worked.trace import grads_layout, trace_json


def _softmax(tr: ProblemTrace, ref: ForwardNumbers, w: dict[str, str]) -> list[Mat]:
    """The mask (``M``, or the feature's symbol: the window's) and ``S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M``
    (where there is a mask), then ``A⁽ⁱ⁾``."""
    if tr.M is None:
        return softmax_mats(ref, scores="S")
    # the mask as the problem has it, and S̃ = S + what the features add (ALiBi's B, a step
    # of its own: the numbers' M holds both, all that is added to S) + the mask
    symbol = w["mask_symbol"]
    mask, *masked = mask_mats(replace(ref, M=tr.M), symbol=symbol)
    masked = [
        replace(m, formula=" + ".join([f"S{sup(i)}", *(f"{a}{sup(i)}" for a in tr.added), symbol]))
        for i, m in enumerate(masked)
    ]
    return [mask, *masked, *softmax_mats(ref)]


def _outputs(ref: ForwardNumbers, w: dict[str, str]) -> list[Mat]:
    """``H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾``, the concat and the output."""
    return [*head_output_mats(ref), concat_mat(ref), output_mat(ref, w["output"])]


def gradient_section(
    opt: ExerciseOptions, tr: ProblemTrace, gr: BackwardNumbers, title: str
) -> Section:
    """The statement's gradient question answered: ∂W_O, ∂A⁽¹⁾, ∂S̃⁽¹⁾, ∂W_Q⁽¹⁾ and ∂X of
    the chain's backward (`backward_numbers`; ``G`` all ones: ``L = Σ output``)."""
    f, lang = opt.features, opt.lang
    tok, w, first = list(tr.tokens), words_of(f, lang, opt), gr.heads[0]
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
    kv = w["kv"]  # K and V: the K/V head query head i reads (j where they are grouped)
    dq = w["dq"].format(kv=kv)
    text = w["key_q5" if tr.W_O is not None else "key_q5_nowo"].format(dq=dq, kv=kv)
    return Section(title=title, text=text + gathered(f, "key_q5_more", lang, opt), items=items)


def key_sections(opt: ExerciseOptions, tr: ProblemTrace, statement: Explanation) -> list[Section]:
    """The statement's questions answered under its own titles, in its language: the one
    writer of the key (the module docstring)."""
    f, lang, ref = opt.features, statement.lang, forward_numbers(tr)
    w, fields = words_of(f, lang, opt), fields_of(f, opt, lang)
    titles = [s.title for s in statement.sections]
    first = statement.sections[0]
    sections = [Section(title=first.title, text=first.text, items=list(first.items))]
    for feat in active(f):  # the data the features add (RoPE's table of angles), as given
        sections += feat.data_sections(tr, lang)
    mask = w["key_mask"] if tr.M is not None else w["key_nomask"]
    wo = w["key_out_wo" if tr.W_O is not None else "key_out_nowo"]
    answers = {
        "q1": (w["key_q1"], projection_mats(ref)),
        "q2": (w["key_scores"], score_mats(ref)),
        "q3": (mask, _softmax(tr, ref, w)),
        "q4": (w["key_out"].format(wo=wo), _outputs(ref, w)),
    }
    for q, owner in questions_of(f):
        if q == "q5":
            if opt.backward:
                title = titles[len(sections)]
                sections.append(gradient_section(opt, tr, backward_numbers(tr), title))
            continue
        text, items = owner.key_answer(q, tr, ref, lang) if owner is not None else answers[q]
        sections.append(
            Section(
                title=titles[len(sections)],
                text=text.format(**fields, r=tr.h // tr.g, d_k=tr.d_k),
                items=items,
            )
        )
    return sections


def key_data(tr: ProblemTrace, backward: bool) -> dict[str, JSONValue]:
    """The key's JSON, the same in every language: `trace_json` of the chain's numbers (and
    what the features add: ``"window"``), and with ``backward`` its gradients
    (``"loss": "sum"``)."""
    data: dict[str, JSONValue] = {**trace_json(forward_numbers(tr))}  # type: ignore[arg-type]
    for feat in active(features_of(tr)):
        data = feat.key_json(tr, data)
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
        sections=key_sections(opt, tr, statement),
        data=key_data(tr, opt.backward),
        precision=opt.decimals,
        lang=opt.lang,
    )


__all__ = ["gradient_section", "key", "key_data", "key_sections"]
