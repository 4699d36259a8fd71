"""The local store reader (no MLflow) against MLflow's own client, on real sqlite stores.

Every question `LocalStore` answers (the runs of ``attnref runs``, the latest finished
training run, a sweep's arm, a run's ``model/model.pt``) is asked of both readers, before and
after the store changes under them (a run deleted, renamed, resumed, an experiment deleted,
start times that tie): same answers, same one-line errors. And it refuses what it does not
know, so that MLflow answers instead.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import mlflow
import pytest
import torch
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from attention_ref.experiments import results
from attention_ref.experiments.local_store import (
    KNOWN_REVISIONS,
    LocalStore,
    LocalStoreUnavailableError,
    local_artifact_dir,
)
from attention_ref.experiments.names import Artifact, RunKind, RunStatus, Tag
from attention_ref.experiments.store import TrackingError
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.data import Vocab
from attention_ref.lm.model import CharGPT
from tests.configs import TINY

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_790_000_000_000  # a fixed start time (ms): runs that tie on it are ordered by id


def model_file(tmp_path: Path, seed: int) -> Path:
    """A small real ``model.pt`` (a slim checkpoint), different for each seed."""
    torch.manual_seed(seed)
    vocab = Vocab(tuple("\n !',.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    model = CharGPT(replace(TINY.model, vocab_size=len(vocab)))
    ckpt = Checkpoint(TINY, vocab, model.state_dict(), step=seed, best_val_loss=2.0 + seed)
    return ckpt.save(tmp_path / f"ckpt-{seed}" / "model.pt")


class Stores:
    """Writes runs through MLflow's client; reads them back through both readers."""

    def __init__(self, uri: str, tmp_path: Path) -> None:
        self.uri, self.tmp, self.client = uri, tmp_path, MlflowClient()
        self.exp = {"shakespeare": mlflow.set_experiment("shakespeare").experiment_id}

    def experiment(self, name: str) -> str:
        if name not in self.exp:
            self.exp[name] = self.client.create_experiment(name)
        return self.exp[name]

    def run(
        self,
        name: str,
        *,
        experiment: str = "shakespeare",
        kind: str | None = RunKind.TRAIN,
        status: str = RunStatus.FINISHED,
        start: int = T0,
        tags: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        metrics: dict[str, list[tuple[int, float]]] | None = None,
        model_seed: int | None = None,
    ) -> str:
        all_tags = {**({Tag.KIND: kind} if kind else {}), **(tags or {})}
        run = self.client.create_run(
            self.experiment(experiment), start_time=start, tags=all_tags, run_name=name
        )
        rid = run.info.run_id
        self.client.log_batch(
            rid,
            metrics=[Metric(k, v, T0 + s, s) for k, pts in (metrics or {}).items() for s, v in pts],
            params=[Param(k, v) for k, v in (params or {}).items()],
            tags=[RunTag(k, v) for k, v in all_tags.items()],
        )
        if model_seed is not None:
            self.client.log_artifact(rid, str(model_file(self.tmp, model_seed)), "model")
        if status != RunStatus.RUNNING:
            self.client.set_terminated(rid, status)
        return rid

    def local(self) -> LocalStore:
        view = LocalStore.open(self.uri)
        assert view is not None
        return view


def answer(fn, *args) -> str:
    """What a reader answers: its value, or its one-line error (as text: NaN equals NaN)."""
    try:
        return repr(("ok", fn(*args)))
    except TrackingError as e:
        return repr(("error", str(e)))


def mlflow_latest(experiment: str) -> tuple[str, str]:
    run_id = results.latest_model_run(experiment)
    return run_id, mlflow.get_run(run_id).info.run_name


def mlflow_model_bytes(run_id: str) -> bytes:
    """The bytes MLflow's client downloads as the run's model (`results.load_model`'s file)."""
    try:
        path = mlflow.artifacts.download_artifacts(
            run_id=run_id, artifact_path=Artifact.MODEL, dst_path=str(Path.cwd() / "dl" / run_id)
        )
    except mlflow.exceptions.MlflowException:
        results.load_model(run_id)  # raises results' own TrackingError
        raise
    return Path(path).read_bytes()


