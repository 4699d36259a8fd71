"""``attnref ablation``: Q03, the same model with attention, without it, with uniform weights;
``--heads 1,2,4,8``: the heads sweep, the Q02 model with each number of heads."""

from __future__ import annotations

import sys
from collections.abc import Callable
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

    from attention_ref.lm.config import TrainConfig
    from attention_ref.lm.data import CharData


def _parse_arms(arms: str) -> list[str]:
    from attention_ref.lm.config import ATTENTION_MODES

    names = [a.strip() for a in arms.split(",") if a.strip()]
    bad = [a for a in names if a not in ATTENTION_MODES]
    if not names or bad or len(set(names)) != len(names):
        raise CLIError(
            f"--arms must list distinct modes among {', '.join(ATTENTION_MODES)}, got {arms!r}"
        )
    return names


def _parse_heads(heads: str) -> list[int]:
    try:
        values = [int(h) for h in heads.split(",") if h.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1 or len(set(values)) != len(values):
        raise CLIError(
            f"--heads must list distinct positive numbers of heads, e.g. 1,2,4,8, got {heads!r}"
        )
    return values


@config_options(exclude=("attention",))
def ablation(
    arms: Annotated[
        str,
        typer.Option(
            "--arms",
            help="Attention modes to compare, comma-separated; or 'variants': Q02's model as "
            "it is (mha) and with one change of today's attention each: one K/V head (mqa), "
            "RoPE (rope), a sliding window of a quarter of the block (window).",
        ),
    ] = "multihead,none,uniform",
    heads: Annotated[
        str | None,
        typer.Option(
            "--heads",
            help="The heads sweep instead: the Q02 model (multihead) with each of these numbers "
            "of heads, comma-separated (1,2,4,8); --n-embd must be divisible by each. "
            "\\[default: no sweep]",
            show_default=False,
            metavar="LIST",
        ),
    ] = None,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            help="Train every arm on this many seeds (--seed, --seed + 1, …), each a run tagged "
            "with its seed and its arm's group; the table then gives each arm's mean and "
            "spread, and an arm is called better only beyond that spread.",
            metavar="N",
        ),
    ] = 1,
    quick: Quick = False,
    preset: Preset = None,
    data: DataPath = None,
    out_dir: OutDir = Path("runs"),
    tracking_uri: TrackingUri = None,
    experiment: Experiment = None,
    log_every: LogEvery = 100,
    config_overrides: dict[str, Any] | None = None,
) -> None:
    """Q03: the same model, seed and steps with attention, without it, and with uniform weights.

    One parent MLflow run with a nested run per arm; at the end a comparison table and the
    overlaid loss curves, printed and logged to the parent. With --heads, the arms are the
    Q02 model with each number of heads (the same parameter count). With --arms variants, Q02's
    model as it is and with one change of today's attention each (one K/V head, RoPE, a
    sliding window). --quick and --preset are train's: every arm trains that recipe.
    """
    from attention_ref.lm.config import fit_warmup

    if heads is not None and arms != "multihead,none,uniform":
        raise CLIError("--heads sweeps the multihead model; leave out --arms")
    variant_sweep = arms.strip() == "variants"
    given = sorted(set(config_overrides or {}) & {"kv_heads", "pos", "window"})
    if variant_sweep and given:
        options = ", ".join("--" + g.replace("_", "-") for g in given)
        raise CLIError(
            f"--arms variants sets --kv-heads, --pos and --window itself; leave out {options}"
        )
    names = ["mha", "mqa", "rope", "window"] if variant_sweep else _parse_arms(arms)
    heads_list = _parse_heads(heads) if heads is not None else None
    check_log_every(log_every)
    if seeds < 1:
        raise CLIError(f"--seeds must be a positive number of seeds, got {seeds}")
    overrides = dict(config_overrides or {})
    # defaults < --preset < --quick < the options given, as `attnref train` reads them
    cfg, warmup_note = fit_warmup(
        recipe(preset, quick, overrides), given="warmup_steps" in overrides
    )
    if heads_list is not None:
        for h in heads_list:  # a number of heads that does not divide n_embd fails here
            cfg.with_options(n_head=h, attention="multihead")
    check_writable_dir(out_dir)
    from attention_ref.cli.progress import ArmReporters, StopFlag, loading, make_console, ui_hint

    console = make_console()
    loading(console, "attnref ablation")
    if warmup_note is not None:
        console.print(f"attnref ablation: {warmup_note}")
    dataset = load_data(data, console)
    cfg.check_fits(dataset.smallest_split)
    from attention_ref.lm.train import resolve_device

    resolve_device(cfg.device)
    connect_store(tracking_uri, experiment or DEFAULT_EXPERIMENT)
    if heads_list is not None:
        _heads_sweep(cfg, dataset, heads_list, out_dir, log_every, console, seeds)
        return
    if variant_sweep:
        _variants_sweep(cfg, dataset, out_dir, log_every, console, seeds)
        return
    from attention_ref.experiments.ablation import run_ablation, seed_key
    from attention_ref.experiments.names import RunStatus
    from attention_ref.experiments.report import comparison_markdown
    from attention_ref.experiments.store import DEFAULT_TRACKING_URI, current_uri

    stop = StopFlag(console)
    keys = [seed_key(a, cfg.seed + i, seeds) for a in names for i in range(seeds)]
    with stop, ArmReporters(console, cfg.max_steps, log_every, keys) as reporters:
        outcome = run_ablation(
            cfg,
            dataset,
            arms=names,
            out_root=out_dir,
            callbacks_for=reporters.callbacks_for,
            should_stop=stop,
            on_run_start=_announcer(console, "ablation", keys),
            seeds=seeds,
        )
    if outcome.rows:
        _print_markdown(console, comparison_markdown(outcome.rows, outcome.bigram_floor))
    if outcome.status != RunStatus.FINISHED:
        console.print(f"ablation {outcome.parent_run_id} {outcome.status}: {outcome.failed}")
        raise typer.Exit(stop.exit_code if stop() else 1)
    from attention_ref.cli.progress import command

    console.print(
        f"ablation run {outcome.parent_run_id}: comparison.md and plots/loss_curves.png logged; "
        f"write the Q03 answer with: {command()} report"
    )
    console.print(
        f"sample an arm:\n  {command()} sample --run-id {outcome.parent_run_id} --arm {names[0]}"
    )
    ui_hint(console, current_uri(), DEFAULT_TRACKING_URI, _experiment_of(outcome.parent_run_id))


