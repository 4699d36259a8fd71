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


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def shakespeare_path():
    """Tiny Shakespeare from ``$ATTNREF_DATA`` (the Makefile points it at ../shared)."""
    from pathlib import Path

    value = os.environ.get("ATTNREF_DATA")
    if not value or not Path(value).is_file():
        pytest.fail("set ATTNREF_DATA to Tiny Shakespeare's input.txt (make test does)")
    return Path(value)


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


# The slowest test files, slowest first: seconds each took in one serial run on the 2-core
# development machine (2026-11-25, `pytest --durations=0`, setup and teardown included). Only
# their order matters. `make test` runs the files on two xdist workers (`--dist loadfile
# --no-loadscope-reorder`), each file on one worker, handed out in the order collected: these
# start first, so the last file to be handed out is a short one and both workers end together.
# (xdist's own reorder, by number of tests, put these few-test files last: one worker ran them
# alone for minutes.) A file missing from the list keeps its place after them.
SLOWEST_FIRST = {
    "tests/classroom/test_class_server.py": 201,
    "tests/book/test_layout.py": 132,
    "tests/classroom/test_ui.py": 95,
    "tests/classroom/test_class_flow.py": 94,
    "tests/worked/test_variant_check.py": 77,
    "tests/cli/test_cli_train.py": 69,
    "tests/experiments/test_mlflow_server.py": 67,
    "tests/book/test_notebooks.py": 63,
    "tests/book/test_book.py": 60,
    "tests/classroom/test_access_http.py": 59,
    "tests/classroom/test_lifecycle.py": 47,
    "tests/classroom/test_homework_class.py": 35,
    "tests/classroom/test_homework.py": 34,
    "tests/test_layers.py": 31,
    "tests/worked/test_check_mistakes.py": 27,
    "tests/cli/test_issue24_interrupt_report.py": 22,
    "tests/experiments/test_report.py": 21,
}


def pytest_collection_modifyitems(session, config, items) -> None:
    """The slowest files first (``SLOWEST_FIRST``), the others after them in their own order;
    the tests inside a file keep theirs (a stable sort by file)."""
    rank = {path: i for i, path in enumerate(SLOWEST_FIRST)}
    root = config.rootpath

    def key(item) -> int:
        try:
            path = item.path.relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(path, len(rank))

    items.sort(key=key)
