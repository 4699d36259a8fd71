"""Reserved keys by spelling (issue 57, finding 10): a key is judged as it reads.

A student's run stored the tags ``" attnref.homework.received"``, ``"Attnref.Homework.received"``
and ``"mlflow.user "``: MLflow reads only the exact keys, so harmless today, and a trap for
whatever reads them tomorrow (a query that folds case, a teacher reading the UI). The gate
judges every tag, parameter and metric key after Unicode's compatibility form (NFKC),
case-folding and trimming (`attention_ref.classroom.gate.ownership.judged_key`): here as a table,
then over HTTP through the edge, route by route, each spelling refused (403) as the exact key
is, and an ordinary key of the same run still the student's to write.
"""

from __future__ import annotations

import pytest

from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.coursework.assignment import RESERVED
from attention_ref.classroom.gate.ownership import OWNER_TAG, judged_key
from tests.classroom.conftest import EXPERIMENT

#: spellings of the homework's and the grades' keys: spaces around (ASCII, no-break,
#: ideographic), another case, fullwidth letters and stops, a one-dot leader, a zero-width space
RESERVED_SPELLINGS = (
    " attnref.homework.received",
    "attnref.homework.received ",
    "Attnref.Homework.received",
    "ATTNREF.GRADE.steps",
    "\u00a0attnref.grade.steps",
    "\u3000attnref.grade.steps",
    "\uff41ttnref.homework.received",
    "\uff21\uff34\uff34\uff2e\uff32\uff25\uff26\uff0e\uff27\uff32\uff21\uff24\uff25\uff0esteps",
    "attnref\u2024grade.steps",
    "\u200battnref.grade.steps",
    "attnref.\u00adhomework.seeds",
)
#: spellings of the owner tag
OWNER_SPELLINGS = (
    "mlflow.user ",
    " mlflow.user",
    "MLflow.User",
    "MLFLOW.USER\u00a0",
    "\uff4dlflow.user",
    "mlflow.user\u200b",
)

#: (key, as judged): the pure table
JUDGED = [
    (" attnref.homework.received", "attnref.homework.received"),
    ("Attnref.Homework.received", "attnref.homework.received"),
    ("mlflow.user ", "mlflow.user"),
    ("\tMLflow.User\n", "mlflow.user"),
    ("\u3000mlflow.user\u00a0", "mlflow.user"),
    ("\uff41ttnref.grade.x", "attnref.grade.x"),
    ("attnref\uff0egrade\u2024x", "attnref.grade.x"),
    ("\u200b\u2066attnref.grade.x\u2069", "attnref.grade.x"),
    ("mlflow.\u00aduser", "mlflow.user"),
    ("Stra\u00dfe", "strasse"),  # casefold, not lower
    ("\ufb01nal", "final"),  # a ligature, unfolded by NFKC
    ("loss", "loss"),
    ("mlflow.runName", "mlflow.runname"),
    ("attnref homework received", "attnref homework received"),  # inner spaces kept
]
#: keys no student may write (True) and keys a student's training writes (False)
REFUSED = [
    *((k, True) for k in RESERVED_SPELLINGS),
    *((k, True) for k in OWNER_SPELLINGS),
    ("attnref.homework.received", True),
    ("attnref.grade.steps", True),
    (OWNER_TAG, True),
    ("loss", False),
    ("best_val_loss", False),
    ("mlflow.runName", False),
    ("mlflow.note.content", False),
    ("mlflow.username", False),
    ("attnref.homework", False),  # the namespace is the prefix with its dot
    ("attnref.note", False),
    ("my attnref.grade.steps", False),
]


@pytest.mark.parametrize(("key", "judged"), JUDGED)
def test_a_key_is_judged_trimmed_case_folded_and_in_compatibility_form(key, judged):
    assert judged_key(key) == judged


@pytest.mark.parametrize(("key", "refused"), REFUSED)
def test_which_keys_read_as_reserved(key, refused):
    reads = judged_key(key)
    assert (reads.startswith(RESERVED) or reads == OWNER_TAG) is refused, (key, reads)


# ------------------------------------------------------------------ over HTTP, through the edge


def class_run(server, who: tuple[str, str], **extra) -> tuple[int, dict]:
    """``who`` creates a run in the class experiment (with ``extra`` in the request)."""
    exp = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=who,
        query={"experiment_name": EXPERIMENT},
    )[1]["experiment"]["experiment_id"]
    made = {"experiment_id": exp, **extra}
    return rest(server.url, "/api/2.0/mlflow/runs/create", made, auth=who)


