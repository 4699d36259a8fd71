"""What one student may store on the class server: quotas with defaults a teacher can raise.

Within their rights and the edge's limits, one student could fill the class's disk and slow
its database: ten 200 MB artifacts in their own run, 200 ``log-batch`` of 1,000 metrics, 2,000
empty runs (measured in issue 57). The gate (`attention_ref.classroom.gate.auth`) asks `over_quota`
before a student's write, and refuses (403, in one line) a write past a quota, saying which
quota, how much is used and how much is left. The teacher's own commands have no quota.

Each quota, with its default (`Quotas`):

* ``runs``: runs a student creates, in every experiment (a submission is a run);
* ``artifact_mib``: MiB of the files of a student's runs and of the models logged from them;
* ``metrics_per_run``: metric values in one run; the default is ten times the step and
  evaluation metrics ``attnref train`` logs with its default steps (`default_run_metrics`); a
  run's final figures and MLflow's system metrics (a few values every few seconds while it
  runs) count against it too, so a run of ten times the default steps does not fit whole;
* ``params_per_run``: parameters of one run (``attnref train`` logs its configuration's
  fields, a few dozen).

A student's metric values in all are at most ``runs × metrics_per_run``. ``attnref server
start --quota NAME=VALUE`` raises (or lowers) one; the server passes them to the gate in its
environment (`ENV`).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.mlflow_seam import artifact_root, sql_model, sql_session

if TYPE_CHECKING:
    from flask import Response

#: the variable that hands the quotas to the gate inside ``mlflow server``
ENV = "ATTNREF_QUOTAS"
MIB = 1 << 20
#: the header in which the edge tells the gate a body's announced length
#: (`attention_ref.classroom.hosting.edge_config`; a client's own value is replaced)
BODY_LENGTH = "X-Body-Length"


def default_run_metrics() -> int:
    """Metric values ``attnref train`` logs with its defaults: every step's metrics each step,
    the evaluation's at each evaluation (the first step's included)."""
    from attention_ref.lm.callbacks import EvalMetrics, StepMetrics
    from attention_ref.lm.config import TrainConfig

    cfg = TrainConfig()
    evals = cfg.max_steps // cfg.eval_interval + 1
    return len(fields(StepMetrics)) * cfg.max_steps + len(fields(EvalMetrics)) * evals


@dataclass(frozen=True)
class Quotas:
    """What one student may store (the module docstring says where each default comes from)."""

    runs: int = 1000
    artifact_mib: int = 1024
    metrics_per_run: int = 0  # 0: ten times `default_run_metrics`
    params_per_run: int = 1000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is not int or value < 0:
                raise ValueError(f"the quota {f.name} is a whole number, got {value!r}")
        if self.metrics_per_run == 0:
            object.__setattr__(self, "metrics_per_run", 10 * default_run_metrics())

    def to_env(self) -> str:
        """The quotas as the gate's environment holds them (`ENV`)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_env(cls) -> Quotas:
        """The quotas the server was started with (the defaults where `ENV` holds none),
        read once per value of `ENV` (the gate asks at every student write)."""
        return _quotas_of(os.environ.get(ENV, ""))

    @classmethod
    def parse(cls, given: list[str]) -> Quotas:
        """``--quota NAME=VALUE`` options (``artifact-mib=2048``); `ValueError` in one line."""
        names = {f.name.replace("_", "-"): f.name for f in fields(cls)}
        values: dict[str, int] = {}
        for text in given:
            name, sep, value = text.partition("=")
            if not sep or name.strip() not in names or not value.strip().isdigit():
                raise ValueError(
                    f"--quota takes NAME=NUMBER with NAME one of {', '.join(names)}, got {text!r}"
                )
            values[names[name.strip()]] = int(value)
        return cls(**values)


@functools.cache
def _quotas_of(text: str) -> Quotas:
    return Quotas(**json.loads(text)) if text else Quotas()


def _count(table: str, key: str, value: str) -> int:
    """Rows of MLflow's ``table`` whose ``key`` is ``value`` (one indexed count)."""
    from sqlalchemy import func

    model = sql_model(table)
    with sql_session() as session:
        return int(session.query(func.count()).filter(getattr(model, key) == value).scalar())


def artifact_bytes(username: str) -> int:
    """Bytes of the files of ``username``'s runs and of the models logged from them, as the
    artifact proxy keeps them (``EXPERIMENT/RUN`` and ``EXPERIMENT/models/MODEL``)."""
    root = artifact_root()
    if root is None:
        return 0
    with sql_session() as session:
        return folder_bytes(root, artifact_folders(session, username)[username])


