"""Run ``make test`` (or ``make test-soak``) and record what it took, for the README's table.

    python3 tools/record_suite.py test        # then: python3 tools/record_suite.py test-soak

The target runs as a contributor runs it (in this checkout, its output into
``build/record-TARGET.log``), after the machine's 1-minute load is read. Its pytest summary
line gives the counts and pytest's own seconds; the wall time is the whole ``make`` run, the
set-up included where there was one to do. A run that fails is not recorded (exit code
make's). The recording replaces the one of the same command in ``docs/results/make-test.json``
(``tools/readme_measured.py`` writes the README's rows from it). Stdlib only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "docs" / "results" / "make-test.json"
#: pytest's last line: ``== 3026 passed, 13 skipped, 63 deselected in 651.95s (0:10:51) ==``
SUMMARY = re.compile(r"^=+ (?P<counts>.+?) in (?P<seconds>[\d.]+)s\b.*=+$", re.M)
WORKERS = re.compile(r"^created: (\d+)/\d+ workers$", re.M)


def summary(log: str) -> dict[str, Any]:
    """The counts and seconds of the last pytest summary line of ``log``, and its workers;
    ``ValueError`` when there is none."""
    found = list(SUMMARY.finditer(log))
    if not found:
        raise ValueError("no pytest summary line in the output")
    last = found[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last.group("counts"))}
    workers = WORKERS.findall(log)
    return {
        "passed": counts.get("passed", 0),
        "failed": counts.get("failed", 0) + counts.get("errors", 0) + counts.get("error", 0),
        "skipped": counts.get("skipped", 0),
        "deselected": counts.get("deselected", 0),
        "pytest_s": round(float(last.group("seconds"))),
        "workers": int(workers[-1]) if workers else 1,
    }


#: what make echoes when it sets ``.venv`` up (the recipe of ``$(BIN)/python``)
SET_UP = re.compile(r"^\S*python3? -m venv ", re.M)
#: what make echoes before it installs Debian packages (the Makefile's ``apt_get_install``)
APT = re.compile(r"^installing .+ \(Debian packages\) for ", re.M)


def set_up(log: str) -> str:
    """What the wall time holds besides the tests, read from make's own echo in ``log``: the
    set-up of ``.venv`` or none; with it, whether make installed Debian packages (it echoes
    each install) and that pip's downloads are not told apart from its cache (pip runs
    quiet)."""
    if not SET_UP.search(log):
        return "no set-up, .venv already there"
    apt = "Debian packages installed" if APT.search(log) else "no Debian package to install"
    return f"the set-up of .venv ({apt}; pip's downloads not told apart from its cache)"


def machine() -> str:
    """The system, its cores and its processor, as a row of the README names a machine."""
    system = platform.system()
    release = Path("/etc/os-release")
    if release.is_file():
        m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', release.read_text(encoding="utf-8"), re.M)
        system = m.group(1) if m else system
    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.is_file():
        m = re.search(r"^model name\s*:\s*(.+)$", info.read_text(encoding="utf-8"), re.M)
        cpu = m.group(1).strip() if m else cpu
    return f"{system}, {os.cpu_count()} cores, {cpu}"


def commit(root: Path = ROOT) -> str:
    """``HEAD``'s short hash, ``-dirty`` where tracked files differ from it (this record
    itself apart: recording ``make test`` first changes it before ``make test-soak``)."""
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    changed = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            f":!{RECORD.relative_to(ROOT)}",  # the same path in any checkout
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return head + ("-dirty" if changed else "")


def record(entry: dict[str, Any], path: Path = RECORD) -> None:
    """``entry`` in place of the recording of the same command (the others kept)."""
    doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    kept = [r for r in doc.get("recordings", []) if r.get("command") != entry["command"]]
    doc["source"] = "tools/record_suite.py, from the output of each run"
    doc["recordings"] = sorted([*kept, entry], key=lambda r: r["command"])
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the target, record it when it passed; make's exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=("test", "test-soak"))
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    log_path = ROOT / "build" / f"record-{args.target}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log_path.open("w", encoding="utf-8") as log:
        done = subprocess.run(["make", args.target], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    wall = round(time.monotonic() - started)
    text = log_path.read_text(encoding="utf-8")
    try:
        counts = summary(text)
    except ValueError as e:
        print(f"record_suite: {e} (see {log_path})", file=sys.stderr)
        return done.returncode or 1
    if done.returncode != 0 or counts["failed"]:
        print(
            f"record_suite: make {args.target} failed (exit {done.returncode}, "
            f"{counts['failed']} failed): nothing recorded; see {log_path}",
            file=sys.stderr,
        )
        return done.returncode or 1
    entry = {
        "command": f"make {args.target}",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "machine": machine(),
        "load_before_1min": round(load, 2),
        "passed": counts["passed"],
        "skipped": counts["skipped"],
        "pytest_s": counts["pytest_s"],
        "workers": counts["workers"],
        "wall_s": wall,
        "wall_includes": set_up(text),
    }
    record(entry)
    print(json.dumps(entry, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
