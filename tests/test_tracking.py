"""MLflow tracking, for real: a sqlite store in ``tmp_path`` (copied from a migrated template).

Tiny configurations that still learn; every assertion reads the run back from the store.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mlflow
import pytest
import torch
from mlflow.tracking import MlflowClient

from attention_ref import tracking
from attention_ref.data import SHA256, URL, bigram_val_loss
from attention_ref.train import TrainConfig, load_checkpoint

TINY = TrainConfig(
    n_embd=32, n_layer=1, n_head=2, block_size=32, batch_size=16, max_steps=120,
    eval_interval=60, eval_batches=4, sample_tokens=40, warmup_steps=10, lr=1e-2, min_lr=1e-3,
    seed=7, device="cpu",
)  # fmt: skip


def tiny(**change) -> TrainConfig:
    return TrainConfig(**{**TINY.to_dict(), **change})


def history(run_id: str, key: str) -> list[tuple[int, float]]:
    return tracking.metric_curve(MlflowClient(), run_id, key)


def artifact_paths(run_id: str, path: str | None = None) -> set[str]:
    return {f.path for f in MlflowClient().list_artifacts(run_id, path)}


def download(run_id: str, path: str, dst: Path) -> Path:
    return Path(
        mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path, dst_path=str(dst))
    )


@pytest.fixture
def run(store, shakespeare, tmp_path):
    """One finished multihead run (system metrics sampled every 0.5 s so a short run has some)."""
    tracking.connect()
    old = tracking.SYSTEM_METRICS_INTERVAL_S
    tracking.SYSTEM_METRICS_INTERVAL_S = 0.5
    try:
        outcome = tracking.run_training(TINY, shakespeare, out_root=tmp_path / "runs")
    finally:
        tracking.SYSTEM_METRICS_INTERVAL_S = old
    return outcome


def test_a_run_logs_config_derived_figures_and_provenance(run, shakespeare):
    assert run.status == "FINISHED"
    r = MlflowClient().get_run(run.run_id)
    params = r.data.params
    for key, value in TINY.to_dict().items():
        assert params[key] == str(value)
    assert int(params["n_params"]) == run.result.n_params == 17_952
    assert params["tokens_per_step"] == str(16 * 32) and params["d_k"] == "16"
    tags = r.data.tags
    assert tags["attention"] == "multihead" and tags["device"] == "cpu"
    assert tags["data_sha256"] == SHA256 and tags["torch_version"] == torch.__version__
    assert tags["git_commit"] and tags[tracking.KIND_TAG] == "train"
    (ds,) = r.inputs.dataset_inputs
    assert ds.dataset.name == "tinyshakespeare" and URL in ds.dataset.source
    assert ds.tags[0].value == "training"
    assert r.info.experiment_id == mlflow.get_experiment_by_name("shakespeare").experiment_id


def test_step_metrics_have_every_step_and_evaluations_their_steps(run):
    train_loss = history(run.run_id, "train_loss")
    assert [s for s, _ in train_loss] == list(range(1, TINY.max_steps + 1))
    for key in ("lr", "grad_norm", "tokens_per_sec"):
        assert len(history(run.run_id, key)) == TINY.max_steps
    val = history(run.run_id, "val_loss")
    assert [s for s, _ in val] == [60, 120]
    assert [v for _, v in val] == [h["val_loss"] for h in run.result.history]
    best = history(run.run_id, "best_val_loss")
    assert best[-1][1] == min(v for _, v in val) == run.result.best_val_loss
    assert val[-1][1] < 3.35 - 0.5  # it really learned: well under the unigram level
    metrics = MlflowClient().get_run(run.run_id).data.metrics
    assert any(k.startswith("system/cpu") for k in metrics), sorted(metrics)


def test_artifacts_config_samples_checkpoints_curves(run, tmp_path):
    top = artifact_paths(run.run_id)
    assert {"config.json", "samples", "checkpoints", "model", "plots", "attention"} <= top
    config = json.loads(download(run.run_id, "config.json", tmp_path / "a").read_text())
    assert TrainConfig.from_dict(config) == TINY
    assert artifact_paths(run.run_id, "samples") == {
        "samples/step_000060.txt",
        "samples/step_000120.txt",
    }
    assert artifact_paths(run.run_id, "checkpoints") == {
        "checkpoints/best.pt",
        "checkpoints/last.pt",
    }
    png = download(run.run_id, "plots/loss_curves.png", tmp_path / "b").read_bytes()
    assert png.startswith(b"\x89PNG")


def test_the_logged_model_is_the_best_checkpoint(run, tmp_path):
    model, cfg, chars = tracking.load_model(run.run_id)
    local, _, _ = load_checkpoint(run.out_dir / "best.pt")
    assert cfg == TINY and len(chars) == 65
    idx = torch.tensor([[chars.index(c) for c in "ROMEO:\nBut soft"]])
    assert torch.equal(model(idx)[0], local(idx)[0])


def test_attention_maps_are_causal_rows_that_sum_to_one(run, tmp_path):
    files = artifact_paths(run.run_id, "attention")
    assert {"attention/layer0_head0.png", "attention/layer0_head1.png"} <= files
    doc = json.loads(download(run.run_id, "attention/weights.json", tmp_path).read_text())
    assert doc["line"] == tracking.HEATMAP_LINE[: TINY.block_size]
    A = torch.tensor(doc["layers"])  # (layers, heads, T, T)
    T = len(doc["line"])
    assert A.shape == (1, 2, T, T)
    assert torch.allclose(A.sum(-1), torch.ones(1, 2, T))
    assert torch.all(A.triu(1) == 0)  # the causal mask: no weight on a later character
    assert torch.all(A[..., 0, 0] == 1)  # the first row is (1, 0, 0, ...)


def test_no_attention_run_has_fewer_parameters_and_no_maps(store, shakespeare, tmp_path):
    tracking.connect()
    o = tracking.run_training(
        tiny(attention="none"), shakespeare, out_root=tmp_path, log_system_metrics=False
    )
    assert o.status == "FINISHED"
    assert "attention" not in artifact_paths(o.run_id)
    assert int(MlflowClient().get_run(o.run_id).data.params["n_params"]) < 17_952


def test_nan_loss_marks_the_run_failed_with_the_step(store, shakespeare, tmp_path):
    tracking.connect()
    o = tracking.run_training(
        tiny(lr=1e30, min_lr=0.0), shakespeare, out_root=tmp_path, log_system_metrics=False
    )
    assert o.status == "FAILED" and o.failed_at_step is not None
    r = MlflowClient().get_run(o.run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags["failed_at_step"] == str(o.failed_at_step)
    assert f"at step {o.failed_at_step}" in (o.error or "")
    assert len(history(o.run_id, "train_loss")) == o.failed_at_step - 1  # the finite ones


def test_killed_run_resumes_to_the_uninterrupted_curve(store, shakespeare, tmp_path):
    tracking.connect()
    full = tracking.run_training(
        TINY, shakespeare, out_root=tmp_path / "a", log_system_metrics=False
    )
    calls = {"n": 0}

    def stop_after_45() -> bool:
        calls["n"] += 1
        return calls["n"] >= 45

    cut = tracking.run_training(
        TINY,
        shakespeare,
        out_root=tmp_path / "b",
        should_stop=stop_after_45,
        log_system_metrics=False,
    )
    assert cut.status == "KILLED" and cut.result.steps_done == 45
    assert MlflowClient().get_run(cut.run_id).info.status == "KILLED"
    assert artifact_paths(cut.run_id, "checkpoints") == {"checkpoints/last.pt"}
    # resume from the store alone: the local checkpoint directory is gone
    resumed = tracking.run_training(
        None, shakespeare, out_root=tmp_path / "c", resume_run_id=cut.run_id,
        log_system_metrics=False,
    )  # fmt: skip
    assert resumed.run_id == cut.run_id and resumed.status == "FINISHED"
    assert resumed.resumed_from_step == 45
    for key in ("train_loss", "val_loss", "lr", "grad_norm"):
        assert history(cut.run_id, key) == history(full.run_id, key), key
    r = MlflowClient().get_run(cut.run_id)
    assert r.info.status == "FINISHED" and r.data.tags["resumed_at_step"] == "45"
    with pytest.raises(tracking.TrackingError, match="already finished"):
        tracking.run_training(None, shakespeare, out_root=tmp_path, resume_run_id=cut.run_id)


def test_resume_of_an_unknown_run_says_so(store, shakespeare, tmp_path):
    tracking.connect()
    with pytest.raises(tracking.TrackingError, match="no run 'f00'"):
        tracking.run_training(None, shakespeare, out_root=tmp_path, resume_run_id="f00")


def test_unreachable_server_is_one_clear_error():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connection refused
        with pytest.raises(
            tracking.TrackingError,
            match=f"cannot reach the MLflow server at http://127.0.0.1:{port}",
        ):
            tracking.connect(f"http://127.0.0.1:{port}")


# ------------------------------------------------------------------------- ablation, report

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
    tracking.connect(uri)
    outcome = tracking.run_ablation(
        ABLATION, shakespeare, out_root=root / "runs", log_system_metrics=False
    )
    yield outcome, uri
    mp.undo()


@pytest.fixture
def ablation_store(ablation):
    outcome, uri = ablation
    mlflow.set_tracking_uri(uri)
    return outcome


def test_ablation_nests_one_run_per_arm_under_a_parent(ablation_store, shakespeare):
    o = ablation_store
    assert o.status == "FINISHED" and [r.attention for r in o.rows] == [
        "multihead",
        "none",
        "uniform",
    ]
    client = MlflowClient()
    parent = client.get_run(o.parent_run_id)
    assert parent.data.tags[tracking.KIND_TAG] == "ablation"
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
    text = tracking.build_report("shakespeare", shakespeare)
    o = ablation_store
    assert f"ablation run `{o.parent_run_id}`" in text
    for r in o.rows:
        assert f"| {r.attention} | {r.n_params:,} | {r.best_val_loss:.4f} |" in text
        assert r.run_id in text
    assert f"**bigram floor** {o.bigram_floor:.3f}" in text
    none = o.rows[1]
    assert f"{none.best_val_loss - o.bigram_floor:+.3f} nats from the floor" in text


def test_export_writes_what_the_book_shows(ablation_store, shakespeare, tmp_path):
    written = tracking.export_results("shakespeare", shakespeare, tmp_path / "results")
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
    assert report == tracking.build_report("shakespeare", shakespeare)


def test_report_without_runs_says_what_to_do(store, shakespeare):
    tracking.connect()
    with pytest.raises(tracking.TrackingError, match="run `attnref ablation` first"):
        tracking.build_report("shakespeare", shakespeare)
    with pytest.raises(tracking.TrackingError, match="no experiment 'other'"):
        tracking.build_report("other", shakespeare)


def test_plateau_step():
    assert tracking.plateau_step([(1, 3.0), (2, 2.6), (3, 2.51), (4, 2.5)]) == 3
    assert tracking.plateau_step([(1, 3.0), (2, 2.0)]) == 2
