"""Reading runs back: the latest ablation and its arms, a run's model, the Q03 report, the
heads sweep, the list of runs (`list_runs`).

Every lookup goes through `latest_ablation` and `find_arms`, so the report and the export
read the same runs. Nothing here creates a store or an experiment: call
`attention_ref.experiments.store.require_store` first.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import mlflow
from mlflow.entities import Run
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from attention_ref.experiments.findings import RECORDED_BEFORE, ArmRow, Baselines
from attention_ref.experiments.heads_report import heads_report, sweep_source
from attention_ref.experiments.local_store import SWEEP_WORDS, RunRow, make_run_row
from attention_ref.experiments.model_parts import with_parameter_groups
from attention_ref.experiments.names import Artifact, Metric, RunKind, RunStatus, Tag
from attention_ref.experiments.report import arms_source, build_report
from attention_ref.experiments.runs import metric_curve
from attention_ref.experiments.store import TrackingError, first_line
from attention_ref.experiments.store_words import said as store_said
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import ATTENTION_MODES, option_defaults
from attention_ref.lm.data import (
    BIGRAM_SMOOTHING,
    CharData,
    bigram_val_entropy,
    bigram_val_loss,
    unigram_val_loss,
)

_FINISHED = f"attributes.status = '{RunStatus.FINISHED}'"


def _search(experiment: str, filter_string: str, max_results: int = 100) -> list[Run]:
    return mlflow.search_runs(
        experiment_names=[experiment],
        filter_string=filter_string,
        order_by=["attributes.start_time DESC"],
        max_results=max_results,
        output_format="list",
    )


def _require_experiment(experiment: str, lang: str = "en") -> None:
    if mlflow.get_experiment_by_name(experiment) is None:
        uri = mlflow.get_tracking_uri()
        raise TrackingError(store_said("no_experiment", lang, experiment=experiment, uri=uri))


def latest_ablation(experiment: str, lang: str = "en") -> Run | None:
    """The most recent finished ablation parent run of ``experiment``, if any (an experiment
    that does not exist: `TrackingError`, in ``lang``)."""
    _require_experiment(experiment, lang)
    runs = _search(experiment, f"tags.`{Tag.KIND}` = '{RunKind.ABLATION}' and {_FINISHED}", 1)
    return runs[0] if runs else None


def arm_from_run(client: MlflowClient, run: Run) -> ArmRow:
    """A comparison row read back from a finished training run."""
    p = run.data.params
    row = ArmRow.from_metrics(
        run.data.tags.get(Tag.ATTENTION, p.get("attention", "?")),
        run.info.run_id,
        run.info.status,
        int(p["n_params"]),
        int(p["max_steps"]),
        run.data.metrics,
        metric_curve(client, run.info.run_id, Metric.VAL_LOSS),
        config={k: p[k] for k in option_defaults() if k in p},
        data_sha256=run.data.tags.get(Tag.DATA_SHA256),
        precision=run.data.tags.get(Tag.PRECISION),
    )
    # the model's parameters by part, from the model the recorded options build
    return with_parameter_groups([row], int(p["vocab_size"]))[0] if "vocab_size" in p else row


@dataclass(frozen=True)
class Arms:
    """The runs a report speaks of: the parent (if any; else the latest single run of each
    mode), the rows."""

    parent: Run | None
    rows: list[ArmRow]

    def source(self, lang: str = "en") -> str:
        """Where the arms come from, in ``lang`` (`arms_source`)."""
        return arms_source(None if self.parent is None else self.parent.info.run_id, lang)


class NoArmsError(TrackingError):
    """An experiment with no finished ablation and no finished single training run."""


def _single(run: Run) -> bool:
    """A run of `attnref train` of its own with Q02's attention: not an arm of an ablation or
    a sweep, and none of today's variants (`RECORDED_BEFORE`: GQA, RoPE, a window)."""
    p = run.data.params
    q02 = all(p.get(k, v) == v for k, v in RECORDED_BEFORE.items())
    return Tag.PARENT_RUN_ID not in run.data.tags and q02


