"""An assignment's policy on the real class server, the server's clock deciding (issue 42):
first what it must refuse (bad options, one line and nothing made; a submission after the
cut-off; an attempt past the limit, through the library and through raw HTTP; an answer that
names no exercise under a limit), then the penalty in the gradebook and the exports, and the
three feedback policies as ``homework submit`` and ``status`` show them."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from dataclasses import replace

import pytest

from attention_ref.classroom.connection.class_client import ClassClient, HomeworkError, tag_map
from attention_ref.classroom.coursework.assignment import (
    Assignment,
    gradebook_experiment,
    student_experiment,
)
from attention_ref.classroom.coursework.lms import to_lms_csv
from attention_ref.classroom.coursework.policy import EXERCISE_TAG, POLICY_TAG, Feedback, Policy
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange import grade as grading
from attention_ref.classroom.exchange import submit as submitting
from attention_ref.classroom.exchange.fetch import mine
from tests.classroom.conftest import one_line_error, student_env
from tests.classroom.test_homework import answer, finished_runs, here, tags_of, teacher_env
from tests.classroom.test_screens import table_rows

pytestmark = pytest.mark.slow
UTC = dt.UTC
__all__ = ["here"]  # the fixture, imported for this module's tests


def now() -> dt.datetime:
    return dt.datetime.now(UTC).replace(microsecond=0)


def test_bad_policy_options_are_one_line_and_make_nothing(server, students, tmp_path, here):
    teacher = teacher_env(server)
    bad = {
        ("--due", "2099-01-01T00:00Z", "--late-penalty", "120"): "--late-penalty is a "
        "percentage from 0 to 100, got 120",
        ("--late-penalty", "10"): "--late-penalty needs a due time (--due)",
        ("--due", "2099-01-02T00:00Z", "--cutoff", "2099-01-01T00:00Z"): "--cutoff "
        "2099-01-01 00:00:00 UTC is before the due time 2099-01-02 00:00:00 UTC",
        ("--due", "2099-01-01T00:00Z", "--cutoff", "soon"): "--cutoff must be an ISO time",
        ("--feedback", "maybe"): "--feedback is one of full, steps, none, got 'maybe'",
        ("--attempts", "0"): "--attempts must be between 1 and 100, got 0",
    }
    for args, said in bad.items():
        out = here(["server", "assign", "hw-pol-bad", *args], teacher, tmp_path)
        assert out.returncode == 2 and said in one_line_error(out), (args, out.stderr)
    admin = ClassClient(server.url, server.admin)
    assert admin.experiment(gradebook_experiment("hw-pol-bad")) is None


def test_the_teacher_sets_the_policy_and_changes_one_rule_at_a_time(
    server, students, tmp_path, here
):
    teacher, admin = teacher_env(server), ClassClient(server.url, server.admin)
    made = here(
        [
            "server",
            "assign",
            "hw-pol",
            "--due",
            "2099-01-01T12:00Z",
            "--late-penalty",
            "10",
            "--attempts",
            "3",
        ],
        teacher,
        tmp_path,
    )
    assert made.returncode == 0, made.stderr
    assert "policy: Late work loses 10% of its points per day" in made.stdout
    again = here(["server", "assign", "hw-pol", "--attempts", "2"], teacher, tmp_path)
    assert again.returncode == 0, again.stderr
    book = admin.experiment(gradebook_experiment("hw-pol"))
    assert Assignment.from_tags(tag_map(book)).policy == Policy(late_penalty=10, attempts=2)
    # the student's experiment holds the same policy: what the gate reads
    theirs = admin.experiment(student_experiment("hw-pol", "alice"))
    assert Policy.from_json(tag_map(theirs)[POLICY_TAG]) == Policy(late_penalty=10, attempts=2)
    # a rule that no longer holds with what is kept is refused, and nothing changes
    cut = here(["server", "assign", "hw-pol", "--cutoff", "2098-01-01T00:00Z"], teacher, tmp_path)
    assert "is before the due time" in one_line_error(cut)
    book = admin.experiment(gradebook_experiment("hw-pol"))
    assert Assignment.from_tags(tag_map(book)).policy.cutoff is None
    # every statement says the policy, in the assignment's words
    env = student_env(server.url, "alice", students["alice"])
    fetched = here(["homework", "fetch", "hw-pol", "--out", "mine"], env, tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    statement = " ".join((tmp_path / "mine" / "statement-1.md").read_text().split())
    assert (
        "Late work loses 10% of its points per day or part of a day. You have 2 attempts per "
        "exercise; the latest counts." in statement
    )


def test_the_server_refuses_a_submission_after_the_cutoff_by_its_clock(server, students):
    admin, bob = ClassClient(server.url, server.admin), ("bob", students["bob"])
    t = now()
    a = assigning.assign(
        admin,
        Assignment(
            name="hw-cut",
            due=t - dt.timedelta(hours=2),
            policy=Policy(cutoff=t - dt.timedelta(hours=1)),
        ),
    ).assignment
    with pytest.raises(HomeworkError) as refused:
        submitting.submit(ClassClient(server.url, bob), "hw-cut", answer(a, "bob"))
    said = str(refused.value)
    assert "the cut-off for this assignment" in said and "by the server's clock" in said
    assert said.endswith("nothing was submitted"), said  # not "submit again": it is final
    exp_id = mine(ClassClient(server.url, bob), "hw-cut").experiment_id
    assert finished_runs(server, exp_id) == []
    # the control: the teacher moves the cut-off later, and the same answer is received, late
    assigning.assign(admin, a, policy_given={"cutoff": t + dt.timedelta(days=1)})
    sent = submitting.submit(ClassClient(server.url, bob), "hw-cut", answer(a, "bob"))
    assert sent.late is not None and sent.late >= dt.timedelta(hours=2)
    assert len(finished_runs(server, exp_id)) == 1


def test_the_server_refuses_an_attempt_past_the_limit(server, students):
    admin, carol = ClassClient(server.url, server.admin), ("carol", students["carol"])
    a = assigning.assign(
        admin, Assignment(name="hw-tries", exercises=2, policy=Policy(attempts=2))
    ).assignment
    student = ClassClient(server.url, carol)
    first = [
        submitting.submit(student, "hw-tries", answer(a, "carol", 1, m)) for m in ("no_scale", None)
    ]
    assert [s.attempt for s in first] == [1, 2]
    with pytest.raises(HomeworkError, match=r"you have used your 2 attempts at exercise 1"):
        submitting.submit(student, "hw-tries", answer(a, "carol", 1, "K_Qt"))
    # exercise 2 has its own count
    assert submitting.submit(student, "hw-tries", answer(a, "carol", 2)).attempt == 1
    me = mine(student, "hw-tries")
    runs = finished_runs(server, me.experiment_id)
    assert sorted(tags_of(r)[EXERCISE_TAG] for r in runs) == ["1", "1", "2"]
    # past the client: an answer that names none of the student's exercises is refused under
    # a limit, and the exercise tag is the server's to write
    junk = submitting.Checked(json.dumps({"exercise": {"seed": 1}}).encode(), 2, first[0].report)
    with pytest.raises(HomeworkError, match=r"names none of your exercises"):
        submitting.submit_answers(student, me, [junk])
    status, said = student.send(
        "/api/2.0/mlflow/runs/create",
        {"experiment_id": me.experiment_id, "tags": [{"key": EXERCISE_TAG, "value": "2"}]},
    )
    assert status == 403 and "the teacher's and the server's to write" in said["message"]
    assert len(finished_runs(server, me.experiment_id)) == 3
    # the gradebook counts the first two attempts; the second, right, is the latest of them
    row = next(
        r for r in grading.grade(admin, "hw-tries").rows if r.student == "carol" and r.exercise == 1
    )
    assert (row.attempts, row.submission, row.steps_right) == (2, first[1].run_id, row.steps_given)


def test_a_late_penalty_is_taken_in_the_gradebook_and_the_exports(server, students):
    admin, dave = ClassClient(server.url, server.admin), ("dave", students["dave"])
    a = assigning.assign(
        admin,
        Assignment(
            name="hw-penalty",
            due=now() - dt.timedelta(hours=25),  # 1 day and 1 hour late: 2 days, 40%
            policy=Policy(late_penalty=20),
        ),
    ).assignment
    submitting.submit(ClassClient(server.url, dave), "hw-penalty", answer(a, "dave"))
    book = grading.grade(admin, "hw-penalty").rows
    row = next(r for r in book if r.student == "dave")
    assert row.penalty == 40 and row.points == round(row.steps_right * 0.6, 2)
    _, stored = grading.gradebook(admin, "hw-penalty")  # as the gradebook's runs hold it
    whole = dt.timedelta(seconds=int(row.late.total_seconds()))  # the runs keep seconds
    assert next(r for r in stored if r.student == "dave") == replace(row, late=whole)
    moodle = list(csv.reader(io.StringIO(to_lms_csv(stored, "hw-penalty", "moodle", 18))))
    dave_row = next(line for line in moodle if line[0] == "dave")
    assert float(dave_row[1]) == row.points and "(-40%)" in dave_row[2]


def submit_wrong(server, students, tmp_path, here, name: str, policy: Policy):
    """alice's wrong answer to a new assignment of ``policy``, through the commands."""
    admin = ClassClient(server.url, server.admin)
    a = assigning.assign(admin, Assignment(name=name, policy=policy)).assignment
    env = student_env(server.url, "alice", students["alice"])
    path = tmp_path / f"{name}.json"
    path.write_bytes(answer(a, "alice", 1, "no_scale"))
    return a, env, here(["homework", "submit", name, str(path)], env, tmp_path)


