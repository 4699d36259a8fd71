"""A local sqlite MLflow store read without importing MLflow: the rows of ``attnref runs`` and
the model file ``attnref sample`` loads.

Importing MLflow takes seconds (its package imports pandas, SQLAlchemy, its GenAI modules),
more than a person should wait for a list of runs or a few lines of sampled text. A local
sqlite store is two things, and MLflow's client reads them too: the database (runs, tags,
params, metrics) and each run's artifact folder on this machine. `LocalStore` reads both,
read-only, with the standard library, and answers what MLflow's client answers: the same rows
in the same order, the same run ids, the same ``model/model.pt``, the same one-line errors
(`attention_ref.experiments.results` is the MLflow twin; the tests compare the two on real
stores with new, resumed, renamed and deleted runs, sweeps and deleted experiments).

MLflow stays the source of truth: nothing is copied or cached here, so nothing can go stale.
`LocalStore.open` returns ``None`` unless the store is a sqlite file whose schema revision is
one this module was checked against (`KNOWN_REVISIONS`) and that holds no experiment outside
MLflow's default workspace; a run whose artifacts are not in a local folder, or a database
that cannot be read at the moment, raises `LocalStoreUnavailableError`. In both cases the caller
asks MLflow's client instead.

Imports nothing of MLflow or torch (``tests/test_layers.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlparse

from attention_ref.experiments.names import Artifact, Metric, RunKind, RunStatus, Tag
from attention_ref.experiments.store import TrackingError, sqlite_path

#: the alembic revisions of MLflow's sqlite schema this reader was checked against (the
#: installed MLflow's head is one of them: ``tests/experiments/test_local_store.py``)
KNOWN_REVISIONS = frozenset({"dc11669786a5"})
#: MLflow's workspace when workspaces are off (``mlflow.utils.workspace_utils``)
DEFAULT_WORKSPACE = "default"
#: MLflow's run lifecycle stage of a run that is not deleted
ACTIVE = "active"
#: the most runs `LocalStore.list_runs` returns (``results.list_runs``' default)
MAX_RUNS = 1000
#: ``search_runs``' order: start time (a missing one last), newest first, then the run id
_NEWEST_FIRST = "r.start_time IS NULL, r.start_time DESC, r.run_uuid"
_OLDEST_FIRST = "r.start_time IS NULL, r.start_time ASC, r.run_uuid"
_CHUNK = 500  # run ids per ``IN (…)`` query


class LocalStoreUnavailableError(Exception):
    """This store (or this run's artifacts) cannot be read here without MLflow: ask MLflow."""


# ----------------------------------------------------------------------- a line of runs


#: the kinds of a sweep's parent (it trains no model: its arms do), as a sentence names them
SWEEP_WORDS: dict[str, str] = {
    RunKind.ABLATION: "an ablation",
    RunKind.HEADS_SWEEP: "a heads sweep",
    RunKind.VARIANTS: "a variants sweep",
}


@dataclass(frozen=True)
class RunRow:
    """One line of ``attnref runs``."""

    run_id: str
    name: str
    experiment: str
    kind: str  # RunKind, or "" for a run attnref did not write
    attention: str  # the mode; a parent's arms
    heads: int | None  # a multihead run's number of heads
    status: str
    steps: str  # "done/max"
    best_val_loss: float | None
    started: str  # local time, minutes

    @property
    def is_parent(self) -> bool:
        """A sweep's parent (an ablation, a heads sweep or a variants sweep)."""
        return self.kind in SWEEP_WORDS


def make_run_row(
    run_id: str,
    name: str,
    experiment: str,
    status: str,
    start_time_ms: int,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    last_train_step: Callable[[], int],
) -> RunRow:
    """A `RunRow` from what a run records, whoever read it (MLflow's client or `LocalStore`).

    ``last_train_step()`` is the highest step of the run's ``train_loss`` (0 if none); it is
    asked only for a training run that neither finished nor failed (KILLED, RUNNING).
    """
    kind = tags.get(Tag.KIND, "")
    if kind == RunKind.ABLATION:
        attention = params.get("arms", "")
    elif kind == RunKind.HEADS_SWEEP:
        attention = f"heads {params.get('heads', '')}"
    elif kind == RunKind.VARIANTS:
        attention = f"variants {params.get('variants', '')}"
    else:
        attention = tags.get(Tag.ATTENTION, params.get("attention", ""))
    heads = int(params["n_head"]) if attention == "multihead" and "n_head" in params else None
    steps = ""
    if kind == RunKind.TRAIN:
        total = params.get("max_steps", "?")
        if status == RunStatus.FINISHED:
            done = total
        elif Tag.FAILED_AT_STEP in tags:
            done = str(int(tags[Tag.FAILED_AT_STEP]) - 1)
        else:  # KILLED or RUNNING: the last step logged
            done = str(last_train_step())
        steps = f"{done}/{total}"
    started = datetime.fromtimestamp(start_time_ms / 1000).strftime("%Y-%m-%d %H:%M")
    best = metrics.get(Metric.BEST_VAL_LOSS)
    return RunRow(run_id, name, experiment, kind, attention, heads, status, steps, best, started)


# ----------------------------------------------------------------------------- the store


def _run_name_arm(name: str) -> str:
    """The arm of a sweep's child from its run name (``ablation/none`` -> ``none``; an arm's
    run on one of several seeds, ``ablation/none seed 8`` -> ``none``)."""
    return name.rsplit("/", 1)[-1].split(" seed ", 1)[0]


def local_artifact_dir(artifact_uri: str) -> Path | None:
    """The folder of a run's artifacts on this machine (a path or a ``file:`` URI), else
    ``None`` (an artifact server, a cloud bucket)."""
    parsed = urlparse(artifact_uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(unquote(parsed.path))
    if parsed.scheme == "" or (len(parsed.scheme) == 1 and artifact_uri[1:3] in (":\\", ":/")):
        return Path(artifact_uri)  # a plain path (a Windows drive letter parses as a scheme)
    return None


class LocalStore:
    """A read-only view of a local sqlite MLflow store (see the module's docstring).

    ``uri`` is the store's URI as the user gave it: the errors name it as MLflow's would.
    """

    def __init__(self, uri: str, connection: sqlite3.Connection) -> None:
        self.uri = uri
        self.db = connection

    @classmethod
    def open(cls, uri: str) -> LocalStore | None:
        """The view of the store ``uri``, or ``None`` when MLflow's client must read it."""
        path = sqlite_path(uri)
        if path is None or not path.is_file():
            return None
        try:
            db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error:
            return None
        try:
            (revision,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
            foreign = db.execute(
                "SELECT 1 FROM experiments WHERE workspace IS NOT NULL AND workspace != ? LIMIT 1",
                (DEFAULT_WORKSPACE,),
            ).fetchone()
        except (sqlite3.Error, TypeError, ValueError):
            db.close()
            return None
        if revision not in KNOWN_REVISIONS or foreign is not None:
            db.close()
            return None
        return cls(uri, db)

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def __enter__(self) -> LocalStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:  # locked past the timeout, a hot journal, a changed file
            raise LocalStoreUnavailableError(f"{self.uri}: {e}") from None

    def _by_run(self, table: str, run_ids: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {r: {} for r in run_ids}
        for chunk in _chunks(run_ids):
            marks = ",".join("?" * len(chunk))
            for run_id, key, value in self._query(
                f"SELECT run_uuid, key, value FROM {table} WHERE run_uuid IN ({marks})", chunk
            ):
                out[run_id][key] = value
        return out

    def _latest_metrics(self, run_ids: Sequence[str]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {r: {} for r in run_ids}
        for chunk in _chunks(run_ids):
            marks = ",".join("?" * len(chunk))
            for run_id, key, value, is_nan in self._query(
                "SELECT run_uuid, key, value, is_nan FROM latest_metrics "
                f"WHERE run_uuid IN ({marks})",
                chunk,
            ):
                out[run_id][key] = float("nan") if is_nan else float(value)
        return out

    def _last_train_step(self, run_id: str) -> int:
        ((step,),) = self._query(
            "SELECT MAX(step) FROM metrics WHERE run_uuid = ? AND key = ?",
            (run_id, str(Metric.TRAIN_LOSS)),
        )
        return int(step) if step is not None else 0

    # --------------------------------------------------------------------- experiments

    def experiment_id(self, name: str) -> str:
        """The id of the experiment ``name`` (deleted or not, as MLflow's
        ``get_experiment_by_name``); `TrackingError` if there is none."""
        found = self._query("SELECT experiment_id FROM experiments WHERE name = ?", (name,))
        if not found:
            raise TrackingError(f"no experiment {name!r} in {self.uri}")
        return str(found[0][0])

    def active_experiments(self) -> dict[str, str]:
        """Every experiment that is not deleted: id -> name."""
        rows = self._query(
            "SELECT experiment_id, name FROM experiments WHERE lifecycle_stage = ?", (ACTIVE,)
        )
        return {str(i): n for i, n in rows}

    # ---------------------------------------------------------------------------- runs

    def list_runs(self, experiment: str | None, max_results: int = MAX_RUNS) -> list[RunRow]:
        """The runs of ``experiment`` (``None``: of every experiment), the latest first: what
        `attention_ref.experiments.results.list_runs` returns."""
        if experiment is None:
            names = self.active_experiments()
        else:
            names = {self.experiment_id(experiment): experiment}
        if not names:
            return []
        marks = ",".join("?" * len(names))
        runs = self._query(
            "SELECT r.run_uuid, r.name, r.status, r.start_time, r.experiment_id FROM runs r "
            f"WHERE r.experiment_id IN ({marks}) AND r.lifecycle_stage = ? "
            f"ORDER BY {_NEWEST_FIRST} LIMIT ?",
            [*names, ACTIVE, max_results],
        )
        ids = [r[0] for r in runs]
        tags, params = self._by_run("tags", ids), self._by_run("params", ids)
        metrics = self._latest_metrics(ids)
        rows = []
        for run_id, name, status, start, exp in runs:
            row = make_run_row(
                run_id,
                name or "",
                names[str(exp)],
                status,
                start,
                tags[run_id],
                params[run_id],
                metrics[run_id],
                lambda run_id=run_id: self._last_train_step(run_id),
            )
            rows.append(row)
        return rows

    def _run(self, run_id: str) -> tuple[str, str, str, str]:
        """``(name, status, experiment id, artifact URI)`` of a run, deleted or not (as
        MLflow's ``get_run``); `TrackingError` if there is none."""
        found = self._query(
            "SELECT name, status, experiment_id, artifact_uri FROM runs WHERE run_uuid = ?",
            (run_id,),
        )
        if not found:
            raise TrackingError(f"no run {run_id!r} in the tracking store {self.uri}")
        name, status, exp, artifact_uri = found[0]
        return name or "", status, str(exp), artifact_uri or ""

    def latest_model_run(self, experiment: str) -> tuple[str, str]:
        """``(run id, run name)`` of the latest finished training run of ``experiment``: what
        `attention_ref.experiments.results.latest_model_run` finds."""
        exp_id = self.experiment_id(experiment)
        found = self._query(
            "SELECT r.run_uuid, r.name FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
            "WHERE r.experiment_id = ? AND r.lifecycle_stage = ? AND r.status = ? "
            f"AND t.key = ? AND t.value = ? ORDER BY {_NEWEST_FIRST} LIMIT 1",
            (exp_id, ACTIVE, str(RunStatus.FINISHED), str(Tag.KIND), str(RunKind.TRAIN)),
        )
        if not found:
            raise TrackingError(
                f"no finished training run in experiment {experiment!r} of "
                f"{self.uri}; train one with `attnref train`"
            )
        return found[0][0], found[0][1] or ""

    def _arms_of(self, parent_id: str, experiment_id: str) -> dict[str, tuple[str, str]]:
        """A sweep parent's arms by arm name, in the order they ran: run id and status."""
        rows = self._query(
            "SELECT r.run_uuid, r.name, r.status FROM runs r JOIN tags t "
            "ON t.run_uuid = r.run_uuid WHERE r.experiment_id = ? AND r.lifecycle_stage = ? "
            f"AND t.key = ? AND t.value = ? ORDER BY {_OLDEST_FIRST}",
            (experiment_id, ACTIVE, str(Tag.PARENT_RUN_ID), parent_id),
        )
        arms: dict[str, tuple[str, str]] = {}
        for run_id, name, status in rows:  # several seeds: an arm's first run (its base seed)
            arms.setdefault(_run_name_arm(name or ""), (run_id, status))
        return arms

    def resolve_run(self, run_id: str, arm: str | None = None) -> str:
        """The training run whose model ``run_id`` names: itself, or the arm ``arm`` of a
        sweep (what `attention_ref.experiments.results.resolve_run` answers, errors included)."""
        _, _, exp_id, _ = self._run(run_id)
        kinds = self._query(
            "SELECT value FROM tags WHERE run_uuid = ? AND key = ?", (run_id, str(Tag.KIND))
        )
        kind = kinds[0][0] if kinds else None
        if kind not in SWEEP_WORDS:
            if arm is not None:
                raise TrackingError(f"run {run_id} is not an ablation or a sweep; leave out --arm")
            return run_id
        arms = self._arms_of(run_id, exp_id)
        listed = ", ".join(f"{a} ({i}, {s})" for a, (i, s) in arms.items())
        if arm is None:
            what = SWEEP_WORDS[kind]
            raise TrackingError(
                f"run {run_id} is the parent of {what} and has no model of its own; "
                f"pick an arm with --arm: {listed or 'none ran'}"
            )
        if arm not in arms:
            raise TrackingError(f"run {run_id} has no arm {arm!r}; its arms: {listed or 'none'}")
        return arms[arm][0]

    def run_name(self, run_id: str) -> str:
        """The run's name (`TrackingError` for an unknown run)."""
        return self._run(run_id)[0]

    def model_file(self, run_id: str) -> Path:
        """The run's ``model/model.pt`` in its artifact folder, the file MLflow's
        ``download_artifacts`` would copy; `TrackingError` (`results.load_model`'s words) when
        the run has none, `LocalStoreUnavailableError` when its artifacts are elsewhere."""
        try:
            _, _, _, artifact_uri = self._run(run_id)
        except TrackingError:
            artifact_uri = None
        if artifact_uri is not None:
            folder = local_artifact_dir(artifact_uri)
            if folder is None:
                raise LocalStoreUnavailableError(f"run {run_id}'s artifacts: {artifact_uri}")
            path = folder / Artifact.MODEL
            if path.is_file():
                return path
        raise TrackingError(
            f"run {run_id!r} has no trained model ({Artifact.MODEL}) in "
            f"{self.uri}; only finished training runs have one (a stopped "
            f"run keeps its last checkpoint, last.pt: continue it with attnref train --resume "
            f"{run_id})"
        )


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]
