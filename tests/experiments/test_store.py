"""The embedded store's first use under concurrency: migrate once, under a file lock.

Four ``attnref train`` started at once on a new sqlite store used to crash three of them
inside alembic's migration. Here four real processes open a new store at the same moment
(they wait for a start signal after their imports), each the way a training does
(`attention_ref.experiments.store.connect`, then a run with a metric).
"""

from __future__ import annotations

import fcntl
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from attention_ref.experiments.store import sqlite_path

#: one process: imports, then waits for ``go`` to exist, then opens the store as a run does
FIRST_RUN = """
import sys, time
from pathlib import Path
import mlflow
from attention_ref.experiments.store import connect
uri, go = sys.argv[1], Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.005)
connect(uri, "shakespeare")
with mlflow.start_run():
    mlflow.log_metric("x", float(sys.argv[3]), step=1)
"""

#: one process: imports, says so, then migrates (`migrate_once`)
MIGRATE = """
import sys
from attention_ref.experiments.store import migrate_once
print("ready", flush=True)
migrate_once(sys.argv[1])
print("migrated", flush=True)
"""


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("sqlite:///mlflow.db", Path("mlflow.db")),
        ("sqlite:////tmp/x/mlflow.db", Path("/tmp/x/mlflow.db")),
        ("sqlite:///mlflow.db?timeout=5", Path("mlflow.db")),
        ("sqlite:///:memory:", None),
        ("sqlite://", None),
        ("http://127.0.0.1:5000", None),
        ("postgresql://u@/db", None),
    ],
)
def test_sqlite_path(uri, path):
    assert sqlite_path(uri) == path


def tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows}


@pytest.mark.slow
def test_four_first_runs_on_a_new_store_all_succeed(tmp_path):
    db, go = tmp_path / "mlflow.db", tmp_path / "go"
    uri = f"sqlite:///{db}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_RUN, uri, str(go), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for i in range(4)
    ]
    for p in procs:  # every process has imported mlflow and waits
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    assert not db.exists()  # a new store: nobody has opened it yet
    go.touch()
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], "\n\n".join(errors)
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("shakespeare")
    runs = client.search_runs([exp.experiment_id])
    assert sorted(r.data.metrics["x"] for r in runs) == [0.0, 1.0, 2.0, 3.0]
    assert {r.info.status for r in runs} == {"FINISHED"}


@pytest.mark.slow
def test_the_migration_waits_for_the_lock(tmp_path):
    db = tmp_path / "mlflow.db"
    uri = f"sqlite:///{db}"
    with (tmp_path / "mlflow.db.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as if another process were migrating
        proc = subprocess.Popen(
            [sys.executable, "-c", MIGRATE, uri],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(1.5)
        assert proc.poll() is None  # waiting for the lock ...
        assert not db.exists() or "experiments" not in tables(db)  # ... having touched nothing
    out, err = proc.communicate(timeout=120)  # the lock is released: it migrates
    assert proc.returncode == 0, err
    assert out.strip() == "migrated"
    assert {"experiments", "runs", "metrics", "alembic_version"} <= tables(db)


def test_the_system_metrics_threads_warnings_are_not_printed_its_errors_and_mlflows_are():
    """A class server refusing a changed password mid-run: the run's own one line says so, and
    the system-metrics thread, polling the run at that moment, printed its own warning above
    it (a race seen under load). Its warnings are off, its errors and MLflow's warnings stay."""
    import logging

    from mlflow.system_metrics import system_metrics_monitor

    from attention_ref.experiments import store

    store._mlflow()
    heard: list[str] = []

    class Ear(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            heard.append(record.getMessage())

    ear = Ear()
    loggers = [system_metrics_monitor._logger, logging.getLogger("mlflow.tracking.fluent")]
    for logger in loggers:
        logger.addHandler(ear)
    try:
        system_metrics_monitor._logger.warning("Failed to get mlflow run: 401 != 200.")
        system_metrics_monitor._logger.error("the monitor broke")
        logging.getLogger("mlflow.tracking.fluent").warning("a warning of MLflow's own")
    finally:
        for logger in loggers:
            logger.removeHandler(ear)
    assert heard == ["the monitor broke", "a warning of MLflow's own"]


def test_the_commit_says_dirty_when_a_tracked_file_changed(tmp_path):
    """What a run or a recording keeps of the code it ran: the commit, ``-dirty`` when a
    tracked file differs from it (an untracked file does not count), short where asked."""
    from attention_ref.experiments.store import git_commit

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    assert git_commit(tmp_path) == "unknown"  # not a checkout: said, not guessed
    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    full, short = git("rev-parse", "HEAD"), git("rev-parse", "--short", "HEAD")
    (tmp_path / "new.txt").write_text("untracked\n")
    assert (git_commit(tmp_path), git_commit(tmp_path, short=True)) == (full, short)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert git_commit(tmp_path, short=True) == f"{short}-dirty"
    assert git_commit(tmp_path) == f"{full}-dirty"
