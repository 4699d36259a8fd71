"""The one way back into a run: `prepare_resume` finds it in whatever experiment holds it and
returns its config and checkpoint (a `ResumePoint`), with ``device`` and ``threads`` (the only
options that may change on resume, `RESUMABLE_OPTIONS`) applied;
`attention_ref.experiments.runs.run_training` continues it and records them on the run as tags.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mlflow
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref.experiments.names import Artifact, RunKind, RunStatus, Tag
from attention_ref.experiments.store import TrackingError
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import CharData

#: the options that may change when a run is resumed; every other one is the run's own
RESUMABLE_OPTIONS: tuple[str, ...] = ("device", "threads")


@dataclass(frozen=True)
class ResumePoint:
    """Where an interrupted run continues: its id, experiment, config and checkpoint."""

    run_id: str
    experiment_id: str
    config: TrainConfig  # the run's own, with the resumable options applied
    checkpoint: Checkpoint
    changed: dict[str, Any] = field(default_factory=dict)  # resumable options given

    @property
    def step(self) -> int:
        """The step the run continues from."""
        return self.checkpoint.step


def prepare_resume(run_id: str, data: CharData, out_root: Path, **changes: Any) -> ResumePoint:
    """Find run ``run_id`` (in any experiment), check it can go on, fetch its checkpoint.

    ``changes`` may hold `RESUMABLE_OPTIONS` only (``device``, ``threads``); they replace the
    stored values and are recorded on the run when it starts again. Raises `TrackingError`
    (one line) for an unknown run, a finished or non-training run, other data, a run with no
    checkpoint, and ``ValueError`` for any other option.
    """
    refused = sorted(set(changes) - set(RESUMABLE_OPTIONS))
    if refused:
        names = ", ".join("--" + e.replace("_", "-") for e in refused)
        raise ValueError(f"--resume continues the run's own configuration; leave out {names}")
    client = MlflowClient()
    try:
        run = client.get_run(run_id)
    except MlflowException:
        raise TrackingError(
            f"no run {run_id!r} in the tracking store {mlflow.get_tracking_uri()}"
        ) from None
    if run.data.tags.get(Tag.KIND) != RunKind.TRAIN:
        raise TrackingError(f"run {run_id} is not a training run of attnref; nothing to resume")
    if run.info.status == RunStatus.FINISHED:
        raise TrackingError(f"run {run_id} already finished; nothing to resume")
    if run.data.tags.get(Tag.DATA_SHA256) not in (None, data.text_sha256):
        raise TrackingError(
            f"run {run_id} was trained on other data (sha256 differs); pass the same --data"
        )
    out_dir = out_root / run_id
    # a run the tracking server stopped (it refused a write, or went away) left its checkpoint
    # here only: the newer of the two is resumed
    local = out_dir / Path(Artifact.LAST_CHECKPOINT).name
    checkpoint = Checkpoint.load(local) if local.is_file() else None
    stored = checkpoint.config if checkpoint is not None else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config_path = mlflow.artifacts.download_artifacts(
                run_id=run_id, artifact_path=Artifact.CONFIG, dst_path=tmp
            )
            stored = TrainConfig.from_flat(json.loads(Path(config_path).read_text("utf-8")))
            ckpt_path = mlflow.artifacts.download_artifacts(
                run_id=run_id, artifact_path=Artifact.LAST_CHECKPOINT, dst_path=tmp
            )
            logged = Checkpoint.load(Path(ckpt_path))
        if checkpoint is None or logged.step > checkpoint.step:
            checkpoint = logged
    except (MlflowException, OSError):
        if checkpoint is None or stored is None:
            raise TrackingError(
                f"run {run_id} has no checkpoint to resume from ({Artifact.LAST_CHECKPOINT}): "
                "it is written when a run stops on Ctrl-C or SIGTERM, and this one ended "
                "before it could (a second Ctrl-C, a kill, or a failure); start a new run with "
                "attnref train"
            ) from None
    cfg = stored.with_options(**changes)
    cfg.check_fits(data.smallest_split)
    return ResumePoint(run_id, run.info.experiment_id, cfg, checkpoint, dict(changes))
