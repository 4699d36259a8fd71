"""Every id a request carries is judged, over real HTTP through the edge (issue 39, 3, 4, 8, 5).

What a student did on 4104091 and must not: replace a finished answer through the Flask
``upload-artifact`` route by naming one run in ``run_id`` (judged) and another in
``run_uuid`` (written into); store a 9 MiB file, or a 5 MiB ``answer.json`` that was then
graded, the same way; learn from ``runs/create`` whose homework an experiment id holds; make a
logged model in their own homework experiment from a class run; make the server answer 500
with a deep body, a NUL byte, a GraphQL syntax error or a wrong type.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import secrets
import urllib.parse

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.class_client import ClassClient, answer_path
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.coursework.assignment import ANSWER_SHA_TAG, Assignment
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange import fetch
from attention_ref.classroom.exchange import submit as submitting
from attention_ref.classroom.gate.refusals import HIDDEN, REFUSAL
from attention_ref.classroom.hosting.server import ClassServer
from tests.classroom.conftest import EXPERIMENT
from tests.classroom.test_gate_seams import answer_of, finish, new_submission, put, tags_of

pytestmark = pytest.mark.slow

CLASS = EXPERIMENT


@pytest.fixture(scope="module")
def ids(server) -> ClassServer:
    """The package's class server (through its edge)."""
    return server


@pytest.fixture(scope="module")
def people(ids) -> dict[str, tuple[str, str]]:
    made = {}
    for name in ("alice", "mallory"):
        made[name] = (f"{name}-ids", secrets.token_urlsafe(15))
        add_student(ids.url, ids.admin, *made[name], CLASS)
    return made


@pytest.fixture(scope="module")
def homework(ids, people) -> Assignment:
    return assigning.assign(ClassClient(ids.url, ids.admin), Assignment(name="ids")).assignment


def class_experiment(server: ClassServer, who: tuple[str, str]) -> str:
    got = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=who,
        query={"experiment_name": CLASS},
    )[1]
    return str(got["experiment"]["experiment_id"])


def class_run_of(server: ClassServer, who: tuple[str, str]) -> str:
    """A run ``who`` makes in the class's experiment: one's own run, outside any homework."""
    made = rest(
        server.url,
        "/api/2.0/mlflow/runs/create",
        {"experiment_id": class_experiment(server, who)},
        auth=who,
    )[1]
    return str(made["run"]["info"]["run_id"])


def raw(
    server: ClassServer,
    method: str,
    target: str,
    who: tuple[str, str] | None,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """One request as any client may send it (a target written as is)."""
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(server.url).netloc, timeout=60)
    sent = dict(headers or {})
    if who is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode()
    conn.request(method, target, body=body or None, headers=sent)
    r = conn.getresponse()
    out = r.status, r.read()
    conn.close()
    return out


def upload_artifact(server, who, run_id: str, run_uuid: str, path: str, data: bytes):
    q = urllib.parse.urlencode({"run_id": run_id, "run_uuid": run_uuid, "path": path})
    return raw(
        server,
        "POST",
        f"/ajax-api/2.0/mlflow/upload-artifact?{q}",
        who,
        data,
        {"Content-Type": "application/octet-stream"},
    )


def stored(server, exp: str, run_id: str) -> bytes | None:
    return ClassClient(server.url, server.admin).download_answer(exp, run_id)


# --- finding 3: one run judged, another written -----------------------------------------------


def test_a_finished_answer_is_not_replaced_through_another_runs_id(ids, people, homework):
    url, mallory = ids.url, people["mallory"]
    mine = fetch.mine(ClassClient(url, mallory), "ids").experiment_id
    sent = submitting.submit(ClassClient(url, mallory), "ids", answer_of(homework, mallory[0]))
    before = stored(ids, mine, sent.run_id)
    class_run = class_run_of(ids, mallory)
    better = json.dumps({"exercise": "replaced"}).encode()
    status, said = upload_artifact(ids, mallory, class_run, sent.run_id, "answer.json", better)
    assert status == 400 and b"run_id and run_uuid" in said, (status, said)
    assert stored(ids, mine, sent.run_id) == before  # not replaced
    # the same route with one run named, the submission: refused by the fence
    status, said = upload_artifact(ids, mallory, sent.run_id, sent.run_id, "answer.json", better)
    assert status == 403 and REFUSAL.encode() in said, (status, said)
    assert stored(ids, mine, sent.run_id) == before
    # the control: the route writes into one's own class run
    assert upload_artifact(ids, mallory, class_run, class_run, "notes.txt", b"hi")[0] == 200


