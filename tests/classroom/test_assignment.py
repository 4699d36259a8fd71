"""Assignments and the gradebook without a server: what must be refused first (bad names, bad
due times, tags that define nothing, answers to another exercise), then the variants (the
same for the same student, different between students), lateness at its boundary, which
submission counts, the summary and the CSV."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from dataclasses import replace

import pytest

from attention_ref.classroom.coursework.assignment import (
    DEFINITION_TAG,
    GRADEBOOK,
    SUBMISSIONS,
    Assignment,
    AssignmentError,
    duration,
    lateness,
    matching_exercise,
    parse_due,
    student_seeds,
)
from attention_ref.classroom.coursework.gradebook import (
    Chosen,
    Graded,
    Row,
    Standing,
    counted,
    rows,
)
from attention_ref.classroom.coursework.gradebook_report import kind_of, summarize, to_csv
from attention_ref.exercises.catalogue import CATALOGUE
from attention_ref.exercises.exercise import draw_problem
from attnref_book.simulated.class_plan import NAMES

UTC = dt.UTC


# --- what must be refused ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "a/b", "-x", "é", "x" * 65, "two words", "../up"])
def test_a_bad_assignment_name_is_refused(name):
    with pytest.raises(AssignmentError, match="assignment's name"):
        Assignment(name=name)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"exercises": 0}, "--exercises"),
        ({"exercises": 21}, "--exercises"),
        ({"heads": 3}, "--heads must divide"),
        ({"lang": "fr"}, "--lang"),
        ({"decimals": 0}, "--decimals"),
        ({"tokens": 9}, "--tokens"),
    ],
)
def test_a_bad_shape_is_refused_in_one_line(kw, match):
    with pytest.raises(AssignmentError, match=match) as e:
        Assignment(name="hw", **kw)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text", ["tomorrow", "2026-13-01", "12/01/2026", "2026-12-01T25:00", ""])
def test_a_bad_due_time_is_refused(text):
    with pytest.raises(AssignmentError, match="--due must be an ISO time"):
        parse_due(text)


@pytest.mark.parametrize(
    "tags",
    [
        {},
        {DEFINITION_TAG: "{"},
        {DEFINITION_TAG: '{"exercises": 1}'},
        {DEFINITION_TAG: '{"nope": 1}', "attnref.homework.assignment": "hw"},
        {DEFINITION_TAG: '{"exercises": 0, "salt": "x"}', "attnref.homework.assignment": "hw"},
    ],
)
def test_tags_that_define_no_assignment_are_refused(tags):
    with pytest.raises(AssignmentError):
        Assignment.from_tags(tags)


def test_an_answer_to_another_exercise_matches_none():
    a = Assignment(name="hw", exercises=2, salt="s")
    mine, theirs = a.exercises_of("ana"), a.exercises_of("bruno")
    for doc in (
        {"exercise": theirs[0].to_json()},
        {"exercise": {"seed": mine[0].seed + 1}},
        {"exercise": {**mine[0].to_json(), "heads": 1, "d_model": 4}},
        {"exercise": "ana"},
        {"example": "life-is-awesome"},
        [],
        "x",
        {"exercise": {**mine[0].to_json(), "extra": 1}},
    ):
        assert matching_exercise(doc, mine) is None, doc
    # the control: their own exercises match, each as itself
    assert matching_exercise({"exercise": mine[1].to_json()}, mine) == 2
    assert matching_exercise({"exercise": mine[0].to_json()}, mine) == 1


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"seed": "![x](http://127.0.0.1:9/a.png)"}, '"exercise"."seed" must be an integer'),
        ({"seed": 1.5}, '"exercise"."seed" must be an integer'),
        ({"variant": "[/]"}, "--variant must be one of"),
        ({"extra": 1}, "unknown key"),
    ],
)
def test_an_answer_whose_exercise_is_none_says_what_is_wrong_with_it(change, said):
    """An answer's ``"exercise"`` is read as what it is: a seed that is not an integer (or an
    option no exercise has) is an `InputError` saying so, not "seed ![x](…) is not one of
    yours"; another student's exercise, a well-formed one, is still not theirs."""
    from attention_ref.classroom.connection.class_client import HomeworkError
    from attention_ref.classroom.exchange.answers import identify
    from attention_ref.classroom.exchange.fetch import Mine
    from attention_ref.inputs.errors import InputError

    a = Assignment(name="hw", exercises=2, salt="s")
    me = Mine(a, "ana", "", tuple(a.exercises_of("ana")))
    with pytest.raises(InputError, match=re.escape(said)):
        identify({"exercise": me.exercises[0].to_json() | change}, me.assignment, me.exercises)
    # the control: a well-formed exercise of someone else's
    with pytest.raises(HomeworkError, match="not one of your exercises"):
        identify({"exercise": a.exercises_of("bruno")[0].to_json()}, me.assignment, me.exercises)