def find_arms(experiment: str, lang: str = "en") -> Arms:
    """The arms of the latest finished ablation, else the latest finished single training run
    of each mode (never an arm of a heads sweep: its h = 8 run is not Q02's model); what is
    missing is said in ``lang``."""
    client = MlflowClient()
    parent = latest_ablation(experiment, lang)
    order = {a: i for i, a in enumerate(ATTENTION_MODES)}
    if parent is not None:
        pid = parent.info.run_id
        children = _search(experiment, f"tags.`{Tag.PARENT_RUN_ID}` = '{pid}' and {_FINISHED}")
        rows = sorted(
            (arm_from_run(client, r) for r in children),
            key=lambda a: (order.get(a.attention, 9), int(a.seed or 0)),
        )  # an arm of several seeds: its runs by seed
        return Arms(parent, rows)
    rows = []
    for mode in ATTENTION_MODES:
        runs = _search(experiment, f"tags.{Tag.ATTENTION} = '{mode}' and {_FINISHED}", 1000)
        single = next((r for r in runs if _single(r)), None)
        if single is not None:
            rows.append(arm_from_run(client, single))
    if not rows:
        raise NoArmsError(store_said("no_arms", lang, experiment=experiment))
    return Arms(None, rows)


def baselines(data: CharData) -> Baselines:
    """The reference points of ``data``'s validation split: the vocabulary (ln V), the unigram,
    the bigram baseline (counted on the training split, `BIGRAM_SMOOTHING`) and the bigram
    table counted on the validation split itself (the best any such table does there)."""
    return Baselines(
        vocab_size=data.vocab_size,
        unigram=unigram_val_loss(data),
        bigram=bigram_val_loss(data, BIGRAM_SMOOTHING),
        bigram_smoothing=BIGRAM_SMOOTHING,
        bigram_fitted_on_val=bigram_val_entropy(data),
    )


def q03_report(experiment: str, data: CharData, arms: Arms | None = None, lang: str = "en") -> str:
    """The markdown answer to Q03 for ``experiment`` (its latest ablation, see `find_arms`), in
    ``lang``."""
    arms = arms or find_arms(experiment)
    return build_report(experiment, arms.source(lang), arms.rows, baselines(data), lang)


def _arms_of(parent: Run) -> dict[str, list[Run]]:
    """The runs of a sweep's parent by arm name (``none``, ``4``), each arm's runs in the order
    they ran (its seeds); the arm from `Tag.ARM`, else (runs of before) the run's name."""
    pid = parent.info.run_id
    children = mlflow.search_runs(
        experiment_ids=[parent.info.experiment_id],
        filter_string=f"tags.`{Tag.PARENT_RUN_ID}` = '{pid}'",
        order_by=["attributes.start_time ASC"],
        output_format="list",
    )
    arms: dict[str, list[Run]] = {}
    for r in children:
        arm = r.data.tags.get(Tag.ARM) or (r.info.run_name or "").rsplit("/", 1)[-1]
        arms.setdefault(arm, []).append(r)
    return arms


_KIND_WORDS = SWEEP_WORDS


def resolve_run(run_id: str, arm: str | None = None) -> str:
    """The training run whose model ``run_id`` names: itself, or the arm ``arm`` of a sweep.

    A sweep's parent trains no model itself: without ``arm`` the error lists its arms.
    """
    try:
        run = MlflowClient().get_run(run_id)
    except MlflowException:
        raise TrackingError(
            f"no run {run_id!r} in the tracking store {mlflow.get_tracking_uri()}"
        ) from None
    kind = run.data.tags.get(Tag.KIND)
    if kind not in _KIND_WORDS:
        if arm is not None:
            raise TrackingError(f"run {run_id} is not an ablation or a sweep; leave out --arm")
        return run_id
    arms = _arms_of(run)
    listed = ", ".join(
        f"{a} ({r.info.run_id}, {r.info.status})" for a, rs in arms.items() for r in rs[:1]
    )
    if arm is None:
        raise TrackingError(
            f"run {run_id} is the parent of {_KIND_WORDS[kind]} and has no model of its own; "
            f"pick an arm with --arm: {listed or 'none ran'}"
        )
    if arm not in arms:
        raise TrackingError(f"run {run_id} has no arm {arm!r}; its arms: {listed or 'none'}")
    return arms[arm][0].info.run_id  # several seeds: the arm's first (its base seed)


