"""What one student may store (`attention_ref.classroom.gate.quotas`), over real HTTP through the
edge.

A class of its own is started with small quotas, so that each is reached in a few requests:
past each one the student's write is refused (403) in one line that names the quota, what is
used and what is left; the teacher's writes have none (the control).
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.gate.quotas import MIB, Quotas, default_run_metrics
from attention_ref.classroom.hosting.server import ClassServer
from tests.classroom.conftest import class_dir
from tests.ports import free_port

pytestmark = pytest.mark.slow

CLASS = "quotas"
SMALL = Quotas(runs=4, artifact_mib=1, metrics_per_run=50, params_per_run=5)


# --- the quotas themselves (pure) -------------------------------------------------------------


def test_the_defaults_and_the_options_a_teacher_gives():
    q = Quotas()
    assert q.metrics_per_run == 10 * default_run_metrics() > 0
    assert Quotas.parse(["runs=20", "artifact-mib=2048"]) == Quotas(runs=20, artifact_mib=2048)
    for bad in ("runs", "runs=x", "runs=-1", "disk=1", "=3", "runs=1.5"):
        with pytest.raises(ValueError, match="--quota takes NAME=NUMBER"):
            Quotas.parse([bad])
    with pytest.raises(ValueError, match="a whole number"):
        Quotas(runs=-1)


def test_the_quotas_reach_the_gate_as_they_were_given(monkeypatch):
    from attention_ref.classroom.gate.quotas import ENV

    monkeypatch.setenv(ENV, SMALL.to_env())
    assert Quotas.from_env() == SMALL
    monkeypatch.delenv(ENV)
    assert Quotas.from_env() == Quotas()


# --- over HTTP ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> Iterator[ClassServer]:
    root = class_dir("attnref-quotas-")
    s = ClassServer(
        root / "class",
        secrets.token_urlsafe(18),
        port=free_port(),
        workers=1,
        experiment=CLASS,
        quotas=SMALL,
    )
    with s:
        yield s
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def ana(small) -> tuple[str, str]:
    password = secrets.token_urlsafe(15)
    add_student(small.url, small.admin, "ana", password, CLASS)
    return "ana", password


def _experiment(server: ClassServer) -> str:
    found = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": CLASS},
    )[1]
    return str(found["experiment"]["experiment_id"])


def _new_run(server: ClassServer, auth: tuple[str, str]) -> tuple[int, dict]:
    return rest(
        server.url,
        "/api/2.0/mlflow/runs/create",
        {"experiment_id": _experiment(server)},
        auth=auth,
    )


def test_a_student_creates_runs_up_to_the_quota(small, ana):
    made = [_new_run(small, ana) for _ in range(SMALL.runs)]
    assert all(status == 200 for status, _ in made), made
    status, said = _new_run(small, ana)
    assert status == 403, said
    assert "the quota runs is 4: 4 used, 0 left" in said["message"]
    assert "server start --quota" in said["message"]
    assert _new_run(small, small.admin)[0] == 200  # the control: the teacher has no quota


def test_metrics_and_parameters_per_run(small):
    password = secrets.token_urlsafe(15)
    add_student(small.url, small.admin, "bia", password, CLASS)
    bia = ("bia", password)
    status, made = _new_run(small, bia)
    assert status == 200, made
    run = made["run"]["info"]["run_id"]

    def batch(metrics: int = 0, params: int = 0, first: int = 0) -> tuple[int, dict]:
        body = {
            "run_id": run,
            "metrics": [
                {"key": "loss", "value": 1.0, "timestamp": 0, "step": first + i}
                for i in range(metrics)
            ],
            "params": [{"key": f"p{first + i}", "value": "1"} for i in range(params)],
        }
        return rest(small.url, "/api/2.0/mlflow/runs/log-batch", body, auth=bia)

    assert batch(metrics=40)[0] == 200
    status, said = batch(metrics=20, first=40)
    assert status == 403 and "the quota metrics-per-run is 50: 40 used, 10 left" in said["message"]
    assert batch(metrics=10, first=40)[0] == 200  # what is left still goes in
    assert batch(params=5)[0] == 200
    status, said = rest(
        small.url,
        "/api/2.0/mlflow/runs/log-parameter",
        {"run_id": run, "key": "one-more", "value": "1"},
        auth=bia,
    )
    assert status == 403 and "the quota params-per-run is 5: 5 used, 0 left" in said["message"]


def test_artifact_bytes_up_to_the_quota(small):
    password = secrets.token_urlsafe(15)
    add_student(small.url, small.admin, "caio", password, CLASS)
    caio = ("caio", password)
    status, made = _new_run(small, caio)
    assert status == 200, made
    info = made["run"]["info"]
    folder = f"{info['experiment_id']}/{info['run_id']}/artifacts"

    def put(name: str, size: int) -> tuple[int, dict]:
        return rest(
            small.url,
            f"/api/2.0/mlflow-artifacts/artifacts/{folder}/{name}",
            auth=caio,
            method="PUT",
            data=b"x" * size,
        )

    assert put("a.bin", 600 * 1024)[0] == 200
    status, said = put("b.bin", 600 * 1024)
    assert status == 403, said
    assert "the quota artifact-mib is 1.0 MiB: 0.6 MiB used, 0.4 MiB left" in said["message"]
    assert put("c.bin", 300 * 1024)[0] == 200  # what is left still goes in
    assert not (small.artifacts / folder / "b.bin").exists()
    assert MIB == 1 << 20


def test_server_status_shows_each_students_use_beside_the_quotas(small, ana):
    """After the tests above (run in this order): what each student stores, from the class's
    own databases and folder, beside the quotas the server was started with."""
    import subprocess

    from tests.classroom.conftest import ATTNREF

    out = subprocess.run(
        [ATTNREF, "server", "status", str(small.root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "COLUMNS": "120"},
    )
    assert out.returncode == 0, out.stderr
    rows = {line.split()[1]: line for line in out.stdout.splitlines() if line.startswith("│ ")}
    assert "4 of 4" in rows["ana"], out.stdout
    assert "1 of 4" in rows["bia"], out.stdout
    assert rows["bia"].split("│")[3].strip() == "50"  # 40 + 10 metric values
    assert "0.9 of 1 MiB" in rows["caio"], out.stdout  # 600 + 300 KiB