# --- variants --------------------------------------------------------------------------------


def test_each_student_has_their_own_variant_and_the_same_one_everywhere():
    a = Assignment(name="hw", exercises=3, salt="0123")
    problems = {s: [draw_problem(o) for o in a.exercises_of(s)] for s in NAMES}
    flat = [str(p) for ps in problems.values() for p in ps]
    assert len(set(flat)) == len(flat) == 3 * len(NAMES)  # no two exercises alike
    tags = a.tags(SUBMISSIONS, "ana")
    again = Assignment.from_tags(tags)  # the student's copy: their seeds give their exercises
    assert [again.options(s) for s in student_seeds(tags, 3)] == a.exercises_of("ana")
    assert Assignment(name="hw", exercises=3, salt="0123").seeds("ana") == a.seeds("ana")
    # another salt (another server), another name: other exercises
    assert Assignment(name="hw", exercises=3, salt="4567").seeds("ana") != a.seeds("ana")
    assert Assignment(name="hw2", exercises=3, salt="0123").seeds("ana") != a.seeds("ana")
    assert all(0 <= s < 2**63 for s in a.seeds("ana"))


def test_the_tags_hold_the_definition_and_the_students_seeds():
    due = dt.datetime(2026, 12, 1, 22, 59, tzinfo=UTC)
    a = Assignment(name="hw", exercises=2, lang="pt", backward=True, decimals=2, due=due)
    book, mine = a.tags(GRADEBOOK), a.tags(SUBMISSIONS, "ana")
    assert "attnref.homework.seeds" not in book
    assert mine["attnref.homework.seeds"] == f"[{a.seeds('ana')[0]}, {a.seeds('ana')[1]}]"
    assert Assignment.from_tags(book) == a
    assert Assignment.from_tags(mine) == replace(a, salt="")  # the student's copy: no salt
    moved = Assignment(name="hw", exercises=2, lang="pt", backward=True, decimals=2)
    assert a.same_exercises(moved)  # another salt and no due time: the same exercises asked
    assert not a.same_exercises(Assignment(name="hw", exercises=3))


def test_due_times_read_as_the_teacher_means_them():
    assert parse_due("2026-12-01T23:59Z") == dt.datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
    assert parse_due("2026-12-01T23:59+01:00") == dt.datetime(2026, 12, 1, 22, 59, tzinfo=UTC)
    assert parse_due("2026-12-01") == parse_due("2026-12-01T23:59:59")  # a date: its end
    naive = dt.datetime(2026, 12, 1, 23, 59).astimezone()  # this machine's zone
    assert parse_due("2026-12-01T23:59") == naive.astimezone(UTC)
    assert parse_due("2026-12-01T23:59:30.9Z").microsecond == 0


