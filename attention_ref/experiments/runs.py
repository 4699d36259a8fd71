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
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mlflow
import torch
from mlflow.data.http_dataset_source import HTTPDatasetSource
from mlflow.data.meta_dataset import MetaDataset
from mlflow.entities import Metric as MlflowMetric
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref import __version__
from attention_ref.experiments.explorer import EXPLORER_LINES
from attention_ref.experiments.names import (
    EXPERIMENT_KIND,
    Artifact,
    Metric,
    RunKind,
    RunStatus,
    Tag,
    attention_map_path,
    attention_map_title,
    sample_path,
    train_run_name,
)
from attention_ref.experiments.plots import attention_heatmap, loss_curves, save
from attention_ref.experiments.store import TrackingError, first_line, git_commit
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import AttentionMode, TrainConfig
from attention_ref.lm.data import URL, CharData, bigram_val_loss
from attention_ref.lm.train import (
    Callbacks,
    EvalMetrics,
    NonFiniteLossError,
    StartInfo,
    StepMetrics,
    TrainResult,
    train,
)

#: the fixed line whose attention maps every multihead run logs (all characters are in the vocab)
HEATMAP_LINE = EXPLORER_LINES[0]  # "ROMEO:\nBut, soft! what light through yonder window breaks?"
STEP_METRICS_FLUSH = 200  # buffered step metrics are written in batches (one DB commit each)
SYSTEM_METRICS_INTERVAL_S = 5.0
#: the options that may change when a run is resumed; every other one is the run's own
RESUMABLE_OPTIONS: tuple[str, ...] = ("device", "threads")
_RESUME_TAGS = {"device": Tag.RESUMED_DEVICE, "threads": Tag.RESUMED_THREADS}


#: what a store says when two runs insert the same dataset at once (PostgreSQL, sqlite)
_DATASET_RACE = ("dataset_pk", "UNIQUE constraint failed: datasets")


def log_input_once(dataset: MetaDataset, tries: int = 3) -> None:
    """``mlflow.log_input`` of the training data, safe when runs start together.

    MLflow's store looks a dataset up, then inserts it: two runs of one experiment logging the
    same dataset at once (a class starting its trainings) can both insert, and the second
    fails on the dataset's unique key. Tried again, it finds the dataset and only links it.
    """
    for attempt in range(tries):
        try:
            mlflow.log_input(dataset, context="training")
            return
        except MlflowException as e:
            if attempt == tries - 1 or not any(m in str(e) for m in _DATASET_RACE):
                raise
            time.sleep(0.2 * (attempt + 1))


class StepMetricBuffer:
    """Step metrics collected in memory and written with ``log_batch`` (one commit per batch)."""

    def __init__(self, client: MlflowClient, run_id: str, flush_every: int = STEP_METRICS_FLUSH):
        self.client, self.run_id, self.flush_every = client, run_id, flush_every
        self.pending: list[MlflowMetric] = []

    def add(self, step: int, values: dict[str, float]) -> None:
        """Queue ``values`` (metric name -> value) at ``step``."""
        now = int(time.time() * 1000)
        self.pending += [MlflowMetric(k, float(v), now, step) for k, v in values.items()]
        if len(self.pending) >= self.flush_every * 4:
            self.flush()

    def flush(self) -> None:
        """Write what is queued."""
        for i in range(0, len(self.pending), 1000):  # MLflow's limit per log_batch
            self.client.log_batch(self.run_id, metrics=self.pending[i : i + 1000])
        self.pending = []


def metric_curve(client: MlflowClient, run_id: str, key: str) -> list[tuple[int, float]]:
    """``[(step, value)]`` of one metric, as stored (resumed runs included)."""
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def final_metrics(result: TrainResult) -> dict[str, float]:
    """The figures a finished run logs once, by `Metric` name (the ablation reads the same)."""
    return {
        Metric.FINAL_VAL_LOSS: result.final_val_loss,
        Metric.FINAL_TRAIN_EVAL_LOSS: result.final_train_loss,
        Metric.WALL_TIME_S: result.wall_time_s,
        Metric.MEAN_TOKENS_PER_SEC: result.tokens_per_sec,
    }