def artifact_folders(session: Any, username: str | None = None) -> dict[str, list[str]]:
    """Each student's artifact folders (``EXPERIMENT/RUN``, ``EXPERIMENT/models/MODEL``), by
    account; only ``username``'s where given."""
    run, model = sql_model("SqlRun"), sql_model("SqlLoggedModel")
    runs = session.query(run.user_id, run.run_uuid, run.experiment_id)
    if username is not None:
        runs = runs.filter(run.user_id == username)
    folders: dict[str, list[str]] = {username: []} if username is not None else {}
    owner: dict[str, str] = {}
    for user, run_id, experiment in runs.all():
        folders.setdefault(str(user), []).append(f"{experiment}/{run_id}")
        owner[str(run_id)] = str(user)
    models = session.query(model.source_run_id, model.model_id, model.experiment_id)
    if username is not None:
        models = models.filter(model.source_run_id.in_(list(owner)))
    for source, model_id, experiment in models.all():
        if str(source) in owner:
            folders[owner[str(source)]].append(f"{experiment}/models/{model_id}")
    return folders


def folder_bytes(root: Path, folders: list[str]) -> int:
    """Bytes of the files under ``root``'s ``folders`` (links not followed)."""
    total = 0
    for folder in folders:
        for dirpath, _, files in os.walk(root / folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    continue
    return total


@dataclass(frozen=True)
class Use:
    """What one account stores: runs, metric values (in all), bytes of artifacts."""

    runs: int
    metric_values: int
    artifact_bytes: int


def use_by_account(session: Any, root: Path | None) -> dict[str, Use]:
    """What each account stores (``attnref server status``): three grouped queries and a walk
    of each account's artifact folders under ``root`` (``None``: not counted)."""
    from sqlalchemy import func

    run, metric = sql_model("SqlRun"), sql_model("SqlMetric")
    runs = dict(session.query(run.user_id, func.count()).group_by(run.user_id).all())
    values = dict(
        session.query(run.user_id, func.count())
        .join(metric, metric.run_uuid == run.run_uuid)
        .group_by(run.user_id)
        .all()
    )
    folders = artifact_folders(session) if root is not None else {}
    return {
        str(user): Use(
            int(n),
            int(values.get(user, 0)),
            folder_bytes(root, folders.get(str(user), [])) if root is not None else 0,
        )
        for user, n in runs.items()
    }


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


def _refused(
    quota: str, used: int, adding: int, limit: int, say: Callable[[int], str] = "{:,}".format
) -> Response:
    from attention_ref.classroom.gate.refusals import forbidden

    left = max(0, limit - used)
    return forbidden(
        f"the quota {quota} is {say(limit)}: {say(used)} used, {say(left)} left, and this "
        f"request adds {say(adding)}; the teacher raises it (server start --quota)"
    )


#: the routes that write metrics, and those that write parameters
_METRICS = ("POST /mlflow/runs/log-metric", "POST /mlflow/runs/log-batch")
_PARAMS = ("POST /mlflow/runs/log-parameter", "POST /mlflow/runs/log-batch")


def over_quota(username: str, access: Access | None, key: str) -> Response | None:
    """The refusal of a student's write past a quota, or ``None``: a new run past ``runs``, an
    upload past ``artifact_mib``, metrics or parameters past a run's quota."""
    from flask import request

    from attention_ref.classroom.gate.ownership import said

    quotas = Quotas.from_env()
    route = key  # the access table's key: ``POST /mlflow/runs/log-batch``
    try:
        if access is Access.CREATE_RUN:
            used = _count("SqlRun", "user_id", username)
            if used + 1 > quotas.runs:
                return _refused("runs", used, 1, quotas.runs)
        elif access is Access.OWN_ARTIFACT or route == "POST /mlflow/upload-artifact":
            # as the client announced it, told by the edge (`BODY_LENGTH`): MLflow's bridge to
            # its FastAPI routes hands the gate the headers with Content-Length 0. A body sent
            # in chunks announces none: it is refused once the quota is used, so a student
            # goes past it by at most the uploads they have in flight (the edge's limits)
            told = request.headers.get(BODY_LENGTH, "")
            adding = int(told) if told.isdigit() else 0
            used = artifact_bytes(username)
            if used + adding > quotas.artifact_mib * MIB or used >= quotas.artifact_mib * MIB:
                return _refused("artifact-mib", used, adding, quotas.artifact_mib * MIB, _mib)
        elif route in _METRICS or route in _PARAMS:
            s = said()
            run = s.one("run_id", "run_uuid")
            if run is None:
                return None  # MLflow refuses a write that names no run
            # what the write adds: one value on the single routes, the batch's lists on
            # log-batch
            adds = {
                "POST /mlflow/runs/log-metric": (1, 0),
                "POST /mlflow/runs/log-parameter": (0, 1),
            }
            metrics, params = adds.get(
                route, (len(s.body.get("metrics") or []), len(s.body.get("params") or []))
            )
            if metrics:
                used = _count("SqlMetric", "run_uuid", run)
                if used + metrics > quotas.metrics_per_run:
                    return _refused("metrics-per-run", used, metrics, quotas.metrics_per_run)
            if params:
                used = _count("SqlParam", "run_uuid", run)
                if used + params > quotas.params_per_run:
                    return _refused("params-per-run", used, params, quotas.params_per_run)
    except LookupError:  # not a SQL store (a class runs on PostgreSQL): nothing to count
        return None
    return None
