"""The heads sweep's words, from numbers only: each claim on both sides of its threshold.

Pure: rows made here, no MLflow, no training.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attention_ref.experiments.findings import ArmRow
from attention_ref.experiments.heads_report import (
    HEADS_TOLERANCE,
    heads_report,
    heads_table,
    parameters_sentence,
    single_head_sentence,
    sweep_sentence,
    verdict,
)
from attention_ref.lm.config import TrainConfig
from tests.test_layers import imported_names, violates

CONFIG = {k: str(v) for k, v in TrainConfig().to_flat().items()}
SHA = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"


def row(
    heads: int,
    best: float,
    n_params: int = 824_000,
    *,
    data_sha256: str | None = SHA,
    **options: object,
) -> ArmRow:
    """An arm with ``best`` as its best validation loss (the other figures fixed), recorded
    with the default options but for its heads (and ``options``)."""
    config = CONFIG | {"n_head": str(heads)} | {k: str(v) for k, v in options.items()}
    return ArmRow(
        attention=str(heads),
        run_id=f"run{heads}",
        status="FINISHED",
        n_params=n_params,
        best_val_loss=best,
        final_val_loss=best + 0.01,
        final_train_loss=best - 0.02,
        tokens_per_sec=10_000.0 / heads,
        wall_time_s=60.0 * heads,
        steps=2600,
        config=config,
        data_sha256=data_sha256,
    )


def sweep(*bests: float) -> list[ArmRow]:
    return [row(h, b) for h, b in zip((1, 2, 4, 8), bests, strict=False)]


def test_the_module_is_pure():
    """No torch, MLflow or plots; of attnref only the (pure) findings and spread, and the
    tables of words (its own and the Q03 report's)."""
    names = imported_names(Path("attention_ref/experiments/heads_report.py").resolve())
    assert not any(violates(n, {"torch", "mlflow", "matplotlib"}) for n in names)
    ours = {n for n in names if n.startswith("attention_ref.")}
    allowed = {"findings", "spread", "heads_words", "report_words", "arm_table"}
    # and the one Markdown table writer of render (a leaf: nothing of attnref, no torch)
    for name in ours:
        parts = name.split(".")
        assert parts[1] == "render" or (parts[1] == "experiments" and parts[2] in allowed), name


def test_what_the_arms_share_is_said_only_as_recorded():
    """The issue's kind of sentence: "the same seed, data, schedule and number of steps" was
    written whatever the rows said."""
    text = sweep_sentence(sweep(1.6, 1.6))
    assert text == (
        "every arm has the same seed (1337), number of steps (2600), data (sha256 "
        "`86c4e6aa9db7…`), model shape but for the heads, schedule and evaluation"
    )
    other_seed = sweep_sentence([row(1, 1.6), row(2, 1.6, seed=7)])
    assert other_seed == (
        "**the arms are not comparable as they stand**: besides the heads they differ in seed "
        "(h = 1: 1337, h = 2: 7)"
    )
    other_lr = sweep_sentence([row(1, 1.6), row(2, 1.6, lr=0.01)])
    assert "besides the heads they differ in lr (h = 1: " in other_lr
    unknown = sweep_sentence([row(1, 1.6), row(2, 1.6, data_sha256=None)])
    assert unknown.endswith("; the data is not recorded for every arm, so not claimed the same")
    assert "data (sha256" not in unknown
    bare = [ArmRow(str(h), "r", "FINISHED", 1, 1.6, 1.6, 1.6, 1.0, 1.0, 10) for h in (1, 2)]
    assert sweep_sentence(bare).startswith("every arm has the same number of steps (10); the")
    assert sweep_sentence([row(1, 1.6)]) == "a single arm"


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
    assert "one model trained with h = 1, 2, 4, 8 heads; every arm has the same seed" in text
    assert heads_table(rows).rstrip() in text  # sorted by heads
    for r in rows:
        assert (
            f"| {r.attention} | {128 // int(r.attention)} | 824,000 | {r.best_val_loss:.4f} |"
            in text
        )
        assert f"h = {r.attention} `{r.run_id}`" in text
    assert "matters here" in text and "a single head is worse" in text
    with pytest.raises(ValueError, match="no finished arm"):
        heads_report("x", [])
    assert verdict([row(2, 1.6)]) == "One arm only: nothing to compare."
