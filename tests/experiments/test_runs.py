"""One tracked run, for real: a sqlite store in ``tmp_path`` (copied from a migrated template).

Tiny configurations that still learn; every assertion reads the run back from the store.
"""

from __future__ import annotations

import json
import re

import mlflow
import pytest
import torch
from mlflow.tracking import MlflowClient

from attention_ref.experiments import results, runs
from attention_ref.experiments.names import RunStatus, Tag
from attention_ref.experiments.store import TrackingError, connect
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import SHA256, URL
from tests.configs import TINY, tiny
from tests.experiments.readback import artifact_paths, download, history


@pytest.fixture
def run(store, shakespeare, tmp_path):
    """One finished multihead run (system metrics sampled every 0.5 s so a short run has some)."""
    connect()
    old = runs.SYSTEM_METRICS_INTERVAL_S
    runs.SYSTEM_METRICS_INTERVAL_S = 0.5
    try:
        outcome = runs.run_training(TINY, shakespeare, out_root=tmp_path / "runs")
    finally:
        runs.SYSTEM_METRICS_INTERVAL_S = old
    return outcome


def test_a_run_logs_config_derived_figures_and_provenance(run, shakespeare):
    assert run.status == "FINISHED"
    r = MlflowClient().get_run(run.run_id)
    params = r.data.params
    for key, value in TINY.to_flat().items():
        assert params[key] == str(value)
    assert int(params["n_params"]) == run.result.n_params == 17_952
    assert params["tokens_per_step"] == str(16 * 32) and params["d_k"] == "16"
    tags = r.data.tags
    assert tags["attention"] == "multihead" and tags["device"] == "cpu"
    assert tags["data_sha256"] == SHA256 and tags["torch_version"] == torch.__version__
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", tags["git_commit"]), tags["git_commit"]
    assert tags[Tag.KIND] == "train"
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
    assert TrainConfig.from_flat(config) == TINY
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
    logged = results.load_model(run.run_id)
    local = Checkpoint.load(run.out_dir / "best.pt")
    assert logged.config == TINY and len(logged.vocab) == 65
    assert not logged.resumable and logged.step == local.step  # slim: weights, config, vocab
    idx = torch.tensor([logged.vocab.encode("ROMEO:\nBut soft")])
    assert torch.equal(logged.build_model()(idx)[0], local.build_model()(idx)[0])


def test_attention_maps_are_causal_rows_that_sum_to_one(run, tmp_path):
    files = artifact_paths(run.run_id, "attention")
    assert {"attention/layer0_head0.png", "attention/layer0_head1.png"} <= files
    doc = json.loads(download(run.run_id, "attention/weights.json", tmp_path).read_text())
    assert doc["line"] == runs.HEATMAP_LINE[: TINY.model.block_size]
    A = torch.tensor(doc["layers"])  # (layers, heads, T, T)
    T = len(doc["line"])
    assert A.shape == (1, 2, T, T)
    assert torch.allclose(A.sum(-1), torch.ones(1, 2, T))
    assert torch.all(A.triu(1) == 0)  # the causal mask: no weight on a later character
    assert torch.all(A[..., 0, 0] == 1)  # the first row is (1, 0, 0, ...)


def test_no_attention_run_has_fewer_parameters_and_no_maps(store, shakespeare, tmp_path):
    connect()
    o = runs.run_training(
        tiny(attention="none"), shakespeare, out_root=tmp_path, log_system_metrics=False
    )
    assert o.status == RunStatus.FINISHED
    assert "attention" not in artifact_paths(o.run_id)
    assert int(MlflowClient().get_run(o.run_id).data.params["n_params"]) < 17_952


def test_nan_loss_marks_the_run_failed_with_the_step(store, shakespeare, tmp_path):
    connect()
    o = runs.run_training(
        tiny(lr=1e30, min_lr=0.0), shakespeare, out_root=tmp_path, log_system_metrics=False
    )
    assert o.status == "FAILED" and o.failed_at_step is not None
    r = MlflowClient().get_run(o.run_id)
    assert r.info.status == "FAILED"
    assert r.data.tags["failed_at_step"] == str(o.failed_at_step)
    assert f"at step {o.failed_at_step}" in (o.error or "")
    assert len(history(o.run_id, "train_loss")) == o.failed_at_step - 1  # the finite ones


def test_killed_run_resumes_to_the_uninterrupted_curve(store, shakespeare, tmp_path):
    connect()
    full = runs.run_training(TINY, shakespeare, out_root=tmp_path / "a", log_system_metrics=False)
    calls = {"n": 0}

    def stop_after_45() -> bool:
        calls["n"] += 1
        return calls["n"] >= 45

    cut = runs.run_training(
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
    point = runs.prepare_resume(cut.run_id, shakespeare, tmp_path / "c")
    assert point.config == TINY and point.step == 45
    resumed = runs.run_training(
        point.config, shakespeare, out_root=tmp_path / "c", resume=point,
        log_system_metrics=False,
    )  # fmt: skip
    assert resumed.run_id == cut.run_id and resumed.status == "FINISHED"
    assert resumed.resumed_from_step == 45
    for key in ("train_loss", "val_loss", "lr", "grad_norm"):
        assert history(cut.run_id, key) == history(full.run_id, key), key
    r = MlflowClient().get_run(cut.run_id)
    assert r.info.status == "FINISHED" and r.data.tags["resumed_at_step"] == "45"
    with pytest.raises(TrackingError, match="already finished"):
        runs.prepare_resume(cut.run_id, shakespeare, tmp_path)


def test_resume_of_an_unknown_run_says_so(store, shakespeare, tmp_path):
    connect()
    with pytest.raises(TrackingError, match="no run 'f00'"):
        runs.prepare_resume("f00", shakespeare, tmp_path)


def test_unreachable_server_is_one_clear_error():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connection refused
        with pytest.raises(
            TrackingError,
            match=f"cannot reach the MLflow server at http://127.0.0.1:{port}",
        ):
            connect(f"http://127.0.0.1:{port}")


def test_resume_finds_the_run_in_its_own_experiment(store, shakespeare, tmp_path):
    """A run of another experiment than the active one resumes there (it used to crash with
    MLflow's "active experiment ID does not match")."""
    connect(store, "other")
    cut = runs.run_training(
        TINY, shakespeare, out_root=tmp_path, should_stop=lambda: True, log_system_metrics=False
    )
    assert cut.status == RunStatus.KILLED
    connect(store, "shakespeare")  # the default experiment is the active one now
    point = runs.prepare_resume(cut.run_id, shakespeare, tmp_path / "r", threads=1)
    assert point.config == tiny(threads=1)  # the one option changed, the rest is the run's
    done = runs.run_training(
        point.config, shakespeare, out_root=tmp_path / "r", resume=point, log_system_metrics=False
    )
    r = MlflowClient().get_run(done.run_id)
    assert done.status == RunStatus.FINISHED and r.info.status == "FINISHED"
    assert r.info.experiment_id == mlflow.get_experiment_by_name("other").experiment_id
    assert r.data.tags[Tag.RESUMED_THREADS] == "1" and Tag.RESUMED_DEVICE not in r.data.tags
    assert r.data.params["threads"] == "0"  # params are the run's own; the change is a tag


def test_resume_refuses_any_other_option(store, shakespeare, tmp_path):
    with pytest.raises(ValueError, match="leave out --n-embd, --seed"):
        runs.prepare_resume("f00", shakespeare, tmp_path, n_embd=64, seed=1, device="cpu")
