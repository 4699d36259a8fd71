"""The gradebook at the terminal: ``attnref server grade`` and ``grades`` print it
(`print_book`) and, with ``--summary``, what the class got wrong (`print_summary`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention_ref.classroom.coursework.gradebook import Row
    from attention_ref.classroom.coursework.gradebook_report import Summary


def console():  # type: ignore[no-untyped-def]
    from attention_ref.cli.tables import console

    return console()


#: the gradebook's columns at the terminal
#: (`attention_ref.classroom.coursework.gradebook_report.COLUMNS`), each ``(kept, rank)``:
#: who, which exercise, the grade and the diagnosis are kept (the diagnosis over lines); the
#: first wrong step too, the first of them to go where they do not fit; "late" as soon as one
#: answer is late, "points" as soon as a penalty took some (then the steps right go before the
#: points); "exercise" where the rows have more than one (`print_book`). The lowest rank goes
#: first.
_BOOK_COLUMNS = {
    "student": (True, 9),
    "exercise": (True, 8),
    "steps right": (True, 7),
    "points": (False, 8),
    "first wrong step": (True, 3),
    "diagnosis": (True, 9),
    "attempts": (False, 4),
    "late": (False, 5),
    "status": (False, 3),
    "received (UTC)": (False, 2),
    "submission": (False, 1),
}
#: the columns of words, which go over lines where the table needs the room
_WORDS = ("diagnosis", "late")
#: the terminal's headers where the CSV's say more: the received time is shown in the class's
#: zone, its offset in each cell
_HEADERS = {"received (UTC)": "received"}


def print_book(
    name: str, url: str, book: list[Row], zone: str = "UTC", late_rule: str = ""
) -> None:
    """The gradebook ``book`` at the terminal, the received times in the class's ``zone``
    (the CSV keeps them in UTC); where an answer is late, ``late_rule`` (the policy's sentence
    on late work) once under the table: what a ``(-20%)`` comes from."""
    from attention_ref.classroom.coursework.class_time import shown
    from attention_ref.classroom.coursework.gradebook_report import COLUMNS, cells
    from attention_ref.cli.tables import Column, print_table, say

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
        Column(_HEADERS.get(c, c), keep=kept(c), rank=_BOOK_COLUMNS[c][1], wrap=c in _WORDS)
        for c in COLUMNS
    ]
    # under the header "late", the lateness itself (the CSV keeps "late by …"); the received
    # time in the class's zone, with its offset (the CSV's is UTC)
    at, got = COLUMNS.index("late"), COLUMNS.index("received (UTC)")
    rows = []
    for r, row in zip(book, map(cells, book), strict=True):
        out = list(row)
        out[at] = row[at].removeprefix("late by ")
        out[got] = shown(r.received, zone, seconds=True) if r.received else ""
        rows.append(tuple(out))
    print_table(
        console(),
        f"{name} on {url}: {students} students",
        columns,
        rows,
        elsewhere=f"every column: the CSV (attnref server grades {name})",
    )
    if late and late_rule:
        say(console(), f"late: {late_rule}")


def print_summary(name: str, s: Summary) -> None:
    from attention_ref.cli.tables import Column, print_table, say
    from attention_ref.exercises.catalogue import mistake_words

    out = console()
    say(
        out,
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
            out,
            "Mistakes the class made (students whose counted answer each "
            "reproduces), most frequent first",
            columns,
            rows,
        )
    else:
        out.print("No counted answer reproduces a mistake of the catalogue.")
    unmade = [m[0] for m in s.mistakes if not m[1]]
    if unmade:
        say(
            out,
            f"Made by no one: {len(unmade)} other mistakes of the catalogue ({', '.join(unmade)})",
        )
    first = [[step, str(n)] for step, n in s.first_wrong]
    if first:
        print_table(
            out,
            "First wrong step",
            [Column("step", keep=True), Column("answers", keep=True, justify="right")],
            first,
        )