def test_late_is_strictly_after_the_due_time():
    due = dt.datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert lateness(due, due) is None
    assert lateness(due - dt.timedelta(seconds=1), due) is None
    assert lateness(due + dt.timedelta(seconds=1), due) == dt.timedelta(seconds=1)
    assert lateness(due + dt.timedelta(days=3), None) is None  # no due time: never late
    assert [duration(dt.timedelta(seconds=s)) for s in (5, 250, 3780, 90000, 87720)] == [
        "5 s",
        "4 min 10 s",
        "1 h 03 min",
        "1 d 1 h 00 min",
        "1 d 0 h 22 min",  # 24 h 22 min: the minutes a started day's penalty is read with
    ]


# --- which submission counts, and the gradebook ------------------------------------------------


def g(
    run: str,
    minute: int,
    right: int,
    *,
    student="ana",
    k=1,
    standing=Standing.GRADED,
    first="",
    diagnoses=(),
):
    return Graded(
        student,
        run,
        k,
        dt.datetime(2026, 12, 1, 12, minute, tzinfo=UTC),
        None,
        standing,
        right,
        18,
        first,
        diagnoses,
    )


def test_the_latest_counts_unless_the_teacher_says_otherwise():
    attempts = [g("r1", 1, 18), g("r2", 5, 6, first="heads[0].S"), g("r3", 3, 12)]
    assert counted(attempts) == (attempts[1], Chosen.LATEST)
    assert counted(attempts, best=True) == (attempts[0], Chosen.BEST)
    assert counted(attempts, use=["r3"]) == (attempts[2], Chosen.TEACHER)
    assert counted(attempts, best=True, use=["r2"]) == (attempts[1], Chosen.TEACHER)
    assert counted([]) == (None, Chosen.NONE)
    # a malformed one is never the best, however early
    bad = g("r0", 0, 0, standing=Standing.MALFORMED)
    assert counted([bad, g("r4", 9, 2)], best=True)[0].run_id == "r4"


def test_rows_cover_every_student_and_exercise():
    graded = [
        g("r1", 1, 18),
        g("r2", 2, 10, k=2, first="heads[1].A", diagnoses=(("no_mask",),)),
        g("r3", 3, 0, student="bruno", k=None, standing=Standing.MALFORMED),
    ]
    book = rows(graded, ["ana", "bruno", "carla"], 2)
    assert [(r.student, r.exercise, r.standing) for r in book] == [
        ("ana", 1, Standing.GRADED),
        ("ana", 2, Standing.GRADED),
        ("bruno", 1, Standing.MISSING),
        ("bruno", 2, Standing.MISSING),  # N = 2: no exercise
        ("carla", 1, Standing.MISSING),
        ("carla", 2, Standing.MISSING),
    ]
    one = rows(graded[2:], ["bruno"], 1)  # with one exercise, it is that exercise's attempt
    assert one[0].standing is Standing.MALFORMED and one[0].attempts == 1


def test_a_row_round_trips_through_the_gradebook_runs():
    r = Row(
        "ana",
        2,
        Standing.GRADED,
        10,
        18,
        "heads[0].S",
        (("no_scale", "no_W_O"), ("scale_d_k",)),
        3,
        dt.timedelta(seconds=75),
        dt.datetime(2026, 12, 1, 12, 1, 15, tzinfo=UTC),
        "abc",
        Chosen.BEST,
    )
    assert Row.from_run(r.tags(), r.metrics()) == r
    assert r.diagnosis == "no_scale + no_W_O | scale_d_k" and r.late_text == "late by 1 min 15 s"
    assert r.metrics() == {
        "steps_right": 10,
        "steps_given": 18,
        "steps_asked": 0,
        "attempts": 3,
        "late": 1.0,
        "points": 10.0,
    }


