"""One training run in MLflow: start it or resume it, log it, end it with a `RunStatus`.

A run logs every option of `attention_ref.lm.config.TrainConfig` and the derived figures as
params; attention mode, device, versions, data sha256 and git commit as tags; the step and
evaluation metrics of `attention_ref.lm.train` under their field names (`Metric`); system
metrics (psutil); the data set as an input; artifacts ``config.json``, ``samples/``,
``checkpoints/``, ``model/model.pt``, ``plots/loss_curves.png`` and, with attention,
``attention/layer{l}_head{h}.png`` (numbered from 1) + ``attention/weights.json``; the model
as an MLflow LoggedModel (`attention_ref.experiments.logged_model`), linked to the run and its
final metrics. The experiment is tagged so the MLflow UI opens on its runs
(`mark_experiment`); the run's description (``mlflow.note.content``) says what it is and how
to sample it (`describe_run`).

Ctrl-C/SIGTERM end the run ``KILLED`` with its checkpoint; a NaN/inf loss ends it ``FAILED``
with the step in the tag ``failed_at_step``. `prepare_resume` is the one way back into a run:
it finds the run in whatever experiment holds it and returns its config and checkpoint, with
``device`` and ``threads`` (the only options that may change on resume) applied and later
recorded on the run as tags.

This module starts (or continues) the run (`run_training`); its parts live beside it, and every
name is importable from here as before: `attention_ref.experiments.resume` (`prepare_resume`,
`ResumePoint`, `RESUMABLE_OPTIONS`), `attention_ref.experiments.run_log` (the run's log as it
goes: `StepMetricBuffer`, `mark_experiment`, `describe_run`, `provenance_tags`, `metric_curve`)
and `attention_ref.experiments.run_end` (how it ends: `final_metrics`, `tracking_failure`,
`StoppedAtOnce`, `HEATMAP_LINE`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mlflow
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref.experiments.names import RunStatus, Tag, train_run_name
from attention_ref.experiments.resume import RESUMABLE_OPTIONS as RESUMABLE_OPTIONS
from attention_ref.experiments.resume import ResumePoint
from attention_ref.experiments.resume import prepare_resume as prepare_resume
from attention_ref.experiments.run_end import HEATMAP_LINE as HEATMAP_LINE
from attention_ref.experiments.run_end import (
    StoppedAtOnce,
    end_run,
    stopped_by_the_store,
    tracking_failure,
    what_a_second_ctrl_c_kept,
)
from attention_ref.experiments.run_end import final_metrics as final_metrics
from attention_ref.experiments.run_log import STEP_METRICS_FLUSH as STEP_METRICS_FLUSH
from attention_ref.experiments.run_log import RunLogger, describe_run, mark_experiment
from attention_ref.experiments.run_log import StepMetricBuffer as StepMetricBuffer
from attention_ref.experiments.run_log import log_input_once as log_input_once
from attention_ref.experiments.run_log import metric_curve as metric_curve
from attention_ref.experiments.run_log import provenance_tags as provenance_tags
from attention_ref.experiments.store import TrackingError
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import CharData
from attention_ref.lm.train import Callbacks, NonFiniteLossError, TrainResult, train

SYSTEM_METRICS_INTERVAL_S = 5.0


@dataclass
class RunOutcome:
    """How a tracked run ended."""

    run_id: str
    status: RunStatus
    out_dir: Path
    result: TrainResult | None = None
    error: str | None = None
    failed_at_step: int | None = None
    resumed_from_step: int | None = None
    model_uri: str | None = None  # the LoggedModel (``models:/m-…``) of a finished run


def run_training(
    cfg: TrainConfig,
    data: CharData,
    *,
    out_root: Path = Path("runs"),
    run_name: str | None = None,
    callbacks: Callbacks | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume: ResumePoint | None = None,
    nested: bool = False,
    log_system_metrics: bool = True,
    part_of: str | None = None,
    register: str | None = None,
    on_run_start: Callable[[str], None] | None = None,
    metrics_every: int = 1,
    tags: dict[str, str] | None = None,
) -> RunOutcome:
    """Train with ``cfg`` inside an MLflow run: a new one, or ``resume``'s run continued.

    Call `attention_ref.experiments.store.connect` first. When resuming, ``cfg`` is
    ``resume.config`` (pass it). Checkpoints go to ``out_root/<run_id>/`` and into the run's
    ``checkpoints/``. ``nested`` starts the run under the active run (the ablation's parent),
    ``part_of`` says so in the run's description. The run is named `train_run_name`
    (``q02-multihead``) unless ``run_name``. ``register`` registers the model under that name
    in the Model Registry. ``on_run_start(run_id)`` is called once the run exists, before the
    first step (the CLI prints the id and the store). ``metrics_every``: with the step
    replayed as a CUDA graph, the step metrics are read and logged every this many steps
    (`attention_ref.lm.train.train`); the eager step logs every step. ``tags``: set on a new
    run as it starts (a sweep's arm, seed and group).
    """
    client = MlflowClient()
    if resume is not None:
        # the run knows its experiment: make it the active one, whatever was selected before
        mlflow.set_experiment(experiment_id=resume.experiment_id)
    if log_system_metrics:
        mlflow.set_system_metrics_sampling_interval(SYSTEM_METRICS_INTERVAL_S)
    try:
        active = mlflow.start_run(
            run_id=resume.run_id if resume else None,
            run_name=None if resume else (run_name or train_run_name(str(cfg.attention))),
            nested=nested,
            log_system_metrics=log_system_metrics,
            tags=None if resume else tags,
        )
    except MlflowException as e:  # e.g. a class server: another student's run
        raise TrackingError(tracking_failure(e)) from None
    run_id = active.info.run_id
    mark_experiment(active.info.experiment_id, client)
    if resume is None:
        mlflow.set_tag(Tag.NOTE, describe_run(cfg, run_id, part_of=part_of))
    if on_run_start is not None:
        on_run_start(run_id)
    out_dir = out_root / run_id
    logger = RunLogger(client, run_id, cfg, data, resume)
    status, error, failed_at, result = RunStatus.FAILED, None, None, None
    model_uri: list[str] = []
    at_once = False

    def stop() -> bool:  # Ctrl-C, or the store refused a write / went away
        return logger.failure is not None or (should_stop is not None and should_stop())

    try:
        result = train(
            cfg,
            data,
            out_dir,
            callbacks=Callbacks.chain(logger.callbacks(), callbacks or Callbacks()),
            resume_from=resume.checkpoint if resume else None,
            should_stop=stop,
            metrics_every=metrics_every,
        )
        status = RunStatus.KILLED if result.interrupted else RunStatus.FINISHED
    except NonFiniteLossError as e:
        error, failed_at = str(e), e.step
        mlflow.set_tag(Tag.FAILED_AT_STEP, str(e.step))
    except KeyboardInterrupt:  # a second Ctrl-C: no checkpoint of this step, but not a failure
        status = RunStatus.KILLED
        at_once = True
    finally:
        if logger.failure is None:
            try:
                model_uri += end_run(
                    client,
                    run_id,
                    cfg,
                    data,
                    logger,
                    status,
                    failed_at,
                    result,
                    register,
                    part_of if resume is None else None,
                )
            except (MlflowException, OSError) as e:
                logger.failure = e
            except KeyboardInterrupt:  # Ctrl-C again while the ending was being logged
                at_once = True
                with contextlib.suppress(MlflowException, OSError, KeyboardInterrupt):
                    mlflow.end_run(status=RunStatus.KILLED)
    if logger.failure is not None:
        raise TrackingError(stopped_by_the_store(logger, run_id, out_dir, result))
    if at_once:
        raise StoppedAtOnce(what_a_second_ctrl_c_kept(run_id, out_dir))
    return RunOutcome(
        run_id,
        status,
        out_dir,
        result,
        error,
        failed_at,
        resume.step if resume else None,
        model_uri[0] if model_uri else None,
    )
