"""Reading runs back: the latest ablation and its arms, a run's model, the Q03 report.

Every lookup goes through `latest_ablation` and `find_arms`, so the report and the export
read the same runs.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import mlflow
from mlflow.entities import Run
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref.experiments.names import Artifact, Metric, RunKind, RunStatus, Tag
from attention_ref.experiments.report import ArmRow, Baselines, build_report
from attention_ref.experiments.runs import metric_curve
from attention_ref.experiments.store import TrackingError
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import ATTENTION_MODES
from attention_ref.lm.data import CharData, bigram_val_loss, unigram_val_loss

_FINISHED = f"attributes.status = '{RunStatus.FINISHED}'"


def _search(experiment: str, filter_string: str, max_results: int = 100) -> list[Run]:
    return mlflow.search_runs(
        experiment_names=[experiment],
        filter_string=filter_string,
        order_by=["attributes.start_time DESC"],
        max_results=max_results,
        output_format="list",
    )


def _require_experiment(experiment: str) -> None:
    if mlflow.get_experiment_by_name(experiment) is None:
        raise TrackingError(f"no experiment {experiment!r} in {mlflow.get_tracking_uri()}")


def latest_ablation(experiment: str) -> Run | None:
    """The most recent finished ablation parent run of ``experiment``, if any."""
    _require_experiment(experiment)
    runs = _search(experiment, f"tags.`{Tag.KIND}` = '{RunKind.ABLATION}' and {_FINISHED}", 1)
    return runs[0] if runs else None


def arm_from_run(client: MlflowClient, run: Run) -> ArmRow:
    """A comparison row read back from a finished training run."""
    p = run.data.params
    return ArmRow.from_metrics(
        run.data.tags.get(Tag.ATTENTION, p.get("attention", "?")),
        run.info.run_id,
        run.info.status,
        int(p["n_params"]),
        int(p["max_steps"]),
        run.data.metrics,
        metric_curve(client, run.info.run_id, Metric.VAL_LOSS),
    )


@dataclass(frozen=True)
class Arms:
    """The runs a report speaks of: where they come from, the parent (if any), the rows."""

    source: str
    parent: Run | None
    rows: list[ArmRow]


def find_arms(experiment: str) -> Arms:
    """The arms of the latest finished ablation, else the latest finished run of each mode."""
    client = MlflowClient()
    parent = latest_ablation(experiment)
    order = {a: i for i, a in enumerate(ATTENTION_MODES)}
    if parent is not None:
        pid = parent.info.run_id
        children = _search(experiment, f"tags.`{Tag.PARENT_RUN_ID}` = '{pid}' and {_FINISHED}")
        rows = sorted(
            (arm_from_run(client, r) for r in children), key=lambda a: order.get(a.attention, 9)
        )
        return Arms(f"ablation run `{pid}`", parent, rows)
    rows = []
    for mode in ATTENTION_MODES:
        runs = _search(experiment, f"tags.{Tag.ATTENTION} = '{mode}' and {_FINISHED}", 1)
        if runs:
            rows.append(arm_from_run(client, runs[0]))
    if not rows:
        raise TrackingError(
            f"no finished runs in experiment {experiment!r}; run `attnref ablation` first"
        )
    return Arms("the latest finished run of each mode", None, rows)


def baselines(data: CharData) -> Baselines:
    """ln V, the unigram and the bigram floor of ``data``'s validation split."""
    return Baselines(data.vocab_size, unigram_val_loss(data), bigram_val_loss(data))


def q03_report(experiment: str, data: CharData, arms: Arms | None = None) -> str:
    """The markdown answer to Q03 for ``experiment`` (its latest ablation, see `find_arms`)."""
    arms = arms or find_arms(experiment)
    return build_report(experiment, arms.source, arms.rows, baselines(data))


def load_model(run_id: str, dst: Path | None = None) -> Checkpoint:
    """The trained model of a run (``model/model.pt``): weights, config and vocabulary."""
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = mlflow.artifacts.download_artifacts(
                run_id=run_id, artifact_path=Artifact.MODEL, dst_path=str(dst or tmp)
            )
            return Checkpoint.load(Path(path))
    except MlflowException:
        raise TrackingError(
            f"run {run_id!r} has no trained model ({Artifact.MODEL}) in "
            f"{mlflow.get_tracking_uri()}; only finished training runs have one"
        ) from None
