"""The training commands' plumbing: config options, stop signals, progress output."""

from __future__ import annotations

import io
import os
import signal
from itertools import pairwise

import pytest
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from attention_ref.cli.options import check_writable_dir
from attention_ref.cli.progress import ArmReporters, Reporter, StopFlag
from attention_ref.lm.config import CONFIG_HELP, option_defaults
from attention_ref.lm.train import EvalMetrics, StartInfo, StepMetrics


def test_every_config_field_has_help_and_an_option_with_its_default(capsys):
    from attention_ref.cli.main import main

    defaults = option_defaults()
    assert list(CONFIG_HELP) == list(defaults)
    assert main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    for name in defaults:
        assert f"--{name.replace('_', '-')}" in out
    # the help says each default (an unescaped "[default: …]" was eaten as rich markup)
    assert "[default: 128]" in out and "[default: 6000]" in out and "[default: 0.005]" in out


def test_stop_flag_first_signal_stops_softly_second_ctrl_c_aborts():
    console = Console(file=io.StringIO())
    before = signal.getsignal(signal.SIGINT)
    with StopFlag(console) as stop:
        assert not stop()
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop() and stop.exit_code == 143
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before  # handlers restored
    assert "SIGTERM: stopping after this step" in console.file.getvalue()


def test_stop_flag_ctrl_c_exit_code():
    with StopFlag(Console(file=io.StringIO())) as stop:
        os.kill(os.getpid(), signal.SIGINT)
    assert stop() and stop.exit_code == 130


def feed(rep: Reporter, attention: str = "multihead") -> None:
    cb = rep.callbacks()
    assert cb.on_start and cb.on_step and cb.on_eval
    cb.on_start(
        StartInfo(n_params=1234, device="cpu", start_step=0, max_steps=4, attention=attention)
    )
    for step in range(1, 5):
        cb.on_step(
            step,
            StepMetrics(train_loss=3.0 - step / 10, lr=1e-3, grad_norm=1.0, tokens_per_sec=5000.0),
        )
    cb.on_eval(
        4,
        EvalMetrics(val_loss=2.5, train_eval_loss=2.4, best_val_loss=2.5),
        "\nROMEO: hi\nthou art",
    )


def test_reporter_on_a_terminal_draws_a_progress_bar():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120)
    with Reporter(console, "multihead", 4, log_every=1) as rep:
        assert rep.live
        feed(rep)
    out = buf.getvalue()
    assert "4/4" in out and "loss 2.600" in out and "5,000 tok/s" in out
    assert "eval step 4: train 2.4000  val 2.5000" in out and "step 1/4" not in out
    assert "elapsed" in out and "left" in out  # the two times say which is which


def test_reporter_off_a_terminal_prints_lines_every_n_steps():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False)
    rep = Reporter(console, None, 99, log_every=2)  # label and total: from on_start
    rep._print = lambda text: buf.write(text + "\n")  # type: ignore[method-assign]
    with rep:
        feed(rep, "none")
    lines = buf.getvalue().splitlines()
    assert lines[0] == "[none] 1,234 parameters on cpu"
    assert [line.split("  ")[0] for line in lines[1:3]] == ["[none] step 2/4", "[none] step 4/4"]
    assert lines[1].endswith(" tok/s  elapsed 0 s")
    # the last seconds say what they are spent on (issue 31 item 7)
    assert lines[3] == (
        "[none] step 4/4: the last step is done: the final evaluation and its sample…"
    )
    assert lines[4].startswith("[none] eval step 4: train 2.4000  val 2.5000  best 2.5000")
    assert "sample: 'ROMEO: hi\\nthou art'" in lines[4]  # more than the first line
    assert lines[5] == (
        "[none] step 4/4: writing the checkpoints and logging the run to MLflow "
        "(model, curves, sample)…"
    )


