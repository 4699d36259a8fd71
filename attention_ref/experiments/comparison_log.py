"""What a sweep logs on its parent run once its arms are done: the comparison.

Each sweep of `attention_ref.experiments.ablation` (Q03's arms, the variants, the heads) ends
with its table in ``comparison.md`` (`attention_ref.experiments.report`'s, `variants_report`'s
or `heads_report`'s), its rows in ``comparison.json``, each arm's final figures as the
parent's metrics under `arm_metric` names and the arms' curves overlaid in
``plots/loss_curves.png``, with the bigram baseline.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.findings import ArmRow, Baselines
from attention_ref.experiments.heads_report import HeadsRow, heads_table
from attention_ref.experiments.names import Artifact, Metric, arm_metric
from attention_ref.experiments.plots import loss_curves, save
from attention_ref.experiments.report import comparison_markdown
from attention_ref.experiments.runs import metric_curve
from attention_ref.experiments.spread import spread
from attention_ref.experiments.variants_report import variants_sentences, variants_table


def heads_arm(heads: int) -> str:
    """The label of a heads-sweep arm (curves, parent metrics): ``h4``."""
    return f"h{heads}"


def log_variants_comparison(
    client: MlflowClient,
    run_id: str,
    rows: list[ArmRow],
    bigram_floor: float,
    base: Baselines | None,
) -> None:
    """The variants' table, rows, arm metrics and overlaid curves, on their parent."""
    words = variants_table(rows) if any(r.attention == "mha" for r in rows) else ""
    if words:
        words += "\n" + "\n\n".join(variants_sentences(rows)) + "\n"
    client.log_text(
        run_id, words or "no mha arm finished: nothing to compare with\n", Artifact.COMPARISON_MD
    )
    client.log_dict(
        run_id,
        {
            "bigram_floor": bigram_floor,
            "baselines": asdict(base) if base else None,
            "rows": [asdict(r) for r in rows],
        },
        Artifact.COMPARISON_JSON,
    )
    _log_arms(
        client,
        run_id,
        [(r.attention, r.attention, r) for r in rows],
        "Q02's model with today's attention",
        bigram_floor,
    )


def log_ablation_comparison(
    client: MlflowClient,
    run_id: str,
    rows: list[ArmRow],
    bigram_floor: float,
    base: Baselines | None,
) -> None:
    """Q03's table, rows, arm metrics and overlaid curves, on the ablation's parent."""
    client.log_text(run_id, comparison_markdown(rows, bigram_floor), Artifact.COMPARISON_MD)
    client.log_dict(
        run_id,
        {
            "bigram_floor": bigram_floor,
            "baselines": asdict(base) if base else None,
            "rows": [asdict(r) for r in rows],
        },
        Artifact.COMPARISON_JSON,
    )
    arms = [(r.attention, r.attention, r) for r in rows]
    _log_arms(client, run_id, arms, "Q03: the same model with and without attention", bigram_floor)


def _log_arms(
    client: MlflowClient, run_id: str, arms: list[tuple[str, str, Any]], title: str, floor: float
) -> None:
    """Each arm's runs ``(name, curve label, row)``: its figures as ``{name}_{metric}`` on the
    parent (`ArmRow.METRICS`; an arm of several seeds: the mean over them), each run's train
    and validation curves overlaid in ``plots/loss_curves.png`` (labelled with the seed where
    an arm has several)."""
    by_name: dict[str, list[Any]] = {}
    for name, _, r in arms:
        by_name.setdefault(name, []).append(r)
    for name, rows in by_name.items():
        for key, metric in ArmRow.METRICS.items():
            mlflow.log_metric(
                arm_metric(name, metric), spread([getattr(r, key) for r in rows]).mean
            )
    keys = (Metric.TRAIN_LOSS, Metric.VAL_LOSS)
    curves = {}
    for name, label, r in arms:
        if len(by_name[name]) > 1:
            label = f"{label} seed {r.config.get('seed', '?')}"
        curves[label] = {str(k): metric_curve(client, r.run_id, k) for k in keys}
    with tempfile.TemporaryDirectory() as tmp:
        path = save(
            loss_curves(curves, title=title, floor=floor),
            Path(tmp) / Path(Artifact.LOSS_CURVES).name,
        )
        client.log_artifact(run_id, str(path), str(Path(Artifact.LOSS_CURVES).parent))


def log_heads_comparison(
    client: MlflowClient, run_id: str, rows: list[HeadsRow], bigram_floor: float
) -> None:
    """The heads sweep's table, rows, arm metrics and overlaid curves, on its parent."""
    rows = sorted(rows, key=lambda r: r.heads)
    client.log_text(run_id, heads_table(rows), Artifact.COMPARISON_MD)
    client.log_dict(
        run_id,
        {"bigram_floor": bigram_floor, "rows": [asdict(r) for r in rows]},
        Artifact.COMPARISON_JSON,
    )
    _log_arms(
        client,
        run_id,
        [(heads_arm(r.heads), f"h = {r.heads}", r) for r in rows],
        "Heads sweep: the Q02 model with h heads, the same parameters",
        bigram_floor,
    )
