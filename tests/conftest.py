"""Shared test settings: hypothesis profiles and small helpers."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", max_examples=150, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# Under pytest-xdist (``make test``: a worker per core) each worker's torch, and every
# ``attnref`` subprocess a test starts, gets its share of the cores: cores // workers threads
# (at least 1), set before torch is imported. Left at torch's default (every core each), two
# workers' OpenMP pools fought over the 2 cores and the training tests ran 3.6x slower
# (tests/cli/test_cli_train.py: 69 s alone, 252 s beside the other worker).
if os.environ.get("PYTEST_XDIST_WORKER") and "OMP_NUM_THREADS" not in os.environ:
    _workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // _workers))

# No test downloads Tiny Shakespeare from the internet: a download that a test did not point
# at a server of its own (``$ATTNREF_DATA_URL``) goes to a closed port on this machine and is
# refused at once, rather than reaching the public URL.
os.environ.setdefault("ATTNREF_DATA_URL", "http://127.0.0.1:9/the-tests-never-download")

# The suite speaks English whatever the contributor's locale: a student's command takes its
# language from $ATTNREF_LANG, else LC_ALL, LC_MESSAGES, LANG (attention_ref.cli.language), so
# they are set here for every test and every process a test starts; the tests of another
# language set it themselves.
for _name in ("ATTNREF_LANG", "LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def shakespeare_path():
    """Tiny Shakespeare as a contributor's machine has it, never downloaded: ``$ATTNREF_DATA``
    (the Makefile points it at ../shared where there is one), else the user cache
    (``$XDG_CACHE_HOME/attnref/tinyshakespeare.txt``)."""
    from attention_ref.lm.data import DataError, locate

    try:
        return locate(allow_download=False)
    except DataError as e:
        pytest.fail(
            f"the tests need Tiny Shakespeare and never download it: {e}. "
            "`make data` downloads it once into the cache (verified by its sha256)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def shakespeare(shakespeare_path):
    """The loaded, verified data set (loaded once per session)."""
    from attention_ref.lm.data import load

    return load(shakespeare_path)


@pytest.fixture(scope="session")
def migrated_store(tmp_path_factory):
    """An empty MLflow sqlite store, migrated once (alembic takes seconds); tests copy it."""
    from attention_ref.experiments.store import migrate_store

    db = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
    migrate_store(f"sqlite:///{db}")
    return db


@pytest.fixture
def store(migrated_store, tmp_path, monkeypatch):
    """A fresh MLflow store for one test: ``tmp_path/mlflow.db``, artifacts under ``tmp_path``.

    The working directory is ``tmp_path`` (MLflow puts artifacts in ``./mlruns``, the CLI its
    checkpoints in ``./runs``); ``MLFLOW_TRACKING_URI`` points at the copy.
    """
    import shutil

    import mlflow

    db = tmp_path / "mlflow.db"
    shutil.copy(migrated_store, db)
    uri = f"sqlite:///{db}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    yield uri
    while mlflow.active_run() is not None:
        mlflow.end_run()


@pytest.fixture(autouse=True)
def _torch_threads_restored():
    """torch's thread count as it was before each test: a test that trains in-process with
    ``threads=N`` (``--threads``) sets it for the whole process, and a later test's in-process
    run then differs in its last digits from a subprocess's (the resume-equals-uninterrupted
    tests compare the two exactly)."""
    import sys

    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    yield
    torch = sys.modules.get("torch")
    if torch is not None and before is not None and torch.get_num_threads() != before:
        torch.set_num_threads(before)