def same_everywhere(s: Stores, experiments: list[str | None], run_ids: list[str]) -> None:
    """Both readers agree on every question, for these experiments and runs."""
    with s.local() as view:
        for name in experiments:
            assert answer(view.list_runs, name) == answer(results.list_runs, name), name
            if name is not None:
                assert answer(view.latest_model_run, name) == answer(mlflow_latest, name), name
        for rid in run_ids:
            for arm in (None, "none", "multihead", "4", "nope"):
                assert answer(view.resolve_run, rid, arm) == answer(
                    results.resolve_run, rid, arm
                ), (rid, arm)
            local = answer(lambda r: view.model_file(r).read_bytes(), rid)
            assert local == answer(mlflow_model_bytes, rid), rid


@pytest.fixture
def stores(store, tmp_path):
    return Stores(store, tmp_path)


def test_every_answer_is_mlflows_as_the_store_changes(stores):
    s = stores
    train = {"attention": "multihead", "n_head": "2", "max_steps": "120"}
    first = s.run(
        "q02-multihead",
        start=T0,
        params=train,
        model_seed=1,
        tags={Tag.ATTENTION: "multihead"},
        metrics={"best_val_loss": [(60, 2.5), (120, 2.25)]},
    )
    # two runs that start in the same millisecond: MLflow orders them by run id
    tie_a = s.run(
        "tie-a", start=T0 + 10, params=train, model_seed=2, tags={Tag.ATTENTION: "multihead"}
    )
    tie_b = s.run(
        "tie-b", start=T0 + 10, params=train, model_seed=3, tags={Tag.ATTENTION: "multihead"}
    )
    killed = s.run(
        "killed",
        start=T0 + 20,
        status=RunStatus.KILLED,
        params=train,
        metrics={"train_loss": [(1, 4.0), (37, 3.0), (12, 3.5)]},
    )
    failed = s.run(
        "failed",
        start=T0 + 30,
        status=RunStatus.FAILED,
        params=train,
        tags={Tag.FAILED_AT_STEP: "9"},
    )
    running = s.run("running", start=T0 + 35, status=RunStatus.RUNNING, params=train)
    nan = s.run(
        "nan-best",
        start=T0 + 36,
        params=train,
        model_seed=4,
        metrics={"best_val_loss": [(5, float("nan"))]},
    )
    parent = s.run(
        "ablation", kind=RunKind.ABLATION, start=T0 + 40, params={"arms": "multihead,none"}
    )
    arm_none = s.run(
        "ablation/none",
        start=T0 + 41,
        params={**train, "attention": "none"},
        tags={Tag.PARENT_RUN_ID: parent, Tag.ATTENTION: "none"},
        model_seed=5,
    )
    arm_mh = s.run(
        "ablation/multihead",
        start=T0 + 42,
        params=train,
        model_seed=6,
        tags={Tag.PARENT_RUN_ID: parent, Tag.ATTENTION: "multihead"},
    )
    sweep = s.run("heads", kind=RunKind.HEADS_SWEEP, start=T0 + 50, params={"heads": "1,4"})
    arm_4 = s.run(
        "heads/4",
        start=T0 + 51,
        params={**train, "n_head": "4"},
        model_seed=7,
        tags={Tag.PARENT_RUN_ID: sweep, Tag.ATTENTION: "multihead"},
    )
    empty_sweep = s.run("heads", kind=RunKind.HEADS_SWEEP, start=T0 + 52, params={"heads": ""})
    by_hand = s.run("by-hand", experiment="other", kind=None, start=T0 + 60)
    gone_exp = s.run("old", experiment="gone", start=T0 + 70, params=train, model_seed=8)
    runs = [
        first,
        tie_a,
        tie_b,
        killed,
        failed,
        running,
        nan,
        parent,
        arm_none,
        arm_mh,
        sweep,
        arm_4,
        empty_sweep,
        by_hand,
        gone_exp,
        "0123456789abcdef0123456789abcdef",
        "not a run id!",
    ]
    names: list[str | None] = ["shakespeare", "other", "gone", "missing", None]
    same_everywhere(s, names, runs)
    with s.local() as view:  # the rows themselves, as `attnref runs` shows them
        rows = {r.run_id: r for r in view.list_runs("shakespeare")}
    assert rows[killed].steps == "37/120" and rows[failed].steps == "8/120"
    assert rows[running].steps == "0/120" and rows[first].best_val_loss == 2.25
    assert [r for r in rows][:2] == [empty_sweep, arm_4]  # the latest first
    assert rows[parent].attention == "multihead,none" and rows[arm_4].heads == 4

    # the store changes under the readers: nothing is cached, both follow
    s.client.delete_run(empty_sweep)  # deleted: gone from the list, latest is another run
    s.client.update_run(arm_4, name="heads/4-renamed")  # renamed
    s.client.delete_experiment(s.exp["gone"])  # an experiment deleted with its runs
    same_everywhere(s, names, runs)
    s.client.delete_run(arm_4)  # the latest finished training run deleted
    same_everywhere(s, ["shakespeare"], [arm_4, sweep])
    with s.local() as view:
        assert view.latest_model_run("shakespeare")[0] == arm_mh
    # resumed: a KILLED run back to RUNNING, finished with a new model
    s.client.update_run(killed, status=RunStatus.RUNNING)
    s.client.log_batch(killed, metrics=[Metric("train_loss", 2.0, T0 + 99, 99)])
    same_everywhere(s, ["shakespeare"], [killed])
    s.client.log_artifact(killed, str(model_file(s.tmp, 9)), "model")
    s.client.set_terminated(killed, RunStatus.FINISHED)
    same_everywhere(s, ["shakespeare"], [killed])


