"""``make demo`` runs to the end on a fresh clone with no ../shared beside it and Tiny
Shakespeare in the user cache, as on a user's machine: its own .venv installed from nothing,
the worked example, the ablation (quick, through ``DEMO_OPTS``), the report.

It tests what is committed: ``git clone`` takes the repository's HEAD, not the working tree,
so a change is seen here once it is committed. The clone lies in ``tmp_path/x/attnref``, where
nothing is beside it; ``$ATTNREF_DATA`` is unset, the cache (``$XDG_CACHE_HOME``) holds a copy
of the data, and a download would go to conftest's closed port (``$ATTNREF_DATA_URL``) and fail
the demo. Setting up the clone's .venv (torch's CPU wheel and the package's dependencies, which
pip finds through its configuration) takes most of the time: the whole test took 2 min 34 s on
2 shared cores (the quick ablation about 20 s of it).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attention_ref.lm import data as D

pytestmark = [pytest.mark.slow, pytest.mark.soak]

ROOT = Path(__file__).resolve().parents[1]
#: the ablation's options for a demo of a minute: `make demo`'s DEMO_OPTS
DEMO_OPTS = "--quick --max-steps 20 --eval-interval 10 --eval-batches 2"
#: what a clone must not inherit from the suite's run: the data's path, this checkout's venv,
#: its store, and the make that may have started pytest (its flags and jobserver)
NOT_INHERITED = {
    D.ENV_VAR,
    "VIRTUAL_ENV",
    "MLFLOW_TRACKING_URI",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "MAKEOVERRIDES",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
}


def a_users_environment(cache: Path) -> dict[str, str]:
    """This process's environment less `NOT_INHERITED`, the user cache ``cache``, and a PATH
    without this checkout's .venv (``python3`` is the machine's)."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env["XDG_CACHE_HOME"] = str(cache)
    return env


def test_make_demo_runs_to_the_end_on_a_clone_with_the_data_in_the_user_cache(
    tmp_path, shakespeare_path
):
    clone = tmp_path / "x" / "attnref"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    assert sorted(p.name for p in clone.parent.parent.iterdir()) == ["x"]  # no ../shared
    cache = tmp_path / "cache"
    cached = cache / "attnref" / "tinyshakespeare.txt"
    cached.parent.mkdir(parents=True)
    shutil.copy(shakespeare_path, cached)
    before = cached.stat().st_mtime_ns
    t0 = time.perf_counter()
    demo = subprocess.run(
        ["make", "demo", f"DEMO_OPTS={DEMO_OPTS}"],
        cwd=clone,
        env=a_users_environment(cache),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    took = time.perf_counter() - t0
    tail = f"make demo: exit {demo.returncode} after {took:.0f} s\n{demo.stdout[-3000:]}\n"
    assert demo.returncode == 0, tail + demo.stderr[-3000:]
    assert "Q03, answered from the runs: q03-report.md" in demo.stdout, tail  # the last step
    assert "downloading Tiny Shakespeare" not in demo.stdout  # read from the cache
    assert cached.stat().st_mtime_ns == before and not list(cache.rglob(".download-*"))
    report = (clone / "q03-report.md").read_text(encoding="utf-8")
    assert report.startswith("# Q03: the same model without attention, measured")
    assert "number of steps (20)" in report  # DEMO_OPTS reached the ablation
    with sqlite3.connect(f"file:{clone / 'mlflow.db'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT name, status FROM runs").fetchall()
    arms = ("ablation", "ablation/multihead", "ablation/none", "ablation/uniform")
    assert sorted(rows) == [(name, "FINISHED") for name in arms]  # the parent and its 3 arms
