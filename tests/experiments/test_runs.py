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
from tests.experiments.stores import module_store


@pytest.fixture(scope="module")
def finished_run(migrated_store, tmp_path_factory, shakespeare):
    """One finished multihead run, shared by the tests that only read it (system metrics
    sampled every 0.5 s so a short run has some)."""
    root = tmp_path_factory.mktemp("run")
    with module_store(migrated_store, root) as (uri, mp):
        mp.setattr(runs, "SYSTEM_METRICS_INTERVAL_S", 0.5)
        outcome = runs.run_training(TINY, shakespeare, out_root=root / "runs")
        yield outcome, uri


@pytest.fixture
def run(finished_run, monkeypatch):
    """The shared finished run, its store the current one."""
    outcome, uri = finished_run
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
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
    # heads numbered from 1, as `attnref explain` numbers them
    assert files == {
        "attention/layer1_head1.png",
        "attention/layer1_head2.png",
        "attention/weights.json",
    }
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
    started: list[str] = []
    o = runs.run_training(
        tiny(attention="none"),
        shakespeare,
        out_root=tmp_path,
        log_system_metrics=False,
        register="q03-none-model",
        on_run_start=started.append,
    )
    assert o.status == RunStatus.FINISHED and started == [o.run_id]
    assert "attention" not in artifact_paths(o.run_id)
    r = MlflowClient().get_run(o.run_id)
    assert int(r.data.params["n_params"]) < 17_952
    assert r.info.run_name == "q03-none"  # not a bare "none" beside the ablation's arm
    assert "no attention sub-layer" in r.data.tags[Tag.NOTE] and "**Q03**" in r.data.tags[Tag.NOTE]
    # --register: the LoggedModel is version 1 of the registered model, from this run
    (version,) = MlflowClient().search_model_versions("name = 'q03-none-model'")
    assert int(version.version) == 1 and version.run_id == o.run_id
    assert version.source == o.model_uri  # the registered version is the LoggedModel
    registered = results.load_model_uri("models:/q03-none-model/1")
    assert registered.config == tiny(attention="none")


def test_nan_loss_marks_the_run_failed_with_the_step(store, shakespeare, tmp_path):
    connect()
    o = runs.run_training(
        tiny(lr=1e30, min_lr=0.0), shakespeare, out_root=tmp_path, log_system_metrics=False
    )
    assert o.status == "FAILED" and o.failed_at_step is not None
    r = MlflowClient().get_run(o.run_id)
    assert r.info.status == "FAILED" and o.model_uri is None
    assert r.data.tags["failed_at_step"] == str(o.failed_at_step)
    (row,) = results.list_runs("shakespeare")
    assert row.status == "FAILED" and row.steps == f"{o.failed_at_step - 1}/{TINY.max_steps}"
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
        point.config,
        shakespeare,
        out_root=tmp_path / "c",
        resume=point,
        log_system_metrics=False,
    )
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
    (row,) = results.list_runs("other")
    assert (row.run_id, row.status, row.steps) == (cut.run_id, "KILLED", f"1/{TINY.max_steps}")
    assert row.best_val_loss is None and row.name == "q02-multihead" and row.heads == 2
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


# ------------------------------------------------------------------ what the MLflow UI shows


def test_the_experiment_opens_on_its_runs_and_the_run_describes_itself(run):
    client = MlflowClient()
    r = client.get_run(run.run_id)
    experiment = client.get_experiment(r.info.experiment_id)
    assert experiment.tags[Tag.EXPERIMENT_KIND] == "custom_model_development"
    assert r.info.run_name == "q02-multihead"
    note = r.data.tags[Tag.NOTE]
    assert note.startswith("**Q02**") and "2 heads of d_k = 16" in note
    assert f"{TINY.max_steps} steps (seed {TINY.seed}" in note
    assert f"attnref sample --run-id {run.run_id}" in note
    assert f"mlflow.pyfunc.load_model('{run.model_uri}')" in note


def test_the_model_is_a_logged_model_of_the_run_with_its_metrics(run):
    client = MlflowClient()
    model_id = run.model_uri.removeprefix("models:/")
    model = mlflow.get_logged_model(model_id)
    assert model.name == "char-gpt" and model.source_run_id == run.run_id
    outputs = client.get_run(run.run_id).outputs.model_outputs
    assert [o.model_id for o in outputs] == [model_id]
    linked = {m.key: m.value for m in model.metrics or [] if m.model_id == model_id}
    assert linked["final_val_loss"] == run.result.final_val_loss
    assert linked["best_val_loss"] == run.result.best_val_loss
    assert model.params["n_embd"] == str(TINY.model.n_embd)
    info = mlflow.models.get_model_info(run.model_uri)
    assert info.signature.inputs.to_dict() == [{"type": "string", "required": True}]
    assert [p.name for p in info.signature.params.params] == [
        "max_new_tokens",
        "temperature",
        "top_k",
        "seed",
    ]
    assert info.saved_input_example_info is not None


def test_the_pyfunc_samples_what_the_plain_checkpoint_samples(run, tmp_path):
    """Round trip: ``model/model.pt`` read with torch alone (no MLflow) and the LoggedModel
    loaded through pyfunc give the same text for the same seed."""
    from attention_ref.experiments.logged_model import SampleParams, sample_text

    path = download(run.run_id, "model/model.pt", tmp_path)
    state = torch.load(path, weights_only=True)  # plain tensors, lists and numbers: no pickle
    plain = Checkpoint.from_state(state)
    assert plain.config == TINY and not plain.resumable
    p = {"max_new_tokens": 30, "temperature": 0.8, "top_k": 5, "seed": 3}
    expected = [sample_text(plain, prompt, SampleParams(**p)) for prompt in ("ROMEO:", "\n")]
    model = mlflow.pyfunc.load_model(run.model_uri)
    got = model.predict(["ROMEO:", "\n"], params=p)
    assert list(got) == expected and got[0].startswith("ROMEO:") and len(got[0]) == 6 + 30
    assert list(model.predict(["ROMEO:"], params={**p, "seed": 4})) != expected[:1]
    with pytest.raises(Exception, match="vocabulary"):
        model.predict(["ü"])
    assert results.load_model_uri(run.model_uri).model.keys() == plain.model.keys()


def test_a_store_that_does_not_exist_is_not_created(tmp_path, monkeypatch):
    from attention_ref.experiments.store import require_store

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(
        TrackingError, match=re.escape(f"no MLflow store sqlite:///mlflow.db: {tmp_path}")
    ):
        require_store()
    with pytest.raises(TrackingError, match=re.escape("sub/x.db does not exist")):
        require_store("sqlite:///sub/x.db")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mlflow.db").write_bytes(b"")
    assert require_store() == "sqlite:///mlflow.db"
    assert require_store("http://127.0.0.1:9") == "http://127.0.0.1:9"  # a server: connect's