def test_an_empty_store_and_an_empty_experiment(stores):
    same_everywhere(stores, ["shakespeare", "missing", None], ["0" * 32])
    with stores.local() as view:
        assert view.list_runs("shakespeare") == []


def test_the_installed_mlflows_schema_is_one_the_reader_knows(migrated_store):
    """When MLflow changes its schema this fails: check the queries against the new tables
    (the test above), then add the revision."""
    with sqlite3.connect(migrated_store) as db:
        (revision,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
    assert revision in KNOWN_REVISIONS


def test_it_refuses_what_it_does_not_know(store, tmp_path):
    """What MLflow's client must read instead: not a sqlite file, a file that is not an MLflow
    store, another schema, experiments in MLflow workspaces; a run's artifacts elsewhere."""
    db = Path(store.removeprefix("sqlite:///"))
    assert LocalStore.open(store) is not None  # the control: this one it reads
    assert LocalStore.open("http://127.0.0.1:5000") is None
    assert LocalStore.open(f"sqlite:///{tmp_path / 'none.db'}") is None
    assert not (tmp_path / "none.db").exists()  # and it created nothing
    (tmp_path / "plain.db").write_bytes(b"")
    sqlite3.connect(tmp_path / "plain.db").execute("CREATE TABLE t (x)").connection.commit()
    assert LocalStore.open(f"sqlite:///{tmp_path / 'plain.db'}") is None
    for change in (
        "UPDATE alembic_version SET version_num = 'f00'",
        "UPDATE experiments SET workspace = 'team-a'",
    ):
        copy = tmp_path / "copy.db"
        shutil.copy(db, copy)
        with sqlite3.connect(copy) as c:
            c.execute(change)
        assert LocalStore.open(f"sqlite:///{copy}") is None, change
    s = Stores(store, tmp_path)
    rid = s.run("remote", model_seed=1)
    with sqlite3.connect(db) as c:
        c.execute(
            "UPDATE runs SET artifact_uri = 'mlflow-artifacts:/1/x' WHERE run_uuid = ?", (rid,)
        )
    with s.local() as view, pytest.raises(LocalStoreUnavailableError):
        view.model_file(rid)


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("/data/mlruns/1/abc/artifacts", "/data/mlruns/1/abc/artifacts"),
        ("file:///data/ml%20runs/1/abc/artifacts", "/data/ml runs/1/abc/artifacts"),
        ("file://localhost/data/x", "/data/x"),
        ("mlruns/1/abc/artifacts", "mlruns/1/abc/artifacts"),
        ("mlflow-artifacts:/1/abc/artifacts", None),
        ("s3://bucket/1/abc", None),
        ("file://otherhost/data/x", None),
    ],
)
def test_local_artifact_dir(uri, path):
    assert local_artifact_dir(uri) == (None if path is None else Path(path))


