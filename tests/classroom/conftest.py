"""One class server for the package's tests: PostgreSQL + ``mlflow server`` on a free port.

Started once (package scope) in a directory of its own, stopped by the fixture at the end
(``ClassServer.stop``: the MLflow server's process group, then PostgreSQL). Students and a
teacher are real accounts made through the server's REST API.
"""

from __future__ import annotations

import http.client
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from attention_ref.classroom.connection.accounts import add_student, add_teacher
from attention_ref.classroom.hosting.server import ClassServer
from attention_ref.cli.errors import PREFIX
from tests.ports import free_port

ATTNREF = str(Path(sys.executable).with_name("attnref"))
EXPERIMENT = "class"
STUDENTS = ("alice", "bob", "carol", "dave")
TEACHER = "tess"


def class_dir(prefix: str = "attnref-class-") -> Path:
    """A fresh directory for a class. As root, PostgreSQL runs as ``postgres``: it must enter
    the directory (0711), and the socket path must stay short (``/tmp``)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o711)
    return root


def status_of(
    host: str, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> int:
    """One plain HTTP request to ``host`` (``"127.0.0.1:PORT"``), as sent: its status."""
    return answer_of(host, method, target, body, headers)[0]


def answer_of(
    host: str, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, str]:
    """One plain HTTP request to ``host``, as sent: its status and its body's text (first 300
    characters), so a test that fails on a status says what the server said."""
    conn = http.client.HTTPConnection(host, timeout=60)
    try:
        conn.request(method, target, body=body or None, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()[:300].decode("utf-8", "replace")
    finally:
        conn.close()


def one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    """The one line of a refusal: exit 2, one stderr line, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    # in English, or in the Portuguese of a Portuguese assignment
    # (`attention_ref.cli.errors.PREFIX`) assert len(lines) == 1 and
    lines[0].startswith(tuple(PREFIX.values())), out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    return lines[0]


def student_env(url: str, user: str, password: str) -> dict[str, str]:
    """The environment of a student's command: MLflow's variables, nothing else of MLflow's;
    an English locale (what the command says before it knows the assignment's language is in
    the environment's: the tests' English words must not depend on the machine's)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MLFLOW_TRACKING_") and k not in ("LC_ALL", "LC_MESSAGES")
    }
    return env | {
        "LANG": "C.UTF-8",
        "MLFLOW_TRACKING_URI": url,
        "MLFLOW_TRACKING_USERNAME": user,
        "MLFLOW_TRACKING_PASSWORD": password,
    }


def teacher_env(server: ClassServer, **more: str) -> dict[str, str]:
    """What a teacher's command reads of the environment: the class's URL, the admin password
    (and ``more``, ``COLUMNS="240"``)."""
    return {"MLFLOW_TRACKING_URI": server.url, "ATTNREF_ADMIN_PASSWORD": server.admin[1], **more}


def in_process(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    env: dict[str, str],
    cwd: Path,
) -> subprocess.CompletedProcess[str]:
    """An attnref command run in this process (`attention_ref.cli.main.main`, without a new
    interpreter importing torch and MLflow each time): MLflow's variables, the admin password
    and ``COLUMNS`` from ``env`` (the test's own MLflow variables dropped), in ``cwd``; its
    exit code, stdout and stderr."""
    from attention_ref.cli.main import main

    for key in [k for k in os.environ if k.startswith("MLFLOW_TRACKING_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        if key.startswith("MLFLOW_TRACKING_") or key in ("ATTNREF_ADMIN_PASSWORD", "COLUMNS"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = main(args)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


@pytest.fixture(scope="package")
def class_root(request: pytest.FixtureRequest) -> Iterator[Path]:
    """The shared class's folder; kept when a test failed meanwhile (its server's and
    PostgreSQL's logs say why), and its path written to the test report's log."""
    root = class_dir()
    failed = request.session.testsfailed
    yield root
    if request.session.testsfailed > failed:
        print(f"\nclass folder kept for the failures: {root} (logs in {root / 'class' / 'logs'})")
        return
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="package")
def server(class_root) -> Iterator[ClassServer]:
    """PostgreSQL + mlflow server (one worker: 2 cores), the admin password made up here."""
    s = ClassServer(
        class_root / "class",
        secrets.token_urlsafe(18),
        port=free_port(),
        workers=1,
        experiment=EXPERIMENT,
    )
    with s:
        yield s
    assert s.process is None and not s.postgres.is_running()


@pytest.fixture(scope="package")
def students(server) -> dict[str, str]:
    """Student accounts (name -> password), each with EDIT on the class experiment."""
    accounts = {name: secrets.token_urlsafe(15) for name in STUDENTS}
    for name, password in accounts.items():
        add_student(server.url, server.admin, name, password, EXPERIMENT)
    return accounts


@pytest.fixture(scope="package")
def teacher(server) -> tuple[str, str]:
    """A teacher's account (another MLflow admin)."""
    password = secrets.token_urlsafe(15)
    add_teacher(server.url, server.admin, TEACHER, password)
    return TEACHER, password


@pytest.fixture
def admin_client(server, monkeypatch) -> MlflowClient:
    """An MLflow client of the class's admin, on the server the test uses."""
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", server.admin[0])
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", server.admin[1])
    return MlflowClient(server.url)


@pytest.fixture
def launched() -> Iterator[list[subprocess.Popen[str]]]:
    """The trainings a test starts; any still running at its end (a failed test) are killed."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
