"""Another's thing and no thing: does the class server take the same time to say so?

Run (one command; a quiet machine)::

    .venv/bin/python benchmarks/hidden_timing.py docs/results/hidden-timing.json
    .venv/bin/python benchmarks/hidden_timing.py --reps 20 /tmp/smoke.json   # a smoke run

Starts a class server with the shipped defaults, makes an experiment and a run in it that the
student may not read (the teacher's), and asks, as the student, for that run and for a run
that does not exist, on the routes that name a run or an experiment by name (``runs/get``,
``get-artifact``, ``artifacts/presigned-download-url``, ``experiments/get-by-name``),
interleaved, ``--reps`` times each, each on a new connection. Both must get the same answer;
the record is each one's median time and the difference of the medians, with the spread of the
absent one's times (its interquartile range) beside it: a difference within that spread is
noise. The 1-minute load and the busy cores are read before the timed part.

Like ``edge_attacks.py``, it uses only what the class server has had since before the edge
(``ClassServer``, ``add_student``, ``rest``): ``PYTHONPATH=<an older checkout>`` measures that
checkout.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import platform
import secrets
import shutil
import socket
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or Path(__file__).parents[1])
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from attention_ref.classroom.connection.accounts import add_student  # noqa: E402
from attention_ref.classroom.connection.client import rest  # noqa: E402
from attention_ref.classroom.hosting.server import ClassServer  # noqa: E402
from attention_ref.experiments.store import git_commit  # noqa: E402

CLASS = "timing"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _busy_cores(window: float = 0.5) -> float:
    def ticks() -> int:
        v = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:9]]
        return sum(v) - v[3] - v[4]

    first = ticks()
    time.sleep(window)
    return round((ticks() - first) / (os.sysconf("SC_CLK_TCK") * window), 2)


def _ask(
    url: str, who: tuple[str, str], method: str, path: str, body: dict | None
) -> tuple[int, bytes, float]:
    netloc = urllib.parse.urlsplit(url).netloc
    token = base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode()
    headers = {"Authorization": f"Basic {token}"}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    start = time.perf_counter()
    conn = http.client.HTTPConnection(netloc, timeout=60)
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    answer = r.read()
    took = time.perf_counter() - start
    conn.close()
    return r.status, answer, took


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--reps", type=int, default=200)
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="attnref-timing-"))
    root.chmod(0o711)
    commit = git_commit(ROOT, short=True)  # "-dirty" when the tree had changes
    rows = []
    try:
        server = ClassServer(
            root / "class", secrets.token_urlsafe(18), port=_free_port(), experiment=CLASS
        )
        with server:
            student = ("sam", secrets.token_urlsafe(15))
            add_student(server.url, server.admin, *student, CLASS)
            made = rest(
                server.url,
                "/api/2.0/mlflow/experiments/create",
                {"name": "private"},
                auth=server.admin,
            )[1]
            run = rest(
                server.url,
                "/api/2.0/mlflow/runs/create",
                {"experiment_id": made["experiment_id"]},
                auth=server.admin,
            )[1]
            hidden, absent = run["run"]["info"]["run_id"], "f" * 32
            routes = {
                "runs/get": lambda r: ("GET", f"/api/2.0/mlflow/runs/get?run_id={r}", None),
                "get-artifact": lambda r: ("GET", f"/get-artifact?run_id={r}&path=x", None),
                "presigned-download-url": lambda r: (
                    "POST",
                    "/api/2.0/mlflow/artifacts/presigned-download-url",
                    {"run_id": r, "path": "x"},
                ),
                "experiments/get-by-name": lambda r: (
                    "GET",
                    "/api/2.0/mlflow/experiments/get-by-name?experiment_name="
                    + ("private" if r == hidden else "nothing-here"),
                    None,
                ),
            }
            load, busy = round(os.getloadavg()[0], 2), _busy_cores()
            for name, make in routes.items():
                times: dict[str, list[float]] = {"another's": [], "none": []}
                answers: dict[str, set[tuple[int, bytes]]] = {"another's": set(), "none": set()}
                for _ in range(3):  # warm: caches, connections to the database
                    _ask(server.url, student, *make(hidden))
                    _ask(server.url, student, *make(absent))
                for i in range(args.reps):
                    order = [("another's", hidden), ("none", absent)]
                    for which, run_id in order if i % 2 else order[::-1]:
                        status, answer, took = _ask(server.url, student, *make(run_id))
                        times[which].append(took)
                        answers[which].add((status, answer))
                med = {k: 1000 * statistics.median(v) for k, v in times.items()}
                q = statistics.quantiles(times["none"], n=4)
                rows.append(
                    {
                        "route": name,
                        "same_answer": answers["another's"] == answers["none"]
                        and len(answers["none"]) == 1,
                        "answer": sorted({a[0] for a in answers["none"]}),
                        "median_ms_anothers": round(med["another's"], 2),
                        "median_ms_none": round(med["none"], 2),
                        "difference_ms": round(med["another's"] - med["none"], 2),
                        "iqr_ms_none": round(1000 * (q[2] - q[0]), 2),
                    }
                )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    record = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "reps": args.reps,
        "load_1min_before": load,
        "busy_cores_before": busy,
        "command": "python benchmarks/hidden_timing.py " + " ".join(sys.argv[1:]),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for r in rows:
        print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
