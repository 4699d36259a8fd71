"""Grades where teachers keep them: the gradebook as a learning-management system imports it.

Pure: rows in, CSV text out. One grade per student: the points of the submissions that count
(steps right less the late penalty, `Row.points`), summed over the assignment's exercises (a
missing, malformed or changed submission gives 0), out of ``points_possible`` (the steps a
whole answer has, times the exercises). The feedback says per exercise what the gradebook says.
What each system's import reads, from its source:

* **Moodle** (``grade/import/csv``, Grades → Import → CSV file): a header row, then one row per
  student; the student is identified by one column mapped to ``username``, ``email``,
  ``idnumber`` or ``userid``, and **one unknown user aborts the whole import**. A column mapped
  to "new grade item" makes an item of maximum 100, a grade above an item's maximum aborts the
  import too, and feedback maps only to an existing item: the item is made first, with the
  maximum ``points_possible`` (`import_steps`). The reader strips a UTF-8 byte-order mark.
* **Canvas** (``lib/gradebook_importer.rb``, Grades → Import): its own export's layout,
  ``Student, ID, SIS User ID, SIS Login ID, Section`` and one column per assignment, the second
  row ``Points Possible`` (a column that names no assignment makes one with those points). A
  row is matched by ID, then SIS User ID, then SIS Login ID, then the name; an unmatched row
  becomes a student Canvas does not know. Without a roster the account name is the SIS Login
  ID and the name.

**Moodle's maximum**: besides the item's maximum, Moodle refuses the whole file for a grade
above the site's ``gradepointmax`` (100 unless the site's administrator raised it, at most
10000), whatever the item's maximum. Points possible above that maximum (``moodle_max``) are
scaled to it (`moodle_scale`: 6 exercises, 108 points, become grades out of 100, rounded to
two decimals, never above), and `import_steps` says the item's maximum is ``moodle_max``.

A **roster** maps the class server's account names to each system's own identifiers
(`attention_ref.classroom.coursework.roster`: an LMS's participant export, or a plain CSV);
every student of the gradebook needs them (`missing_from`): a missing one is refused before
anything is written, as Moodle would refuse the whole file. Without a roster (``None``) the
account name is Moodle's username and Canvas's SIS Login ID and name (what the teacher asks
for with ``grades --account-names``). The files are written with a UTF-8 byte-order mark
(`BOM`), which spreadsheets need to read ``joão`` as UTF-8 and both imports accept.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from attention_ref.classroom.coursework.assignment import duration
from attention_ref.classroom.coursework.gradebook import Row, Standing, whole
from attention_ref.classroom.coursework.roster import ROSTER_FIELDS, RosterError

#: the systems whose grade import `to_lms_csv` writes for
SYSTEMS: Final = ("moodle", "canvas")
#: Moodle's ``gradepointmax`` unless the site's administrator changed it; its setting's range
MOODLE_MAX: Final = 100
MOODLE_MAX_LIMIT: Final = 10000


def missing_from(students: Iterable[str], roster: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The students that ``roster`` (``account -> {field: value}``) gives no identifier."""
    return [s for s in students if not any((roster.get(s) or {}).values())]


def named(students: Sequence[str]) -> str:
    """``a, b, c, d, e and 3 more``: students named in a line."""
    more = f" and {len(students) - 5} more" if len(students) > 5 else ""
    return ", ".join(students[:5]) + more


def moodle_field(
    roster: Mapping[str, Mapping[str, str]] | None, students: Iterable[str] | None = None
) -> str:
    """The Moodle field the file identifies students by: the first of ``username``,
    ``email``, ``idnumber`` that every student (of ``students``; default: all) has in
    ``roster``; ``username`` without a roster. None that all have: `RosterError`, naming
    who lacks the e-mail."""
    if not roster:
        return "username"
    who = list(roster) if students is None else list(students)
    for name in ROSTER_FIELDS["moodle"]:
        if all((roster.get(s) or {}).get(name) for s in who):
            return name
    lacking = [s for s in who if not (roster.get(s) or {}).get("email")]
    raise RosterError(
        f"no Moodle identifier every student has: no username, and no e-mail for {named(lacking)}"
    )


