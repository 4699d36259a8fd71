"""Seed 001's mask line, run as the document writes it.

``mask = torch.triu(torch.ones(n, n), diagonal=1) * float('-inf')`` multiplies the zeros on
and below the diagonal by −∞: ``0 · (−∞)`` is NaN, and NaN goes through ``softmax(S + mask)``.
Here: the line as written (`seed_mask`), the mask it means (`fixed_mask`), both put through
the softmax (`mask_as_written`), the words computed from them (`mask_words`) and the section
`attention_ref.worked.your_journey_starts` shows (`mask_section`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypedDict

import torch
from torch import Tensor

from attention_ref.render import Mat, Section, said
from attention_ref.worked.trace import DTYPE, L
from attention_ref.worked.words_documents import JOURNEY

#: Seed 001's mask line ("Aplicando uma Máscara de Atenção Causal"), as the document writes it
#: (`seed_mask` runs exactly this; a test holds the two together).
SEED_MASK_CODE: Final = "torch.triu(torch.ones(n, n), diagonal=1) * float('-inf')"
#: A correct form of the same mask: 0 where a token may look, −∞ above the diagonal.
MASK_FIX_CODE: Final = (
    "torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))"
)


def seed_mask(n: int) -> Tensor:
    """Seed 001's mask, run as written: ``0 · (−∞)`` is NaN, so every entry on and below the
    diagonal is NaN, not 0."""
    return torch.triu(torch.ones(n, n), diagonal=1) * float("-inf")  # (n, n), NaN below


def fixed_mask(n: int) -> Tensor:
    """The additive causal mask seed 001 means (`MASK_FIX_CODE`): 0 on and below the
    diagonal, −∞ above."""
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1)  # above the diagonal
    return torch.zeros(n, n).masked_fill(blocked, float("-inf"))


class MaskAsWritten(TypedDict):
    """`mask_as_written`: what seed 001's mask line does to the scores ``S``."""

    n: int
    mask: Tensor  # seed 001's, as written
    weights: Tensor  # softmax(S + mask), rows
    fixed: Tensor  # the mask meant
    fixed_weights: Tensor  # softmax(S + fixed)
    nan_mask: int  # NaN entries of the mask
    nan_weights: int  # NaN entries of its weights
    fixed_row_error: float  # largest |row sum − 1| of the fixed mask's weights


def mask_as_written(S: Tensor) -> MaskAsWritten:
    """Seed 001's mask line and the fixed one, each added to the scores ``S`` ``(n, n)`` and
    put through the softmax, row by row."""
    n = S.shape[-1]
    mask, fixed = seed_mask(n).to(S.dtype), fixed_mask(n).to(S.dtype)
    weights, fixed_weights = torch.softmax(S + mask, dim=-1), torch.softmax(S + fixed, dim=-1)
    return {
        "n": n,
        "mask": mask,
        "weights": weights,
        "fixed": fixed,
        "fixed_weights": fixed_weights,
        "nan_mask": int(mask.isnan().sum()),
        "nan_weights": int(weights.isnan().sum()),
        "fixed_row_error": float((fixed_weights.sum(-1) - 1).abs().max()),
    }


def mask_words(m: MaskAsWritten, lang: str = "en") -> str:
    """What seed 001's mask line does, in words computed from `mask_as_written`, in ``lang``
    (`attention_ref.worked.words_documents.JOURNEY`)."""
    w, n = JOURNEY[lang], m["n"]
    lower = n * (n + 1) // 2  # entries on and below the diagonal
    code = f"mask = {SEED_MASK_CODE}"
    if m["nan_mask"] == 0:
        return w["mask_no_nan"].format(code=code)
    text = w["mask_nan"].format(
        code=code,
        n=n,
        nan_mask=m["nan_mask"],
        entries=n * n,
        where=w["mask_all_lower" if m["nan_mask"] == lower else "mask_some"],
        nan_weights=m["nan_weights"],
    )
    text += w["mask_all_nan" if m["nan_weights"] == n * n else "mask_weights"]
    return text + w["mask_meant"].format(
        fix=MASK_FIX_CODE, error=said(m["fixed_row_error"], ".1e", lang)
    )


def mask_section(S: Tensor, tokens: Sequence[str], lang: str = "en") -> Section:
    """Seed 001's mask line run on ``S`` (the causal module's scaled scores): where the NaNs
    land, and the mask it means."""
    m, w = mask_as_written(S), JOURNEY[lang]
    tok = list(tokens)
    return Section(
        title=w["mask_title"],
        text=mask_words(m, lang),
        items=[
            Mat(
                symbol="\\operatorname{isnan}(\\text{mask})",
                text="isnan(mask) (1: NaN)",
                value=L(m["mask"].isnan().to(DTYPE)),
                rows=tok,
                cols=tok,
            ),
            Mat(
                symbol="\\operatorname{isnan}(\\operatorname{softmax}(S + \\text{mask}))",
                text="isnan(softmax(S + mask)) (1: NaN)",
                value=L(m["weights"].isnan().to(DTYPE)),
                rows=tok,
                cols=tok,
            ),
            Mat(symbol="M", text=w["meant_label"], value=L(m["fixed"]), rows=tok, cols=tok),
            Mat(symbol="A", text="softmax(S + M)", value=L(m["fixed_weights"]), rows=tok, cols=tok),
        ],
    )
