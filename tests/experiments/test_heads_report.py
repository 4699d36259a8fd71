"""The heads sweep's words, from numbers only: each claim on both sides of its threshold.

Pure: rows made here, no MLflow, no training.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attention_ref.experiments.heads_report import (
    HEADS_TOLERANCE,
    HeadsRow,
    heads_report,
    heads_table,
    parameters_sentence,
    single_head_sentence,
    verdict,
)
from tests.test_layers import imported_names, violates


def row(heads: int, best: float, n_params: int = 824_000) -> HeadsRow:
    """An arm with ``best`` as its best validation loss (the other figures fixed)."""
    return HeadsRow(
        heads=heads, d_k=128 // heads, run_id=f"run{heads}", n_params=n_params,
        best_val_loss=best, final_val_loss=best + 0.01, final_train_loss=best - 0.02,
        tokens_per_sec=10_000.0 / heads, wall_time_s=60.0 * heads, steps=2600,
    )  # fmt: skip


def sweep(*bests: float) -> list[HeadsRow]:
    return [row(h, b) for h, b in zip((1, 2, 4, 8), bests, strict=False)]


def test_the_module_is_pure():
    names = imported_names(Path("attention_ref/experiments/heads_report.py").resolve())
    assert not any(violates(n, {"torch", "mlflow", "matplotlib", "attention_ref"}) for n in names)


@pytest.mark.parametrize(
    ("spread", "matters"),
    [(0.0, False), (HEADS_TOLERANCE - 0.005, False), (HEADS_TOLERANCE + 0.005, True), (0.2, True)],
)
def test_verdict_says_heads_matter_only_beyond_the_noise(spread, matters):
    rows = sweep(1.50, 1.50 + spread / 2, 1.50 + spread, 1.50 + spread / 3)
    text = verdict(rows)
    assert ("matters here" in text) is matters
    assert ("does not matter measurably" in text) is (not matters)
    assert f"{spread:.3f} nats" in text
    if matters:  # names the best and the worst arm with their numbers
        assert "h = 1 reaches the lowest" in text and "h = 4 the highest" in text
        assert f"({1.50 + spread:.3f})" in text


@pytest.mark.parametrize(
    ("diff", "says"),
    [
        (HEADS_TOLERANCE + 0.01, "a single head is worse"),
        (HEADS_TOLERANCE - 0.01, "a single head does as well"),
        (-(HEADS_TOLERANCE - 0.01), "a single head does as well"),
        (-(HEADS_TOLERANCE + 0.01), "a single head is better"),
    ],
)
def test_the_single_head_reading_of_q03_follows_the_difference(diff, says):
    rows = [row(1, 1.60 + diff), row(2, 1.62), row(4, 1.60), row(8, 1.65)]
    text = single_head_sentence(rows)
    assert says in text
    assert f"{1.60 + diff:.3f}" in text and "1.600" in text and "h = 4" in text
    for other in {"is worse", "does as well", "is better"} - {says.removeprefix("a single head ")}:
        assert other not in text


def test_without_a_single_head_arm_it_says_it_cannot_tell():
    assert "cannot say what one head costs" in single_head_sentence([row(2, 1.6), row(4, 1.6)])
    assert "cannot say" in single_head_sentence([row(1, 1.6)])


def test_parameter_counts_equal_or_not():
    assert parameters_sentence(sweep(1.6, 1.6)).startswith("Every arm has 824,000 parameters")
    text = parameters_sentence([row(1, 1.6), row(2, 1.6, n_params=900_000)])
    assert "differ (h = 1: 824,000, h = 2: 900,000)" in text and "not at fixed size" in text


def test_report_has_the_table_every_number_and_the_runs():
    rows = sweep(1.61, 1.55, 1.52, 1.53)
    text = heads_report("Heads sweep run `p1`", list(reversed(rows)))  # any order in
    assert text.startswith("## Heads sweep: does the number of heads matter")
    assert heads_table(rows).rstrip() in text  # sorted by heads
    for r in rows:
        assert f"| {r.heads} | {r.d_k} | 824,000 | {r.best_val_loss:.4f} |" in text
        assert f"h = {r.heads} `{r.run_id}`" in text
    assert "matters here" in text and "a single head is worse" in text
    with pytest.raises(ValueError, match="no finished arm"):
        heads_report("x", [])
    assert verdict([row(2, 1.6)]) == "One arm only: nothing to compare."
