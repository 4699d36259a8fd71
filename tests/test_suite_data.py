"""The suite finds Tiny Shakespeare as a contributor's machine has it, and never downloads it.

conftest's `shakespeare_path`: ``$ATTNREF_DATA`` (the Makefile sets it where ../shared has a
copy), else the user cache; else the session's tests that need the data fail with one message
that says how to get it once (``make data``). Run here as a contributor runs it: pytest in a
subprocess, on one test that needs the data, with ``$ATTNREF_DATA`` unset and the cache in
``tmp_path``; ``$ATTNREF_DATA_URL`` points at a real server that counts the requests: none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from attention_ref.lm import data as D
from tests.data_server import DataServer

ROOT = Path(__file__).resolve().parents[1]
ONE_TEST = "tests/lm/test_data.py::test_the_data_set_facts"


def pytest_once(cache: Path, url: str) -> subprocess.CompletedProcess[str]:
    """pytest on `ONE_TEST` with no ``$ATTNREF_DATA`` (nor the xdist worker's variables),
    the user cache ``cache``, downloads pointed at ``url``."""
    drop = {D.ENV_VAR, "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_ADDOPTS"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env |= {"XDG_CACHE_HOME": str(cache), D.URL_VAR: url, "no_proxy": "*"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", ONE_TEST],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_suite_reads_the_user_cache_and_never_downloads(tmp_path, shakespeare_path):
    cache = tmp_path / "xdg"
    with DataServer(shakespeare_path.read_bytes()) as server:
        url = f"{server.url}/input.txt"
        empty = pytest_once(cache, url)
        assert empty.returncode == 1, empty.stdout  # failed, not downloaded
        cached = cache / "attnref" / "tinyshakespeare.txt"
        said = (
            "the tests need Tiny Shakespeare and never download it: Tiny Shakespeare is not in "
            f"the cache; pass a local copy with --data PATH or $ATTNREF_DATA, or put the file at "
            f"{cached}. `make data` downloads it once into the cache"
        )
        assert said in " ".join(empty.stdout.split())
        assert "Traceback" not in empty.stdout and not cached.exists()
        cached.parent.mkdir(parents=True)
        shutil.copy(shakespeare_path, cached)  # as `make data` leaves it
        found = pytest_once(cache, url)
        assert found.returncode == 0, found.stdout
        assert "1 passed" in found.stdout
        assert server.hits == []  # neither run asked the server for anything