def test_writable_dir_check_creates_nothing(tmp_path):
    target = tmp_path / "a" / "b"
    assert check_writable_dir(target) == target and not (tmp_path / "a").exists()
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="it is a file"):
        check_writable_dir(tmp_path / "f")
    with pytest.raises(ValueError, match="does not allow it"):
        check_writable_dir(tmp_path / "f" / "sub")


def test_smoothing_keeps_constants_and_does_not_lag():
    from attention_ref.experiments.plots import smooth

    assert smooth([2.0] * 10, 5) == pytest.approx([2.0] * 10)
    # a falling line stays where it is: a trailing (or exponential) average would sit above it
    ramp = [3.0 - 0.01 * t for t in range(200)]
    assert smooth(ramp, 50) == pytest.approx(ramp)
    s = smooth([0.0] * 50 + [1.0] * 50, 10)
    assert s[44] == 0.0 and s[55] == 1.0 and s[49] < 0.5 < s[50]  # the step stays at step 50
    assert all(a <= b for a, b in pairwise(s))
    assert smooth([3.0, 1.0], 1) == [3.0, 1.0]
    noisy = [1.0 + (0.5 if t % 2 else -0.5) for t in range(100)]
    assert max(abs(v - 1.0) for v in smooth(noisy, 10)[5:-5]) < 0.05  # the noise averages out


def test_arm_headings_number_the_arms():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False)
    with ArmReporters(console, 4, 2, ["1", "2"], {"1": "h1", "2": "h2"}) as reporters:
        reporters.callbacks_for("1")
        reporters.callbacks_for("2")
    assert buf.getvalue().splitlines() == ["arm 1/2: h1", "arm 2/2: h2"]


def render_line(progress: Progress, task: TaskID, width: int) -> str:
    """What a terminal ``width`` columns wide shows of ``progress`` mid-run of the default
    6000 steps, every field at a realistic width."""
    progress.update(task, completed=300, loss="2.094", val="2.130", tps="16,323")
    out = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    out.print(progress.make_tasks_table(progress.tasks))
    (line,) = out.export_text().rstrip("\n").splitlines()
    return line.rstrip()


def progress_line(width: int, label: str = "multihead", total: int = 6000) -> str:
    """The reporter's progress line on a terminal ``width`` columns wide."""
    console = Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)
    rep = Reporter(console, label, total, log_every=100)
    progress = rep.make_progress()
    assert rep.task is not None
    return render_line(progress, rep.task, width)


def test_the_progress_line_fits_80_columns_and_uses_120():
    narrow, wide = progress_line(80), progress_line(120)
    assert len(narrow) < 80 and len(wide) < 120  # nothing cut, nothing wrapped
    for line in (narrow, wide):  # what a person reads first is always there, whole
        assert line.startswith("multihead ") and " 300/6000 " in line
        assert "loss 2.094  val 2.130" in line and "…" not in line
    assert "left " in narrow and "tok/s" not in narrow and "elapsed" not in narrow
    assert "16,323 tok/s" in wide and "elapsed " in wide and "left " in wide
    bar = [line.index(" 300/6000") - len("multihead ") for line in (narrow, wide)]
    assert 10 <= bar[0] < bar[1] <= 40  # the bar takes the room that is left
    # the control: the line as it was (every field, rich's 40-column bar) is cut at 80
    old = Progress(
        TextColumn("[bold]multihead[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}  val {task.fields[val]}"),
        TextColumn("{task.fields[tps]} tok/s"),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=Console(file=io.StringIO(), width=80),
    )
    task = old.add_task("multihead", total=6000, loss="-", val="-", tps="-")
    cut = render_line(old, task, 80)
    assert "…" in cut or "left" not in cut, cut


@pytest.mark.parametrize("width", [60, 80, 100, 120, 200])
def test_the_progress_line_never_overflows(width):
    for label, total in (("multihead", 6000), ("h=16", 100_000), ("uniform", 5)):
        line = progress_line(width, label, total)
        assert len(line) < width and "…" not in line, (width, line)
        assert line.startswith(f"{label} ") and "loss 2.094  val 2.130" in line
