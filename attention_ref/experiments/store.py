"""The tracking store: which one, reaching it, and the facts every run records about itself.

``--tracking-uri``, else ``$MLFLOW_TRACKING_URI``, else MLflow's embedded default
``sqlite:///mlflow.db`` in the working directory (browse it with
``mlflow ui --backend-store-uri sqlite:///mlflow.db``). Experiment ``shakespeare``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import mlflow
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
DEFAULT_EXPERIMENT = "shakespeare"

for _name in ("mlflow", "alembic"):
    logging.getLogger(_name).setLevel(logging.WARNING)


class TrackingError(ValueError):
    """The tracking store or a run cannot be used as asked; the message says why, in one line."""


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
        raise TrackingError(f"cannot use the tracking store {uri}: {first_line(e)}") from None


def migrate_store(uri: str) -> None:
    """Create (or upgrade) the tables of a database store now, not at the first run."""
    MlflowClient(tracking_uri=uri).search_experiments(max_results=1)


def current_uri() -> str:
    """The tracking URI MLflow uses now."""
    return mlflow.get_tracking_uri()


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (MLflow's run to many lines)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def git_commit(root: Path | None = None) -> str:
    """``HEAD`` of the checkout attnref runs from (``-dirty`` if tracked files changed), else
    ``"unknown"`` (no git, or not a checkout: an installed wheel)."""
    root = root or Path(__file__).resolve().parents[2]
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
