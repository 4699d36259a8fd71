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
from attention_ref.experiments import sweep as sweeps
from attention_ref.experiments.ablation import run_sweep
from attention_ref.experiments.names import Metric, RunStatus, Tag
from attention_ref.experiments.store import TrackingError, connect
from attention_ref.experiments.sweep import ablation_sweep
from attention_ref.lm.data import bigram_val_loss
from tests.configs import tiny
from tests.experiments.readback import artifact_paths, download
from tests.experiments.stores import module_store

ABLATION = tiny(max_steps=150, eval_interval=50)


@pytest.fixture(scope="module")
def ablation(migrated_store, tmp_path_factory, shakespeare):
    """One tiny ablation (three arms) shared by the tests below."""
    root = tmp_path_factory.mktemp("ablation")
    with module_store(migrated_store, root) as (uri, _):
        started: list[tuple[str, str]] = []
        outcome = run_sweep(
            ablation_sweep(ABLATION),
            shakespeare,
            out_root=root / "runs",
            log_system_metrics=False,
            on_run_start=lambda arm, run_id: started.append((arm, run_id)),
        )
        assert started == [("", outcome.parent_run_id)] + [
            (r.attention, r.run_id) for r in outcome.rows
        ]
        yield outcome, uri


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
    assert parent.data.tags[Tag.KIND] == "ablation" and parent.info.run_name == "ablation"
    assert "Sample an arm" in parent.data.tags[Tag.NOTE]
    assert f"--run-id {o.parent_run_id} --arm" in parent.data.tags[Tag.NOTE]
    experiment = client.get_experiment(parent.info.experiment_id)
    assert experiment.tags[Tag.EXPERIMENT_KIND] == "custom_model_development"
    for row in o.rows:
        child = client.get_run(row.run_id)
        assert child.info.run_name == f"ablation/{row.attention}"
        assert (
            f"Part of `ablation` run `{o.parent_run_id}` (arm `{row.attention}`)"
            in (child.data.tags[Tag.NOTE])
        )
        assert child.data.tags["mlflow.parentRunId"] == o.parent_run_id
        assert child.data.params["seed"] == str(ABLATION.seed)
        assert child.data.params["max_steps"] == str(ABLATION.max_steps)
        assert child.data.tags["attention"] == row.attention
    assert math.isclose(o.bigram_floor, bigram_val_loss(shakespeare))
    assert parent.data.metrics["none_best_val_loss"] == o.rows[1].best_val_loss


def test_the_parent_logs_each_arm_s_metrics_under_the_arm_s_own_names(ablation_store):
    o = ablation_store
    client = MlflowClient()
    parent = client.get_run(o.parent_run_id).data.metrics
    for row in o.rows:
        arm = client.get_run(row.run_id).data.metrics
        for key in (
            Metric.FINAL_TRAIN_EVAL_LOSS,
            Metric.FINAL_VAL_LOSS,
            Metric.BEST_VAL_LOSS,
            Metric.MEAN_TOKENS_PER_SEC,
            Metric.WALL_TIME_S,
        ):
            assert parent[f"{row.attention}_{key}"] == arm[key], key
    assert "multihead_final_train_loss" not in parent  # the old, inconsistent name


def test_a_parent_run_names_its_arms_instead_of_a_model(ablation_store):
    o = ablation_store
    with pytest.raises(TrackingError, match="parent of an ablation and has no model") as e:
        results.resolve_run(o.parent_run_id)
    for row in o.rows:
        assert f"{row.attention} ({row.run_id}, FINISHED)" in str(e.value)
        assert results.resolve_run(o.parent_run_id, row.attention) == row.run_id
    with pytest.raises(TrackingError, match="has no arm 'sparse'; its arms: multihead"):
        results.resolve_run(o.parent_run_id, "sparse")
    with pytest.raises(TrackingError, match="not an ablation or a sweep; leave out --arm"):
        results.resolve_run(o.rows[0].run_id, "none")
    assert results.resolve_run(o.rows[1].run_id) == o.rows[1].run_id
    listed = results.list_runs("shakespeare")
    by_id = {r.run_id: r for r in listed}
    assert by_id[o.parent_run_id].attention == "multihead,none,uniform"
    assert by_id[o.parent_run_id].steps == "" and by_id[o.parent_run_id].is_parent
    assert by_id[o.rows[0].run_id].steps == f"{ABLATION.max_steps}/{ABLATION.max_steps}"
    assert by_id[o.rows[0].run_id].best_val_loss == o.rows[0].best_val_loss


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
        assert r.precision in ("fp32", "bf16")  # the run's own, read from its tag
        assert f"| {r.attention} | {r.precision} | {r.n_params:,} | {r.best_val_loss:.4f} |" in text
        assert r.run_id in text
    assert f"**bigram baseline** {o.bigram_floor:.3f}" in text  # the words: test_report.py


