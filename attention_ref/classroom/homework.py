"""Homework on the class server, over its REST API: assign, fetch, submit, grade, gradebook.

The teacher (an admin account) **assigns**: the gradebook experiment ``homework/NAME`` and, for
every student, ``homework/NAME/STUDENT`` with their seeds, granted to them alone
(`attention_ref.classroom.assignment`). A student **fetches** their exercises from their own
experiment's tags and **submits** an answer: a run of their own in their experiment holding
``answer.json``, ended FINISHED; the class's gate (`attention_ref.classroom.auth`) records the
answer's SHA-256 and the time it was received, on the server's clock, and from then on the
submission is final. The student sees the check report at once (computed on their machine,
from the same checker). The teacher **grades**: every finished submission is downloaded,
its hash compared with the one the server recorded, and checked again on the teacher's side
against the student's own variant (never the problem the file names); the grade of each
student's exercise is a run of the teacher's in the gradebook, and each submission gets its
grade in tags the student can read. The gradebook (`attention_ref.classroom.gradebook`) is read
back from those runs.

Every failure is a `HomeworkError` (or the server's `ServerError`) of one line; a bad answer
file is the checker's `InputError`. Nothing here changes what a student may do: that is the
gate's, tested over HTTP.

This module is the verbs' one interface; each family is a module of
`attention_ref.classroom.exchange` (as nbgrader's exchange has one per verb): `rest` (the
REST client they share), `assign`, `fetch`, `submit` and `grade` (with the gradebook read
back).
"""

from __future__ import annotations

from attention_ref.classroom.exchange.assign import (
    Assigned,
    assign,
    assignments,
    catalogue_names,
    enrol_everywhere,
)
from attention_ref.classroom.exchange.fetch import Mine, mine, write_exercises
from attention_ref.classroom.exchange.grade import (
    Grading,
    grade,
    grade_submission,
    gradebook,
    steps_asked,
)
from attention_ref.classroom.exchange.grade import _student_experiments as _student_experiments
from attention_ref.classroom.exchange.rest import Auth, HomeworkError, list_students
from attention_ref.classroom.exchange.rest import _answer_path as _answer_path
from attention_ref.classroom.exchange.rest import _call as _call
from attention_ref.classroom.exchange.rest import _download as _download
from attention_ref.classroom.exchange.rest import _search_runs as _search_runs
from attention_ref.classroom.exchange.rest import _tags as _tags
from attention_ref.classroom.exchange.submit import (
    CLIENT_KEY_TAG,
    SUBMITTED,
    MySubmission,
    Submitted,
    check_text,
    identify,
    my_submissions,
    submit,
    submitted_line,
)

__all__ = ["CLIENT_KEY_TAG", "SUBMITTED", "Assigned", "Auth", "Grading", "HomeworkError", "Mine",
           "MySubmission", "Submitted", "assign", "assignments", "catalogue_names", "check_text",
           "enrol_everywhere", "grade", "grade_submission", "gradebook", "identify",
           "list_students", "mine", "my_submissions", "steps_asked", "submit", "submitted_line",
           "write_exercises"]  # fmt: skip
