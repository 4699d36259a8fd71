"""The homework's REST client: the class server's MLflow API as the homework verbs call it.

One account's view of experiments and runs (`_experiment`, `_search_runs`), the calls that
turn a refusal into one line (`_call`, `HomeworkError`), the experiments the teacher makes
(`_create_experiment`) and a submission's stored answer (`_answer_path`, `_download`). Every
verb of `attention_ref.classroom.homework` (assign, fetch, submit, grade) goes through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attention_ref.classroom.assignment import ANSWER_FILE, AssignmentError
from attention_ref.classroom.patience import patiently
from attention_ref.classroom.server import ADMIN_USERNAME, _checked, request_bytes, rest
from attention_ref.experiments.names import EXPERIMENT_KIND, Tag

Auth = tuple[str, str]


class HomeworkError(AssignmentError):
    """Homework cannot be done as asked; the message says why, in one line."""


def _tags(obj: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t.get("value", "") for t in obj.get("tags", []) or []}


def _experiment(url: str, auth: Auth, name: str, cafile: Path | None) -> dict[str, Any] | None:
    """The experiment ``name`` as ``auth`` may read it; ``None`` when it does not exist or
    ``auth`` may not read it (a student cannot tell another's homework from none)."""
    status, found = patiently(lambda: rest(url, "/api/2.0/mlflow/experiments/get-by-name",
                                           auth=auth, query={"experiment_name": name},
                                           cafile=cafile))  # fmt: skip
    if status == 200:
        return dict(found["experiment"])
    if status in (403, 404):
        return None
    _refused(status, found, auth, url)
    _checked(status, found, f"cannot read the experiment {name!r}")
    return None  # pragma: no cover


def _refused(status: int, answer: dict[str, Any], auth: Auth, url: str) -> None:
    if status == 401:
        raise HomeworkError(
            f"the class server at {url} refused the account {auth[0]!r}: check "
            "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
        )
    if status == 503:
        raise HomeworkError(f"the class server at {url} is unavailable for a moment; try again")


def _call(
    url: str, endpoint: str, body: dict[str, Any] | None, auth: Auth, what: str,
    cafile: Path | None, **kw: Any,
) -> dict[str, Any]:  # fmt: skip
    status, answer = patiently(lambda: rest(url, endpoint, body, auth=auth, cafile=cafile, **kw))
    _refused(status, answer, auth, url)
    return _checked(status, answer, what)


def _create_experiment(
    url: str, admin: Auth, name: str, tags: dict[str, str], note: str, cafile: Path | None
) -> tuple[str, bool]:
    """``(id, created)`` of experiment ``name`` made with ``tags`` (found if it exists)."""
    every = [{"key": k, "value": v} for k, v in tags.items()]
    every += [{"key": str(Tag.EXPERIMENT_KIND), "value": EXPERIMENT_KIND},
              {"key": str(Tag.NOTE), "value": note}]  # fmt: skip
    status, made = rest(url, "/api/2.0/mlflow/experiments/create", {"name": name, "tags": every},
                        auth=admin, cafile=cafile)  # fmt: skip
    if status == 200:
        return str(made["experiment_id"]), True
    if "already exists" in str(made.get("message", "")):
        found = _experiment(url, admin, name, cafile)
        if found is not None:
            return str(found["experiment_id"]), False
    _refused(status, made, admin, url)
    _checked(status, made, f"cannot create the experiment {name!r}")
    raise HomeworkError(f"cannot create the experiment {name!r}")  # pragma: no cover


def _set_experiment_tag(
    url: str, admin: Auth, exp_id: str, key: str, value: str, cafile: Path | None
) -> None:
    _call(url, "/api/2.0/mlflow/experiments/set-experiment-tag",
          {"experiment_id": exp_id, "key": key, "value": value}, admin,
          f"cannot tag experiment {exp_id}", cafile)  # fmt: skip


def _search_runs(
    url: str, auth: Auth, exp_id: str, cafile: Path | None, filter_string: str = ""
) -> list[dict[str, Any]]:
    """Every run of an experiment (all pages), oldest first."""
    out: list[dict[str, Any]] = []
    token = None
    while True:
        body: dict[str, Any] = {"experiment_ids": [exp_id], "max_results": 1000,
                                "order_by": ["attributes.start_time ASC"]}  # fmt: skip
        if filter_string:
            body["filter"] = filter_string
        if token:
            body["page_token"] = token
        page = _call(url, "/api/2.0/mlflow/runs/search", body, auth,
                     f"cannot list the runs of experiment {exp_id}", cafile)  # fmt: skip
        out += page.get("runs", [])
        token = page.get("next_page_token")
        if not token:
            return out


def list_students(url: str, admin: Auth, cafile: Path | None = None) -> list[str]:
    """The class's students: every account that is not an admin (a teacher), by name."""
    found = _call(url, "/api/2.0/mlflow/users/list", None, admin, "cannot list the accounts",
                  cafile)  # fmt: skip
    return sorted(u["username"] for u in found.get("users", [])
                  if not u.get("is_admin") and u["username"] != ADMIN_USERNAME)  # fmt: skip


def _answer_path(exp_id: str, run_id: str) -> str:
    """The artifact proxy's endpoint of a submission's answer."""
    return f"/api/2.0/mlflow-artifacts/artifacts/{exp_id}/{run_id}/artifacts/{ANSWER_FILE}"


def _download(url: str, auth: Auth, exp_id: str, run_id: str, cafile: Path | None) -> bytes | None:
    status, raw = request_bytes(url, _answer_path(exp_id, run_id), auth=auth, cafile=cafile)
    if status == 404:
        return None
    if status != 200:
        _checked(status, {"message": raw.decode(errors="replace")[:200]},
                 f"cannot download the answer of {run_id}")  # fmt: skip
    return raw
