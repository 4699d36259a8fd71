"""A class from its roster, on the real class server: ``add-students --roster`` from Moodle's
and Canvas's exports (idempotent, the passwords in a file of mode 0600 and never on the
terminal), the students log in with them and cannot read the roster the server keeps, and
``grades --csv-format moodle|canvas`` writes their LMS identifiers (refusing a student with
none, naming them), grades of a six-exercise assignment at most 100 for Moodle, as each LMS's
import rules read them (`tests.classroom.lms_judges`)."""

from __future__ import annotations

import contextlib
import csv
import stat
import subprocess
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student, remove_student
from attention_ref.classroom.connection.class_client import ClassClient, tag_map
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.lms import missing_from
from attention_ref.classroom.coursework.lms import named as named_in_a_line
from attention_ref.classroom.coursework.student_answers import right_answer
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange import grade as grading
from attention_ref.classroom.exchange import submit as submitting
from attention_ref.classroom.exchange.roster_store import (
    ROSTER_EXPERIMENT,
    TAG_PREFIX,
    stored_identifiers,
)
from attention_ref.exercises.answer import Problem
from tests.classroom.conftest import EXPERIMENT, in_process, one_line_error, teacher_env
from tests.classroom.lms_judges import canvas_import, moodle_import

pytestmark = pytest.mark.slow

MOODLE = (
    "First name,Last name,Email address\n"
    "João,Silva,joao.silva@uni.example\n"
    "Ana,Souza,ana.souza@uni.example\n"
)
CANVAS = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Homework (7),Final Score\n"
    "    Points Possible,,,,,18,(read only)\n"
    '"Silva, João",101,S-1,joao.silva@uni.example,A,,\n'
    '"Ng, Zoë",103,,,B,,\n'
    '"Student, Test",999,,,A,,\n'
)


@pytest.fixture
def here(capsys, monkeypatch):
    """An attnref command in this process as the teacher, in ``cwd`` (`in_process`)."""

    def call(args: list[str], server, cwd: Path) -> subprocess.CompletedProcess:
        return in_process(monkeypatch, capsys, args, teacher_env(server), cwd)

    return call


#: the accounts the rosters of this module make (and one made without identifiers)
MADE = ("joao.silva", "ana.souza", "zoe.ng", "nolms")


@pytest.fixture
def forgotten(server):
    """At the end, the roster as it was before for the package's other modules: the
    identifiers kept deleted, this module's accounts removed (their runs stay), so that an
    assignment of another module enrols none of them and its students have no identifier."""
    yield
    teacher = ClassClient(server.url, server.admin)
    found = teacher.experiment(ROSTER_EXPERIMENT)
    for key in tag_map(found or {}):
        if key.startswith(TAG_PREFIX):
            teacher.call(
                "/api/2.0/mlflow/experiments/delete-experiment-tag",
                {"experiment_id": found["experiment_id"], "key": key},
                what="cannot forget the roster",
            )
    for account in MADE:
        with contextlib.suppress(ServerError):
            remove_student(server.url, server.admin, account)


