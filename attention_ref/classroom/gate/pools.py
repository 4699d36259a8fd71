"""The class server's database connections, counted once: each pool's size and PostgreSQL's
``max_connections``, from how many requests one application server runs at once.

One application server (``mlflow server``, one uvicorn worker) runs at most `REQUEST_THREADS`
requests at once: uvicorn hands each to anyio's worker threads, 40 by default
(``anyio.to_thread.current_default_thread_limiter()``). A request holds at most
`STORE_SESSIONS_PER_REQUEST` connections of MLflow's store at once: ``create_run`` and
``log_batch`` (every training's metrics) open a session inside their own (``_set_tags``,
``_log_metrics``). A pool with fewer than

    pool connections ≥ REQUEST_THREADS × STORE_SESSIONS_PER_REQUEST

can be held whole by requests that each wait for their second connection: none gets one until
the pool's timeout (30 s), which MLflow answers with a 400 the clients do not retry (seen: two
finishes of 40 at once given up at 30 s, with MLflow's default pool of 5 + 10). So each store's
pool (the tracking store and basic auth's accounts, both made by MLflow from
``MLFLOW_SQLALCHEMYSTORE_POOL_SIZE`` and ``MLFLOW_SQLALCHEMYSTORE_MAX_OVERFLOW``) holds
`STORE_CONNECTIONS`, the runs' locks' own pool (`attention_ref.classroom.gate.uploads`) one
connection per request, and the class's PostgreSQL accepts every server's pools at their fullest
plus `RESERVED_CONNECTIONS` (the class's commands, ``psql``, PostgreSQL's superuser slots).
"""

from __future__ import annotations

#: the most requests one application server runs at once (anyio's default thread limiter)
REQUEST_THREADS = 40
#: the most connections of one store a request holds at once (MLflow's nested sessions)
STORE_SESSIONS_PER_REQUEST = 2
#: connections a store's pool keeps open while idle
STORE_POOL_SIZE = 5
#: the most connections one store's pool opens: two per request that can run at once
STORE_CONNECTIONS = REQUEST_THREADS * STORE_SESSIONS_PER_REQUEST
#: the runs' locks' pool: kept open while idle, and at most (one per request)
LOCK_POOL_SIZE = 4
LOCK_CONNECTIONS = REQUEST_THREADS
#: the class's commands and an administrator's ``psql`` beside the servers, and PostgreSQL's
#: own ``superuser_reserved_connections`` (3)
RESERVED_CONNECTIONS = 20


def store_environment() -> dict[str, str]:
    """The variables MLflow sizes its stores' pools from (in ``mlflow server``'s environment)."""
    return {
        "MLFLOW_SQLALCHEMYSTORE_POOL_SIZE": str(STORE_POOL_SIZE),
        "MLFLOW_SQLALCHEMYSTORE_MAX_OVERFLOW": str(STORE_CONNECTIONS - STORE_POOL_SIZE),
    }


def connections_per_server() -> int:
    """The most connections one application server opens: its tracking store's and its
    accounts' pools full (`STORE_CONNECTIONS` each) and its locks' pool full."""
    return 2 * STORE_CONNECTIONS + LOCK_CONNECTIONS


def max_connections(servers: int) -> int:
    """PostgreSQL's ``max_connections`` for a class of ``servers`` application servers:
    ``servers × connections_per_server() + RESERVED_CONNECTIONS``."""
    return servers * connections_per_server() + RESERVED_CONNECTIONS