def test_feedback_steps_shows_the_verdicts_and_not_the_right_values(
    server, students, tmp_path, here
):
    _, env, out = submit_wrong(
        server, students, tmp_path, here, "hw-steps", Policy(feedback=Feedback.STEPS)
    )
    assert out.returncode == 1, out.stderr
    assert "WRONG" in out.stdout and "First wrong step" in out.stdout
    assert ", right " not in out.stdout  # an entry's "yours 0.5, right 0.707"
    assert "yours" not in out.stdout and "Diagnosis" not in out.stdout
    # the control: the default policy shows the values and the diagnosis
    _, _, full = submit_wrong(server, students, tmp_path, here, "hw-full", Policy())
    assert ", right " in full.stdout and "Diagnosis: no scaling" in full.stdout
    # graded, the student reads the steps, not the diagnosis
    grading.grade(ClassClient(server.url, server.admin), "hw-steps")
    status = here(["homework", "status", "hw-steps"], env, tmp_path)
    assert "/" in status.stdout and "scaling" not in status.stdout, status.stdout


def test_feedback_none_says_received_until_the_grades_are_released(
    server, students, tmp_path, here
):
    _, env, out = submit_wrong(
        server, students, tmp_path, here, "hw-none", Policy(feedback=Feedback.NONE)
    )
    assert out.returncode == 0, out.stderr  # the exit code would tell the verdict
    assert "WRONG" not in out.stdout and "yours" not in out.stdout
    assert "comes when your teacher releases the grades" in out.stdout
    admin = ClassClient(server.url, server.admin)
    grading.grade(admin, "hw-none")  # graded, not released: nothing on the submission
    _, before = submitting.my_submissions(
        ClassClient(server.url, ("alice", students["alice"])), "hw-none"
    )
    assert before and all(not s.grade for s in before)
    status = here(["homework", "status", "hw-none"], env, tmp_path)
    assert "not released yet" in cells_of(status.stdout), status.stdout
    released = here(["server", "grade", "hw-none", "--release"], teacher_env(server), tmp_path)
    assert released.returncode == 0, released.stderr
    _, after = submitting.my_submissions(
        ClassClient(server.url, ("alice", students["alice"])), "hw-none"
    )
    assert after[0].grade["attnref.grade.diagnosis"] == "no_scale"
    shown = here(["homework", "status", "hw-none"], env, tmp_path)
    words = " ".join(cells_of(shown.stdout))
    assert "not released yet" not in words and "no scaling" in words, shown.stdout


