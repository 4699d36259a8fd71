"""The class server as attnref's commands talk to it: one client.

A `ClassClient` holds what every call needs: where the server is (``url``), who asks
(``auth``: the account and its password), what verifies an HTTPS server (``cafile``) and how
long to wait for a busy one (``patience``: `attention_ref.classroom.connection.patience`). The
homework verbs are its users, as nbgrader's exchange verbs are their base's: the student's ``fetch``
and ``submit`` (`attention_ref.classroom.exchange.fetch`, `.submit`), the teacher's ``assign``
and ``grade`` (`.assign`, `.grade`) and ``server runs`` (`class_runs`). Every request of theirs
goes through `ClassClient.send`, inside the patience.

This is the student's side: it imports nothing POSIX-only and nothing of the server (the
server's modules may import it, never the other way).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from attention_ref.classroom.connection.client import checked, request_bytes, rest
from attention_ref.classroom.connection.patience import PATIENCE, Patience, patiently
from attention_ref.classroom.coursework.assignment import ANSWER_FILE, AssignmentError

Auth = tuple[str, str]


class HomeworkError(AssignmentError):
    """Homework cannot be done as asked; the message says why, in one line, in ``lang`` (the
    CLI's prefix follows it)."""

    def __init__(self, message: str, lang: str = "en") -> None:
        super().__init__(message)
        self.lang = lang


def tag_map(obj: dict[str, Any]) -> dict[str, str]:
    """An MLflow entity's tags (a run's data, an experiment), as ``key -> value``."""
    return {t["key"]: t.get("value", "") for t in obj.get("tags", []) or []}


def answer_path(exp_id: str, run_id: str) -> str:
    """The artifact proxy's endpoint of a submission's answer."""
    return f"/api/2.0/mlflow-artifacts/artifacts/{exp_id}/{run_id}/artifacts/{ANSWER_FILE}"


@dataclass(frozen=True)
class ClassClient:
    """One account's client of the class server (see the module docstring)."""

    url: str
    auth: Auth
    cafile: Path | None = None
    patience: Patience = PATIENCE

    @property
    def account(self) -> str:
        """The account's name."""
        return self.auth[0]

    def with_patience(self, patience: Patience) -> ClassClient:
        """The same client, waiting for a busy server as ``patience`` says."""
        return replace(self, patience=patience)

    def send(
        self,
        endpoint: str,
        body: dict[str, Any] | None = None,
        *,
        method: str | None = None,
        query: dict[str, str] | None = None,
        data: bytes | None = None,
        before_retry: Any = None,
    ) -> tuple[int, dict[str, Any]]:
        """One request, asked again while the server is busy (429, 503, a lost reply: the
        patience); ``(status, JSON body)``. ``before_retry``: `patiently`'s."""
        return patiently(
            lambda: rest(
                self.url,
                endpoint,
                body,
                auth=self.auth,
                method=method,
                query=query,
                data=data,
                cafile=self.cafile,
            ),
            self.patience,
            before_retry=before_retry,
        )

    def refused(self, status: int, answer: dict[str, Any]) -> None:
        """A refusal of the account itself, or a server still busy after the patience: one
        line (`HomeworkError`)."""
        if status == 401:
            raise HomeworkError(
                f"the class server at {self.url} refused the account {self.account!r}: check "
                "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
            )
        if status in (429, 503):
            raise HomeworkError(
                f"the class server at {self.url} is unavailable for a moment; try again"
            )

    def call(
        self, endpoint: str, body: dict[str, Any] | None = None, *, what: str, **kw: Any
    ) -> dict[str, Any]:
        """`send`, then the answer, or one line saying ``what`` could not be done."""
        status, answer = self.send(endpoint, body, **kw)
        self.refused(status, answer)
        return checked(status, answer, what)

    def experiment(self, name: str) -> dict[str, Any] | None:
        """The experiment ``name`` as this account may read it; ``None`` when it does not
        exist or the account may not read it (a student cannot tell another's from none)."""
        status, found = self.send(
            "/api/2.0/mlflow/experiments/get-by-name", query={"experiment_name": name}
        )
        if status == 200:
            return dict(found["experiment"])
        if status in (403, 404):
            return None
        self.refused(status, found)
        checked(status, found, f"cannot read the experiment {name!r}")
        return None  # pragma: no cover

    def search_experiments(self, filter_string: str, what: str) -> list[dict[str, Any]]:
        """Every experiment this account may read that ``filter_string`` selects (all pages)."""
        out: list[dict[str, Any]] = []
        token = None
        while True:
            body: dict[str, Any] = {"max_results": 1000, "filter": filter_string}
            if token:
                body["page_token"] = token
            page = self.call("/api/2.0/mlflow/experiments/search", body, what=what)
            out += page.get("experiments", [])
            token = page.get("next_page_token")
            if not token:
                return out

    def search_runs(
        self, exp_id: str, filter_string: str = "", *, newest_first: bool = False
    ) -> list[dict[str, Any]]:
        """Every run of an experiment (all pages), oldest first (``newest_first``: the other
        way): the one pager of ``runs/search``."""
        out: list[dict[str, Any]] = []
        token = None
        order = "DESC" if newest_first else "ASC"
        while True:
            body: dict[str, Any] = {
                "experiment_ids": [exp_id],
                "max_results": 1000,
                "order_by": [f"attributes.start_time {order}"],
            }
            if filter_string:
                body["filter"] = filter_string
            if token:
                body["page_token"] = token
            page = self.call(
                "/api/2.0/mlflow/runs/search",
                body,
                what=f"cannot list the runs of experiment {exp_id}",
            )
            out += page.get("runs", [])
            token = page.get("next_page_token")
            if not token:
                return out

    def run(self, run_id: str) -> dict[str, Any]:
        """One run as this account may read it."""
        got = self.call(
            "/api/2.0/mlflow/runs/get", query={"run_id": run_id}, what=f"cannot read run {run_id}"
        )
        return dict(got["run"])

    def download_answer(self, exp_id: str, run_id: str) -> bytes | None:
        """A submission's stored ``answer.json``, or ``None`` when it holds none."""
        status, raw = patiently(
            lambda: request_bytes(
                self.url, answer_path(exp_id, run_id), auth=self.auth, cafile=self.cafile
            ),
            self.patience,
        )
        if status == 404:
            return None
        if status != 200:
            checked(
                status,
                {"message": raw.decode(errors="replace")[:200]},
                f"cannot download the answer of {run_id}",
            )
        return raw


@dataclass(frozen=True)
class ClassRun:
    """One run of the class, as the teacher lists them: who owns it, and how it stands."""

    run_id: str
    name: str
    owner: str
    status: str
    started: str
    best_val_loss: float | None


def class_runs(client: ClassClient, experiment: str) -> list[ClassRun]:
    """Every run of the class experiment with its owner (the account that created it), newest
    first."""
    found = client.experiment(experiment)
    if found is None:
        raise HomeworkError(
            f"cannot read the experiment {experiment!r}: it does not exist, or "
            f"{client.account!r} may not read it"
        )
    runs: list[ClassRun] = []
    for r in client.search_runs(str(found["experiment_id"]), newest_first=True):
        info, data = r["info"], r.get("data", {})
        metrics = {m["key"]: m["value"] for m in data.get("metrics", [])}
        ms = int(info.get("start_time") or 0)
        start = dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else ""
        runs.append(
            ClassRun(
                info["run_id"],
                info.get("run_name", ""),
                info.get("user_id", ""),
                info.get("status", ""),
                start,
                metrics.get("best_val_loss"),
            )
        )
    return runs
