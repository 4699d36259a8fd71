"""The teacher's verb ``assign``: the gradebook experiment and each student's experiment.

`assign` makes (or completes) an assignment: ``homework/NAME`` for the teacher and, for every
student, ``homework/NAME/STUDENT`` with their seeds, granted to them alone; `enrol_everywhere`
gives a student who joins later their experiment in every assignment.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from attention_ref.classroom.connection.accounts import ADMIN_USERNAME, grant_experiment
from attention_ref.classroom.connection.class_client import ClassClient, HomeworkError, tag_map
from attention_ref.classroom.coursework.assignment import (
    DEFINITION_TAG,
    DUE_TAG,
    GRADEBOOK,
    ROLE_TAG,
    SEEDS_TAG,
    SUBMISSIONS,
    ZONE_TAG,
    Assignment,
    gradebook_experiment,
    iso,
    student_experiment,
)
from attention_ref.classroom.coursework.class_time import (
    CLASS_ZONE_TAG,
    UTC_NAME,
    checked_zone,
    shown,
)
from attention_ref.classroom.coursework.gradebook import (
    VIEW_TAG,
    code_span,
    columns_text,
    ui_url,
    view_state,
)
from attention_ref.classroom.coursework.policy import POLICY_TAG, Policy
from attention_ref.classroom.exchange.landing import class_experiment, update_landing
from attention_ref.experiments.names import EXPERIMENT_KIND, Tag

#: the words of the experiments' descriptions in the MLflow UI (Markdown: the student's name,
#: an account's, goes in as a `code_span`)
_GRADEBOOK_NOTE = (
    "Gradebook of the assignment **{name}** (attnref homework): one run per "
    "student and exercise, the grade the teacher computed from the stored "
    "answer. `attnref server grades {name}` prints it."
)
_STUDENT_NOTE = (
    "Homework **{name}** of {student}: one run per submission, holding its "
    "answer.json. `attnref homework fetch {name}` writes the exercises, "
    "`attnref homework submit {name} answer-1.json` submits."
)


@dataclass(frozen=True)
class Assigned:
    """What `assign` did: the assignment (as stored), its gradebook, who got it."""

    assignment: Assignment
    gradebook_id: str
    created: bool
    enrolled: tuple[str, ...]  # students whose experiment was made now
    already: tuple[str, ...]  # students who had theirs
    due_before: dt.datetime | None = None

    @property
    def due_moved(self) -> bool:
        return not self.created and self.due_before != self.assignment.due

    def describe(self, url: str) -> str:
        """What the teacher reads: the prose lines unindented (a terminal's width breaks
        them), a command or an address to copy indented, whole, on its own line."""
        a = self.assignment
        made = "created" if self.created else "updated"
        n = len(self.enrolled) + len(self.already)
        who = f"{n} student{'s' if n != 1 else ''}"
        if self.enrolled and self.already:
            who += f" ({len(self.enrolled)} new: {', '.join(self.enrolled)})"
        elif self.enrolled:
            who += f" ({', '.join(self.enrolled)})"
        lines = [
            f"{made} assignment {a.name!r} on {url}: {a.exercises} exercise"
            f"{'s' if a.exercises != 1 else ''} each for {who}, {a.describe_due()}; "
            f"gradebook: experiment {self.gradebook_id} ({gradebook_experiment(a.name)})"
        ]
        # prose: wrapped
        lines.append(f"policy: {a.policy.words(due=a.due is not None, zone=a.timezone)}")
        if self.due_moved:
            before = shown(self.due_before, a.timezone) if self.due_before else "none"
            lines.append(f"the due time moved from {before} to {a.describe_due()[4:]}")
        if a.source:
            lines.append(
                "a practice assignment: each statement prints the attnref exercise command that "
                "draws it, which with --key prints every answer (--no-source for a graded one)"
            )
        if n == 0:
            lines.append(
                "no student yet: add them (attnref server add-student NAME), then run this again"
            )
        lines.append(f"  students run: attnref homework fetch {a.name}")
        lines.append("the gradebook in the UI (its columns chosen):")
        lines.append(f"  {ui_url(url, self.gradebook_id)}")  # on its own line, whole
        return "\n".join(lines)


def list_students(client: ClassClient) -> list[str]:
    """The class's students: every account that is not an admin (a teacher), by name."""
    found = client.call("/api/2.0/mlflow/users/list", what="cannot list the accounts")
    return sorted(
        u["username"]
        for u in found.get("users", [])
        if not u.get("is_admin") and u["username"] != ADMIN_USERNAME
    )


