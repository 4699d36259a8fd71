"""``attnref server grades``: an assignment's gradebook printed, and written as CSV for attnref,
Moodle or Canvas (`attention_ref.classroom.coursework.lms`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attention_ref.cli import policy_options as policy
from attention_ref.cli.assignments import AssignmentName
from attention_ref.cli.errors import CLIError
from attention_ref.cli.gradebook_tables import console as _console
from attention_ref.cli.gradebook_tables import print_book, print_summary
from attention_ref.cli.server import AdminPasswordFile, TrackingUri, server_url, teacher_client


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
    print_book(name, url, book)
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
        print_summary(name, summarize(book, catalogue_names(assignment)))