def moodle_scale(points_possible: int, moodle_max: int = MOODLE_MAX) -> tuple[int, float]:
    """``(the item's maximum, the factor of each grade)`` for Moodle: the points as they are
    up to the site's maximum (``moodle_max``), scaled to it above."""
    if not 1 <= moodle_max <= MOODLE_MAX_LIMIT:
        raise ValueError(f"Moodle's maximum grade is 1..{MOODLE_MAX_LIMIT}, got {moodle_max}")
    if points_possible <= moodle_max:
        return points_possible, 1.0
    return moodle_max, moodle_max / points_possible


def grade_of(rows: Sequence[Row]) -> int | float:
    """A student's grade: the points of their counted submissions (steps right less the late
    penalty, `Row.points`; 0 for one not graded), a whole number where it is one."""
    return whole(round(sum(r.points for r in rows), 2))


#: the feedback's words per language: what the student reads in the LMS, in the assignment's
FEEDBACK_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "graded": "exercise {k}: {right}/{asked} steps right",
        "other": "exercise {k}: {standing}",
        "late": "late by {late}",
        "penalty": " (-{p}%)",
        "or": " or ",
        "and": " and ",
        Standing.MALFORMED: "not an answer to the exercise",
        Standing.CHANGED: "changed after it was finished",
        Standing.MISSING: "no submission",
    },
    "pt": {
        "graded": "exercício {k}: {right}/{asked} passos certos",
        "other": "exercício {k}: {standing}",
        "late": "atrasada {late}",
        "penalty": " (-{p}%)",
        "or": " ou ",
        "and": " e ",
        Standing.MALFORMED: "não é resposta ao exercício",
        Standing.CHANGED: "alterada depois de finalizada",
        Standing.MISSING: "sem envio",
    },
}


def feedback_of(
    rows: Sequence[Row],
    diagnosis: bool = True,
    lang: str = "en",
    words: Callable[[str], str] = str,
) -> str:
    """One line per student, in ``lang``: each exercise's steps, the diagnosis named by
    ``words`` (the catalogue's words for a mistake; not shown where the feedback policy holds
    it back, ``diagnosis``), lateness and penalty, or why it got none."""
    w = FEEDBACK_WORDS[lang]
    parts = []
    for r in sorted(rows, key=lambda r: r.exercise):
        if r.standing is Standing.GRADED:
            said = w["graded"].format(k=r.exercise, right=r.steps_right, asked=r.asked)
            named = w["or"].join(w["and"].join(words(n) for n in d) for d in r.diagnoses)
            said += f" ({named})" if named and diagnosis else ""
        else:
            said = w["other"].format(k=r.exercise, standing=w[r.standing])
        if r.late:
            late = w["late"].format(late=duration(r.late))
            said += ", " + late + (w["penalty"].format(p=r.penalty) if r.penalty else "")
        parts.append(said)
    return "; ".join(parts)


def to_lms_csv(
    book: Sequence[Row],
    assignment: str,
    system: str,
    points_possible: int,
    diagnosis: bool = True,
    roster: Mapping[str, Mapping[str, str]] | None = None,
    lang: str = "en",
    words: Callable[[str], str] = str,
    moodle_max: int = MOODLE_MAX,
) -> str:
    """The gradebook ``book`` of ``assignment`` as ``system`` (`SYSTEMS`) imports it (no
    byte-order mark: the caller writes `BOM` first); the feedback names the diagnosis unless
    ``diagnosis`` is false (the feedback policy); the students identified through ``roster``
    (``account -> {field: value}`` of ``system``), the account names without one. Moodle's
    grades are scaled to ``moodle_max`` where the points possible are above it
    (`moodle_scale`). A student without identifiers in ``roster``: `RosterError`."""
    if system not in SYSTEMS:
        raise ValueError(f"grades for {system!r}: choose one of {', '.join(SYSTEMS)}")
    students: dict[str, list[Row]] = {}
    for r in book:
        students.setdefault(r.student, []).append(r)
    if roster is not None and (missing := missing_from(students, roster)):
        absent = [s for s in missing if s not in roster]
        what = "line" if absent == missing else f"{system} identifier"
        raise RosterError(
            f"the roster has no {what} for {named(missing)} (an unknown user makes "
            f"{system.capitalize()} refuse the file or miss the grade)"
        )
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if system == "moodle":
        field = moodle_field(roster, students)
        factor = moodle_scale(points_possible, moodle_max)[1]
        w.writerow([field, assignment, f"{assignment} feedback"])
        for student, mine in students.items():
            who = roster[student][field] if roster else student
            grade = whole(round(grade_of(mine) * factor, 2))
            w.writerow([who, grade, feedback_of(mine, diagnosis, lang, words)])
    else:
        columns = ROSTER_FIELDS["canvas"]
        w.writerow([*columns, assignment])
        w.writerow(["Points Possible", "", "", "", "", points_possible])
        for student, mine in students.items():
            given = roster[student] if roster else {}
            cells = {"Student": student, "SIS Login ID": student} if roster is None else {}
            cells |= {k: v for k, v in given.items() if v}
            cells.setdefault("Student", student)
            w.writerow([*(cells.get(c, "") for c in columns), grade_of(mine)])
    return out.getvalue()


