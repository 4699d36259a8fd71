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

from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import windows
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.grouped_layout import forward_sections, mask_section, trace_json
from attention_ref.worked.trace import L, column_names, t

WINDOW: Final = 2


def window_trace(w: int = WINDOW) -> ref_gqa.GQATrace:
    """Seed 000's heads with the sliding-window mask of ``w`` keys."""
    n = len(life.LIFE_TOKENS)
    return ref_gqa.grouped_query_attention(
        t(life.LIFE_X),
        t(life.LIFE_W_Q),
        t(life.LIFE_W_K),
        t(life.LIFE_W_V),
        t(life.LIFE_W_O),
        M=windows.sliding_window_mask(n, w),
        tokens=life.LIFE_TOKENS,
    )


def changed_rows(tr: ref_gqa.GQATrace) -> tuple[list[int], list[int]]:
    """The rows (0-based) equal to seed 000's causal output, and the rows that differ."""
    seed = life.life_trace().output
    same = [r for r in range(tr.output.shape[0]) if torch.allclose(tr.output[r], seed[r])]
    return same, [r for r in range(tr.output.shape[0]) if r not in same]


def against_causal(tr: ref_gqa.GQATrace, w: int) -> tuple[Section, dict[str, JSONValue]]:
    """Which rows the window changed, with seed 000's output beside this one."""
    tok = list(tr.tokens)
    same, changed = changed_rows(tr)
    seed = life.life_trace().output

    def names(rows: list[int]) -> str:
        return ", ".join(f"'{tok[r]}'" for r in rows)

    parts = []
    if same:
        parts.append(
            f"Row{'s' * (len(same) > 1)} {names(same)} equal{'s' * (len(same) == 1)} seed "
            f"000's causal output: at most {w} tokens of past, itself included, so the window "
            "hides nothing."
        )
    if changed:
        one = len(changed) == 1
        parts.append(
            f"Row{'' if one else 's'} {names(changed)} differ{'s' if one else ''}: "
            f"{'its oldest key falls' if one else 'each row has keys that fall'} out of the "
            f"window of {w} (every key {w} or more positions back)."
        )
    section = Section(
        title=f"Against the causal mask: which rows the window of {w} changes",
        text=" ".join(parts),
        items=[
            Mat(
                symbol="\\operatorname{out}_{\\text{causal}}",
                text="Output of seed 000 (causal mask)",
                value=L(seed),
                rows=tok,
                cols=column_names("y", 4),
            )
        ],
    )
    return section, {"rows_unchanged": same, "rows_changed": changed}


def explain(w: int = WINDOW) -> Explanation:
    """Seed 000 with a sliding window of ``w`` keys instead of the causal mask."""
    tr = window_trace(w)
    mask = mask_section(
        tr,
        title=f"Sliding-window mask, w = {w}: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win",
        text=f"M_win is 0 where 0 ≤ t − u < {w} (token t sees itself and the {w - 1} before "
        "it) and −∞ elsewhere: the future, as in the causal mask, and the keys that are too "
        "old.",
        symbol="M_{\\text{win}}",
    )
    verdict, numbers = against_causal(tr, w)
    sections = forward_sections(
        tr, mask=mask, output_note="W_O = I_4, so the output is the concat."
    )
    return Explanation(
        title=f'Sliding-window attention (w = {w}): "Life is awesome"',
        source=f"seed 000's numbers (h = 2, W_O = I_4) with a sliding window of {w} keys",
        sections=[*sections, verdict],
        data={**trace_json(tr), "window": w, **numbers},
    )


def explain_backward(G: Matrix | None = None) -> Explanation:
    """The example, then its backward: the keys outside the window get no gradient."""
    return with_gqa_backward(explain(), window_trace(), G)
