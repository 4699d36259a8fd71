"""``attnref server add-students --roster FILE``: a class from its roster.

Reads the participant list as the LMS gives it (Moodle's participants download, Canvas's
gradebook export, or a plain CSV with a column ``account``:
`attention_ref.classroom.coursework.roster`), makes each student's account (as ``add-student``
does, idempotent: an existing account keeps its password) with their exercises of every
assignment, keeps each student's LMS identifiers on the server for ``grades --csv-format
moodle|canvas`` (`attention_ref.classroom.exchange.roster_store`), and writes the new passwords
to a file only the teacher can read (`write_passwords`, mode 0600). The terminal shows counts
and the file's path, never a password.

The passwords file (``--passwords``, default ``./roster-passwords.csv``) has the columns
``account, password, status, name`` and the LMS identifiers (e-mail, ...), for a mail merge
or a private message per student. Run again, it keeps the rows it holds (a password written
once is not lost), adds the new accounts, and lists an existing account it has no password
for as ``kept`` with no password. A file there that is not such a list is refused, not
overwritten.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.server import (
    AdminPasswordFile,
    ClassExperiment,
    TrackingUri,
    server_app,
    server_url,
    teacher_client,
)

if TYPE_CHECKING:
    from attention_ref.classroom.coursework.roster import Entry

#: the passwords file's first columns; the LMS identifiers follow
PASSWORD_COLUMNS: Final = ("account", "password", "status", "name")
CREATED, KEPT = "created", "kept"


def read_bounded(path: Path, limit: int, what: str) -> str:
    """The UTF-8 text of ``path``, refused in one line over ``limit`` bytes or unreadable."""
    try:
        with path.open("rb") as f:
            raw = f.read(limit + 1)
    except IsADirectoryError:
        raise CLIError(f"{what} {path} is a folder, not a file") from None
    except OSError as e:
        raise CLIError(f"{what} {path}: {e.strerror}") from None
    if len(raw) > limit:
        raise CLIError(f"{what} {path} is over {limit} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CLIError(f"{what} {path} is not UTF-8 text (save it as CSV UTF-8)") from None


def read_passwords(path: Path) -> list[dict[str, str]]:
    """The rows of an earlier passwords file at ``path`` (none where there is no file);
    a file that is not one is refused in one line rather than overwritten."""
    from attention_ref.classroom.coursework.roster import MAX_ROSTER_BYTES

    if not path.exists() and not path.is_symlink():
        return []
    text = read_bounded(path, 4 * MAX_ROSTER_BYTES, "--passwords")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(rows[0][: len(PASSWORD_COLUMNS)]) != PASSWORD_COLUMNS:
        raise CLIError(
            f"--passwords {path} exists and is not a passwords file of attnref (its first "
            f"line is not {','.join(PASSWORD_COLUMNS)}...): choose another file"
        )
    return [dict(zip(rows[0], r, strict=False)) for r in rows[1:] if r]


def write_passwords(path: Path, rows: list[dict[str, str]]) -> None:
    """``rows`` to ``path`` as CSV, the file its owner's only (0600) from its first byte:
    written beside it under the private umask, then put in its place."""
    from attention_ref.classroom.hosting.private_folder import private_umask

    extra = sorted({k for r in rows for k in r} - set(PASSWORD_COLUMNS))
    out = io.StringIO()
    w = csv.DictWriter(out, [*PASSWORD_COLUMNS, *extra], lineterminator="\n", restval="")
    w.writeheader()
    w.writerows(rows)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with private_umask():
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(out.getvalue())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise CLIError(f"cannot write --passwords {path}: {e.strerror}") from None


def _row(entry: Entry, account: str, password: str, status: str) -> dict[str, str]:
    """A line of the passwords file: the account, its password, what was done, the name and
    the LMS identifiers."""
    row = {"account": account, "password": password, "status": status, "name": entry.name}
    for fields in entry.ids.values():
        row |= dict(fields)
    return row


@server_app.command("add-students")
def add_students(
    roster: Annotated[
        Path,
        typer.Option(
            "--roster",
            help="The participants as the LMS exports them: Moodle's participants download "
            "(CSV), Canvas's gradebook export, or a CSV with a column account and any of "
            "username, email, idnumber, Student, ID, SIS User ID, SIS Login ID, Section.",
        ),
    ],
    roster_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="moodle, canvas or plain (default: told from the file's first line).",
            show_default=False,
        ),
    ] = None,
    passwords: Annotated[
        Path,
        typer.Option(
            "--passwords",
            help="Where the new accounts' passwords go (yours alone, mode 0600), with each "
            "student's LMS identifiers; kept and completed when run again.",
        ),
    ] = Path("roster-passwords.csv"),
    tracking_uri: TrackingUri = None,
    experiment: ClassExperiment = "shakespeare",
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Create the accounts of a class from its LMS roster; the passwords go to a file.

    Idempotent: an existing account keeps its password. Each student's Moodle or Canvas
    identifiers are kept on the server (for teachers only) for grades --csv-format.
    """
    from attention_ref.classroom.connection.accounts import add_student, generated_password
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.coursework.roster import (
        MAX_ROSTER_BYTES,
        RosterError,
        parse_roster,
    )
    from attention_ref.classroom.exchange.assign import enrol_everywhere
    from attention_ref.classroom.exchange.roster_store import ROSTER_EXPERIMENT, store_identifiers
    from attention_ref.cli.tables import console, say

    try:
        read = parse_roster(read_bounded(roster, MAX_ROSTER_BYTES, "--roster"), roster_format)
    except RosterError as e:
        raise CLIError(f"--roster {roster}: {e}") from None
    if passwords.is_dir():
        raise CLIError(f"--passwords {passwords} is a folder, not a file")
    if not passwords.parent.is_dir():
        raise CLIError(f"--passwords {passwords}: no folder {passwords.parent}")
    before = read_passwords(passwords)
    rows = {r.get("account", ""): r for r in before}
    url = server_url(tracking_uri)
    made: list[str] = []
    kept: list[str] = []
    enrolled: set[str] = set()
    failed: str | None = None
    try:
        client = teacher_client(url, admin_password_file)
        for entry in read.entries:
            password = generated_password()
            change = add_student(url, client.auth, entry.account, password, experiment)
            if change.created:
                made.append(entry.account)
                rows[entry.account] = _row(entry, entry.account, password, CREATED)
            else:
                kept.append(entry.account)
                old = rows.get(entry.account, {})
                rows[entry.account] = _row(entry, entry.account, old.get("password", ""), KEPT)
            enrolled |= set(enrol_everywhere(client, entry.account))
        stored = store_identifiers(client, {e.account: e.ids for e in read.entries})
    except (ServerError, AssignmentError) as e:
        failed, stored = str(e), 0
    if made or before:  # the passwords of the accounts made before a failure are not lost
        write_passwords(passwords, list(rows.values()))
    if failed is not None:
        where = f" (the passwords of the {len(made)} made are in {passwords})" if made else ""
        raise CLIError(f"{failed}{where}")
    out = console()
    say(
        out,
        f"{read.kind} roster {roster}: accounts created {len(made)}, kept {len(kept)} "
        f"(their passwords unchanged) on {url}",
    )
    if enrolled:
        say(out, f"the new students have their exercises of: {', '.join(sorted(enrolled))}")
    say(
        out,
        f"LMS identifiers of {stored} accounts kept (teachers only, experiment "
        f"{ROSTER_EXPERIMENT!r}) for grades --csv-format moodle|canvas",
    )
    if made or before:
        say(
            out,
            f"passwords in {passwords} (yours alone: mode 0600): hand each student their own "
            "line, never the file",
        )
    else:
        say(out, "no account was made: no password to hand over")
