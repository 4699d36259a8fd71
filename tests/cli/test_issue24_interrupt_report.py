"""Small things a newcomer trips over (issue 24): a second Ctrl-C says what it kept, a resume
without a checkpoint says why, and ``attnref report`` looks for runs before the data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest

from attention_ref.cli.main import main
from attention_ref.experiments.runs import StoppedAtOnce, what_a_second_ctrl_c_kept
from tests.configs import TINY_ARGS as TINY

ATTNREF = str(Path(sys.executable).with_name("attnref"))


def test_a_second_ctrl_c_says_what_was_kept(tmp_path):
    run, out = "f" * 32, tmp_path / "runs" / ("f" * 32)
    out.mkdir(parents=True)
    nothing = what_a_second_ctrl_c_kept(run, out)
    assert "nothing to resume" in nothing and "start a new run" in nothing
    assert "--resume" not in nothing and "best model" not in nothing
    (out / "best.pt").write_bytes(b"")
    best = what_a_second_ctrl_c_kept(run, out)
    assert f"its best model so far is in {out / 'best.pt'}" in best and "--resume" not in best
    (out / "last.pt").write_bytes(b"")
    kept = what_a_second_ctrl_c_kept(run, out)
    assert f"its checkpoint is {out / 'last.pt'}" in kept
    assert f"attnref train --resume {run}" in kept and "nothing" not in kept
    assert isinstance(StoppedAtOnce("x"), KeyboardInterrupt)  # Ctrl-C's exit code, 130


def test_two_ctrl_c_stop_at_once_and_the_words_match_what_resume_finds(store):
    """Two SIGINTs back to back: exit 130 with one line saying what was kept, and what that
    line says is what ``--resume`` then finds (a checkpoint, or the reason there is none)."""
    args = [*TINY, "--max-steps", "300", "--eval-interval", "50", "--log-every", "10"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [ATTNREF, "train", *args, "--run-name", "twice"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:
        if "eval step 50" in line:  # it really trains: then Ctrl-C
            proc.send_signal(signal.SIGINT)
        if line.startswith("SIGINT: stopping"):  # the first was seen: Ctrl-C again
            proc.send_signal(signal.SIGINT)
            break
    proc.stdout.read()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, err
    (said,) = [line for line in err.splitlines() if line.startswith("attnref: interrupted")]
    assert "stopped at once by a second Ctrl-C" in said and "Traceback" not in err
    (run,) = mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")
    assert run.info.status == "KILLED" and run.info.run_id in said
    resumed = subprocess.run(
        [ATTNREF, "train", "--resume", run.info.run_id],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if "its checkpoint is" in said:
        assert resumed.returncode == 0, resumed.stderr
    else:
        assert "nothing to resume" in said
        assert resumed.returncode == 2
        assert "has no checkpoint to resume from" in resumed.stderr
        assert "start a new run with attnref train" in resumed.stderr


def test_report_with_no_store_says_so_before_looking_for_the_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("ATTNREF_DATA", str(tmp_path / "nowhere" / "input.txt"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where a download would go
    assert main(["report"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnref: error: no MLflow store") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # no store made, no data cache, no download


def test_report_with_no_runs_says_so_before_looking_for_the_data(store, monkeypatch, capsys):
    mlflow.create_experiment("shakespeare")
    monkeypatch.setenv("ATTNREF_DATA", str(Path(store.removeprefix("sqlite:///")).parent / "no"))
    assert main(["report"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnref: error:") and err.count("\n") == 1
    assert "ATTNREF_DATA" not in err and "Tiny Shakespeare" not in err  # not the data's error
    assert "run" in err  # what is missing: the runs


def test_the_data_error_names_what_the_report_tests_must_not_see(tmp_path, monkeypatch):
    """The control: the data's own error (what ``report`` printed first before) names
    ``ATTNREF_DATA``, so the tests above would see it if the data were looked for first."""
    from attention_ref.cli.errors import CLIError
    from attention_ref.cli.options import load_data
    from attention_ref.cli.progress import make_console

    monkeypatch.setenv("ATTNREF_DATA", str(tmp_path / "missing"))
    with pytest.raises(CLIError, match="ATTNREF_DATA"):
        load_data(None, make_console())
