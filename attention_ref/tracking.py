"""MLflow tracking of the Shakespeare experiments: the only module that imports ``mlflow``.

* Store: ``--tracking-uri``, else ``$MLFLOW_TRACKING_URI``, else MLflow's embedded default
  ``sqlite:///mlflow.db`` in the working directory (browse it with
  ``mlflow ui --backend-store-uri sqlite:///mlflow.db``). Experiment ``shakespeare``.
* A run logs every `attention_ref.train.TrainConfig` value and the derived figures as
  params; attention mode, device, versions, data sha256 and git commit as tags; step metrics
  ``train_loss, lr, grad_norm, tokens_per_sec`` and, at evaluations, ``val_loss``,
  ``train_eval_loss``, ``best_val_loss``; system metrics (psutil); the data set as an input;
  artifacts ``config.json``, ``samples/``, ``checkpoints/``, ``model/model.pt``,
  ``plots/loss_curves.png`` and, with attention, ``attention/layer{l}_head{h}.png``.
* Ctrl-C/SIGTERM end the run ``KILLED`` with its checkpoint; ``--resume RUN_ID`` continues it;
  a NaN/inf loss ends it ``FAILED`` with the step in the tag ``failed_at_step``.
* `run_ablation` nests one child run per attention mode under a parent run that gets the
  comparison table and the overlaid curves; `build_report` reads them back (Q03).
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mlflow
import torch
from mlflow.data.http_dataset_source import HTTPDatasetSource
from mlflow.data.meta_dataset import MetaDataset
from mlflow.entities import Metric
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref import __version__
from attention_ref.config import ATTENTION_MODES
from attention_ref.data import URL, CharData, bigram_val_loss
from attention_ref.plots import attention_heatmap, loss_curves, save
from attention_ref.train import (
    Callbacks,
    NonFiniteLossError,
    TrainConfig,
    TrainResult,
    load_checkpoint,
    train,
)

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
DEFAULT_EXPERIMENT = "shakespeare"
#: the fixed line whose attention maps every multihead run logs (all characters are in the vocab)
HEATMAP_LINE = "ROMEO:\nBut, soft! what light through yonder window breaks?"
KIND_TAG = "attnref.kind"  # "train" (a single run or an ablation arm) or "ablation" (the parent)
STEP_METRICS_FLUSH = 200  # buffered step metrics are written in batches (one DB commit each)
SYSTEM_METRICS_INTERVAL_S = 5.0

for _name in ("mlflow", "alembic"):
    logging.getLogger(_name).setLevel(logging.WARNING)


class TrackingError(ValueError):
    """The tracking store or a run cannot be used as asked; the message says why, in one line."""


# ---------------------------------------------------------------------------------- the store


def resolve_tracking_uri(uri: str | None = None) -> str:
    """``uri``, else ``$MLFLOW_TRACKING_URI``, else the embedded ``sqlite:///mlflow.db``."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_TRACKING_URI


def connect(uri: str | None = None, experiment: str | None = DEFAULT_EXPERIMENT) -> str | None:
    """Point MLflow at the store, create/select ``experiment`` (if given); return its id.

    A server that does not answer ``/health`` within 5 s is reported at once (MLflow's own
    client would retry for minutes).
    """
    uri = resolve_tracking_uri(uri)
    if uri.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=5) as r:
                r.read()
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise TrackingError(
                f"cannot reach the MLflow server at {uri} ({reason}); start it, or leave out "
                f"--tracking-uri to use the embedded store {DEFAULT_TRACKING_URI}"
            ) from None
    mlflow.set_tracking_uri(uri)
    if experiment is None:
        return None
    try:
        return mlflow.set_experiment(experiment).experiment_id
    except MlflowException as e:
        raise TrackingError(f"cannot use the tracking store {uri}: {_first_line(e)}") from None


def migrate_store(uri: str) -> None:
    """Create (or upgrade) the tables of a database store now, not at the first run."""
    MlflowClient(tracking_uri=uri).search_experiments(max_results=1)


def current_uri() -> str:
    """The tracking URI MLflow uses now."""
    return mlflow.get_tracking_uri()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _git_commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        )  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() + ("-dirty" if dirty else "")


# ------------------------------------------------------------------------------ one run's log


