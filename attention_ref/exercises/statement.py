r"""The statement of an exercise, one writer for the homework's attention and today's.

The data (``X``, the weights of the query heads and of the K/V heads, ``W_O``; RoPE's table of
angles, cosines and sines rounded as asked), then one section per question: the projections,
the scores :math:`Q^{(i)} K^{(j)\top}` (answer.json's ``"scores"``, before the division) and
:math:`S^{(i)} = Q^{(i)} K^{(j)\top} / \sqrt{d_k}` (``"S"``), with RoPE the rotations first
(:math:`K^{(j)}` is a K/V head's: :math:`j` the one query head :math:`i` reads, :math:`j = i`
where :math:`g = h`), the mask and the softmax (a sliding window's mask to write), the heads'
outputs and the output, the gradients when asked; then how to answer (the decimals, the names
of answer.json, how to write −∞) and, where the problem cannot show a mistake of its
catalogue, which (`attention_ref.exercises.draw.Drawn.hidden`). The words are
`attention_ref.exercises.words.TEXT`, English and Portuguese; the source line is
`ExerciseOptions.command`, which the check report's header prints too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from attention_ref.exercises.answer_words import ANSWER_FILE, MASKED_SPELLINGS
from attention_ref.exercises.feature_table import (
    active,
    fields_of,
    gathered,
    layout,
    questions_of,
    words_of,
)
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.mistakes import Mistake
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.exercises.words import TEXT, decimals_words, plural
from attention_ref.render import Explanation, JSONValue, Mat, Section


def answer_notes(opt: ExerciseOptions) -> str:
    """What the statement's "How to answer" adds on writing answer.json: how to write a masked
    entry (`MASKED_SPELLINGS`; when the problem has a mask) and, in Portuguese, that JSON's
    numbers take a decimal point; ``""`` when there is nothing to add (each note after a
    blank)."""
    w = TEXT[opt.lang]
    first, *rest = MASKED_SPELLINGS
    quoted = [f'"{s}"' for s in rest]
    also = f"{', '.join(quoted[:-1])} {w['and']} {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    notes = [w["masked"].format(first=first, also=also)] if opt.causal else []
    if "comma" in w:
        notes.append(w["comma"])
    return "".join(" " + n for n in notes)


def L(x: Array) -> list[list[float]]:
    """An array as a list of rows (a vector becomes one row)."""
    return np.atleast_2d(x).tolist()  # type: ignore[no-any-return]


def _weights(problem: dict[str, JSONValue]) -> list[Mat]:
    """``W_Q, W_K, W_V`` per head; with K/V heads of their own, ``W_Q`` per query head then
    ``W_K, W_V`` per K/V head."""
    heads: list[dict[str, object]] = problem["heads"]  # type: ignore[assignment]
    kv: list[dict[str, object]] = problem.get("kv_heads", [])  # type: ignore[assignment]
    items = [
        Mat(symbol=f"{role}^{{({i + 1})}}", value=head[role])  # type: ignore[arg-type]
        for i, head in enumerate(heads)
        for role in ("W_Q", "W_K", "W_V")
        if role in head
    ]
    items += [
        Mat(symbol=f"{role}^{{({j + 1})}}", value=head[role])  # type: ignore[arg-type]
        for j, head in enumerate(kv)
        for role in ("W_K", "W_V")
    ]
    return items


def _questions(
    opt: ExerciseOptions, w: dict[str, str], fmt: dict[str, object], has_wo: bool
) -> list[Section]:
    """The questions after the data, numbered: the homework's, each in the problem's words
    (``w``: its features' written over the homework's), and the features' own in before the one
    each names (`attention_ref.exercises.feature_table.questions_of`)."""
    f = opt.features
    texts = {
        "q1": w["q1_text"],
        "q2": w["q2_text"],
        "q3": w["q3_text"] if opt.causal else w["q3_nomask"],
        "q4": w["q4_text"] if has_wo else w["q4_nowo"],
        "q5": (w["q5_text"] if has_wo else w["q5_nowo"]) + gathered(f, "q5_more", opt.lang, opt),
    }
    asked = [
        (q, w[q + "_text"] if owner is not None else texts[q])
        for q, owner in questions_of(f)
        if q != "q5" or opt.backward
    ]
    return [
        Section(title=w["question"].format(k=k, title=w[q]), text=text.format(**fmt))
        for k, (q, text) in enumerate(asked, start=1)
    ]


def _names(opt: ExerciseOptions, w: dict[str, str]) -> str:
    """The names of answer.json's steps, from the problem's layout, in words."""
    lay = layout(opt.features)

    def listed(steps: tuple[str, ...]) -> str:
        return ", ".join(f'"{x}"' for x in steps)

    out = w["names_m"]
    if lay.template_kv_heads:
        out += w["names_kv"].format(steps=listed(lay.template_kv_heads), note=w["names_kv_note"])
    return out + w["names_heads"].format(
        steps=listed(lay.template_heads),
        note=w["names_heads_note"],
        grads=w["grads"] if opt.backward else "",
    )


def _title(opt: ExerciseOptions, w: dict[str, str]) -> str:
    """The statement's title: the first feature's attention (its words' ``title``), with the
    others (their ``along``)."""
    on = active(opt.features)
    title = w["title"] if opt.causal or on else w["title_plain"]
    others = [feat.said(opt.lang, opt)["along"] for feat in on[1:]]
    more = w["with"].format(features=w["with_and"].join(others)) if others else ""
    return title.format(seed=opt.seed, **{"with": more})


def _hidden_note(opt: ExerciseOptions, hidden: Sequence[Mistake]) -> str:
    """The mistakes the problem cannot tell apart, in words (``""``: none)."""
    if not hidden:
        return ""
    texts = list(dict.fromkeys(m.words[opt.lang] for m in hidden))
    return " " + TEXT[opt.lang]["hidden"].format(mistakes="; ".join(texts))


def statement(
    opt: ExerciseOptions,
    problem: dict[str, JSONValue],
    tr: ProblemTrace | None = None,
    hidden: Sequence[Mistake] = (),
    answer: str = ANSWER_FILE,
) -> Explanation:
    """The statement as a document: the data as matrices, then one section per question
    (``tr``: the problem's numbers, for RoPE's table; ``hidden``: what the problem cannot
    tell; ``answer``: the answer file as the student names it, ``ex/answer.json`` where
    ``--out ex`` wrote it)."""
    f, lang = opt.features, opt.lang
    w = words_of(f, lang, opt)
    tokens = [str(x) for x in problem["tokens"]]  # type: ignore[union-attr]
    has_wo = "W_O" in problem
    items = [Mat(symbol="X", value=problem["X"], rows=tokens), *_weights(problem)]  # type: ignore[arg-type]
    if has_wo:
        items.append(Mat(symbol="W_O", value=problem["W_O"]))  # type: ignore[arg-type]
    g, h, d_k = opt.g, opt.heads, opt.d_k
    fmt: dict[str, object] = {
        "seed": opt.seed,
        "n": opt.tokens,
        "d": opt.d_model,
        "h": h,
        "d_k": d_k,
        "g": g,
        "r": h // g,
        "tokens": ", ".join(tokens),
        "decimals": opt.decimals,
        "causal": "--causal" if opt.causal else "--no-causal",
        "mask": w["mask"] if opt.causal else w["nomask"],
        "wo": w["wo"] if has_wo else w["nowo"],
        "heads": {"en": ("head", "heads"), "pt": ("cabeça", "cabeças")}[lang][h != 1],
    }
    fmt |= plural(g) | fields_of(f, opt, lang)
    data_text = (
        w["data_lead"]
        + w["data_heads"]
        + gathered(f, "data_more", lang, opt)
        + w["data_mask"]
        + " {wo}"
    ).format(**fmt)
    sections = [Section(title=w["data"], text=data_text, items=items)]
    for feat in active(f):
        sections += feat.data_sections(tr, lang)
    sections += _questions(opt, w, fmt, has_wo)
    how = w["how_text"].format(
        options=json.dumps(opt.answer_json(), ensure_ascii=False),  # answer.json's
        names=_names(opt, w),
        answer=answer,
        **decimals_words(opt.decimals, lang),
    )
    sections.append(
        Section(title=w["how"], text=how + answer_notes(opt) + _hidden_note(opt, hidden))
    )
    return Explanation(
        title=_title(opt, w),
        source=opt.command,  # the check report's header prints the same
        sections=sections,
        data={"exercise": opt.answer_json(), "problem" if f.any else "input": problem},
        lang=lang,
    )


__all__ = ["answer_notes", "plural", "statement"]