def mark_experiment(experiment_id: str, client: MlflowClient | None = None) -> None:
    """Tag the experiment ``mlflow.experimentKind = custom_model_development``: the MLflow UI
    then opens it on its runs (without the tag, MLflow 3 opens the GenAI overview of traces).

    Only when it lacks the tag: on a class server a student may not tag the class experiment
    (the server made it with the tag).
    """
    client = client or MlflowClient()
    if client.get_experiment(experiment_id).tags.get(Tag.EXPERIMENT_KIND) != EXPERIMENT_KIND:
        client.set_experiment_tag(experiment_id, Tag.EXPERIMENT_KIND, EXPERIMENT_KIND)


def describe_run(
    cfg: TrainConfig, run_id: str, *, part_of: str | None = None, model_uri: str | None = None
) -> str:
    """The run's description (markdown, ``mlflow.note.content``): what it is, how to sample it.

    ``part_of`` says which sweep the run is an arm of; ``model_uri`` (once logged) adds the
    LoggedModel's URI.
    """
    m = cfg.model
    what = {
        AttentionMode.MULTIHEAD: f"masked multi-head self-attention ({m.n_head} heads of "
        f"d_k = {m.d_k})",
        AttentionMode.NONE: "no attention sub-layer (Q03: each position sees only itself)",
        AttentionMode.UNIFORM: "uniform causal attention (the mean of the previous positions)",
    }[cfg.attention]
    question = "Q02" if cfg.attention is AttentionMode.MULTIHEAD else "Q03"
    lines = [
        f"**{question}**: the character-level GPT with {what}; {m.n_layer} "
        f"block{'s' if m.n_layer != 1 else ''}, "
        f"d_model = {m.n_embd}, context {m.block_size} characters; trained on Tiny Shakespeare "
        f"for {cfg.max_steps} steps (seed {cfg.seed}, batch {cfg.batch_size}, lr {cfg.lr}).",
    ]
    if part_of:
        lines.append(f"Part of {part_of}.")
    lines += ["", "Sample it:", "", f"    attnref sample --run-id {run_id} --prompt 'ROMEO:'"]
    if model_uri:
        lines += [
            "",
            "or in Python:",
            "",
            f"    mlflow.pyfunc.load_model({model_uri!r}).predict(['ROMEO:'])",
        ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ resume


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


# ------------------------------------------------------------------------------ one run's log


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


def _derived_params(cfg: TrainConfig, data: CharData, n_params: int) -> dict[str, Any]:
    return {
        "n_params": n_params,
        "vocab_size": data.vocab_size,
        "d_k": cfg.model.d_k,
        "tokens_per_step": cfg.batch_size * cfg.model.block_size,
        "n_train_tokens": len(data.train),
        "n_val_tokens": len(data.val),
    }


def provenance_tags(data: CharData) -> dict[str, str]:
    """What every run (and the ablation's parent) records about where it comes from."""
    return {
        Tag.DATA_SHA256: data.text_sha256,
        Tag.GIT_COMMIT: git_commit(),
        Tag.TORCH_VERSION: torch.__version__,
    }


def _tags(cfg: TrainConfig, data: CharData, device: str) -> dict[str, str]:
    return {
        Tag.KIND: RunKind.TRAIN,
        Tag.ATTENTION: str(cfg.attention),
        Tag.DEVICE: device,
        Tag.MLFLOW_VERSION: mlflow.__version__,
        Tag.PYTHON_VERSION: platform.python_version(),
        Tag.ATTNREF_VERSION: __version__,
        Tag.DATA_SOURCE: str(data.source),
        **provenance_tags(data),
    }


class _RunLogger:
    """The loop's callbacks that write one run: params and tags at the start, metrics and
    samples as they come, and which checkpoint files exist."""

    def __init__(
        self, client: MlflowClient, run_id: str, cfg: TrainConfig, data: CharData,
        resume: ResumePoint | None,
    ) -> None:  # fmt: skip
        self.client, self.run_id, self.cfg, self.data, self.resume = (
            client, run_id, cfg, data, resume,
        )  # fmt: skip
        self.buffer = StepMetricBuffer(client, run_id)
        self.checkpoints: dict[str, Path] = {}
        #: what the tracking store answered when it refused a write or went away; the loop
        #: then stops (with its checkpoint) and nothing more is sent
        self.failure: Exception | None = None

    def on_start(self, info: StartInfo) -> None:
        if self.resume is None:
            flat = self.cfg.to_flat()
            mlflow.log_params({**flat, **_derived_params(self.cfg, self.data, info.n_params)})
            mlflow.set_tags(
                _tags(self.cfg, self.data, info.device) | {Tag.PRECISION: info.precision}
            )
            dataset = MetaDataset(
                HTTPDatasetSource(URL), name="tinyshakespeare", digest=self.data.text_sha256[:16]
            )
            log_input_once(dataset)
            mlflow.log_dict(flat, Artifact.CONFIG)
        else:
            tags = {Tag.DEVICE: info.device, Tag.RESUMED_AT_STEP: str(info.start_step),
                    Tag.PRECISION: info.precision}  # fmt: skip
            tags |= {_RESUME_TAGS[k]: str(v) for k, v in self.resume.changed.items()}
            mlflow.set_tags(tags)

    def on_step(self, step: int, m: StepMetrics) -> None:
        self.buffer.add(step, asdict(m))

    def on_eval(self, step: int, m: EvalMetrics, sample: str) -> None:
        self.buffer.add(step, asdict(m))
        self.buffer.flush()  # evaluations are the points a reader watches live in the UI
        self.client.log_text(self.run_id, sample, sample_path(step))

    def on_checkpoint(self, path: Path, name: str) -> None:
        self.checkpoints[name] = path

    def callbacks(self) -> Callbacks:
        guard = self._guarded
        return Callbacks(
            guard(self.on_start), guard(self.on_step), guard(self.on_eval), self.on_checkpoint
        )

    def _guarded(self, hook: Callable[..., None]) -> Callable[..., None]:
        """``hook``, with a refused or failed write to the store recorded in `failure`."""

        def call(*args: Any) -> None:
            if self.failure is not None:
                return
            try:
                hook(*args)
            except (MlflowException, OSError) as e:  # requests' errors are OSErrors
                self.failure = e

        return call

    def keep_unsent(self, out_dir: Path) -> Path | None:
        """The step metrics the store did not take, in ``out_dir/unlogged_metrics.json``."""
        if not self.buffer.pending:
            return None
        path = out_dir / "unlogged_metrics.json"
        out_dir.mkdir(parents=True, exist_ok=True)
        rows = [(m.key, m.value, m.step, m.timestamp) for m in self.buffer.pending]
        path.write_text(json.dumps(rows) + "\n", encoding="utf-8")
        return path


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
    logger = _RunLogger(client, run_id, cfg, data, resume)
    status, error, failed_at, result = RunStatus.FAILED, None, None, None
    model_uri: list[str] = []
    at_once = False

    def stop() -> bool:  # Ctrl-C, or the store refused a write / went away
        return logger.failure is not None or (should_stop is not None and should_stop())

    try:
        result = train(
            cfg, data, out_dir,
            callbacks=Callbacks.chain(logger.callbacks(), callbacks or Callbacks()),
            resume_from=resume.checkpoint if resume else None, should_stop=stop,
            metrics_every=metrics_every,
        )  # fmt: skip
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
                model_uri += _end_run(
                    client, run_id, cfg, data, logger, status, failed_at, result, register,
                    part_of if resume is None else None,
                )  # fmt: skip
            except (MlflowException, OSError) as e:
                logger.failure = e
            except KeyboardInterrupt:  # Ctrl-C again while the ending was being logged
                at_once = True
                with contextlib.suppress(MlflowException, OSError, KeyboardInterrupt):
                    mlflow.end_run(status=RunStatus.KILLED)
    if logger.failure is not None:
        raise TrackingError(_stopped_by_the_store(logger, run_id, out_dir, result))
    if at_once:
        raise StoppedAtOnce(_what_a_second_ctrl_c_kept(run_id, out_dir))
    return RunOutcome(
        run_id, status, out_dir, result, error, failed_at, resume.step if resume else None,
        model_uri[0] if model_uri else None,
    )  # fmt: skip


class StoppedAtOnce(KeyboardInterrupt):
    """A second Ctrl-C stopped a run at once; ``str()`` says, in one line, what was kept."""


def _what_a_second_ctrl_c_kept(run_id: str, out_dir: Path) -> str:
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


def _stopped_by_the_store(
    logger: _RunLogger, run_id: str, out_dir: Path, result: TrainResult | None
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


def _end_run(
    client: MlflowClient, run_id: str, cfg: TrainConfig, data: CharData, logger: _RunLogger,
    status: RunStatus, failed_at: int | None, result: TrainResult | None, register: str | None,
    part_of: str | None,
) -> list[str]:  # fmt: skip
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
