"""A class from its roster: the participant lists of Moodle and Canvas, read as they are.

Pure: CSV text in, a `Roster` out (`parse_roster`). Three formats, told apart by the header
(or named, ``fmt``); anything else is refused in one line saying what each looks like:

* **Moodle**, Participants → "Download table data as" CSV (``user/action_redir.php``): the
  columns ``get_string('firstname')``, ``get_string('lastname')``, then the site's identity
  fields (by default the e-mail; maybe the username, the ID number, others), headed in the
  site's language: English (``First name``, ``Last name``/``Surname``, ``Email address``,
  ``Username``, ``ID number``) and Brazilian Portuguese (``Nome``, ``Sobrenome``, ``Endereço
  de email``, ``Nome de usuário``, ``Número de identificação``) are read; other identity
  fields (city, phone, ...) are left aside.
* **Canvas**, Grades → Export (its gradebook CSV): ``Student, ID, SIS User ID, SIS Login ID``,
  maybe ``Integration ID``, ``Section``, then one column per assignment and the totals; a row
  ``Points Possible`` (maybe indented), maybe a ``Muted``/``Manual Posting`` row, and the test
  student of Student View (``Student, Test``), all three skipped.
* **plain**: a column ``account`` (the class server's account name, as the teacher writes it)
  and any of the identifying columns of `ROSTER_FIELDS` (``username``, ``email``,
  ``idnumber`` for Moodle; ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``
  for Canvas). Another column is refused (a misspelt identifier would be lost silently).

**The account name** (`ACCOUNT`: a letter or digit, then letters, digits, ``.``, ``_``, ``-``;
at most 64, no ``admin``: what an MLflow tag key and an experiment name hold) is the plain
roster's ``account``; from an LMS export it is made (`slug`: ASCII, lower case, every other
character run a ``.``), deterministically, from the first of: Moodle's username, the local
part of the e-mail, ``first.last``; Canvas's SIS Login ID (its local part, for an e-mail),
``first.last`` from the ``Last, First`` of the Student column. Two lines that make one account
are refused, naming both lines. A student's **identifiers** are the non-empty LMS fields of the
line, per system (`Entry.ids`); every line of an LMS export needs one (Moodle: username,
e-mail or ID number; Canvas: ID, SIS User ID or SIS Login ID).

Whatever the file holds is data: at most `MAX_ROSTER_BYTES`, UTF-8, each cell at most
`MAX_CELL` characters and no control character.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

#: what a spreadsheet needs to open a CSV as UTF-8 (Moodle strips it, Canvas reads through it)
BOM: Final = "\ufeff"
MAX_ROSTER_BYTES: Final = 1 << 20
#: an identifier or a name longer than this is not one
MAX_CELL: Final = 200
#: the formats `parse_roster` reads
FORMATS: Final = ("moodle", "canvas", "plain")
#: each system's identifying columns (a plain roster's, and what is kept per student)
ROSTER_FIELDS: Final = {
    "moodle": ("username", "email", "idnumber"),
    "canvas": ("Student", "ID", "SIS User ID", "SIS Login ID", "Section"),
}
#: the Canvas columns that identify a student (the name and section only help)
CANVAS_IDS: Final = ("ID", "SIS User ID", "SIS Login ID")
#: a class server account name a roster may make
ACCOUNT: Final = re.compile(r"[^\W_][\w.-]{0,63}")
RESERVED: Final = frozenset({"admin"})

#: Moodle's header words (accents, case, spaces and hyphens aside), English and pt-BR
_MOODLE_HEADERS: Final = {
    "first": {"first name", "firstname", "given name", "nome", "primeiro nome"},
    "last": {"last name", "lastname", "surname", "sobrenome", "ultimo nome"},
    "email": {"email address", "email", "endereco de email", "endereco email"},
    "username": {"username", "user name", "nome de usuario", "usuario"},
    "idnumber": {
        "id number",
        "idnumber",
        "numero de identificacao",
        "numero de identificacao (id)",
    },
}
#: what each format's header looks like, for the refusal of another
EXPECTED: Final = {
    "moodle": "a Moodle participants download (First name, Last name, Email address ...)",
    "canvas": "a Canvas gradebook export (Student, ID, SIS User ID, SIS Login ID, Section ...)",
    "plain": "a CSV with a column account",
}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_MUTED = re.compile(r"(muted|manual posting.*)?")
_TEST_STUDENTS: Final = frozenset({"student, test", "test student"})


class RosterError(ValueError):
    """A roster that cannot be used; the message says why, in one line."""


@dataclass(frozen=True)
class Entry:
    """One student of a roster: the account, the roster's line, the name to show (maybe
    empty) and the identifiers per system (``{"moodle": {"email": ...}}``)."""

    account: str
    line: int
    name: str = ""
    ids: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Roster:
    """A roster read: its format and its students, in the file's order."""

    kind: str
    entries: tuple[Entry, ...]

    def identifiers(self, system: str) -> dict[str, dict[str, str]]:
        """``account -> {field: value}`` for ``system``, the accounts that have some."""
        return {e.account: dict(e.ids[system]) for e in self.entries if e.ids.get(system)}


