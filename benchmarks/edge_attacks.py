"""The class server under two attacks from another address: idle sockets, a wrong-password flood.

Run (one command; a quiet machine: no test suite, no helper)::

    .venv/bin/python benchmarks/edge_attacks.py docs/results/edge-attacks.json
    .venv/bin/python benchmarks/edge_attacks.py --seconds 5 /tmp/smoke.json   # a smoke run

Starts a class server with the shipped defaults (``ClassServer``: 2 workers, PostgreSQL, the
edge's default limits) in a temporary folder, adds one student, and measures what that student
sees from 127.0.0.1 (one request at a time on a new connection, ``GET experiments/search``, for
``--seconds`` each) while an attacker on 127.0.0.2, in a process of its own, does nothing (the
quiet figure), then holds idle sockets (``--idle``: each a TCP connection that never sends a
byte), then floods with wrong passwords for ``admin`` (``--flood``: threads, each sending
request after request). For each part: the student's requests, how many were answered 200,
their median and 95th percentile, and the attacker's answers by status; the 1-minute load
average and the cores other processes kept busy are read before each part.

The script uses only ``ClassServer`` and ``add_student``, which the class server has had since
before the edge: run from a checkout of an earlier commit (``PYTHONPATH=<that checkout>``) it
measures that commit (issue 39's "before").
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import multiprocessing
import os
import platform
import secrets
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or Path(__file__).parents[1])
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from attention_ref.classroom.connection.accounts import add_student  # noqa: E402
from attention_ref.classroom.hosting.server import ClassServer  # noqa: E402
from attention_ref.experiments.store import git_commit  # noqa: E402

ATTACKER = "127.0.0.2"
SEARCH = "/api/2.0/mlflow/experiments/search?max_results=10"
CLASS = "attacked"


def _token(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def busy_cores(window: float = 0.5) -> float:
    """Cores other processes kept busy over ``window`` seconds (``/proc/stat``), this one asleep."""

    def ticks() -> int:
        v = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:9]]
        return sum(v) - v[3] - v[4]

    first = ticks()
    time.sleep(window)
    return round((ticks() - first) / (os.sysconf("SC_CLK_TCK") * window), 2)


def student(host: str, port: int, auth: tuple[str, str], seconds: float) -> list[tuple[int, float]]:
    """One student's requests from 127.0.0.1, one after another, each on a new connection."""
    out, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(host, port, timeout=60)
            conn.request("GET", SEARCH, headers={"Authorization": _token(*auth)})
            r = conn.getresponse()
            r.read()
            status = r.status
            conn.close()
        except OSError:
            status = 0
        out.append((status, time.perf_counter() - start))
        time.sleep(0.05)
    return out


def flood(host: str, port: int, threads: int, seconds: float, counts: Any) -> None:
    """``threads`` threads of wrong passwords for ``admin`` from 127.0.0.2 for ``seconds``."""
    end = time.monotonic() + seconds
    lock = threading.Lock()

    def one() -> None:
        while time.monotonic() < end:
            try:
                conn = http.client.HTTPConnection(
                    host, port, timeout=30, source_address=(ATTACKER, 0)
                )
                conn.request(
                    "GET",
                    SEARCH,
                    headers={"Authorization": _token("admin", secrets.token_urlsafe(12))},
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


def summary(got: list[tuple[int, float]]) -> dict[str, Any]:
    """The student's requests: how many, answered 200, median and p95 of their time."""
    times = sorted(t for _, t in got)
    ok = sum(1 for st, _ in got if st == 200)
    return {
        "requests": len(got),
        "answered_200": ok,
        "share_200": round(ok / len(got), 3) if got else None,
        "statuses": sorted({st for st, _ in got}),
        "median_ms": round(1000 * statistics.median(times), 1) if times else None,
        "p95_ms": round(1000 * times[int(0.95 * (len(times) - 1))], 1) if times else None,
    }


def measure(
    server: ClassServer, auth: tuple[str, str], seconds: float, idle: list[int], floods: list[int]
) -> list[dict[str, Any]]:
    """The parts: quiet, each idle-socket count, each flood."""
    host = "127.0.0.1"
    port = server.port
    parts: list[dict[str, Any]] = []
    before = {"load_1min": round(os.getloadavg()[0], 2), "busy_cores": busy_cores()}
    parts.append(
        {"attack": "none", "before": before, **summary(student(host, port, auth, seconds))}
    )
    for n in idle:
        before = {"load_1min": round(os.getloadavg()[0], 2), "busy_cores": busy_cores()}
        socks = []
        for _ in range(n):
            sock = socket.socket()
            sock.bind((ATTACKER, 0))
            sock.connect((host, port))
            socks.append(sock)
        try:
            got = student(host, port, auth, seconds)
        finally:
            for sock in socks:
                sock.close()
        parts.append({"attack": f"{n} idle sockets", "before": before, **summary(got)})
        time.sleep(2)
    for threads in floods:
        before = {"load_1min": round(os.getloadavg()[0], 2), "busy_cores": busy_cores()}
        counts = multiprocessing.Manager().dict()
        attacker = multiprocessing.Process(
            target=flood, args=(host, port, threads, seconds + 1, counts)
        )
        attacker.start()
        time.sleep(1)
        got = student(host, port, auth, seconds)
        attacker.join(timeout=120)
        attacked = {str(k): v for k, v in sorted(dict(counts).items())}
        parts.append(
            {
                "attack": f"{threads} threads of wrong passwords",
                "before": before,
                **summary(got),
                "attacker": attacked,
            }
        )
        time.sleep(5)  # the throttle's buckets refill; the workers settle
    return parts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--idle", default="100,200")
    p.add_argument("--flood", default="8,30,64")
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="attnref-attacks-"))
    root.chmod(0o711)
    commit = git_commit(ROOT, short=True)  # "-dirty" when the tree had changes
    try:
        server = ClassServer(
            root / "class", secrets.token_urlsafe(18), port=_free_port(), experiment=CLASS
        )
        with server:
            auth = ("sam", secrets.token_urlsafe(15))
            add_student(server.url, server.admin, *auth, CLASS)
            parts = measure(
                server,
                auth,
                args.seconds,
                [int(x) for x in args.idle.split(",") if x],
                [int(x) for x in args.flood.split(",") if x],
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    record = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "server": "ClassServer defaults (2 workers)",
        "seconds_per_part": args.seconds,
        "command": "python benchmarks/edge_attacks.py " + " ".join(sys.argv[1:]),
        "parts": parts,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for part in parts:
        print(
            f"{part['attack']:36s} {part['answered_200']}/{part['requests']} answered 200, "
            f"median {part['median_ms']} ms, p95 {part['p95_ms']} ms, before {part['before']}"
            + (f", attacker {part['attacker']}" if "attacker" in part else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
