"""``attnref runs``, read-only commands that never create a store, help text, ``--version``,
hints that work as printed, and the first line before the heavy imports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest
import typer

from attention_ref.cli.main import app, main
from attention_ref.cli.options import tidy_help
from attention_ref.cli.progress import command
from tests.configs import TINY_ARGS as TINY

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "args",
    [["runs"], ["runs", "--format", "json"], ["report"], ["sample"], ["sample", "--run-id", "f0"]],
)
def test_read_only_commands_never_create_a_store(tmp_path, monkeypatch, capsys, args):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("attnref: error: no MLflow store sqlite:///mlflow.db: ")
    assert err.count("\n") == 1 and "does not exist" in err
    assert list(tmp_path.iterdir()) == []  # no mlflow.db, no mlruns


def test_runs_lists_the_runs_as_a_table_or_json(store, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: whole lines, unless a width is said
    assert main(["train", *TINY, "--max-steps", "20", "--eval-interval", "20"]) == 0
    (run,) = mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")
    other = mlflow.create_experiment("other")  # a run attnref did not write
    with mlflow.start_run(experiment_id=other, run_name="by-hand"):
        pass
    capsys.readouterr()

    assert main(["runs", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tracking_uri"] == store and doc["experiment"] == "shakespeare"
    (row,) = doc["runs"]
    best = run.data.metrics["best_val_loss"]
    assert row == {
        "run_id": run.info.run_id,
        "name": "q02-multihead",
        "experiment": "shakespeare",
        "kind": "train",
        "attention": "multihead",
        "heads": 2,
        "status": "FINISHED",
        "steps": "20/20",
        "best_val_loss": best,
        "started": row["started"],
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row["started"])

    assert main(["runs"]) == 0
    table = capsys.readouterr().out
    for cell in (
        run.info.run_id,
        "q02-multihead",
        "multihead (2 heads)",
        "FINISHED",
        "20/20",
        f"{best:.4f}",
        row["started"],
        f"store: {store}",
    ):
        assert cell in table, cell
    assert "by-hand" not in table
    # at 80 columns: the run id, status, steps and loss whole, the rest said to be left out
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["runs"]) == 0
    narrow = capsys.readouterr().out
    framed = [line for line in narrow.splitlines() if line[:1] in "┏┃┡│└"]
    assert framed and all(len(line) <= 80 for line in framed)  # paths and URLs: lines of their own
    for cell in (run.info.run_id, "FINISHED", "20/20", f"{best:.4f}"):
        assert cell in narrow, cell
    assert "left out at 80 columns" in narrow
    # the name and the attention kept, above the id in one cell (issue 42, item 9)
    stack = [line.split("│")[1].strip() for line in framed if line.startswith("│")]
    assert stack[:3] == ["q02-multihead", "multihead (2 heads)", run.info.run_id], narrow
    assert "name / attention / run id" in narrow and "left out at 80 columns: started" in narrow
    monkeypatch.setenv("COLUMNS", "120")  # wider: more columns whole
    assert main(["runs"]) == 0
    wider = capsys.readouterr().out
    assert "multihead (2 heads)" in wider and "q02-multihead" in wider
    monkeypatch.setenv("COLUMNS", "160")  # the control: nothing left out
    assert main(["runs"]) == 0
    assert "left out" not in capsys.readouterr().out
    monkeypatch.delenv("COLUMNS")

    assert main(["runs", "--all", "--format", "json"]) == 0
    everything = json.loads(capsys.readouterr().out)["runs"]
    assert [(r["name"], r["experiment"]) for r in everything] == [
        ("by-hand", "other"),
        ("q02-multihead", "shakespeare"),
    ]
    assert main(["runs", "--all"]) == 0  # the table names each run's experiment
    lines = capsys.readouterr().out.splitlines()
    assert any(re.search(r"\bname\b.*\bexperiment\b.*\battention\b", line) for line in lines)
    for name, experiment in (("by-hand", "other"), ("q02-multihead", "shakespeare")):
        assert any(re.search(rf"\b{name}\b\W+{experiment}\b", line) for line in lines), name
    assert main(["runs"]) == 0  # one experiment asked for: no such column
    lines = capsys.readouterr().out.splitlines()
    assert not any(re.search(r"\bname\b.*\bexperiment\b", line) for line in lines)
    assert main(["runs", "--experiment", "other"]) == 0
    assert "by-hand" in capsys.readouterr().out
    for bad, message in [
        (["runs", "--experiment", "nope"], "no experiment 'nope'"),
        (["runs", "--all", "--experiment", "other"], "leave out --experiment"),
        (["runs", "--format", "xml"], "Invalid value for '--format'"),
    ]:
        assert main(bad) == 2
        assert message in capsys.readouterr().err


def test_runs_of_an_empty_experiment_say_so(store, capsys):
    mlflow.create_experiment("shakespeare")
    assert main(["runs"]) == 0
    assert capsys.readouterr().out == f"no runs in experiment 'shakespeare' ({store})\n"


MY_COMMANDS = ("train", "ablation", "report", "sample", "runs")


@pytest.mark.parametrize("name", MY_COMMANDS)
def test_every_option_shows_its_default_and_a_type_name(name, capsys):
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"<(bool|str|int|float|path)>", out), out
    cmd = tidy_help(typer.main.get_command(app)).commands[name]
    for param in cmd.params:
        flag = getattr(param, "is_flag", False)
        assert param.metavar == "" if flag else param.metavar.isupper(), param.name
        if flag:
            continue
        shown = param.show_default is not False and param.default is not None
        assert shown or "[default: " in (param.help or ""), f"{name} --{param.name}"


def test_sample_help_shows_a_clean_prompt_default(capsys):
    assert main(["sample", "--help"]) == 0
    out = capsys.readouterr().out
    assert "[default: \\n]" in out  # the old default, a real newline, broke the line


def test_version(capsys):
    from attention_ref import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"attnref {__version__}\n"


def test_hints_name_attnref_as_the_shell_will_find_it(monkeypatch):
    venv_attnref = Path(sys.executable).with_name("attnref")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the venv is not activated
    assert command() == str(venv_attnref)
    assert command("mlflow") == str(Path(sys.executable).with_name("mlflow"))
    monkeypatch.setenv("PATH", f"{venv_attnref.parent}:/usr/bin")
    assert command() == "attnref"


def test_the_first_line_comes_before_torch_and_mlflow_are_imported(tmp_path):
    """Something is on screen at once: the first line is printed before the imports that take
    seconds (a meta-path hook prints when torch or mlflow is first imported)."""
    code = (
        "import sys\n"
        "class Hook:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('torch', 'mlflow'):\n"
        "            print('IMPORT', name, flush=True)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Hook())\n"
        "from attention_ref.cli.main import main\n"
        "sys.exit(main(['train', '--max-steps', '1', '--data', 'missing.txt']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "attnref train: loading the data, torch and MLflow…", out.stdout
    assert "IMPORT torch" in lines[1:]  # loading the data imports torch, after the line
    assert out.returncode == 2 and "--data points to missing.txt" in out.stderr


def test_sampling_a_run_without_a_model_says_how_to_resume_it(store, capsys):
    """A stopped training run has its last.pt, not a model: sample says to resume it."""
    mlflow.set_experiment("shakespeare")
    with mlflow.start_run(run_name="stopped") as run:
        mlflow.set_tag("attnref.kind", "train")
    run_id = run.info.run_id
    assert main(["sample", "--run-id", run_id]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"attnref train --resume {run_id}" in err
    assert "last.pt" in err


def test_quick_is_a_preset_that_options_beside_it_override(store, capsys):
    """--quick sets a short run (300 steps, an evaluation every 150 on 10 batches, 30 warm-up
    steps); an option given beside it wins; with --resume it is refused."""
    from attention_ref.cli.options import QUICK

    assert QUICK == {"max_steps": 300, "eval_interval": 150, "eval_batches": 10, "warmup_steps": 30}
    i = TINY.index("--eval-batches")
    args = [*TINY[:i], *TINY[i + 2 :]]  # the tiny model, quick's evaluation batches
    assert main(["train", *args, "--quick", "--max-steps", "20", "--eval-interval", "20"]) == 0
    (run,) = mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")
    params = run.data.params
    assert params["max_steps"] == "20" and params["eval_batches"] == "10"  # given, and quick's
    assert params["eval_interval"] == "20" and params["warmup_steps"] == "10"  # given beside
    assert main(["train", "--quick", "--resume", run.info.run_id]) == 2
    assert "leave out --quick" in capsys.readouterr().err
