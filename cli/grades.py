"""``attnref server grades``: an assignment's gradebook printed, and written as CSV for attnref,
Moodle or Canvas (`attention_ref.classroom.coursework.lms`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli import policy_options as policy
from attention_ref.cli.assignments import AssignmentName
from attention_ref.cli.errors import CLIError
from attention_ref.cli.gradebook_tables import console as _console
from attention_ref.cli.gradebook_tables import print_book, print_summary
from attention_ref.cli.server import AdminPasswordFile, TrackingUri, server_url, teacher_client

if TYPE_CHECKING:
    from attention_ref.classroom.connection.class_client import ClassClient


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
    account_names: Annotated[
        bool,
        typer.Option(
            "--account-names",
            help="With moodle or canvas: a student with no LMS identifier (add-students "
            "--roster) is written by their account name, as Moodle's username and Canvas's "
            "SIS Login ID. \\[default: refused, naming them]",
        ),
    ] = False,
    moodle_max: Annotated[
        int,
        typer.Option(
            "--moodle-max",
            help="The Moodle site's maximum grade (gradepointmax; Moodle refuses the whole "
            "file for a grade above it): points possible above it are scaled to it.",
        ),
    ] = 100,
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
        MOODLE_MAX_LIMIT,
        SYSTEMS,
        import_steps,
        moodle_field,
        to_lms_csv,
    )
    from attention_ref.classroom.coursework.roster import BOM, RosterError
    from attention_ref.classroom.exchange.assign import catalogue_names
    from attention_ref.classroom.exchange.grade import gradebook, steps_asked
    from attention_ref.cli.tables import say
    from attention_ref.exercises.catalogue import mistake_words

    if csv_format not in ("attnref", *SYSTEMS):
        raise CLIError(f"--csv-format {csv_format!r}: choose attnref, {', '.join(SYSTEMS)}")
    if csv_format == "attnref" and (roster is not None or account_names):
        raise CLIError("--roster and --account-names go with --csv-format moodle or canvas")
    if not 1 <= moodle_max <= MOODLE_MAX_LIMIT:
        raise CLIError(f"--moodle-max is the site's maximum grade, 1..{MOODLE_MAX_LIMIT}")
    people = None if roster is None else _roster_file(roster, csv_format)
    url = server_url(tracking_uri)
    suffix = "grades" if csv_format == "attnref" else csv_format
    path = csv_path if csv_path is not None else Path(f"{name}-{suffix}.csv")
    if path.is_dir():
        raise CLIError(f"--csv {path} is a folder, not a file")
    try:
        client = teacher_client(url, admin_password_file, reader=True)
        assignment, book = gradebook(client, name)
        students = sorted({r.student for r in book})
        if csv_format != "attnref" and people is None:
            people = _stored(client, csv_format, students, account_names)
        elif people is not None and account_names:
            people = _with_account_names(people, csv_format, students)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    if not book:
        raise CLIError(f"{name!r} has no grades yet: attnref server grade {name}")
    print_book(
        name, url, book, assignment.timezone, assignment.policy.late_words(zone=assignment.timezone)
    )
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
                moodle_max=moodle_max,
            )
        )
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except RosterError as e:
        raise CLIError(f"--roster {roster}: {e}" if roster else str(e)) from None
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
        field = moodle_field(people, {r.student for r in book}) if csv_format == "moodle" else ""
        for step in import_steps(csv_format, name, points, field, moodle_max):
            say(_console(), step)
    if summary:
        print_summary(name, summarize(book, catalogue_names(assignment)))


def _roster_file(roster: Path, system: str) -> dict[str, dict[str, str]]:
    """``account -> {field: value}`` of ``system`` from a roster file (any format of
    `attention_ref.classroom.coursework.roster`), refused in one line."""
    from attention_ref.classroom.coursework.roster import (
        MAX_ROSTER_BYTES,
        RosterError,
        parse_roster,
    )
    from attention_ref.cli.roster import read_bounded

    try:
        return parse_roster(read_bounded(roster, MAX_ROSTER_BYTES, "--roster")).identifiers(system)
    except RosterError as e:
        raise CLIError(f"--roster {roster}: {e}") from None


def _stored(
    client: ClassClient, system: str, students: list[str], account_names: bool
) -> dict[str, dict[str, str]] | None:
    """The identifiers of ``system`` the server keeps (`add-students --roster`) for
    ``students``; a student with none is refused, naming them, unless ``account_names``
    (their account name stands for them; ``None``: everyone's does)."""
    from attention_ref.classroom.coursework.lms import missing_from, named
    from attention_ref.classroom.exchange.roster_store import stored_identifiers

    kept = {a: ids[system] for a, ids in stored_identifiers(client).items() if ids.get(system)}
    missing = missing_from(students, kept)
    if missing and not account_names:
        raise CLIError(
            f"no {system.capitalize()} identifiers for {named(missing)}: add them with "
            f"attnref server add-students --roster FILE (the LMS's participants export), "
            f"give --roster FILE, or --account-names if the account names are the LMS's "
            f"{'usernames' if system == 'moodle' else 'SIS Login IDs'}"
        )
    return _with_account_names(kept, system, students) if kept else None


def _with_account_names(
    roster: dict[str, dict[str, str]], system: str, students: list[str]
) -> dict[str, dict[str, str]]:
    """``roster`` and, for each of ``students`` it gives no identifier, the account name as
    Moodle's username (Canvas's SIS Login ID and name)."""
    from attention_ref.classroom.coursework.lms import missing_from

    login = {"moodle": "username", "canvas": "SIS Login ID"}[system]
    return roster | {
        s: {login: s} | ({"Student": s} if system == "canvas" else {})
        for s in missing_from(students, roster)
    }
