"""The tracking store: which one, reaching it, and the facts every run records about itself.

``--tracking-uri``, else ``$MLFLOW_TRACKING_URI``, else MLflow's embedded default
``sqlite:///mlflow.db`` in the working directory (browse it with
``mlflow ui --backend-store-uri sqlite:///mlflow.db``). Experiment ``shakespeare``.

MLflow is imported by the functions that talk to it, not by this module: which store and
whether it exists (`resolve_tracking_uri`, `require_store`, `sqlite_path`) are answered
without it, so `attention_ref.experiments.local_store` can read a local store at once.
"""

from __future__ import annotations

import logging
import os
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType

from attention_ref.experiments.store_words import said

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"
DEFAULT_EXPERIMENT = "shakespeare"


#: MLflow's system-metrics thread: its warnings only repeat, from another thread and in the
#: middle of the progress line, what a run's own logger says in its one line when the store
#: refuses or goes away (its poll of the run raced that line: a changed password printed
#: "WARNING ... Failed to get mlflow run: ... 401" above it)
SYSTEM_METRICS_LOGGER = "mlflow.system_metrics"


def _quiet_loggers() -> None:
    """MLflow's and alembic's INFO lines off (MLflow sets its level when it is imported), and
    the system-metrics thread's warnings (`SYSTEM_METRICS_LOGGER`): its errors still show."""
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger(SYSTEM_METRICS_LOGGER).setLevel(logging.ERROR)


_quiet_loggers()


def _mlflow() -> ModuleType:
    """``mlflow``, imported now (seconds, the first time), its loggers quiet."""
    import mlflow

    _quiet_loggers()
    return mlflow


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
    mlflow = _mlflow()
    from mlflow.exceptions import MlflowException

    uri = resolve_tracking_uri(uri)
    if uri.startswith(("http://", "https://")):
        try:
            health = uri.rstrip("/") + "/health"
            with urllib.request.urlopen(health, timeout=5, context=tls_context(uri)) as r:
                r.read()
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise TrackingError(
                f"cannot reach the MLflow server at {uri} ({reason}); start it, or leave out "
                f"--tracking-uri to use the embedded store {DEFAULT_TRACKING_URI}"
            ) from None
        check_credentials(uri)
    mlflow.set_tracking_uri(uri)
    if experiment is None:
        return None
    migrate_once(uri)  # a store about to be written: its tables exist before any run starts
    try:
        return mlflow.set_experiment(experiment).experiment_id
    except MlflowException as e:
        raise TrackingError(f"cannot use the tracking store {uri}: {first_line(e)}") from None


def tls_context(uri: str) -> ssl.SSLContext | None:
    """How an ``https`` server is verified, as MLflow's own client does it: the CA bundle in
    ``$MLFLOW_TRACKING_SERVER_CERT_PATH`` (a class server's own certificate, trusted as it is),
    no verification with ``$MLFLOW_TRACKING_INSECURE_TLS=true``, else the system's."""
    if not uri.startswith("https://"):
        return None
    if os.environ.get("MLFLOW_TRACKING_INSECURE_TLS", "").lower() == "true":
        return ssl._create_unverified_context()  # the user's explicit choice, as in MLflow
    cafile = os.environ.get("MLFLOW_TRACKING_SERVER_CERT_PATH") or None
    context = ssl.create_default_context(cafile=cafile)
    if cafile:
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return context


def require_store(uri: str | None = None, lang: str = "en") -> str:
    """The resolved URI of a store that must already exist (commands that only read one).

    For a sqlite store, its file must exist: reading through MLflow would create an empty
    database (and its tables) where the user only meant to look. Raises `TrackingError`
    (one line, in ``lang``) and creates nothing. Other stores (a server, a directory) are left
    to `connect`.
    """
    uri = resolve_tracking_uri(uri)
    path = sqlite_path(uri)
    if path is not None and not path.is_file():
        raise TrackingError(said("no_store", lang, uri=uri, path=path.absolute()))
    return uri


