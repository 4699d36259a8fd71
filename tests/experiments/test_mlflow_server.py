"""Integration: a real ``mlflow server`` on 127.0.0.1 serves the runs the experiments logged.

The test trains a tiny run into its own sqlite store, starts ``mlflow server`` on a free port
against that store, finds the run, its metric history and the heatmap artifact over the REST
API, samples from the logged model through the server, opens the experiment in the MLflow UI
(headless Chromium) at the link attnref prints, then stops the server by its pid.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request

import pytest

from attention_ref.cli.main import main
from attention_ref.experiments.names import UI_RUNS_QUERY, ui_experiment_url
from attention_ref.experiments.runs import run_training
from attention_ref.experiments.store import connect
from tests.configs import tiny
from tests.mlflow_serving import mlflow_serving

pytestmark = [pytest.mark.slow, pytest.mark.soak]


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
    with mlflow_serving("server", store, tmp_path / "server.log") as (base, pid):
        yield base, pid


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
    assert "attention/layer1_head1.png" in paths
    png = get(base, "/get-artifact", path="attention/layer1_head1.png", run_uuid=outcome.run_id)
    assert png.startswith(b"\x89PNG") and len(png) > 1000

    # the CLI reads the model back through the server too
    code = main(["sample", "--run-id", outcome.run_id, "--tracking-uri", base, "--tokens", "20"])
    assert code == 0
    text = capsys.readouterr().out
    assert len(text) == 1 + 20 + 1
    # the LoggedModel, over REST and through the server
    model_id = outcome.model_uri.removeprefix("models:/")
    model = get_json(base, f"/api/2.0/mlflow/logged-models/{model_id}")["model"]
    assert model["info"]["source_run_id"] == outcome.run_id and model["info"]["name"] == "char-gpt"
    code = main(["sample", "--model", outcome.model_uri, "--tracking-uri", base, "--tokens", "20"])
    assert code == 0 and capsys.readouterr().out == text
    assert pid > 0


def test_the_ui_opens_the_experiment_on_its_runs(store, shakespeare, tmp_path, server):
    """The link attnref prints opens the runs ("Model training"), not the GenAI overview that
    MLflow 3.17 shows by default; the experiment carries the kind the UI reads."""
    from tests.book.browser import make_driver

    cfg = tiny(max_steps=10, eval_interval=10, sample_tokens=10)
    connect(store)
    outcome = run_training(cfg, shakespeare, out_root=tmp_path / "runs", log_system_metrics=False)
    base, _ = server
    exp = get_json(base, "/api/2.0/mlflow/experiments/get-by-name", experiment_name="shakespeare")
    tags = {t["key"]: t["value"] for t in exp["experiment"]["tags"]}
    assert tags["mlflow.experimentKind"] == "custom_model_development"
    exp_id = exp["experiment"]["experiment_id"]
    driver = make_driver()
    try:

        def title(url: str, expected: str) -> str:
            """The page's title once it starts with ``expected`` (the app renders in steps),
            or whatever it is after 60 s."""
            driver.get(url)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not driver.title.startswith(expected):
                time.sleep(0.5)
            return driver.title

        # the control: without the query the UI opens the GenAI overview (traces)
        assert title(f"{base}/#/experiments/{exp_id}", "Overview - ").startswith("Overview - ")
        assert (
            title(ui_experiment_url(base, exp_id), "Runs - ")
            == f"Runs - Experiment {exp_id} - MLflow"
        )
        deadline = time.monotonic() + 30
        while "q02-multihead" not in driver.page_source and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "q02-multihead" in driver.page_source
        model_id = outcome.model_uri.removeprefix("models:/")
        page = f"{base}/#/experiments/{exp_id}/models/{model_id}?{UI_RUNS_QUERY}"
        assert title(page, "Model ") == f"Model {model_id} - MLflow"
    finally:
        driver.quit()
