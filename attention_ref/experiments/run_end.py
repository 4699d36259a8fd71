"""How a run ends: its artifacts, final metrics and status, or the one line that says why it
stopped.

`end_run` logs what the ending calls for (checkpoints, the model as a LoggedModel, the
attention maps of `HEATMAP_LINE`, the loss curves, `final_metrics`) and sets the run's
`RunStatus`; `tracking_failure` says in one line what a refused or failed write to the store
means, `stopped_by_the_store` what a run the store stopped kept, and `StoppedAtOnce` carries
what a second Ctrl-C kept (`what_a_second_ctrl_c_kept`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import mlflow
import torch
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref.experiments.explorer import EXPLORER_LINES
from attention_ref.experiments.names import (
    Artifact,
    Metric,
    RunStatus,
    Tag,
    attention_map_path,
    attention_map_title,
)
from attention_ref.experiments.plots import attention_heatmap, loss_curves, save
from attention_ref.experiments.run_log import RunLogger, describe_run, metric_curve
from attention_ref.experiments.store import first_line
from attention_ref.lm.callbacks import TrainResult
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import AttentionMode, TrainConfig
from attention_ref.lm.data import CharData, bigram_val_loss

#: the fixed line whose attention maps every multihead run logs (all characters are in the vocab)
HEATMAP_LINE = EXPLORER_LINES[0]  # "ROMEO:\nBut, soft! what light through yonder window breaks?"


def final_metrics(result: TrainResult) -> dict[str, float]:
    """The figures a finished run logs once, by `Metric` name (the ablation reads the same)."""
    return {
        Metric.FINAL_VAL_LOSS: result.final_val_loss,
        Metric.FINAL_TRAIN_EVAL_LOSS: result.final_train_loss,
        Metric.WALL_TIME_S: result.wall_time_s,
        Metric.MEAN_TOKENS_PER_SEC: result.tokens_per_sec,
    }


def tracking_failure(e: Exception) -> str:
    """What a refused or failed write to the tracking store means, in one line.

    The status is read where MLflow's client writes it (``failed with error code 401 != 200``),
    not anywhere in the text: a run id or a port may hold the digits 401.
    """
    text = first_line(e)
    if "error code 401 " in text or "not authenticated" in text.lower():
        return "the tracking server refused the account (its password changed, or it was removed)"
    if "PERMISSION_DENIED" in text or "error code 403 " in text:
        return f"the tracking server refused a write ({text.removeprefix('PERMISSION_DENIED: ')})"
    return f"the tracking store failed ({text})"


def _log_loss_curves(client: MlflowClient, run_id: str, label: str, floor: float) -> None:
    keys = (Metric.TRAIN_LOSS, Metric.VAL_LOSS)
    curves = {label: {str(k): metric_curve(client, run_id, k) for k in keys}}
    with tempfile.TemporaryDirectory() as tmp:
        path = save(loss_curves(curves, floor=floor), Path(tmp) / Path(Artifact.LOSS_CURVES).name)
        client.log_artifact(run_id, str(path), str(Path(Artifact.LOSS_CURVES).parent))


def _log_attention_maps(client: MlflowClient, run_id: str, best: Checkpoint) -> None:
    model = best.build_model()
    line = HEATMAP_LINE[: model.cfg.block_size]
    idx = torch.tensor([best.vocab.encode(line)])
    maps = model.attention_maps(idx)  # [(1, h, T, T)] per layer
    doc = {"line": line, "layers": [[A.tolist() for A in m[0]] for m in maps]}
    with tempfile.TemporaryDirectory() as tmp:
        for layer, m in enumerate(maps):
            for head in range(m.size(1)):
                fig = attention_heatmap(
                    m[0, head].tolist(), line, title=attention_map_title(layer, head)
                )
                artifact = attention_map_path(layer, head)
                path = save(fig, Path(tmp) / Path(artifact).name)
                client.log_artifact(run_id, str(path), str(Path(artifact).parent))
        client.log_dict(run_id, doc, Artifact.ATTENTION_WEIGHTS)


def _log_model(
    client: MlflowClient, run_id: str, best: Checkpoint, register: str | None, step: int
) -> str:
    """``model/model.pt`` (the slim best checkpoint: weights, config, vocabulary), and the same
    file as a LoggedModel of the run (registered as ``register`` if given); its URI."""
    from attention_ref.experiments.logged_model import log_char_model

    with tempfile.TemporaryDirectory() as tmp:
        path = best.slim().save(Path(tmp) / "model.pt")
        client.log_artifact(run_id, str(path), Artifact.MODEL_DIR)
        client.log_dict(run_id, best.config.to_flat(), Artifact.MODEL_CONFIG)
        info = log_char_model(path, registered_name=register, step=step)
    return f"models:/{info.model_id}"


class StoppedAtOnce(KeyboardInterrupt):
    """A second Ctrl-C stopped a run at once; ``str()`` says, in one line, what was kept."""


def what_a_second_ctrl_c_kept(run_id: str, out_dir: Path) -> str:
    """What a run stopped at once kept, read from its folder: ``last.pt`` (the state to resume,
    saved whole or not at all) is written when a run stops on the first Ctrl-C, at the end of
    a step; a second Ctrl-C before that leaves nothing to resume."""
    last = out_dir / "last.pt"
    if last.is_file():
        return (
            f"stopped at once by a second Ctrl-C; run {run_id} is KILLED, its checkpoint is "
            f"{last}: continue with: attnref train --resume {run_id}"
        )
    best = out_dir / "best.pt"
    kept = f"; its best model so far is in {best}" if best.is_file() else ""
    return (
        f"stopped at once by a second Ctrl-C, before the checkpoint a first Ctrl-C writes: run "
        f"{run_id} is KILLED with nothing to resume{kept}; start a new run with attnref train"
    )


def stopped_by_the_store(
    logger: RunLogger, run_id: str, out_dir: Path, result: TrainResult | None
) -> str:
    """One line: why the run stopped, where its checkpoint and unsent metrics are, and how to
    go on. Nothing more is sent to the store (it refused, or is gone)."""
    assert logger.failure is not None
    # end the client's run (its system-metrics thread too): one quick try, no retries (a
    # store that went away would be retried for minutes), refused or not
    quick = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}
    saved = {k: os.environ.get(k) for k in quick}
    os.environ.update(quick)
    try:
        with contextlib.suppress(MlflowException, OSError):
            mlflow.end_run(status=RunStatus.FAILED)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    kept = f"its checkpoint is {out_dir / 'last.pt'}" if result is not None else "no checkpoint"
    unsent = logger.keep_unsent(out_dir)
    metrics = f", the metrics not logged are in {unsent}" if unsent else ""
    step = f" at step {result.steps_done}" if result is not None else ""
    return (
        f"{tracking_failure(logger.failure)}; run {run_id} stopped{step}: {kept}{metrics} "
        f"(continue with: attnref train --resume {run_id})"
    )


def end_run(
    client: MlflowClient,
    run_id: str,
    cfg: TrainConfig,
    data: CharData,
    logger: RunLogger,
    status: RunStatus,
    failed_at: int | None,
    result: TrainResult | None,
    register: str | None,
    part_of: str | None,
) -> list[str]:
    """Flush, log what the ending calls for, and set the run's status; the model's URI (a
    finished run), else nothing."""
    logger.buffer.flush()
    model_uri: list[str] = []
    ckpts = logger.checkpoints
    if status != RunStatus.FINISHED and "last.pt" in ckpts:
        client.log_artifact(run_id, str(ckpts["last.pt"]), Artifact.CHECKPOINTS)
    if status == RunStatus.FINISHED:
        for name in ("last.pt", "best.pt"):
            client.log_artifact(run_id, str(ckpts[name]), Artifact.CHECKPOINTS)
        best = Checkpoint.load(ckpts["best.pt"])
        model_uri.append(_log_model(client, run_id, best, register, best.step))
        if cfg.attention is AttentionMode.MULTIHEAD:
            _log_attention_maps(client, run_id, best)
    if status != RunStatus.FAILED or failed_at is not None:
        _log_loss_curves(client, run_id, str(cfg.attention), bigram_val_loss(data))
    if result is not None and status == RunStatus.FINISHED:
        model_id = model_uri[0].removeprefix("models:/") if model_uri else None
        finals = {**final_metrics(result), Metric.BEST_VAL_LOSS: result.best_val_loss}
        mlflow.log_metrics(finals, step=result.steps_done, model_id=model_id)
        note = client.get_run(run_id).data.tags.get(Tag.NOTE)
        if note is not None and model_uri:  # the description gains the model's URI
            mlflow.set_tag(
                Tag.NOTE, describe_run(cfg, run_id, part_of=part_of, model_uri=model_uri[0])
            )
    mlflow.end_run(status=status)
    return model_uri
