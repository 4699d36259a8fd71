"""``attnref train / ablation / report / sample``: real runs in a real sqlite store, exit codes.

In-process through :func:`attention_ref.cli.main.main` where possible; a subprocess where a signal
is needed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from attention_ref.cli.errors import CLIError
from attention_ref.cli.main import main
from attention_ref.cli.progress import command
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
    assert f"run {run.info.run_id} finished: 80 steps" in out and ", wall time " in out
    assert f"{command()} sample --run-id {run.info.run_id}" in out
    lines = out.splitlines()
    assert lines[0] == "attnref train: loading the data, torch and MLflow…"
    started = (
        f"started q02-multihead: MLflow run {run.info.run_id} in {store} (experiment shakespeare)"
    )
    first_step = next(i for i, line in enumerate(lines) if "step 20/80" in line)
    assert started in lines[:first_step]  # the id is known before the first step
    assert "  elapsed " in lines[first_step]  # times say what they are
    assert f"logged model: models:/{run.outputs.model_outputs[0].model_id}" in out
    # the UI's page of the runs ("Model training", not the GenAI overview)
    exp = run.info.experiment_id
    page = f"http://127.0.0.1:5000/#/experiments/{exp}?workflowType=machine_learning"
    assert f"then open\n  {page}\n" in out  # the address on a line of its own
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
        (["--resume", "f00", "--register", "m"], "leave out --register"),
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
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
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
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
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
        tiny(max_steps=40, eval_interval=20),
        load(locate()),
        out_root=tmp_path / "first",
        should_stop=lambda: True,
        log_system_metrics=False,
    )
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
    assert (
        main(["sample", "--prompt", "ROMEO:", "--tokens", "50", "--seed", "3", "--top-k", "5"]) == 0
    )
    out, err = capsys.readouterr()
    assert out == first  # by default: the latest finished training run, named on stderr
    assert err == f"attnref: sampling the latest finished run, q02-multihead ({run.info.run_id})\n"
    model_uri = f"models:/{run.outputs.model_outputs[0].model_id}"
    assert main(["sample", "--model", model_uri, *args[3:], "--seed", "3", "--top-k", "5"]) == 0
    assert capsys.readouterr().out == first  # the LoggedModel holds the same weights
    for bad, message in [
        (["--run-id", "f00"], "no run 'f00' in the tracking store"),
        (["--model", "models:/m-f00"], "no model models:/m-f00 in"),
        (["--model", "runs:/x/model"], "--model must be a models:/ URI"),
        (["--model", model_uri, "--run-id", "x"], "leave out --run-id and --arm"),
        (["--arm", "none"], "--arm picks an arm of the ablation given with --run-id"),
        (["--experiment", "nope"], "no experiment 'nope'"),
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
    assert "Bigram baseline" in out and f"{command()} report" in out
    parent = [r for r in runs() if r.data.tags.get("attnref.kind") == "ablation"]
    assert len(parent) == 1 and parent[0].data.params["arms"] == "multihead,none"
    pid = parent[0].info.run_id
    arms = {r.info.run_name: r.info.run_id for r in runs() if r.info.run_id != pid}
    assert set(arms) == {"ablation/multihead", "ablation/none"}
    lines = out.splitlines()
    assert lines[0] == "attnref ablation: loading the data, torch and MLflow…"
    order = [
        f"started ablation: MLflow run {pid} in {store} (experiment shakespeare)",
        "arm 1/2: multihead",
        f"ablation/multihead: MLflow run {arms['ablation/multihead']}",
        "[multihead] step 60/60",
        "arm 2/2: none",
        f"ablation/none: MLflow run {arms['ablation/none']}",
    ]
    at = [next(i for i, line in enumerate(lines) if line.startswith(o)) for o in order]
    assert at == sorted(at), out
    assert f"sample --run-id {pid} --arm multihead" in out
    # the parent has no model of its own: sample says which arms to pick
    assert main(["sample", "--run-id", pid, "--tokens", "5"]) == 2
    err = capsys.readouterr().err
    assert "parent of an ablation and has no model of its own; pick an arm with --arm" in err
    assert f"none ({arms['ablation/none']}, FINISHED)" in err
    assert main(["sample", "--run-id", pid, "--arm", "none", "--tokens", "5"]) == 0
    picked = capsys.readouterr().out
    assert main(["sample", "--run-id", arms["ablation/none"], "--tokens", "5"]) == 0
    assert capsys.readouterr().out == picked
    assert main(["report", "--output", str(tmp_path / "q03.md")]) == 0
    text = (tmp_path / "q03.md").read_text()
    assert "# Q03" in text and "Without attention (Q03)" in text and "bigram baseline" in text
    assert main(["report"]) == 0
    assert capsys.readouterr().out.endswith(text)
    for bad, message in [
        (["ablation", "--arms", "multihead,sparse"], "--arms must list distinct modes"),
        (["ablation", "--arms", "none,none"], "--arms must list distinct modes"),
        (["ablation", "--attention", "none"], "No such option"),
        (["report", "--experiment", "nope"], "no experiment 'nope'"),
        (["ablation", "--heads", "1,1"], "--heads must list distinct positive numbers"),
        (["ablation", "--heads", "two"], "--heads must list distinct positive numbers"),
        (["ablation", "--heads", "1,3"], "--n-embd 128 is not divisible by --n-head 3"),
        (["ablation", "--heads", "2", "--arms", "none"], "--heads sweeps the multihead model"),
        (["ablation", "--heads", "1,2", "--kv-heads", "1"], "leave out --kv-heads"),
        (["ablation", "--preset", "gpt4"], "--preset must be one of q02, nanogpt-shakespeare"),
    ]:
        assert main(bad) == 2
        assert message in capsys.readouterr().err


def test_the_recipe_is_trains_for_train_and_ablation_alike():
    """defaults < --preset < --quick < the options given (issue 42, item 10: ablation has both)."""
    from attention_ref.cli.options import QUICK, recipe

    quick = recipe(None, True, {})
    assert quick.to_flat() | QUICK == quick.to_flat() and quick.max_steps == 300
    baby = recipe("nanogpt-shakespeare-char", True, {"max_steps": 5})
    assert (baby.model.n_layer, baby.max_steps, baby.eval_batches) == (6, 5, QUICK["eval_batches"])
    assert recipe(None, False, {}).max_steps == 6000  # the control: Q02's own
    with pytest.raises(CLIError, match="--preset must be one of"):
        recipe("gpt4", False, {})


def test_ablation_quick_trains_every_arm_the_quick_recipe(store, capsys):
    """--quick's values where no option says otherwise: its 10 evaluation batches and 30
    warm-up steps in each arm's logged parameters (the tiny model's other options given)."""
    given = dict(zip(TINY[::2], TINY[1::2], strict=True))
    for flag in ("--eval-batches", "--warmup-steps"):
        given.pop(flag, None)
    args = [x for kv in given.items() for x in kv]
    args += ["--max-steps", "80", "--eval-interval", "40", "--log-every", "80"]
    assert main(["ablation", *args, "--arms", "multihead,none", "--quick"]) == 0
    capsys.readouterr()
    arms = [r for r in runs() if r.data.tags.get("attnref.kind") != "ablation"]
    assert len(arms) == 2
    for r in arms:
        assert r.data.params["eval_batches"] == "10" and r.data.params["warmup_steps"] == "30"
        assert r.data.params["max_steps"] == "80"  # the option given beside --quick wins


def test_help_lists_the_training_options():
    out = subprocess.run([ATTNREF, "train", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for option in ("--n-embd", "--no-attention", "--resume", "--tracking-uri", "--max-steps"):
        assert option in out.stdout


def test_heads_sweep_then_report(store, capsys):
    args = [*TINY, "--max-steps", "30", "--eval-interval", "30", "--log-every", "30"]
    assert main(["ablation", *args, "--heads", "1,2"]) == 0
    out = capsys.readouterr().out
    (parent,) = [r for r in runs() if r.data.tags.get("attnref.kind") == "heads_sweep"]
    arms = sorted(
        (r for r in runs() if r.info.run_id != parent.info.run_id), key=lambda r: r.info.run_name
    )
    assert [r.info.run_name for r in arms] == ["heads/1", "heads/2"]
    assert "arm 1/2: h1" in out and "arm 2/2: h2" in out and "[h2] step 30/30" in out
    n_params = {r.data.params["n_params"] for r in arms}
    assert len(n_params) == 1 and f"Every arm has {int(n_params.pop()):,} parameters" in out
    assert "| heads h | d_k | precision | parameters |" in out  # the precision each run recorded
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert "## Heads sweep: does the number of heads matter at fixed parameters?" in text
    assert f"Heads sweep run `{parent.info.run_id}`" in text
    assert ("matters here" in text) != ("does not matter measurably" in text)


def test_a_warm_up_longer_than_half_the_run_is_cut_said_and_logged(store, capsys):
    args = [*TINY, "--max-steps", "20", "--eval-interval", "20"]
    assert main(["train", *args, "--warmup-steps", "15", "--run-name", "cut"]) == 0
    out = capsys.readouterr().out
    note = (
        "attnref train: --warmup-steps 15 is more than 50% of --max-steps 20: warming up for "
        "10 steps, then the cosine decay over the other 10"
    )
    assert out.splitlines()[1] == note  # one line, right after the first
    (run,) = runs()
    assert run.data.params["warmup_steps"] == "10"  # the run records what it did
    lrs = [v for _, v in curve(run.info.run_id, "lr")]
    lr = tiny().lr
    assert lrs[:10] == pytest.approx([lr * (i + 1) / 10 for i in range(10)])  # 10 steps up
    assert all(a >= b for a, b in pairwise(lrs[10:])) and lrs[-1] < lr / 2  # then down
    # the control: half the run or less is kept, and nothing is said
    assert main(["train", *args, "--warmup-steps", "10", "--run-name", "kept"]) == 0
    assert "warming up for" not in capsys.readouterr().out
    (kept,) = [r for r in runs() if r.info.run_name == "kept"]
    assert kept.data.params["warmup_steps"] == "10"


def test_resume_keeps_the_warm_up_its_run_started_with(store, capsys, tmp_path, shakespeare):
    """A run whose warm-up is longer than half of it (written before the cut existed, or by
    the library) continues its own schedule when resumed: nothing is cut, nothing said."""
    from attention_ref.experiments.runs import run_training
    from attention_ref.experiments.store import connect

    connect(store, "shakespeare")
    cfg = tiny(max_steps=20, eval_interval=20, warmup_steps=15)
    whole = run_training(cfg, shakespeare, out_root=tmp_path / "a", log_system_metrics=False)
    cut = run_training(
        cfg,
        shakespeare,
        out_root=tmp_path / "b",
        should_stop=lambda: True,
        log_system_metrics=False,
    )
    assert cut.status == "KILLED"
    assert main(["train", "--resume", cut.run_id, "--out-dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "warming up for" not in out and "resuming at step 1" in out
    assert MlflowClient().get_run(cut.run_id).data.params["warmup_steps"] == "15"
    assert curve(cut.run_id, "lr") == curve(whole.run_id, "lr")


def test_the_ablation_cuts_a_long_warm_up_too(store, capsys):
    args = [*TINY, "--max-steps", "20", "--eval-interval", "20", "--warmup-steps", "11"]
    assert main(["ablation", *args, "--arms", "none"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == (
        "attnref ablation: --warmup-steps 11 is more than 50% of --max-steps 20: warming up for "
        "10 steps, then the cosine decay over the other 10"
    )
    (arm,) = [r for r in runs() if r.info.run_name == "ablation/none"]
    assert arm.data.params["warmup_steps"] == "10"