def writes(run_id: str, key: str) -> list[tuple[str, dict]]:
    """Every route by which a student writes ``key`` to their own run: a tag, a parameter, a
    metric, one at a time and in a batch; and deletes a tag of that key."""
    metric = {"key": key, "value": 1.0, "timestamp": 0, "step": 0}
    pair = {"key": key, "value": "x"}
    return [
        ("/api/2.0/mlflow/runs/set-tag", {"run_id": run_id, "key": key, "value": "x"}),
        ("/api/2.0/mlflow/runs/delete-tag", {"run_id": run_id, "key": key}),
        ("/api/2.0/mlflow/runs/log-parameter", {"run_id": run_id, "key": key, "value": "x"}),
        ("/api/2.0/mlflow/runs/log-metric", {"run_id": run_id, **metric}),
        ("/api/2.0/mlflow/runs/log-batch", {"run_id": run_id, "tags": [pair]}),
        ("/api/2.0/mlflow/runs/log-batch", {"run_id": run_id, "params": [pair]}),
        ("/api/2.0/mlflow/runs/log-batch", {"run_id": run_id, "metrics": [metric]}),
    ]


@pytest.mark.slow
def test_a_student_writes_no_reserved_key_however_spelled(server, students):
    """carol, on her own class run: every spelling of a homework or grades key, by every
    route that writes or deletes a key, and at the run's creation, is refused 403 as the
    exact key is; the run holds none of them; an ordinary key is hers to write (the
    control); the experiment's tags are the teacher's whatever the spelling."""
    carol = ("carol", students["carol"])
    status, made = class_run(server, carol, run_name="spellings")
    assert status == 200, made
    run_id = made["run"]["info"]["run_id"]
    for key in ("attnref.homework.received", *RESERVED_SPELLINGS):
        for endpoint, body in writes(run_id, key):
            status, said = rest(server.url, endpoint, body, auth=carol)
            assert status == 403, (key, endpoint, status, said)
            assert said["message"].startswith("class server: "), (key, endpoint, said)
        status, said = class_run(server, carol, tags=[{"key": key, "value": "x"}])
        assert status == 403, (key, "create", status, said)
        exp = made["run"]["info"]["experiment_id"]
        tag = {"experiment_id": exp, "key": key, "value": "x"}
        endpoint = "/api/2.0/mlflow/experiments/set-experiment-tag"
        assert rest(server.url, endpoint, tag, auth=carol)[0] == 403, key
    got = rest(server.url, "/api/2.0/mlflow/runs/get", auth=carol, query={"run_id": run_id})[1]
    data = got["run"]["data"]
    stored = [x["key"] for part in ("tags", "params", "metrics") for x in data.get(part, [])]
    assert not [k for k in stored if judged_key(k).startswith(RESERVED)], stored
    for endpoint, body in writes(run_id, "note"):  # the control: an ordinary key
        status, said = rest(server.url, endpoint, body, auth=carol)
        assert status == 200, (endpoint, status, said)


@pytest.mark.slow
def test_a_student_writes_no_owner_tag_however_spelled(server, students):
    """carol: the owner tag spelled otherwise is refused 403 on her own run (set-tag,
    delete-tag, log-batch) as the exact key is, and at creation, where the exact key is
    replaced by her name (the control: that run is created, hers)."""
    carol = ("carol", students["carol"])
    status, made = class_run(server, carol, run_name="owner spellings")
    assert status == 200, made
    run_id = made["run"]["info"]["run_id"]
    for key in (OWNER_TAG, *OWNER_SPELLINGS):
        for endpoint, body in writes(run_id, key)[:2] + writes(run_id, key)[4:5]:
            status, said = rest(server.url, endpoint, body, auth=carol)
            assert status == 403, (key, endpoint, status, said)
    for key in OWNER_SPELLINGS:
        status, said = class_run(server, carol, tags=[{"key": key, "value": "bob"}])
        assert status == 403, (key, status, said)
    status, made = class_run(server, carol, tags=[{"key": OWNER_TAG, "value": "bob"}])
    assert status == 200, made
    tags = {t["key"]: t["value"] for t in made["run"]["data"]["tags"]}
    assert tags[OWNER_TAG] == "carol"
    got = rest(server.url, "/api/2.0/mlflow/runs/get", auth=carol, query={"run_id": run_id})[1]
    keys = [t["key"] for t in got["run"]["data"].get("tags", [])]
    assert [k for k in keys if judged_key(k) == OWNER_TAG] == [OWNER_TAG], keys
