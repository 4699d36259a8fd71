"""Progress and stop signals of the training commands.

* `StopFlag`: the first Ctrl-C or SIGTERM asks the loop to stop after the current step
  (a checkpoint is written and the run is marked KILLED); a second Ctrl-C aborts at once.
* `Reporter`: a rich progress bar on a terminal; plain log lines every N steps otherwise
  (CI logs, pipes). `ArmReporters` gives each arm of an ablation its own, one after the other.
* `download_progress` (a `DownloadProgress`) for the one-time data download; `make_console`,
  `loading` (the first line, printed before torch and MLflow are imported), `run_started` and
  the hints (`command`: ``attnref``, or its full path when the shell would not find it; `ui_hint`).

No torch or mlflow import here: ``attnref --help`` stays fast.
"""

from __future__ import annotations

import shutil
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

if TYPE_CHECKING:
    from attention_ref.lm.train import Callbacks, EvalMetrics, StartInfo, StepMetrics

#: characters of an evaluation's sample shown in its log line (newlines shown as ``\n``)
SAMPLE_SHOWN = 80


class _TrainingConsole(Console):
    """At a terminal, every line broken at spaces to its width (`attention_ref.cli.tables.say`: a
    word longer than a line, a URL or a path, keeps a line of its own, whole); to a pipe or a file,
    lines whole, for a program to read."""

    def print(self, *objects: Any, **kw: Any) -> None:  # type: ignore[override]
        if not self.is_terminal:
            return super().print(*objects, **kw)
        if len(objects) == 1 and isinstance(objects[0], str):
            from attention_ref.cli.tables import wrapped_lines

            kw["soft_wrap"] = True
            return super().print("\n".join(wrapped_lines(objects[0], self.width)), **kw)
        kw["soft_wrap"] = False  # a styled line: rich breaks it at spaces
        return super().print(*objects, **kw)


def make_console() -> Console:
    """The console of the training commands: no highlighting, no markup (a line's
    ``[multihead]``, a path or a sample's ``[/]`` is printed as written; a style is given as a
    `rich.text.Text`'s); lines whole to a pipe, broken at a terminal's width
    (`_TrainingConsole`)."""
    return _TrainingConsole(highlight=False, soft_wrap=True, markup=False)


def loading(console: Console, what: str) -> None:
    """The first line of a command that trains: what it is loading (torch and MLflow take
    seconds to import; the user sees this before they start)."""
    console.print(f"{what}: loading the data, torch and MLflow…")


def phase(console: Console, what: str, doing: str) -> None:
    """One line of what a command is doing in its first seconds (``{what}: {doing}…``)."""
    console.print(f"{what}: {doing}…", highlight=False, soft_wrap=True)


def command(name: str = "attnref") -> str:
    """How to call ``name`` (``attnref``, ``mlflow``) in a hint that works as printed: the bare
    name when the shell finds this environment's script under it, else the script's full path
    (a virtual environment that is not activated: ``/…/.venv/bin/attnref``)."""
    own = Path(sys.executable).with_name(name)
    found = shutil.which(name)
    if found is not None and (not own.exists() or Path(found).resolve() == own.resolve()):
        return name
    return str(own) if own.exists() else name


def run_started(console: Console, run_id: str, uri: str, experiment: str, what: str) -> None:
    """The line printed as a run starts: its id and where it is stored."""
    console.print(f"{what}: MLflow run {run_id} in {uri} (experiment {experiment})")


