"""Seed 001's mask line, run as the document writes it: the NaNs are computed, not asserted
by hand, and the words follow them (a mask without NaN is the control)."""

from __future__ import annotations

from pathlib import Path

import torch

from attention_ref import reference as ref
from attention_ref.worked.journey_mask import (
    MASK_FIX_CODE,
    SEED_MASK_CODE,
    fixed_mask,
    mask_as_written,
    mask_words,
    seed_mask,
)
from attention_ref.worked.your_journey_starts import explain


def test_the_document_s_line_is_the_one_run():
    """``SEED_MASK_CODE`` is the line of seed 001 and `seed_mask` computes exactly it."""
    # the seeds beside the checkout (../shared/seeds), where they are
    for seed in (Path(__file__).resolve().parents[3] / "shared" / "seeds").glob("001_*.txt"):
        line = f"mask = {SEED_MASK_CODE.replace('n, n', 'seq_len, seq_len')}"
        assert line in seed.read_text(encoding="utf-8")
    for n in (1, 4, 6):
        written = eval(SEED_MASK_CODE, {"torch": torch, "n": n})  # the document's text, run
        assert torch.equal(written.isnan(), seed_mask(n).isnan())
        assert torch.equal(written.isinf(), seed_mask(n).isinf())
        meant = eval(MASK_FIX_CODE, {"torch": torch, "n": n})
        assert torch.equal(meant, fixed_mask(n))
        assert torch.equal(fixed_mask(n), ref.causal_mask(n).to(torch.float32))
        assert torch.equal(fixed_mask(n), torch.full((n, n), float("-inf")).triu(1))


def test_zero_times_infinity_makes_the_lower_triangle_nan():
    n = 6
    m = mask_as_written(torch.randn(n, n, dtype=torch.float64))
    lower = torch.ones(n, n, dtype=torch.bool).tril()
    assert torch.equal(m["mask"].isnan(), lower)  # on and below the diagonal: 0 · (−∞)
    assert bool(m["mask"][~lower].isneginf().all())
    assert m["nan_mask"] == 21 and m["nan_weights"] == 36
    assert m["fixed_row_error"] < 1e-12
    text = mask_words(m)
    assert "NaN in 21 of its 36 entries (every entry on and below the diagonal" in text
    assert "softmax(S + mask) is NaN in 36 of 36: every weight is NaN" in text
    assert MASK_FIX_CODE in text


def test_a_mask_without_nan_is_not_called_so():
    """The control: the same words from a mask that has no NaN say so."""
    S = torch.randn(4, 4, dtype=torch.float64)
    m = mask_as_written(S)
    clean = {**m, "mask": fixed_mask(4).double(), "nan_mask": 0, "nan_weights": 0}
    text = mask_words(clean)
    assert "has no NaN entry" in text and "is NaN" not in text


def test_the_example_flags_it_beside_the_causal_module():
    sections = explain().sections
    titles = [s.title for s in sections]
    at = titles.index("Seed 001's mask line, run as written")
    assert titles[at - 1].startswith("Causal attention")
    mats = {m.text: m.value for m in sections[at].items}
    n = len(mats["isnan(mask) (1: NaN)"])
    assert sum(map(sum, mats["isnan(mask) (1: NaN)"])) == n * (n + 1) // 2
    assert sum(map(sum, mats["isnan(softmax(S + mask)) (1: NaN)"])) == n * n
    causal = sections[at - 1].items[4]  # the causal module's weights A
    assert causal.text == "attn_weights"
    assert torch.allclose(torch.tensor(mats["softmax(S + M)"]), torch.tensor(causal.value))