def test_the_summary_counts_students_by_mistake_and_first_wrong_step():
    names = [k.name for k in CATALOGUE]
    assert kind_of("scale_d_model_d_k", names) == "scale"
    assert kind_of("transposed_W_Q", names) == "transposed_W"
    assert kind_of("transposed_W_O", names) == "transposed_W_O"  # its own entry, not a W
    assert kind_of("gave_Qt", names) == "gave_Qt"
    book = [
        Row("ana", 1, Standing.GRADED, 10, 18, "heads[0].S_masked", (("no_mask",),)),
        Row(
            "bruno",
            1,
            Standing.GRADED,
            10,
            18,
            "heads[0].S_masked",
            (("no_mask",), ("mask_wrong_triangle",)),
        ),
        Row("carla", 1, Standing.GRADED, 8, 18, "heads[0].S", (("no_scale", "no_W_O"),)),
        Row("davi", 1, Standing.GRADED, 18, 18),
        Row("elisa", 1, Standing.GRADED, 8, 18),  # short of decimals: no wrong step
        Row("fabio", 1, Standing.GRADED, 17, 18, "output"),  # wrong, nothing reproduces it
        Row("gabi", 1, Standing.MISSING),
        Row("heitor", 1, Standing.MALFORMED),
        Row("ana", 2, Standing.GRADED, 10, 18, "heads[0].S_masked", (("no_mask",),)),
    ]
    s = summarize(book, names)
    by = {m[0]: m[1:] for m in s.mistakes}
    assert by["no_mask"] == (2, 1, ("no_mask",))  # ana (twice: one student) and bruno
    assert by["mask_wrong_triangle"] == (1, 1, ("mask_wrong_triangle",))
    assert by["no_scale"][0] == by["no_W_O"][0] == 1
    assert by["slip"] == (0, 0, ())  # listed although no one made it
    assert [m[0] for m in s.mistakes][: len(names)] == names
    assert s.first_wrong == (("heads[0].S_masked", 3), ("heads[0].S", 1), ("output", 1))
    assert (s.students, s.answers, s.all_right, s.few_decimals, s.no_diagnosis) == (8, 7, 1, 1, 1)
    assert (s.missing, s.malformed, s.changed, s.late) == (1, 1, 0, 0)


def test_the_csv_has_a_line_per_row_with_the_columns_named():
    book = [
        Row(
            "ana",
            1,
            Standing.GRADED,
            10,
            18,
            "heads[0].S",
            (("no_scale",),),
            2,
            dt.timedelta(seconds=3),
            dt.datetime(2026, 12, 1, tzinfo=UTC),
            "r1",
            Chosen.LATEST,
        ),
        Row("bruno", 1, Standing.MISSING),
    ]
    read = list(csv.DictReader(io.StringIO(to_csv(book))))
    assert [r["student"] for r in read] == ["ana", "bruno"]
    assert read[0] | {} == {
        "student": "ana",
        "exercise": "1",
        "steps_right": "10",
        "steps_given": "18",
        "first_wrong": "heads[0].S",
        "diagnosis": "no_scale",
        "attempts": "2",
        "late": "yes",
        "late_seconds": "3",
        "status": "graded",
        "reason": "",
        "received_utc": "2026-12-01T00:00:00Z",
        "submission": "r1",
        "counted": "latest",
        "penalty_percent": "0",
        "points": "10.0",
    }
    assert read[1]["status"] == "no submission" and read[1]["late"] == "no"


def test_the_assignment_holds_the_exercises_shape_and_names_it_by_its_features():
    """The shape is ExerciseOptions' (every field but the seed, none more); --kv-heads alone
    asks grouped-query attention, so the assignment is stored as gqa, as the exercise is."""
    from dataclasses import fields

    from attention_ref.exercises.options import ExerciseOptions

    shape = {f.name for f in fields(ExerciseOptions)} - {"seed"}
    assert shape <= {f.name for f in fields(Assignment)}
    a = Assignment(name="hw", heads=4, d_model=8, kv_heads=2, salt="s")
    assert a.variant == "gqa" and a.options(3).features.grouped
    assert a.definition()["variant"] == "gqa" and a.definition()["kv_heads"] == 2
    # the homework's attention is stored as before the variants: no variant key (the control)
    assert "variant" not in Assignment(name="hw", salt="s").definition()
    both = Assignment(name="hw", heads=4, d_model=8, variant="rope+gqa", window=2, salt="s")
    assert both.variant == "gqa+window+rope" and both.options(0).to_json()["window"] == 2


