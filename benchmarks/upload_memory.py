"""An application server's memory under large uploads (issue 57, finding 3): idle, peak, after.

Run (one command; a quiet machine: no test suite, no helper)::

    .venv/bin/python benchmarks/upload_memory.py docs/results/upload-memory.json
    .venv/bin/python benchmarks/upload_memory.py --quick /tmp/smoke.json   # a smoke run

Starts a class server with the shipped defaults (``ClassServer``: 2 application servers,
PostgreSQL, the edge's default limits) in a temporary folder, adds one student, who makes a
run in the class experiment, and reads each application server's memory (its uvicorn worker's
``VmRSS``) idle. Then, from 127.0.0.2 (a student's address, limited like any other), each part
sends ``--at-once`` ``POST /ajax-api/2.0/mlflow/upload-artifact?run_uuid=<her run>&run_id=<same>``
at once, each on a connection of its own, and reads each worker's peak (``VmHWM``, started
again just before the part by ``/proc/PID/clear_refs``) and its ``VmRSS`` after
(``--settle`` seconds later):

* the largest body the edge lets through on that route (``EdgeLimits.max_upload_artifact_bytes``;
  ``--largest`` on a commit without it);
* ``--over`` MiB (300: the issue's attack), which the edge refuses (413) where it bounds the
  route.

Each part says the answers by status, the seconds the slowest took, and per worker the peak
and after in MiB, and their growth over idle; the 1-minute load average and the cores other
processes kept busy are read before each part. The script uses only ``ClassServer``,
``add_student`` and ``rest``, which the class server had before: run from a checkout of an
earlier commit (``PYTHONPATH=<that checkout>``) it measures that commit (issue 57's "before").
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import platform
import re
import secrets
import shutil
import socket
import sys
import tempfile
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or Path(__file__).parents[1])
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from attention_ref.classroom.connection.accounts import add_student  # noqa: E402
from attention_ref.classroom.connection.client import rest  # noqa: E402
from attention_ref.classroom.hosting.edge_config import EdgeLimits  # noqa: E402
from attention_ref.classroom.hosting.server import ClassServer  # noqa: E402
from attention_ref.experiments.store import git_commit  # noqa: E402

MIB = 1 << 20
STUDENT_ADDRESS = "127.0.0.2"
CLASS = "uploads"


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


def workers(server: ClassServer) -> dict[int, int]:
    """``application server's pid -> its worker's pid``: the process of its group (each
    ``mlflow server`` leads a group of its own) that runs uvicorn, else the server itself."""
    found = {}
    for app in server.processes:
        found[app.pid] = app.pid
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[2]) == app.pid and b"uvicorn" in cmd:
                found[app.pid] = int(entry)
    return found


def memory_mib(pid: int) -> dict[str, float]:
    """A process's ``VmRSS`` and ``VmHWM`` (its peak) in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    kib = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M))
    return {k: round(int(v) / 1024, 1) for k, v in kib.items()}


def upload(
    host: str, port: int, auth: tuple[str, str], run_id: str, body: bytes
) -> tuple[int, float]:
    """One ``upload-artifact`` POST from `STUDENT_ADDRESS` on a connection of its own:
    (status, seconds); status 0 when the edge closed the connection unanswered."""
    query = urllib.parse.urlencode({"run_uuid": run_id, "run_id": run_id, "path": "big.bin"})
    token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    start = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=300, source_address=(STUDENT_ADDRESS, 0))
    try:
        conn.request(
            "POST",
            f"/ajax-api/2.0/mlflow/upload-artifact?{query}",
            body=body,
            headers={"Authorization": f"Basic {token}", "Content-Type": "application/octet-stream"},
        )
        response = conn.getresponse()
        response.read()
        return response.status, time.perf_counter() - start
    except (ConnectionError, http.client.HTTPException):
        return 0, time.perf_counter() - start
    finally:
        conn.close()