class StepMetricBuffer:
    """Step metrics collected in memory and written with ``log_batch`` (one commit per batch)."""

    def __init__(self, client: MlflowClient, run_id: str, flush_every: int = STEP_METRICS_FLUSH):
        self.client, self.run_id, self.flush_every = client, run_id, flush_every
        self.pending: list[Metric] = []

    def add(self, step: int, values: dict[str, float]) -> None:
        now = int(time.time() * 1000)
        self.pending += [Metric(k, float(v), now, step) for k, v in values.items()]
        if len(self.pending) >= self.flush_every * 4:
            self.flush()

    def flush(self) -> None:
        for i in range(0, len(self.pending), 1000):  # MLflow's limit per log_batch
            self.client.log_batch(self.run_id, metrics=self.pending[i : i + 1000])
        self.pending = []


def _tracking_callbacks(client: MlflowClient, run_id: str, buffer: StepMetricBuffer) -> Callbacks:
    def on_step(step: int, m: dict[str, float]) -> None:
        buffer.add(step, m)

    def on_eval(step: int, m: dict[str, float], sample: str) -> None:
        buffer.add(step, m)
        buffer.flush()  # evaluations are the points a reader watches live in the UI
        client.log_text(run_id, sample, f"samples/step_{step:06d}.txt")

    return Callbacks(on_step=on_step, on_eval=on_eval)


def _derived_params(cfg: TrainConfig, data: CharData, n_params: int) -> dict[str, Any]:
    return {
        "n_params": n_params,
        "vocab_size": data.vocab_size,
        "d_k": cfg.n_embd // cfg.n_head,
        "tokens_per_step": cfg.batch_size * cfg.block_size,
        "n_train_tokens": len(data.train),
        "n_val_tokens": len(data.val),
    }


def _tags(cfg: TrainConfig, data: CharData, device: str) -> dict[str, str]:
    return {
        KIND_TAG: "train",
        "attention": cfg.attention,
        "device": device,
        "torch_version": torch.__version__,
        "mlflow_version": mlflow.__version__,
        "python_version": platform.python_version(),
        "attnref_version": __version__,
        "data_sha256": data.text_sha256,
        "data_source": str(data.source),
        "git_commit": _git_commit(),
    }


def _log_dataset(data: CharData) -> None:
    dataset = MetaDataset(
        HTTPDatasetSource(URL), name="tinyshakespeare", digest=data.text_sha256[:16]
    )
    mlflow.log_input(dataset, context="training")


def metric_curve(client: MlflowClient, run_id: str, key: str) -> list[tuple[int, float]]:
    """``[(step, value)]`` of one metric, as stored (resumed runs included)."""
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def _log_loss_curves(client: MlflowClient, run_id: str, label: str, floor: float | None) -> None:
    curves = {label: {k: metric_curve(client, run_id, k) for k in ("train_loss", "val_loss")}}
    with tempfile.TemporaryDirectory() as tmp:
        path = save(loss_curves(curves, floor=floor), Path(tmp) / "loss_curves.png")
        client.log_artifact(run_id, str(path), "plots")


def _log_attention_maps(client: MlflowClient, run_id: str, checkpoint: Path) -> None:
    model, _, chars = load_checkpoint(checkpoint)
    stoi = {c: i for i, c in enumerate(chars)}
    line = HEATMAP_LINE[: model.cfg.block_size]
    idx = torch.tensor([[stoi[c] for c in line]])
    maps = model.attention_maps(idx)  # [(1, h, T, T)] per layer
    doc = {"line": line, "layers": [[A.tolist() for A in m[0]] for m in maps]}
    with tempfile.TemporaryDirectory() as tmp:
        for layer, m in enumerate(maps):
            for head in range(m.size(1)):
                fig = attention_heatmap(
                    m[0, head].tolist(),
                    line,
                    title=f"layer {layer}, head {head}: A = softmax(QKᵀ/√d_k + M)",
                )
                path = save(fig, Path(tmp) / f"layer{layer}_head{head}.png")
                client.log_artifact(run_id, str(path), "attention")
        client.log_dict(run_id, doc, "attention/weights.json")


