"""The recorded class as a test: 30 students doing homework at once on the package's class
server (`attnref_book.simulated.simulate`): every catalogue mistake that exists on their
own exercises, rounding, a partial answer, late answers, resubmissions, a malformed file refused
by the client and one pushed past it. The gradebook must equal the checker's own verdict for
every student, and nothing may be lost: submissions, answers on disk (byte for byte), grades.

``tools/record_class.py`` runs the same class on a fresh server for the book.
"""

from __future__ import annotations

import pytest

from attention_ref.classroom.coursework.gradebook import Standing
from attention_ref.exercises.catalogue import CATALOGUE
from attnref_book.simulated.class_plan import NAMES
from attnref_book.simulated.simulate import run_class

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def record(server, students):
    """The class, run once (about a minute on 2 cores)."""
    return run_class(
        server.url,
        server.admin,
        "attention-class",
        salt="5eed0f0a77e47104",
        artifacts=server.artifacts,
    )


def test_the_gradebook_is_the_checkers_verdict_for_every_student(record):
    assert not record.errors
    assert record.mismatches() == []
    mine = {r.student: r for r in record.rows if r.student in NAMES}
    assert len(mine) == len(NAMES) == 30
    # the students of the package's other tests have the assignment too, and nothing in it
    assert all(r.standing is Standing.MISSING for r in record.rows if r.student not in NAMES)


def test_nothing_is_lost(record):
    c = record.counts
    assert c["students"] == 30
    assert c["refused_by_the_client"] == 1  # the malformed file: nothing sent
    assert c["stored"] == c["stored_planned"] == c["attempts_planned"] - 1
    assert c["finished_runs_on_the_server"] == c["stored"]
    assert c["answers_on_disk"] == c["answers_equal_to_what_was_sent"] == c["stored"]
    assert c["graded_submissions"] == c["stored"]
    assert c["gradebook_rows"] >= 30


def test_the_class_covers_what_the_issue_asks(record):
    labels = [b.label for b in record.behaviours]
    made = {m for b in record.behaviours for m in b.mistakes}
    on_the_shape = {k.name for k in CATALOGUE} - {"transposed_W", "gave_dW_Ot"}
    # every entry of the catalogue that exists on this shape (d_model 4, h 2: no square
    # weight to transpose; no gradient asked) was made by a student, and diagnosed as itself
    from attention_ref.classroom.coursework.gradebook_report import kind_of

    names = [k.name for k in CATALOGUE]
    assert {kind_of(m, names) for m in made} == on_the_shape
    for what in (
        "right",
        "rounding carried",
        "rounded to 2 decimals",
        "partial",
        "late",
        "resubmitted",
        "malformed",
        "two mistakes",
    ):
        assert any(what in label for label in labels), what
    by = {r.student: r for r in record.rows}
    late = [b for b in record.behaviours if any(a.late for a in b.stored)]
    assert len(late) == 3 and all(by[b.student].late is not None for b in late)
    assert sum(r.late is not None for r in record.rows) == 3  # and no one else
    resubmitted = [b for b in record.behaviours if len(b.stored) > 1]
    assert all(by[b.student].attempts == len(b.stored) for b in resubmitted)