def normal(header: str) -> str:
    """A header as compared: no BOM, accents or hyphens, lower case, one space."""
    text = unicodedata.normalize("NFKD", header.removeprefix(BOM))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(text.replace("-", "").split())


def slug(text: str) -> str:
    """An account name made of ``text``: ASCII (accents dropped), lower case, each run of
    other characters one ``.``, at most 64 characters; empty when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9_-]+", ".", ascii_text.lower()).strip("._-")[:64].strip("._-")


def _local(value: str) -> str:
    """The part of an e-mail address before ``@`` (the value, when it is not one)."""
    return value.split("@", 1)[0] if "@" in value else value


def detect(header: Sequence[str]) -> str | None:
    """The format a header line is of (`FORMATS`), or ``None``."""
    names = [normal(h) for h in header]
    if "account" in names:
        return "plain"
    if len(names) > 2 and names[0] == "student" and "id" in names:
        return "canvas"
    if any(n in _MOODLE_HEADERS["first"] for n in names) and any(
        n in _MOODLE_HEADERS["last"] for n in names
    ):
        return "moodle"
    return None


def _lines(text: str) -> list[list[str]]:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_ROSTER_BYTES:
        raise RosterError(f"the roster is over {MAX_ROSTER_BYTES} bytes")
    text = text.removeprefix(BOM)
    first = text.split("\n", 1)[0]
    delimiter = ";" if ";" in first and "," not in first else ","
    try:
        return list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error as e:
        raise RosterError(f"the roster is not CSV ({e})") from None


def _cell(value: str, n: int) -> str:
    value = value.strip()
    if len(value) > MAX_CELL:
        raise RosterError(f"roster line {n} has a cell over {MAX_CELL} characters")
    if _CONTROL.search(value):
        raise RosterError(f"roster line {n} holds a control character")
    return value


def _name_of(first: str, last: str) -> str:
    return " ".join(p for p in (first, last) if p)


def _moodle(header: list[str], n: int, cells: dict[int, str]) -> Entry | None:
    where = {k: i for i, h in enumerate(header) for k, v in _MOODLE_HEADERS.items() if h in v}
    got = {k: cells.get(i, "") for k, i in where.items()}
    ids = {f: got[f] for f in ROSTER_FIELDS["moodle"] if got.get(f)}
    name = _name_of(got.get("first", ""), got.get("last", ""))
    if not ids:
        raise RosterError(f"roster line {n}: no username, e-mail or ID number for {name!r}")
    made = (
        slug(_local(ids.get("username", "")))
        or slug(_local(ids.get("email", "")))
        or slug(f"{got.get('first', '')}.{got.get('last', '')}")
    )
    return Entry(made, n, name, {"moodle": ids})


def _canvas(header: list[str], n: int, cells: dict[int, str]) -> Entry | None:
    raw = {h: cells.get(i, "") for i, h in enumerate(header)}
    student = raw.get("student", "")
    if normal(student) in _TEST_STUDENTS or "points possible" in normal(student):
        return None
    if not student and all(_MUTED.fullmatch(normal(v)) for v in raw.values()):
        return None  # Canvas's row of muted (manually posted) assignments
    ids = {f: raw[normal(f)] for f in ROSTER_FIELDS["canvas"] if raw.get(normal(f))}
    if not any(f in ids for f in CANVAS_IDS):
        raise RosterError(f"roster line {n}: no ID, SIS User ID or SIS Login ID for {student!r}")
    last, _, first = student.partition(",")
    made = slug(_local(ids.get("SIS Login ID", ""))) or slug(
        f"{first.strip()}.{last.strip()}" if first else student
    )
    return Entry(made, n, _name_of(first.strip(), last.strip()) or student, {"canvas": ids})


def _plain(header: list[str], n: int, cells: dict[int, str]) -> Entry | None:
    known = {normal(f): (s, f) for s, fields in ROSTER_FIELDS.items() for f in fields}
    ids: dict[str, dict[str, str]] = {}
    for i, h in enumerate(header):
        if h in known and cells.get(i):
            system, name = known[h]
            ids.setdefault(system, {})[name] = cells[i]
    account = cells.get(header.index("account"), "")
    if not ACCOUNT.fullmatch(account):
        raise RosterError(
            f"roster line {n}: the account {account!r} is not 1-64 letters, digits, '.', '_' "
            "or '-' starting with a letter or digit"
        )
    return Entry(account, n, ids.get("canvas", {}).get("Student", ""), ids)


def _check_plain_header(raw: list[str]) -> None:
    allowed = {normal(f) for fields in ROSTER_FIELDS.values() for f in fields} | {"account"}
    if unknown := [h for h in raw if normal(h) not in allowed]:
        every = ", ".join(f for fields in ROSTER_FIELDS.values() for f in fields)
        raise RosterError(f"the roster's column {unknown[0].strip()!r} is none of account, {every}")


def parse_roster(text: str, fmt: str | None = None) -> Roster:
    """The `Roster` of a roster's CSV text in format ``fmt`` (`FORMATS`; ``None``: told from
    the header). Refused in one line (`RosterError`): over the size, not CSV, a header of no
    known format (or not of ``fmt``), a column named twice, a student line without an
    identifier, an account that cannot be made or is not valid, two lines of one account."""
    lines = _lines(text)
    if fmt is not None and fmt not in FORMATS:
        raise RosterError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    raw = [h.strip() for h in lines[0]] if lines else []
    header = [normal(h) for h in raw]
    found = detect(raw)
    if found is None or (fmt is not None and found != fmt):
        wanted = (
            EXPECTED[fmt]
            if fmt is not None
            else f"{EXPECTED['moodle']}, {EXPECTED['canvas']} or {EXPECTED['plain']}"
        )
        raise RosterError(f"the roster's first line is not a header of {wanted}")
    named = [h for h in header if h]
    if len(set(named)) != len(named):
        raise RosterError("the roster's first line names a column twice")
    if found == "plain":
        _check_plain_header(raw)
    read = {"moodle": _moodle, "canvas": _canvas, "plain": _plain}[found]
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(lines[1:], start=2):
        if not any(c.strip() for c in line):
            continue
        if len(line) > len(header) and any(c.strip() for c in line[len(header) :]):
            raise RosterError(f"roster line {n} has {len(line)} cells, not {len(header)}")
        cells = {i: _cell(c, n) for i, c in enumerate(line[: len(header)])}
        entry = read(header, n, cells)
        if entry is None:
            continue
        if not entry.account or not ACCOUNT.fullmatch(entry.account):
            raise RosterError(f"roster line {n}: no account name can be made of {entry.name!r}")
        if entry.account in RESERVED:
            raise RosterError(f"roster line {n}: the account {entry.account!r} is reserved")
        if entry.account in seen:
            raise RosterError(
                f"roster lines {seen[entry.account]} and {n} both make the account "
                f"{entry.account!r}: write a plain roster with a column account for them"
            )
        seen[entry.account] = n
        entries.append(entry)
    if not entries:
        raise RosterError("the roster holds no student")
    return Roster(found, tuple(entries))
