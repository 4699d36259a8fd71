"""``attnref train / ablation / report / sample``: real runs in a real sqlite store, exit codes.

In-process through :func:`cli.main.main` where possible; a subprocess where a signal is needed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from cli.main import main
from tests.configs import TINY_ARGS as TINY
from tests.configs import tiny

ATTNREF = str(Path(sys.executable).with_name("attnref"))


def runs(experiment: str = "shakespeare") -> list:
    if mlflow.get_experiment_by_name(experiment) is None:
        return []
    return mlflow.search_runs(experiment_names=[experiment], output_format="list")


def curve(run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in MlflowClient().get_metric_history(run_id, key))


def test_train_runs_logs_and_prints_plain_lines(store, capsys):
    code = main(["train", *TINY, "--max-steps", "80", "--eval-interval", "40", "--log-every", "20"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (run,) = runs()
    assert run.info.status == "FINISHED" and run.data.tags["attention"] == "multihead"
    assert "[multihead] step 20/80  loss" in out and "[multihead] eval step 80: train" in out
    assert f"run {run.info.run_id} finished: 80 steps" in out
    assert f"attnref sample --run-id {run.info.run_id}" in out
    assert Path("runs", run.info.run_id, "best.pt").is_file()


def test_no_attention_flag_is_the_ablation_arm(store, capsys):
    assert (
        main(["train", *TINY, "--max-steps", "20", "--eval-interval", "20", "--no-attention"]) == 0
    )
    (run,) = runs()
    assert run.data.params["attention"] == "none"
    code = main(["train", *TINY, "--no-attention", "--attention", "uniform"])
    assert code == 2 and "contradicts" in capsys.readouterr().err


def test_nan_loss_exits_1_with_the_step_and_a_failed_run(store, capsys):
    code = main(["train", *TINY, "--max-steps", "20", "--lr", "1e30", "--min-lr", "0"])
    err = capsys.readouterr().err
    (run,) = runs()
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    step = run.data.tags["failed_at_step"]
    assert f"became nan at step {step}" in err and "marked FAILED" in err
    assert run.info.status == "FAILED"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n-embd", "10", "--n-head", "3"], "not divisible by --n-head"),
        (["--n-layer", "0"], "--n-layer must be a positive integer"),
        (["--block-size", "2000000"], "larger than the data split"),
        (["--device", "tpu"], "unknown device 'tpu'"),
        (["--attention", "sparse"], "--attention must be one of"),
        (["--dropout", "1"], "--dropout must be in"),
        (["--out-dir", "a-file"], "is not writable"),
        (["--log-every", "0"], "--log-every must be a positive integer"),
        (["--n-embd", "abc"], "Invalid value for '--n-embd'"),
        (["--tracking-uri", "http://127.0.0.1:9"], "cannot reach the MLflow server"),
        (["--data", "missing.txt"], "--data points to missing.txt, which is not a file"),
        (["--resume", "f00"], "no run 'f00'"),
        (["--resume", "f00", "--n-embd", "64"], "leave out --n-embd"),
        (
            ["--resume", "f00", "--no-attention", "--run-name", "x"],
            "leave out --no-attention, --run-name",
        ),
        (["--resume", "f00", "--experiment", "other"], "leave out --experiment"),
    ],
)
def test_bad_options_exit_2_before_any_work(store, capsys, args, message):
    Path("a-file").write_text("x")
    code = main(["train", *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and err.startswith("attnref: error:") and err.count("\n") == 1
    assert runs() == [] and not Path("runs").exists()


def test_sigterm_saves_a_checkpoint_and_resume_gives_the_uninterrupted_curve(store, tmp_path):
    args = [*TINY, "--max-steps", "400", "--eval-interval", "100", "--log-every", "10"]
    assert main(["train", *args, "--run-name", "uninterrupted"]) == 0
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [ATTNREF, "train", *args, "--run-name", "cut"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # wait until it really trains, then stop it
        seen.append(line)
        if "step 30/400" in line:
            proc.send_signal(signal.SIGTERM)
            break
    rest = proc.stdout.read()
    assert proc.wait(timeout=120) == 143, "".join(seen) + rest
    assert "SIGTERM: stopping after this step" in rest and "Traceback" not in rest
    (cut,) = [r for r in runs() if r.info.run_name == "cut"]
    assert cut.info.status == "KILLED"
    stopped = len(curve(cut.info.run_id, "train_loss"))
    assert 30 <= stopped < 400
    assert f"interrupted at step {stopped}" in rest
    assert f"attnref train --resume {cut.info.run_id}" in rest

    resumed = subprocess.run(
        [ATTNREF, "train", "--resume", cut.info.run_id, "--log-every", "100"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming at step {stopped}" in resumed.stdout
    (full,) = [r for r in runs() if r.info.run_name == "uninterrupted"]
    for key in ("train_loss", "val_loss"):
        assert curve(cut.info.run_id, key) == curve(full.info.run_id, key), key
    assert MlflowClient().get_run(cut.info.run_id).info.status == "FINISHED"


def test_resume_honours_device_and_threads_in_the_run_s_own_experiment(store, capsys, tmp_path):
    """``--resume`` with ``--device``/``--threads`` uses and records them (they were silently
    dropped), and finds a run of another experiment (it crashed: "active experiment ID does not
    match")."""
    import torch

    from attention_ref.experiments.runs import run_training
    from attention_ref.experiments.store import connect
    from attention_ref.lm.data import load, locate

    connect(store, "other")
    cut = run_training(
        tiny(max_steps=40, eval_interval=20), load(locate()), out_root=tmp_path / "first",
        should_stop=lambda: True, log_system_metrics=False,
    )  # fmt: skip
    assert cut.status == "KILLED"
    threads = torch.get_num_threads()
    try:
        code = main(["train", "--resume", cut.run_id, "--device", "cpu", "--threads", "1"])
        assert torch.get_num_threads() == 1  # honoured
    finally:
        torch.set_num_threads(threads)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "resuming at step 1" in out and f"run {cut.run_id} finished: 40 steps" in out
    run = MlflowClient().get_run(cut.run_id)
    assert run.info.status == "FINISHED"
    assert run.info.experiment_id == mlflow.get_experiment_by_name("other").experiment_id
    assert run.data.tags["resumed_device"] == "cpu" and run.data.tags["resumed_threads"] == "1"
    assert mlflow.get_experiment_by_name("shakespeare") is None  # nothing created elsewhere


def test_sample_loads_the_logged_model(store, capsys):
    assert main(["train", *TINY, "--max-steps", "60", "--eval-interval", "60"]) == 0
    (run,) = runs()
    capsys.readouterr()
    args = ["sample", "--run-id", run.info.run_id, "--prompt", "ROMEO:", "--tokens", "50"]
    assert main([*args, "--seed", "3", "--top-k", "5"]) == 0
    first = capsys.readouterr().out
    assert main([*args, "--seed", "3", "--top-k", "5"]) == 0
    assert capsys.readouterr().out == first  # same seed, same text
    assert first.startswith("ROMEO:") and len(first) == len("ROMEO:") + 50 + 1
    for bad, message in [
        (["--run-id", "f00"], "has no trained model"),
        (["--run-id", run.info.run_id, "--prompt", "ü"], "outside the model's vocabulary"),
        (["--run-id", run.info.run_id, "--tokens", "0"], "--tokens must be between"),
        (["--run-id", run.info.run_id, "--temperature", "0"], "--temperature must be > 0"),
        (["--run-id", run.info.run_id, "--top-k", "0"], "--top-k must be a positive"),
    ]:
        assert main(["sample", *bad]) == 2
        assert message in capsys.readouterr().err


def test_ablation_then_report(store, capsys, tmp_path):
    args = [*TINY, "--max-steps", "60", "--eval-interval", "30", "--log-every", "60"]
    assert main(["ablation", *args, "--arms", "multihead,none"]) == 0
    out = capsys.readouterr().out
    assert "[multihead] step 60/60" in out and "[none] step 60/60" in out
    assert "Bigram floor" in out and "attnref report" in out
    parent = [r for r in runs() if r.data.tags.get("attnref.kind") == "ablation"]
    assert len(parent) == 1 and parent[0].data.params["arms"] == "multihead,none"
    assert main(["report", "--output", str(tmp_path / "q03.md")]) == 0
    text = (tmp_path / "q03.md").read_text()
    assert "# Q03" in text and "Without attention (Q03)" in text and "bigram floor" in text
    assert main(["report"]) == 0
    assert capsys.readouterr().out.endswith(text)
    for bad, message in [
        (["ablation", "--arms", "multihead,sparse"], "--arms must list distinct modes"),
        (["ablation", "--arms", "none,none"], "--arms must list distinct modes"),
        (["ablation", "--attention", "none"], "No such option"),
        (["report", "--experiment", "nope"], "no experiment 'nope'"),
    ]:
        assert main(bad) == 2
        assert message in capsys.readouterr().err


def test_help_lists_the_training_options():
    out = subprocess.run([ATTNREF, "train", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for option in ("--n-embd", "--no-attention", "--resume", "--tracking-uri", "--max-steps"):
        assert option in out.stdout
