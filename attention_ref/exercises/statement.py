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
from attention_ref.exercises.feature_table import layout
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.mistakes import Mistake
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.exercises.words import TEXT, decimals_words
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


def plural(k: int) -> dict[str, str]:
    """The plural endings after a count ``k``, for the words to pick from: ``s`` (``keys``,
    ``chaves``) and ``es`` (Portuguese ``anteriores``)."""
    return {"s": "s" * (k != 1), "es": "es" * (k != 1)}


def L(x: Array) -> list[list[float]]:
    """An array as a list of rows (a vector becomes one row)."""
    return np.atleast_2d(x).tolist()  # type: ignore[no-any-return]


def angle_mats(tr: ProblemTrace, lang: str) -> list[Mat]:
    r"""RoPE's table: :math:`\theta_p`, :math:`m\theta_p`, their cosines and sines."""
    w = TEXT[lang]
    pairs = [w["pair"].format(p=p) for p in range(tr.d_k // 2)]
    rows = [w["row"].format(token=tok, m=m) for m, tok in enumerate(tr.tokens)]
    sin = w["sin"]
    return [
        Mat(symbol="\\theta", text="θ_p", value=L(tr.theta), cols=pairs),
        Mat(symbol="m \\theta_p", text="m θ_p", value=L(tr.angles), rows=rows, cols=pairs),
        Mat(
            symbol="\\cos m\\theta_p",
            text="cos mθ_p",
            value=L(np.cos(tr.angles)),
            rows=rows,
            cols=pairs,
        ),
        Mat(
            symbol=f"\\operatorname{{{sin}}} m\\theta_p",
            text=f"{sin} mθ_p",
            value=L(np.sin(tr.angles)),
            rows=rows,
            cols=pairs,
        ),
    ]


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


def _questions(opt: ExerciseOptions, fmt: dict[str, object], has_wo: bool) -> list[Section]:
    """The questions after the data, numbered, each chosen by the problem's features."""
    w, f = TEXT[opt.lang], opt.features
    asked: list[tuple[str, str]] = [
        ("q1", w["q1_gqa"].format(**fmt) if f.grouped else w["q1_text"])
    ]
    if f.rotary:
        asked += [
            ("q_rot", w["q_rot_gqa" if f.grouped else "q_rot_text"]),  # K⁽ʲ⁾: a K/V head's
            ("q2", w["q_rot_scores_gqa" if f.grouped else "q_rot_scores_text"]),
        ]
    else:
        asked.append(("q2", w["q2_gqa" if f.grouped else "q2_text"]))
    if f.windowed:
        asked.append(("q3_window", w["q3_window_text"].format(**fmt)))
    else:
        asked.append(("q3", w["q3_text"] if opt.causal else w["q3_nomask"]))
    out = (
        ("q4_gqa" if has_wo else "q4_gqa_nowo")
        if f.grouped
        else ("q4_text" if has_wo else "q4_nowo")
    )
    asked.append(("q4", w[out]))
    if opt.backward:
        q5 = w["q5_text"] if has_wo else w["q5_nowo"]
        asked.append(("q5", q5 + (" " + w["q5_rope"]) * f.rotary))
    return [
        Section(title=w["question"].format(k=k, title=w[title]), text=text)
        for k, (title, text) in enumerate(asked, start=1)
    ]


def _names(opt: ExerciseOptions) -> str:
    """The names of answer.json's steps, from the problem's layout, in words."""
    w, f = TEXT[opt.lang], opt.features
    lay = layout(f)

    def listed(steps: tuple[str, ...]) -> str:
        return ", ".join(f'"{x}"' for x in steps)

    out = w["names_m"] if f.windowed else ""
    if lay.template_kv_heads:
        note = w["names_kv_gqa" if f.grouped else "names_kv_rope"]
        out += w["names_kv"].format(steps=listed(lay.template_kv_heads), note=note)
    return out + w["names_heads"].format(
        steps=listed(lay.template_heads),
        note=w["names_heads_gqa"] if f.grouped else "",
        grads=w["grads"] if opt.backward else "",
    )


def _title(opt: ExerciseOptions) -> str:
    """The statement's title: the first feature's attention, with the others."""
    w, f = TEXT[opt.lang], opt.features
    if f.grouped:
        key = "title_mqa" if opt.g == 1 else "title_gqa"
    elif f.windowed:
        key = "title_window"
    elif f.rotary:
        key = "title_rope"
    else:
        key = "title" if opt.causal else "title_plain"
    others = [w["with_window"]] * (f.windowed and f.grouped) + [w["with_rope"]] * (
        f.rotary and (f.grouped or f.windowed)
    )
    more = w["with"].format(features=w["with_and"].join(others)) if others else ""
    return w[key].format(seed=opt.seed, **{"with": more})


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
    w, f, lang = TEXT[opt.lang], opt.features, opt.lang
    tokens = [str(x) for x in problem["tokens"]]  # type: ignore[union-attr]
    has_wo = "W_O" in problem
    items = [Mat(symbol="X", value=problem["X"], rows=tokens), *_weights(problem)]  # type: ignore[arg-type]
    if has_wo:
        items.append(Mat(symbol="W_O", value=problem["W_O"]))  # type: ignore[arg-type]
    g, h, d_k = opt.g, opt.heads, opt.d_k
    before = (opt.window or 1) - 1
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
        "pairs": f"p = 0 … {d_k // 2 - 1}" if d_k > 2 else "p = 0",
        "w": opt.window,
        "before": before,
        "mask": w["mask"] if opt.causal else w["nomask"],
        "wo": w["wo"] if has_wo else w["nowo"],
        "heads": {"en": ("head", "heads"), "pt": ("cabeça", "cabeças")}[lang][h != 1],
        "mqa": w["mqa"] if g == 1 else "",
    }
    fmt |= plural(g) | {"b" + k: v for k, v in plural(before).items()}
    data_text = (
        w["data_lead"]
        + (w["data_gqa"] if f.grouped else w["data_heads"])
        + w["data_window"] * f.windowed
        + w["data_rope"] * f.rotary
        + " {mask}" * (not f.windowed)
        + " {wo}"
    ).format(**fmt)
    sections = [Section(title=w["data"], text=data_text, items=items)]
    if f.rotary:
        assert tr is not None
        sections.append(Section(title=w["table"], items=angle_mats(tr, lang)))
    sections += _questions(opt, fmt, has_wo)
    how = w["how_text"].format(
        options=json.dumps(opt.answer_json(), ensure_ascii=False),  # answer.json's
        names=_names(opt),
        answer=answer,
        **decimals_words(opt.decimals, lang),
    )
    sections.append(
        Section(title=w["how"], text=how + answer_notes(opt) + _hidden_note(opt, hidden))
    )
    return Explanation(
        title=_title(opt),
        source=opt.command,  # the check report's header prints the same
        sections=sections,
        data={"exercise": opt.answer_json(), "problem" if f.any else "input": problem},
        lang=lang,
    )


__all__ = ["angle_mats", "answer_notes", "plural", "statement"]
