"""A class on two application servers behind one edge (``ClassServer(workers=2)``).

Each server is ``mlflow server`` of one worker; here they listen on two loopback ports (as
servers on other hosts would), so a test can also reach each one directly. What must hold:
the edge sends each account's requests to one server and the class to both; the run's lock
holds across the two (two uploads of one answer at once, one on each server: exactly one
stored); a finished submission is final on either; when one server stops, the edge sends its
accounts' requests to the other and the class goes on; the passwords the class's commands
draw get the cheap hash, any other keeps MLflow's.
"""

from __future__ import annotations

import base64
import re
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student, generated_password
from attention_ref.classroom.connection.class_client import ClassClient, answer_path
from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange.fetch import mine
from attention_ref.classroom.gate.credentials import FAST_HASH
from attention_ref.classroom.hosting.cluster import AUTH_DB
from attention_ref.classroom.hosting.server import ClassServer
from tests.classroom.conftest import answer_of, class_dir, free_port

pytestmark = pytest.mark.slow

EXPERIMENT = "two"
STUDENTS = tuple(f"s{i:02d}" for i in range(12))
HOMEWORK = "hw-two"


@pytest.fixture(scope="module")
def two() -> Iterator[ClassServer]:
    root = class_dir("attnref-two-")
    s = ClassServer(
        root / "class",
        secrets.token_urlsafe(18),
        port=free_port(),
        workers=2,
        experiment=EXPERIMENT,
        app_ports=(free_port(), free_port()),
    )
    with s:
        yield s
    assert not s.processes and not s.postgres.is_running()


@pytest.fixture(scope="module")
def accounts(two) -> dict[str, str]:
    """The students, each with the homework `HOMEWORK` (one exercise)."""
    assigning.assign(ClassClient(two.url, two.admin), Assignment(name=HOMEWORK, exercises=1))
    made = {name: generated_password() for name in STUDENTS}
    for name, password in made.items():
        add_student(two.url, two.admin, name, password, EXPERIMENT)
        assigning.enrol_everywhere(ClassClient(two.url, two.admin), name)
    return made


def upstreams(server: ClassServer, user: str) -> set[str]:
    """The application servers that answered ``user``'s requests, from the edge's log."""
    text = server.edge.access_log.read_text(encoding="utf-8", errors="replace")
    return {
        m.group(1)
        for line in text.splitlines()
        if f" - {user} [" in line and (m := re.search(r"upstream=(\S+)", line))
    }


def direct(port: int, who: tuple[str, str], method: str, path: str, body: bytes = b"") -> int:
    """One request straight to an application server (no edge): its status."""
    return direct_answer(port, who, method, path, body)[0]


def direct_answer(
    port: int, who: tuple[str, str], method: str, path: str, body: bytes = b""
) -> tuple[int, str]:
    """One request straight to an application server (no edge): its status and body."""
    token = base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
    return answer_of(f"127.0.0.1:{port}", method, path, body, headers)


