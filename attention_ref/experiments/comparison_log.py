"""What a sweep logs on its parent run once its arms are done: the comparison.

Each sweep (`attention_ref.experiments.sweep.Sweep`: Q03's arms, the variants, the heads) ends
with its table and sentences in ``comparison.md`` (`attention_ref.experiments.sweep.comparison`),
its rows in ``comparison.json``, each arm's final figures as the
parent's metrics under `arm_metric` names and the arms' curves overlaid in
``plots/loss_curves.png``, with the bigram baseline.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.findings import ArmRow
from attention_ref.experiments.names import Artifact, Metric, arm_metric
from attention_ref.experiments.plots import loss_curves, save
from attention_ref.experiments.runs import metric_curve
from attention_ref.experiments.spread import spread
from attention_ref.experiments.sweep import Sweep, SweepOutcome, comparison


def log_comparison(client: MlflowClient, run_id: str, sweep: Sweep, outcome: SweepOutcome) -> None:
    """The sweep's comparison on its parent: ``comparison.md`` (`comparison`, in English),
    its rows and baselines in ``comparison.json``, each arm's figures as parent metrics and the
    arms' curves overlaid."""
    rows = outcome.rows
    said = comparison(sweep.kind, rows, outcome.bigram_floor)
    client.log_text(run_id, said.markdown(), Artifact.COMPARISON_MD)
    base = outcome.baselines
    client.log_dict(
        run_id,
        {
            "bigram_floor": outcome.bigram_floor,
            "baselines": asdict(base) if base else None,
            "rows": [asdict(r) for r in rows],
        },
        Artifact.COMPARISON_JSON,
    )
    _log_arms(
        client,
        run_id,
        [(sweep.label(r.attention), r) for r in rows],
        sweep.title,
        outcome.bigram_floor,
    )


def _log_arms(
    client: MlflowClient, run_id: str, arms: list[tuple[str, ArmRow]], title: str, floor: float
) -> None:
    """Each arm's runs ``(label, row)``: its figures as ``{name}_{metric}`` on the
    parent (`ArmRow.METRICS`; an arm of several seeds: the mean over them), each run's train
    and validation curves overlaid in ``plots/loss_curves.png`` (labelled with the seed where
    an arm has several)."""
    by_name: dict[str, list[ArmRow]] = {}
    for name, r in arms:
        by_name.setdefault(name, []).append(r)
    for name, rows in by_name.items():
        for key, metric in ArmRow.METRICS.items():
            mlflow.log_metric(
                arm_metric(name, metric), spread([getattr(r, key) for r in rows]).mean
            )
    keys = (Metric.TRAIN_LOSS, Metric.VAL_LOSS)
    curves = {}
    for name, r in arms:
        label = name
        if len(by_name[name]) > 1:
            label = f"{name} seed {r.config.get('seed', '?')}"
        curves[label] = {str(k): metric_curve(client, r.run_id, k) for k in keys}
    with tempfile.TemporaryDirectory() as tmp:
        path = save(
            loss_curves(curves, title=title, floor=floor),
            Path(tmp) / Path(Artifact.LOSS_CURVES).name,
        )
        client.log_artifact(run_id, str(path), str(Path(Artifact.LOSS_CURVES).parent))
