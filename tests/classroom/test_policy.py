"""An assignment's policy, pure: what it refuses first (a penalty outside 0-100, attempts
outside 1-100, a cut-off before the due time, a penalty or a cut-off with no due time, a tag
that is no policy), then the penalty per day or part of a day, the attempts and the cut-off as
the gradebook holds them, the points the exports sum, and the words a statement prints."""

from __future__ import annotations

import datetime as dt

import pytest

from attention_ref.classroom.coursework.assignment import Assignment, AssignmentError
from attention_ref.classroom.coursework.gradebook import Graded, Row, Standing, held, rows
from attention_ref.classroom.coursework.lms import feedback_of, grade_of
from attention_ref.classroom.coursework.policy import Feedback, Policy, PolicyError

UTC = dt.UTC
DUE = dt.datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kw", "said"),
    [
        ({"late_penalty": -1}, "--late-penalty is a percentage from 0 to 100, got -1"),
        ({"late_penalty": 101}, "--late-penalty is a percentage from 0 to 100, got 101"),
        ({"attempts": 0}, "--attempts must be between 1 and 100, got 0"),
        ({"attempts": 101}, "--attempts must be between 1 and 100, got 101"),
        ({"feedback": "some"}, "'some' is not a valid Feedback"),
    ],
)
def test_a_policy_out_of_its_range_is_refused(kw, said):
    with pytest.raises(ValueError, match=said):
        Policy(**kw)


def test_late_rules_need_a_due_time_and_a_cutoff_not_before_it():
    with pytest.raises(AssignmentError, match=r"--late-penalty needs a due time"):
        Assignment(name="a", policy=Policy(late_penalty=10))
    with pytest.raises(AssignmentError, match=r"--cutoff needs a due time"):
        Assignment(name="a", policy=Policy(cutoff=DUE))
    with pytest.raises(AssignmentError, match=r"--cutoff 2026-12-01 11:59:00 UTC is before"):
        Assignment(name="a", due=DUE, policy=Policy(cutoff=DUE - dt.timedelta(minutes=1)))
    # the control: a cut-off at the due time itself (no late work at all) holds
    assert Assignment(name="a", due=DUE, policy=Policy(cutoff=DUE)).policy.cutoff == DUE


def test_a_tag_that_is_no_policy_is_refused_and_an_empty_one_is_the_default():
    for bad in ("{", "[]", '{"late_penalty": "x"}', '{"nope": 1}', '{"cutoff": 3}'):
        with pytest.raises(PolicyError, match="is not a policy"):
            Policy.from_json(bad)
    assert Policy.from_json("") == Policy()
    every = Policy(late_penalty=15, cutoff=DUE, attempts=3, feedback=Feedback.NONE)
    assert Policy.from_json(every.to_json()) == every
    a = Assignment(name="a", due=DUE, policy=every)
    assert Assignment.from_tags(a.tags("gradebook")).policy == every
    assert a.definition() == Assignment(name="a", salt=a.salt).definition()  # not an exercise


@pytest.mark.parametrize(
    ("late", "percent"),
    [
        (None, 0),
        (dt.timedelta(seconds=1), 10),
        (dt.timedelta(days=1), 10),
        (dt.timedelta(days=1, seconds=1), 20),
        (dt.timedelta(days=9, hours=23), 100),
        (dt.timedelta(days=30), 100),
    ],
)
def test_the_penalty_is_per_day_or_part_of_a_day_and_at_most_everything(late, percent):
    assert Policy(late_penalty=10).penalty(late) == percent
    assert Policy().penalty(late) == 0


def graded(run: str, minute: int, right: int = 18, k: int = 1) -> Graded:
    received = DUE + dt.timedelta(minutes=minute)
    late = received - DUE if received > DUE else None
    return Graded("ana", run, k, received, late, Standing.GRADED, right, 18)


def test_the_gradebook_counts_the_first_attempts_and_none_after_the_cutoff():
    tries = [graded("c", 30, 15), graded("a", -20, 10), graded("b", -10, 12)]
    assert [g.run_id for g in held(tries, Policy())] == ["a", "b", "c"]
    assert [g.run_id for g in held(tries, Policy(attempts=2))] == ["a", "b"]
    cut = Policy(cutoff=DUE + dt.timedelta(minutes=29))
    assert [g.run_id for g in held(tries, cut)] == ["a", "b"]
    (row,) = rows(tries, ["ana"], 1, policy=Policy(attempts=2))
    assert (row.submission, row.attempts, row.steps_right) == ("b", 2, 12)
    (row,) = rows(tries, ["ana"], 1)  # the control: unlimited, the latest (late) counts
    assert (row.submission, row.attempts, row.late) == ("c", 3, dt.timedelta(minutes=30))


def test_the_late_penalty_takes_its_share_of_the_points_the_exports_sum():
    policy = Policy(late_penalty=25)
    late, on_time = graded("l", 24 * 60 + 1, 16), graded("o", -5, 18, k=2)
    book = rows([late, on_time], ["ana"], 2, policy=policy)
    assert [(r.penalty, r.points) for r in book] == [(50, 8.0), (0, 18.0)]
    assert book[0].late_text == "late by 1 d 0 h 01 min (-50%)" and book[0].run_name.endswith(
        "late -50%"
    )
    assert grade_of(book) == 26 and isinstance(grade_of(book), int)
    assert Row.from_run(book[0].tags(), book[0].metrics()) == book[0]
    odd = rows([graded("l", 1, 17)], ["ana"], 1, policy=Policy(late_penalty=15))
    assert odd[0].points == 14.45 and grade_of(odd) == 14.45
    # --best weighs the penalty: 16 steps on time beat 18 steps two days late at 25%
    two = [graded("early", -1, 16), graded("late", 2 * 24 * 60, 18)]
    (best,) = rows(two, ["ana"], 1, best=True, policy=policy)
    assert best.submission == "early"
    (best,) = rows(two, ["ana"], 1, best=True)  # the control: no penalty, the most steps
    assert best.submission == "late"


def test_the_exports_feedback_holds_the_diagnosis_back_under_steps():
    r = Row("ana", 1, Standing.GRADED, 10, 18, "heads[0].S", (("no_scale",),))
    assert feedback_of([r]) == "exercise 1: 10/18 steps right (no_scale)"
    assert feedback_of([r], diagnosis=False) == "exercise 1: 10/18 steps right"


def test_the_statement_says_the_policy_in_the_assignments_language():
    default = Policy()
    assert default.words() == (
        "Late work is accepted with no penalty. You may submit again as often as you like; "
        "the latest attempt counts. On submitting you see the check at once: each step, the "
        "right values of wrong entries, the diagnosis."
    )
    assert "Late" not in default.words(due=False)
    strict = Policy(late_penalty=10, cutoff=DUE, attempts=1, feedback=Feedback.NONE)
    assert strict.words("pt") == (
        "Entregas atrasadas perdem 10% dos pontos por dia ou fração de dia e são recusadas "
        "depois de 2026-12-01 12:00 UTC. Você tem 1 tentativa por exercício; vale a última. "
        "Ao enviar você vê que a resposta foi recebida; a correção vem quando o professor "
        "liberar as notas."
    )
    assert "3 attempts per exercise" in Policy(attempts=3).words()
    assert "not the right values" in Policy(feedback=Feedback.STEPS).words()
