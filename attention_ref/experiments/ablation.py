"""Q03's ablation and the heads sweep: the same config, seed and steps per arm, one parent run.

* `run_ablation`: one arm per attention mode. The parent run ``ablation`` holds one nested
  child per arm (``ablation/multihead``, ``ablation/none``, …); at the end it gets
  ``comparison.md``/``comparison.json``, ``plots/loss_curves.png`` (the arms overlaid, with the
  bigram baseline) and, per arm, the arm's final metrics under `arm_metric` names
  (``none_best_val_loss``, ``none_final_train_eval_loss``: the arm's own metric names).
* `run_heads_sweep`: seed 003 meets Q02: the Q02 model with h = 1, 2, 4, 8 heads (same
  parameter count: ``d_k = d_model / h``). The parent ``heads`` holds ``heads/1``, ``heads/2``…;
  its comparison is `attention_ref.experiments.heads_report`'s table.

What each parent gets at the end is written by `attention_ref.experiments.comparison_log`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.comparison_log import (
    log_ablation_comparison,
    log_heads_comparison,
    log_variants_comparison,
)
from attention_ref.experiments.findings import ArmRow, Baselines
from attention_ref.experiments.heads_report import HeadsRow
from attention_ref.experiments.names import (
    ABLATION_RUN_NAME,
    HEADS_SWEEP_RUN_NAME,
    VARIANTS_RUN_NAME,
    Artifact,
    Metric,
    RunKind,
    RunStatus,
    Tag,
    arm_run_name,
)
from attention_ref.experiments.results import baselines
from attention_ref.experiments.runs import (
    RunOutcome,
    final_metrics,
    mark_experiment,
    provenance_tags,
    run_training,
)
from attention_ref.lm.config import ATTENTION_MODES, TrainConfig
from attention_ref.lm.data import CharData, bigram_val_loss
from attention_ref.lm.train import Callbacks


@dataclass
class AblationOutcome:
    """The parent run and its arms."""

    parent_run_id: str
    status: RunStatus
    rows: list[ArmRow] = field(default_factory=list)
    bigram_floor: float = math.nan  # the bigram baseline (`Baselines.bigram`)
    failed: str | None = None
    baselines: Baselines | None = None  # written into comparison.json beside the rows


def run_ablation(
    cfg: TrainConfig,
    data: CharData,
    *,
    arms: Sequence[str] = ATTENTION_MODES,
    out_root: Path = Path("runs"),
    callbacks_for: Callable[[str], Callbacks] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_system_metrics: bool = True,
    on_run_start: Callable[[str, str], None] | None = None,
    seeds: int = 1,
) -> AblationOutcome:
    """Run ``cfg`` once per attention mode in ``arms`` (``cfg.attention`` is replaced), each on
    ``seeds`` seeds (``cfg.seed``, ``cfg.seed + 1``, …).

    ``callbacks_for(key)`` gives each run's extra callbacks (the CLI's progress);
    ``on_run_start(key, run_id)`` is called as each run starts (the parent's first, with key
    ``""``); a run's key is its arm, or with several seeds `seed_key` (``none seed 8``). Stops
    at the first run that does not finish; the parent then ends with that run's status.
    """
    arm_cfgs = {arm: cfg.with_options(attention=arm) for arm in arms}  # a bad arm fails here
    return _run_arms(
        arm_cfgs,
        data,
        ABLATION_RUN_NAME,
        RunKind.ABLATION,
        {"arms": ",".join(arms)},
        "Q03's ablation: the same model with attention, without it and with uniform weights",
        log_ablation_comparison,
        out_root=out_root,
        callbacks_for=callbacks_for,
        should_stop=should_stop,
        log_system_metrics=log_system_metrics,
        on_run_start=on_run_start,
        seeds=seeds,
    )


def _run_arms(
    arm_cfgs: dict[str, TrainConfig],
    data: CharData,
    parent_name: str,
    kind: RunKind,
    params: dict[str, str],
    what: str,
    log: Callable[[MlflowClient, str, list[ArmRow], float, Baselines | None], None],
    **sweep: Any,
) -> AblationOutcome:
    """`_sweep` of arms compared as `ArmRow` (the ablation, the variants): each finished arm a
    row, ``log`` writing the comparison on the parent at the end."""
    base = baselines(data)
    outcome = AblationOutcome("", RunStatus.RUNNING, bigram_floor=base.bigram, baselines=base)
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
                config=run_cfg.to_flat(),
                data_sha256=data.text_sha256,
                precision=_precision(client, o.run_id),
            )
        )

    def end() -> None:
        if outcome.rows:
            log(
                client, outcome.parent_run_id, outcome.rows, outcome.bigram_floor, outcome.baselines
            )

    _sweep(outcome, arm_cfgs, data, parent_name, kind, params, what, row, end, **sweep)
    return outcome


@dataclass
class HeadsSweepOutcome:
    """The heads sweep's parent run and its arms."""

    parent_run_id: str
    status: RunStatus
    rows: list[HeadsRow] = field(default_factory=list)
    bigram_floor: float = math.nan
    failed: str | None = None


def _precision(client: MlflowClient, run_id: str) -> str | None:
    """The precision a run trained in, as its `Tag.PRECISION` records it."""
    return client.get_run(run_id).data.tags.get(Tag.PRECISION)


def seed_key(arm: str, seed: int, seeds: int) -> str:
    """What a sweep's run is called in its progress and ``on_run_start``: the arm alone with one
    seed, ``none seed 8`` with several."""
    return arm if seeds == 1 else f"{arm} seed {seed}"