def migrate_store(uri: str) -> None:
    """Create (or upgrade) the tables of a database store now, not at the first run."""
    _mlflow()
    from mlflow.tracking import MlflowClient

    MlflowClient(tracking_uri=uri).search_experiments(max_results=1)


def check_credentials(uri: str) -> None:
    """Refuse at once (`TrackingError`) when a server with authentication refuses us.

    The credentials are MLflow's own (``$MLFLOW_TRACKING_USERNAME`` /
    ``$MLFLOW_TRACKING_PASSWORD``, else ``~/.mlflow/credentials``); one authenticated read tells
    whether the server accepts them, before any work starts. A server without authentication
    answers it like any other request.
    """
    import base64

    from mlflow.utils.credentials import read_mlflow_creds

    if os.environ.get("MLFLOW_TRACKING_AUTH"):
        return  # a custom auth provider: only MLflow's client knows how to ask
    creds = read_mlflow_creds()
    endpoint = "/api/2.0/mlflow/experiments/search?max_results=1"
    req = urllib.request.Request(uri.rstrip("/") + endpoint)
    if creds.username and creds.password:
        token = base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    elif os.environ.get("MLFLOW_TRACKING_TOKEN"):
        req.add_header("Authorization", f"Bearer {os.environ['MLFLOW_TRACKING_TOKEN']}")
    try:
        with urllib.request.urlopen(req, timeout=30, context=tls_context(uri)) as r:
            r.read()
    except urllib.error.HTTPError as e:
        if e.code != 401:
            return  # anything but "who are you?" is for the command's own requests to meet
        who = (
            f"the account {creds.username!r} (wrong password, or no such account)"
            if creds.username
            else "anonymous requests"
        )
        raise TrackingError(
            f"the MLflow server at {uri} refused {who}: set MLFLOW_TRACKING_USERNAME and "
            "MLFLOW_TRACKING_PASSWORD to your account on it"
        ) from None
    except (urllib.error.URLError, OSError):
        return  # /health answered a moment ago; MLflow's client retries what follows


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI; ``None`` for other stores and in-memory ones."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///").split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(path)


def migrate_once(uri: str) -> None:
    """Make first use of a sqlite store safe when several processes start at once.

    MLflow creates (or upgrades) a sqlite store's tables the first time a process opens it;
    two processes doing that at once crash in alembic's migration. Here the first process
    migrates while holding an exclusive lock on ``<db>.lock`` (``filelock``, torch's own
    dependency: ``flock`` on POSIX, ``msvcrt.locking`` on Windows); the others wait for it,
    then find the tables in place (opening a migrated store only checks its revision). Other
    stores (a server, PostgreSQL) migrate on their own side.
    """
    from filelock import FileLock, Timeout
    from mlflow.exceptions import MlflowException

    path = sqlite_path(uri)
    if path is None:
        return
    lock = path.with_name(path.name + ".lock")
    try:
        with FileLock(lock, timeout=600):
            migrate_store(uri)
    except Timeout:
        raise TrackingError(
            f"cannot use the tracking store {uri}: another process holds {lock} for over 10 minutes"
        ) from None
    except OSError as e:
        raise TrackingError(f"cannot use the tracking store {uri}: {e}") from None
    except MlflowException as e:
        raise TrackingError(f"cannot use the tracking store {uri}: {first_line(e)}") from None


def current_uri() -> str:
    """The tracking URI MLflow uses now."""
    return _mlflow().get_tracking_uri()


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (MLflow's run to many lines)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def git_commit(root: Path | None = None, *, short: bool = False) -> str:
    """``HEAD`` of the checkout attnref runs from (``-dirty`` if tracked files changed), else
    ``"unknown"`` (no git, or not a checkout: an installed wheel); ``short``: its short hash
    (what the recorders of ``tools/`` and ``benchmarks/`` keep)."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", *(["--short"] if short else []), "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() + ("-dirty" if dirty else "")