def _announcer(console: Console, parent: str, arms: list[str]) -> Callable[[str, str], None]:
    """``on_run_start`` of a sweep: the parent's id and store, then each arm's id."""
    from attention_ref.cli.progress import run_started
    from attention_ref.experiments.store import current_uri

    def announce(arm: str, run_id: str) -> None:
        if not arm:
            import mlflow

            exp = mlflow.get_experiment(mlflow.active_run().info.experiment_id).name  # type: ignore[union-attr]
            run_started(console, run_id, current_uri(), exp, f"started {parent}")
        else:
            console.print(f"{parent}/{arm}: MLflow run {run_id}")

    return announce


def _variants_sweep(
    cfg: TrainConfig,
    dataset: CharData,
    out_dir: Path,
    log_every: int,
    console: Console,
    seeds: int = 1,
) -> None:
    """``--arms variants``: the sweep, its table and sentences."""
    from attention_ref.cli.progress import ArmReporters, StopFlag, ui_hint
    from attention_ref.experiments.ablation import run_variants_sweep, seed_key, variants
    from attention_ref.experiments.names import RunStatus
    from attention_ref.experiments.store import DEFAULT_TRACKING_URI, current_uri
    from attention_ref.experiments.variants_report import variants_sentences, variants_table

    arms = [seed_key(a, cfg.seed + i, seeds) for a in variants(cfg) for i in range(seeds)]
    stop = StopFlag(console)
    with stop, ArmReporters(console, cfg.max_steps, log_every, arms) as reporters:
        outcome = run_variants_sweep(
            cfg,
            dataset,
            out_root=out_dir,
            callbacks_for=reporters.callbacks_for,
            should_stop=stop,
            on_run_start=_announcer(console, "variants", arms),
            seeds=seeds,
        )
    if any(r.attention == "mha" for r in outcome.rows):
        _print_markdown(console, variants_table(outcome.rows))
        for sentence in variants_sentences(outcome.rows):
            console.print(sentence, highlight=False)
    if outcome.status != RunStatus.FINISHED:
        console.print(f"variants {outcome.parent_run_id} {outcome.status}: {outcome.failed}")
        raise typer.Exit(stop.exit_code if stop() else 1)
    console.print(
        f"variants run {outcome.parent_run_id}: comparison.md and plots/loss_curves.png logged"
    )
    ui_hint(console, current_uri(), DEFAULT_TRACKING_URI, _experiment_of(outcome.parent_run_id))