#: the teacher's steps of an import, per language (the same blanks in each): Moodle's
#: three, Canvas's two, and the note on a scaled maximum
IMPORT_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "scaled": " (the {points} points possible are above the site's maximum grade {site}: "
        "the grades are scaled to {maximum})",
        "moodle_1": "1. Moodle, the course's Gradebook setup: add a grade item {item}, maximum "
        "grade {maximum}{scaled} (one made by the import has maximum 100 and takes no "
        "feedback).",
        "moodle_2": "2. Grades, Import, CSV file: upload the file, encoding UTF-8, separator "
        "comma.",
        "moodle_3": "3. Map from {field} to {field}, {item} to the item, {feedback} to the "
        "item's feedback; upload grades.",
        "canvas_1": "1. Canvas, the course's Grades: Import, choose the file (an assignment "
        "named {item} is made with {points} points where none has that name).",
        "canvas_2": "2. Check the students Canvas matched (ID, then SIS User ID, SIS Login ID, "
        "name) and the changes it lists; upload.",
    },
    "pt": {
        "scaled": " (os {points} pontos possíveis passam da nota máxima do site, {site}: as "
        "notas são escaladas para {maximum})",
        "moodle_1": "1. Moodle, a Configuração do livro de notas do curso: adicione um item de "
        "nota {item}, nota máxima {maximum}{scaled} (um item criado pela importação tem máximo "
        "100 e não recebe comentários).",
        "moodle_2": "2. Notas, Importar, Arquivo CSV: envie o arquivo, codificação UTF-8, "
        "separador vírgula.",
        "moodle_3": "3. Mapeie de {field} para {field}, {item} para o item, {feedback} para o "
        "comentário do item; envie as notas.",
        "canvas_1": "1. Canvas, as Notas do curso: Importar, escolha o arquivo (uma tarefa "
        "chamada {item} é criada com {points} pontos onde nenhuma tem esse nome).",
        "canvas_2": "2. Confira os alunos que o Canvas reconheceu (ID, depois SIS User ID, SIS "
        "Login ID, nome) e as mudanças que ele lista; envie.",
    },
}


def import_steps(
    system: str,
    assignment: str,
    points_possible: int,
    field: str = "",
    moodle_max: int = MOODLE_MAX,
    lang: str = "en",
) -> list[str]:
    """What the teacher does in ``system`` with the file, step by step (what to make first),
    in ``lang``'s words (`IMPORT_WORDS`); for Moodle, the item's maximum is the points
    possible, or ``moodle_max`` where the grades were scaled to it (`moodle_scale`)."""
    say = IMPORT_WORDS[lang]
    blanks = {"item": repr(assignment), "points": points_possible}
    if system == "moodle":
        maximum, factor = moodle_scale(points_possible, moodle_max)
        scaled = (
            say["scaled"].format(points=points_possible, site=moodle_max, maximum=maximum)
            if factor != 1
            else ""
        )
        feedback = repr(assignment + " feedback")
        return [
            say["moodle_1"].format(**blanks, maximum=maximum, scaled=scaled),
            say["moodle_2"],
            say["moodle_3"].format(**blanks, field=field or "username", feedback=feedback),
        ]
    return [say["canvas_1"].format(**blanks), say["canvas_2"]]