# --- what a student can read draws no one else's exercises ---------------------------------


def test_a_students_experiment_carries_no_salt_and_draws_no_classmates_seeds():
    """The salt is the server's secret (the gradebook's alone): with it, the public formula
    would give any classmate's seeds from a student's own experiment."""
    a = Assignment(name="hw", exercises=2, salt="5eed0f0a77e47104")
    mine = a.tags(SUBMISSIONS, "ana")
    assert all(a.salt not in v for v in mine.values()), mine
    assert a.salt in a.tags(GRADEBOOK)[DEFINITION_TAG]  # the control: the teacher's keeps it
    copy = Assignment.from_tags(mine)
    with pytest.raises(AssignmentError, match="carries no salt"):
        copy.seeds("bruno")
    assert student_seeds(mine, 2) == a.seeds("ana")


@pytest.mark.parametrize(
    "seeds",
    [
        "",
        "[",
        "[1]",
        "[1, 2, 3]",
        '["1", 2]',
        "[1.0, 2]",
        "[-1, 2]",
        f"[{2**63}, 1]",
        "[true, 1]",
        '{"a": 1}',
    ],
)
def test_seeds_that_are_not_a_students_are_refused(seeds):
    with pytest.raises(AssignmentError, match="no 2 seeds"):
        student_seeds({"attnref.homework.seeds": seeds}, 2)
    assert student_seeds({"attnref.homework.seeds": "[0, 7]"}, 2) == [0, 7]  # the control


def test_a_graded_assignment_prints_no_source_and_an_old_one_keeps_its_own():
    """The default is a graded assignment (no ``attnref exercise`` command on its statements);
    a definition written before the default changed (no ``source`` key) meant ``True``; whether
    statements print their source is no part of the exercises (it may change)."""
    a = Assignment(name="hw", salt="s")
    assert a.source is False and Assignment.from_tags(a.tags(GRADEBOOK)).source is False
    old = a.tags(GRADEBOOK) | {DEFINITION_TAG: '{"exercises": 1, "salt": "s"}'}
    assert Assignment.from_tags(old).source is True
    assert replace(a, source=True).same_exercises(a)
    assert not replace(a, decimals=2).same_exercises(a)  # the control


# --- partial is partial (issue 58) ------------------------------------------------------------


def test_a_partial_answer_all_right_is_not_a_whole_one():
    """carla answered 6 of 18 steps, all right: 6/18 in the table and the run's name, not among
    the class's "all right", her points those 6; the control: a whole answer is 18/18."""
    from attention_ref.classroom.coursework.gradebook_report import cells

    def row(student: str, right: int, given: int) -> Row:
        return Row(student, 1, Standing.GRADED, right, given, steps_asked=18)

    carla, dana = row("carla", 6, 6), row("dana", 18, 18)
    assert not carla.complete and dana.complete
    assert "6/18" in cells(carla) and "18/18" in cells(dana)
    assert carla.run_name == "carla · 1 · 6/18" and dana.run_name == "dana · 1 · 18/18"
    assert "6 of 18 steps right (6 given); no step given is wrong." in carla.note()
    assert "all 18 steps right." in dana.note()
    assert carla.points == 6
    assert summarize([carla, dana]).all_right == 1
    # a row written before the gradebook kept the steps asked reads as it did
    old = Row("eva", 1, Standing.GRADED, 5, 5)
    assert old.asked == 5 and old.complete and old.run_name == "eva · 1 · 5/5"
    assert Row.from_run(carla.tags(), carla.metrics()) == carla