def test_export_writes_what_the_book_shows(ablation_store, shakespeare, tmp_path):
    written = export.export_results("shakespeare", shakespeare, tmp_path / "results")
    names = {p.relative_to(tmp_path / "results").as_posix() for p in written}
    assert {"q03-report.md", "comparison.json", "loss_curves.png"} <= names
    assert {"samples/multihead.txt", "samples/none.txt", "samples/uniform.txt"} <= names
    assert {"attention/layer1_head1.png", "attention/weights.json"} <= names
    # the attention explorer's files: the multihead arm's logged model (tests/experiments/
    # test_explorer.py checks what they hold)
    assert {"explorer/weights.bin", "explorer/model.json", "explorer/lines.json"} <= names
    multihead = next(r for r in ablation_store.rows if r.attention == "multihead")
    manifest = json.loads((tmp_path / "results" / "explorer" / "model.json").read_text())
    assert f"MLflow run {multihead.run_id} " in manifest["model"]["source"]
    assert manifest["model"]["n_params"] == multihead.n_params
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


# ----------------------------------------------------------------------------- heads sweep

SWEEP = tiny(max_steps=60, eval_interval=30)


@pytest.fixture(scope="module")
def heads_sweep(migrated_store, tmp_path_factory, shakespeare):
    """A tiny heads sweep, h = 1 and 2 (n_embd 32), in a store of its own."""
    root = tmp_path_factory.mktemp("heads")
    with module_store(migrated_store, root) as (uri, _):
        outcome = run_sweep(
            sweeps.heads_sweep(SWEEP.with_options(attention="none"), (1, 2)),
            shakespeare,
            out_root=root / "runs",
            log_system_metrics=False,
        )
        yield outcome, uri


def test_heads_sweep_trains_the_multihead_model_with_each_number_of_heads(heads_sweep, tmp_path):
    o, uri = heads_sweep
    mlflow.set_tracking_uri(uri)
    client = MlflowClient()
    assert o.status == RunStatus.FINISHED and [r.attention for r in o.rows] == ["1", "2"]
    assert [int(r.config["n_embd"]) // int(r.attention) for r in o.rows] == [32, 16]
    assert o.rows[0].n_params == o.rows[1].n_params  # d_k = n_embd / h: the same weights
    parent = client.get_run(o.parent_run_id)
    assert parent.data.tags[Tag.KIND] == "heads_sweep" and parent.info.run_name == "heads"
    assert parent.data.params["heads"] == "1,2" and "n_head" not in parent.data.params
    for r in o.rows:
        child = client.get_run(r.run_id)
        assert child.info.run_name == f"heads/{r.attention}"
        assert child.data.params["n_head"] == r.attention
        assert child.data.params["attention"] == "multihead"  # whatever cfg said
        assert child.data.params["seed"] == str(SWEEP.seed)
        assert child.data.tags[Tag.PARENT_RUN_ID] == o.parent_run_id
        assert parent.data.metrics[f"h{r.attention}_best_val_loss"] == r.best_val_loss
    md = download(o.parent_run_id, "comparison.md", tmp_path).read_text()
    first = o.rows[0]
    assert f"| 1 | 32 | {first.precision} | {first.n_params:,} | {first.best_val_loss:.4f} |" in md
    png = download(o.parent_run_id, "plots/loss_curves.png", tmp_path).read_bytes()
    assert png.startswith(b"\x89PNG")


def test_heads_sweep_is_read_back_for_the_report(heads_sweep):
    o, uri = heads_sweep
    mlflow.set_tracking_uri(uri)
    parent = results.latest_heads_sweep("shakespeare")
    assert parent is not None and parent.info.run_id == o.parent_run_id
    back = results.heads_rows(parent)
    assert [(r.attention, r.run_id, r.n_params, r.best_val_loss) for r in back] == [
        (r.attention, r.run_id, r.n_params, r.best_val_loss) for r in o.rows
    ]
    text = results.heads_sweep_report("shakespeare")
    assert text is not None and f"Heads sweep run `{o.parent_run_id}`" in text
    assert f"Every arm has {o.rows[0].n_params:,} parameters" in text
    assert results.resolve_run(o.parent_run_id, "2") == o.rows[1].run_id
    (listed,) = [r for r in results.list_runs("shakespeare") if r.is_parent]
    assert listed.attention == "heads 1,2"


def test_heads_sweep_refuses_bad_numbers_before_any_run(store, shakespeare):
    connect()
    with pytest.raises(ValueError, match="not divisible by --n-head 3"):
        sweeps.heads_sweep(SWEEP, (1, 3))
    with pytest.raises(ValueError, match="distinct numbers of heads"):
        sweeps.heads_sweep(SWEEP, (2, 2))
    assert mlflow.search_runs(search_all_experiments=True, output_format="list") == []
    assert results.heads_sweep_report("shakespeare") is None
