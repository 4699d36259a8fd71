"""``mlflow ui`` and ``mlflow server`` started for a test: on a free port of 127.0.0.1, over the
test's store, waited for until ``/health`` answers OK, stopped with their workers afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from attention_ref.classroom.connection.client import healthy
from tests.ports import free_port

MLFLOW = str(Path(sys.executable).with_name("mlflow"))


@contextmanager
def mlflow_serving(command: str, store: str, log: Path) -> Iterator[tuple[str, int]]:
    """``mlflow COMMAND`` (``ui`` or ``server``, one worker) over ``store``: its base URL and
    process group id while it runs; the test fails with its log when it has not answered
    ``/health`` within 120 s or has exited."""
    port = free_port()
    with log.open("w") as out:
        argv = [MLFLOW, command, "--backend-store-uri", store, "--host", "127.0.0.1"]
        proc = subprocess.Popen(
            [*argv, "--port", str(port), "--workers", "1"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while not healthy(base):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"mlflow {command} did not start:\n" + log.read_text())
                time.sleep(0.5)
            yield base, proc.pid
        finally:
            os.killpg(proc.pid, signal.SIGTERM)  # the server and its workers
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