def test_no_extra_file_and_no_large_answer_reach_a_submission_by_any_route(ids, people, homework):
    url, mallory = ids.url, people["mallory"]
    mine = fetch.mine(ClassClient(url, mallory), "ids").experiment_id
    run_id = new_submission(ids, mallory, mine)
    class_run = class_run_of(ids, mallory)
    big_answer = b'{"exercise": "x", "pad": "' + b"a" * (5 << 20) + b'"}'
    for path, data in (("extra.bin", b"\0" * (9 << 20)), ("answer.json", big_answer)):
        for judged in (class_run, run_id):  # the class run named to be judged, or the submission
            status, said = upload_artifact(ids, mallory, judged, run_id, path, data)
            assert status in (400, 403, 413), (path, status, said[:200])
    assert stored(ids, mine, run_id) is None
    folder = f"{mine}/{run_id}/artifacts"
    listed = rest(
        url, "/api/2.0/mlflow-artifacts/artifacts", auth=ids.admin, query={"path": folder}
    )[1]
    assert not listed.get("files"), listed
    status, said = put(ids, answer_path(mine, run_id), big_answer, mallory)
    assert status == 403 and b"at most" in said, (status, said[:200])
    assert finish(ids, mallory, run_id)[0] == 403  # no answer: not finished, nothing graded
    # the control: a right answer of the right size is stored and finished
    text = answer_of(homework, mallory[0])
    assert put(ids, answer_path(mine, run_id), text, mallory)[0] == 200
    assert finish(ids, mallory, run_id)[0] == 200
    got = rest(url, "/api/2.0/mlflow/runs/get", auth=mallory, query={"run_id": run_id})[1]
    assert tags_of(got["run"])[ANSWER_SHA_TAG] == hashlib.sha256(text).hexdigest()


# --- finding 4: runs/create tells nothing of a classmate --------------------------------------


def test_runs_create_answers_a_classmates_homework_as_none(ids, people, homework):
    url, alice, mallory = ids.url, people["alice"], people["mallory"]
    hers = fetch.mine(ClassClient(url, alice), "ids").experiment_id
    create = "/api/2.0/mlflow/runs/create"
    one = rest(url, create, {"experiment_id": hers}, auth=mallory)
    none = rest(url, create, {"experiment_id": "987654321"}, auth=mallory)
    assert one == none and one[0] == 403 and one[1]["message"] == REFUSAL + HIDDEN, (one, none)
    assert "alice" not in json.dumps(one[1])  # nor her account, alice-ids
    # the control: in her own homework, a run is made
    assert rest(url, create, {"experiment_id": hers}, auth=alice)[0] == 200


# --- finding 8: a logged model's experiment is its source run's -------------------------------


def test_a_logged_model_is_made_in_its_source_runs_experiment_only(ids, people, homework):
    url, mallory = ids.url, people["mallory"]
    mine = fetch.mine(ClassClient(url, mallory), "ids").experiment_id
    exp = class_experiment(ids, mallory)
    run = rest(url, "/api/2.0/mlflow/runs/create", {"experiment_id": exp}, auth=mallory)[1]
    source = run["run"]["info"]["run_id"]
    models = "/api/2.0/mlflow/logged-models"
    status, said = rest(url, models, {"experiment_id": mine, "source_run_id": source}, auth=mallory)
    assert status == 403 and said["message"].startswith(REFUSAL), said
    found = rest(
        url, "/api/2.0/mlflow/logged-models/search", {"experiment_ids": [mine]}, auth=mallory
    )[1]
    assert not found.get("models"), found
    # the control: in the source run's experiment
    assert (
        rest(url, models, {"experiment_id": exp, "source_run_id": source}, auth=mallory)[0] == 200
    )


# --- finding 5: no 500 from what anyone sends --------------------------------------------------


