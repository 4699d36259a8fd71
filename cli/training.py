"""Plumbing of the training commands: config options, stop signals, progress output.

* `config_options` adds one ``--option`` per `attention_ref.train.TrainConfig`
  field to a command (defaults ``None``: "not given"), so ``train`` and ``ablation`` share
  them and ``--resume`` can tell which were given.
* `StopFlag`: the first Ctrl-C or SIGTERM asks the loop to stop after the current step
  (a checkpoint is written and the run is marked KILLED); a second Ctrl-C aborts at once.
* `Reporter`: a rich progress bar on a terminal; plain log lines every N steps
  otherwise (CI logs, pipes).

No torch or mlflow import here: ``attnref --help`` stays fast.
"""

from __future__ import annotations

import functools
import inspect
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import MISSING, fields
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from attention_ref.config import CONFIG_HELP, TrainConfig

if TYPE_CHECKING:
    from attention_ref.train import Callbacks

PANEL = "Model and training (defaults: the homework's Q02)"


def config_options(exclude: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Any]:
    """Give a command one option per ``TrainConfig`` field; it receives them as
    ``config_overrides`` (only those given on the command line)."""
    names = [f.name for f in fields(TrainConfig) if f.name not in exclude]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != "config_overrides"]
        extra = []
        for f in fields(TrainConfig):
            if f.name not in names:
                continue
            assert f.default is not MISSING
            kind = type(f.default)
            option = typer.Option(
                f"--{f.name.replace('_', '-')}",
                help=f"{CONFIG_HELP[f.name]} [default: {f.default}]",
                show_default=False,
                rich_help_panel=PANEL,
            )
            extra.append(
                inspect.Parameter(
                    f.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None,
                    annotation=Annotated[kind | None, option],  # type: ignore[valid-type]
                )
            )

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {n: kwargs.pop(n) for n in names if n in kwargs}
            overrides = {k: v for k, v in given.items() if v is not None}
            return func(*args, config_overrides=overrides, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=own + extra)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def check_writable_dir(path: Path) -> Path:
    """``ValueError`` unless ``path`` is a directory we can write, or can be created as one.

    Nothing is created here: the check runs before any work starts.
    """
    p = path.expanduser().absolute()
    probe = p
    while not probe.exists():
        probe = probe.parent
    if probe == p and not p.is_dir():
        raise ValueError(f"--out-dir {path} is not writable (it is a file, not a directory)")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"--out-dir {path} is not writable ({probe} does not allow it)")
    return path


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
            f"[yellow]{name}: stopping after this step and saving a checkpoint "
            "(Ctrl-C again to abort at once)[/]",
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


class Reporter:
    """Progress of one run: a rich bar on a terminal, else a line every ``log_every`` steps."""

    def __init__(self, console: Console, label: str, total_steps: int, log_every: int) -> None:
        self.console, self.label, self.total, self.log_every = (
            console,
            label,
            total_steps,
            log_every,
        )
        self.live = console.is_terminal
        self.progress: Progress | None = None
        self.task: Any = None
        self.t0 = time.perf_counter()

    def __enter__(self) -> Reporter:
        if self.live:
            self.progress = Progress(
                TextColumn(f"[bold]{self.label}[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("loss {task.fields[loss]}  val {task.fields[val]}"),
                TextColumn("{task.fields[tps]} tok/s"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
            )
            self.progress.start()
            self.task = self.progress.add_task(
                self.label, total=self.total, loss="-", val="-", tps="-"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def _print(self, text: str) -> None:
        if self.progress is not None:
            self.progress.console.print(text, highlight=False)
        else:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def callbacks(self) -> Callbacks:
        """The hooks that feed this reporter."""
        from attention_ref.train import Callbacks

        def on_start(info: dict[str, Any]) -> None:
            start, self.total = info["start_step"], info["max_steps"]
            self.label = info["attention"]  # a resumed run says what it is
            note = f", resuming at step {start}" if start else ""
            self._print(f"[{self.label}] {info['n_params']:,} parameters on {info['device']}{note}")
            if self.progress is not None:
                self.progress.update(self.task, completed=start, total=self.total)

        def on_step(step: int, m: dict[str, float]) -> None:
            if self.progress is not None:
                self.progress.update(
                    self.task,
                    completed=step,
                    loss=f"{m['train_loss']:.3f}",
                    tps=f"{m['tokens_per_sec']:,.0f}",
                )
            elif step % self.log_every == 0 or step == self.total:
                self._print(
                    f"[{self.label}] step {step}/{self.total}  loss {m['train_loss']:.4f}  "
                    f"lr {m['lr']:.2e}  {m['tokens_per_sec']:,.0f} tok/s  "
                    f"{time.perf_counter() - self.t0:.0f} s"
                )

        def on_eval(step: int, m: dict[str, float], sample: str) -> None:
            if self.progress is not None:
                self.progress.update(self.task, val=f"{m['val_loss']:.3f}")
            first = sample.strip().splitlines()[0][:60] if sample.strip() else ""
            self._print(
                f"[{self.label}] eval step {step}: train {m['train_eval_loss']:.4f}  "
                f"val {m['val_loss']:.4f}  best {m['best_val_loss']:.4f}  sample: {first!r}"
            )

        return Callbacks(on_start=on_start, on_step=on_step, on_eval=on_eval)


def download_progress(console: Console) -> Callable[[int, int | None], None]:
    """A progress callback for the one-time data download (bytes done, total)."""
    state: dict[str, Any] = {"progress": None, "task": None}

    def update(done: int, total: int | None) -> None:
        if state["progress"] is None:
            console.print("downloading Tiny Shakespeare (1.1 MB, verified by sha256)…")
            state["progress"] = Progress(BarColumn(), MofNCompleteColumn(), console=console)
            state["progress"].start()
            state["task"] = state["progress"].add_task("download", total=total)
        state["progress"].update(state["task"], completed=done)
        if total is not None and done >= total:
            state["progress"].stop()

    return update
