"""The class server's connections, counted once (`attention_ref.classroom.gate.pools`): the figures
the pools are sized from are measured here on the real MLflow store and anyio, so a release of
either that changes them fails a test instead of a class."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from attention_ref.classroom.gate import pools


def _held_at_most(store: Any, work: Callable[[], object]) -> int:
    """The most connections of ``store``'s pool that ``work`` (one thread) holds at once."""
    from sqlalchemy import event

    held = {"now": 0, "most": 0}
    me = threading.get_ident()

    def out(*_: object) -> None:
        if threading.get_ident() == me:
            held["now"] += 1
            held["most"] = max(held["most"], held["now"])

    def back(*_: object) -> None:
        if threading.get_ident() == me:
            held["now"] -= 1

    event.listen(store.engine, "checkout", out)
    event.listen(store.engine, "checkin", back)
    try:
        work()
    finally:
        event.remove(store.engine, "checkout", out)
        event.remove(store.engine, "checkin", back)
    assert held["now"] == 0, held  # every connection given back
    return held["most"]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    made = SqlAlchemyStore(f"sqlite:///{tmp_path / 'mlflow.db'}", str(tmp_path / "artifacts"))
    yield made
    made.engine.dispose()


def test_a_request_holds_at_most_two_of_the_stores_connections(store):
    """What the class's requests ask of MLflow's store, each measured: ``create_run`` and
    ``log_batch`` hold a second connection inside their first; none holds a third."""
    from mlflow.entities import Metric, Param, RunStatus, RunTag

    exp = store.create_experiment("class")
    run = store.create_run(exp, "s01", 0, [], "first").info.run_id
    asked: dict[str, Callable[[], object]] = {
        "create_run": lambda: store.create_run(exp, "s01", 0, [RunTag("k", "v")], "second"),
        "log_batch (a training's metrics)": lambda: store.log_batch(
            run, [Metric("loss", 1.0, 0, s) for s in range(5)], [], []
        ),
        "log_batch (all three)": lambda: store.log_batch(
            run, [Metric("loss", 0.5, 0, 9)], [Param("lr", "0.001")], [RunTag("t", "1")]
        ),
        "set_tag": lambda: store.set_tag(run, RunTag("t2", "1")),
        "get_run": lambda: store.get_run(run),
        "search_runs": lambda: store.search_runs([exp], "", 1),
        "update_run_info": lambda: store.update_run_info(
            run, RunStatus.from_string("FINISHED"), 1, None
        ),
    }
    held = {name: _held_at_most(store, work) for name, work in asked.items()}
    assert max(held.values()) == pools.STORE_SESSIONS_PER_REQUEST, held
    # the control: the nested ones are seen as nested, a plain read as one connection
    assert held["log_batch (a training's metrics)"] == 2 and held["get_run"] == 1, held


def test_one_server_runs_as_many_requests_at_once_as_anyios_threads():
    """uvicorn runs MLflow's Flask application (and its FastAPI routes) on anyio's worker
    threads: their default limit is the most requests one server runs at once."""
    import anyio
    import anyio.to_thread

    async def limit() -> float:
        return anyio.to_thread.current_default_thread_limiter().total_tokens

    assert anyio.run(limit) == pools.REQUEST_THREADS


def test_every_pool_holds_two_connections_per_request_and_postgres_holds_every_pool():
    env = pools.store_environment()
    size = int(env["MLFLOW_SQLALCHEMYSTORE_POOL_SIZE"])
    overflow = int(env["MLFLOW_SQLALCHEMYSTORE_MAX_OVERFLOW"])
    assert size + overflow >= pools.REQUEST_THREADS * pools.STORE_SESSIONS_PER_REQUEST
    assert size > 0 and overflow > 0  # MLflow passes neither when it is 0
    assert pools.LOCK_CONNECTIONS >= pools.REQUEST_THREADS
    for servers in (1, 2, 8):
        assert (
            pools.max_connections(servers)
            >= servers * (2 * (size + overflow) + pools.LOCK_CONNECTIONS) + 3
        )  # PostgreSQL's superuser slots
    assert pools.max_connections(2) > pools.max_connections(1)


def test_mlflow_sizes_its_stores_pool_from_the_environment(tmp_path, monkeypatch):
    """The variables `pools.store_environment` sets are the ones MLflow reads (a renamed one
    would leave MLflow's 5 + 10)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    def connections(folder: Path) -> int:
        folder.mkdir()
        made = SqlAlchemyStore(f"sqlite:///{folder / 'mlflow.db'}", str(folder / "artifacts"))
        try:
            return made.engine.pool.size() + made.engine.pool._max_overflow
        finally:
            made.engine.dispose()

    for key in pools.store_environment():
        monkeypatch.delenv(key, raising=False)
    assert connections(tmp_path / "default") == 5 + 10  # the control: MLflow's default
    for key, value in pools.store_environment().items():
        monkeypatch.setenv(key, value)
    assert connections(tmp_path / "class") == pools.STORE_CONNECTIONS
