"""The Q03 report from numbers alone (no MLflow), and the names runs are written under."""

from __future__ import annotations

from dataclasses import fields

import pytest

from attention_ref.experiments.names import Metric
from attention_ref.experiments.report import (
    FLOOR_TOLERANCE,
    ArmRow,
    Baselines,
    build_report,
    comparison_markdown,
    plateau_step,
)
from attention_ref.lm.train import EvalMetrics, StepMetrics

BASE = Baselines(vocab_size=65, unigram=3.347, bigram_floor=2.48)


def arm(attention: str, best: float, n_params: int, **extra: float) -> ArmRow:
    metrics = {m: best for m in ArmRow.METRICS.values()}
    metrics |= {Metric.MEAN_TOKENS_PER_SEC: 40_000.0, Metric.WALL_TIME_S: 100.0, **extra}
    curve = [(250, 3.0), (500, best + 0.1), (750, best), (1000, best)]
    return ArmRow.from_metrics(attention, f"run-{attention}", "FINISHED", n_params, 1000,
                               metrics, curve)  # fmt: skip


def test_the_loop_s_payloads_are_the_metric_names():
    """A renamed field of the loop's payloads fails here, not in a slow end-to-end run."""
    for payload in (StepMetrics, EvalMetrics):
        for f in fields(payload):
            assert Metric(f.name) == f.name


def test_a_row_reads_each_figure_from_its_metric():
    row = ArmRow.from_metrics(
        "none", "r", "FINISHED", 10, 5,
        {Metric.BEST_VAL_LOSS: 1.0, Metric.FINAL_VAL_LOSS: 2.0, Metric.FINAL_TRAIN_EVAL_LOSS: 3.0,
         Metric.MEAN_TOKENS_PER_SEC: 4.0, Metric.WALL_TIME_S: 5.0},
    )  # fmt: skip
    assert (row.best_val_loss, row.final_val_loss, row.final_train_loss) == (1.0, 2.0, 3.0)
    assert (row.tokens_per_sec, row.wall_time_s) == (4.0, 5.0)
    with pytest.raises(KeyError):
        ArmRow.from_metrics("none", "r", "FINISHED", 10, 5, {Metric.BEST_VAL_LOSS: 1.0})


def test_the_report_states_every_figure_it_is_given():
    arms = [arm("multihead", 1.58, 429_824), arm("none", 2.486, 297_216),
            arm("uniform", 2.26, 363_776)]  # fmt: skip
    text = build_report("shakespeare", "ablation run `p`", arms, BASE)
    assert "| none | 297,216 | 2.4860 |" in text and "ln 65 = 4.174" in text
    assert "(unigram) 3.347" in text and "**bigram floor** 2.480" in text
    assert "+0.006 nats from the floor: the model has learned the bigram table" in text
    assert "Attention has 132,608 of the 429,824 parameters (31%)" in text
    assert "Runs: multihead `run-multihead`, none `run-none`, uniform `run-uniform`." in text
    assert text == build_report("shakespeare", "ablation run `p`", arms, BASE)  # pure


@pytest.mark.parametrize(
    ("gap", "leak"), [(-FLOOR_TOLERANCE - 0.001, True), (-FLOOR_TOLERANCE + 0.001, False)]
)
def test_the_floor_verdict_follows_the_numbers(gap, leak):
    none = arm("none", BASE.bigram_floor + gap, 297_216)
    text = build_report("e", "s", [none], BASE)
    assert ("BELOW the floor" in text) is leak
    assert ("has learned the bigram table" in text) is not leak


def test_a_missing_arm_is_left_out_not_invented():
    text = build_report("e", "s", [arm("none", 2.49, 297_216)], BASE)
    assert "With attention (Q02)" not in text and "Uniform attention" not in text
    assert "Cost." not in text  # needs both arms


def test_comparison_table_has_one_line_per_arm_and_the_floor():
    md = comparison_markdown([arm("multihead", 1.5, 1), arm("none", 2.5, 1)], 2.48)
    assert md.count("\n| ") == 2 and md.rstrip().endswith("2.4800 nats")


def test_plateau_step():
    assert plateau_step([(1, 3.0), (2, 2.6), (3, 2.51), (4, 2.5)]) == 3
    assert plateau_step([(1, 3.0), (2, 2.0)]) == 2