def latest_model_run(experiment: str) -> str:
    """The id of the latest finished training run of ``experiment`` (it has a model)."""
    _require_experiment(experiment)
    runs = _search(experiment, f"tags.`{Tag.KIND}` = '{RunKind.TRAIN}' and {_FINISHED}", 1)
    if not runs:
        raise TrackingError(
            f"no finished training run in experiment {experiment!r} of "
            f"{mlflow.get_tracking_uri()}; train one with `attnref train`"
        )
    return runs[0].info.run_id


def load_model_uri(uri: str) -> Checkpoint:
    """The checkpoint of a LoggedModel or a registered version (``models:/m-…``,
    ``models:/NAME/1``), read from its files, not through a flavour."""
    from attention_ref.experiments.logged_model import CHECKPOINT_KEY

    try:
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=tmp))
            found = sorted(local.rglob("model.pt"))
            if not found:
                raise TrackingError(f"model {uri} has no model.pt ({CHECKPOINT_KEY})")
            return Checkpoint.load(found[0])
    except MlflowException as e:
        raise TrackingError(
            f"no model {uri} in {mlflow.get_tracking_uri()} ({first_line(e)})"
        ) from None


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
            f"{mlflow.get_tracking_uri()}; only finished training runs have one (a stopped "
            f"run keeps its last checkpoint, last.pt: continue it with attnref train --resume "
            f"{run_id})"
        ) from None


# -------------------------------------------------------------------------------- heads sweep


def latest_heads_sweep(experiment: str, lang: str = "en") -> Run | None:
    """The most recent finished heads sweep of ``experiment``, if any (an experiment that does
    not exist: `TrackingError`, in ``lang``)."""
    _require_experiment(experiment, lang)
    runs = _search(experiment, f"tags.`{Tag.KIND}` = '{RunKind.HEADS_SWEEP}' and {_FINISHED}", 1)
    return runs[0] if runs else None


def heads_rows(parent: Run) -> list[ArmRow]:
    """The finished arms of a heads sweep as rows, each named by its number of heads (``4``),
    by heads then seed."""
    client = MlflowClient()
    rows = [
        replace(arm_from_run(client, run), attention=arm)
        for arm, runs in _arms_of(parent).items()
        for run in runs
        if run.info.status == RunStatus.FINISHED
    ]
    return sorted(rows, key=lambda r: (int(r.attention), int(r.seed or 0)))


def heads_sweep_report(experiment: str, lang: str = "en") -> str | None:
    """The heads-sweep section of the report (its latest finished sweep) in ``lang``, or
    ``None``."""
    parent = latest_heads_sweep(experiment, lang)
    if parent is None:
        return None
    rows = heads_rows(parent)
    if not rows:
        return None
    return heads_report(sweep_source(parent.info.run_id, lang), rows, lang)


# ----------------------------------------------------------------------------- list of runs


def run_row(client: MlflowClient, run: Run, experiment: str) -> RunRow:
    """A `RunRow` read from a run (`attention_ref.experiments.local_store.make_run_row`)."""

    def last_train_step() -> int:
        curve = metric_curve(client, run.info.run_id, Metric.TRAIN_LOSS)
        return curve[-1][0] if curve else 0

    return make_run_row(
        run.info.run_id,
        run.info.run_name or "",
        experiment,
        run.info.status,
        run.info.start_time,
        run.data.tags,
        run.data.params,
        run.data.metrics,
        last_train_step,
    )


def list_runs(experiment: str | None, max_results: int = 1000) -> list[RunRow]:
    """The runs of ``experiment`` (``None``: of every experiment), the latest first."""
    client = MlflowClient()
    if experiment is None:
        experiments = client.search_experiments()
    else:
        _require_experiment(experiment)
        experiments = [mlflow.get_experiment_by_name(experiment)]
    names = {e.experiment_id: e.name for e in experiments}
    if not names:
        return []
    runs = mlflow.search_runs(
        experiment_ids=list(names),
        order_by=["attributes.start_time DESC"],
        max_results=max_results,
        output_format="list",
    )
    return [run_row(client, r, names[r.info.experiment_id]) for r in runs]