def all_at_once(port: int, who: tuple[str, str], path: str, bodies: list[bytes]) -> None:
    """``POST path`` once per body, all at once (behind a barrier), straight to one server:
    each answered 200 (else the test fails with what the server said), none in 20 s or more."""
    statuses: list[int] = [0] * len(bodies)
    said: list[str] = [""] * len(bodies)
    took: list[float] = [0.0] * len(bodies)
    barrier = threading.Barrier(len(bodies))

    def send(k: int) -> None:
        barrier.wait()
        t0 = time.monotonic()
        statuses[k], said[k] = direct_answer(port, who, "POST", path, bodies[k])
        took[k] = time.monotonic() - t0

    threads = [threading.Thread(target=send, args=(k,)) for k in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    refused = [(s, t) for s, t in zip(statuses, said, strict=True) if s != 200]
    assert statuses == [200] * len(bodies), refused
    assert max(took) < 20, sorted(took)[-5:]


def new_submission(server: ClassServer, who: tuple[str, str]) -> tuple[str, str]:
    """A RUNNING submission of the student's homework: (experiment id, run id)."""
    client = ClassClient(server.url, who)
    exp = mine(client, HOMEWORK).experiment_id
    status, made = client.send(
        "/api/2.0/mlflow/runs/create", {"experiment_id": exp, "run_name": "exercise 1"}
    )
    assert status == 200, made
    return exp, str(made["run"]["info"]["run_id"])


def test_each_account_lands_on_one_server_and_the_class_on_both(two, accounts):
    for name, password in accounts.items():
        client = ClassClient(two.url, (name, password))
        for _ in range(3):
            client.experiment(EXPERIMENT)
    each = {name: upstreams(two, name) for name in accounts}
    assert all(len(u) == 1 for u in each.values()), each
    ports = {f"127.0.0.1:{p}" for p in two.app_ports}
    assert set().union(*each.values()) == ports, each


def test_the_cheap_hash_is_for_drawn_passwords_only(two, accounts):
    import sqlalchemy

    chosen = ("chooser", "a password people chose")
    add_student(two.url, two.admin, *chosen, EXPERIMENT)
    engine = sqlalchemy.create_engine(two.postgres.uri(AUTH_DB))
    try:
        with engine.connect() as c:
            found = c.execute(sqlalchemy.text("SELECT username, password_hash FROM users"))
            hashes = {str(name): str(digest) for name, digest in found.all()}
    finally:
        engine.dispose()
    assert all(hashes[s].startswith(FAST_HASH + "$") for s in accounts), hashes
    assert hashes["chooser"].startswith("scrypt:")  # MLflow's, as it made it
    assert ClassClient(two.url, chosen).experiment(EXPERIMENT)  # both log in


@pytest.mark.parametrize("attempt", range(4))
def test_two_uploads_of_one_answer_at_once_on_two_servers_store_one(two, accounts, attempt):
    who = ("s00", accounts["s00"])
    exp, run_id = new_submission(two, who)
    texts = [b'{"from": "first server"}', b'{"from": "second server"}']
    statuses: list[int] = [0, 0]
    barrier = threading.Barrier(2)

    def put(k: int) -> None:
        barrier.wait()
        statuses[k] = direct(two.app_ports[k], who, "PUT", answer_path(exp, run_id), texts[k])

    threads = [threading.Thread(target=put, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 403], statuses
    stored = two.artifacts / exp / run_id / "artifacts" / "answer.json"
    assert stored.read_bytes() == texts[statuses.index(200)]


def test_a_finished_submission_is_final_on_either_server(two, accounts):
    who = ("s01", accounts["s01"])
    exp, run_id = new_submission(two, who)
    client = ClassClient(two.url, who)
    status, _ = client.send(answer_path(exp, run_id), data=b'{"a": 1}', method="PUT")
    assert status == 200
    status, said = client.send(
        "/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "FINISHED"}
    )
    assert status == 200, said
    stored = two.artifacts / exp / run_id / "artifacts" / "answer.json"
    for port in two.app_ports:
        assert direct(port, who, "PUT", answer_path(exp, run_id), b'{"a": 2}') == 403
        extra = f"/api/2.0/mlflow-artifacts/artifacts/{exp}/{run_id}/artifacts/extra.txt"
        assert direct(port, who, "PUT", extra, b"x") == 403
        upload = f"/ajax-api/2.0/mlflow/upload-artifact?run_uuid={run_id}&path=answer.json"
        assert direct(port, who, "POST", upload, b'{"a": 3}') in (400, 403)
    assert stored.read_bytes() == b'{"a": 1}'
    assert not (stored.parent / "extra.txt").exists()


def test_when_one_server_stops_its_accounts_go_to_the_other(two, accounts):
    first = f"127.0.0.1:{two.app_ports[0]}"
    on_first = [n for n in accounts if upstreams(two, n) == {first}]
    assert on_first  # the first test put some accounts there
    stopped = two.processes[0]
    from attention_ref.classroom.hosting.tracking_server import stop_process_group

    stop_process_group(stopped)
    assert two.stopped_app() is stopped
    for name in on_first:
        client = ClassClient(two.url, (name, accounts[name]))
        assert client.experiment(EXPERIMENT)
        exp, run_id = new_submission(two, (name, accounts[name]))
        status, _ = client.send(answer_path(exp, run_id), data=b'{"b": 1}', method="PUT")
        assert status == 200
        assert (two.artifacts / exp / run_id / "artifacts" / "answer.json").is_file()
    second = f"127.0.0.1:{two.app_ports[1]}"
    log = Path(two.edge.access_log).read_text(encoding="utf-8").splitlines()
    last = [line for line in log if f" - {on_first[0]} [" in line][-1]
    assert f"upstream={first}, {second}" in last or f"upstream={second}" in last, last


def test_the_runs_lock_is_postgresqls_held_across_servers_and_hosts(two, accounts):
    """A session of PostgreSQL's own (as a third host's) holding the run's advisory lock makes
    an upload on either server wait for it; nothing is locked through a file of this host."""
    import sqlalchemy

    from attention_ref.classroom.gate.uploads import AnswerRefusedError, lock_key, run_lock
    from attention_ref.classroom.hosting.cluster import TRACKING_DB

    who = ("s02", accounts["s02"])
    exp, run_id = new_submission(two, who)
    engine = sqlalchemy.create_engine(two.postgres.uri(TRACKING_DB))
    held = threading.Event()
    hold_s = 1.5

    def hold() -> None:
        with engine.connect() as c:
            c.execute(sqlalchemy.text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_key(run_id)})
            held.set()
            time.sleep(hold_s)
            c.rollback()

    try:
        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(30)
        # the lock as the servers take it
        with pytest.raises(AnswerRefusedError) as busy, run_lock(run_id, 0.2, engine):
            pass
        assert busy.value.status == 503
        with run_lock("f" * 32, wait_s=0.2, engine=engine):  # another run: not held
            pass
        t0 = time.monotonic()
        status = direct(two.app_ports[1], who, "PUT", answer_path(exp, run_id), b'{"c": 1}')
        waited = time.monotonic() - t0
        holder.join()
        assert status == 200 and waited > hold_s / 2, (status, waited)
        with run_lock(run_id, wait_s=0.2, engine=engine):  # released with its transaction
            pass
    finally:
        engine.dispose()
    locks = two.root / "locks"
    assert not locks.exists() or not any(locks.iterdir())


def test_the_edge_is_known_by_its_folder(two):
    from attention_ref.classroom.hosting.edge import is_nginx

    assert two.edge.process is not None
    assert is_nginx(two.edge.process.pid, two.edge.directory)
    assert not is_nginx(two.edge.process.pid, two.edge.directory / "other")
    assert not is_nginx(two.processes[-1].pid, two.edge.directory)  # an application server


def test_more_finishes_at_once_than_the_stores_pool_holds_do_not_wait_for_it(two, accounts):
    """40 submissions finished at once on one server, each holding its run's lock while
    MLflow's store works (its pool: 15 connections). Locks drawn from that pool left the work
    none: the finishes waited out the pool's 30 s timeout (seen in a class of 300: 96
    requests given up at 30 s). The locks have their own pool: all finished, none near it."""
    import json

    who = ("s03", accounts["s03"])
    client = ClassClient(two.url, who)
    runs = [new_submission(two, who) for _ in range(40)]
    for exp, run_id in runs:
        assert client.send(answer_path(exp, run_id), data=b"{}", method="PUT")[0] == 200
    bodies = [json.dumps({"run_id": run_id, "status": "FINISHED"}).encode() for _, run_id in runs]
    all_at_once(two.app_ports[1], who, "/api/2.0/mlflow/runs/update", bodies)


def test_more_trainings_logging_at_once_than_the_stores_pool_holds_all_get_through(two, accounts):
    """40 trainings' `log-batch` at once on one server: the most requests one server runs at
    once (`pools.REQUEST_THREADS`). MLflow's `log_batch` opens a session inside its own (for the
    metrics, the params, the tags): with a pool smaller than two connections per request, every
    connection is held by a request waiting for a second one, until the pool's 30 s timeout
    answers 400 (seen: two finishes of 40 given up at 30 s). All get through, quickly."""
    import json

    who = ("s04", accounts["s04"])
    client = ClassClient(two.url, who)
    exp = client.experiment(EXPERIMENT)
    assert exp is not None
    runs = []
    for k in range(40):
        asked = {"experiment_id": exp["experiment_id"], "run_name": f"t{k}"}
        status, made = client.send("/api/2.0/mlflow/runs/create", asked)
        assert status == 200, made
        runs.append(str(made["run"]["info"]["run_id"]))
    metrics = [
        {"key": "loss", "value": 1.0 / (s + 1), "timestamp": 0, "step": s} for s in range(20)
    ]
    logged = {
        "metrics": metrics,
        "params": [{"key": "lr", "value": "0.001"}],
        "tags": [{"key": "epoch", "value": "1"}],
    }
    bodies = [json.dumps({"run_id": run_id, **logged}).encode() for run_id in runs]
    all_at_once(two.app_ports[1], who, "/api/2.0/mlflow/runs/log-batch", bodies)


def test_postgres_and_each_servers_pools_hold_two_connections_per_request(two):
    """The sizes `attention_ref.classroom.gate.pools` counts, as the running class has them:
    PostgreSQL's ``max_connections`` for its two servers, each server's stores' pools."""
    import sqlalchemy

    from attention_ref.classroom.gate import pools
    from attention_ref.classroom.hosting.cluster import TRACKING_DB

    engine = sqlalchemy.create_engine(two.postgres.uri(TRACKING_DB))
    try:
        with engine.connect() as c:
            most = int(c.execute(sqlalchemy.text("SHOW max_connections")).scalar_one())
    finally:
        engine.dispose()
    assert most == pools.max_connections(2) > 100, most
    running = [p for p in two.processes if p.poll() is None]  # one was stopped above
    assert running
    for proc in running:
        raw = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        env = dict(v.decode().split("=", 1) for v in raw if b"=" in v)
        for key, value in pools.store_environment().items():
            assert env.get(key) == value, (proc.pid, key, env.get(key))
