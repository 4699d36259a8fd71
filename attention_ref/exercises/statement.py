r"""The statement of an exercise, one writer for the homework's attention and today's.

The data (``X``, the weights of the query heads and of the K/V heads, ``W_O``; RoPE's table of
angles, cosines and sines rounded as asked), then one section per question: the projections,
the scores (with RoPE, the rotations first), the mask and the softmax (a sliding window's mask
to write), the heads' outputs and the output, the gradients when asked; then how to answer
(the decimals, the names of answer.json, how to write −∞) and, where the problem cannot show
a mistake of its catalogue, which (`attention_ref.exercises.draw.Drawn.hidden`). The words
are `attention_ref.exercises.words.TEXT`, English and Portuguese.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import torch

from attention_ref.exercises.answer_words import MASKED_SPELLINGS
from attention_ref.exercises.mistakes import Mistake
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.problem import VariantTrace
from attention_ref.exercises.words import TEXT, decimals_words
from attention_ref.render import Explanation, JSONValue, Mat, Section
from attention_ref.worked.trace import L


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


def plural(k: int, lang: str) -> dict[str, str]:
    """The endings of a count ``k``: ``s`` (and Portuguese ``es``)."""
    return {"s": "s" * (k != 1), "es": "es" * (k != 1) if lang == "pt" else ""}


def angle_mats(tr: VariantTrace, lang: str) -> list[Mat]:
    r"""RoPE's table: :math:`\theta_p`, :math:`m\theta_p`, their cosines and sines."""
    w = TEXT[lang]
    pairs = [w["pair"].format(p=p) for p in range(tr.d_k // 2)]
    rows = [w["row"].format(token=tok, m=m) for m, tok in enumerate(tr.tokens)]
    sin = "sen" if lang == "pt" else "sin"
    return [
        Mat(symbol="\\theta", text="θ_p", value=L(tr.theta), cols=pairs),
        Mat(symbol="m \\theta_p", text="m θ_p", value=L(tr.angles), rows=rows, cols=pairs),
        Mat(symbol="\\cos m\\theta_p", text="cos mθ_p", value=L(torch.cos(tr.angles)),
            rows=rows, cols=pairs),
        Mat(symbol=f"\\operatorname{{{sin}}} m\\theta_p", text=f"{sin} mθ_p",
            value=L(torch.sin(tr.angles)), rows=rows, cols=pairs),
    ]  # fmt: skip


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
    items += [Mat(symbol=f"{role}^{{({j + 1})}}", value=head[role])  # type: ignore[arg-type]
              for j, head in enumerate(kv) for role in ("W_K", "W_V")]  # fmt: skip
    return items


def _questions(opt: ExerciseOptions, fmt: dict[str, object], has_wo: bool) -> list[Section]:
    """The questions after the data, per problem (the data's section is `_data_text`'s)."""
    w, v = TEXT[opt.lang], opt.variant
    q3 = Section(title=w["q3"], text=w["q3_text"] if opt.causal else w["q3_nomask"])
    q4 = Section(title=w["q4"], text=w["q4_text"] if has_wo else w["q4_nowo"])
    q1 = Section(title=w["q1"], text=w["q1_text"])
    q2 = Section(title=w["q2"], text=w["q2_text"])
    if v == "gqa":
        return [Section(title=w["q1"], text=w["q1_gqa"].format(**fmt)),
                Section(title=w["q2"], text=w["q2_gqa"]), q3,
                Section(title=w["q4"], text=w["q4_gqa" if has_wo else "q4_gqa_nowo"])]  # fmt: skip
    if v == "window":
        return [q1, q2, Section(title=w["q3_window"], text=w["q3_window_text"].format(**fmt)), q4]
    if v == "rope":
        return [q1, Section(title=w["q_rot"], text=w["q_rot_text"]),
                Section(title=w["q_rot_scores"], text=w["q_rot_scores_text"]),
                Section(title=w["q_rot_mask"], text=q3.text),
                Section(title=w["q_rot_out"], text=q4.text)]  # fmt: skip
    out = [q1, q2, q3, q4]
    if opt.backward:
        out.append(Section(title=w["q5"], text=w["q5_text"] if has_wo else w["q5_nowo"]))
    return out


def _hidden_note(opt: ExerciseOptions, hidden: Sequence[Mistake]) -> str:
    """The mistakes the problem cannot tell apart, in words (``""``: none)."""
    if not hidden:
        return ""
    texts = list(dict.fromkeys(m.words[opt.lang] for m in hidden))
    return " " + TEXT[opt.lang]["hidden"].format(mistakes="; ".join(texts))


def statement(
    opt: ExerciseOptions,
    problem: dict[str, JSONValue],
    tr: VariantTrace | None = None,
    hidden: Sequence[Mistake] = (),
) -> Explanation:
    """The statement as a document: the data as matrices, then one section per question
    (``tr``: a variant's trace, for RoPE's table; ``hidden``: what the problem cannot tell)."""
    w, v, lang = TEXT[opt.lang], opt.variant, opt.lang
    tokens = [str(x) for x in problem["tokens"]]  # type: ignore[union-attr]
    has_wo = "W_O" in problem
    items = [Mat(symbol="X", value=problem["X"], rows=tokens), *_weights(problem)]  # type: ignore[arg-type]
    if has_wo:
        items.append(Mat(symbol="W_O", value=problem["W_O"]))  # type: ignore[arg-type]
    g, h, d_k = opt.g, opt.heads, opt.d_k
    fmt: dict[str, object] = {
        "seed": opt.seed, "n": opt.tokens, "d": opt.d_model, "h": h, "d_k": d_k, "g": g,
        "r": h // g, "tokens": ", ".join(tokens), "decimals": opt.decimals,
        "causal": "--causal" if opt.causal else "--no-causal",
        "pairs": f"p = 0 … {d_k // 2 - 1}" if d_k > 2 else "p = 0",
        "w": opt.window, "before": (opt.window or 1) - 1,
        "mask": w["mask"] if opt.causal else w["nomask"], "wo": w["wo"] if has_wo else w["nowo"],
        "hs": "s" * (h != 1),
        "heads": {"en": ("head", "heads"), "pt": ("cabeça", "cabeças")}[lang][h != 1],
    }  # fmt: skip
    if v == "gqa":
        fmt |= plural(g, lang) | {"mqa": w["mqa"] if g == 1 else ""}
    if v == "window":
        fmt |= plural(opt.window - 1 if opt.window else 0, lang)
    data_text = w[{"mha": "data_text"}.get(v, f"data_{v}")].format(**fmt)
    sections = [Section(title=w["data"], text=data_text, items=items)]
    if v == "rope":
        assert tr is not None
        sections.append(Section(title=w["table"], items=angle_mats(tr, lang)))
    sections += _questions(opt, fmt, has_wo)
    names = w[f"names_{v}"].format(grads=w["grads"] if opt.backward else "")
    how = w["how_text"].format(options=json.dumps(opt.to_json(), ensure_ascii=False),
                               names=names, **decimals_words(opt.decimals, lang))  # fmt: skip
    sections.append(Section(title=w["how"], text=how + answer_notes(opt)
                            + _hidden_note(opt, hidden)))  # fmt: skip
    title = {"gqa": "title_mqa" if g == 1 else "title_gqa", "window": "title_window",
             "rope": "title_rope"}.get(v, "title" if opt.causal else "title_plain")  # fmt: skip
    return Explanation(
        title=w[title].format(seed=opt.seed),
        source="attnref " + opt.source + (" --lang pt" if lang == "pt" else ""),
        sections=sections,
        data={"exercise": opt.to_json(), "input" if v == "mha" else "problem": problem},
        lang=lang,
    )


__all__ = ["angle_mats", "answer_notes", "plural", "statement"]
