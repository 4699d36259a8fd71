"""A class behind one NAT address under the two login attacks of issue 57: what its students see.

Run (one command; a quiet machine: no test suite, no helper)::

    .venv/bin/python benchmarks/login_lockout.py docs/results/login-lockout.json
    .venv/bin/python benchmarks/login_lockout.py --quick /tmp/login-lockout.json  # a smoke run

Starts a class server with the shipped defaults (``ClassServer``: 2 workers, PostgreSQL) and
``students_per_address`` 30 (``attnref server start --students-per-address 30``) in a temporary
folder, with 30 students (drawn passwords, as ``attnref server add-students`` draws them) and 5
newcomers per attack. Every request comes from one address, 127.0.5.5 (a loopback address the
edge limits as any other: the NAT): each student sends ``GET experiments/search`` on a new
connection, one a second. Three parts of ``--seconds`` each: quiet; an attacker (a process of
its own, 3 threads, about 20 a second) sending made-up usernames; an attacker sending about 8
wrong passwords a second for student s00's name. In each attack the newcomers send their first
request during it. For each part: each student's median and worst time and statuses, the share
of requests answered within 2x the quiet median (the issue's target: all), the newcomers'
first answers, the attacker's answers by status; the load is read before each part.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _bench import ROOT, LoadLog

from attention_ref.classroom.connection.accounts import add_student, generated_password
from attention_ref.classroom.hosting.edge_config import EdgeLimits
from attention_ref.classroom.hosting.server import ClassServer
from attention_ref.experiments.store import git_commit

NAT = "127.0.5.5"
SEARCH = "/api/2.0/mlflow/experiments/search?max_results=10"
CLASS = "nat"
STUDENTS = 30
NEWCOMERS = 5


#: the attacks: (part's name, attack, the newcomers' prefix)
ATTACKS = (("made-up names", "made-up", "new"), ("wrong passwords for s00", "wrong", "late"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(port: int, user: str, password: str) -> tuple[int, float]:
    """One request from the NAT's address on a new connection: (status, seconds)."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    start = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(NAT, 0))
        conn.request("GET", SEARCH, headers={"Authorization": "Basic " + token})
        response = conn.getresponse()
        response.read()
        status = response.status
        conn.close()
    except OSError:
        status = 0
    return status, time.perf_counter() - start


