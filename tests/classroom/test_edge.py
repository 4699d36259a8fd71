"""The edge (nginx) in front of the class server, over real HTTP, attacked from another address.

Issue 39's findings 1 and 2 on 4104091 (uvicorn alone on the class's port): 200 sockets that
never send a byte, from another address, made every student request a 503 for as long as
they were held; 60 threads of wrong passwords made every student request a 503 and got a
worker SIGKILLed. Here the attacker is 127.0.0.2 and the student 127.0.0.1, on one machine;
each attack is bounded in time.
"""

from __future__ import annotations

import base64
import http.client
import multiprocessing
import secrets
import shutil
import socket
import statistics
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.connection.patience import Patience, patiently
from attention_ref.classroom.hosting.edge_config import EdgeLimits, render
from attention_ref.classroom.hosting.server import ClassServer
from tests.classroom.conftest import EXPERIMENT, class_dir, free_port

CLASS = "edge"
ATTACKER = "127.0.0.2"
SEARCH = "/api/2.0/mlflow/experiments/search?max_results=10"


# --- the configuration, pure ------------------------------------------------------------------


def test_the_configuration_says_each_limit_and_a_nat_multiplies_the_per_address_ones():
    apps = [Path("/c/app/mlflow-0.sock"), Path("/c/app/mlflow-1.sock")]
    one = render(
        listen="127.0.0.1:5000",
        apps=apps,
        limits=EdgeLimits(),
        directory=Path("/c/edge"),
        access_log=Path("/c/logs/a.log"),
    )
    assert "listen 127.0.0.1:5000;" in one and "ssl" not in one
    assert "client_header_timeout 10s;" in one and "client_body_timeout 30s;" in one
    assert "limit_conn per_address 16;" in one and "rate=20r/s" in one
    assert "burst=200 delay=50;" in one and "client_max_body_size 4m;" in one
    assert "127.0.0.1 0;" in one  # the server's own machine: not limited per address
    assert "server unix:/c/app/mlflow-1.sock max_conns=24 max_fails=0;" in one  # 24 a server
    assert "hash $remote_user consistent;" in one  # an account's requests to one server
    # full: come back in 2 s; not answering (restarting): in 10 s
    assert "application 2;" in one and "default 10;" in one
    assert "add_header Retry-After 2 always;" in one and "\nuser " not in one
    nat = render(
        listen="0.0.0.0:5000",
        apps=[("10.0.0.7", 5001)],
        limits=EdgeLimits(students_per_address=30),
        directory=Path("/c/edge"),
        access_log=Path("/c/logs/a.log"),
        tls=(Path("/c/tls/cert.pem"), Path("/c/tls/key.pem")),
        user="www-data",
    )
    assert "limit_conn per_address 480;" in nat and "rate=600r/s" in nat
    assert "burst=6000 delay=1500;" in nat and "server 10.0.0.7:5001 max_conns=24 " in nat
    assert "hash " not in nat  # one server: nothing to choose
    assert "listen 0.0.0.0:5000 ssl;" in nat and "ssl_certificate /c/tls/cert.pem;" in nat
    assert nat.startswith("# the class server's edge") and "user www-data;" in nat


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_limit_that_is_not_a_positive_integer_is_refused(bad):
    with pytest.raises(ValueError, match="positive integer"):
        EdgeLimits(connections=bad)


# --- the edge under attack, over real HTTP ----------------------------------------------------


@pytest.fixture(scope="module")
def edge_class(server) -> tuple[ClassServer, tuple[str, str]]:
    """The package's class server (its edge with the default limits) and a student of its own."""
    student = ("sam", secrets.token_urlsafe(15))
    add_student(server.url, server.admin, *student, EXPERIMENT)
    return server, student


def _token(auth: tuple[str, str]) -> str:
    return "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()


def _timed_get(url: str, auth: tuple[str, str], path: str = SEARCH) -> tuple[int, float]:
    """One request from 127.0.0.1, on a connection of its own: (status, seconds)."""
    netloc = urllib.parse.urlsplit(url).netloc
    start = time.perf_counter()
    conn = http.client.HTTPConnection(netloc, timeout=60)
    try:
        conn.request("GET", path, headers={"Authorization": _token(auth)})
        r = conn.getresponse()
        r.read()
        return r.status, time.perf_counter() - start
    finally:
        conn.close()


def _student_requests(url: str, auth: tuple[str, str], seconds: float) -> list[tuple[int, float]]:
    """A student's requests, one after another, for ``seconds``."""
    out, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        out.append(_timed_get(url, auth))
        time.sleep(0.05)
    return out


