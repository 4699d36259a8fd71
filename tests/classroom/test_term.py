"""Issue 58's "Done when": a term of teaching, run for real (`tools/term.py`), checked.

A class under ``America/Sao_Paulo``; its students from a Moodle participants download and a
Canvas gradebook export; a Portuguese assignment due at a time typed in the class's zone,
moved twice, its late penalty changed; a partial answer, an attempt over the policy's, an
answer late by a minute; grades exported for Moodle and Canvas and judged by each system's
documented import rules (`tests/classroom/lms_judges.py`); every screen at 80 columns.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import shutil
import sys
from pathlib import Path

import pytest

from tests.classroom.conftest import class_dir
from tests.classroom.lms_judges import canvas_import, moodle_import
from tests.classroom.test_screens import over_80, table_rows

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from term import run_term  # noqa: E402

pytestmark = pytest.mark.slow

STUDENTS = ("ana.souza", "bruno.lima", "carla.costa", "davi.dias")


@pytest.fixture(scope="module")
def term():
    work = class_dir("attnref-term-")
    try:
        yield run_term(work, work / "screens")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_every_screen_of_the_term_fits_80_columns_and_no_command_failed(term):
    assert len(term.screens) >= 17
    for name, text in term.screens.items():
        assert not over_80(text), (name, over_80(text))
        # the one refusal the term asks for is the attempt over the policy's, exit 2
        assert term.codes[name] == (2 if name == "submit-over-attempts" else 0), text


def test_the_class_comes_from_its_rosters_once_and_the_passwords_go_to_a_file(term):
    assert sorted(term.passwords) == list(STUDENTS)
    assert all(len(p) >= 12 for p in term.passwords.values())
    for name in ("add-students-moodle", "add-students-canvas"):
        said = term.screens[name]
        assert not any(p in said for p in term.passwords.values()), said  # never on screen
    assert "created 4, kept 0" in " ".join(term.screens["add-students-moodle"].split())
    # Canvas's export of the same class: the same accounts, kept, their Canvas ids added
    assert "created 0, kept 4" in " ".join(term.screens["add-students-canvas"].split())


def test_times_are_the_class_s_with_their_offset_and_typed_in_its_zone(term):
    said = " ".join(term.screens["assign"].split())
    assert "due 2026-12-20 23:59 UTC-03:00" in said, said  # typed 23:59, read in São Paulo
    moved = " ".join(term.screens["assign-move-due"].split())
    assert "moved from 2026-12-20 23:59 UTC-03:00 to 2026-12-22 23:59 UTC-03:00" in moved
    fetched = " ".join(term.screens["fetch"].split())
    assert "prazo 2026-12-22 23:59 UTC-03:00" in fetched, fetched  # the student's, in pt
    assert "UTC-03:00" in term.screens["status-ana"]
    # the penalty changed and the exercises did not: the same drawing, the new rule
    assert "loses 20%" in " ".join(term.screens["assign-penalty"].split())


def test_partial_late_and_over_the_attempts_read_as_what_they_are(term):
    book = term.screens["grades"]
    rows = {(r[0], r[1]): r for r in table_rows(book)}
    # ana's half answer: 10 of the 18 steps a whole answer has, not 10/10
    assert rows[("ana.souza", "1")][2] == "10/18", book
    # bruno late by a minute under 20 % a started day: 18/18 is 14.4 points, and why
    assert 60 <= term.late_by < 120
    assert rows[("bruno.lima", "1")][2:4] == ["18/18", "14.4"], book
    late = " ".join(book.split())
    assert "1 min" in late and "(-20%)" in late
    assert late.count("late: Late work loses 20% of its points per day or part of a day.") == 1
    # carla's third attempt was refused: nothing stored, two submissions, the latest counts
    refused = " ".join(term.screens["submit-over-attempts"].split())
    assert "2 attempts" in refused and "nothing was submitted" in refused
    status = term.screens["status-carla"]
    assert "2 envios" in status and status.count("│ 1 ") == 2, status
    assert "FAILED" not in status
    bruno = table_rows(term.screens["status-bruno"])
    assert [r[3] for r in bruno] == ["18/18, 14.4 pontos"] * 2, bruno
    assert all(r[2].startswith("1 min") and r[2].endswith("(-20%)") for r in bruno), bruno
    assert all(r[1].endswith("UTC-03:00") for r in bruno), bruno


def _moodle_users() -> dict[str, set[str]]:
    return {"email": {f"{s}@uni.example.br" for s in STUDENTS}}


def test_the_exports_are_what_moodle_and_canvas_import(term):
    moodle = term.exports["moodle"].encode()
    grades = moodle_import(moodle, _moodle_users(), item_max=36)
    assert grades == {
        "ana.souza@uni.example.br": 28,
        "bruno.lima@uni.example.br": 28.8,
        "carla.costa@uni.example.br": 18,
        "davi.dias@uni.example.br": 0,
    }
    canvas = [
        {"ID": str(100 + i), "SIS User ID": f"202000{i}", "SIS Login ID": s, "name": s}
        | {"sortable_name": s}
        for i, s in enumerate(STUDENTS, start=1)
    ]
    got = canvas_import(term.exports["canvas"].encode(), canvas)
    assert got == {"101": 28, "102": 28.8, "103": 18, "104": 0}
    rows = list(csv.reader(io.StringIO(term.exports["canvas"].removeprefix("\ufeff"))))
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "36"
    # the screens say the file and what to make first in each system
    assert "maximum grade 36" in " ".join(term.screens["grades-moodle"].split())
    assert "36 points" in " ".join(term.screens["grades-canvas"].split())


def test_the_term_ran_in_the_last_hour(term):
    """The control of the lateness: the due time the term set is today's, in the past."""
    said = " ".join(term.screens["assign-due-before-bruno"].split())
    today = dt.datetime.now(dt.UTC).astimezone(dt.timezone(dt.timedelta(hours=-3)))
    assert f"to {today:%Y-%m-%d}" in said, said
