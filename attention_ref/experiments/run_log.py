"""One run's log as it goes: params, tags, the data set, step and evaluation metrics, samples.

`RunLogger` holds the training loop's callbacks that write a run (`StepMetricBuffer` batches
the step metrics, `log_input_once` logs the data set); `mark_experiment` makes the MLflow UI
open an experiment on its runs, `describe_run` writes the run's description
(``mlflow.note.content``), `provenance_tags` what every run records about where it comes from,
and `metric_curve` reads one metric back as stored.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable
from dataclasses import asdict
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
from attention_ref.experiments.names import EXPERIMENT_KIND, Artifact, RunKind, Tag, sample_path
from attention_ref.experiments.resume import ResumePoint
from attention_ref.experiments.store import git_commit
from attention_ref.lm.callbacks import Callbacks, EvalMetrics, StartInfo, StepMetrics
from attention_ref.lm.config import AttentionMode, TrainConfig
from attention_ref.lm.data import URL, CharData

STEP_METRICS_FLUSH = 200  # buffered step metrics are written in batches (one DB commit each)
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


class RunLogger:
    """The loop's callbacks that write one run: params and tags at the start, metrics and
    samples as they come, and which checkpoint files exist."""

    def __init__(
        self,
        client: MlflowClient,
        run_id: str,
        cfg: TrainConfig,
        data: CharData,
        resume: ResumePoint | None,
    ) -> None:
        self.client, self.run_id, self.cfg, self.data, self.resume = (
            client,
            run_id,
            cfg,
            data,
            resume,
        )
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
            tags = {
                Tag.DEVICE: info.device,
                Tag.RESUMED_AT_STEP: str(info.start_step),
                Tag.PRECISION: info.precision,
            }
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
        """The step and evaluation metrics the store did not take, in
        ``out_dir/unlogged_metrics.json`` (MLflow's system metrics are not buffered here)."""
        if not self.buffer.pending:
            return None
        path = out_dir / "unlogged_metrics.json"
        out_dir.mkdir(parents=True, exist_ok=True)
        rows = [(m.key, m.value, m.step, m.timestamp) for m in self.buffer.pending]
        path.write_text(json.dumps(rows) + "\n", encoding="utf-8")
        return path
