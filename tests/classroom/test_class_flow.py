"""No traceback anywhere in the class flow: one line, exit 2, nothing lost.

Real ``attnref train`` processes with students' credentials against the package's class
server (`tests/classroom/conftest.py`): resuming another student's run, a password changed in
the middle of a training (the server then refuses the account), the server going away in the
middle of one, and an ``--out-dir`` that cannot be written. Where a training stops, its
checkpoint is on disk and the run resumes from it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from attention_ref.classroom.connection.accounts import reset_password
from attention_ref.cli.main import _from_a_store
from tests.classroom.conftest import ATTNREF, EXPERIMENT, student_env
from tests.configs import TINY_ARGS

pytestmark = pytest.mark.slow

#: long enough never to finish inside a test: the tests stop it
ENDLESS, EVAL = 100_000, 5


def train_args(name: str | None, out: Path, data: Path, *more: str) -> list[str]:
    args = [
        ATTNREF,
        "train",
        *more,
        "--threads",
        "1",
        "--out-dir",
        str(out),
        "--data",
        str(data),
        "--log-every",
        "1000",
    ]
    if name is not None:  # a new run (a resumed one keeps its own configuration)
        args += [
            *TINY_ARGS,
            "--max-steps",
            str(ENDLESS),
            "--eval-interval",
            str(EVAL),
            "--sample-tokens",
            "10",
            "--experiment",
            EXPERIMENT,
            "--run-name",
            name,
        ]
    return args


def one_line_error(out: str, err: str, code: int) -> str:
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnref: error: "), err
    assert "Traceback" not in out + err
    return lines[0]


def run_of(client: MlflowClient, name: str):
    exp = client.get_experiment_by_name(EXPERIMENT)
    found = [r for r in client.search_runs([exp.experiment_id]) if r.info.run_name == name]
    return found[0] if found else None


def wait_for_evaluations(client: MlflowClient, name: str, n: int, proc: subprocess.Popen) -> str:
    """The run's id once it has logged ``n`` evaluations (``val_loss`` points)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        run = run_of(client, name)
        if run is not None and len(client.get_metric_history(run.info.run_id, "val_loss")) >= n:
            return run.info.run_id
        time.sleep(0.5)
    pytest.fail(f"{name} logged {n} evaluations in 300 s")


def start(args: list[str], env: dict[str, str], cwd: Path, launched: list) -> subprocess.Popen:
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    launched.append(proc)
    return proc


def test_resuming_another_students_run_is_one_line_and_changes_nothing(
    server, students, admin_client, shakespeare_path, tmp_path, launched
):
    alice = student_env(server.url, "alice", students["alice"])
    proc = start(
        train_args("flow-alice", tmp_path / "a", shakespeare_path), alice, tmp_path, launched
    )
    run_id = wait_for_evaluations(admin_client, "flow-alice", 1, proc)
    proc.send_signal(signal.SIGTERM)  # alice stops it: KILLED, with its checkpoint
    proc.communicate(timeout=300)
    before = admin_client.get_run(run_id)
    assert before.info.status == "KILLED"

    bob = student_env(server.url, "bob", students["bob"])
    args = train_args(None, tmp_path / "b", shakespeare_path, "--resume", run_id)
    out = subprocess.run(args, cwd=tmp_path, env=bob, capture_output=True, text=True, timeout=300)
    line = one_line_error(out.stdout, out.stderr, out.returncode)
    assert f"run {run_id} belongs to 'alice'; 'bob' may read it, not change it" in line
    after = admin_client.get_run(run_id)
    assert (after.info.status, after.data.metrics, after.data.tags) == (
        before.info.status,
        before.data.metrics,
        before.data.tags,
    )


