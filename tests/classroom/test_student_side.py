"""The student's side of the class: what one `attnref homework submit` asks the server, and the
student's commands where there is no POSIX file lock (Windows: no ``fcntl``).

On 4104091 one submit of one file sent 7 requests and one of two files 13 (counted the same way,
in the application's log), the student's exercises fetched and each file checked twice (the
command's check, then the library's again); and ``experiments/store.py`` imported ``fcntl``:
`attnref train` stopped with a traceback where ``import fcntl`` fails, as on Windows.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.class_client import ClassClient
from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.student_answers import right_answer
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange.fetch import mine
from attention_ref.exercises.answer import Problem
from tests.classroom.conftest import ATTNREF, EXPERIMENT, student_env
from tests.configs import TINY_ARGS

pytestmark = pytest.mark.slow

NAME = "hw-side"


@pytest.fixture(scope="module")
def homework(server) -> Assignment:
    """Two exercises per student."""
    made = Assignment(name=NAME, exercises=2)
    return assigning.assign(ClassClient(server.url, server.admin), made).assignment


def a_student(server, name: str) -> tuple[str, str]:
    """A new student of the class (and of every assignment so far). The package's server is
    shared: an account of that name made by another test (the recorded class makes
    `class_plan.NAMES`) keeps its own password, and this test's would be refused (401) later,
    on whichever worker ran that test first. So the account must be new, and said so here."""
    who = (name, secrets.token_urlsafe(15))
    made = add_student(server.url, server.admin, *who, EXPERIMENT)
    assert made.created, f"{name!r} existed on the package's server: another test made it"
    assigning.enrol_everywhere(ClassClient(server.url, server.admin), name)
    return who


def what_the_server_knows(server, who: tuple[str, str], env: dict[str, str]) -> dict[str, object]:
    """For a refused account: whether the server has it, whether its credentials log in from
    here, and whether the command's environment carried them (a failure that says why)."""
    from attention_ref.classroom.connection.client import rest

    endpoint = "/api/2.0/mlflow/experiments/get-by-name"
    status, _ = rest(server.url, endpoint, query={"experiment_name": EXPERIMENT}, auth=who)
    sent = env.get("MLFLOW_TRACKING_USERNAME"), env.get("MLFLOW_TRACKING_PASSWORD") == who[1]
    name = {"username": who[0]}
    return {
        "account": rest(server.url, "/api/2.0/mlflow/users/get", query=name, auth=server.admin),
        "log in from here": status,
        "command's credentials (name, password right)": sent,
        "command's URI, the server's": (env.get("MLFLOW_TRACKING_URI"), server.url),
    }


def answers(server, who: tuple[str, str], folder: Path) -> list[Path]:
    """The student's right answers to both exercises, as files."""
    me = mine(ClassClient(server.url, who), NAME)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k, opt in enumerate(me.exercises, start=1):
        path = folder / f"answer-{k}.json"
        path.write_bytes(right_answer(Problem.of_exercise(opt), me.assignment.decimals))
        out.append(path)
    return out


def served(server) -> int:
    """How many requests the application has answered so far (its access log's lines)."""
    text = server.log.read_text(encoding="utf-8", errors="replace")
    return sum(1 for line in text.splitlines() if 'HTTP/1.1" ' in line)


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ATTNREF, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_one_submit_asks_five_requests_and_n_files_three_each_and_two(server, homework, tmp_path):
    """The student's exercises read once, each file checked once, then per file: the run made,
    the answer uploaded, the run finished; and one read-back: 5 requests for one file, 8 for
    two (the command's own, counted where the application logs each request it answers)."""
    who = a_student(server, "sid")
    one, two = answers(server, who, tmp_path / "mine")
    env = student_env(server.url, *who)
    before = served(server)
    out = run(["homework", "submit", NAME, str(one)], env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert served(server) - before == 5, out.stdout
    before = served(server)
    out = run(["homework", "submit", NAME, str(one), str(two)], env, tmp_path)
    assert out.returncode == 0, out.stderr
    assert served(server) - before == 3 * 2 + 2, out.stdout
    assert out.stdout.count("attempt 2") == 1 and out.stdout.count("attempt 1") == 1
    # the control: the count sees a request (a third submit of one file: 5 more)
    before = served(server)
    assert run(["homework", "submit", NAME, str(one)], env, tmp_path).returncode == 0
    assert served(server) - before == 5


#: a Python that has no fcntl (as on Windows): ``import fcntl`` fails in it
NO_FCNTL = 'import sys\nsys.modules["fcntl"] = None\n'


def test_the_student_commands_run_where_there_is_no_fcntl(server, homework, tmp_path):
    """explain, exercise, check, train (a local store), homework fetch and submit, each in a
    Python where ``import fcntl`` fails: each does its work (exit 0), no traceback."""
    blocked = tmp_path / "site"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text(NO_FCNTL, encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env = base | {"PYTHONPATH": str(blocked)}
    python = str(Path(ATTNREF).with_name("python"))
    control = subprocess.run(
        [python, "-c", "import fcntl"], env=env, capture_output=True, text=True
    )
    assert control.returncode != 0 and "fcntl" in control.stderr  # the block holds
    who = a_student(server, "wren")  # not "wanda": the recorded class's NAMES has her
    student = student_env(server.url, *who) | {"PYTHONPATH": str(blocked)}
    work = tmp_path / "work"
    work.mkdir()
    ex = work / "ex"
    store = f"sqlite:///{work / 'mlflow.db'}"
    commands = [
        (["explain", "--example", "life-is-awesome"], env),
        (["exercise", "--seed", "7", "--out", str(ex)], env),
        (
            [
                "train",
                *TINY_ARGS,
                "--max-steps",
                "2",
                "--eval-interval",
                "2",
                "--tracking-uri",
                store,
                "--out-dir",
                str(work / "runs"),
            ],
            env,
        ),
        (["homework", "fetch", NAME, "--out", "hw"], student),
    ]
    for args, e in commands:
        out = run(args, e, work)
        said = (args, out.stderr[-2000:])
        if out.returncode != 0 and "refused the account" in out.stderr:  # seen once under load
            said += (what_the_server_knows(server, who, e),)
        # a string, not a tuple: pytest prints a message whole, where it cuts a tuple's repr
        assert out.returncode == 0 and "Traceback" not in out.stderr, "\n".join(map(str, said))
    # check: the exercise's right answer; submit: the student's own
    import json

    from attention_ref.exercises.options import options_from_json

    opt = options_from_json(json.loads((ex / "answer.json").read_text())["exercise"])
    (work / "right.json").write_bytes(right_answer(Problem.of_exercise(opt), opt.decimals))
    checked = run(["check", "right.json"], env, work)
    assert checked.returncode == 0 and "Traceback" not in checked.stderr, checked.stderr
    files = answers(server, who, work / "hw")
    sent = run(["homework", "submit", NAME, str(files[0])], student, work)
    assert sent.returncode == 0 and "Traceback" not in sent.stderr, sent.stderr
    assert "attempt 1" in sent.stdout