def part(
    server: ClassServer, auth: tuple[str, str], run_id: str, size: int, at_once: int, settle: float
) -> dict[str, Any]:
    """``at_once`` uploads of ``size`` bytes at once: their answers, each worker's peak and
    after."""
    before = {"load_1min": round(os.getloadavg()[0], 2), "busy_cores": busy_cores()}
    pids = workers(server)
    idle = {pid: memory_mib(pid)["VmRSS"] for pid in pids.values()}
    for pid in pids.values():
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak starts again here
    body = os.urandom(size)

    def one(_: int) -> tuple[int, float]:
        return upload("127.0.0.1", server.port, auth, run_id, body)

    with ThreadPoolExecutor(at_once) as pool:
        got = list(pool.map(one, range(at_once)))
    time.sleep(settle)
    statuses: dict[str, int] = {}
    for status, _ in got:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    apps = []
    for pid in pids.values():
        now = memory_mib(pid)
        apps.append(
            {
                "idle_mib": idle[pid],
                "peak_mib": now["VmHWM"],
                "after_mib": now["VmRSS"],
                "peak_over_idle_mib": round(now["VmHWM"] - idle[pid], 1),
                "after_over_idle_mib": round(now["VmRSS"] - idle[pid], 1),
            }
        )
    return {
        "body_mib": round(size / MIB, 2),
        "at_once": at_once,
        "before": before,
        "answers": statuses,
        "slowest_s": round(max(s for _, s in got), 2),
        "application_servers": apps,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--at-once", type=int, default=3)
    limits = EdgeLimits()
    largest = getattr(limits, "max_upload_artifact_bytes", 10 * MIB)
    p.add_argument("--largest", type=int, default=largest, help="bytes (default: the edge's)")
    p.add_argument("--over", type=int, default=300, help="MiB")
    p.add_argument("--settle", type=float, default=5)
    p.add_argument("--quick", action="store_true", help="a smoke run: 1 server, --over 40")
    args = p.parse_args()
    if args.quick:
        args.over, args.settle = min(args.over, 40), min(args.settle, 1)
    root = Path(tempfile.mkdtemp(prefix="attnref-uploads-"))
    root.chmod(0o711)
    commit = git_commit(ROOT, short=True)  # "-dirty" when the tree had changes
    extra = {"workers": 1} if args.quick else {}
    try:
        server = ClassServer(
            root / "class", secrets.token_urlsafe(18), port=_free_port(), experiment=CLASS, **extra
        )
        with server:
            auth = ("sam", secrets.token_urlsafe(15))
            add_student(server.url, server.admin, *auth, CLASS)
            exp = rest(
                server.url,
                "/api/2.0/mlflow/experiments/get-by-name",
                auth=auth,
                query={"experiment_name": CLASS},
            )[1]["experiment"]["experiment_id"]
            made = rest(
                server.url, "/api/2.0/mlflow/runs/create", {"experiment_id": exp}, auth=auth
            )
            run_id = made[1]["run"]["info"]["run_id"]
            parts = [
                part(server, auth, run_id, size, args.at_once, args.settle)
                for size in (args.largest, args.over * MIB)
            ]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    record = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "server": "ClassServer defaults" + (" but 1 application server (--quick)" if extra else ""),
        "command": "python benchmarks/upload_memory.py " + " ".join(sys.argv[1:]),
        "parts": parts,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for one in parts:
        worst = max(one["application_servers"], key=lambda a: a["peak_over_idle_mib"])
        print(
            f"{one['at_once']} x {one['body_mib']} MiB: answers {one['answers']}, slowest "
            f"{one['slowest_s']} s; worker idle {worst['idle_mib']} MiB, peak "
            f"{worst['peak_mib']} (+{worst['peak_over_idle_mib']}), after {worst['after_mib']} "
            f"(+{worst['after_over_idle_mib']}); before {one['before']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
