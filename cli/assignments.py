"""``attnref server assign | grade | grades``: the teacher's side of homework on the class server.

``assign NAME`` makes an assignment (each student's own variant of ``--exercises`` problems of
``attnref exercise``); ``grade NAME`` grades every stored answer on the teacher's side and
writes the gradebook; ``grades NAME`` prints it, writes it as CSV, and with ``--summary`` says
what the class got wrong. The library is `attention_ref.classroom.exchange`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli import exercise_shape as opts
from attention_ref.cli import policy_options as policy
from attention_ref.cli.errors import CLIError
from attention_ref.cli.server import AdminPasswordFile, TrackingUri, server_url, teacher_client
from attention_ref.exercises.features import PLAIN

if TYPE_CHECKING:
    from attention_ref.classroom.coursework.gradebook import Row
    from attention_ref.classroom.coursework.gradebook_report import Summary

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
            help="Due time, ISO 8601 (2026-12-01T23:59, with +01:00 or Z; without a zone, this "
            "machine's; a date alone: its end). Later submissions are kept and marked late by "
            "the server's clock. Given again for an existing assignment, it moves the due time.",
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
        done = make(
            teacher_client(url, admin_password_file),
            asked,
            due_given=due is not None,
            policy_given=given,
            source_given=source is not None,
            shape_given=opts.given_options(ctx),
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
    _print_book(name, url, list(done.rows))
    n = len(done.graded)
    say(  # broken at the terminal's width, like the lines around it
        _console(),
        f"graded {n} submission{'s' if n != 1 else ''} of {name!r}; the gradebook "
        f"(experiment {done.gradebook_id}) holds {done.written} grades",
    )
    say(_console(), f"the gradebook in the UI: {ui_url(url, done.gradebook_id)}")


def grades(
    name: AssignmentName,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary",
            help="Also what the class got wrong: each mistake of the catalogue, the first "
            "wrong steps.",
        ),
    ] = False,
    csv_path: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            help="Where to write the CSV (default: ./NAME-grades.csv, ./NAME-moodle.csv, "
            "./NAME-canvas.csv).",
            show_default=False,
        ),
    ] = None,
    csv_format: Annotated[
        str,
        typer.Option(
            "--csv-format",
            help="attnref: every column of the gradebook, a row per exercise. moodle, canvas: "
            "a row per student, the grade (steps right less any late penalty, summed over the "
            "exercises) and its "
            "feedback, as that system's grade import reads it.",
        ),
    ] = "attnref",
    roster: policy.Roster = None,
    tracking_uri: TrackingUri = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Print an assignment's gradebook (as `grade` last wrote it) and write it as CSV.

    Reads as $MLFLOW_TRACKING_USERNAME / $MLFLOW_TRACKING_PASSWORD if set (a teacher's
    account), else as admin.
    """
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.coursework.gradebook_report import summarize, to_csv
    from attention_ref.classroom.coursework.lms import (
        BOM,
        SYSTEMS,
        RosterError,
        import_steps,
        moodle_field,
        read_roster,
        to_lms_csv,
    )
    from attention_ref.classroom.exchange.assign import catalogue_names
    from attention_ref.classroom.exchange.grade import gradebook, steps_asked
    from attention_ref.cli.tables import say
    from attention_ref.exercises.catalogue import mistake_words

    if csv_format not in ("attnref", *SYSTEMS):
        raise CLIError(f"--csv-format {csv_format!r}: choose attnref, {', '.join(SYSTEMS)}")
    people = None
    if roster is not None:
        if csv_format == "attnref":
            raise CLIError("--roster goes with --csv-format moodle or canvas")
        try:
            people = read_roster(roster.read_text(encoding="utf-8"), csv_format)
        except (OSError, UnicodeDecodeError, RosterError) as e:
            why = e.strerror if isinstance(e, OSError) else e
            raise CLIError(f"--roster {roster}: {why}") from None
    url = server_url(tracking_uri)
    suffix = "grades" if csv_format == "attnref" else csv_format
    path = csv_path if csv_path is not None else Path(f"{name}-{suffix}.csv")
    if path.is_dir():
        raise CLIError(f"--csv {path} is a folder, not a file")
    try:
        client = teacher_client(url, admin_password_file, reader=True)
        assignment, book = gradebook(client, name)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    if not book:
        raise CLIError(f"{name!r} has no grades yet: attnref server grade {name}")
    _print_book(name, url, book)
    try:
        tmp = path.with_name(path.name + ".tmp")
        points = steps_asked(assignment)
        text = (
            to_csv(book)
            if csv_format == "attnref"
            else BOM
            + to_lms_csv(
                book,
                name,
                csv_format,
                points,
                diagnosis=assignment.policy.shows_values,
                roster=people,
                lang=assignment.lang,
                words=lambda name: mistake_words(name, assignment.lang),
            )
        )
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except RosterError as e:
        raise CLIError(f"--roster {roster}: {e}") from None
    except OSError as e:
        raise CLIError(f"cannot write {path}: {e.strerror}") from None
    # the rows the file holds: the gradebook's own, or the LMS's one per student
    rows, each = (
        (len(book), "student and exercise")
        if csv_format == "attnref"
        else (len({r.student for r in book}), "student")
    )
    from attention_ref.render.printable import printable

    print(printable(f"wrote {path} ({rows} rows, one per {each})"))
    if csv_format != "attnref":
        field = moodle_field(people)
        for step in import_steps(csv_format, name, points, field):
            say(_console(), step)
    if summary:
        _print_summary(name, summarize(book, catalogue_names(assignment)))


