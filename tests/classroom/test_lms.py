"""Grades as a learning-management system imports them (Moodle, Canvas): header and rows."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest

from attention_ref.classroom.assignment import Assignment
from attention_ref.classroom.exchange.grade import steps_asked
from attention_ref.classroom.gradebook import Row, Standing
from attention_ref.classroom.lms import SYSTEMS, feedback_of, grade_of, to_lms_csv

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
    assert "exercise 2: malformed" in got["carol"][2]


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
