"""Any sweep (`attention_ref.experiments.sweep.Sweep`: Q03's ablation, the heads sweep, the
variants) run the one way: the same config, seed and steps per arm, one parent run.

`run_sweep`: the parent run (``ablation``, ``heads``, ``variants``) holds one nested child per
arm and seed (``ablation/multihead``, ``heads/4``, ``variants/rope seed 8``); at the end it gets
``comparison.md``/``comparison.json``, ``plots/loss_curves.png`` (the arms overlaid, with the
bigram baseline) and, per arm, the arm's final metrics under `arm_metric` names
(``none_best_val_loss``, ``h4_final_train_eval_loss``), written by
`attention_ref.experiments.comparison_log`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.comparison_log import log_comparison
from attention_ref.experiments.findings import ArmRow
from attention_ref.experiments.names import Artifact, Metric, RunStatus, Tag, arm_run_name
from attention_ref.experiments.results import baselines
from attention_ref.experiments.runs import (
    RunOutcome,
    final_metrics,
    mark_experiment,
    provenance_tags,
    run_training,
)
from attention_ref.experiments.sweep import Sweep, SweepOutcome, seed_key
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import CharData
from attention_ref.lm.train import Callbacks


def run_sweep(
    sweep: Sweep,
    data: CharData,
    *,
    out_root: Path = Path("runs"),
    callbacks_for: Callable[[str], Callbacks] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_system_metrics: bool = True,
    on_run_start: Callable[[str, str], None] | None = None,
    seeds: int = 1,
) -> SweepOutcome:
    """Train each arm of ``sweep`` on ``seeds`` seeds (the arm's ``seed``, ``seed + 1``, …),
    each a nested run of one parent; each finished run a row (`ArmRow`, named by its arm), the
    comparison logged on the parent at the end (`log_comparison`).

    ``callbacks_for(key)`` gives each run's extra callbacks (the CLI's progress);
    ``on_run_start(key, run_id)`` is called as each run starts (the parent's first, with key
    ``""``); a run's key is its arm, or with several seeds `seed_key` (``none seed 8``). Stops
    at the first run that does not finish; the parent then ends with that run's status.
    """
    base = baselines(data)
    outcome = SweepOutcome("", RunStatus.RUNNING, bigram_floor=base.bigram, baselines=base)
    client = MlflowClient()

    def row(arm: str, run_cfg: TrainConfig, o: RunOutcome) -> None:
        assert o.result is not None
        r = o.result
        metrics = {**final_metrics(r), Metric.BEST_VAL_LOSS: r.best_val_loss}
        outcome.rows.append(
            ArmRow.from_metrics(
                arm,
                o.run_id,
                o.status,
                r.n_params,
                r.steps_done,
                metrics,
                [(int(h["step"]), float(h["val_loss"])) for h in r.history if "val_loss" in h],
                config=run_cfg.to_flat(),
                data_sha256=data.text_sha256,
                precision=client.get_run(o.run_id).data.tags.get(Tag.PRECISION),
            )
        )

    def end() -> None:
        if outcome.rows:
            log_comparison(client, outcome.parent_run_id, sweep, outcome)

    _sweep(
        outcome,
        sweep,
        data,
        row,
        end,
        out_root=out_root,
        callbacks_for=callbacks_for,
        should_stop=should_stop,
        log_system_metrics=log_system_metrics,
        on_run_start=on_run_start,
        seeds=seeds,
    )
    return outcome


def _sweep(
    outcome: SweepOutcome,
    sweep: Sweep,
    data: CharData,
    on_finished: Callable[[str, TrainConfig, RunOutcome], None],
    on_end: Callable[[], None],
    *,
    out_root: Path,
    callbacks_for: Callable[[str], Callbacks] | None,
    should_stop: Callable[[], bool] | None,
    log_system_metrics: bool,
    on_run_start: Callable[[str, str], None] | None,
    seeds: int = 1,
) -> None:
    """One parent run, one nested run per arm and seed (``seeds`` seeds from the arm's own);
    ``on_finished(arm, run_cfg, outcome)`` for each finished run, ``on_end`` before the parent
    ends (whatever happened). Each run is tagged with its arm, seed and group (`Tag.GROUP`:
    the arm's runs over its seeds)."""
    if seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {seeds}")
    arm_cfgs, parent_name = sweep.arms, sweep.parent
    for arm_cfg in arm_cfgs.values():
        arm_cfg.check_fits(data.smallest_split)
    runs = [
        (arm, arm_cfg.with_options(seed=arm_cfg.seed + i))
        for arm, arm_cfg in arm_cfgs.items()
        for i in range(seeds)
    ]
    parent = mlflow.start_run(run_name=parent_name, tags={Tag.KIND: sweep.kind})
    pid = outcome.parent_run_id = parent.info.run_id
    mark_experiment(parent.info.experiment_id)
    arms = ", ".join(f"`{arm_run_name(parent_name, a)}`" for a in arm_cfgs)
    over = f"{seeds} seeds per arm, " if seeds > 1 else ""
    mlflow.set_tag(
        Tag.NOTE,
        f"**{sweep.what}.** One nested run per arm ({arms}), {over}the same seed, data and steps; "
        f"`{Artifact.COMPARISON_MD}` and `{Artifact.LOSS_CURVES}` compare them.\n\nSample an arm: "
        f"`attnref sample --run-id {pid} --arm ARM` (or its own run id).",
    )
    if on_run_start is not None:
        on_run_start("", pid)
    first = next(iter(arm_cfgs.values()))
    varying = {
        k for c in arm_cfgs.values() for k, v in c.to_flat().items() if v != first.to_flat()[k]
    }
    shared = {k: v for k, v in first.to_flat().items() if k not in varying}
    floor = outcome.bigram_floor
    mlflow.log_params(
        {
            **shared,
            **sweep.params,
            "bigram_floor": round(floor, 6),
            **({"seeds": seeds} if seeds > 1 else {}),
        }
    )
    mlflow.set_tags(provenance_tags(data))
    mlflow.log_metric(Metric.BIGRAM_FLOOR, floor)
    try:
        for arm, run_cfg in runs:
            key = seed_key(arm, run_cfg.seed, seeds)
            o = run_training(
                run_cfg,
                data,
                out_root=out_root,
                run_name=arm_run_name(parent_name, arm, run_cfg.seed if seeds > 1 else None),
                nested=True,
                callbacks=callbacks_for(key) if callbacks_for else None,
                should_stop=should_stop,
                log_system_metrics=log_system_metrics,
                part_of=f"`{parent_name}` run `{pid}` (arm `{arm}`"
                + (f", seed {run_cfg.seed})" if seeds > 1 else ")"),
                on_run_start=(lambda rid, k=key: on_run_start(k, rid)) if on_run_start else None,
                tags={
                    Tag.ARM: arm,
                    Tag.SEED: str(run_cfg.seed),
                    Tag.GROUP: arm_run_name(parent_name, arm),
                },
            )
            if o.result is not None and o.status == RunStatus.FINISHED:
                on_finished(arm, run_cfg, o)
            if o.status != RunStatus.FINISHED:
                outcome.status = o.status
                outcome.failed = o.error or f"arm {key} was interrupted (run {o.run_id})"
                break
        else:
            outcome.status = RunStatus.FINISHED
    except KeyboardInterrupt:
        outcome.status = RunStatus.KILLED
        raise
    finally:
        on_end()
        ended = outcome.status if outcome.status != RunStatus.RUNNING else RunStatus.FAILED
        mlflow.end_run(status=ended)