def test_a_store_being_written_is_read_between_writes(stores):
    """A training run writes while `attnref runs` reads: the reader waits for the writer's
    lock up to its timeout, then hands over to MLflow's client (`LocalStoreUnavailableError`,
    never a traceback); once the lock is released it reads."""
    s = stores
    s.run("one", params={"max_steps": "1"})
    view = s.local()
    view.db.execute("PRAGMA busy_timeout = 100")  # the reader's 30 s, shortened for the test
    db = sqlite3.connect(s.uri.removeprefix("sqlite:///"), timeout=0)
    db.execute("BEGIN EXCLUSIVE")  # a writer holds the database
    with pytest.raises(LocalStoreUnavailableError):  # past the timeout: MLflow is asked
        view.list_runs("shakespeare")
    db.rollback()
    assert [r.name for r in view.list_runs("shakespeare")] == ["one"]
    view.close()


def test_runs_and_sample_read_a_local_store_without_importing_mlflow(store, tmp_path):
    """In a fresh interpreter, as a person runs them: no mlflow (nor matplotlib) imported."""
    s = Stores(store, tmp_path)
    rid = s.run(
        "q02-multihead",
        params={"max_steps": "1", "n_head": "2"},
        model_seed=3,
        tags={Tag.ATTENTION: "multihead"},
    )
    code = (
        "import sys\n"
        "from attention_ref.cli.main import main\n"
        "codes = [main(['runs', '--format', 'json']), main(['sample', '--tokens', '3']),\n"
        f"         main(['sample', '--run-id', {rid!r}, '--tokens', '3'])]\n"
        "print(codes, sorted(m for m in ('mlflow', 'matplotlib') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[0, 0, 0] []"
    assert f"sampling the latest finished run, q02-multihead ({rid})" in out.stderr


def test_the_cli_prints_the_same_through_either_reader(stores, capsys, monkeypatch):
    """`attnref runs` and `attnref sample` (output and errors) with the local reader, then with
    MLflow's client (the local reader refused): the same text."""
    from attention_ref.cli.main import main

    s = stores
    first = s.run(
        "q02-multihead",
        params={"max_steps": "9", "n_head": "2"},
        model_seed=2,
        tags={Tag.ATTENTION: "multihead"},
    )
    parent = s.run("ablation", kind=RunKind.ABLATION, start=T0 + 5, params={"arms": "none"})
    s.run(
        "ablation/none",
        start=T0 + 6,
        params={"max_steps": "9"},
        model_seed=4,
        tags={Tag.PARENT_RUN_ID: parent, Tag.ATTENTION: "none"},
    )
    commands = [
        ["runs"],
        ["runs", "--format", "json"],
        ["runs", "--all"],
        ["runs", "--experiment", "nope"],
        ["sample", "--tokens", "20", "--seed", "2"],
        ["sample", "--run-id", first, "--tokens", "20", "--top-k", "3"],
        ["sample", "--run-id", parent, "--tokens", "5"],
        ["sample", "--run-id", parent, "--arm", "none", "--tokens", "5"],
        ["sample", "--run-id", parent, "--arm", "x"],
        ["sample", "--run-id", "f" * 32],
        ["sample", "--experiment", "nope"],
    ]

    def outputs() -> list[tuple[int, str, str]]:
        seen = []
        for args in commands:
            code = main(args)
            out, err = capsys.readouterr()
            seen.append((code, out, err))
        return seen

    local = outputs()
    assert [c for c, _, _ in local] == [0, 0, 0, 2, 0, 0, 2, 0, 2, 2, 2]
    monkeypatch.setattr(LocalStore, "open", classmethod(lambda cls, uri: None))
    assert outputs() == local


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_a_damaged_model_file_is_one_line_and_exit_2(stores, capsys, damage):
    """The run's model.pt cut short, not a checkpoint, or a checkpoint of something else."""
    from attention_ref.cli.main import main

    rid = stores.run("q02-multihead", params={"max_steps": "1"}, model_seed=1)
    with stores.local() as view:
        path = view.model_file(rid)
    if damage is None:
        torch.save({"not": "a checkpoint"}, path)
    else:
        path.write_bytes(damage)
    assert main(["sample", "--run-id", rid, "--tokens", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"attnref: error: cannot read the model file {path}: ")
    assert err.count("\n") == 1 and "Traceback" not in err