def test_the_named_bodies_and_queries_are_400s_in_one_line(ids, people):
    mallory = people["mallory"]
    exp = class_experiment(ids, mallory)
    run = rest(ids.url, "/api/2.0/mlflow/runs/create", {"experiment_id": exp}, auth=mallory)[1]
    run_id = run["run"]["info"]["run_id"]
    deep = b"[" * 3000 + b"]" * 3000
    deep_obj = b'{"a":' * 3000 + b"1" + b"}" * 3000
    json_type = {"Content-Type": "application/json"}
    cases = [
        ("POST", "/api/2.0/mlflow/runs/search", deep, json_type),
        ("POST", "/api/2.0/mlflow/runs/log-batch", deep_obj, json_type),
        ("POST", "/graphql", b"{not json", json_type),
        ("POST", "/graphql", json.dumps({"query": "query {"}).encode(), json_type),
        (
            "POST",
            "/graphql",
            json.dumps({"query": "{__typename}", "variables": [1]}).encode(),
            json_type,
        ),
        (
            "POST",
            "/api/2.0/mlflow/runs/create",
            json.dumps({"experiment_id": {"a": 1}}).encode(),
            json_type,
        ),
        (
            "POST",
            "/api/2.0/mlflow/runs/log-batch",
            json.dumps({"run_id": run_id, "tags": [1]}).encode(),
            json_type,
        ),
        ("GET", "/api/2.0/mlflow/runs/get?run_id=%00", b"", {}),
        ("GET", "/api/2.0/mlflow/experiments/get?experiment_id=%00", b"", {}),
        ("GET", "/api/2.0/mlflow/metrics/get-history?run_id=%00&metric_key=a", b"", {}),
        ("GET", "/api/2.0/mlflow/registered-models/get?name=%00", b"", {}),
        ("GET", "/api/2.0/mlflow/experiments/get-by-name?experiment_name=a%00b", b"", {}),
    ]
    before = ids.log.stat().st_size
    for method, target, body, headers in cases:
        for who in (mallory, ids.admin):
            status, said = raw(ids, method, target, who, body, headers)
            assert status == 400, (target, body[:40], status, said[:300])
            answer = json.loads(said)
            message = answer["errors"][0] if target == "/graphql" else answer["message"]
            assert "\n" not in message, answer
            # the student's refused by the gate; the admin's by the gate or by MLflow itself
            assert message.startswith(REFUSAL) or who == ids.admin, answer
    # a NUL in the account's name: no account needed to send it
    nul = base64.b64encode(b"adm\x00in:whatever").decode()
    status, said = raw(
        ids,
        "GET",
        "/api/2.0/mlflow/experiments/search",
        None,
        b"",
        {"Authorization": f"Basic {nul}"},
    )
    assert status == 400 and REFUSAL.encode() in said, (status, said)
    log = ids.log.read_bytes()[before:].decode(errors="replace")
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]
    # the controls: the same routes with what they take
    ok = rest(
        ids.url,
        "/api/2.0/mlflow/runs/log-batch",
        {"run_id": run_id, "tags": [{"key": "k", "value": "v"}]},
        auth=mallory,
    )
    assert ok[0] == 200, ok
    q = {"query": "{__typename}", "variables": {}}
    assert rest(ids.url, "/graphql", q, auth=mallory)[0] == 200
    assert (
        rest(ids.url, "/api/2.0/mlflow/runs/get", auth=mallory, query={"run_id": run_id})[0] == 200
    )


def test_a_parameter_the_route_does_not_read_is_refused(ids, people):
    mallory = people["mallory"]
    exp = class_experiment(ids, mallory)
    create = "/api/2.0/mlflow/runs/create"
    cases = [
        (create, {"experiment_id": exp, "experimentId": "1"}),  # a JSON twin of a field
        (create, {"experiment_id": exp, "owner": "alice"}),  # no such field
    ]
    for endpoint, body in cases:
        status, said = rest(ids.url, endpoint, body, auth=mallory)
        assert status == 400 and said["message"].startswith(REFUSAL), (body, said)
    status, said = rest(
        ids.url, "/api/2.0/mlflow/runs/get", auth=mallory, query={"run_id": "0" * 32, "extra": "1"}
    )
    assert status == 400 and "'extra'" in said["message"], said
    status, said = raw(
        ids,
        "POST",
        f"{create}?experiment_id={exp}",
        mallory,
        json.dumps({"experiment_id": exp}).encode(),
        {"Content-Type": "application/json"},
    )
    assert status == 400 and b"query" in said, said  # a POST reads its body, not its query
    # the control: the same request as MLflow's client sends it
    assert rest(ids.url, create, {"experiment_id": exp}, auth=mallory)[0] == 200
