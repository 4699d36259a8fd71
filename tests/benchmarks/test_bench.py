"""The benchmarks' judges: the load read before each timed part, the quiet start of the
time-to-quality run and its sentence, the latency verdicts; numbers on both sides."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import _bench
import cli_latency
import time_to_quality as ttq


def test_the_load_is_read_before_each_part_and_flags_on_both_sides_of_the_limit():
    never, always = _bench.LoadLog(limit=1e9, window=0.05), _bench.LoadLog(limit=-1, window=0.05)
    assert never.before("a") and not always.before("a")  # busy cores are >= 0
    never.before("b")
    s = never.summary()
    assert s["read"] == "before each timed part" and s["parts"] == 2 and s["flagged"] == 0
    assert [r["part"] for r in s["reads"]] == ["a", "b"]
    assert s["first_load_1min"] == s["reads"][0]["load_1min"] is not None
    assert always.summary()["flagged"] == 1
    words = _bench.describe_load(always.summary())
    assert words.startswith("load read before each timed part: 1-minute load ")
    assert words.endswith("1 of 1 parts started above -1 busy cores")


def test_busy_cores_sees_a_busy_core():
    """A child process spinning during the probe shows as about one busy core."""
    import subprocess

    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        import time

        time.sleep(0.3)
        busy = _bench.busy_cores(0.5)
    finally:
        spin.kill()
        spin.wait()
    assert busy is not None and busy > 0.5


@pytest.mark.parametrize(("load", "quiet"), [(0.29, True), (0.3, False), (1.5, False)])
def test_a_quiet_start_is_below_0_3(load, quiet):
    start = ttq.quiet_start(load)
    assert start["quiet"] is quiet
    assert start["words"].startswith(f"1-minute load {load:.2f} before the start: ")
    assert ("NOT a quiet machine" in start["words"]) is not quiet
    assert not ttq.quiet_start(None)["quiet"]


def curve(*points: tuple[int, float, float]) -> list[dict[str, float]]:
    return [{"step": s, "seconds": t, "val_loss": v} for s, t, v in points]


def test_the_time_to_quality_target_is_called_met_only_when_every_number_says_so():
    quiet, loaded = ttq.quiet_start(0.1), ttq.quiet_start(0.9)
    reached = curve((2500, 150.0, 1.60), (5000, 290.0, 1.549), (5200, 300.0, 1.548))
    late = curve((2500, 150.0, 1.60), (5000, 301.0, 1.549))
    never = curve((2500, 150.0, 1.60), (5000, 300.0, 1.5501))
    assert ttq.reached_line(reached, quiet, [], 300.0).endswith(
        "val ≤ 1.55 first at 290 s (step 5000). Target (val ≤ 1.55 within 300 s, quiet "
        "machine): met."
    )
    assert "attnref reached val 1.5480 (its best) at 300 s, step 5200" in ttq.reached_line(
        reached, quiet, [], 300.0
    )
    assert ttq.reached_line(late, quiet, [], 400.0).endswith(
        "The target is not judged here: budget over 300 s."
    )
    assert ttq.reached_line(never, quiet, [], 300.0).endswith(
        "val ≤ 1.55 not reached within 300 s. Target (val ≤ 1.55 within 300 s, quiet "
        "machine): not met."
    )
    edge = curve((2500, 150.0, 1.60), (5421, 300.0475, 1.5487))  # the recorded run: 0.05 s late
    assert ttq.reached_line(edge, quiet, [], 300.0).endswith(
        "val ≤ 1.55 first at 300 s (step 5421). Target (val ≤ 1.55 within 300 s, quiet "
        "machine): not met (the first ≤ 1.55 came 0.05 s past the budget)."
    )
    assert ttq.reached_line(reached, loaded, ["lr=1e-2"], 300.0).endswith(
        "The target is not judged here: options changed, not a quiet start."
    )


def test_latency_verdicts_use_the_quiet_runs_only():
    cmd = cli_latency.Command("runs", ("runs",))
    times = [
        {"rep": 1, "seconds": 1.9, "flagged": False},
        {"rep": 2, "seconds": 9.0, "flagged": True},
    ]
    s = cli_latency.summarise(cmd, times)
    assert (s["median_s"], s["kept"], s["reps"], s["verdict"]) == (1.9, 1, 2, "met")
    over = cli_latency.summarise(cmd, [{"rep": 1, "seconds": 2.0, "flagged": False}])
    assert over["verdict"] == "not met"  # 2.0 is not under 2 s
    runs = [{"rep": i, "seconds": t, "flagged": False} for i, t in enumerate((1.0, 1.5, 2.5))]
    assert cli_latency.summarise(cmd, runs)["verdict"] == "met by the median only"
    none = cli_latency.summarise(cmd, [{"rep": 1, "seconds": 0.1, "flagged": True}])
    assert none["verdict"] == "no quiet run" and none["median_s"] is None


def test_a_recording_names_its_date_and_commit_and_the_readme_row_says_them(tmp_path):
    """A recorded figure names its date, commit and machine (issue 60): the README's rows said
    "not recorded" for every benchmark, whose records kept no commit."""
    import importlib.util
    import json

    import torch

    info = _bench.machine(torch.device("cpu"), _bench.LoadLog())
    assert info["commit"] and info["commit"] != "unknown"  # this checkout's HEAD
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("rm", root / "tools" / "readme_measured.py")
    assert spec and spec.loader
    rm = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = rm  # its dataclass looks its module up
    spec.loader.exec_module(rm)
    doc = {"machine": {**info, "commit": "0123456789abcdef-dirty"}, "x": 1}
    (tmp_path / "docs/results/benchmarks").mkdir(parents=True)
    (tmp_path / "docs/results/benchmarks/demo.json").write_text(json.dumps(doc))
    row = rm.benchmark(tmp_path, "demo", "a demo", lambda d: "found")
    assert row.cells()[-1] == "`0123456` + changes"
    del doc["machine"]["commit"]  # a record made before: said so, never guessed
    (tmp_path / "docs/results/benchmarks/demo.json").write_text(json.dumps(doc))
    assert rm.benchmark(tmp_path, "demo", "a demo", lambda d: "found").cells()[-1] == "not recorded"