class StopFlag:
    """Callable ``should_stop`` for the loop, set by SIGINT/SIGTERM while installed."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def __call__(self) -> bool:
        return self.signum is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # the second Ctrl-C: stop now
        self.signum = signum
        name = signal.Signals(signum).name
        self.console.print(
            Text(
                f"{name}: stopping after this step and saving a checkpoint (Ctrl-C again to "
                "abort at once)",
                style="yellow",
            ),
            highlight=False,
        )

    def __enter__(self) -> StopFlag:
        for s in (signal.SIGINT, signal.SIGTERM):
            self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, h in self._previous.items():
            signal.signal(s, h)

    @property
    def exit_code(self) -> int:
        """128 + the signal number: 130 for Ctrl-C, 143 for SIGTERM."""
        return 128 + (self.signum or signal.SIGINT)


#: the width of each field of the progress line (its widest value) and the bar's limits
LOSS_WIDTH = len("loss 10.000  val 10.000")
TPS_WIDTH = len("1,000,000 tok/s")
ELAPSED_WIDTH = len("elapsed 10:00:00")
LEFT_WIDTH = len("left 10:00:00")
BAR_MIN, BAR_MAX = 10, 40


def progress_columns(width: int, label: str, total: int) -> list[ProgressColumn]:
    """The columns of the progress line for a terminal ``width`` columns wide.

    Always the label, the steps done and the losses; then, as room allows, the time left,
    the tokens per second and the time elapsed; the bar takes what remains (10 to 40
    columns, none when not even 10 remain). One column is kept free: a line that fills the
    last column wraps on some terminals.
    """
    steps = 2 * len(str(total)) + 1  # MofNCompleteColumn: "  300/6000"
    fields = {"label": len(label), "steps": steps, "loss": LOSS_WIDTH}
    budget = width - 1

    def needed(names: dict[str, int], bar: int) -> int:
        gaps = len(names) - 1 + (1 if bar else 0)  # one space between fields
        return sum(names.values()) + bar + gaps

    for name, w in (("left", LEFT_WIDTH), ("tps", TPS_WIDTH), ("elapsed", ELAPSED_WIDTH)):
        if needed({**fields, name: w}, BAR_MIN) <= budget:
            fields[name] = w
    room = budget - needed(fields, 0) - 1
    bar = min(BAR_MAX, room) if room >= BAR_MIN else 0
    columns: list[ProgressColumn] = [TextColumn(f"[bold]{label}[/]")]
    if bar:
        columns.append(BarColumn(bar_width=bar))
    columns += [
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}  val {task.fields[val]}"),
    ]
    if "tps" in fields:
        columns.append(TextColumn("{task.fields[tps]} tok/s"))
    if "elapsed" in fields:
        columns += [TextColumn("elapsed"), TimeElapsedColumn()]
    if "left" in fields:
        columns += [TextColumn("left"), TimeRemainingColumn()]
    return columns


class Reporter:
    """Progress of one run: a rich bar on a terminal, else a line every ``log_every`` steps.

    ``label`` prefixes every line; ``None`` takes the run's attention mode when it starts.
    """

    def __init__(
        self, console: Console, label: str | None, total_steps: int, log_every: int
    ) -> None:
        self.console, self.label, self.total, self.log_every = (
            console,
            label,
            total_steps,
            log_every,
        )
        self.fixed_label = label is not None
        self.label = label or "run"
        self.live = console.is_terminal
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.t0 = time.perf_counter()

    def make_progress(self) -> Progress:
        """The progress bar, its fields fitted to the console's width (`progress_columns`),
        its task added; not drawn yet."""
        progress = Progress(
            *progress_columns(self.console.width, self.label, self.total), console=self.console
        )
        self.task = progress.add_task(self.label, total=self.total, loss="-", val="-", tps="-")
        return progress

    def start(self) -> Reporter:
        """Draw the progress bar (on a terminal); ``with Reporter(...)`` calls it."""
        if self.live:
            self.progress = self.make_progress()
            self.progress.start()
        return self

    def stop(self) -> None:
        """Stop drawing the progress bar."""
        if self.progress is not None:
            self.progress.stop()

    def __enter__(self) -> Reporter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _print(self, text: str) -> None:
        if self.progress is not None:
            self.progress.console.print(text, highlight=False)
        else:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def callbacks(self) -> Callbacks:
        """The hooks that feed this reporter."""
        from attention_ref.lm.train import Callbacks

        def on_start(info: StartInfo) -> None:
            start, self.total = info.start_step, info.max_steps
            if not self.fixed_label:
                self.label = info.attention
            note = f", resuming at step {start}" if start else ""
            self._print(f"[{self.label}] {info.n_params:,} parameters on {info.device}{note}")
            if info.graph_note:  # the CUDA graph: it runs, or why the step runs eagerly
                self._print(f"[{self.label}] {info.graph_note}")
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, completed=start, total=self.total)

        def on_step(step: int, m: StepMetrics) -> None:
            self._step(step, m)
            if step == self.total:  # the last step: what the last seconds are spent on
                self._later(step, "the last step is done: the final evaluation and its sample")

        def on_eval(step: int, m: EvalMetrics, sample: str) -> None:
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, val=f"{m.val_loss:.3f}")
            text = sample.strip()
            shown = text[:SAMPLE_SHOWN] + ("…" if len(text) > SAMPLE_SHOWN else "")
            self._print(
                f"[{self.label}] eval step {step}: train {m.train_eval_loss:.4f}  "
                f"val {m.val_loss:.4f}  best {m.best_val_loss:.4f}  sample: {shown!r}"
            )
            if step == self.total:
                self._later(
                    step,
                    "writing the checkpoints and logging the run to MLflow (model, curves, sample)",
                )

        return Callbacks(on_start=on_start, on_step=on_step, on_eval=on_eval)

    def _step(self, step: int, m: StepMetrics) -> None:
        """The bar moved, or (off a terminal) a line every ``log_every`` steps and at the last."""
        if self.progress is not None and self.task is not None:
            self.progress.update(
                self.task,
                completed=step,
                loss=f"{m.train_loss:.3f}",
                tps=f"{m.tokens_per_sec:,.0f}",
            )
        elif step % self.log_every == 0 or step == self.total:
            self._print(
                f"[{self.label}] step {step}/{self.total}  loss {m.train_loss:.4f}  "
                f"lr {m.lr:.2e}  {m.tokens_per_sec:,.0f} tok/s  "
                f"elapsed {time.perf_counter() - self.t0:.0f} s"
            )

    def _later(self, step: int, doing: str) -> None:
        """A line of what the run does after its steps (once per thing said)."""
        said = getattr(self, "_said", set())
        if doing not in said:
            said.add(doing)
            self._said = said
            self._print(f"[{self.label}] step {step}/{self.total}: {doing}…")


class ArmReporters:
    """One `Reporter` per arm of a sweep, one after the other, each under a heading
    (``arm 2/3: none``); the last is closed on exit. ``labels`` maps an arm to its label."""

    def __init__(
        self,
        console: Console,
        total_steps: int,
        log_every: int,
        arms: Sequence[str],
        labels: dict[str, str] | None = None,
    ) -> None:
        self.console, self.total, self.log_every = console, total_steps, log_every
        self.arms, self.labels = list(arms), labels or {}
        self.current: Reporter | None = None

    def label(self, arm: str) -> str:
        """What the lines of ``arm`` are prefixed with (``none``, ``h=4``)."""
        return self.labels.get(arm, arm)

    def callbacks_for(self, arm: str) -> Callbacks:
        """Close the previous arm's reporter, print this arm's heading, open its reporter,
        return its hooks."""
        self.close()
        n = self.arms.index(arm) + 1 if arm in self.arms else 0
        self.console.print(Text(f"arm {n}/{len(self.arms)}: {self.label(arm)}", style="bold"))
        self.current = Reporter(self.console, self.label(arm), self.total, self.log_every)
        self.current.start()
        return self.current.callbacks()

    def close(self) -> None:
        """Stop the current arm's progress bar, if any."""
        if self.current is not None:
            self.current.stop()
            self.current = None

    def __enter__(self) -> ArmReporters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DownloadProgress:
    """The progress of the one-time data download: a line saying what comes, then a bar of
    the bytes (done, total), from the first chunk on. Called as ``progress(done, total)``;
    ``with`` it, the bar stops however the download ends (a cut one never reaches its total)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(BarColumn(), MofNCompleteColumn(), console=console)
        self.task: TaskID | None = None  # added at the first chunk

    def __call__(self, done: int, total: int | None) -> None:
        if self.task is None:
            self.console.print("downloading Tiny Shakespeare (1.1 MB, verified by sha256)…")
            self.bar.start()
            self.task = self.bar.add_task("download", total=total)
        self.bar.update(self.task, completed=done)
        if total is not None and done >= total:
            self.close()

    def close(self) -> None:
        """Stop the bar (if it was drawn); again is harmless."""
        if self.task is not None:
            self.bar.stop()

    def __enter__(self) -> DownloadProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def download_progress(console: Console) -> DownloadProgress:
    """A progress callback for the one-time data download (bytes done, total)."""
    return DownloadProgress(console)


def ui_hint(console: Console, uri: str, default_uri: str, experiment_id: str | None = None) -> None:
    """How to browse the runs: the ``mlflow ui`` line for a sqlite store (``default_uri``, the
    embedded one, or another file), else the URI; the page of ``experiment_id``'s runs; and
    how to list them."""
    from attention_ref.experiments.names import ui_experiment_url

    local = uri == default_uri or uri.startswith("sqlite:///")
    base = "http://127.0.0.1:5000" if local else uri
    page = ui_experiment_url(base, experiment_id) if experiment_id else base
    if local:  # each command and address on a line of its own: copied whole
        console.print(
            f"browse the runs:\n  {command('mlflow')} ui --backend-store-uri {uri}\n"
            f"then open\n  {page}"
        )
    else:
        console.print(f"runs are in {uri}:\n  {page}")
    console.print(f"list them:\n  {command()} runs")
