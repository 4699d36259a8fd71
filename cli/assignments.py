"""``attnref server assign | grade``: the teacher's side of homework on the class server.

``assign NAME`` makes an assignment (each student's own variant of ``--exercises`` problems of
``attnref exercise``); ``grade NAME`` grades every stored answer on the teacher's side and
writes the gradebook (``grades NAME`` prints it: `attention_ref.cli.grades`). The library
is `attention_ref.classroom.exchange`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from attention_ref.cli import exercise_shape as opts
from attention_ref.cli import policy_options as policy
from attention_ref.cli.errors import CLIError
from attention_ref.cli.gradebook_tables import console as _console
from attention_ref.cli.gradebook_tables import print_book
from attention_ref.cli.server import AdminPasswordFile, TrackingUri, server_url, teacher_client
from attention_ref.exercises.features import PLAIN

AssignmentName = Annotated[
    str, typer.Argument(help="The assignment's name (1-64 letters, digits, '.', '_', '-').")
]


def assign(
    ctx: typer.Context,
    name: AssignmentName,
    exercises: Annotated[int, typer.Option("--exercises", help="Exercises per student.")] = 1,
    due: Annotated[
        str | None,
        typer.Option(
            "--due",
            help="Due time, ISO 8601 (2026-12-01T23:59, with +01:00 or Z; without a zone, the "
            "class's: attnref server start --timezone; a date alone: its end). Later "
            "submissions are kept and marked late by the server's clock. Given again for an "
            "existing assignment, it moves the due time.",
            show_default=False,
        ),
    ] = None,
    lang: Annotated[str, typer.Option(help="Language of the statements: en, pt.")] = "en",
    backward: Annotated[
        bool, typer.Option("--backward", help="Add the gradient question.")
    ] = False,
    tokens: opts.Tokens = 3,
    d_model: opts.DModel = None,
    heads: opts.Heads = None,
    causal: opts.Causal = True,
    decimals: opts.Decimals = 3,
    variant: opts.Variant = PLAIN,
    kv_heads: opts.KvHeads = None,
    window: opts.Window = None,
    pos: opts.Pos = "none",
    source: Annotated[
        bool | None,
        typer.Option(
            "--source/--no-source",
            help="--source: a practice assignment, each statement printing the attnref "
            "exercise command that draws it (with --key it prints the key). Left out by "
            "default (a graded assignment); given again, it changes. The numbers themselves "
            "still let attnref explain --input compute every step (see the README).",
            show_default=False,
        ),
    ] = None,
    late_penalty: policy.LatePenalty = None,
    cutoff: policy.Cutoff = None,
    attempts: policy.Attempts = None,
    feedback: policy.FeedbackOption = None,
    tracking_uri: TrackingUri = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Give every student their own variant of an assignment (run again with only what
    changes: moves --due, changes the policy options given, gives it to the students added
    since; the options that draw the exercises, given again, must be the assignment's).

    The policy (late work, attempts, feedback) is printed on every statement; the server
    applies it by its clock, and the gradebook and the grade exports with it.

    Each student's exercises are drawn from the assignment and their name: the same on every
    machine, different between students. The gradebook is the experiment homework/NAME, the
    teacher's alone; each student's submissions go to homework/NAME/STUDENT, theirs alone.
    """
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import Assignment, AssignmentError, parse_due
    from attention_ref.classroom.coursework.policy import PolicyError
    from attention_ref.classroom.exchange.assign import assign as make
    from attention_ref.classroom.exchange.assign import class_zone

    url = server_url(tracking_uri)
    try:
        given = policy.given(late_penalty, cutoff, attempts, feedback)
        variant, heads, d_model = opts.shape(variant, pos, heads, d_model)
        asked = Assignment(
            name=name,
            exercises=exercises,
            tokens=tokens,
            d_model=d_model,
            heads=heads,
            causal=causal,
            lang=lang,
            backward=backward,
            decimals=decimals,
            variant=variant,
            kv_heads=kv_heads,
            window=window,
            due=parse_due(due) if due else None,
            source=bool(source),
        )
        client = teacher_client(url, admin_password_file)
        zone = None
        if due or cutoff:  # checked above; a time typed without a zone is the class's
            zone = class_zone(client)
            given = policy.given(late_penalty, cutoff, attempts, feedback, zone)
            asked = replace(asked, due=parse_due(due, zone=zone) if due else None)
        done = make(
            client,
            asked,
            due_given=due is not None,
            policy_given=given,
            source_given=source is not None,
            shape_given=opts.given_options(ctx),
            zone=zone,
        )
    except (ServerError, AssignmentError, PolicyError) as e:
        raise CLIError(str(e)) from None
    from attention_ref.cli.tables import say

    say(_console(), done.describe(url))  # broken at the terminal's width, commands whole


def grade(
    name: AssignmentName,
    best: Annotated[
        bool,
        typer.Option("--best", help="The best attempt counts (default: the latest)."),
    ] = False,
    use: Annotated[
        list[str] | None,
        typer.Option(
            "--use",
            help="This submission (run id) counts for its student and exercise, whatever "
            "the others; repeat for several.",
            show_default=False,
        ),
    ] = None,
    release: Annotated[
        bool,
        typer.Option(
            "--release",
            help="Release the grades to the students of an assignment given with --feedback "
            "none (the others see theirs at once).",
        ),
    ] = False,
    tracking_uri: TrackingUri = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Grade every submission of an assignment from its stored answer and write the gradebook.

    Each finished submission is downloaded, compared with the hash the server recorded when
    it was received, and checked against the student's own exercise; the latest counts
    unless --best or --use says otherwise. Run again after new submissions: grades are
    updated in place.
    """
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.coursework.gradebook import ui_url
    from attention_ref.classroom.exchange.grade import grade as run_grade
    from attention_ref.cli.tables import say

    url = server_url(tracking_uri)
    try:
        done = run_grade(
            teacher_client(url, admin_password_file),
            name,
            best=best,
            use=use or (),
            release=release,
        )
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    a = done.assignment
    print_book(name, url, list(done.rows), a.timezone, a.policy.late_words(zone=a.timezone))
    n = len(done.graded)
    say(  # broken at the terminal's width, like the lines around it
        _console(),
        f"graded {n} submission{'s' if n != 1 else ''} of {name!r}; the gradebook "
        f"(experiment {done.gradebook_id}) holds {done.written} grades",
    )
    say(_console(), f"the gradebook in the UI: {ui_url(url, done.gradebook_id)}")
