"""The recorded class: 30 students doing homework at once on a fresh class server.

Starts a class server (PostgreSQL + ``mlflow server`` with the class's gate) in a temporary
folder, runs `attnref_book.simulated.simulate.run_class` on it (30 accounts, the
assignment, every student submitting concurrently, the due time moved, the late ones, the teacher's
grading, the counts), stops the server, and writes the record as JSON (the book's "Teaching
with attnref" page reads ``docs/results/class-homework.json``). The salt is fixed, so the
variants, hence the plan, are the same at every recording.

    python tools/record_class.py docs/results/class-homework.json
    python tools/record_class.py --students 1000 docs/results/class-load-1000.json

``--students N`` records a class of N (the 30, then ``s031``…: the rest answer right), all
submitting at once in the last minute: what was stored and lost, every client's word against
the server's state, and how long one ``homework submit`` took (p50, p95).
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import shlex
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from attention_ref.classroom.connection.patience import PATIENCE  # noqa: E402
from attention_ref.classroom.hosting.server import ClassServer  # noqa: E402
from attention_ref.experiments.store import git_commit  # noqa: E402
from attnref_book.simulated.class_plan import class_of  # noqa: E402
from attnref_book.simulated.simulate import run_class  # noqa: E402

#: the recorded class's salt: the same variants at every recording
SALT = "5eed0f0a77e47104"
#: `attnref server start`'s default: two application servers (one a core here)
APPLICATION_SERVERS = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command_line(argv: list[str]) -> str:
    """The command that makes a recording, as the record keeps it (``conditions.command``):
    this script's path from the repository and its arguments, e.g. ``python
    tools/record_class.py --students 300 docs/results/class-submit-300.json``."""
    script = Path(argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return shlex.join(["python", str(shown), *argv[1:]])


def main(out: Path, students: int = 30, command: str | None = None) -> int:
    """Record the class into ``out`` (``command``: the command line that asked for it, kept
    in the record); exit code 1 when the gradebook and the checker differ, or anything was
    lost."""
    # as root, PostgreSQL runs as `postgres`: it must enter the folder, and the socket's path
    # must stay short
    root = Path(tempfile.mkdtemp(prefix="attnref-record-"))
    root.chmod(0o711)
    load_before = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    try:
        server = ClassServer(
            root / "class", secrets.token_urlsafe(18), port=free_port(), workers=APPLICATION_SERVERS
        )
        with server:
            t0 = time.monotonic()
            record = run_class(
                server.url,
                server.admin,
                salt=SALT,
                artifacts=server.artifacts,
                students=class_of(students),
            )
            total = time.monotonic() - t0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    doc = record.to_json()
    commit = git_commit(ROOT, short=True)  # "-dirty" when the tree had changes
    doc["conditions"] = {
        "command": command or command_line([__file__, "--students", str(students), str(out)]),
        "started": started,
        "ended": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_1min_before": round(load_before, 2),
        "total_s": round(total, 1),
        "application_servers": APPLICATION_SERVERS,
        "patience_s": PATIENCE.give_up_after_s,
        "patience_tries": PATIENCE.tries,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    said = {k: doc[k] for k in ("counts", "timings", "mismatches", "errors")}
    print(json.dumps(said, indent=1))
    lost = doc["counts"]["stored"] != doc["counts"]["finished_runs_on_the_server"]
    contradicted = doc["counts"]["told_failed_but_finished"]
    return 1 if doc["mismatches"] or doc["errors"] or lost or contradicted else 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--students", type=int, default=30)
    args = parser.parse_args()
    sys.exit(main(args.out, args.students, command_line(sys.argv)))
