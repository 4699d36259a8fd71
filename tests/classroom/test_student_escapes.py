"""A student's string reaches the teacher's terminal shown, never obeyed (issue 57, finding 6).

On the real class server, alice names a run with a window title (``ESC ]0;…BEL``), a clear
screen (``ESC [2J``), a colour, an OSC 8 link, hidden text (``ESC [8m``), a C1 ``CSI`` and a
right-to-left override, and writes the same into a parameter; she submits an answer one of
whose keys holds bidirectional overrides and isolates. The teacher's commands that show them,
`attnref server runs`, `attnref runs` (the class's MLflow runs), `attnref server grade` and
`grades`, run as programs: to a pipe, and at a terminal (a pseudo-terminal, where rich writes
its own colours). None lets the student's characters through: each is shown as its escape
(`attention_ref.render.printable`), and the name is there, escaped.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios

import pytest

from attention_ref.classroom.connection.client import rest
from attention_ref.render.printable import printable
from tests.classroom.conftest import ATTNREF, EXPERIMENT
from tests.classroom.test_student_text import an_answer, assigned, send
from tests.cli.test_printable import PAYLOAD

pytestmark = pytest.mark.slow

#: an answer's key that reorders what is read after it (overrides and isolates)
BIDI_KEY = "Q\u202eevil\u2067x\u2069\u202c"
#: what must not reach the terminal: the student's sequences, whole, and their lone characters
RAW = ("\x1b]0;", "\x1b[2J", "\x1b[31m", "\x1b]8;", "\x1b[8m", "\x07", "\x9b", "\u202e", "\u2067")
HOMEWORK = "hw-escapes"
COLUMNS = 400  # wide enough that no name is folded: its escape is found whole


def teacher_env(server) -> dict[str, str]:
    """The teacher's environment: the class's URL and the admin's account, a wide terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_TRACKING_", "NO_"))}
    return env | {
        "MLFLOW_TRACKING_URI": server.url,
        "MLFLOW_TRACKING_USERNAME": server.admin[0],
        "MLFLOW_TRACKING_PASSWORD": server.admin[1],
        "ATTNREF_ADMIN_PASSWORD": server.admin[1],
        "COLUMNS": str(COLUMNS),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }


def at_a_pipe(args: list[str], env: dict[str, str], cwd) -> str:
    """``attnref ARGS`` with its output to a pipe: stdout and stderr, as bytes decoded."""
    done = subprocess.run([ATTNREF, *args], env=env, cwd=cwd, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return (done.stdout + done.stderr).decode("utf-8")


def at_a_terminal(args: list[str], env: dict[str, str], cwd) -> str:
    """``attnref ARGS`` at a pseudo-terminal ``COLUMNS`` wide (rich sees a terminal: colours
    on): everything it wrote there, as bytes decoded."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, COLUMNS, 0, 0))
    proc = subprocess.Popen(
        [ATTNREF, *args], stdin=follower, stdout=follower, stderr=follower, env=env, cwd=cwd
    )
    os.close(follower)
    chunks = []
    try:
        while select.select([leader], [], [], 300)[0]:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # EIO: the program closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        code = proc.wait(timeout=60)
    text = b"".join(chunks).decode("utf-8")
    assert code == 0, text
    return text


@pytest.fixture(scope="module")
def planted(server, students) -> str:
    """alice's run named ``PAYLOAD`` with a parameter ``attention`` of the same, and her
    answer to ``HOMEWORK`` with a step under ``BIDI_KEY``; the run's id."""
    alice = ("alice", students["alice"])
    exp = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=alice,
        query={"experiment_name": EXPERIMENT},
    )[1]["experiment"]["experiment_id"]
    status, made = rest(
        server.url,
        "/api/2.0/mlflow/runs/create",
        {"experiment_id": exp, "run_name": PAYLOAD},
        auth=alice,
    )
    assert status == 200, made
    run_id = made["run"]["info"]["run_id"]
    param = {"run_id": run_id, "key": "attention", "value": PAYLOAD}
    assert rest(server.url, "/api/2.0/mlflow/runs/log-parameter", param, auth=alice)[0] == 200
    a = assigned(server, HOMEWORK, 1)
    doc = an_answer(a, "alice")
    doc["heads"][0][BIDI_KEY] = [[1]]
    send(server, students, HOMEWORK, "alice", 1, doc)
    return run_id


def no_raw(text: str, what: str) -> None:
    found = [raw for raw in RAW if raw in text]
    assert not found, (what, found, text)


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
def test_the_teachers_run_tables_show_a_run_name_escaped(server, planted, tmp_path, terminal):
    """`attnref server runs` and `attnref runs` on the class: the run's name (and its
    parameter, in `runs`) shown escaped, whole, on alice's run's line; nothing raw."""
    run = at_a_terminal if terminal else at_a_pipe
    env = teacher_env(server)
    shown = printable(PAYLOAD)
    for args in (
        ["server", "runs", "--experiment", EXPERIMENT],
        ["runs", "--experiment", EXPERIMENT, "--tracking-uri", server.url],
    ):
        out = run(args, env, tmp_path)
        no_raw(out, " ".join(args))
        assert ("\x1b[1m" in out) is terminal, out  # rich's own bold header: a terminal's
        line = next((x for x in out.splitlines() if planted in x), "")
        assert shown in line, (args, out)


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
def test_the_gradebook_shows_an_answers_key_escaped(server, planted, tmp_path, terminal):
    """`attnref server grade` and `grades --summary`: the reason that quotes alice's key
    shows its overrides and isolates escaped."""
    run = at_a_terminal if terminal else at_a_pipe
    env = teacher_env(server)
    for args in (["server", "grade", HOMEWORK], ["server", "grades", HOMEWORK, "--summary"]):
        out = run(args, env, tmp_path)
        no_raw(out, " ".join(args))
        assert ("\x1b[1m" in out) is terminal, out  # rich's own bold header: a terminal's
        assert "alice" in out and printable(BIDI_KEY) in out, (args, out)
