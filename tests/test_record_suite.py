"""`tools/record_suite.py`: the README's suite timings come from a run's own output.

Its reader is tested on pytest's real summary lines (a failed run among them: never recorded),
and its record replaces the recording of the same command only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import record_suite  # noqa: E402

#: the tail of a real make test run's output (pytest-xdist, quiet), failed and passed
FAILED = """created: 2/2 workers
2 workers [3040 items]
....F
============ 1 failed, 3026 passed, 13 skipped in 651.95s (0:10:51) ============
"""
PASSED = """created: 2/2 workers
2 workers [63 items]
...
================= 63 passed, 3040 deselected in 703.20s (0:11:43) ==================
"""


def test_the_summary_line_gives_the_counts_and_seconds():
    assert record_suite.summary(FAILED) == {
        "passed": 3026,
        "failed": 1,
        "skipped": 13,
        "deselected": 0,
        "pytest_s": 652,
        "workers": 2,
    }
    got = record_suite.summary(PASSED)
    assert (got["passed"], got["failed"], got["deselected"], got["pytest_s"]) == (63, 0, 3040, 703)
    with pytest.raises(ValueError, match="no pytest summary"):
        record_suite.summary("make: *** [Makefile:181: test] Error 2\n")


def test_a_recording_replaces_only_its_own_command(tmp_path):
    path = tmp_path / "make-test.json"
    old = {"command": "make test", "passed": 1}
    soak = {"command": "make test-soak", "passed": 2}
    path.write_text(json.dumps({"recordings": [old, soak]}), encoding="utf-8")
    record_suite.record({"command": "make test", "passed": 3}, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["recordings"] == [{"command": "make test", "passed": 3}, soak]
    assert "record_suite" in doc["source"]


def test_the_machine_names_its_cores():
    assert f"{os.cpu_count()} cores" in record_suite.machine()


def test_the_commit_is_dirty_for_any_change_but_the_record_itself(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    record = tmp_path / "docs" / "results" / "make-test.json"
    record.parent.mkdir(parents=True)
    record.write_text("{}", encoding="utf-8")
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = record_suite.commit(tmp_path)
    assert not head.endswith("-dirty")
    record.write_text('{"recordings": []}', encoding="utf-8")  # make test recorded first
    assert record_suite.commit(tmp_path) == head
    (tmp_path / "a.py").write_text("x = 2\n", encoding="utf-8")  # the control: the code
    assert record_suite.commit(tmp_path) == head + "-dirty"


def test_the_wall_time_says_whether_it_held_the_set_up():
    fresh = "python3 -m venv .venv\n.venv/bin/python -m pip install --quiet --upgrade pip\n"
    cached = "pip's downloads not told apart from its cache"
    assert record_suite.set_up(fresh + PASSED) == (
        f"the set-up of .venv (no Debian package to install; {cached})"
    )
    apt = "installing chromium chromium-driver (Debian packages) for the book's browser test\n"
    assert record_suite.set_up(fresh + apt + PASSED) == (
        f"the set-up of .venv (Debian packages installed; {cached})"
    )
    again = ".venv/bin/ruff check .\n" + PASSED
    assert record_suite.set_up(again) == "no set-up, .venv already there"
