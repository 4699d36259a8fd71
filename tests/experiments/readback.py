"""Reading a run back from the store in tests: metric history, artifact listing, download."""

from __future__ import annotations

from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from attention_ref.experiments.runs import metric_curve


def history(run_id: str, key: str) -> list[tuple[int, float]]:
    """``[(step, value)]`` of one metric of a run."""
    return metric_curve(MlflowClient(), run_id, key)


def artifact_paths(run_id: str, path: str | None = None) -> set[str]:
    """The artifact paths directly under ``path`` of a run."""
    return {f.path for f in MlflowClient().list_artifacts(run_id, path)}


def download(run_id: str, path: str, dst: Path) -> Path:
    """One artifact of a run, downloaded into ``dst``."""
    return Path(
        mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path, dst_path=str(dst))
    )
