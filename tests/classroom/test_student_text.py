"""What students write is data, never markup, on the real class server.

A student names their run anything, and writes anything into the answer.json they submit
over REST: the teacher's commands print it as written (rich would read ``[/]`` as markup:
`attnref server runs`, `grade` and `grades` stopped with a traceback before the CSV was
written), and the gradebook's descriptions (Markdown in MLflow's UI) hold it as code, never as
a link or an image fetched from an address the student chose.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from attention_ref.classroom.connection.class_client import ClassClient, tag_map
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.student_answers import right_answer
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange import fetch
from attention_ref.classroom.exchange import grade as grading
from attention_ref.classroom.exchange import submit as submitting
from attention_ref.classroom.exchange.answers import check_answer
from attention_ref.classroom.exchange.submit import Checked
from attention_ref.exercises.answer import Problem
from tests.classroom.conftest import EXPERIMENT, in_process, teacher_env

pytestmark = pytest.mark.slow

KEYS, SEEDS = "hw-keys", "hw-seeds"
#: strings rich would take for markup: a closing tag with nothing open, a style, a link
MARKUP = ("[/]", "[bold red]x[/bold red]", "[link=http://evil]y[/link]")
#: Markdown that fetches an image from an address the student chose, and shows a link
PAYLOAD = "![x](http://127.0.0.1:9/a.png) [appeal](http://evil/)"
NOTE = "mlflow.note.content"


@pytest.fixture
def here(capsys, monkeypatch):
    """An attnref command in this process as the teacher (`in_process`), output captured (not
    a terminal: 240 columns, as in a pipe or a log, whatever the test runner's terminal has)."""

    def call(args: list[str], server, cwd: Path) -> subprocess.CompletedProcess:
        return in_process(monkeypatch, capsys, args, teacher_env(server, COLUMNS="240"), cwd)

    return call


def links_and_images(markdown: str) -> list[str]:
    """The link and image tokens a CommonMark parse finds in ``markdown`` (MLflow's UI shows a
    description as Markdown), with where each points."""
    found = []
    for block in MarkdownIt("commonmark").parse(markdown):
        for t in block.children or []:
            if t.type in ("link_open", "image"):
                found.append(f"{t.type} {t.attrs.get('href') or t.attrs.get('src')}")
    return found


def test_the_check_finds_a_students_link_and_image_left_as_markdown():
    """The control of the notes' test: the same check finds what the student wrote when it is
    left as Markdown."""
    assert links_and_images(f"**dave**, exercise 1: not graded (malformed: {PAYLOAD})") == [
        "image http://127.0.0.1:9/a.png",
        "link_open http://evil/",
    ]


def test_server_runs_shows_run_names_as_written(server, students, here, tmp_path):
    """Runs a student named ``[/]`` (and a style, and a link) over MLflow's REST API: `attnref
    server runs` lists them, each name as written, and exits 0."""
    alice = ("alice", students["alice"])
    exp = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=alice,
        query={"experiment_name": EXPERIMENT},
    )[1]["experiment"]["experiment_id"]
    made = {}
    for name in MARKUP:
        status, run = rest(
            server.url,
            "/api/2.0/mlflow/runs/create",
            {"experiment_id": exp, "run_name": name},
            auth=alice,
        )
        assert status == 200, run
        made[run["run"]["info"]["run_id"]] = name
    out = here(["server", "runs", "--experiment", EXPERIMENT], server, tmp_path)
    assert out.returncode == 0, out.stderr
    lines = {
        line.split("│")[1].strip(): line for line in out.stdout.splitlines() if line.startswith("│")
    }
    for run_id, name in made.items():
        assert name in lines[run_id] and "alice" in lines[run_id], out.stdout


def an_answer(a: Assignment, student: str, k: int = 1) -> dict:
    """The right answer to ``student``'s exercise ``k``, as a JSON document."""
    return json.loads(right_answer(Problem.of_exercise(a.exercises_of(student)[k - 1]), a.decimals))


def send(server, students, name: str, student: str, k: int, doc: dict) -> None:
    """``doc`` stored as ``student``'s submission of exercise ``k`` of ``name``, whatever it
    holds: over REST, without the check on the student's side (`submit_answers` takes what
    was checked as it is: a student may skip attnref and send any bytes)."""
    client = ClassClient(server.url, (student, students[student]))
    me = fetch.mine(client, name)
    right = right_answer(Problem.of_exercise(me.exercises[k - 1]), me.assignment.decimals)
    _, report = check_answer(right, me.assignment, me.exercises)
    submitting.submit_answers(client, me, [Checked(json.dumps(doc).encode(), k, report)])


