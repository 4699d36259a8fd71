"""Homework on the real class server (the package's PostgreSQL-backed server), over HTTP.

First what the judges must refuse: reading another student's answers (every read route a
student might try), forging a grade (writing a grade field anywhere, writing into the
teacher's gradebook or another's homework, changing a submission after it is finished,
claiming another time), submitting as someone else. Then the flow through the commands
(assign, fetch, submit, status, grade, grades), resubmissions and which one counts, lateness
by the server's clock, an answer changed on disk after it was finished, a submission that
cannot be stored whole, and bad input: one line, exit 2, nothing stored.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.class_client import ClassClient, HomeworkError, answer_path
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.coursework.assignment import (
    ANSWER_SHA_TAG,
    RECEIVED_TAG,
    Assignment,
    gradebook_experiment,
)
from attention_ref.classroom.coursework.gradebook import Standing
from attention_ref.classroom.coursework.student_answers import mistaken_answer, right_answer
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange import fetch
from attention_ref.classroom.exchange import grade as grading
from attention_ref.classroom.exchange import submit as submitting
from attention_ref.classroom.gate.refusals import HIDDEN, REFUSAL
from attention_ref.exercises.answer import Problem
from tests.classroom.conftest import ATTNREF, free_port, in_process, one_line_error, student_env
from tests.classroom.test_screens import table_rows

pytestmark = pytest.mark.slow

NAME = "hw-test"
UTC = dt.UTC


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ATTNREF, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def here(capsys, monkeypatch):
    """``run`` in this process (`in_process`): ``env``'s MLflow and admin variables, ``cwd``
    as the folder."""

    def call(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
        return in_process(monkeypatch, capsys, args, env, cwd)

    return call


def teacher_env(server) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
    return env | {"MLFLOW_TRACKING_URI": server.url, "ATTNREF_ADMIN_PASSWORD": server.admin[1]}


def answer(a: Assignment, student: str, k: int = 1, mistake: str | None = None) -> bytes:
    prob = Problem.of_exercise(a.exercises_of(student)[k - 1])
    if mistake is None:
        return right_answer(prob, a.decimals)
    text = mistaken_answer(prob, a.decimals, [mistake])
    assert text is not None
    return text


def finished_runs(server, exp_id: str) -> list[dict]:
    found = ClassClient(server.url, server.admin).search_runs(exp_id)
    return [r for r in found if r["info"]["status"] == "FINISHED"]


def tags_of(run: dict) -> dict[str, str]:
    return {t["key"]: t["value"] for t in run["data"].get("tags", [])}


@pytest.fixture(scope="module")
def assignment(server, students) -> Assignment:
    """Two exercises for alice, bob, carol and dave, due in a week."""
    due = dt.datetime.now(UTC).replace(microsecond=0) + dt.timedelta(days=7)
    done = assigning.assign(
        ClassClient(server.url, server.admin), Assignment(name=NAME, exercises=2, due=due)
    )
    assert set(students) <= set(done.enrolled) and done.created
    return done.assignment


def test_the_gradebook_says_what_each_column_is(server, assignment):
    from attention_ref.classroom.coursework.assignment import gradebook_experiment
    from attention_ref.classroom.coursework.gradebook import RUN_COLUMNS as COLUMNS

    found = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": gradebook_experiment(NAME)},
    )[1]
    tags = {t["key"]: t["value"] for t in found["experiment"].get("tags", [])}
    note = tags["mlflow.note.content"]
    assert note.startswith(f"Gradebook of the assignment **{NAME}**")
    assert all(f"`{name}`: {words}" in note for name, words in COLUMNS.items())


def test_the_gradebook_keeps_the_view_its_link_opens(server, assignment):
    """The gradebook holds the view (the grade's columns) that its link names; one made before
    the view existed gets it when the assignment is given again."""
    from attention_ref.classroom.coursework.gradebook import VIEW, VIEW_TAG, view_state

    def tags() -> dict[str, str]:
        found = rest(
            server.url,
            "/api/2.0/mlflow/experiments/get-by-name",
            auth=server.admin,
            query={"experiment_name": gradebook_experiment(NAME)},
        )[1]
        return {t["key"]: t["value"] for t in found["experiment"].get("tags", [])}

    assert tags()[VIEW_TAG] == view_state() and VIEW_TAG.endswith("." + VIEW)
    found = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": gradebook_experiment(NAME)},
    )[1]
    exp_id = found["experiment"]["experiment_id"]
    gone = rest(
        server.url,
        "/api/2.0/mlflow/experiments/delete-experiment-tag",
        {"experiment_id": exp_id, "key": VIEW_TAG},
        auth=server.admin,
    )
    assert gone[0] == 200, gone
    assert VIEW_TAG not in tags()  # the control: a gradebook of an earlier attnref
    again = assigning.assign(ClassClient(server.url, server.admin), assignment, due_given=False)
    assert not again.created and tags()[VIEW_TAG] == view_state()


@pytest.fixture(scope="module")
def alices(server, students, assignment) -> submitting.Submitted:
    """alice's right answer to her exercise 1, submitted."""
    auth = ("alice", students["alice"])
    return submitting.submit(ClassClient(server.url, auth), NAME, answer(assignment, "alice"))


# --- copying: another student's answers cannot be read ------------------------------------------


def test_a_student_reads_no_other_students_answers(server, students, assignment, alices):
    url, bob, alice = server.url, ("bob", students["bob"]), ("alice", students["alice"])
    theirs, mine = (
        fetch.mine(ClassClient(url, alice), NAME).experiment_id,
        fetch.mine(ClassClient(url, bob), NAME).experiment_id,
    )
    run_id = alices.run_id
    q = {"run_id": run_id}
    reads = {
        "the run": ("/api/2.0/mlflow/runs/get", None, q),
        "its files": ("/api/2.0/mlflow/artifacts/list", None, q),
        "the answer (artifact proxy)": (answer_path(theirs, run_id), None, None),
        "the answer (get-artifact)": ("/get-artifact", None, {**q, "path": "answer.json"}),
        "a presigned link": (
            "/api/2.0/mlflow/artifacts/presigned-download-url",
            {"run_id": run_id, "path": "answer.json"},
            None,
        ),
        "a metric's history": (
            "/api/2.0/mlflow/metrics/get-history",
            None,
            {**q, "metric_key": "x"},
        ),
        "her experiment": ("/api/2.0/mlflow/experiments/get", None, {"experiment_id": theirs}),
        "her experiment by name": (
            "/api/2.0/mlflow/experiments/get-by-name",
            None,
            {"experiment_name": f"homework/{NAME}/alice"},
        ),
        "the gradebook": (
            "/api/2.0/mlflow/experiments/get-by-name",
            None,
            {"experiment_name": gradebook_experiment(NAME)},
        ),
    }
    for what, (endpoint, body, query) in reads.items():
        status, got = rest(url, endpoint, body, auth=bob, query=query)
        assert status == 403, (what, status, got)
        # the control: what the gate and MLflow refuse bob, they do not refuse the teacher
        assert rest(url, endpoint, body, auth=server.admin, query=query)[0] != 403, what
    # searches are filtered, GraphQL answers nothing
    status, found = rest(url, "/api/2.0/mlflow/runs/search", {"experiment_ids": [theirs]}, auth=bob)
    assert status == 200 and not found.get("runs")
    query = 'query { mlflowGetRun(input: {runId: "RUN"}) { run { info { runId } } } }'
    query = query.replace("RUN", run_id)
    status, got = rest(url, "/graphql", {"query": query}, auth=bob)
    assert status == 200 and got["data"]["mlflowGetRun"] is None
    # ... and says why, in the gate's one answer (MLflow's UI shows it; it showed a blank page)
    assert [e["message"] for e in got["errors"]] == [REFUSAL + HIDDEN]
    book = rest(
        url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": gradebook_experiment(NAME)},
    )[1]["experiment"]
    ask = (
        'query { mlflowGetExperiment(input: {experimentId: "ID"}) '
        "{ experiment { name } apiError { code } } }"
    )
    status, got = rest(
        url, "/graphql", {"query": ask.replace("ID", book["experiment_id"])}, auth=bob
    )
    assert got["data"]["mlflowGetExperiment"] is None, got
    assert [e["message"] for e in got["errors"]] == [REFUSAL + HIDDEN]
    # the controls: the teacher reads the gradebook, bob his own homework, with no error
    for who, exp in ((server.admin, book["experiment_id"]), (bob, mine)):
        status, got = rest(url, "/graphql", {"query": ask.replace("ID", exp)}, auth=who)
        assert (
            status == 200
            and not got.get("errors")
            and got["data"]["mlflowGetExperiment"]["experiment"]["name"].startswith(
                f"homework/{NAME}"
            )
        ), got
    names = {
        e["name"]
        for e in rest(
            url, "/api/2.0/mlflow/experiments/search", auth=bob, query={"max_results": "1000"}
        )[1]["experiments"]
    }
    # bob's own of each assignment (the package's other homework tests may have given him more),
    # never another student's, never a gradebook
    homework = {n for n in names if n.startswith("homework/")}
    assert f"homework/{NAME}/bob" in homework and f"homework/{NAME}/alice" not in homework
    assert all(n.count("/") == 2 and n.endswith("/bob") for n in homework), homework
    # the controls: the same reads as alice and as the teacher find her answer
    status, got = rest(url, "/api/2.0/mlflow/runs/search", {"experiment_ids": [theirs]}, auth=alice)
    assert [r["info"]["run_id"] for r in got["runs"]] == [run_id]
    sent = answer(assignment, "alice")
    assert ClassClient(url, server.admin).download_answer(theirs, run_id) == sent
    assert ClassClient(url, alice).download_answer(theirs, run_id) == sent


# --- forgery: no grade is written but the teacher's ---------------------------------------------


def test_a_student_cannot_forge_a_grade_or_a_submission(server, students, assignment, alices):
    url, bob, alice = server.url, ("bob", students["bob"]), ("alice", students["alice"])
    mine = fetch.mine(ClassClient(url, bob), NAME).experiment_id
    hers = fetch.mine(ClassClient(url, alice), NAME).experiment_id
    book = grading.grade(ClassClient(url, server.admin), NAME)  # the gradebook's runs exist
    book_run = ClassClient(url, server.admin).search_runs(book.gradebook_id)[0]["info"]["run_id"]

    def create(exp: str, **more) -> tuple[int, dict]:
        return rest(url, "/api/2.0/mlflow/runs/create", {"experiment_id": exp, **more}, auth=bob)

    # writing into the teacher's gradebook or alice's homework: MLflow's own permissions
    assert create(book.gradebook_id)[0] == 403
    assert create(hers)[0] == 403
    grade_tag = {"run_id": book_run, "key": "attnref.grade.steps", "value": "18/18"}
    assert rest(url, "/api/2.0/mlflow/runs/set-tag", grade_tag, auth=bob)[0] == 403
    metric = {"run_id": book_run, "key": "steps_right", "value": 18, "timestamp": 0, "step": 0}
    assert rest(url, "/api/2.0/mlflow/runs/log-metric", metric, auth=bob)[0] == 403
    assert (
        rest(url, "/api/2.0/mlflow/runs/set-tag", {**grade_tag, "run_id": alices.run_id}, auth=bob)[
            0
        ]
        == 403
    )

    # no grade or homework field on any run of his, at creation or after
    for key in ("attnref.grade.steps", "attnref.grade.status", ANSWER_SHA_TAG, RECEIVED_TAG):
        status, said = create(mine, tags=[{"key": key, "value": "x"}])
        assert status == 403 and said["message"].startswith("class server: "), (key, said)
    found = rest(
        url, "/api/2.0/mlflow/experiments/get-by-name", auth=bob, query={"experiment_name": "class"}
    )[1]
    class_exp = found["experiment"]["experiment_id"]
    own = create(class_exp)[1]["run"]["info"]["run_id"]
    for endpoint, body in (
        (
            "/api/2.0/mlflow/runs/set-tag",
            {"run_id": own, "key": "attnref.grade.steps", "value": "18/18"},
        ),
        (
            "/api/2.0/mlflow/runs/log-batch",
            {
                "run_id": own,
                "tags": [{"key": "attnref.homework.received", "value": "2000-01-01T00:00:00Z"}],
            },
        ),
        (
            "/api/2.0/mlflow/runs/log-metric",
            {
                "run_id": own,
                "key": "attnref.grade.steps_right",
                "value": 18,
                "timestamp": 0,
                "step": 0,
            },
        ),
    ):
        assert rest(url, endpoint, body, auth=bob)[0] == 403, endpoint
    # the control: an ordinary tag on his own class run is his to write
    ok = rest(
        url, "/api/2.0/mlflow/runs/set-tag", {"run_id": own, "key": "note", "value": "x"}, auth=bob
    )
    assert ok[0] == 200

    # a submission of his holds its answer and nothing else; its times are the server's
    t0 = dt.datetime.now(UTC)
    status, made = create(
        mine, start_time=0, user_id="alice", tags=[{"key": "mlflow.user", "value": "alice"}]
    )
    assert status == 200
    info = made["run"]["info"]
    sub = info["run_id"]
    assert info["user_id"] == "bob" and tags_of(made["run"])["mlflow.user"] == "bob"
    assert abs(int(info["start_time"]) / 1000 - t0.timestamp()) < 60  # not the 1970 claimed
    path = answer_path(mine, sub)
    refused = {
        "a tag": ("/api/2.0/mlflow/runs/set-tag", {"run_id": sub, "key": "n", "value": "x"}),
        "a metric": (
            "/api/2.0/mlflow/runs/log-metric",
            {"run_id": sub, "key": "steps_right", "value": 18, "timestamp": 0},
        ),
        "a parameter": (
            "/api/2.0/mlflow/runs/log-parameter",
            {"run_id": sub, "key": "p", "value": "1"},
        ),
        "a batch": ("/api/2.0/mlflow/runs/log-batch", {"run_id": sub, "metrics": []}),
        "finished without an answer": (
            "/api/2.0/mlflow/runs/update",
            {"run_id": sub, "status": "FINISHED"},
        ),
        "renamed": ("/api/2.0/mlflow/runs/update", {"run_id": sub, "run_name": "x"}),
        "re-opened": ("/api/2.0/mlflow/runs/update", {"run_id": sub, "status": "RUNNING"}),
    }
    for what, (endpoint, body) in refused.items():
        status, said = rest(url, endpoint, body, auth=bob)
        assert status == 403 and said["message"].startswith("class server: "), (what, said)
    other = path.replace("answer.json", "notes.txt")
    assert rest(url, other, data=b"x", method="PUT", auth=bob)[0] == 403
    text = answer(assignment, "bob")
    assert rest(url, path, data=text, method="PUT", auth=bob)[0] == 200
    assert rest(url, path, data=b"{}", method="PUT", auth=bob)[0] == 403  # once only
    ended = rest(
        url,
        "/api/2.0/mlflow/runs/update",
        {"run_id": sub, "status": "FINISHED", "end_time": 0},
        auth=bob,
    )
    assert ended[0] == 200
    status, got = rest(url, "/api/2.0/mlflow/runs/get", auth=bob, query={"run_id": sub})
    info, tags = got["run"]["info"], tags_of(got["run"])
    assert abs(int(info["end_time"]) / 1000 - dt.datetime.now(UTC).timestamp()) < 60
    assert tags[ANSWER_SHA_TAG] == hashlib.sha256(text).hexdigest()
    assert abs(
        dt.datetime.fromisoformat(tags[RECEIVED_TAG].replace("Z", "+00:00")) - dt.datetime.now(UTC)
    ) < dt.timedelta(seconds=60)
    # finished is final
    for endpoint, body, method in (
        (path, None, "PUT"),
        ("/api/2.0/mlflow/runs/update", {"run_id": sub, "status": "RUNNING"}, None),
        ("/api/2.0/mlflow/runs/update", {"run_id": sub, "status": "FAILED"}, None),
        ("/api/2.0/mlflow/runs/delete", {"run_id": sub}, None),
    ):
        data = b"{}" if method == "PUT" else None
        assert rest(url, endpoint, body, auth=bob, method=method, data=data)[0] == 403, endpoint
    # the teacher's side: the admin writes a grade on bob's submission (the control)
    teacher_tag = {"run_id": sub, "key": "attnref.grade.steps", "value": "18/18"}
    assert rest(url, "/api/2.0/mlflow/runs/set-tag", teacher_tag, auth=server.admin)[0] == 200


def test_a_student_cannot_submit_as_someone_else(server, students, assignment, tmp_path):
    """bob has alice's answer file: it names her exercise, not his, and is refused before
    anything is sent; whatever bob sends is bob's."""
    url, bob = server.url, ("bob", students["bob"])
    mine = fetch.mine(ClassClient(url, bob), NAME).experiment_id
    before = len(ClassClient(url, server.admin).search_runs(mine))
    hers = tmp_path / "answer-1.json"
    hers.write_bytes(answer(assignment, "alice"))
    out = run(["homework", "submit", NAME, str(hers)], student_env(url, *bob), tmp_path)
    line = one_line_error(out)
    assert "not one of your exercises" in line and "seed" in line
    assert len(ClassClient(url, server.admin).search_runs(mine)) == before
    with pytest.raises(HomeworkError, match="not one of your exercises"):
        submitting.submit(ClassClient(url, bob), NAME, answer(assignment, "alice"))
    assert len(ClassClient(url, server.admin).search_runs(mine)) == before


# --- the flow, through the commands ------------------------------------------------------------


def test_assign_fetch_submit_grade_through_the_commands(server, students, tmp_path, here):
    url, carol = server.url, ("carol", students["carol"])
    teacher, student = teacher_env(server), student_env(url, *carol)
    out = here(
        [
            "server",
            "assign",
            "hw-cli",
            "--exercises",
            "2",
            "--due",
            "2099-01-01T12:00Z",
            "--lang",
            "pt",
            "--decimals",
            "2",
        ],
        teacher,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "created assignment 'hw-cli'" in out.stdout and "due 2099-01-01 12:00 UTC" in out.stdout
    again = here(
        ["server", "assign", "hw-cli", "--exercises", "2", "--lang", "pt", "--decimals", "2"],
        teacher,
        tmp_path,
    )
    assert again.returncode == 0 and "updated assignment" in again.stdout
    assert "moved" not in again.stdout and "due 2099-01-01" in again.stdout  # kept
    other = here(["server", "assign", "hw-cli", "--exercises", "3"], teacher, tmp_path)
    said = one_line_error(other)
    assert "exists with other exercises (--exercises 3 given, 2 assigned" in said, said
    assert "Leave those options out to keep the assignment's" in said
    # run again with only what changes, as assign --help says: the rest is kept (issue 58)
    seeds = fetch.mine(ClassClient(url, carol), "hw-cli").exercises
    for step, then in (
        (["--due", "2099-02-01T12:00Z"], "due 2099-02-01 12:00 UTC"),
        (["--late-penalty", "10"], "10%"),
        (["--due", "2099-03-01T12:00Z"], "moved from 2099-02-01 12:00 UTC"),
        (["--lang", "pt"], "updated assignment"),  # given as it is: kept
    ):
        moved = here(["server", "assign", "hw-cli", *step], teacher, tmp_path)
        assert moved.returncode == 0, moved.stderr
        assert then in " ".join(moved.stdout.split()), moved.stdout
    assert fetch.mine(ClassClient(url, carol), "hw-cli").exercises == seeds  # the same ones
    refused = here(
        ["server", "assign", "hw-cli", "--lang", "en", "--due", "2099-04-01"], teacher, tmp_path
    )
    assert "--lang en given, pt assigned" in one_line_error(refused)
    assert "due 2099-03-01" in " ".join(
        here(["server", "assign", "hw-cli"], teacher, tmp_path).stdout.split()
    )  # the refused one changed nothing

    out = here(["homework", "fetch", "hw-cli", "--out", "mine"], student, tmp_path)
    assert out.returncode == 0, out.stderr
    # the assignment is Portuguese: so is what fetch says (issue 42, item 7)
    assert "tarefa 'hw-cli' para carol: 2 exercícios, prazo" in out.stdout, out.stdout
    # the command to copy on a line of its own, whole at any width
    assert "preencha as respostas e depois:\n  attnref homework submit hw-cli" in out.stdout
    assert "  escrito " in out.stdout and "written" not in out.stdout
    folder = tmp_path / "mine"
    assert sorted(p.name for p in folder.iterdir()) == [
        "answer-1.json",
        "answer-2.json",
        "exercise-1.json",
        "exercise-2.json",
        "statement-1.md",
        "statement-1.tex",
        "statement-2.md",
        "statement-2.tex",
    ]
    statement = (folder / "statement-1.md").read_text(encoding="utf-8")
    assert "Lição de casa hw-cli, exercício 1 de 2" in statement and "carol" in statement
    # titled by the homework, not by the exercise's 19-digit seed (issue 42, item 10)
    first = statement.splitlines()[0]
    assert first == "# Lição de casa hw-cli, exercício 1 de 2: atenção multi-cabeça mascarada à mão"
    assert not re.search(r"\d{6,}", first), first
    # the closing paragraph is the homework's: its file, its command (not the exercise's)
    assert "attnref homework submit hw-cli answer-1.json" in statement
    assert "answer.json" not in statement and "attnref exercise --out" not in statement
    numbers = json.loads((folder / "exercise-1.json").read_text(encoding="utf-8"))
    assert {"X", "heads"} <= set(numbers)  # the problem, for a program of the student's own
    me = fetch.mine(ClassClient(url, carol), "hw-cli")  # her copy: her seeds, no salt
    teachers = assigning.assignments(ClassClient(url, server.admin))
    a = next(x for x in teachers if x.name == "hw-cli")  # the teacher's, with its salt
    template = json.loads((folder / "answer-1.json").read_text(encoding="utf-8"))
    assert template["exercise"] == me.exercises[0].to_json() == a.exercises_of("carol")[0].to_json()
    (folder / "answer-1.json").write_bytes(answer(a, "carol", 1))
    (folder / "answer-2.json").write_bytes(answer(a, "carol", 2, "no_mask"))
    refetched = here(["homework", "fetch", "hw-cli", "--out", "mine"], student, tmp_path)
    assert refetched.returncode == 0 and refetched.stdout.count("mantido ") == 2  # her work stays
    assert (folder / "answer-1.json").read_bytes() == answer(a, "carol", 1)

    right = run(["homework", "submit", "hw-cli", "mine/answer-1.json"], student, tmp_path)
    assert right.returncode == 0, right.stderr
    assert "Todos os passos que você deu estão certos." in right.stdout
    assert "como exercício 1 de 'hw-cli': tentativa 1" in right.stdout
    assert "no prazo" in right.stdout
    wrong = here(["homework", "submit", "hw-cli", "mine/answer-2.json"], student, tmp_path)
    assert wrong.returncode == 1, wrong.stderr
    assert "Diagnóstico: sem a máscara causal" in wrong.stdout

    graded = here(["server", "grade", "hw-cli"], teacher, tmp_path)
    assert graded.returncode == 0, graded.stderr
    assert "graded 2 submissions of 'hw-cli'" in graded.stdout
    book = here(["server", "grades", "hw-cli", "--summary", "--csv", "book.csv"], teacher, tmp_path)
    assert book.returncode == 0, book.stderr
    rows = {
        (r["student"], r["exercise"]): r
        for r in csv.DictReader((tmp_path / "book.csv").open(encoding="utf-8"))
    }
    assert {(s, k) for s in students for k in "12"} <= set(rows)  # every student, exercise
    assert rows[("carol", "1")]["steps_right"] == rows[("carol", "1")]["steps_given"] == "18"
    assert rows[("carol", "2")]["diagnosis"] == "no_mask"
    assert rows[("carol", "2")]["first_wrong"] == "heads[0].S_masked"
    assert rows[("dave", "1")]["status"] == "no submission"
    assert "no_mask" in book.stdout and "First wrong step" in book.stdout
    # the same grades as Moodle and Canvas import them
    assert f"book.csv ({len(rows)} rows, one per student and exercise)" in book.stdout
    for system, header in (("moodle", "username"), ("canvas", "Student")):
        out = here(
            ["server", "grades", "hw-cli", "--csv-format", system, "--account-names"],
            teacher,
            tmp_path,
        )
        assert out.returncode == 0, out.stderr
        raw = (tmp_path / f"hw-cli-{system}.csv").read_bytes()
        assert raw.startswith("\ufeff".encode())  # what a spreadsheet needs to read UTF-8
        lines = raw.decode("utf-8-sig").splitlines()
        assert lines[0].startswith(header + ",")
        assert any(line.startswith("carol,") for line in lines)
        # the rows it says it wrote are the students' rows it holds (not the gradebook's)
        held = lines[1:] if system == "moodle" else lines[2:]  # Canvas: "Points Possible"
        assert f"-{system}.csv ({len(held)} rows, one per student)" in out.stdout
        assert len(held) == len({s for s, _ in rows}) < len(rows)
    bad = here(["server", "grades", "hw-cli", "--csv-format", "blackboard"], teacher, tmp_path)
    assert "choose attnref, moodle, canvas" in one_line_error(bad)
    # a roster maps the accounts to Moodle's e-mail addresses; one without carol is refused
    # before the file is touched (Moodle would refuse the whole file for her)
    everyone = sorted({s for s, _ in rows})
    roster = tmp_path / "roster.csv"
    roster.write_text("account,email\n" + "".join(f"{s},{s}@uni.example\n" for s in everyone))
    mapped = here(
        ["server", "grades", "hw-cli", "--csv-format", "moodle", "--roster", str(roster)],
        teacher,
        tmp_path,
    )
    assert mapped.returncode == 0, mapped.stderr
    text = (tmp_path / "hw-cli-moodle.csv").read_text(encoding="utf-8-sig")
    assert text.startswith("email,hw-cli,hw-cli feedback\n") and "carol@uni.example," in text
    said = " ".join(mapped.stdout.split())  # the steps are broken at 80 columns
    assert "maximum grade 36" in said and "Map from email to email" in said
    roster.write_text("account,email\n" + "".join(f"{s},{s}@x\n" for s in everyone if s != "carol"))
    refused = here(
        ["server", "grades", "hw-cli", "--csv-format", "moodle", "--roster", str(roster)],
        teacher,
        tmp_path,
    )
    assert "the roster has no line for carol" in one_line_error(refused)
    assert (tmp_path / "hw-cli-moodle.csv").read_text(encoding="utf-8-sig") == text
    # the student sees the teacher's grade on her submissions
    status = here(["homework", "status", "hw-cli"], student, tmp_path)
    assert status.returncode == 0, status.stderr
    cells = [cell for row in table_rows(status.stdout) for cell in row]  # over lines at 80
    assert "18/18" in cells and "sem a máscara causal" in " ".join(cells), status.stdout
    assert "no_mask" not in status.stdout and "hw-cli para carol: 2 envios" in status.stdout
    # a student may not read the gradebook, nor grade
    assert "no assignment 'hw-cli'" in one_line_error(
        here(["server", "grades", "hw-cli"], student, tmp_path)
    )


# --- which attempt counts; late by the server's clock -------------------------------------------


def test_resubmissions_keep_the_history_and_the_latest_counts(server, students, assignment):
    url, dave = server.url, ("dave", students["dave"])
    sent = [
        submitting.submit(ClassClient(url, dave), NAME, answer(assignment, "dave", 1, m))
        for m in ("no_scale", None, "K_Qt")
    ]
    assert [s.attempt for s in sent] == [1, 2, 3]
    assert [s.report.all_right for s in sent] == [False, True, False]

    def daves(**kw) -> object:
        done = grading.grade(ClassClient(url, server.admin), NAME, **kw)
        return next(r for r in done.rows if r.student == "dave" and r.exercise == 1)

    latest = daves()
    assert (latest.attempts, latest.submission, latest.diagnosis) == (3, sent[2].run_id, "K_Qt")
    best = daves(best=True)
    assert best.submission == sent[1].run_id and best.steps_right == best.steps_given
    chosen = daves(use=[sent[0].run_id])
    assert chosen.submission == sent[0].run_id and chosen.diagnosis == "no_scale"
    with pytest.raises(HomeworkError, match=r"--use 0+: no finished submission"):
        grading.grade(ClassClient(url, server.admin), NAME, use=["0" * 32])
    # every attempt is kept, each with its own grade for dave to read
    _, mine = submitting.my_submissions(ClassClient(url, dave), NAME)
    graded = {s.run_id: s.grade for s in mine}
    assert all(graded[s.run_id]["attnref.grade.exercise"] == "1" for s in sent)
    assert [graded[s.run_id]["attnref.grade.counts"] for s in sent] == ["yes", "no", "no"]


def test_late_is_the_servers_clock_and_moves_with_the_due_time(server, students, tmp_path):
    url, bob = server.url, ("bob", students["bob"])
    past = dt.datetime.now(UTC).replace(microsecond=0) - dt.timedelta(hours=1)
    a = assigning.assign(
        ClassClient(url, server.admin), Assignment(name="hw-late", due=past)
    ).assignment
    sent = submitting.submit(ClassClient(url, bob), "hw-late", answer(a, "bob"))
    assert sent.late is not None and sent.late >= dt.timedelta(hours=1)
    row = next(
        r
        for r in grading.grade(ClassClient(url, server.admin), "hw-late").rows
        if r.student == "bob"
    )
    assert row.late is not None and row.late_text.startswith("late by 1 h")
    # the teacher moves the due time: the same submission is on time
    later = dt.datetime.now(UTC).replace(microsecond=0) + dt.timedelta(days=1)
    moved = assigning.assign(ClassClient(url, server.admin), Assignment(name="hw-late", due=later))
    assert moved.due_moved and moved.assignment.salt == a.salt  # the same exercises
    row = next(
        r
        for r in grading.grade(ClassClient(url, server.admin), "hw-late").rows
        if r.student == "bob"
    )
    assert row.late is None and row.submission == sent.run_id


# --- what is graded is what was received -------------------------------------------------------


def test_an_answer_changed_after_it_was_finished_is_not_graded(server, students, assignment):
    """Only the server's side could change the file (the teacher's disk): the grader sees that
    it is not what the server received and grades nothing of it."""
    url, alice = server.url, ("alice", students["alice"])
    sent = submitting.submit(
        ClassClient(url, alice), NAME, answer(assignment, "alice", 2, "no_mask")
    )
    mine = fetch.mine(ClassClient(url, alice), NAME).experiment_id
    path = server.artifacts / mine / sent.run_id / "artifacts" / "answer.json"
    path.write_bytes(answer(assignment, "alice", 2))  # the right one, put there afterwards
    row = next(
        r
        for r in grading.grade(ClassClient(url, server.admin), NAME).rows
        if r.student == "alice" and r.exercise == 2
    )
    assert row.standing is Standing.CHANGED and row.steps_right == 0
    assert "not the one the server received" in row.reason
    path.write_bytes(answer(assignment, "alice", 2, "no_mask"))  # the control: put back
    row = next(
        r
        for r in grading.grade(ClassClient(url, server.admin), NAME).rows
        if r.student == "alice" and r.exercise == 2
    )
    assert row.standing is Standing.GRADED and row.diagnosis == "no_mask"


def test_a_submission_is_stored_whole_or_not_at_all(server, students, assignment):
    """The artifact store refuses the upload (the student's folder is a file there): the
    submission ends FAILED, the student is told nothing was submitted, and it never counts."""
    url, carol = server.url, ("carol", students["carol"])
    mine = fetch.mine(ClassClient(url, carol), NAME).experiment_id
    blocker = server.artifacts / mine
    assert not blocker.exists()
    before = len(finished_runs(server, mine))
    blocker.write_text("in the way")
    try:
        with pytest.raises(HomeworkError, match="nothing was submitted"):
            submitting.submit(ClassClient(url, carol), NAME, answer(assignment, "carol"))
    finally:
        blocker.unlink()
    runs = ClassClient(url, server.admin).search_runs(mine)
    assert [r["info"]["status"] for r in runs][-1] == "FAILED"
    assert len(finished_runs(server, mine)) == before
    rows = grading.grade(ClassClient(url, server.admin), NAME).rows
    assert next(r for r in rows if r.student == "carol" and r.exercise == 1).attempts == 0
    # the control: with the store back, the same answer is stored
    assert (
        submitting.submit(ClassClient(url, carol), NAME, answer(assignment, "carol")).attempt == 1
    )


# --- bad input: one line, exit 2, nothing stored -----------------------------------------------


def test_bad_input_is_one_line_and_stores_nothing(server, students, assignment, tmp_path, here):
    url, bob = server.url, ("bob", students["bob"])
    env, teacher = student_env(url, *bob), teacher_env(server)
    mine = fetch.mine(ClassClient(url, bob), NAME).experiment_id
    before = len(ClassClient(url, server.admin).search_runs(mine))
    prob = Problem.of_exercise(assignment.exercises_of("bob")[0])
    files = {
        "exercise.json": json.dumps({"X": [[1]], "heads": []}).encode(),
        "broken.json": b'{"exercise": ',
        "binary.json": bytes(range(256)),
        "empty.json": b"",
        "no-step.json": json.dumps({"exercise": prob.naming["exercise"]}).encode(),
        "nan.json": json.dumps({**prob.naming, "heads": [{"Q": [[float("nan")]]}]}).encode(),
        "list.json": b"[1, 2, 3]",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        line = one_line_error(here(["homework", "submit", NAME, name], env, tmp_path))
        assert name in line, line
    cases = {
        "no such file": ["homework", "submit", NAME, "missing.json"],
        "a folder": ["homework", "submit", NAME, "."],
        "unknown assignment (fetch)": ["homework", "fetch", "no-such-hw"],
        "unknown assignment (submit)": ["homework", "submit", "no-such-hw", "broken.json"],
        "unknown assignment (status)": ["homework", "status", "no-such-hw"],
        "a bad name": ["homework", "fetch", "../../etc"],
    }
    for what, args in cases.items():
        assert one_line_error(here(args, env, tmp_path)), what
    for args in (
        ["server", "grade", "no-such-hw"],
        ["server", "grades", "no-such-hw"],
        ["server", "assign", "bad/name"],
        ["server", "assign", "x", "--due", "soon"],
        ["server", "assign", "x", "--heads", "3"],
    ):
        assert one_line_error(here(args, teacher, tmp_path)), args
    # a student the assignment does not have (made after it, without add-student's enrolment)
    add_student(url, server.admin, "hw-nobody", "hw-nobody-password", "class")
    nobody = student_env(url, "hw-nobody", "hw-nobody-password")
    line = one_line_error(here(["homework", "fetch", NAME], nobody, tmp_path))
    assert f"no assignment '{NAME}' for 'hw-nobody'" in line
    # no account, a wrong password, no server
    assert "MLFLOW_TRACKING_USERNAME" in one_line_error(
        here(["homework", "fetch", NAME], {**env, "MLFLOW_TRACKING_USERNAME": ""}, tmp_path)
    )
    wrong = here(
        ["homework", "fetch", NAME], {**env, "MLFLOW_TRACKING_PASSWORD": "nope-nope-nope"}, tmp_path
    )
    assert "refused the account 'bob'" in one_line_error(wrong)
    away = {**env, "MLFLOW_TRACKING_URI": f"http://127.0.0.1:{free_port()}"}
    (tmp_path / "right.json").write_bytes(right_answer(prob, 3))
    for args in (["homework", "fetch", NAME], ["homework", "submit", NAME, "right.json"]):
        assert "cannot reach the class server" in one_line_error(here(args, away, tmp_path))
    teacher_away = {**teacher, "MLFLOW_TRACKING_URI": away["MLFLOW_TRACKING_URI"]}
    assert "no class server answers" in one_line_error(
        here(["server", "grade", NAME], teacher_away, tmp_path)
    )
    # nothing of all that reached bob's homework
    assert len(ClassClient(url, server.admin).search_runs(mine)) == before
    assert not (tmp_path / "no-such-hw").exists()


def test_add_student_gives_a_new_student_every_assignment(server, assignment, tmp_path, here):
    args = ["server", "add-student", "hw-newcomer", "--experiment", "class"]
    out = here(args, teacher_env(server), tmp_path)
    assert out.returncode == 0, out.stderr
    assert "hw-newcomer now has their exercises of: " in out.stdout and NAME in out.stdout
    password = out.stdout.split("password ")[1].split(" ")[0]
    me = fetch.mine(ClassClient(server.url, ("hw-newcomer", password)), NAME)
    assert list(me.exercises) == assignment.exercises_of("hw-newcomer")
    assert me.student == "hw-newcomer"


def test_an_assignment_of_todays_attention_is_graded_with_its_own_catalogue(server, students):
    """--variant gqa: each student's grouped-query exercise, graded and diagnosed with the
    variant's mistakes (K/V heads repeated in the wrong order), summarized over its catalogue."""
    from attention_ref.classroom.coursework.gradebook_report import summarize

    url, alice, bob = server.url, ("alice", students["alice"]), ("bob", students["bob"])
    asked = Assignment(name="hw-gqa", variant="gqa", heads=4, kv_heads=2)
    a = assigning.assign(ClassClient(url, server.admin), asked).assignment
    assert {o.variant for s in students for o in a.exercises_of(s)} == {"gqa"}
    assert fetch.mine(ClassClient(url, alice), "hw-gqa").exercises == tuple(a.exercises_of("alice"))
    right = submitting.submit(ClassClient(url, alice), "hw-gqa", answer(a, "alice"))
    assert right.report.all_right
    wrong = submitting.submit(
        ClassClient(url, bob), "hw-gqa", answer(a, "bob", mistake="gqa_interleaved")
    )
    assert not wrong.report.all_right
    rows = {r.student: r for r in grading.grade(ClassClient(url, server.admin), "hw-gqa").rows}
    assert rows["alice"].steps_right == rows["alice"].steps_given > 0
    assert rows["bob"].diagnosis == "gqa_interleaved"
    names = assigning.catalogue_names(a)
    assert names[:2] == ["gqa_interleaved", "gqa_one_kv"] and "no_mask" in names
    s = summarize(list(rows.values()), names)
    assert dict((m[0], m[1]) for m in s.mistakes)["gqa_interleaved"] == 1
    # the homework's own catalogue does not know the variant's mistakes (the control)
    assert "gqa_interleaved" not in assigning.catalogue_names(Assignment(name="x"))


def test_messages_say_what_happened_and_what_to_do(server, students, assignment, tmp_path, here):
    """A student's usual slips, each one line that says what to do (issue 31, item 6)."""
    url, bob = server.url, ("bob", students["bob"])
    env = student_env(url, *bob)
    fetched = here(["homework", "fetch", NAME, "--out", "mine"], env, tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    cases = {
        "the gradebook as a student": (
            ["server", "grades", NAME],
            f"a student sees their own grades with attnref homework status {NAME}",
        ),
        "forgot to fetch": (
            ["homework", "submit", NAME, "answer-9.json"],
            f"no such file: attnref homework fetch {NAME} writes",
        ),
        "the statement": (
            ["homework", "submit", NAME, "mine/statement-1.md"],
            "is your exercise's statement, not an answer",
        ),
        "the empty template": (
            ["homework", "submit", NAME, "mine/answer-1.json"],
            # the file as the student named it: from this folder, answer-1.json is no file
            f"(each null in mine/answer-1.json), then attnref homework submit {NAME} "
            "mine/answer-1.json",
        ),
    }
    (tmp_path / "numbers.json").write_text(json.dumps({"X": [[1]], "heads": []}))
    cases["an exercise's numbers"] = (
        ["homework", "submit", NAME, "numbers.json"],
        "holds an exercise's numbers, not an answer",
    )
    for what, (args, said) in cases.items():
        line = one_line_error(here(args, env, tmp_path))
        assert said in line, (what, line)
        assert "check again" not in line and "seed" not in line, (what, line)
    # no submission yet: a sentence, not an empty table and "1 submissions"
    add_student(url, server.admin, "hw-quiet", "hw-quiet-password", "class")
    assigning.assign(ClassClient(url, server.admin), assignment)  # enrols the newcomer
    quiet = here(
        ["homework", "status", NAME], student_env(url, "hw-quiet", "hw-quiet-password"), tmp_path
    )
    assert quiet.returncode == 0 and "no submissions yet" in quiet.stdout, quiet
    # its command names the answer where fetch writes it from here, or where it is
    assert f"attnref homework submit {NAME} {NAME}/answer-1.json" in quiet.stdout, quiet
    inside = here(
        ["homework", "status", NAME],
        student_env(url, "hw-quiet", "hw-quiet-password"),
        tmp_path / "mine",  # a folder that holds an answer-1.json
    )
    assert f"attnref homework submit {NAME} answer-1.json" in inside.stdout, inside
    # the control: with submissions, the table, its count in the right number
    shown = here(["homework", "status", NAME], env, tmp_path)
    assert shown.returncode == 0 and " submission" in shown.stdout
    assert "1 submissions" not in shown.stdout


def test_no_source_statements_print_no_command_that_prints_the_key(
    server, students, tmp_path, here
):
    url, teacher = server.url, teacher_env(server)
    out = here(["server", "assign", "hw-closed"], teacher, tmp_path)  # the default: graded
    assert out.returncode == 0, out.stderr
    assert "practice assignment" not in out.stdout
    out = here(["server", "assign", "hw-open", "--source"], teacher, tmp_path)  # the control
    assert out.returncode == 0, out.stderr
    assert "a practice assignment" in " ".join(out.stdout.split())  # the teacher is told
    env = student_env(url, "alice", students["alice"])
    for name in ("hw-closed", "hw-open"):
        got = here(["homework", "fetch", name, "--out", name], env, tmp_path)
        assert got.returncode == 0, got.stderr
    closed = (tmp_path / "hw-closed" / "statement-1.md").read_text(encoding="utf-8")
    opened = (tmp_path / "hw-open" / "statement-1.md").read_text(encoding="utf-8")
    assert "attnref exercise --seed" not in closed and "the command that draws it" in closed
    assert "seed below" not in closed
    assert "attnref exercise --seed" in opened
    # given again, --no-source closes the practice one (no new exercises: the same seeds)
    out = here(["server", "assign", "hw-open", "--no-source"], teacher, tmp_path)
    assert out.returncode == 0, out.stderr
    got = here(["homework", "fetch", "hw-open", "--out", "again"], env, tmp_path)
    assert got.returncode == 0, got.stderr
    again = (tmp_path / "again" / "statement-1.md").read_text(encoding="utf-8")
    assert "attnref exercise --seed" not in again
    assert (tmp_path / "again" / "answer-1.json").read_bytes() == (
        tmp_path / "hw-open" / "answer-1.json"
    ).read_bytes()


def test_no_student_reads_the_salt_that_draws_a_classmates_exercises(server, students):
    """Everything a student's account reads of an assignment (their experiment's tags)
    holds no salt: `Assignment.seeds` cannot give a classmate's exercises from it. An
    assignment made before (the salt in every student's copy) loses it at the next assign."""
    from attention_ref.classroom.coursework.assignment import (
        DEFINITION_TAG,
        SUBMISSIONS,
        AssignmentError,
        student_experiment,
    )

    def tags(name: str, auth: tuple[str, str]) -> dict[str, str]:
        found = rest(
            server.url,
            "/api/2.0/mlflow/experiments/get-by-name",
            auth=auth,
            query={"experiment_name": name},
        )[1]
        return {t["key"]: t["value"] for t in found["experiment"].get("tags", [])}

    teacher = ClassClient(server.url, server.admin)
    done = assigning.assign(teacher, Assignment(name="hw-salt", exercises=2))
    salt = done.assignment.salt
    mine = tags(student_experiment("hw-salt", "alice"), ("alice", students["alice"]))
    assert mine and all(salt not in v for v in mine.values()), mine
    with pytest.raises(AssignmentError, match="carries no salt"):
        Assignment.from_tags(mine).seeds("bob")
    # an old assignment: the salt in a student's copy, as written before; assign mends it
    bobs = student_experiment("hw-salt", "bob")
    exp = teacher.experiment(bobs)["experiment_id"]
    old = json.dumps(done.assignment.definition(), sort_keys=True)
    teacher.call(
        "/api/2.0/mlflow/experiments/set-experiment-tag",
        {"experiment_id": exp, "key": DEFINITION_TAG, "value": old},
        what="cannot tag",
    )
    assert salt in tags(bobs, server.admin)[DEFINITION_TAG]  # the control: as written before
    again = assigning.assign(teacher, Assignment(name="hw-salt", exercises=2))
    assert again.assignment.salt == salt  # the same exercises for the class
    mended = tags(bobs, server.admin)
    assert salt not in mended[DEFINITION_TAG]
    assert mended[DEFINITION_TAG] == done.assignment.tags(SUBMISSIONS, "bob")[DEFINITION_TAG]