def test_a_password_changed_mid_run_stops_it_with_its_checkpoint_and_it_resumes(
    server, students, admin_client, shakespeare_path, tmp_path, launched
):
    """The teacher resets carol's password while she trains: her next write is refused (401).
    One line, exit 2; the checkpoint is on disk; with the new password the run resumes from
    it, at the step it reached."""
    password = students["carol"]
    out_dir = tmp_path / "runs"
    proc = start(
        train_args("flow-carol", out_dir, shakespeare_path),
        student_env(server.url, "carol", password),
        tmp_path,
        launched,
    )
    run_id = wait_for_evaluations(admin_client, "flow-carol", 1, proc)
    new = password[::-1] + "-new"
    reset_password(server.url, server.admin, "carol", new)
    try:
        out, err = proc.communicate(timeout=300)
        line = one_line_error(out, err, proc.returncode)
        assert "refused the account" in line and f"run {run_id} stopped at step " in line
        step = int(line.split(" stopped at step ")[1].split(":")[0])
        checkpoint = out_dir / run_id / "last.pt"
        assert f"its checkpoint is {checkpoint}" in line and checkpoint.is_file()
        assert f"--resume {run_id}" in line

        # with the new password, the run goes on from that checkpoint
        env = student_env(server.url, "carol", new)
        resumed = start(
            train_args(None, out_dir, shakespeare_path, "--resume", run_id), env, tmp_path, launched
        )
        deadline = time.monotonic() + 300
        while "resumed_at_step" not in admin_client.get_run(run_id).data.tags:
            assert time.monotonic() < deadline and resumed.poll() is None, resumed.communicate()
            time.sleep(0.5)
        assert int(admin_client.get_run(run_id).data.tags["resumed_at_step"]) == step
        resumed.send_signal(signal.SIGTERM)
        resumed.communicate(timeout=300)
        assert admin_client.get_run(run_id).info.status == "KILLED"
    finally:
        reset_password(server.url, server.admin, "carol", password)


def test_a_server_gone_mid_run_is_one_line_and_the_checkpoint_stays(
    server, students, admin_client, shakespeare_path, tmp_path, launched
):
    """The MLflow server stops while dave trains; his client gives up (retries made short
    here) and says so in one line, with the checkpoint on disk. The server then comes back."""
    env = student_env(server.url, "dave", students["dave"]) | {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    }
    out_dir = tmp_path / "runs"
    proc = start(train_args("flow-dave", out_dir, shakespeare_path), env, tmp_path, launched)
    run_id = wait_for_evaluations(admin_client, "flow-dave", 1, proc)
    server.stop_mlflow()
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        server.start_mlflow()
    line = one_line_error(out, err, proc.returncode)
    assert "the tracking store failed" in line and f"run {run_id} stopped at step " in line
    assert (out_dir / run_id / "last.pt").is_file()


def test_an_out_dir_that_cannot_be_written_is_one_line_and_no_run(shakespeare_path, tmp_path):
    """/proc refuses files whatever root's permission bits say: found by writing, before any
    run exists (the issue: 500 steps trained, then a traceback and a FAILED run)."""
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    base = {k: v for k, v in student_env("", "", "").items() if not k.startswith("MLFLOW_")}
    for bad in ("/proc/nope", str(tmp_path / "a-file" / "below")):
        (tmp_path / "a-file").write_text("not a folder")
        out = subprocess.run(
            [
                ATTNREF,
                "train",
                *TINY_ARGS,
                "--max-steps",
                "5",
                "--data",
                str(shakespeare_path),
                "--out-dir",
                bad,
                "--tracking-uri",
                store,
            ],
            cwd=tmp_path,
            env=base,
            capture_output=True,
            text=True,
            timeout=300,
        )
        line = one_line_error(out.stdout, out.stderr, out.returncode)
        assert f"--out-dir {bad} is not writable" in line
    client = MlflowClient(store)
    assert [
        r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])
    ] == []
    # the control: a folder that can be written trains
    ok = subprocess.run(
        [
            ATTNREF,
            "train",
            *TINY_ARGS,
            "--max-steps",
            "2",
            "--eval-interval",
            "2",
            "--data",
            str(shakespeare_path),
            "--out-dir",
            str(tmp_path / "runs"),
            "--tracking-uri",
            store,
            "--sample-tokens",
            "5",
        ],
        cwd=tmp_path,
        env=base,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr


def test_errors_of_a_store_are_one_line_in_any_command():
    """The CLI's last net: MLflow's and the network's errors (never a bug's)."""
    import requests
    from mlflow.exceptions import MlflowException

    assert _from_a_store(MlflowException("PERMISSION_DENIED: no"))
    assert _from_a_store(requests.exceptions.ConnectionError("gone"))
    assert not _from_a_store(RuntimeError("a bug keeps its traceback"))
    assert not _from_a_store(KeyError("x"))
    code = (
        "import sys\n"
        "from mlflow.exceptions import MlflowException\n"
        "from attention_ref.cli import main as m\n"
        "def boom(): raise MlflowException('the store said no\\nand more')\n"
        "params = next(c for c in m.app.registered_commands if c.callback.__name__ == 'params')\n"
        "params.callback, params.name = boom, 'params'\n"
        "sys.exit(m.main(['params']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == "attnref: error: the store said no"