def assigned(server, name: str, exercises: int) -> Assignment:
    """Assignment ``name`` of ``exercises`` exercises for every student, due in a week."""
    due = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=7)
    made = Assignment(name=name, exercises=exercises, due=due)
    return assigning.assign(ClassClient(server.url, server.admin), made).assignment


@pytest.fixture(scope="module")
def keys(server, students) -> str:
    """An assignment whose answers name a step rich reads as markup (alice, bob, carol) or
    Markdown's image and link (dave): each is malformed, the grade's reason quotes the key."""
    a = assigned(server, KEYS, 1)
    for student, key in zip(("alice", "bob", "carol", "dave"), (*MARKUP, PAYLOAD), strict=True):
        doc = an_answer(a, student)
        doc["heads"][0][key] = [[1]]
        send(server, students, KEYS, student, 1, doc)
    return KEYS


@pytest.fixture(scope="module")
def seeds(server, students) -> str:
    """An assignment whose answers hold ``PAYLOAD`` where a student chooses: dave's seed of
    exercise 1 and variant of exercise 2, a step of alice's, a key of bob's."""
    a = assigned(server, SEEDS, 2)
    daves = [an_answer(a, "dave", 1), an_answer(a, "dave", 2)]
    daves[0]["exercise"]["seed"] = PAYLOAD
    daves[1]["exercise"]["variant"] = PAYLOAD
    alices, bobs = an_answer(a, "alice"), an_answer(a, "bob")
    alices["heads"][0][PAYLOAD] = [[1]]
    bobs[PAYLOAD] = 1
    for student, k, doc in (
        ("dave", 1, daves[0]),
        ("dave", 2, daves[1]),
        ("alice", 1, alices),
        ("bob", 1, bobs),
    ):
        send(server, students, SEEDS, student, k, doc)
    return SEEDS


def test_grade_and_grades_print_answer_keys_as_written(server, keys, here, tmp_path):
    """`attnref server grade` and `grades` (not a terminal: every column, the reasons among
    them) show each key as the answer wrote it, exit 0, and write the CSVs."""
    graded = here(["server", "grade", keys], server, tmp_path)
    assert graded.returncode == 0, graded.stderr
    printed = [graded.stdout]
    for system in ("attnref", "moodle", "canvas"):
        names = [] if system == "attnref" else ["--account-names"]  # no roster: accounts
        book = here(
            ["server", "grades", keys, "--summary", "--csv-format", system, *names],
            server,
            tmp_path,
        )
        assert book.returncode == 0, book.stderr
        suffix = "grades" if system == "attnref" else system
        assert (tmp_path / f"{keys}-{suffix}.csv").is_file()
        printed.append(book.stdout)
    for out in printed:
        for key in MARKUP:
            assert f'"{key}"' in out, (key, out)  # the reason quotes the key
        assert PAYLOAD[:30] in out  # dave's: "[appeal]" is no style either


def test_the_gradebooks_notes_hold_no_link_or_image_a_student_wrote(server, seeds):
    """Every description of the gradebook's runs (Markdown in MLflow's UI) holds the student's
    text as code: a CommonMark parse finds no link and no image, and the text is there, whole
    as far as the reason quotes it (dave's seed and variant, a step of alice's, a key of
    bob's). Dave's seed is not an integer, and the grade says so."""
    book_id = grading.grade(ClassClient(server.url, server.admin), seeds).gradebook_id
    runs = ClassClient(server.url, server.admin).search_runs(book_id)
    notes = {}
    for run in runs:
        tags = tag_map(run["data"])
        notes[(tags["attnref.grade.student"], tags["attnref.grade.exercise"])] = tags[NOTE]
    assert '"exercise"."seed" must be an integer' in notes[("dave", "1")]
    for who, note in notes.items():
        assert links_and_images(note) == [], (who, note)
    for who in (("dave", "1"), ("dave", "2"), ("alice", "1"), ("bob", "1")):
        codes = [
            t.content
            for block in MarkdownIt("commonmark").parse(notes[who])
            for t in block.children or []
            if t.type == "code_inline"
        ]
        assert any("![x](http://127.0.0.1:9/a.png)" in c for c in codes), (who, notes[who])
