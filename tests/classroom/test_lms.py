"""Grades as a learning-management system imports them (Moodle, Canvas): first the rosters
that must be refused, then the header and rows, with and without a roster."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re

import pytest

from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.gradebook import Row, Standing
from attention_ref.classroom.coursework.lms import (
    SYSTEMS,
    RosterError,
    feedback_of,
    grade_of,
    import_steps,
    read_roster,
    to_lms_csv,
)
from attention_ref.classroom.exchange.grade import steps_asked

BOOK = [
    Row("alice", 1, Standing.GRADED, 18, 18),
    Row(
        "alice",
        2,
        Standing.GRADED,
        10,
        18,
        "heads[0].S_masked",
        (("no_mask",),),
        late=dt.timedelta(minutes=4),
    ),
    Row("bob", 1, Standing.MISSING),
    Row("bob", 2, Standing.CHANGED, 0, 0, reason="changed"),
    Row("carol", 1, Standing.GRADED, 12, 12),
    Row("carol", 2, Standing.MALFORMED),
]


def parsed(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_moodle_reads_a_username_a_grade_and_its_feedback():
    rows = parsed(to_lms_csv(BOOK, "hw1", "moodle", 36))
    assert rows[0] == ["username", "hw1", "hw1 feedback"]
    got = {r[0]: r for r in rows[1:]}
    assert set(got) == {"alice", "bob", "carol"}
    assert got["alice"][1] == "28" and got["bob"][1] == "0" and got["carol"][1] == "12"
    assert got["alice"][2] == (
        "exercise 1: 18/18 steps right; exercise 2: 10/18 steps right (no_mask), late by 4 min 00 s"
    )
    assert "exercise 2: changed after it was finished" in got["bob"][2]
    assert "exercise 2: not an answer to the exercise" in got["carol"][2]


def test_the_feedback_is_in_the_assignments_language_with_the_mistakes_in_words():
    from attention_ref.exercises.catalogue import mistake_words

    late = Row(
        "ana",
        1,
        Standing.GRADED,
        8,
        18,
        "heads[0].S",
        (("no_scale",), ("no_mask", "K_Qt")),
        late=dt.timedelta(hours=26),
        penalty=20,
    )
    said = feedback_of(
        [late, Row("ana", 2, Standing.MISSING)], lang="pt", words=lambda n: mistake_words(n, "pt")
    )
    no_scale, no_mask, k_qt = (mistake_words(n, "pt") for n in ("no_scale", "no_mask", "K_Qt"))
    assert "no_scale" not in said and no_scale != "no_scale"
    assert said == (
        f"exercício 1: 8/18 passos certos ({no_scale} ou {no_mask} e {k_qt}), atrasada 1 d 2 h "
        "00 min (-20%); exercício 2: sem envio"
    )


def test_canvas_reads_its_own_layout_with_points_possible():
    rows = parsed(to_lms_csv(BOOK, "hw1", "canvas", 36))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1"]
    assert rows[1] == ["Points Possible", "", "", "", "", "36"]
    assert rows[2] == ["alice", "", "", "alice", "", "28"]
    assert len(rows) == 2 + 3


def test_a_grade_counts_only_graded_submissions():
    assert grade_of(BOOK[:2]) == 28
    assert grade_of(BOOK[2:4]) == 0  # missing and changed: no steps (the control: 28 above)
    assert feedback_of([]) == ""


def test_an_unknown_system_is_refused_in_one_line():
    assert SYSTEMS == ("moodle", "canvas")
    with pytest.raises(ValueError, match="choose one of moodle, canvas"):
        to_lms_csv(BOOK, "hw1", "blackboard", 36)


def test_points_possible_are_the_steps_of_whole_answers():
    one = steps_asked(Assignment(name="x", exercises=1))
    assert one == 18  # Q, K, V, scores, S, S_masked, A, H per head (2 heads), concat, output
    assert steps_asked(Assignment(name="x", exercises=2)) == 2 * one


# --- the roster: account names to the system's own identifiers -------------------------------


@pytest.mark.parametrize(
    ("system", "text", "said"),
    [
        ("moodle", "", "names its columns, one of them 'account'"),
        ("moodle", "username\nalice\n", "names its columns, one of them 'account'"),
        ("moodle", "account,login\nalice,a1\n", "the roster's column 'login' is not moodle's"),
        ("moodle", "account,username,email\na,b,c\n", "a Moodle roster has one identifier"),
        ("moodle", "account\nalice\n", "names account and moodle's columns, each once"),
        ("moodle", "account,username,username\na,b,c\n", "each once"),
        ("moodle", "account,username\nalice,a1\nalice,a2\n", "line 3: an account named once"),
        ("moodle", "account,username\n,a1\n", "line 2: an account named once, got ''"),
        ("moodle", "account,username\nalice,\n", "line 2: no identifier for 'alice'"),
        ("moodle", "account,username\nalice,a1,x\n", "line 2 has 3 cells, not 2"),
        ("canvas", "account,Student\nalice,Alice A\n", "line 2: no identifier for 'alice'"),
        ("canvas", "account,Email\nalice,a@x\n", "the roster's column 'Email' is not canvas's"),
        ("moodle", "account,username\n" + "a,b\n" * 300_000, "over 1048576 bytes"),
    ],
)
def test_a_roster_that_cannot_be_used_is_refused_in_one_line(system, text, said):
    with pytest.raises(RosterError, match=re.escape(said)):
        read_roster(text, system)


def test_every_student_of_the_gradebook_needs_a_line_of_the_roster():
    roster = read_roster("account,email\nalice,alice@uni.example\ncarol,c@uni.example\n", "moodle")
    with pytest.raises(RosterError, match=r"the roster has no line for bob \(an unknown user"):
        to_lms_csv(BOOK, "hw1", "moodle", 36, roster=roster)


def test_moodle_reads_the_roster_identifier_the_teacher_maps_from():
    roster = read_roster(
        "\ufeffaccount,email\nalice,alice@uni.example\nbob,bob@uni.example\ncarol,c@x\nzoe,z@x\n",
        "moodle",
    )
    rows = parsed(to_lms_csv(BOOK, "hw1", "moodle", 36, roster=roster))
    assert rows[0] == ["email", "hw1", "hw1 feedback"]
    assert [r[:2] for r in rows[1:]] == [
        ["alice@uni.example", "28"],
        ["bob@uni.example", "0"],
        ["c@x", "12"],
    ]
    assert import_steps("moodle", "hw1", 36, "email")[2].startswith("3. Map from email to email")
    assert "maximum grade 36" in import_steps("moodle", "hw1", 36)[0]


def test_canvas_reads_the_roster_ids_and_names():
    roster = read_roster(
        "account,Student,ID,SIS User ID,Section\n"
        'alice,"Silva, Alice",101,S-1,A\nbob,Bob,,S-2,\ncarol,Carol,103,,B\n',
        "canvas",
    )
    rows = parsed(to_lms_csv(BOOK, "hw1", "canvas", 36, roster=roster))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1"]
    assert rows[2] == ["Silva, Alice", "101", "S-1", "", "A", "28"]
    assert rows[3] == ["Bob", "", "S-2", "", "", "0"]
    assert rows[4] == ["Carol", "103", "", "", "B", "12"]
