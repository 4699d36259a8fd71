"""A private class folder: no other user of the machine reads a student's answer or the logs.

Issue 57's finding 7 on c0e9f9b: the class folder and ``artifacts/`` were 0755, the answers
0644, ``logs/`` 0755 with the edge's access log 0644: any local user of a shared lab or
JupyterHub host read every student's ``answer.json`` and who asked what. Here a folder left
open by an older start is mended at start, the start says so, and a walk of the running
class's folder finds nothing another user may read.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from attention_ref.classroom.hosting.server import ClassServer
from attention_ref.cli.server_start import print_welcome
from tests.classroom.conftest import class_dir, free_port

#: what other users' processes of the class must enter (as root: PostgreSQL runs as
#: ``postgres``, nginx's workers as ``www-data``), never list: 0711, or 0700 for a user
TRAVERSED = (".", "edge", "edge/tmp")
#: the sockets, each writable by others because connecting needs it, each in a folder that
#: guards it: the application's (uvicorn makes them 0666) in ``app/`` (0710, nginx's group
#: only), PostgreSQL's (0777) in ``postgres/socket`` (0700)
SOCKETS = ("app/mlflow-0.sock", "postgres/socket/.s.PGSQL.5432")
#: what an older attnref left open: the folder, the answers, the logs
LEFT_OPEN = {
    ".": 0o755,
    "artifacts": 0o755,
    "artifacts/1": 0o755,
    "artifacts/1/answer.json": 0o644,
    "logs": 0o755,
    "logs/edge-access.log": 0o644,
}


@pytest.fixture(scope="module")
def mended() -> Iterator[ClassServer]:
    """A class started on a folder an older start left readable by everyone (`LEFT_OPEN`)."""
    root = class_dir("attnref-private-")
    folder = root / "class"
    for name, mode in LEFT_OPEN.items():
        path = folder / name
        if name.endswith((".json", ".log")):
            path.write_text('{"a": 1}\n', encoding="utf-8")
        else:
            path.mkdir(parents=True, exist_ok=True)
        path.chmod(mode)
    server = ClassServer(
        folder, secrets.token_urlsafe(18), port=free_port(), workers=1, experiment="private"
    )
    with server:
        yield server
    shutil.rmtree(root, ignore_errors=True)


def others_may_read(root: Path) -> list[str]:
    """Everything under ``root`` that a user other than its owner (group or others) may read
    or write, or a folder they may enter, beyond `TRAVERSED`, ``app/`` and `SOCKETS`."""
    traverse = 0o711 if os.geteuid() == 0 else 0o700
    found = []
    for folder, _dirs, files in os.walk(root):
        for path in (Path(folder), *(Path(folder) / f for f in files)):
            if path != Path(folder) and path.is_dir():
                continue
            rel = path.relative_to(root).as_posix() if path != root else "."
            st = path.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISSOCK(st.st_mode) and rel in SOCKETS:
                continue
            if rel in TRAVERSED:
                ok = mode == traverse
            elif rel == "app":  # nginx's workers reach the sockets (their group, as root)
                ok = mode == 0o710
            else:
                ok = not mode & 0o077
            if not ok:
                found.append(f"{rel} {oct(mode)}")
    return found


def test_a_folder_left_open_is_mended_and_the_start_says_so(mended, capsys):
    line = mended.mended
    assert line is not None and line.startswith(f"made the class folder {mended.root} private")
    assert f": {len(LEFT_OPEN)} files and folders" in line
    for name in LEFT_OPEN:
        assert not (mended.root / name).stat().st_mode & 0o066, name
    print_welcome(mended)  # what attnref server start prints: the line, before the welcome
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == line and printed[1].startswith("class server on ")


def test_nothing_in_a_running_class_is_readable_by_other_users(mended, monkeypatch):
    # a student's answer, written now by the application server
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", mended.admin[0])
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", mended.admin[1])
    client = MlflowClient(mended.url)
    exp = client.get_experiment_by_name("private")
    assert exp is not None
    run = client.create_run(exp.experiment_id)
    client.log_text(run.info.run_id, '{"answers": []}', "answer.json")
    answers = list(mended.artifacts.rglob("answer.json"))
    assert len(answers) == 2  # the one left open, the one written now
    assert all(stat.S_IMODE(a.stat().st_mode) == 0o600 for a in answers)
    # and nothing else of the class: logs, certificate and keys, databases, buffers
    assert (mended.root / "logs" / "mlflow-server.log").is_file()
    assert others_may_read(mended.root) == []
