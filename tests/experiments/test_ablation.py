"""The ablation, the Q03 report and the export, for real: a sqlite store (a migrated copy).

Tiny configurations that still learn; every assertion reads the run back from the store.
"""

from __future__ import annotations

import json
import math

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from attention_ref.experiments import export, results
from attention_ref.experiments.ablation import run_ablation
from attention_ref.experiments.names import RunStatus, Tag
from attention_ref.experiments.store import TrackingError, connect
from attention_ref.lm.data import bigram_val_loss
from tests.configs import tiny
from tests.experiments.readback import artifact_paths, download

ABLATION = tiny(max_steps=150, eval_interval=50)


@pytest.fixture(scope="module")
def ablation(migrated_store, tmp_path_factory, shakespeare):
    """One tiny ablation (three arms) shared by the tests below."""
    import shutil

    root = tmp_path_factory.mktemp("ablation")
    shutil.copy(migrated_store, root / "mlflow.db")
    mp = pytest.MonkeyPatch()
    mp.chdir(root)
    uri = f"sqlite:///{root / 'mlflow.db'}"
    mp.setenv("MLFLOW_TRACKING_URI", uri)
    connect(uri)
    outcome = run_ablation(ABLATION, shakespeare, out_root=root / "runs", log_system_metrics=False)
    yield outcome, uri
    mp.undo()


@pytest.fixture
def ablation_store(ablation):
    outcome, uri = ablation
    mlflow.set_tracking_uri(uri)
    return outcome


def test_ablation_nests_one_run_per_arm_under_a_parent(ablation_store, shakespeare):
    o = ablation_store
    assert o.status == RunStatus.FINISHED and [r.attention for r in o.rows] == [
        "multihead",
        "none",
        "uniform",
    ]
    client = MlflowClient()
    parent = client.get_run(o.parent_run_id)
    assert parent.data.tags[Tag.KIND] == "ablation"
    for row in o.rows:
        child = client.get_run(row.run_id)
        assert child.data.tags["mlflow.parentRunId"] == o.parent_run_id
        assert child.data.params["seed"] == str(ABLATION.seed)
        assert child.data.params["max_steps"] == str(ABLATION.max_steps)
        assert child.data.tags["attention"] == row.attention
    assert math.isclose(o.bigram_floor, bigram_val_loss(shakespeare))
    assert parent.data.metrics["none_best_val_loss"] == o.rows[1].best_val_loss


def test_ablation_logs_the_comparison_to_the_parent(ablation_store, tmp_path):
    o = ablation_store
    assert {"comparison.md", "comparison.json", "plots"} <= artifact_paths(o.parent_run_id)
    doc = json.loads(download(o.parent_run_id, "comparison.json", tmp_path).read_text())
    assert [r["attention"] for r in doc["rows"]] == ["multihead", "none", "uniform"]
    assert [r["best_val_loss"] for r in doc["rows"]] == [r.best_val_loss for r in o.rows]
    md = download(o.parent_run_id, "comparison.md", tmp_path).read_text()
    assert f"{o.rows[0].best_val_loss:.4f}" in md and f"{o.bigram_floor:.4f}" in md
    png = download(o.parent_run_id, "plots/loss_curves.png", tmp_path).read_bytes()
    assert png.startswith(b"\x89PNG")


def test_without_attention_the_model_cannot_beat_the_bigram_floor(ablation_store):
    rows = {r.attention: r for r in ablation_store.rows}
    floor = ablation_store.bigram_floor
    # even a short run without attention sits above the floor (fixed-batch noise: 0.03)
    assert rows["none"].best_val_loss > floor - 0.03
    assert rows["multihead"].n_params > rows["uniform"].n_params > rows["none"].n_params


def test_report_is_built_from_the_runs(ablation_store, shakespeare):
    text = results.q03_report("shakespeare", shakespeare)
    o = ablation_store
    assert f"ablation run `{o.parent_run_id}`" in text
    for r in o.rows:
        assert f"| {r.attention} | {r.n_params:,} | {r.best_val_loss:.4f} |" in text
        assert r.run_id in text
    assert f"**bigram floor** {o.bigram_floor:.3f}" in text
    none = o.rows[1]
    assert f"{none.best_val_loss - o.bigram_floor:+.3f} nats from the floor" in text


def test_export_writes_what_the_book_shows(ablation_store, shakespeare, tmp_path):
    written = export.export_results("shakespeare", shakespeare, tmp_path / "results")
    names = {p.relative_to(tmp_path / "results").as_posix() for p in written}
    assert {"q03-report.md", "comparison.json", "loss_curves.png"} <= names
    assert {"samples/multihead.txt", "samples/none.txt", "samples/uniform.txt"} <= names
    assert {"attention/layer0_head0.png", "attention/weights.json"} <= names
    doc = json.loads((tmp_path / "results" / "comparison.json").read_text())
    assert doc["parent_run_id"] == ablation_store.parent_run_id
    assert doc["params"]["max_steps"] == str(ABLATION.max_steps)
    assert [r["best_val_loss"] for r in doc["rows"]] == [
        r.best_val_loss for r in ablation_store.rows
    ]
    assert doc["curves"]["none"]["val_loss"][-1][0] == ABLATION.max_steps
    report = (tmp_path / "results" / "q03-report.md").read_text()
    assert report == results.q03_report("shakespeare", shakespeare)


def test_report_without_runs_says_what_to_do(store, shakespeare):
    connect()
    with pytest.raises(TrackingError, match="run `attnref ablation` first"):
        results.q03_report("shakespeare", shakespeare)
    with pytest.raises(TrackingError, match="no experiment 'other'"):
        results.q03_report("other", shakespeare)