def _heads_sweep(
    cfg: TrainConfig,
    dataset: CharData,
    heads: list[int],
    out_dir: Path,
    log_every: int,
    console: Console,
    seeds: int = 1,
) -> None:
    """``--heads``: the sweep, its table and how to read the result."""
    from attention_ref.cli.progress import ArmReporters, StopFlag, command, ui_hint
    from attention_ref.experiments.ablation import run_heads_sweep, seed_key
    from attention_ref.experiments.comparison_log import heads_arm
    from attention_ref.experiments.heads_report import heads_table
    from attention_ref.experiments.names import RunStatus
    from attention_ref.experiments.store import DEFAULT_TRACKING_URI, current_uri

    arms = [seed_key(str(h), cfg.seed + i, seeds) for h in heads for i in range(seeds)]
    labels = {
        seed_key(str(h), cfg.seed + i, seeds): seed_key(heads_arm(h), cfg.seed + i, seeds)
        for h in heads
        for i in range(seeds)
    }
    stop = StopFlag(console)
    with stop, ArmReporters(console, cfg.max_steps, log_every, arms, labels) as reporters:
        outcome = run_heads_sweep(
            cfg,
            dataset,
            heads=heads,
            out_root=out_dir,
            callbacks_for=reporters.callbacks_for,
            should_stop=stop,
            on_run_start=_announcer(console, "heads", arms),
            seeds=seeds,
        )
    if outcome.rows:
        _print_markdown(console, heads_table(outcome.rows))
        counts = sorted({r.n_params for r in outcome.rows})
        console.print(
            f"parameters: {counts[0]:,} in every arm"
            if len(counts) == 1
            else "parameters differ: "
            + ", ".join(dict.fromkeys(f"h={r.heads} {r.n_params:,}" for r in outcome.rows))
        )
    if outcome.status != RunStatus.FINISHED:
        console.print(f"heads sweep {outcome.parent_run_id} {outcome.status}: {outcome.failed}")
        raise typer.Exit(stop.exit_code if stop() else 1)
    console.print(
        f"heads sweep run {outcome.parent_run_id}: comparison.md and plots/loss_curves.png "
        f"logged; does the number of heads matter? {command()} report"
    )
    ui_hint(console, current_uri(), DEFAULT_TRACKING_URI, _experiment_of(outcome.parent_run_id))


def _print_markdown(console: Console, table: str) -> None:
    """A sweep's table: at a terminal fitted to its width, nothing cut short (`print_markdown`);
    logs and pipes get the markdown itself, whole and copy-pasteable."""
    if console.is_terminal:
        from attention_ref.cli.tables import print_markdown

        print_markdown(console, table, elsewhere="attnref report -o FILE has every column")
    else:
        sys.stdout.write(table)


def _experiment_of(run_id: str) -> str:
    import mlflow

    return mlflow.get_run(run_id).info.experiment_id