def passwords_of(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return {r["account"]: r for r in csv.DictReader(f)}


def test_bad_rosters_and_password_files_are_refused_before_any_account(server, here, tmp_path):
    (tmp_path / "odd.csv").write_text("name,mail\nana,a@x\n", encoding="utf-8")
    bad = here(["server", "add-students", "--roster", "odd.csv"], server, tmp_path)
    said = one_line_error(bad)
    assert "is not a header of a Moodle participants download" in said and "column account" in said
    (tmp_path / "big.csv").write_bytes(b"account\n" + b"x" * (1 << 20))
    assert "is over 1048576 bytes" in one_line_error(
        here(["server", "add-students", "--roster", "big.csv"], server, tmp_path)
    )
    (tmp_path / "m.csv").write_text(MOODLE, encoding="utf-8")
    (tmp_path / "notes.csv").write_text("my notes\n", encoding="utf-8")
    kept = here(
        ["server", "add-students", "--roster", "m.csv", "--passwords", "notes.csv"],
        server,
        tmp_path,
    )
    assert "is not a passwords file of attnref" in one_line_error(kept)
    assert (tmp_path / "notes.csv").read_text(encoding="utf-8") == "my notes\n"  # untouched
    listed = rest(
        server.url, "/api/2.0/mlflow/users/get", auth=server.admin, query={"username": "ana.souza"}
    )[0]
    assert listed != 200  # no account was made by the refused commands


def test_a_class_from_its_rosters_graded_for_moodle_and_canvas(server, here, tmp_path, forgotten):
    (tmp_path / "moodle.csv").write_text(MOODLE, encoding="utf-8")
    (tmp_path / "canvas.csv").write_text(CANVAS, encoding="utf-8")
    add = ["server", "add-students", "--experiment", EXPERIMENT, "--roster"]
    first = here([*add, "moodle.csv"], server, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "accounts created 2, kept 0" in " ".join(first.stdout.split())
    pw = tmp_path / "roster-passwords.csv"
    assert stat.S_IMODE(pw.stat().st_mode) == 0o600
    made = passwords_of(pw)
    assert set(made) == {"joao.silva", "ana.souza"}
    assert made["joao.silva"]["email"] == "joao.silva@uni.example"
    assert all(r["status"] == "created" and len(r["password"]) >= 12 for r in made.values())
    # again: nothing made, the passwords kept in the file, none on the terminal
    again = here([*add, "moodle.csv"], server, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "accounts created 0, kept 2" in " ".join(again.stdout.split())
    assert {a: r["password"] for a, r in passwords_of(pw).items()} == {
        a: r["password"] for a, r in made.items()
    }
    canvas = here([*add, "canvas.csv"], server, tmp_path)
    assert canvas.returncode == 0, canvas.stderr
    assert "accounts created 1, kept 1" in " ".join(canvas.stdout.split())
    every = passwords_of(pw)
    assert set(every) == {"joao.silva", "ana.souza", "zoe.ng"}  # not the test student
    assert every["joao.silva"]["password"] == made["joao.silva"]["password"]
    assert stat.S_IMODE(pw.stat().st_mode) == 0o600
    for out in (first, again, canvas):
        assert not any(r["password"] in out.stdout + out.stderr for r in every.values())
    # each student logs in with the file's password, and cannot see the roster kept
    for account, row in every.items():
        me = ClassClient(server.url, (account, row["password"]))
        assert me.experiment(EXPERIMENT) is not None, account
        assert me.experiment(ROSTER_EXPERIMENT) is None
        assert stored_identifiers(me) == {}
    teacher = ClassClient(server.url, server.admin)
    kept = stored_identifiers(teacher)
    assert kept["joao.silva"] == {
        "moodle": {"email": "joao.silva@uni.example"},
        "canvas": {
            "Student": "Silva, João",
            "ID": "101",
            "SIS User ID": "S-1",
            "SIS Login ID": "joao.silva@uni.example",
            "Section": "A",
        },
    }

    # an account with no LMS identifier, then six exercises: João answers all of them right
    add_student(server.url, server.admin, "nolms", "nolms-password-1", EXPERIMENT)
    done = assigning.assign(teacher, Assignment(name="roster-hw", exercises=6))
    joao = ClassClient(server.url, ("joao.silva", every["joao.silva"]["password"]))
    for k, exercise in enumerate(done.assignment.exercises_of("joao.silva"), start=1):
        answer = right_answer(Problem.of_exercise(exercise), done.assignment.decimals)
        assert submitting.submit(joao, "roster-hw", answer).exercise == k
    grading.grade(teacher, "roster-hw")
    refused = here(["server", "grades", "roster-hw", "--csv-format", "moodle"], server, tmp_path)
    said = one_line_error(refused)
    # the class is the package's server's: other tests' students may be in it too, so the
    # refusal is checked against the class as the server holds it (missing_from, named)
    moodle_ids = {a: i["moodle"] for a, i in stored_identifiers(teacher).items() if i.get("moodle")}
    _, book = grading.gradebook(teacher, "roster-hw")
    missing = missing_from(sorted({r.student for r in book}), moodle_ids)
    assert "nolms" in missing and "joao.silva" not in missing
    assert f"no Moodle identifiers for {named_in_a_line(missing)}:" in said, said
    assert not (tmp_path / "roster-hw-moodle.csv").exists()
    named = here(
        ["server", "grades", "roster-hw", "--csv-format", "canvas", "--account-names"],
        server,
        tmp_path,
    )
    assert named.returncode == 0, named.stderr
    rows = list(csv.reader((tmp_path / "roster-hw-canvas.csv").open(encoding="utf-8-sig")))
    assert ["nolms", "", "", "nolms", "", "0"] in rows

    # the others' identifiers from a plain roster; then both exports, as each LMS reads them
    students = sorted(assigning.list_students(teacher))
    plain = "account,email,SIS Login ID\n" + "".join(
        f"{s},{s}@uni.example,{'' if s == 'zoe.ng' else s}\n" for s in students if s != "joao.silva"
    )
    (tmp_path / "plain.csv").write_text(plain, encoding="utf-8")
    others = here([*add, "plain.csv", "--passwords", "others.csv"], server, tmp_path)
    assert others.returncode == 0, others.stderr
    moodle = here(["server", "grades", "roster-hw", "--csv-format", "moodle"], server, tmp_path)
    assert moodle.returncode == 0, moodle.stderr
    raw = (tmp_path / "roster-hw-moodle.csv").read_bytes()
    emails = {"joao.silva@uni.example", "ana.souza@uni.example"}
    emails |= {f"{s}@uni.example" for s in students}
    got = moodle_import(raw, {"email": emails}, item_max=100)
    assert got["joao.silva@uni.example"] == 100 and max(got.values()) <= 100
    assert "maximum grade 100 (the 108 points possible" in " ".join(moodle.stdout.split())
    out = here(["server", "grades", "roster-hw", "--csv-format", "canvas"], server, tmp_path)
    assert out.returncode == 0, out.stderr
    ids = stored_identifiers(teacher)
    lms = [
        {
            "ID": f"9{n}",
            "SIS User ID": "",
            "SIS Login ID": ids[s]["canvas"].get("SIS Login ID", ""),
            "name": s,
            "sortable_name": s,
        }
        for n, s in enumerate(students)
        if s not in ("joao.silva", "zoe.ng")
    ] + [
        {
            "ID": "101",
            "SIS User ID": "S-1",
            "SIS Login ID": "",
            "name": "João Silva",
            "sortable_name": "Silva, João",
        },
        {
            "ID": "103",
            "SIS User ID": "",
            "SIS Login ID": "",
            "name": "Zoë Ng",
            "sortable_name": "Ng, Zoë",
        },
    ]
    grades = canvas_import((tmp_path / "roster-hw-canvas.csv").read_bytes(), lms)
    assert grades["101"] == 108 and grades["103"] == 0
