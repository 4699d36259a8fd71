r"""A sliding window of 2 keys on "Life is awesome": the last token no longer sees the first.

Seed 000's example (``h = 2`` heads, ``W_O = I_4``) with the causal mask replaced by the
sliding-window mask of `attention_ref.reference.windows`, ``w = 2``: a token sees itself and
the one before it,

$$
M^{\text{win}}_{tu} = 0 \text{ if } 0 \le t - u < 2,\ -\infty \text{ otherwise}
$$

"Life" and "is" have all their past inside the window, so their rows are seed 000's; the row
of "awesome" loses "Life" and changes. The explanation says which rows changed, computed.
"""

from __future__ import annotations

from typing import Final

import torch

from attention_ref import reference as ref
from attention_ref.reference import windows
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.layout import forward_sections, mask_section
from attention_ref.worked.trace import L, column_names, trace_json
from attention_ref.worked.words import listed
from attention_ref.worked.words_grouped import GROUPED, SLIDING_WINDOW, WINDOW_SYMBOL

WINDOW: Final = 2


def window_trace(w: int = WINDOW) -> ref.AttentionTrace:
    """Seed 000's heads with the sliding-window mask of ``w`` keys."""
    return life.life_trace(windows.sliding_window_mask(len(life.LIFE_TOKENS), w))


def changed_rows(tr: ref.AttentionTrace) -> tuple[list[int], list[int]]:
    """The rows (0-based) equal to seed 000's causal output, and the rows that differ."""
    seed = life.life_trace().output
    same = [r for r in range(tr.output.shape[0]) if torch.allclose(tr.output[r], seed[r])]
    return same, [r for r in range(tr.output.shape[0]) if r not in same]


def against_causal(
    tr: ref.AttentionTrace, w: int, lang: str = "en"
) -> tuple[Section, dict[str, JSONValue]]:
    """Which rows the window changed, with seed 000's output beside this one, in ``lang``'s
    words (`attention_ref.worked.words_grouped.SLIDING_WINDOW`)."""
    say = SLIDING_WINDOW[lang]
    tok = list(tr.tokens)
    same, changed = changed_rows(tr)
    seed = life.life_trace().output

    def names(rows: list[int]) -> str:
        return listed([f"'{tok[r]}'" for r in rows], say["and"])

    parts = []
    if same:
        one = "one" if len(same) == 1 else "many"
        parts.append(say[f"same_{one}"].format(rows=names(same), w=w))
    if changed:
        one = "one" if len(changed) == 1 else "many"
        parts.append(say[f"changed_{one}"].format(rows=names(changed), w=w))
    section = Section(
        title=say["against"].format(w=w),
        text=" ".join(parts),
        items=[
            Mat(
                symbol="\\operatorname{out}_{\\text{causal}}",
                text=say["causal_label"],
                value=L(seed),
                rows=tok,
                cols=column_names("y", 4),
            )
        ],
    )
    return section, {"rows_unchanged": same, "rows_changed": changed}


def explain(w: int = WINDOW, lang: str = "en") -> Explanation:
    """Seed 000 with a sliding window of ``w`` keys instead of the causal mask, in ``lang``'s
    words."""
    say = SLIDING_WINDOW[lang]
    tr = window_trace(w)
    mask = mask_section(
        tr,
        title=say["mask"].format(w=w),
        text=say["mask_text_one" if w == 2 else "mask_text_many"].format(w=w, before=w - 1),
        symbol=WINDOW_SYMBOL[lang],
    )
    verdict, numbers = against_causal(tr, w, lang)
    d_out = int(tr.output.shape[-1])
    sections = forward_sections(
        tr, mask=mask, output_note=GROUPED[lang]["concat_note"].format(d_out=d_out), lang=lang
    )
    return Explanation(
        title=say["title"].format(w=w),
        source=say["source"].format(h=tr.h, d_out=d_out, w=w),
        sections=[*sections, verdict],
        data={**trace_json(tr), "window": w, **numbers},
        lang=lang,
    )


def explain_backward(G: Matrix | None = None, lang: str = "en") -> Explanation:
    """The example, then its backward: the keys outside the window get no gradient."""
    return with_gqa_backward(explain(lang=lang), window_trace(), G, lang)
