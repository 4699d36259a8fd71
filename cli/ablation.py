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

    from attention_ref.experiments.sweep import Sweep
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
    names = [] if variant_sweep else _parse_arms(arms)
    heads_list = _parse_heads(heads) if heads is not None else None
    check_log_every(log_every)
    if seeds < 1:
        raise CLIError(f"--seeds must be a positive number of seeds, got {seeds}")
    overrides = dict(config_overrides or {})
    # defaults < --preset < --quick < the options given, as `attnref train` reads them
    cfg, warmup_note = fit_warmup(
        recipe(preset, quick, overrides), given="warmup_steps" in overrides
    )
    from attention_ref.experiments.sweep import ablation_sweep, heads_sweep, variants_sweep

    # the sweep refuses what it cannot run (a number of heads that does not divide n_embd,
    # --kv-heads with --heads, a variant the model cannot build) before any data is read
    if heads_list is not None:
        sweep = heads_sweep(cfg, heads_list)
    elif variant_sweep:
        sweep = variants_sweep(cfg)
    else:
        sweep = ablation_sweep(cfg, names)
    check_writable_dir(out_dir)
    from attention_ref.cli.progress import loading, make_console

    console = make_console()
    loading(console, "attnref ablation")
    if warmup_note is not None:
        console.print(f"attnref ablation: {warmup_note}")
    dataset = load_data(data, console)
    cfg.check_fits(dataset.smallest_split)
    from attention_ref.lm.train import resolve_device

    resolve_device(cfg.device)
    connect_store(tracking_uri, experiment or DEFAULT_EXPERIMENT)
    _run(sweep, dataset, out_dir, log_every, console, seeds)


#: what a finished sweep tells its user to do next (``{cmd}``: how attnref is run here,
#: ``{run}``: the parent's id, ``{arm}``: its first arm)
NEXT: dict[str, str] = {
    "ablation": "write the Q03 answer with: {cmd} report\n"
    "sample an arm:\n  {cmd} sample --run-id {run} --arm {arm}",
    "heads_sweep": "does the number of heads matter? {cmd} report",
    "variants": "sample an arm:\n  {cmd} sample --run-id {run} --arm {arm}",
}


def _run(
    sweep: Sweep, dataset: CharData, out_dir: Path, log_every: int, console: Console, seeds: int
) -> None:
    """Any sweep: its runs with their progress, then its comparison (`comparison`), printed;
    a stopped or failed run ends it with its status."""
    from attention_ref.cli.progress import ArmReporters, StopFlag, command, ui_hint
    from attention_ref.experiments.ablation import run_sweep
    from attention_ref.experiments.names import RunStatus
    from attention_ref.experiments.store import DEFAULT_TRACKING_URI, current_uri
    from attention_ref.experiments.sweep import comparison

    keys = sweep.keys(seeds)
    steps = next(iter(sweep.arms.values())).max_steps
    stop = StopFlag(console)
    with stop, ArmReporters(console, steps, log_every, list(keys), keys) as reporters:
        outcome = run_sweep(
            sweep,
            dataset,
            out_root=out_dir,
            callbacks_for=reporters.callbacks_for,
            should_stop=stop,
            on_run_start=_announcer(console, sweep.parent, list(keys)),
            seeds=seeds,
        )
    if outcome.rows:
        said = comparison(sweep.kind, outcome.rows, outcome.bigram_floor)
        if said.table:
            _print_markdown(console, said.table)
        for sentence in said.sentences:
            console.print(sentence, highlight=False, markup=False)
    if outcome.status != RunStatus.FINISHED:
        console.print(f"{sweep.parent} {outcome.parent_run_id} {outcome.status}: {outcome.failed}")
        raise typer.Exit(stop.exit_code if stop() else 1)
    console.print(
        f"{sweep.parent} run {outcome.parent_run_id}: comparison.md and plots/loss_curves.png "
        "logged",
        highlight=False,
    )
    then = NEXT[sweep.kind].format(
        cmd=command(), run=outcome.parent_run_id, arm=next(iter(sweep.arms))
    )
    console.print(then, highlight=False, markup=False)
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
