"""The class's landing page leads to the gradebooks.

The UI's root sends whoever enters to the class experiment's runs (the gate's landing page,
`attention_ref.classroom.gate.auth`); MLflow shows that experiment's description (its
``mlflow.note.content`` tag, Markdown) at the top of the page. `update_landing` writes there a
link to each assignment's gradebook, newest first, in the gradebook's view (`ui_url`: its
columns chosen), and a line saying what each is; ``attnref server assign`` calls it, and so
does the welcome of ``attnref server start`` (the gradebooks it prints). The gradebooks' part
comes first (the UI shows a description's first lines until it is opened), from `HEADING` to
a rule (`END`); what a teacher wrote in that description, around it, is kept after it.

The assignments' names reach the Markdown only as a `code_span` (shown as written).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from attention_ref.classroom.connection.class_client import ClassClient, tag_map
from attention_ref.classroom.coursework.assignment import (
    GRADEBOOK,
    ROLE_TAG,
    Assignment,
    AssignmentError,
    gradebook_experiment,
)
from attention_ref.classroom.coursework.class_time import CLASS_ZONE_TAG
from attention_ref.classroom.coursework.gradebook import code_span, ui_url
from attention_ref.experiments.names import Tag

#: the first words of the gradebooks' part of the class experiment's description: from the
#: line that begins with them to `END`, the description is `update_landing`'s
HEADING: Final = "**Gradebooks**"
#: where that part ends: a rule, what a teacher wrote below it
END: Final = "\n\n---\n\n"
#: what every gradebook is, under the links (Markdown)
_WHAT = (
    "Each is an assignment's gradebook, the teacher's (a student who follows the link is "
    "told it is not theirs): one run per student and exercise, written by "
    "`attnref server grade NAME`, its columns the grade (steps right, points, late, "
    "diagnosis)."
)
#: the experiment the landing page sends the browser to: ``#/experiments/ID?...`` in its script


@dataclass(frozen=True)
class Gradebook:
    """One assignment's gradebook experiment, as the landing lists it."""

    assignment: Assignment
    experiment_id: str
    created_ms: int = 0

    @property
    def name(self) -> str:
        """The assignment's name."""
        return self.assignment.name

    @property
    def link(self) -> str:
        """The gradebook in its view, relative to the page it is on: ``#/experiments/ID/…``."""
        return "#" + ui_url("", self.experiment_id).partition("#")[2]

    def line(self) -> str:
        """The gradebook's item in the description: its link, then what it is (Markdown)."""
        a = self.assignment
        each = f"{a.exercises} exercise{'s' if a.exercises != 1 else ''} each"
        prints = code_span(f"attnref server grades {a.name}")
        return (
            f"* [{code_span(a.name)}]({self.link}): the gradebook of the assignment "
            f"{code_span(a.name)} (experiment {code_span(gradebook_experiment(a.name))}), "
            f"{each}, {a.describe_due()}; {prints} prints it."
        )


def gradebooks(client: ClassClient) -> list[Gradebook]:
    """Every assignment's gradebook on the server, newest first (the account must read them:
    an admin's, a teacher's); one whose tags hold no assignment is left out."""
    found = client.search_experiments(
        f"tags.`{ROLE_TAG}` = '{GRADEBOOK}'", "cannot list the gradebooks"
    )
    out = []
    for e in found:
        try:
            assignment = Assignment.from_tags(tag_map(e))
        except AssignmentError:
            continue
        out.append(Gradebook(assignment, str(e["experiment_id"]), int(e.get("creation_time", 0))))
    return sorted(out, key=lambda g: (-g.created_ms, g.name))


def landing_note(books: list[Gradebook], kept: str = "") -> str:
    """The class experiment's description: the links to ``books`` on its first line, what
    they are, one line each, then ``kept`` (what a teacher wrote) after a rule."""
    if not books:
        return kept
    quick = " · ".join(f"[{code_span(b.name)}]({b.link})" for b in books)
    part = [f"{HEADING}, newest first: {quick}", "", _WHAT, "", *(b.line() for b in books)]
    return "\n".join(part) + (END + kept.strip() if kept.strip() else "")


def kept_text(note: str) -> str:
    """What of a description is not the gradebooks' part (from `HEADING` at a line's start
    to `END`, or to the end): the text around it."""
    at = 0 if note.startswith(HEADING) else note.find("\n" + HEADING) + 1
    if not at and not note.startswith(HEADING):
        return note
    end = note.find(END, at)
    after = "" if end < 0 else note[end + len(END) :]
    return "\n\n".join(t for t in (note[:at].strip(), after.strip()) if t)


def class_experiment(client: ClassClient) -> dict[str, Any] | None:
    """The class experiment: the one ``server start`` tags with the class's time zone
    (`CLASS_ZONE_TAG`), where the UI's root sends the browser; ``None`` on a server that has
    none. A student reads it too (they may edit it)."""
    found = client.search_experiments(
        f"tags.`{CLASS_ZONE_TAG}` LIKE '%'", "cannot find the class experiment"
    )
    return found[0] if found else None


def landing_experiment(client: ClassClient) -> str | None:
    """The class experiment's id (`class_experiment`), ``None`` where there is none."""
    found = class_experiment(client)
    return str(found["experiment_id"]) if found else None


def update_landing(client: ClassClient, class_id: str | None = None) -> list[Gradebook]:
    """Write the gradebooks' links into the description of the class experiment
    (``class_id``; by default `landing_experiment`), where they differ from what
    it holds; the gradebooks, newest first (none written without a class experiment)."""
    books = gradebooks(client)
    class_id = class_id or landing_experiment(client)
    if class_id is None:
        return books
    found = client.call(
        "/api/2.0/mlflow/experiments/get",
        method="GET",
        query={"experiment_id": class_id},
        what=f"cannot read the class experiment {class_id}",
    )
    note = tag_map(found.get("experiment", {})).get(str(Tag.NOTE), "")
    wanted = landing_note(books, kept_text(note))
    if wanted != note:
        client.call(
            "/api/2.0/mlflow/experiments/set-experiment-tag",
            {"experiment_id": class_id, "key": str(Tag.NOTE), "value": wanted},
            what=f"cannot describe the class experiment {class_id}",
        )
    return books
