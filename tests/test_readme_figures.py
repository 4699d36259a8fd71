"""The README's figures of the recorded Shakespeare runs are the recorded ones.

README.md is not built by the book, so its numbers are typed; this test reads them back and
holds them to ``docs/results/comparison.json`` (the run the book shows): how long ``attnref
train`` and ``attnref ablation`` take, the arms' total, the comparison table and the
baselines. Each reader is tested first on a README that says something else (the issue's
"≈ 5 min" and "≈ 10 min").
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from attention_ref.experiments.findings import Baselines, arm_seeds, rows_from_comparison
from attention_ref.experiments.report import comparison_markdown

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOC = json.loads((ROOT / "docs" / "results" / "comparison.json").read_text(encoding="utf-8"))
ROWS = rows_from_comparison(DOC)


def minutes_of(readme: str, command: str) -> int:
    """The ``≈ N min`` the README's command block gives ``attnref COMMAND`` (its first line)."""
    m = re.search(rf"^\.venv/bin/attnref {command} .*?≈ (\d+) min", readme, re.M)
    if m is None:
        raise AssertionError(f"the README gives no duration for `attnref {command}`")
    return int(m.group(1))


def arm_walls() -> dict[str, float]:
    """Each arm's wall time in seconds: the mean over its seeds (one seed: its own)."""
    return {g.attention: g.mean_row.wall_time_s for g in arm_seeds(ROWS)}


def recorded_minutes() -> dict[str, int]:
    """``train`` (the multihead arm: the defaults of `attnref train`) and ``ablation`` (the
    three arms, one after the other, one seed each), in whole minutes."""
    wall = arm_walls()
    return {"train": round(wall["multihead"] / 60), "ablation": round(sum(wall.values()) / 60)}


@pytest.mark.parametrize(("command", "old"), [("train", 8), ("ablation", 18)])
def test_the_reader_sees_a_duration_that_is_not_the_recorded_one(command, old):
    """The control: the README of the one-seed fp32 recording before (8 and 18 min) disagrees
    with the record."""
    line = f".venv/bin/attnref {command}  # the model (≈ {old} min, 2 cores)\n"
    assert minutes_of(line, command) == old != recorded_minutes()[command]


@pytest.mark.parametrize("command", ["train", "ablation"])
def test_the_durations_are_the_recorded_ones(command):
    assert minutes_of(README, command) == recorded_minutes()[command]


def test_the_demo_takes_at_least_the_ablation():
    m = re.search(r"make demo .*?≈ (\d+) min", README)
    assert m is not None and int(m.group(1)) >= recorded_minutes()["ablation"]


def test_the_arms_total_is_the_sum_of_their_wall_times():
    m = re.search(
        r"trained for (\d+) min (\d+) s in all;\s+an arm on one seed ([\d.]+) \+ ([\d.]+) "
        r"\+ ([\d.]+) s \(the means over its seeds\)",
        README,
    )
    assert m is not None
    means = list(arm_walls().values())
    assert [float(x) for x in m.groups()[2:]] == [round(w, 1) for w in means]
    total = sum(r.wall_time_s for r in ROWS)  # every run of every seed
    assert (int(m.group(1)), int(m.group(2))) == divmod(round(total), 60)


def test_the_table_and_the_baselines_are_the_recorded_ones():
    base = Baselines(**DOC["baselines"])
    table = comparison_markdown(ROWS, base.bigram).split("\n\n")[0]
    assert table in README
    assert (
        f"Here it is **{base.bigram:.4f}** nats; unigram {base.unigram:.3f}; "
        f"ln {base.vocab_size} = {math.log(base.vocab_size):.3f}." in README
    )
    assert f"validation split itself gives {base.bigram_fitted_on_val:.3f})" in README


def test_the_readmes_baby_gpt_figures_are_the_recorded_race():
    """The sentence under "Training" is `benchmarks/results/gpu-h200/baby_gpt.json`: both best
    validation losses, the difference between two estimates of attnref's checkpoint (so the
    two bests are "not told apart" exactly when the book's rule says so), the level and both
    times from launch to it."""
    from attention_ref.experiments.gpu_claims import baby_gpt_claims, estimator_gap, told_apart

    run = json.loads(
        (ROOT / "benchmarks" / "results" / "gpu-h200" / "baby_gpt.json").read_text("utf-8")
    )
    ours, theirs = run["arms"]
    said = re.search(
        r"(not )?told apart\s+\(([\d.]+) against ([\d.]+), each on its own estimator: two "
        r"estimates of attnref's checkpoint\s+differ by ([\d.]+)\); each reached ([\d.]+) on "
        r"its own estimate in ([\d.]+) s from launch against\s+([\d.]+) s",
        README,
    )
    assert said is not None, "the README gives no figures of the baby GPT race"
    level = baby_gpt_claims(run)[-1]  # the sentence the book prints, from the same run
    launch = re.search(r"; ([\d.]+) s from its process's launch", level)
    nano = re.search(r"`train.py` ([\d.]+) s from its launch", level)
    at = re.search(r"\(val ≤ ([\d.]+);", level)
    assert launch and nano and at
    gap = estimator_gap([ours])
    assert said.groups()[1:] == (
        f"{ours['best_val']:.4f}",
        f"{theirs['best_val']:.4f}",
        f"{gap:.4f}",
        at.group(1),
        launch.group(1),
        nano.group(1),
    )
    assert (said.group(1) == "not ") is not told_apart(ours["best_val"] - theirs["best_val"], gap)


def portuguese_pages_said(readme: str) -> int:
    """How many Portuguese pages the README says the book has (``in Portuguese N pages``)."""
    m = re.search(r"in Portuguese (\d+) pages", readme)
    if m is None:
        raise AssertionError("the README does not say how many Portuguese pages the book has")
    return int(m.group(1))


def test_the_readme_counts_the_portuguese_pages_the_book_has():
    pages = sorted((ROOT / "docs").glob("*.pt.md"))
    assert portuguese_pages_said(README) == len(pages)
    # the control: the README, which listed 6 of them
    old = "in Portuguese 6 pages (the worked example, the causal mask, …)"
    assert portuguese_pages_said(old) != len(pages)
