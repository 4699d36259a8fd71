"""``attnref server assign | grade | grades``: the teacher's side of homework on the class server.

``assign NAME`` makes an assignment (each student's own variant of ``--exercises`` problems of
``attnref exercise``); ``grade NAME`` grades every stored answer on the teacher's side and
writes the gradebook; ``grades NAME`` prints it, writes it as CSV, and with ``--summary`` says
what the class got wrong. The library is `attention_ref.classroom.homework`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.errors import CLIError
from cli.server import AdminPasswordFile, TrackingUri, _admin, _server_url

if TYPE_CHECKING:
    from attention_ref.classroom.gradebook import Row, Summary

AssignmentName = Annotated[str, typer.Argument(help="The assignment's name (1-64 letters, "
                                                    "digits, '.', '_', '-').")]  # fmt: skip


def assign(
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
    tokens: Annotated[int, typer.Option("--tokens", help="Tokens n (1-8).")] = 3,
    d_model: Annotated[int, typer.Option("--d-model", help="Width of a token (1-8).")] = 4,
    heads: Annotated[
        int | None,
        typer.Option(
            "--heads",
            help="Heads h; must divide d_model. Default 2; 4 with --variant gqa.",
            show_default=False,
        ),
    ] = None,
    causal: Annotated[bool, typer.Option("--causal/--no-causal", help="Causal mask.")] = True,
    decimals: Annotated[int, typer.Option("--decimals", help="Decimals asked (1-6).")] = 3,
    variant: Annotated[
        str,
        typer.Option(
            "--variant",
            help="mha: the homework's attention; gqa, window, rope: today's (as attnref "
            "exercise --variant; the forward pass).",
        ),
    ] = "mha",
    kv_heads: Annotated[
        int | None,
        typer.Option("--kv-heads", help="gqa: K/V heads g (default h/2).", show_default=False),
    ] = None,
    window: Annotated[
        int | None,
        typer.Option("--window", help="window: keys a token sees (default 2).", show_default=False),
    ] = None,
    tracking_uri: TrackingUri = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Give every student their own variant of an assignment (run again: moves --due, and
    gives it to the students added since).

    Each student's exercises are drawn from the assignment and their name: the same on every
    machine, different between students. The gradebook is the experiment homework/NAME, the
    teacher's alone; each student's submissions go to homework/NAME/STUDENT, theirs alone.
    """
    from attention_ref.classroom.assignment import Assignment, AssignmentError, parse_due
    from attention_ref.classroom.homework import assign as make
    from attention_ref.classroom.server import ServerError

    url = _server_url(tracking_uri)
    try:
        if heads is None:
            heads = 4 if variant == "gqa" else 2
        asked = Assignment(name=name, exercises=exercises, tokens=tokens, d_model=d_model,
                           heads=heads, causal=causal, lang=lang, backward=backward,
                           decimals=decimals, variant=variant, kv_heads=kv_heads,
                           window=window, due=parse_due(due) if due else None)  # fmt: skip
        done = make(url, _admin(admin_password_file, url), asked, due_given=due is not None)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    print(done.describe(url))


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
    tracking_uri: TrackingUri = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Grade every submission of an assignment from its stored answer and write the gradebook.

    Each finished submission is downloaded, compared with the hash the server recorded when
    it was received, and checked against the student's own exercise; the latest counts
    unless --best or --use says otherwise. Run again after new submissions: grades are
    updated in place.
    """
    from attention_ref.classroom.assignment import AssignmentError
    from attention_ref.classroom.homework import grade as run_grade
    from attention_ref.classroom.server import ServerError

    url = _server_url(tracking_uri)
    try:
        done = run_grade(url, _admin(admin_password_file, url), name, best=best, use=use or ())
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    _print_book(name, url, list(done.rows))
    n = len(done.graded)
    print(f"graded {n} submission{'s' if n != 1 else ''} of {name!r}; the gradebook "
          f"(experiment {done.gradebook_id}) holds {done.written} grades")  # fmt: skip


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
            help="Where to write the CSV (default: ./NAME-grades.csv).",
            show_default=False,
        ),
    ] = None,
    tracking_uri: TrackingUri = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Print an assignment's gradebook (as `grade` last wrote it) and write it as CSV.

    Reads as $MLFLOW_TRACKING_USERNAME / $MLFLOW_TRACKING_PASSWORD if set (a teacher's
    account), else as admin.
    """
    from attention_ref.classroom.assignment import AssignmentError
    from attention_ref.classroom.gradebook import summarize, to_csv
    from attention_ref.classroom.homework import catalogue_names, gradebook
    from attention_ref.classroom.server import ServerError

    url = _server_url(tracking_uri)
    path = csv_path if csv_path is not None else Path(f"{name}-grades.csv")
    if path.is_dir():
        raise CLIError(f"--csv {path} is a folder, not a file")
    try:
        user, password = (os.environ.get("MLFLOW_TRACKING_USERNAME"),
                          os.environ.get("MLFLOW_TRACKING_PASSWORD"))  # fmt: skip
        auth = (user, password) if user and password else _admin(admin_password_file, url)
        assignment, book = gradebook(url, auth, name)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    if not book:
        raise CLIError(f"{name!r} has no grades yet: attnref server grade {name}")
    _print_book(name, url, book)
    try:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(to_csv(book), encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        raise CLIError(f"cannot write {path}: {e.strerror}") from None
    print(f"wrote {path} ({len(book)} rows)")
    if summary:
        _print_summary(name, summarize(book, catalogue_names(assignment)))


def _console():  # type: ignore[no-untyped-def]
    from rich.console import Console

    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=220)


def _print_book(name: str, url: str, book: list[Row]) -> None:
    from rich.table import Table

    from attention_ref.classroom.gradebook import COLUMNS, cells

    students = len({r.student for r in book})
    table = Table(title=f"{name} on {url}: {students} students", title_justify="left")
    for col in COLUMNS:
        table.add_column(col)
    for r in book:
        table.add_row(*cells(r))
    _console().print(table)


def _print_summary(name: str, s: Summary) -> None:
    from rich.table import Table

    console = _console()
    console.print(
        f"{name}: {s.students} students, {s.answers} answers graded; {s.all_right} all right, "
        f"{s.few_decimals} short of decimals only, {s.no_diagnosis} wrong with no mistake of "
        f"the catalogue reproducing them; {s.late} late, {s.missing} missing, {s.malformed} "
        f"malformed, {s.changed} changed after they were finished"
    )
    made = Table(title="Mistakes of the catalogue: students whose counted answer each "
                 "reproduces", title_justify="left")  # fmt: skip
    for col in ("mistake", "students", "of them, with another that reproduces it too", "as"):
        made.add_column(col)
    for mistake, n, ambiguous, seen in s.mistakes:
        shown = ", ".join(x for x in seen if x != mistake)
        made.add_row(mistake, str(n), str(ambiguous) if ambiguous else "", shown)
    console.print(made)
    first = Table(title="First wrong step", title_justify="left")
    for col in ("step", "answers"):
        first.add_column(col)
    for step, n in s.first_wrong:
        first.add_row(step, str(n))
    console.print(first)
