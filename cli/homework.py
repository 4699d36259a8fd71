"""``attnref homework``: a student's side of an assignment on the class server.

``fetch NAME`` writes the student's own exercises (statement in Markdown and LaTeX, the answer
to fill in); ``submit NAME ANSWER.json`` checks the answer here, stores it on the server and
prints the check report at once; ``status NAME`` lists the student's submissions with the
teacher's grades. The account is MLflow's: ``MLFLOW_TRACKING_URI``, ``MLFLOW_TRACKING_USERNAME``,
``MLFLOW_TRACKING_PASSWORD`` (and ``MLFLOW_TRACKING_SERVER_CERT_PATH`` for HTTPS).
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.language import from_environment
from attention_ref.cli.tables import echo
from attention_ref.cli.words import said as cli_said

if TYPE_CHECKING:
    from attention_ref.classroom.connection.class_client import ClassClient

#: the commands are registered by `attention_ref.cli.main` (with their one-line summaries)
homework_app = typer.Typer(
    name="homework",
    help="Homework on the class server: fetch your exercises, submit your answers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

AssignmentName = Annotated[str, typer.Argument(help="The assignment's name (your teacher's).")]
TrackingUri = Annotated[
    str | None,
    typer.Option(
        "--tracking-uri",
        help="The class server (default: $MLFLOW_TRACKING_URI); your account in "
        "$MLFLOW_TRACKING_USERNAME and $MLFLOW_TRACKING_PASSWORD.",
        show_default=False,
    ),
]


def account(tracking_uri: str | None, say: bool = False) -> ClassClient:
    """The student's client of the class server, from the option and MLflow's variables
    (``MLFLOW_TRACKING_SERVER_CERT_PATH`` for HTTPS); ``say``: each wait for a busy server is
    said on the error stream, in one line."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.connection.patience import PATIENCE
    from attention_ref.classroom.exchange.student_words import said

    lang = from_environment()  # the assignment's is not known yet: the student's
    url = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not url or not url.startswith(("http://", "https://")):
        raise CLIError(said("no_url", lang), lang)
    user = os.environ.get("MLFLOW_TRACKING_USERNAME")
    password = os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if not user or not password:
        raise CLIError(said("no_account", lang), lang)
    patience = PATIENCE
    if say:
        patience = replace(PATIENCE, say=_waited)
    return ClassClient(url, (user, password), patience=patience)


def _waited(line: str) -> None:
    """A wait for a busy server, said on stderr in one line (`printable`: the server's words)."""
    from attention_ref.render.printable import printable

    print(printable(f"attnref: {line}"), file=sys.stderr)


def fetch(
    name: AssignmentName,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder to write into (default: ./NAME).", show_default=False),
    ] = None,
    tracking_uri: TrackingUri = None,
) -> None:
    """Write your exercises of an assignment: statement-K.md, statement-K.tex, answer-K.json.

    An answer-K.json already there is kept (it may hold your work).
    """
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.exchange.fetch import mine, write_exercises
    from attention_ref.classroom.exchange.student_words import said

    lang = from_environment()  # the assignment's is not known yet: the student's
    client = account(tracking_uri)
    folder = out if out is not None else Path(name)
    if folder.exists() and not folder.is_dir():
        raise CLIError(cli_said("out_is_file", lang, out=folder), lang)
    try:
        me = mine(client, name, lang)
        done = write_exercises(me, folder)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e), getattr(e, "lang", "en")) from None
    except OSError as e:
        raise CLIError(cli_said("cannot_write", lang, out=folder, why=e.strerror), lang) from None
    a = me.assignment
    due = a.describe_due(a.lang)
    echo(said("fetched", a.lang, name=a.name, student=me.student, n=a.exercises, due=due))
    for path, what in done:
        echo(f"  {what:<7} {path}")  # indented: whole, as a path to copy
    echo(said("fill_in", a.lang, name=a.name, file=folder / "answer-1.json"))