def _console():  # type: ignore[no-untyped-def]
    from attention_ref.cli.tables import console

    return console()


#: the gradebook's columns at the terminal
#: (`attention_ref.classroom.coursework.gradebook_report.COLUMNS`):
#: who, which exercise, the grade, the first wrong step and the diagnosis are kept whole; "late"
#: too as soon as one answer is late, "points" as soon as a penalty took some; "exercise" where
#: the rows have more than one (`_print_book`)
_BOOK_COLUMNS = {
    "student": (True, 0),
    "exercise": (True, 6),
    "steps right": (True, 0),
    "points": (False, 0),
    "first wrong step": (True, 0),
    "diagnosis": (True, 0),
    "attempts": (False, 4),
    "late": (False, 5),
    "status": (False, 3),
    "received (UTC)": (False, 2),
    "submission": (False, 1),
}


def _print_book(name: str, url: str, book: list[Row]) -> None:
    from attention_ref.classroom.coursework.gradebook_report import COLUMNS, cells
    from attention_ref.cli.tables import Column, print_table

    students = len({r.student for r in book})
    # lateness is left out only while no answer is late: a late 18/18 must not read as on time
    late = any(r.late for r in book)
    # the points differ from the steps right only where a late penalty took some: a late 18/18
    # at -50% is 9 points, and the table says so
    penalised = any(r.penalty for r in book)
    several = len({r.exercise for r in book}) > 1  # one exercise: its number says nothing

    def kept(c: str) -> bool:
        if c == "exercise":
            return several
        if c == "points":
            return penalised
        return _BOOK_COLUMNS[c][0] or (c == "late" and late)

    columns = [
        Column(c, keep=kept(c), rank=_BOOK_COLUMNS[c][1], wrap=c == "diagnosis") for c in COLUMNS
    ]
    # under the header "late", the lateness itself (the CSV keeps "late by …")
    at = COLUMNS.index("late")
    rows = [
        (*row[:at], row[at].removeprefix("late by "), *row[at + 1 :]) for row in map(cells, book)
    ]
    print_table(
        _console(),
        f"{name} on {url}: {students} students",
        columns,
        rows,
        elsewhere=f"every column: the CSV (attnref server grades {name})",
    )


def _print_summary(name: str, s: Summary) -> None:
    from attention_ref.cli.tables import Column, print_table, say
    from attention_ref.exercises.catalogue import mistake_words

    console = _console()
    say(
        console,
        f"{name}: {s.students} students, {s.answers} answers graded; {s.all_right} all right, "
        f"{s.few_decimals} short of decimals only, {s.no_diagnosis} wrong with no mistake of "
        f"the catalogue reproducing them; {s.late} late, {s.missing} missing, {s.malformed} "
        f"malformed, {s.changed} changed after they were finished",
    )
    made = sorted((m for m in s.mistakes if m[1]), key=lambda m: (-m[1], m[0]))

    rows = [
        [
            mistake_words(mistake),
            str(n),
            str(ambiguous) if ambiguous else "",
            mistake,
            ", ".join(x for x in seen if x != mistake),
        ]
        for mistake, n, ambiguous, seen in made
    ]
    columns = [
        Column("mistake", keep=True, wrap=True),
        Column("students", keep=True, justify="right"),
        Column("of them, another fits too", rank=2, justify="right"),
        Column("catalogue name", rank=3),
        Column("as", rank=1),
    ]
    if rows:
        print_table(
            console,
            "Mistakes the class made (students whose counted answer each "
            "reproduces), most frequent first",
            columns,
            rows,
        )
    else:
        console.print("No counted answer reproduces a mistake of the catalogue.")
    unmade = [m[0] for m in s.mistakes if not m[1]]
    if unmade:
        say(
            console,
            f"Made by no one: {len(unmade)} other mistakes of the catalogue ({', '.join(unmade)})",
        )
    first = [[step, str(n)] for step, n in s.first_wrong]
    if first:
        print_table(
            console,
            "First wrong step",
            [Column("step", keep=True), Column("answers", keep=True, justify="right")],
            first,
        )