def _log_model(client: MlflowClient, run_id: str, checkpoint: Path) -> None:
    """``model/model.pt``: state_dict, config, vocabulary of the best checkpoint (no optimizer)."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    slim = {k: state[k] for k in ("model", "config", "chars", "step", "best_val_loss")}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.pt"
        torch.save(slim, path)
        client.log_artifact(run_id, str(path), "model")
        client.log_dict(run_id, state["config"], "model/config.json")


@dataclass
class RunOutcome:
    """How a tracked run ended."""

    run_id: str
    status: str  # FINISHED, KILLED or FAILED
    out_dir: Path
    result: TrainResult | None = None
    error: str | None = None
    failed_at_step: int | None = None
    resumed_from_step: int | None = None


def _resume_state(
    client: MlflowClient, run_id: str, data: CharData, out_root: Path
) -> tuple[TrainConfig, Path, int]:
    try:
        run = client.get_run(run_id)
    except MlflowException:
        raise TrackingError(
            f"no run {run_id!r} in the tracking store {mlflow.get_tracking_uri()}"
        ) from None
    if run.data.tags.get(KIND_TAG) != "train":
        raise TrackingError(f"run {run_id} is not a training run of attnref; nothing to resume")
    if run.info.status == "FINISHED":
        raise TrackingError(f"run {run_id} already finished; nothing to resume")
    if run.data.tags.get("data_sha256") not in (None, data.text_sha256):
        raise TrackingError(
            f"run {run_id} was trained on other data (sha256 differs); pass the same --data"
        )
    out_dir = out_root / run_id
    try:
        config_path = mlflow.artifacts.download_artifacts(
            run_id=run_id, artifact_path="config.json", dst_path=str(out_dir)
        )
        ckpt = mlflow.artifacts.download_artifacts(
            run_id=run_id, artifact_path="checkpoints/last.pt", dst_path=str(out_dir)
        )
    except (MlflowException, OSError):
        raise TrackingError(
            f"run {run_id} has no checkpoint to resume from (checkpoints/last.pt)"
        ) from None
    cfg = TrainConfig.from_dict(json.loads(Path(config_path).read_text(encoding="utf-8")))
    step = int(torch.load(ckpt, map_location="cpu", weights_only=False)["step"])
    return cfg, Path(ckpt), step


def run_training(
    cfg: TrainConfig | None,
    data: CharData,
    *,
    out_root: Path = Path("runs"),
    run_name: str | None = None,
    callbacks: Callbacks | None = None,
    should_stop: Callable[[], bool] | None = None,
    resume_run_id: str | None = None,
    nested: bool = False,
    log_system_metrics: bool = True,
) -> RunOutcome:
    """Train with ``cfg`` inside an MLflow run (new, or ``resume_run_id`` continued).

    Call `connect` first. ``cfg`` is ignored when resuming (the run's ``config.json``
    rules). Checkpoints go to ``out_root/<run_id>/`` and into the run's ``checkpoints/``.
    ``nested`` starts the run under the active run (the ablation's parent).
    """
    client = MlflowClient()
    resumed_from: int | None = None
    resume_path: Path | None = None
    if resume_run_id is not None:
        cfg, resume_path, resumed_from = _resume_state(client, resume_run_id, data, out_root)
    assert cfg is not None
    cfg.validate(min(len(data.train), len(data.val)))
    if log_system_metrics:
        mlflow.set_system_metrics_sampling_interval(SYSTEM_METRICS_INTERVAL_S)
    active = mlflow.start_run(
        run_id=resume_run_id,
        run_name=None if resume_run_id else (run_name or cfg.attention),
        nested=nested,
        log_system_metrics=log_system_metrics,
    )
    run_id = active.info.run_id
    out_dir = out_root / run_id
    buffer = StepMetricBuffer(client, run_id)
    checkpoints: dict[str, Path] = {}

    def on_start(info: dict[str, Any]) -> None:
        if resume_run_id is None:
            mlflow.log_params({**cfg.to_dict(), **_derived_params(cfg, data, info["n_params"])})
            mlflow.set_tags(_tags(cfg, data, info["device"]))
            _log_dataset(data)
            mlflow.log_dict(cfg.to_dict(), "config.json")
        else:
            mlflow.set_tags({"device": info["device"], "resumed_at_step": str(info["start_step"])})

    mine = _tracking_callbacks(client, run_id, buffer)
    mine.on_start = on_start
    mine.on_checkpoint = lambda path, name: checkpoints.__setitem__(name, path)
    status, error, failed_at, result = "FAILED", None, None, None
    try:
        result = train(
            cfg, data, out_dir,
            callbacks=Callbacks.chain(mine, callbacks or Callbacks()),
            resume_from=resume_path, should_stop=should_stop,
        )  # fmt: skip
        status = "KILLED" if result.interrupted else "FINISHED"
    except NonFiniteLossError as e:
        error, failed_at = str(e), e.step
        mlflow.set_tag("failed_at_step", str(e.step))
    except KeyboardInterrupt:  # a second Ctrl-C: no checkpoint of this step, but not a failure
        status = "KILLED"
        raise
    finally:
        buffer.flush()
        if status != "FINISHED" and "last.pt" in checkpoints:
            client.log_artifact(run_id, str(checkpoints["last.pt"]), "checkpoints")
        if status == "FINISHED":
            for name in ("last.pt", "best.pt"):
                client.log_artifact(run_id, str(checkpoints[name]), "checkpoints")
            _log_model(client, run_id, checkpoints["best.pt"])
            if cfg.attention == "multihead":
                _log_attention_maps(client, run_id, checkpoints["best.pt"])
        if status != "FAILED" or failed_at is not None:
            floor = bigram_val_loss(data)
            _log_loss_curves(client, run_id, cfg.attention, floor)
        if result is not None and status == "FINISHED":
            mlflow.log_metrics(
                {
                    "final_val_loss": result.final_val_loss,
                    "final_train_eval_loss": result.final_train_loss,
                    "wall_time_s": result.wall_time_s,
                    "mean_tokens_per_sec": result.tokens_per_sec,
                }
            )
        mlflow.end_run(status=status)
    return RunOutcome(run_id, status, out_dir, result, error, failed_at, resumed_from)


# ------------------------------------------------------------------------------------ ablation


@dataclass
class ArmRow:
    """One line of the ablation's comparison table."""

    attention: str
    run_id: str
    status: str
    n_params: int
    best_val_loss: float
    final_val_loss: float
    final_train_loss: float
    tokens_per_sec: float
    wall_time_s: float
    steps: int
    val_curve: list[tuple[int, float]] = field(default_factory=list)  # filled when read back


@dataclass
class AblationOutcome:
    """The parent run and its arms."""

    parent_run_id: str
    status: str
    rows: list[ArmRow] = field(default_factory=list)
    bigram_floor: float = math.nan
    failed: str | None = None


def comparison_markdown(rows: Sequence[ArmRow], floor: float) -> str:
    """The comparison table (markdown) with the bigram floor under it."""
    cols = ("attention", "parameters", "best val loss", "final val loss", "final train loss",
            "tokens/s", "wall time (s)", "steps")  # fmt: skip
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for r in rows:
        lines.append(
            f"| {r.attention} | {r.n_params:,} | {r.best_val_loss:.4f} | {r.final_val_loss:.4f} | "
            f"{r.final_train_loss:.4f} | {r.tokens_per_sec:,.0f} | {r.wall_time_s:.0f} | "
            f"{r.steps} |"
        )
    lines += [
        "",
        f"Bigram floor (counted on the training split; validation cross-entropy): {floor:.4f} nats",
    ]
    return "\n".join(lines) + "\n"


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
    """Q03: the same config, seed and number of steps for each attention mode in ``arms``.

    A parent run ``ablation`` holds one nested child per arm; at the end it gets
    ``comparison.md``/``comparison.json``, ``plots/loss_curves.png`` (the arms overlaid, with
    the bigram floor) and one metric per arm and figure.
    """
    for arm in arms:
        TrainConfig(**{**cfg.to_dict(), "attention": arm}).validate(
            min(len(data.train), len(data.val))
        )
    client = MlflowClient()
    floor = bigram_val_loss(data)
    parent = mlflow.start_run(run_name="ablation", tags={KIND_TAG: "ablation"})
    shared = {k: v for k, v in cfg.to_dict().items() if k != "attention"}
    mlflow.log_params({**shared, "arms": ",".join(arms), "bigram_floor": round(floor, 6)})
    mlflow.set_tags(
        {
            "data_sha256": data.text_sha256,
            "git_commit": _git_commit(),
            "torch_version": torch.__version__,
        }
    )
    mlflow.log_metric("bigram_floor", floor)
    outcome = AblationOutcome(parent.info.run_id, "RUNNING", bigram_floor=floor)
    try:
        for arm in arms:
            arm_cfg = TrainConfig(**{**cfg.to_dict(), "attention": arm})
            o = run_training(
                arm_cfg, data, out_root=out_root, run_name=arm, nested=True,
                callbacks=callbacks_for(arm) if callbacks_for else None,
                should_stop=should_stop, log_system_metrics=log_system_metrics,
            )  # fmt: skip
            if o.result is not None and o.status == "FINISHED":
                r = o.result
                outcome.rows.append(
                    ArmRow(
                        arm,
                        o.run_id,
                        o.status,
                        r.n_params,
                        r.best_val_loss,
                        r.final_val_loss,
                        r.final_train_loss,
                        r.tokens_per_sec,
                        r.wall_time_s,
                        r.steps_done,
                    )
                )
            if o.status != "FINISHED":
                outcome.status = o.status
                outcome.failed = o.error or f"arm {arm} was interrupted (run {o.run_id})"
                break
        else:
            outcome.status = "FINISHED"
    except KeyboardInterrupt:
        outcome.status = "KILLED"
        raise
    finally:
        if outcome.rows:
            _log_comparison(client, outcome)
        mlflow.end_run(status=outcome.status if outcome.status != "RUNNING" else "FAILED")
    return outcome


def _log_comparison(client: MlflowClient, outcome: AblationOutcome) -> None:
    run_id = outcome.parent_run_id
    client.log_text(
        run_id, comparison_markdown(outcome.rows, outcome.bigram_floor), "comparison.md"
    )
    client.log_dict(
        run_id,
        {"bigram_floor": outcome.bigram_floor, "rows": [asdict(r) for r in outcome.rows]},
        "comparison.json",
    )
    for r in outcome.rows:
        for key in (
            "best_val_loss",
            "final_val_loss",
            "final_train_loss",
            "tokens_per_sec",
            "wall_time_s",
        ):
            mlflow.log_metric(f"{r.attention}_{key}", getattr(r, key))
    curves = {
        r.attention: {k: metric_curve(client, r.run_id, k) for k in ("train_loss", "val_loss")}
        for r in outcome.rows
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
        client.log_artifact(run_id, str(path), "plots")


# ---------------------------------------------------------------------------------- read back


def load_model(run_id: str, dst: Path | None = None) -> tuple[Any, TrainConfig, list[str]]:
    """The trained model of a run (``model/model.pt``), its config and vocabulary."""
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = mlflow.artifacts.download_artifacts(
                run_id=run_id, artifact_path="model/model.pt", dst_path=str(dst or tmp)
            )
            return load_checkpoint(Path(path))
    except MlflowException:
        raise TrackingError(
            f"run {run_id!r} has no trained model (model/model.pt) in {mlflow.get_tracking_uri()}; "
            "only finished training runs have one"
        ) from None


# ------------------------------------------------------------------------------- Q03 report


def _search(experiment: str, filter_string: str, max_results: int = 100) -> list[Any]:
    return mlflow.search_runs(
        experiment_names=[experiment],
        filter_string=filter_string,
        order_by=["attributes.start_time DESC"],
        max_results=max_results,
        output_format="list",
    )


def _arm_from_run(client: MlflowClient, run: Any) -> ArmRow:
    m, p = run.data.metrics, run.data.params
    return ArmRow(
        attention=run.data.tags.get("attention", p.get("attention", "?")),
        run_id=run.info.run_id,
        status=run.info.status,
        n_params=int(p["n_params"]),
        best_val_loss=m["best_val_loss"],
        final_val_loss=m["final_val_loss"],
        final_train_loss=m["final_train_eval_loss"],
        tokens_per_sec=m["mean_tokens_per_sec"],
        wall_time_s=m["wall_time_s"],
        steps=int(p["max_steps"]),
        val_curve=metric_curve(client, run.info.run_id, "val_loss"),
    )


def find_arms(experiment: str) -> tuple[str, list[ArmRow]]:
    """The arms of the latest finished ablation, else the latest finished run of each mode."""
    if mlflow.get_experiment_by_name(experiment) is None:
        raise TrackingError(f"no experiment {experiment!r} in {mlflow.get_tracking_uri()}")
    client = MlflowClient()
    finished = "attributes.status = 'FINISHED'"
    parents = _search(experiment, f"tags.`{KIND_TAG}` = 'ablation' and {finished}", 1)
    if parents:
        pid = parents[0].info.run_id
        children = _search(experiment, f"tags.`mlflow.parentRunId` = '{pid}' and {finished}")
        order = {a: i for i, a in enumerate(ATTENTION_MODES)}
        arms = sorted(
            (_arm_from_run(client, r) for r in children), key=lambda a: order.get(a.attention, 9)
        )
        return f"ablation run `{pid}`", arms
    arms = []
    for mode in ATTENTION_MODES:
        runs = _search(experiment, f"tags.attention = '{mode}' and {finished}", 1)
        if runs:
            arms.append(_arm_from_run(client, runs[0]))
    if not arms:
        raise TrackingError(
            f"no finished runs in experiment {experiment!r}; run `attnref ablation` first"
        )
    return "the latest finished run of each mode", arms


def plateau_step(curve: Sequence[tuple[int, float]], tolerance: float = 0.02) -> int:
    """First evaluation step from which validation loss stays within ``tolerance`` of its end."""
    final = curve[-1][1]
    step = curve[-1][0]
    for s, v in reversed(curve):
        if abs(v - final) > tolerance:
            break
        step = s
    return step


def build_report(experiment: str, data: CharData) -> str:
    """The markdown answer to Q03, every figure taken from the runs and the data."""
    source, arms = find_arms(experiment)
    floor = bigram_val_loss(data)
    counts = torch.bincount(data.train, minlength=data.vocab_size).double()
    p = counts / counts.sum()
    unigram = float(-(torch.log(p[data.val])).mean())
    by = {a.attention: a for a in arms}
    out = [
        "# Q03: the same model without attention, measured",
        "",
        f"Experiment `{experiment}`, {source}; every arm has the same seed, data, schedule and "
        "number of steps. Losses are cross-entropy in nats per character on fixed validation "
        "batches.",
        "",
        comparison_markdown(arms, floor).rstrip(),
        "",
        "Reference points on the validation split: a uniform guess over the "
        f"{data.vocab_size} characters costs ln {data.vocab_size} = "
        f"{math.log(data.vocab_size):.3f}; character frequencies alone (unigram) "
        f"{unigram:.3f}; the **bigram floor** "
        f"{floor:.3f}: the table P(next | current) counted on the training split.",
        "",
        "## What happens in training",
        "",
    ]
    mh, no, un = by.get("multihead"), by.get("none"), by.get("uniform")
    if mh is not None:
        first = mh.val_curve[0]
        out.append(
            f"* **With attention (Q02).** Validation loss falls from {first[1]:.3f} at step "
            f"{first[0]} to {mh.best_val_loss:.3f}, {floor - mh.best_val_loss:.3f} nats below the "
            "bigram floor: every prediction reads the previous characters of its block, weighted "
            "by softmax(QKᵀ/√d_k + M), so it can use words, names and line structure."
        )
    if no is not None:
        gap = no.best_val_loss - floor
        plateau = plateau_step(no.val_curve)
        verdict = (
            f"that is {gap:+.3f} nats from the floor: the model has learned the bigram table "
            "and can learn nothing more"
            if gap >= -0.03
            else f"that is {-gap:.3f} nats BELOW the floor, which a model without attention "
            "cannot reach: context leaks into the predictions somewhere"
        )
        out.append(
            f"* **Without attention (Q03).** The curve flattens early: from step {plateau} of "
            f"{no.steps} the validation loss stays within 0.02 of its final "
            f"{no.final_val_loss:.3f}, and the best is {no.best_val_loss:.3f}; {verdict}. "
            "Without the attention sub-layer nothing moves information between positions: the "
            "MLP and the LayerNorms act on each position alone, so the prediction at position i "
            "is a function of character i and its position only, and the position inside a "
            "random window says nothing about the text. The best such a model can do is "
            "P(next | current): the bigram floor. More steps would not help: "
            f"train ({no.final_train_loss:.3f}) and validation agree, the model is not "
            "under-trained, it is blind to context."
        )
    if un is not None:
        ref = f", {un.best_val_loss - mh.best_val_loss:.3f} above learned attention" if mh else ""
        out.append(
            f"* **Uniform attention.** Averaging all previous positions with equal weights "
            f"(no W_Q, W_K) reaches {un.best_val_loss:.3f}: below the floor, so mixing context "
            f"already helps{ref}. The difference is what learning *where to look* is worth."
        )
    if mh is not None and no is not None:
        out.append(
            f"* **Cost.** Attention has {mh.n_params - no.n_params:,} of the "
            f"{mh.n_params:,} parameters ({(mh.n_params - no.n_params) / mh.n_params:.0%}); the "
            f"model without it trains at {no.tokens_per_sec:,.0f} tokens/s against "
            f"{mh.tokens_per_sec:,.0f}, but no amount of extra speed buys back the context."
        )
    out += [
        "",
        "Runs: " + ", ".join(f"{a.attention} `{a.run_id}`" for a in arms) + ".",
        "",
    ]
    return "\n".join(out)


def export_results(experiment: str, data: CharData, dest: Path) -> list[Path]:
    """Copy what the book shows of the latest ablation into ``dest`` (a committed folder).

    Writes ``q03-report.md``, ``comparison.json`` (rows, bigram floor, run ids, provenance),
    ``loss_curves.png``, the multihead arm's ``attention/`` maps and ``weights.json``, and the
    last evaluation sample of each arm in ``samples/<arm>.txt``. The book reads only these files,
    so it builds without MLflow runs; ``attnref report --export DIR`` regenerates them.
    """
    source, arms = find_arms(experiment)
    parents = _search(
        experiment, f"tags.`{KIND_TAG}` = 'ablation' and attributes.status = 'FINISHED'", 1
    )
    if not parents:
        raise TrackingError(
            f"no finished ablation in experiment {experiment!r}; run `attnref ablation` first"
        )
    parent = parents[0]
    dest.mkdir(parents=True, exist_ok=True)
    written = [dest / "q03-report.md"]
    written[0].write_text(build_report(experiment, data), encoding="utf-8")
    client = MlflowClient()
    with tempfile.TemporaryDirectory() as tmp:
        got = Path(
            mlflow.artifacts.download_artifacts(
                run_id=parent.info.run_id, artifact_path="comparison.json", dst_path=tmp
            )
        )
        doc = json.loads(got.read_text(encoding="utf-8"))
        curves = Path(
            mlflow.artifacts.download_artifacts(
                run_id=parent.info.run_id, artifact_path="plots/loss_curves.png", dst_path=tmp
            )
        )
        (dest / "loss_curves.png").write_bytes(curves.read_bytes())
        written.append(dest / "loss_curves.png")
        for arm in arms:
            samples = sorted(f.path for f in client.list_artifacts(arm.run_id, "samples"))
            if samples:
                text = Path(
                    mlflow.artifacts.download_artifacts(
                        run_id=arm.run_id, artifact_path=samples[-1], dst_path=tmp
                    )
                ).read_text(encoding="utf-8")
                out = dest / "samples" / f"{arm.attention}.txt"
                out.parent.mkdir(exist_ok=True)
                out.write_text(text, encoding="utf-8")
                written.append(out)
            if arm.attention == "multihead":
                att = Path(
                    mlflow.artifacts.download_artifacts(
                        run_id=arm.run_id, artifact_path="attention", dst_path=tmp
                    )
                )
                (dest / "attention").mkdir(exist_ok=True)
                for f in sorted(att.iterdir()):
                    (dest / "attention" / f.name).write_bytes(f.read_bytes())
                    written.append(dest / "attention" / f.name)
    doc.update(
        {
            "experiment": experiment,
            "parent_run_id": parent.info.run_id,
            "params": dict(parent.data.params),
            "git_commit": parent.data.tags.get("git_commit", "unknown"),
            "torch_version": parent.data.tags.get("torch_version", "unknown"),
            "curves": {a.attention: {"val_loss": a.val_curve} for a in arms},
            "source": source,
        }
    )
    (dest / "comparison.json").write_text(
        json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    written.append(dest / "comparison.json")
    return written
