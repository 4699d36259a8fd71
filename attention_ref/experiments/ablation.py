"""Q03's ablation: the same config, seed and steps for each attention mode, one parent run.

The parent run ``ablation`` holds one nested child per arm; at the end it gets
``comparison.md``/``comparison.json``, ``plots/loss_curves.png`` (the arms overlaid, with the
bigram floor) and one metric ``{arm}_{figure}`` per arm and figure of `ArmRow`.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.names import Artifact, Metric, RunKind, RunStatus, Tag
from attention_ref.experiments.plots import loss_curves, save
from attention_ref.experiments.report import ArmRow, comparison_markdown
from attention_ref.experiments.runs import (
    final_metrics,
    metric_curve,
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
    bigram_floor: float = math.nan
    failed: str | None = None


def run_ablation(
    cfg: TrainConfig,
    data: CharData,
    *,
    arms: Sequence[str] = ATTENTION_MODES,
    out_root: Path = Path("runs"),
    callbacks_for: Callable[[str], Callbacks] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_system_metrics: bool = True,
) -> AblationOutcome:
    """Run ``cfg`` once per attention mode in ``arms`` (``cfg.attention`` is replaced).

    ``callbacks_for(arm)`` gives each arm's extra callbacks (the CLI's progress). Stops at the
    first arm that does not finish; the parent then ends with that arm's status.
    """
    arm_cfgs = {arm: cfg.with_options(attention=arm) for arm in arms}  # a bad arm fails here
    for arm_cfg in arm_cfgs.values():
        arm_cfg.check_fits(data.smallest_split)
    client = MlflowClient()
    floor = bigram_val_loss(data)
    parent = mlflow.start_run(run_name="ablation", tags={Tag.KIND: RunKind.ABLATION})
    shared = {k: v for k, v in cfg.to_flat().items() if k != "attention"}
    mlflow.log_params({**shared, "arms": ",".join(arms), "bigram_floor": round(floor, 6)})
    mlflow.set_tags(provenance_tags(data))
    mlflow.log_metric(Metric.BIGRAM_FLOOR, floor)
    outcome = AblationOutcome(parent.info.run_id, RunStatus.RUNNING, bigram_floor=floor)
    try:
        for arm, arm_cfg in arm_cfgs.items():
            o = run_training(
                arm_cfg, data, out_root=out_root, run_name=arm, nested=True,
                callbacks=callbacks_for(arm) if callbacks_for else None,
                should_stop=should_stop, log_system_metrics=log_system_metrics,
            )  # fmt: skip
            if o.result is not None and o.status == RunStatus.FINISHED:
                r = o.result
                metrics = {**final_metrics(r), Metric.BEST_VAL_LOSS: r.best_val_loss}
                outcome.rows.append(
                    ArmRow.from_metrics(arm, o.run_id, o.status, r.n_params, r.steps_done, metrics)
                )
            if o.status != RunStatus.FINISHED:
                outcome.status = o.status
                outcome.failed = o.error or f"arm {arm} was interrupted (run {o.run_id})"
                break
        else:
            outcome.status = RunStatus.FINISHED
    except KeyboardInterrupt:
        outcome.status = RunStatus.KILLED
        raise
    finally:
        if outcome.rows:
            _log_comparison(client, outcome)
        ended = outcome.status if outcome.status != RunStatus.RUNNING else RunStatus.FAILED
        mlflow.end_run(status=ended)
    return outcome


def _log_comparison(client: MlflowClient, outcome: AblationOutcome) -> None:
    run_id = outcome.parent_run_id
    client.log_text(
        run_id, comparison_markdown(outcome.rows, outcome.bigram_floor), Artifact.COMPARISON_MD
    )
    client.log_dict(
        run_id,
        {"bigram_floor": outcome.bigram_floor, "rows": [asdict(r) for r in outcome.rows]},
        Artifact.COMPARISON_JSON,
    )
    for r in outcome.rows:
        for key in ArmRow.METRICS:
            mlflow.log_metric(f"{r.attention}_{key}", getattr(r, key))
    keys = (Metric.TRAIN_LOSS, Metric.VAL_LOSS)
    curves = {
        r.attention: {str(k): metric_curve(client, r.run_id, k) for k in keys} for r in outcome.rows
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = save(
            loss_curves(
                curves,
                title="Q03: the same model with and without attention",
                floor=outcome.bigram_floor,
            ),
            Path(tmp) / "loss_curves.png",
        )
        client.log_artifact(run_id, str(path), Artifact.PLOTS)