def submit(
    name: AssignmentName,
    answers: Annotated[
        list[Path],
        typer.Argument(
            help="Your answer files (answer-K.json as fetch wrote them, filled in).",
            show_default=False,
        ),
    ],
    tracking_uri: TrackingUri = None,
) -> int:
    """Submit answers: each is checked here (the report is printed), then stored on the
    class server as a new attempt; the server's clock says whether it is late.

    Every file is read and checked before anything is sent: a file that is not an answer to
    one of your exercises is one line, exit 2, and nothing is stored. Exit code 0 when every
    step of every answer is right, 1 otherwise (0 once stored where the assignment's feedback
    policy holds the check back). What you see follows that policy: the statement says it.
    """
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.exchange.fetch import mine
    from attention_ref.classroom.exchange.student_words import said
    from attention_ref.classroom.exchange.submit import (
        checked_answer,
        submit_answers,
        submitted_line,
    )
    from attention_ref.cli.check import report_text

    client = account(tracking_uri, say=True)
    lang = from_environment()  # before the server names the assignment's language
    texts = []
    for path in answers:
        if not path.exists():
            raise CLIError(said("no_file", lang, path=path, name=name), lang)
        if path.suffix in (".md", ".tex") and path.name.startswith("statement-"):
            raise CLIError(said("statement_not_answer", lang, path=path), lang)
        try:
            texts.append(path.read_bytes())
        except OSError as e:
            raise CLIError(cli_said("cannot_read", lang, path=path, why=e.strerror), lang) from None
    try:
        me = mine(client, name, lang)  # one request, inside the patience like every other
        checked = []
        for path, text in zip(answers, texts, strict=True):
            try:
                # every file before anything is sent; a hint names the files where they are
                folder = "" if path.parent == Path() else f"{path.parent}/"
                checked.append(checked_answer(text, me, folder))
            except (ValueError, TypeError) as e:
                raise CLIError(f"{path}: {e}", getattr(e, "lang", "en")) from None
        sent = submit_answers(client, me, checked)  # each file stored, then one read-back
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e), getattr(e, "lang", "en")) from None
    policy, lang = me.assignment.policy, me.assignment.lang
    for path, one in zip(answers, sent, strict=True):
        if policy.shows_steps:  # the feedback policy: what the student sees now
            print(report_text(one.report, values=policy.shows_values))
        echo(submitted_line(one, str(path), name, lang, me.assignment.timezone))
    if not policy.shows_steps:
        echo(said("held_back", lang))
        return 0  # the exit code would tell what the policy holds back
    if not all(one.report.all_right for one in sent):
        raise typer.Exit(1)
    return 0


def status(name: AssignmentName, tracking_uri: TrackingUri = None) -> None:
    """Your submissions of an assignment: when each was received, late or not, and the
    teacher's grade once given."""
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.exchange.student_words import said
    from attention_ref.classroom.exchange.submit import my_submissions
    from attention_ref.cli.tables import Column, console, print_table

    lang = from_environment()  # the assignment's is not known yet: the student's
    client = account(tracking_uri)
    try:
        me, found = my_submissions(client, name, lang)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e), getattr(e, "lang", "en")) from None
    lang = me.assignment.lang
    due = me.assignment.describe_due(lang)
    if not found:
        # the answer file where it is from here: this folder, else the one fetch writes
        here = Path("answer-1.json")
        file = here if here.is_file() else Path(name) / here
        echo(said("no_submissions", lang, name=name, student=me.student, due=due, file=file))
        return
    w = lambda key: said(key, lang)  # noqa: E731
    # what tells the submissions apart and what each is worth is kept: the exercise, when it
    # was received, how late (and what that costs), the grade, which one counts, the
    # diagnosis (words over lines where the room is short); the first wrong step goes first
    # of them, the run id and its status before (every shown one is received and finished)
    columns = [
        Column(w("submission"), rank=1),
        Column(w("exercise"), keep=True, rank=9),
        Column(w("received"), keep=True, rank=6, wrap=True),
        # left out only while no submission is late: a late one must not read as on time
        Column(w("late"), keep=any(s.late for s in found), rank=7, wrap=True),
        Column(w("status"), rank=2),
        Column(w("grade"), keep=True, rank=9, wrap=True),
        Column(w("first_wrong"), keep=True, rank=3),
        Column(w("diagnosis"), keep=True, rank=9, wrap=True),
        Column(w("counts"), keep=True, rank=8),
    ]
    print_table(
        console(),
        said("submissions", lang, name=name, student=me.student, n=len(found), due=due),
        columns,
        [s.cells(lang, me.assignment.policy.shows_steps, me.assignment.timezone) for s in found],
        elsewhere=w("wider"),
        lang=lang,
    )
