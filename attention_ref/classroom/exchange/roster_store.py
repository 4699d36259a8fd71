"""Each student's LMS identifiers, kept on the class server where only teachers read them.

``attnref server add-students --roster`` stores what a roster says of each account
(`attention_ref.classroom.coursework.roster.Entry.ids`: Moodle's username, e-mail, ID number;
Canvas's name, ID, SIS ids, section) so that ``attnref server grades --csv-format moodle`` or
``canvas``, run later and from any machine that reaches the server, writes the identifiers the
LMS knows. They live in one experiment, `ROSTER_EXPERIMENT` (``class/roster``), as one
experiment tag per account (`TAG_PREFIX` + the account: JSON ``{"moodle": {...}, "canvas":
{...}}``). No student may read it: an account reads no experiment it was not granted
(``default_permission = NO_PERMISSIONS``) and this one is granted to no one; creating an
experiment and setting its tags are a teacher's routes at the gate
(`attention_ref.classroom.gate.access_table`). A later roster adds to what is kept: each
system's identifiers of an account are replaced by the newer roster's, the other system's kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from attention_ref.classroom.connection.class_client import ClassClient, HomeworkError, tag_map
from attention_ref.classroom.connection.client import checked
from attention_ref.experiments.names import EXPERIMENT_KIND, Tag

ROSTER_EXPERIMENT: Final = "class/roster"
TAG_PREFIX: Final = "attnref.roster."
Identifiers = dict[str, dict[str, dict[str, str]]]
_NOTE: Final = (
    "The class's roster: each student's identifiers in the learning-management system "
    "(Moodle, Canvas), one tag per account, written by `attnref server add-students --roster` "
    "and read by `attnref server grades --csv-format moodle|canvas`. Granted to no student."
)


def _valid(value: object) -> dict[str, dict[str, str]]:
    """A stored tag's identifiers, as ``system -> field -> value`` strings only (whatever
    else a tag holds is left out)."""
    if not isinstance(value, dict):
        return {}
    return {
        str(system): {str(k): v for k, v in fields.items() if isinstance(v, str) and v}
        for system, fields in value.items()
        if isinstance(fields, dict)
    }


def _experiment(client: ClassClient) -> dict | None:
    return client.experiment(ROSTER_EXPERIMENT)


def stored_identifiers(client: ClassClient) -> Identifiers:
    """``account -> system -> {field: value}`` as the server keeps them (empty when no roster
    was ever stored, or this account may not read it)."""
    found = _experiment(client)
    if found is None:
        return {}
    out: Identifiers = {}
    for key, value in tag_map(found).items():
        if key.startswith(TAG_PREFIX):
            try:
                out[key.removeprefix(TAG_PREFIX)] = _valid(json.loads(value))
            except ValueError:
                continue  # not ours: no identifiers for that account
    return out


def _roster_id(client: ClassClient) -> str:
    """The roster experiment's id, made now where there is none."""
    found = _experiment(client)
    if found is not None:
        return str(found["experiment_id"])
    tags = [
        {"key": str(Tag.EXPERIMENT_KIND), "value": EXPERIMENT_KIND},
        {"key": str(Tag.NOTE), "value": _NOTE},
    ]
    status, made = client.send(
        "/api/2.0/mlflow/experiments/create", {"name": ROSTER_EXPERIMENT, "tags": tags}
    )
    if status == 200:
        return str(made["experiment_id"])
    if "already exists" in str(made.get("message", "")) and (again := _experiment(client)):
        return str(again["experiment_id"])  # made at the same moment by another teacher
    client.refused(status, made)
    checked(status, made, f"cannot create the experiment {ROSTER_EXPERIMENT!r}")
    raise HomeworkError(f"cannot create the experiment {ROSTER_EXPERIMENT!r}")  # pragma: no cover


def store_identifiers(
    client: ClassClient, given: Mapping[str, Mapping[str, Mapping[str, str]]]
) -> int:
    """Keep ``given`` (``account -> system -> {field: value}``) on the server, each system's
    identifiers of an account replacing the ones kept; how many accounts changed."""
    if not any(given.values()):
        return 0
    kept = stored_identifiers(client)
    exp_id = _roster_id(client)
    changed = 0
    for account, systems in given.items():
        merged = kept.get(account, {}) | {s: dict(f) for s, f in systems.items() if f}
        if merged == kept.get(account):
            continue
        client.call(
            "/api/2.0/mlflow/experiments/set-experiment-tag",
            {
                "experiment_id": exp_id,
                "key": TAG_PREFIX + account,
                "value": json.dumps(merged, ensure_ascii=False, sort_keys=True),
            },
            what=f"cannot keep the LMS identifiers of {account!r}",
        )
        changed += 1
    return changed