@pytest.mark.slow
def test_idle_sockets_from_another_address_do_not_take_the_class_down(edge_class):
    """200 connections from 127.0.0.2 that never send a byte, held 8 s: every request of a
    student from 127.0.0.1 in that time is answered 200 (finding 1: on 4104091, all 503)."""
    s, student = edge_class
    host, port = urllib.parse.urlsplit(s.url).hostname, urllib.parse.urlsplit(s.url).port
    idle = []
    try:
        for _ in range(200):
            sock = socket.socket()
            sock.bind((ATTACKER, 0))
            sock.connect((host, port))
            idle.append(sock)
        got = _student_requests(s.url, student, 8)
    finally:
        for sock in idle:
            sock.close()
    statuses = [st for st, _ in got]
    assert len(statuses) >= 20 and set(statuses) == {200}, statuses


def _flood(url: str, seconds: float, threads: int, counts: dict[int, int]) -> None:
    """``threads`` threads of wrong passwords for ``admin``, from 127.0.0.2, for ``seconds``
    (in a process of its own: the student's timings are not the flood's GIL's)."""
    netloc = urllib.parse.urlsplit(url)
    end = time.monotonic() + seconds
    lock = threading.Lock()

    def one() -> None:
        while time.monotonic() < end:
            try:
                conn = http.client.HTTPConnection(
                    netloc.hostname, netloc.port, timeout=30, source_address=(ATTACKER, 0)
                )
                conn.request(
                    "GET",
                    SEARCH,
                    headers={"Authorization": _token(("admin", secrets.token_urlsafe(12)))},
                )
                status = conn.getresponse().status
                conn.close()
            except OSError:
                status = 0
            with lock:
                counts[status] = counts.get(status, 0) + 1

    pool = [threading.Thread(target=one) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


@pytest.mark.slow
def test_a_flood_of_wrong_passwords_costs_the_attacker_not_the_class(edge_class):
    """64 threads of wrong passwords for ``admin`` from 127.0.0.2 for 10 s: every request of a
    student from 127.0.0.1 is answered 200 (finding 2: on 4104091, all 503 at 60 threads),
    and the flood is refused before its passwords are checked (429, at the edge or the gate)."""
    s, student = edge_class
    quiet = _student_requests(s.url, student, 3)
    manager = multiprocessing.Manager()
    counts = manager.dict()
    flood = multiprocessing.Process(target=_flood, args=(s.url, 10, 64, counts))
    flood.start()
    try:
        time.sleep(1)
        loud = _student_requests(s.url, student, 8)
    finally:
        flood.join(timeout=60)
    statuses = [st for st, _ in loud]
    assert len(statuses) >= 20 and set(statuses) == {200}, statuses
    refused = dict(counts)
    assert refused.get(429, 0) > 10 * refused.get(401, 0) > 0, refused  # few hashes, many 429
    quiet_median = statistics.median(t for _, t in quiet)
    loud_median = statistics.median(t for _, t in loud)
    # recorded on the class-gate page by benchmarks/edge_attacks.py; bounded loosely here
    assert loud_median < max(5 * quiet_median, 0.5), (quiet_median, loud_median)


@pytest.mark.slow
def test_a_full_application_says_come_back_and_patient_clients_all_get_through():
    """The edge passes one request at a time to a one-worker application: of 24 requests sent
    at once, some are told 503 with Retry-After at once (none waits out a timeout), and every
    patient client gets its answer."""
    root = class_dir("attnref-admit-")
    s = ClassServer(
        root / "class",
        secrets.token_urlsafe(18),
        port=free_port(),
        workers=1,
        experiment=CLASS,
        limits=EdgeLimits(in_flight=1, connections=64),
    )
    try:
        with s:
            statuses: list[int] = []
            answered: list[int] = []
            retry_after: list[str | None] = []
            q = {"max_results": "1000"}

            def raw() -> None:
                conn = http.client.HTTPConnection(urllib.parse.urlsplit(s.url).netloc, timeout=60)
                conn.request(
                    "GET",
                    "/api/2.0/mlflow/experiments/search?max_results=1000",
                    headers={"Authorization": _token(s.admin)},
                )
                r = conn.getresponse()
                r.read()
                statuses.append(r.status)
                retry_after.append(r.getheader("Retry-After"))
                conn.close()

            def patient() -> None:
                quick = Patience(first_pause_s=0.05, max_pause_s=0.5, give_up_after_s=120)
                got = patiently(
                    lambda: rest(
                        s.url, "/api/2.0/mlflow/experiments/search", auth=s.admin, query=q
                    ),
                    quick,
                )
                answered.append(got[0])

            threads = [threading.Thread(target=raw) for _ in range(24)]
            threads += [threading.Thread(target=patient) for _ in range(12)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=180)
            assert 503 in statuses and 200 in statuses, statuses
            assert set(statuses) <= {200, 503}
            assert all(
                h and h.isdigit() for st, h in zip(statuses, retry_after, strict=True) if st == 503
            )
            assert answered == [200] * 12
            # the control: one request alone is taken on
            assert (
                rest(s.url, "/api/2.0/mlflow/experiments/search", auth=s.admin, query=q)[0] == 200
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