def test_a_policy_changed_to_none_takes_the_grades_already_written_off_the_submissions(
    server, students, tmp_path, here
):
    """Graded under ``full``, the submission carries its grade; the teacher then holds the
    feedback back (``--feedback none``): the next grading takes it off, so the student reads
    nothing of it by any route until the release (the control: the grade was there)."""
    _, env, out = submit_wrong(server, students, tmp_path, here, "hw-later", Policy())
    assert out.returncode == 1, out.stderr
    admin = ClassClient(server.url, server.admin)
    alice = ClassClient(server.url, ("alice", students["alice"]))
    grading.grade(admin, "hw-later")
    _, graded = submitting.my_submissions(alice, "hw-later")
    assert graded[0].grade["attnref.grade.diagnosis"] == "no_scale"  # the control
    changed = here(
        ["server", "assign", "hw-later", "--feedback", "none"], teacher_env(server), tmp_path
    )
    assert changed.returncode == 0, changed.stderr
    grading.grade(admin, "hw-later")
    _, held = submitting.my_submissions(alice, "hw-later")
    assert held and all(not s.grade for s in held)
    run_tags = tags_of(alice.run(held[0].run_id))  # the run itself, as any route reads it
    assert not any(k.startswith("attnref.grade.") for k in run_tags), run_tags
    later = here(["homework", "status", "hw-later"], env, tmp_path).stdout
    assert "not released yet" in cells_of(later), later
    released = here(["server", "grade", "hw-later", "--release"], teacher_env(server), tmp_path)
    assert released.returncode == 0, released.stderr
    _, after = submitting.my_submissions(alice, "hw-later")
    assert after[0].grade["attnref.grade.diagnosis"] == "no_scale"


def cells_of(table: str) -> list[str]:
    """Every cell of a screen's table, its lines joined (a cell of words may go over lines at
    the terminal's width: 80 columns in a test worker)."""
    return [cell for row in table_rows(table) for cell in row]
