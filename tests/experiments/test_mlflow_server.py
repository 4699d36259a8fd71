"""Integration: a real ``mlflow server`` on 127.0.0.1 serves the runs the experiments logged.

The test trains a tiny run into its own sqlite store, starts ``mlflow server`` on a free port
against that store, finds the run, its metric history and the heatmap artifact over the REST
API, samples from the logged model through the server, then stops the server by its pid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from attention_ref.experiments.runs import run_training
from attention_ref.experiments.store import connect
from cli.main import main
from tests.configs import tiny

pytestmark = pytest.mark.slow

MLFLOW = str(Path(sys.executable).with_name("mlflow"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(base: str, endpoint: str, **query: str) -> bytes:
    url = f"{base}{endpoint}?{urllib.parse.urlencode(query)}"
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def get_json(base: str, endpoint: str, **query: str) -> dict:
    return json.loads(get(base, endpoint, **query))


def post_json(base: str, endpoint: str, body: dict) -> dict:
    req = urllib.request.Request(
        base + endpoint,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


@pytest.fixture
def server(store, tmp_path):
    """``mlflow server`` on a free port over the test's store; stopped by its pid afterwards."""
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [MLFLOW, "server", "--backend-store-uri", store, "--host", "127.0.0.1",
         "--port", str(port), "--workers", "1"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if get(base, "/health").strip() == b"OK":
                break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.close()
            pytest.fail("mlflow server did not start:\n" + (tmp_path / "server.log").read_text())
        time.sleep(0.5)
    yield base, proc.pid
    os.killpg(proc.pid, signal.SIGTERM)  # the server and its workers
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    log.close()


def test_the_server_serves_the_run_its_metrics_and_heatmaps(
    store, shakespeare, tmp_path, server, capsys
):
    cfg = tiny(max_steps=60, eval_interval=30, sample_tokens=20)
    connect(store)
    outcome = run_training(cfg, shakespeare, out_root=tmp_path / "runs", log_system_metrics=False)
    base, pid = server

    exp = get_json(base, "/api/2.0/mlflow/experiments/get-by-name", experiment_name="shakespeare")
    exp_id = exp["experiment"]["experiment_id"]
    found = post_json(base, "/api/2.0/mlflow/runs/search", {"experiment_ids": [exp_id]})
    (run,) = found["runs"]
    assert run["info"]["run_id"] == outcome.run_id and run["info"]["status"] == "FINISHED"

    hist = get_json(
        base, "/api/2.0/mlflow/metrics/get-history", run_id=outcome.run_id, metric_key="val_loss"
    )
    assert sorted((m["step"], m["value"]) for m in hist["metrics"]) == [
        (int(h["step"]), h["val_loss"]) for h in outcome.result.history
    ]
    listing = get_json(
        base, "/api/2.0/mlflow/artifacts/list", run_id=outcome.run_id, path="attention"
    )
    paths = {f["path"] for f in listing["files"]}
    assert "attention/layer0_head0.png" in paths
    png = get(base, "/get-artifact", path="attention/layer0_head0.png", run_uuid=outcome.run_id)
    assert png.startswith(b"\x89PNG") and len(png) > 1000

    # the CLI reads the model back through the server too
    code = main(["sample", "--run-id", outcome.run_id, "--tracking-uri", base, "--tokens", "20"])
    assert code == 0
    assert len(capsys.readouterr().out) == 1 + 20 + 1
    assert pid > 0