def _create_experiment(
    client: ClassClient, name: str, tags: dict[str, str], note: str
) -> tuple[str, bool]:
    """``(id, created)`` of experiment ``name`` made with ``tags`` (found if it exists)."""
    from attention_ref.classroom.connection.client import checked

    every = [{"key": k, "value": v} for k, v in tags.items()]
    every += [
        {"key": str(Tag.EXPERIMENT_KIND), "value": EXPERIMENT_KIND},
        {"key": str(Tag.NOTE), "value": note},
    ]
    status, made = client.send("/api/2.0/mlflow/experiments/create", {"name": name, "tags": every})
    if status == 200:
        return str(made["experiment_id"]), True
    if "already exists" in str(made.get("message", "")):
        found = client.experiment(name)
        if found is not None:
            return str(found["experiment_id"]), False
    client.refused(status, made)
    checked(status, made, f"cannot create the experiment {name!r}")
    raise HomeworkError(f"cannot create the experiment {name!r}")  # pragma: no cover


def class_zone(client: ClassClient) -> str:
    """The class's time zone, as ``server start`` tagged the class experiment
    (`CLASS_ZONE_TAG`); ``UTC`` where the server has no class experiment."""
    found = class_experiment(client)
    return checked_zone(tag_map(found)[CLASS_ZONE_TAG]) if found else UTC_NAME


def _set_experiment_tag(client: ClassClient, exp_id: str, key: str, value: str) -> None:
    client.call(
        "/api/2.0/mlflow/experiments/set-experiment-tag",
        {"experiment_id": exp_id, "key": key, "value": value},
        what=f"cannot tag experiment {exp_id}",
    )


def assign(
    client: ClassClient,
    asked: Assignment,
    *,
    due_given: bool = True,
    policy_given: Mapping[str, object] | None = None,
    source_given: bool = True,
    shape_given: Collection[str] | None = None,
    zone: str | None = None,
) -> Assigned:
    """Create assignment ``asked`` (or complete an existing one of the same exercises: its
    due time moved when ``due_given``, the students who joined since enrolled). For an
    existing one, ``shape_given`` names the fields the teacher gave (``None``: all of
    ``asked``): only those must be the stored ones, the others are kept. The rules of
    ``policy_given`` (`Policy` fields; ``None`` values: not given) change the policy of
    ``asked`` when it is new, the stored one otherwise; the others are kept. A policy that
    does not hold with the due time is refused (`AssignmentError`) and nothing is written.

    An assignment of that name with other exercises is refused (its students have their
    variants already). ``zone``: the class's time zone, where the caller has read it
    (`class_zone`, else read here)."""
    found = client.experiment(gradebook_experiment(asked.name))
    due_before = None
    zone = zone or class_zone(client)  # the class's, unless the caller has read it
    asked = replace(asked, timezone=zone)
    if found is not None:
        current = Assignment.from_tags(tag_map(found))
        if shape_given is not None:  # only what the teacher typed must agree
            differ = [
                f"{option(f)} {_value(getattr(asked, f))} given, "
                f"{_value(getattr(current, f))} assigned"
                for f in sorted(shape_given)
                if getattr(asked, f) != getattr(current, f)
            ]
        else:
            differ = [] if current.same_exercises(asked) else ["other exercises"]
        if differ:
            raise HomeworkError(
                f"assignment {asked.name!r} exists with other exercises ({'; '.join(differ)}: "
                f"it asks {_shape(current)}); its students have their variants. Leave those "
                "options out to keep the assignment's (moving --due or changing a policy needs "
                "no other option), or choose another name for new exercises"
            )
        due_before = current.due
        policy = current.policy.changed(**(policy_given or {}))
        assignment = replace(
            current,
            due=asked.due if due_given else current.due,
            policy=policy,
            source=asked.source if source_given else current.source,
            timezone=zone,
        )
        gradebook_id, created = str(found["experiment_id"]), False
        if assignment.source != current.source:
            _set_experiment_tag(
                client, gradebook_id, DEFINITION_TAG, assignment.tags(GRADEBOOK)[DEFINITION_TAG]
            )
        if assignment.due != current.due:
            _set_experiment_tag(
                client, gradebook_id, DUE_TAG, iso(assignment.due) if assignment.due else ""
            )
        if assignment.policy != current.policy:
            _set_experiment_tag(client, gradebook_id, POLICY_TAG, assignment.policy.to_json())
        if tag_map(found).get(ZONE_TAG) != zone:
            _set_experiment_tag(client, gradebook_id, ZONE_TAG, zone)
        if tag_map(found).get(VIEW_TAG) != view_state():  # a gradebook of an earlier attnref
            _set_experiment_tag(client, gradebook_id, VIEW_TAG, view_state())
    else:
        asked = assignment = replace(asked, policy=asked.policy.changed(**(policy_given or {})))
        gradebook_id, created = _create_experiment(
            client,
            gradebook_experiment(asked.name),
            asked.tags(GRADEBOOK) | {VIEW_TAG: view_state()},
            _GRADEBOOK_NOTE.format(name=asked.name) + "\n\n" + columns_text(),
        )
    enrolled, already = [], []
    for student in list_students(client):
        (enrolled if _enrol(client, assignment, student) else already).append(student)
    update_landing(client)  # the class's landing page links every gradebook, this one too
    return Assigned(assignment, gradebook_id, created, tuple(enrolled), tuple(already), due_before)