def attack(port: int, kind: str, victim: str, seconds: float, counts: Any) -> None:
    """``made-up``: 3 threads, ~20 made-up usernames a second in all; ``wrong``: ~8 wrong
    passwords a second for ``victim``. Each thread paces itself; answers counted by status."""
    threads, rate = (3, 20.0) if kind == "made-up" else (1, 8.0)
    end, lock = time.monotonic() + seconds, threading.Lock()

    def one() -> None:
        while time.monotonic() < end:
            start = time.monotonic()
            user = secrets.token_hex(6) if kind == "made-up" else victim
            status, _ = get(port, user, secrets.token_urlsafe(12))
            with lock:
                counts[status] = counts.get(status, 0) + 1
            time.sleep(max(0.0, threads / rate - (time.monotonic() - start)))

    pool = [threading.Thread(target=one) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


def students(port: int, accounts: dict[str, str], seconds: float) -> dict[str, list]:
    """Each student's requests, one a second, for ``seconds`` (a thread each, staggered)."""
    got: dict[str, list[tuple[int, float]]] = {name: [] for name in accounts}

    def one(i: int, name: str, password: str) -> None:
        time.sleep(i * 1.0 / len(accounts))
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            got[name].append(get(port, name, password))
            time.sleep(1.0)

    pool = [threading.Thread(target=one, args=(i, *kv)) for i, kv in enumerate(accounts.items())]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return got


def summary(got: dict[str, list[tuple[int, float]]], quiet_median: float) -> dict[str, Any]:
    """Per student: requests, statuses, median and worst (ms), share within 2x quiet median."""
    each = {}
    for name, answers in got.items():
        times = [t for _, t in answers]
        statuses: dict[str, int] = {}
        for st, _ in answers:
            statuses[str(st)] = statuses.get(str(st), 0) + 1
        within = sum(1 for st, t in answers if st == 200 and t <= 2 * quiet_median)
        each[name] = {
            "requests": len(answers),
            "statuses": statuses,
            "median_ms": round(1000 * statistics.median(times), 1) if times else None,
            "worst_ms": round(1000 * max(times), 1) if times else None,
            "within_2x_quiet_median": round(within / len(answers), 3) if answers else None,
        }
    all_times = [t for answers in got.values() for _, t in answers]
    return {
        "students": len(got),
        "requests": len(all_times),
        "refused_429": sum(s["statuses"].get("429", 0) for s in each.values()),
        "median_ms": round(1000 * statistics.median(all_times), 1) if all_times else None,
        "worst_ms": round(1000 * max(all_times), 1) if all_times else None,
        "students_all_within_2x": sum(1 for s in each.values() if s["within_2x_quiet_median"] == 1),
        "each": each,
    }


def part(
    name: str, loads: LoadLog, run: Callable[[], dict[str, list]], attacker: tuple | None
) -> tuple[dict[str, list], dict[str, int]]:
    """One part: the load before, the attacker's process (if any) started first, the students."""
    loads.before(name)
    counts = multiprocessing.Manager().dict()
    proc = None
    if attacker is not None:
        proc = multiprocessing.Process(target=attack, args=(*attacker, counts))
        proc.start()
        time.sleep(1.0)  # the attack under way before the students' first request
    got = run()
    if proc is not None:
        proc.join(timeout=120)
    return got, {str(k): v for k, v in sorted(dict(counts).items())}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--seconds", type=float, default=120.0, help="each part (default 120)")
    p.add_argument("--quick", action="store_true", help="3 s parts, 5 students: a smoke run")
    args = p.parse_args()
    seconds = 3.0 if args.quick else args.seconds
    n = 5 if args.quick else STUDENTS
    root = Path(tempfile.mkdtemp(prefix="attnref-lockout-"))
    root.chmod(0o711)
    commit = git_commit(ROOT, short=True)
    loads = LoadLog()
    parts: dict[str, Any] = {}
    try:
        limits = EdgeLimits(students_per_address=STUDENTS)
        admin = secrets.token_urlsafe(18)
        server = ClassServer(
            root / "class", admin, port=free_port(), experiment=CLASS, limits=limits
        )
        with server:
            names = [f"s{i:02d}" for i in range(n)] + [
                f"{who}{i}" for who in ("new", "late") for i in range(NEWCOMERS)
            ]
            accounts = {name: generated_password() for name in names}
            for name, password in accounts.items():
                add_student(server.url, server.admin, name, password, CLASS)
            regulars = {k: v for k, v in accounts.items() if k.startswith("s")}
            port = server.port
            got, _ = part("quiet", loads, lambda: students(port, regulars, seconds), None)
            quiet = statistics.median(t for answers in got.values() for _, t in answers)
            parts["quiet"] = summary(got, quiet)
            for key, kind, group in ATTACKS:
                new = {k: v for k, v in accounts.items() if k.startswith(group)}
                attacker_args = (port, kind, "s00", seconds + 2)
                got, attacker = part(
                    key, loads, lambda c=regulars | new: students(port, c, seconds), attacker_args
                )
                parts[key] = summary(got, quiet) | {
                    "newcomers_first": {k: got[k][0][0] for k in got if k.startswith(group)},
                    "attacker": attacker,
                }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    record = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "server": "ClassServer defaults (2 workers), students_per_address 30",
        # the machine, as upload_memory.py records it (the first recordings kept none)
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "address": NAT,
        "seconds_per_part": seconds,
        "quiet_median_ms": round(1000 * quiet, 1),
        "target": "every student's requests answered within 2x the quiet median",
        "command": "python benchmarks/login_lockout.py " + " ".join(sys.argv[1:]),
        "load": loads.summary(),
        "parts": parts,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    brief = {k: {x: v[x] for x in v if x != "each"} for k, v in parts.items()}
    print(json.dumps({"quiet_median_ms": record["quiet_median_ms"], "parts": brief}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
