"""``benchmarks/baby_gpt.py`` (issue 33's stretch): both arms run here, tiny, and the table
says which reached the target and when, from the evaluations each arm printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import baby_gpt
import nanogpt_arm

ROOT = Path(__file__).resolve().parents[2]


def test_first_at_is_the_first_evaluation_at_or_below_the_target():
    evals = [
        {"step": 0, "val": 4.2, "s": 1.0},
        {"step": 250, "val": 1.47, "s": 9.0},
        {"step": 500, "val": 1.40, "s": 17.0},
    ]
    assert baby_gpt.first_at(evals, 1.47) == evals[1]  # at the target counts
    assert baby_gpt.first_at(evals, 1.469) == evals[2]
    assert baby_gpt.first_at(evals, 1.0) is None


def test_nanogpts_evaluation_lines_are_read_and_nothing_else():
    line = "step 1750: train loss 1.3290, val loss 1.4583"
    assert nanogpt_arm.EVAL_LINE.match(line).groups() == ("1750", "1.3290", "1.4583")
    assert nanogpt_arm.EVAL_LINE.match("iter 1750: loss 1.3290, time 20.1ms") is None
    assert nanogpt_arm.ITER_LINE.match(line) is None


def test_the_nanogpt_command_is_its_recipe_stopped_early_and_the_schedule_untouched():
    args = baby_gpt.nanogpt_args(2500, "cuda", quick=False)
    assert args == ["config/train_shakespeare_char.py", "--max_iters=2500"]
    assert not any(a.startswith("--lr_decay_iters") for a in args)  # its 5,000 stays
    assert "--compile=False" in baby_gpt.nanogpt_args(20, "cpu", quick=True)


@pytest.mark.slow
def test_both_arms_run_tiny_on_the_cpu_and_the_table_reads_their_evaluations(tmp_path):
    """--quick: the tiny shape, 20 steps each; a target of 4.5 is reached by both (a model of
    65 characters starts near ln 65 = 4.17), a target of 0.5 by neither."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    for target, reached in (("4.5", True), ("0.5", False)):
        out = tmp_path / target
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "baby_gpt.py"),
                "--device",
                "cpu",
                "--quick",
                "--target",
                target,
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        result = json.loads((out / "baby_gpt.json").read_text())
        arms = {a["arm"]: a for a in result["arms"]}
        assert set(arms) == {"attnref", "nanoGPT train.py"}
        for arm in arms.values():
            assert [e["step"] for e in arm["evals"]][-1] == 20 and "error" not in arm
            assert (arm["reached"] is not None) is reached
        assert arms["attnref"]["options"]["dropout"] == 0.2  # the preset's, under --quick
        assert arms["nanoGPT train.py"]["evals"][0]["step"] == 0  # it evaluates at step 0
        md = (out / "baby_gpt.md").read_text()
        cells = {
            row.split("|")[1].strip(): row.split("|")[2].strip()
            for row in md.splitlines()
            if row.startswith("| ") and "first val" not in row
        }
        assert set(cells) == set(arms)
        for name, arm in arms.items():
            got = arm["reached"]
            said = f"{got['s']:.1f} s (step {got['step']:,})" if reached else "not reached"
            assert cells[name] == said
