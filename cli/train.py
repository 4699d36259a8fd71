"""``attnref train``: Q02, one training run tracked in MLflow (or an interrupted one resumed)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.options import (
    DEFAULT_EXPERIMENT,
    DataPath,
    Experiment,
    LogEvery,
    OutDir,
    Preset,
    Quick,
    TrackingUri,
    check_log_every,
    check_writable_dir,
    config_options,
    connect_store,
    load_data,
    recipe,
)

if TYPE_CHECKING:
    from rich.console import Console

    from attention_ref.cli.progress import StopFlag
    from attention_ref.experiments.runs import RunOutcome


def _refused_with_resume(
    overrides: dict[str, Any],
    no_attention: bool,
    run_name: str | None,
    experiment: str | None,
    register: str | None = None,
) -> list[str]:
    """The options given with ``--resume`` that would change the run (all but device/threads)."""
    from attention_ref.experiments.runs import RESUMABLE_OPTIONS

    refused = ["--" + k.replace("_", "-") for k in overrides if k not in RESUMABLE_OPTIONS]
    if no_attention:
        refused.append("--no-attention")
    if run_name is not None:
        refused.append("--run-name")
    if experiment is not None:
        refused.append("--experiment")
    if register is not None:
        refused.append("--register")
    return refused


@config_options()
def train(
    no_attention: Annotated[
        bool,
        typer.Option(
            "--no-attention",
            help="Q03: remove the attention sub-layer (same as --attention none). \\[default: off]",
        ),
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            help="Continue an interrupted run (its MLflow run id, in any experiment); only "
            "--device and --threads may change. \\[default: a new run]",
            show_default=False,
            metavar="RUN_ID",
        ),
    ] = None,
    run_name: Annotated[
        str | None,
        typer.Option(
            "--run-name",
            help="MLflow run name. \\[default: q02-multihead, q03-none or q03-uniform]",
            show_default=False,
            metavar="NAME",
        ),
    ] = None,
    register: Annotated[
        str | None,
        typer.Option(
            "--register",
            help="Also register the trained model in the MLflow Model Registry under this "
            "name (a new version). \\[default: not registered]",
            show_default=False,
            metavar="NAME",
        ),
    ] = None,
    quick: Quick = False,
    preset: Preset = None,
    data: DataPath = None,
    out_dir: OutDir = Path("runs"),
    tracking_uri: TrackingUri = None,
    experiment: Experiment = None,
    log_every: LogEvery = 100,
    config_overrides: dict[str, Any] | None = None,
) -> None:
    """Q02: train the character GPT on Shakespeare, tracked in MLflow.

    Ctrl-C or SIGTERM saves a checkpoint, marks the run KILLED; --resume RUN_ID continues it.

    A NaN/inf loss stops the run, marks it FAILED and says at which step.
    """
    from attention_ref.lm.config import fit_warmup

    overrides = dict(config_overrides or {})
    warmup_given = "warmup_steps" in overrides
    for flag, given in (("--quick", quick), ("--preset", preset is not None)):
        if given and resume is not None:
            raise CLIError(f"--resume continues the run's own configuration; leave out {flag}")
    warmup_note = None
    check_log_every(log_every)
    if resume is not None:
        refused = _refused_with_resume(overrides, no_attention, run_name, experiment, register)
        if refused:
            raise CLIError(
                f"--resume continues the run's own configuration; leave out {', '.join(refused)}"
            )
        cfg = None
    else:
        if no_attention:
            if overrides.get("attention", "none") != "none":
                raise CLIError("--no-attention contradicts --attention " + overrides["attention"])
            overrides["attention"] = "none"
        cfg = recipe(preset, quick, overrides)  # defaults < preset < --quick < options
        # a new run only: a resumed one keeps its schedule
        cfg, warmup_note = fit_warmup(cfg, given=warmup_given)
        if run_name is None and preset not in (None, "q02"):  # not q02-multihead: not Q02's
            arm = "" if cfg.attention == "multihead" else f"-{cfg.attention}"
            run_name = f"{preset}{arm}"
    check_writable_dir(out_dir)
    from attention_ref.cli.progress import (
        Reporter,
        StopFlag,
        loading,
        make_console,
        phase,
        run_started,
    )

    console = make_console()
    loading(console, "attnref train")
    if warmup_note is not None:
        console.print(f"attnref train: {warmup_note}")
    dataset = load_data(data, console)
    read = dataset.train.numel() + dataset.val.numel()
    phase(console, "attnref train", f"{read:,} characters read; opening the MLflow store")
    connect_store(tracking_uri, None if resume else (experiment or DEFAULT_EXPERIMENT))
    from attention_ref.experiments.runs import prepare_resume, run_training
    from attention_ref.experiments.store import TrackingError
    from attention_ref.lm.train import resolve_device

    point = None
    try:
        if resume is not None:
            point = prepare_resume(resume, dataset, out_dir, **overrides)
            cfg = point.config
        else:
            assert cfg is not None
            cfg.check_fits(dataset.smallest_split)
    except TrackingError as e:
        raise CLIError(str(e)) from None
    resolve_device(cfg.device)
    _probe_out_dir(out_dir)  # the last check: every other one passed, and no run exists yet
    import mlflow

    from attention_ref.experiments.store import current_uri

    def started(run_id: str) -> None:
        name = mlflow.active_run().info.run_name  # type: ignore[union-attr]
        exp = mlflow.get_experiment(mlflow.active_run().info.experiment_id).name  # type: ignore[union-attr]
        verb = "resumed" if point is not None else "started"
        run_started(console, run_id, current_uri(), exp, f"{verb} {name}")

    stop = StopFlag(console)
    try:
        with stop, Reporter(console, str(cfg.attention), cfg.max_steps, log_every) as rep:
            outcome = run_training(
                cfg,
                dataset,
                out_root=out_dir,
                run_name=run_name,
                callbacks=rep.callbacks(),
                should_stop=stop,
                resume=point,
                register=register,
                on_run_start=started,
                metrics_every=log_every,  # a CUDA graph's loss is read at the lines printed
            )
    except TrackingError as e:  # the store refused a write or went away: what it has, stays
        raise CLIError(str(e)) from None
    except KeyboardInterrupt as e:  # a second Ctrl-C: Typer would exit 130 without a word
        interrupted(e)
        raise typer.Exit(130) from None
    _finish(outcome, stop, console)


def interrupted(e: KeyboardInterrupt) -> None:
    """One line on stderr: the run stopped at once, and what it kept (`StoppedAtOnce` says)."""
    said = str(e)
    print(f"attnref: interrupted{': ' + said if said else ''}", file=sys.stderr)


def _probe_out_dir(out_dir: Path) -> None:
    """Create ``--out-dir`` and write a file in it: only a write tells (root passes every
    permission bit, and ``/proc`` refuses a file whatever its bits say)."""
    import os

    probe = out_dir / f".attnref-probe-{os.getpid()}"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"attnref")
        probe.unlink()
    except OSError as e:
        raise CLIError(f"--out-dir {out_dir} is not writable: {e.strerror or e}") from None


def _finish(outcome: RunOutcome, stop: StopFlag, console: Console) -> None:
    from attention_ref.cli.progress import command, ui_hint
    from attention_ref.experiments.names import RunStatus
    from attention_ref.experiments.store import DEFAULT_TRACKING_URI, current_uri

    if outcome.status == RunStatus.FAILED:
        print(
            f"attnref: error: {outcome.error} (MLflow run {outcome.run_id} marked FAILED)",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    r = outcome.result
    assert r is not None
    if outcome.status == RunStatus.KILLED:
        console.print(
            f"interrupted at step {r.steps_done}; checkpoint saved in "
            f"{outcome.out_dir}/last.pt and in the run's artifacts; MLflow run {outcome.run_id} "
            f"marked KILLED. Continue with: {command()} train --resume {outcome.run_id}"
        )
        raise typer.Exit(stop.exit_code)
    console.print(
        f"run {outcome.run_id} finished: {r.steps_done} steps, best val loss "
        f"{r.best_val_loss:.4f}, final val {r.final_val_loss:.4f}, train {r.final_train_loss:.4f}, "
        f"{r.n_params:,} parameters, {r.tokens_per_sec:,.0f} tokens/s, "
        f"wall time {r.wall_time_s:.0f} s"
    )
    if outcome.model_uri:
        console.print(f"logged model: {outcome.model_uri}")
    console.print(f"sample it:\n  {command()} sample --run-id {outcome.run_id}")
    ui_hint(console, current_uri(), DEFAULT_TRACKING_URI, _experiment_of(outcome.run_id))


def _experiment_of(run_id: str) -> str:
    import mlflow

    return mlflow.get_run(run_id).info.experiment_id
