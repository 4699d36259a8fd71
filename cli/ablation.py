"""``attnref ablation``: Q03, the same model with attention, without it, with uniform weights."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.errors import CLIError
from cli.options import (
    DEFAULT_EXPERIMENT,
    DataPath,
    Experiment,
    LogEvery,
    OutDir,
    TrackingUri,
    check_log_every,
    check_writable_dir,
    config_options,
    connect_store,
    load_data,
)


def _parse_arms(arms: str) -> list[str]:
    from attention_ref.lm.config import ATTENTION_MODES

    names = [a.strip() for a in arms.split(",") if a.strip()]
    bad = [a for a in names if a not in ATTENTION_MODES]
    if not names or bad or len(set(names)) != len(names):
        raise CLIError(
            f"--arms must list distinct modes among {', '.join(ATTENTION_MODES)}, got {arms!r}"
        )
    return names


@config_options(exclude=("attention",))
def ablation(
    arms: Annotated[
        str, typer.Option("--arms", help="Attention modes to compare, comma-separated.")
    ] = "multihead,none,uniform",
    data: DataPath = None,
    out_dir: OutDir = Path("runs"),
    tracking_uri: TrackingUri = None,
    experiment: Experiment = None,
    log_every: LogEvery = 100,
    config_overrides: dict[str, Any] | None = None,
) -> None:
    """Q03: the same model, seed and steps with attention, without it, and with uniform weights.

    One parent MLflow run with a nested run per arm; at the end a comparison table and the
    overlaid loss curves, printed and logged to the parent.
    """
    from attention_ref.lm.config import TrainConfig

    names = _parse_arms(arms)
    check_log_every(log_every)
    cfg = TrainConfig().with_options(**(config_overrides or {}))
    check_writable_dir(out_dir)
    from cli.progress import ArmReporters, StopFlag, make_console, ui_hint

    console = make_console()
    dataset = load_data(data, console)
    cfg.check_fits(dataset.smallest_split)
    from attention_ref.lm.train import resolve_device

    resolve_device(cfg.device)
    connect_store(tracking_uri, experiment or DEFAULT_EXPERIMENT)
    from attention_ref.experiments.ablation import run_ablation
    from attention_ref.experiments.names import RunStatus
    from attention_ref.experiments.report import comparison_markdown
    from attention_ref.experiments.store import DEFAULT_TRACKING_URI, current_uri

    stop = StopFlag(console)
    with stop, ArmReporters(console, cfg.max_steps, log_every) as reporters:
        outcome = run_ablation(
            cfg, dataset, arms=names, out_root=out_dir, callbacks_for=reporters.callbacks_for,
            should_stop=stop,
        )  # fmt: skip
    if outcome.rows:
        table = comparison_markdown(outcome.rows, outcome.bigram_floor)
        if console.is_terminal:
            from rich.markdown import Markdown

            console.print(Markdown(table))
        else:  # logs and pipes get the markdown itself, whole and copy-pasteable
            sys.stdout.write(table)
    if outcome.status != RunStatus.FINISHED:
        console.print(f"ablation {outcome.parent_run_id} {outcome.status}: {outcome.failed}")
        raise typer.Exit(stop.exit_code if stop() else 1)
    console.print(
        f"ablation run {outcome.parent_run_id}: comparison.md and plots/loss_curves.png logged; "
        "write the Q03 answer with: attnref report"
    )
    ui_hint(console, current_uri(), DEFAULT_TRACKING_URI)