def option(field: str) -> str:
    """The option of ``assign`` that sets an Assignment field (``d_model`` → ``--d-model``)."""
    return "--" + field.replace("_", "-")


def _value(v: object) -> str:
    """An option's value as the teacher reads it (a flag on or off; 1 is a number)."""
    if isinstance(v, bool):
        return "on" if v else "off"
    return "the default" if v is None else str(v)


def _shape(a: Assignment) -> str:
    s = a.shape()
    mask = "causal" if s["causal"] else "no mask"
    back = ", backward" if s["backward"] else ""
    variant = f", --variant {a.variant}" if a.options(0).features.any else ""
    return (
        f"{s['exercises']} exercises of {s['tokens']} tokens, d_model {s['d_model']}, "
        f"{s['heads']} heads, {mask}, {s['decimals']} decimals, {s['lang']}{back}"
        f"{variant}"
    )


def catalogue_names(assignment: Assignment) -> list[str]:
    """The names of the catalogue that grades this assignment's exercises (the homework's, or
    a variant's own), in its order: the rows of the class's summary."""
    from attention_ref.exercises.catalogue import catalogue_of

    opt = assignment.options(0)
    return [k.name for k in catalogue_of(opt.features, opt.backward or not opt.features.any)]


def _enrol(client: ClassClient, assignment: Assignment, student: str) -> bool:
    """``student``'s experiment of ``assignment``, made or brought up to date (its due time),
    granted to them; whether it was made now."""
    name = student_experiment(assignment.name, student)
    found = client.experiment(name)
    if found is None:
        exp_id, created = _create_experiment(
            client,
            name,
            assignment.tags(SUBMISSIONS, student),
            _STUDENT_NOTE.format(name=assignment.name, student=code_span(student)),
        )
    else:
        exp_id, created = str(found["experiment_id"]), False
        tags = tag_map(found)
        if tags.get(SEEDS_TAG) != json.dumps(assignment.seeds(student)):
            raise HomeworkError(f"{name!r} holds other exercises than the assignment's")
        # the student's copy: without the salt (an assignment made before it was kept off
        # the students' experiments loses it here), with the statements' source as asked
        copy = assignment.tags(SUBMISSIONS, student)[DEFINITION_TAG]
        if tags.get(DEFINITION_TAG) != copy:
            _set_experiment_tag(client, exp_id, DEFINITION_TAG, copy)
        due = iso(assignment.due) if assignment.due else ""
        if tags.get(DUE_TAG, "") != due:
            _set_experiment_tag(client, exp_id, DUE_TAG, due)
        if Policy.from_json(tags.get(POLICY_TAG, "")) != assignment.policy:
            _set_experiment_tag(client, exp_id, POLICY_TAG, assignment.policy.to_json())
        if tags.get(ZONE_TAG) != assignment.timezone:
            _set_experiment_tag(client, exp_id, ZONE_TAG, assignment.timezone)
    grant_experiment(client.url, client.auth, student, exp_id, "EDIT", cafile=client.cafile)
    return created


def assignments(client: ClassClient) -> list[Assignment]:
    """Every assignment on the server (its gradebook's tags)."""
    found = client.search_experiments(
        f"tags.`{ROLE_TAG}` = '{GRADEBOOK}'", "cannot list the assignments"
    )
    return [Assignment.from_tags(tag_map(e)) for e in found]


def enrol_everywhere(client: ClassClient, student: str) -> list[str]:
    """Give a new student their experiment in every assignment; the names of those made."""
    return [a.name for a in assignments(client) if _enrol(client, a, student)]