def heads_row(
    heads: int,
    d_k: int,
    o: RunOutcome,
    cfg: TrainConfig | None = None,
    precision: str | None = None,
) -> HeadsRow:
    """A row of the heads sweep from an arm's finished run (``cfg``: the run's options)."""
    assert o.result is not None
    r = o.result
    return HeadsRow(
        heads,
        d_k,
        o.run_id,
        r.n_params,
        r.best_val_loss,
        r.final_val_loss,
        r.final_train_loss,
        r.tokens_per_sec,
        r.wall_time_s,
        r.steps_done,
        [(int(h["step"]), float(h["val_loss"])) for h in r.history if "val_loss" in h],
        config={k: str(v) for k, v in cfg.to_flat().items()} if cfg is not None else {},
        precision=precision,
    )


def run_heads_sweep(
    cfg: TrainConfig,
    data: CharData,
    *,
    heads: Sequence[int] = (1, 2, 4, 8),
    out_root: Path = Path("runs"),
    callbacks_for: Callable[[str], Callbacks] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_system_metrics: bool = True,
    on_run_start: Callable[[str, str], None] | None = None,
    seeds: int = 1,
) -> HeadsSweepOutcome:
    """Run ``cfg`` (multihead attention) once per number of heads in ``heads``, each on
    ``seeds`` seeds.

    Every arm has the same seeds, steps and ``n_embd`` (``d_k = n_embd / h``, so the same
    parameter count); a bad number of heads (not dividing ``n_embd``) fails before any run.
    """
    if not heads or len(set(heads)) != len(heads):
        raise ValueError(f"--heads must list distinct numbers of heads, got {list(heads)}")
    arm_cfgs = {
        str(h): cfg.with_options(attention="multihead", n_head=h) for h in heads
    }  # a number of heads that does not divide n_embd fails here
    floor = bigram_val_loss(data)
    outcome = HeadsSweepOutcome("", RunStatus.RUNNING, bigram_floor=floor)
    client = MlflowClient()

    def row(arm: str, run_cfg: TrainConfig, o: RunOutcome) -> None:
        outcome.rows.append(
            heads_row(int(arm), run_cfg.model.d_k, o, run_cfg, _precision(client, o.run_id))
        )

    def end() -> None:
        if outcome.rows:
            log_heads_comparison(client, outcome.parent_run_id, outcome.rows, outcome.bigram_floor)

    _sweep(
        outcome,
        arm_cfgs,
        data,
        HEADS_SWEEP_RUN_NAME,
        RunKind.HEADS_SWEEP,
        {"heads": ",".join(map(str, heads))},
        "The heads sweep (seed 003 meets Q02): the Q02 "
        "model with different numbers of heads at a fixed number of parameters",
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


def variants(cfg: TrainConfig) -> dict[str, dict[str, Any]]:
    """The arms of ``--arms variants``: Q02's model (``mha``) and one change of today's
    attention each: one K/V head (``mqa``), RoPE (``rope``), a window of a quarter of the
    block (``window``)."""
    return {
        "mha": {},
        "mqa": {"kv_heads": 1},
        "rope": {"pos": "rope"},
        "window": {"window": max(cfg.model.block_size // 4, 1)},
    }


def run_variants_sweep(
    cfg: TrainConfig,
    data: CharData,
    *,
    arms: Mapping[str, Mapping[str, Any]] | None = None,
    out_root: Path = Path("runs"),
    callbacks_for: Callable[[str], Callbacks] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_system_metrics: bool = True,
    on_run_start: Callable[[str, str], None] | None = None,
    seeds: int = 1,
) -> AblationOutcome:
    """Run ``cfg`` (multihead attention) once per variant: ``arms`` maps an arm's name to the
    options it changes (`variants` by default). The same seeds (``seeds`` of them), data and
    steps for every arm; the parent ``variants`` gets the comparison (`variants_report`)."""
    chosen = dict(arms if arms is not None else variants(cfg))
    arm_cfgs = {
        name: cfg.with_options(attention="multihead", **change) for name, change in chosen.items()
    }  # a variant the model cannot be built with fails here, before any run
    return _run_arms(
        arm_cfgs,
        data,
        VARIANTS_RUN_NAME,
        RunKind.VARIANTS,
        {"variants": ",".join(chosen)},
        "Q02's model with today's attention: one K/V head, RoPE, a sliding window",
        log_variants_comparison,
        out_root=out_root,
        callbacks_for=callbacks_for,
        should_stop=should_stop,
        log_system_metrics=log_system_metrics,
        on_run_start=on_run_start,
        seeds=seeds,
    )


def _sweep(
    outcome: AblationOutcome | HeadsSweepOutcome,
    arm_cfgs: dict[str, TrainConfig],
    data: CharData,
    parent_name: str,
    kind: RunKind,
    params: dict[str, str],
    what: str,
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
    for arm_cfg in arm_cfgs.values():
        arm_cfg.check_fits(data.smallest_split)
    runs = [
        (arm, arm_cfg.with_options(seed=arm_cfg.seed + i))
        for arm, arm_cfg in arm_cfgs.items()
        for i in range(seeds)
    ]
    parent = mlflow.start_run(run_name=parent_name, tags={Tag.KIND: kind})
    pid = outcome.parent_run_id = parent.info.run_id
    mark_experiment(parent.info.experiment_id)
    arms = ", ".join(f"`{arm_run_name(parent_name, a)}`" for a in arm_cfgs)
    over = f"{seeds} seeds per arm, " if seeds > 1 else ""
    mlflow.set_tag(
        Tag.NOTE,
        f"**{what}.** One nested run per arm ({arms}), {over}the same seed, data and steps; "
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
            **params,
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
