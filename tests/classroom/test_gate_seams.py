"""The gate's seams, over real HTTP, on a class server with the default number of workers.

What a student could do before (issue 29) and must not: fill a cache with a "not found" that
switches the homework fence off for the next assignment; get an answer past the size limit, or
a small one refused, by choosing the content type; replace a finished answer on disk with an
upload that began before the finish; tell a classmate's homework from none by the status; make
the server answer 500; register a prompt. And the teacher's mistake: ``server stop`` on a copy
of a running class folder must not take the live class down.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import http.client
import json
import secrets
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Iterator

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.class_client import ClassClient, answer_path
from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.coursework.assignment import ANSWER_SHA_TAG, RECEIVED_TAG, Assignment
from attention_ref.classroom.coursework.student_answers import right_answer
from attention_ref.classroom.exchange import assign as assigning
from attention_ref.classroom.exchange import fetch
from attention_ref.classroom.exchange import grade as grading
from attention_ref.classroom.exchange import submit as submitting
from attention_ref.classroom.gate.refusals import HIDDEN, REFUSAL
from attention_ref.classroom.gate.uploads import MAX_ANSWER_BYTES
from attention_ref.classroom.hosting.server import DEFAULT_WORKERS, ClassServer
from attention_ref.classroom.hosting.server_folder import server_status, stop_server
from attention_ref.exercises.answer import Problem
from tests.classroom.conftest import class_dir, free_port

pytestmark = pytest.mark.slow

UTC = dt.UTC
CLASS = "seams"


@pytest.fixture(scope="module")
def seams() -> Iterator[ClassServer]:
    """A class server of its own, on the default number of workers (each its own caches)."""
    root = class_dir("attnref-seams-")
    s = ClassServer(root / "class", secrets.token_urlsafe(18), port=free_port(), experiment=CLASS)
    assert s.workers == DEFAULT_WORKERS > 1
    with s:
        yield s
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def accounts(seams) -> dict[str, tuple[str, str]]:
    made = {}
    for name in ("alice", "bob"):
        password = secrets.token_urlsafe(15)
        add_student(seams.url, seams.admin, name, password, CLASS)
        made[name] = (name, password)
    return made


def answer_of(a: Assignment, student: str, k: int = 1) -> bytes:
    return right_answer(Problem.of_exercise(a.exercises_of(student)[k - 1]), a.decimals)


def tags_of(run: dict) -> dict[str, str]:
    return {t["key"]: t["value"] for t in run["data"].get("tags", [])}


def max_experiment_id(server: ClassServer) -> int:
    found = rest(
        server.url,
        "/api/2.0/mlflow/experiments/search",
        auth=server.admin,
        query={"max_results": "1000", "view_type": "ALL"},
    )[1]
    return max(int(e["experiment_id"]) for e in found["experiments"])


def put(
    server: ClassServer,
    path: str,
    data: bytes,
    auth: tuple[str, str],
    *,
    content_type: str | None = None,
    chunked: bool = False,
) -> tuple[int, bytes]:
    """A PUT as any client may send it: a content type of its choice, with a length or chunked."""
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(server.url).netloc, timeout=60)
    token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    headers = {"Authorization": f"Basic {token}"}
    if content_type:
        headers["Content-Type"] = content_type
    conn.putrequest("PUT", path)
    for k, v in headers.items():
        conn.putheader(k, v)
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for i in range(0, len(data), 65536):
            piece = data[i : i + 65536]
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    else:
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders()
        conn.send(data)
    r = conn.getresponse()
    out = r.status, r.read()
    conn.close()
    return out


def new_submission(server: ClassServer, auth: tuple[str, str], exp_id: str) -> str:
    status, made = rest(
        server.url,
        "/api/2.0/mlflow/runs/create",
        {"experiment_id": exp_id, "run_name": "exercise 1"},
        auth=auth,
    )
    assert status == 200, made
    return made["run"]["info"]["run_id"]


def finish(server: ClassServer, auth: tuple[str, str], run_id: str) -> tuple[int, dict]:
    return rest(
        server.url,
        "/api/2.0/mlflow/runs/update",
        {"run_id": run_id, "status": "FINISHED"},
        auth=auth,
    )


# --- 1. no decision from a cache a request can fill -----------------------------------------


def test_ids_poked_before_an_assignment_exists_do_not_switch_its_fence_off(seams, accounts):
    """bob sends writes naming the next experiment ids (each refused: nothing is there yet),
    several times so that every worker sees them; the teacher then assigns into those ids, and
    the fence holds: alice submits, bob writes no free tag, claims no time."""
    url, alice, bob = seams.url, accounts["alice"], accounts["bob"]
    top = max_experiment_id(seams)
    for _ in range(2 * DEFAULT_WORKERS):
        for exp in range(top + 1, top + 8):
            status, _ = rest(
                url, "/api/2.0/mlflow/runs/create", {"experiment_id": str(exp)}, auth=bob
            )
            assert status in (403, 404)
    due = dt.datetime.now(UTC).replace(microsecond=0) + dt.timedelta(days=7)
    a = assigning.assign(
        ClassClient(url, seams.admin), Assignment(name="poked", due=due)
    ).assignment
    mine = fetch.mine(ClassClient(url, bob), "poked").experiment_id
    assert top < int(mine) < top + 8  # the ids bob poked
    # alice's honest submission goes through on the first try
    sent = submitting.submit(ClassClient(url, alice), "poked", answer_of(a, "alice"))
    assert sent.attempt == 1 and sent.late is None
    # bob's run in his homework holds an answer and nothing else, on every worker
    run_id = new_submission(seams, bob, mine)
    for _ in range(2 * DEFAULT_WORKERS):
        status, said = rest(
            url,
            "/api/2.0/mlflow/runs/set-tag",
            {"run_id": run_id, "key": "free", "value": "x"},
            auth=bob,
        )
        assert status == 403 and said["message"].startswith(REFUSAL), said
    assert put(seams, answer_path(mine, run_id), answer_of(a, "bob"), bob)[0] == 200
    claimed = {"run_id": run_id, "status": "FINISHED", "end_time": 1000}
    status, _ = rest(url, "/api/2.0/mlflow/runs/update", claimed, auth=bob)
    assert status == 200
    info = rest(url, "/api/2.0/mlflow/runs/get", auth=bob, query={"run_id": run_id})[1]["run"]
    assert int(info["info"]["end_time"]) > 1_000_000_000_000  # the server's clock, not 1000
    again = rest(
        url, "/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "RUNNING"}, auth=bob
    )
    assert again[0] == 403
    rows = {r.student: r for r in grading.grade(ClassClient(url, seams.admin), "poked").rows}
    assert rows["alice"].steps_right == rows["alice"].steps_given > 0
    assert rows["bob"].standing.value == "graded" and rows["bob"].received.year > 2000


def test_a_run_finished_without_the_servers_stamp_is_not_graded_on_the_clients_time():
    """The grader never takes the client's end time for the time received (the control: the
    same run with the server's stamps is graded)."""
    a = Assignment(name="stamp")
    text = answer_of(a, "bob")
    run = {
        "info": {
            "run_id": "0" * 32,
            "run_name": "exercise 1",
            "end_time": 1000,
            "start_time": 1000,
        },
        "data": {"tags": []},
    }
    g = grading.grade_submission("bob", run, text, a)
    assert g.standing.value == "malformed" and "server's stamp" in g.reason
    stamped = {"key": ANSWER_SHA_TAG, "value": hashlib.sha256(text).hexdigest()}
    when = {"key": RECEIVED_TAG, "value": "2030-01-01T00:00:00.000Z"}
    run["data"]["tags"] = [stamped, when]
    g = grading.grade_submission("bob", run, text, a)
    assert g.standing.value == "graded" and g.received.year == 2030


# --- 2. sizes from the bytes received ------------------------------------------------------


@pytest.fixture(scope="module")
def sized(seams, accounts) -> tuple[Assignment, str]:
    a = assigning.assign(ClassClient(seams.url, seams.admin), Assignment(name="sized")).assignment
    return a, fetch.mine(ClassClient(seams.url, accounts["bob"]), "sized").experiment_id


TYPES = [
    None,
    "application/json",
    "application/octet-stream",
    "text/plain",
    "application/x-www-form-urlencoded",
]


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
@pytest.mark.parametrize("content_type", TYPES)
def test_every_content_type_gets_the_same_limit(seams, accounts, sized, content_type, chunked):
    a, mine = sized
    bob = accounts["bob"]
    # above the limit: refused, nothing stored, the run still open for a right one
    run_id = new_submission(seams, bob, mine)
    path = answer_path(mine, run_id)
    big = b" " * MAX_ANSWER_BYTES + b"{}"
    status, said = put(seams, path, big, bob, content_type=content_type, chunked=chunked)
    assert status == 403 and b"at most 1048576 bytes" in said, (status, said[:200])
    assert ClassClient(seams.url, seams.admin).download_answer(mine, run_id) is None
    # below it: stored, and finished with its hash
    text = answer_of(a, "bob")
    status, said = put(seams, path, text, bob, content_type=content_type, chunked=chunked)
    assert status == 200, said
    assert finish(seams, bob, run_id)[0] == 200
    got = rest(seams.url, "/api/2.0/mlflow/runs/get", auth=bob, query={"run_id": run_id})[1]
    assert tags_of(got["run"])[ANSWER_SHA_TAG] == hashlib.sha256(text).hexdigest()


def test_mlflows_own_client_and_homework_submit_upload_an_answer(
    seams, accounts, sized, tmp_path, monkeypatch
):
    from mlflow import MlflowClient

    a, mine = sized
    bob = accounts["bob"]
    run_id = new_submission(seams, bob, mine)
    (tmp_path / "answer.json").write_bytes(answer_of(a, "bob"))
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", bob[0])
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", bob[1])
    MlflowClient(tracking_uri=seams.url).log_artifact(run_id, str(tmp_path / "answer.json"))
    assert finish(seams, bob, run_id)[0] == 200
    sent = submitting.submit(ClassClient(seams.url, bob), "sized", answer_of(a, "bob"))
    assert sent.report.all_right


# --- 3. final means final on disk ----------------------------------------------------------


def test_an_upload_begun_before_the_finish_cannot_replace_the_answer(seams, accounts, sized):
    a, mine = sized
    bob = accounts["bob"]
    run_id = new_submission(seams, bob, mine)
    path = answer_path(mine, run_id)
    first, second = answer_of(a, "bob"), json.dumps({"exercise": "B"}).encode()
    # A: the headers and half the body, then nothing for a while
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(seams.url).netloc, timeout=60)
    token = base64.b64encode(f"{bob[0]}:{bob[1]}".encode()).decode()
    conn.putrequest("PUT", path)
    conn.putheader("Authorization", f"Basic {token}")
    conn.putheader("Content-Length", str(len(first)))
    conn.endheaders()
    conn.send(first[: len(first) // 2])
    time.sleep(1)  # the gate has let A's headers through
    # B uploaded and the run finished with B's hash
    assert put(seams, path, second, bob)[0] == 200
    assert finish(seams, bob, run_id)[0] == 200
    # A's body completes after the finish: refused, nothing written
    conn.send(first[len(first) // 2 :])
    r = conn.getresponse()
    body = r.read()
    conn.close()
    assert r.status == 403 and b"final" in body, (r.status, body)
    stored = ClassClient(seams.url, seams.admin).download_answer(mine, run_id)
    assert stored == second
    got = rest(seams.url, "/api/2.0/mlflow/runs/get", auth=bob, query={"run_id": run_id})[1]
    assert tags_of(got["run"])[ANSWER_SHA_TAG] == hashlib.sha256(second).hexdigest()


# --- 5. one answer for forbidden and absent -------------------------------------------------


def test_a_classmates_homework_and_none_look_the_same(seams, accounts, sized):
    url, alice, bob = seams.url, accounts["alice"], accounts["bob"]
    a, _ = sized
    hers = fetch.mine(ClassClient(url, alice), "sized").experiment_id
    sent = submitting.submit(ClassClient(url, alice), "sized", answer_of(a, "alice"))
    by_name = "/api/2.0/mlflow/experiments/get-by-name"
    pairs = {
        "her experiment by name": (
            (by_name, {"experiment_name": "homework/sized/alice"}),
            (by_name, {"experiment_name": "homework/sized/nobody"}),
        ),
        "an assignment by name": (
            (by_name, {"experiment_name": "homework/sized/alice"}),
            (by_name, {"experiment_name": "homework/nohw/bob"}),
        ),
        "her experiment by id": (
            ("/api/2.0/mlflow/experiments/get", {"experiment_id": hers}),
            ("/api/2.0/mlflow/experiments/get", {"experiment_id": "987654"}),
        ),
        "her submission": (
            ("/api/2.0/mlflow/runs/get", {"run_id": sent.run_id}),
            ("/api/2.0/mlflow/runs/get", {"run_id": "f" * 32}),
        ),
        "her answer": (
            (answer_path(hers, sent.run_id), None),
            (answer_path(hers, "f" * 32), None),
        ),
    }
    for what, ((e1, q1), (e2, q2)) in pairs.items():
        one = rest(url, e1, auth=bob, query=q1)
        other = rest(url, e2, auth=bob, query=q2)
        assert one == other and one[0] == 403, (what, one, other)
        if not e1.startswith("/api/2.0/mlflow-artifacts/"):  # MLflow's own for its files
            assert one[1] == {"error_code": "PERMISSION_DENIED", "message": REFUSAL + HIDDEN}
        # the control: the teacher tells them apart
        assert rest(url, e1, auth=seams.admin, query=q1)[0] == 200, what
        assert rest(url, e2, auth=seams.admin, query=q2)[0] == 404, what


# --- 6. no 500 from a student's request -----------------------------------------------------


def test_malformed_bodies_are_one_line_400s_and_no_traceback(seams, accounts):
    url, bob = seams.url, accounts["bob"]
    before = seams.log.stat().st_size
    cases = [
        ("GET", "/graphql", None, {"query": "{__typename}"}),
        ("POST", "/graphql", b"[1]", None),
        ("POST", "/graphql", b'"x"', None),
        ("POST", "/graphql", b"{}", None),
        ("POST", "/graphql", b'{"query": 5}', None),
        ("POST", "/api/2.0/mlflow/logged-models/search", b"[1]", None),
        ("POST", "/api/2.0/mlflow/registered-models/create", b"[1]", None),
        ("POST", "/api/3.0/mlflow/traces/batchGetInfos", b"[1]", None),
        ("POST", "/api/2.0/mlflow/runs/search", b"7", None),
        ("POST", "/api/2.0/mlflow/runs/create", b"null", None),
    ]
    for method, endpoint, data, query in cases:
        for who in (bob, seams.admin):
            status, said = rest(url, endpoint, auth=who, method=method, data=data, query=query)
            assert status == 400, (endpoint, data, status, said)
            # GraphQL's refusals are GraphQL errors; the others MLflow's error format
            message = said["errors"][0] if endpoint == "/graphql" else said["message"]
            assert message.startswith(REFUSAL) and "\n" not in message, said
    log = seams.log.read_bytes()[before:].decode(errors="replace")
    assert "Traceback" not in log and " 500 " not in log
    # the controls: the same routes with the bodies they take
    query = {"query": 'query { mlflowGetRun(input: {runId: "RUN"}) { run { info { runId } } } }'}
    query["query"] = query["query"].replace("RUN", "0" * 32)
    status, said = rest(url, "/graphql", query, auth=bob)
    assert status == 200, said
    found = rest(
        url, "/api/2.0/mlflow/experiments/get-by-name", auth=bob, query={"experiment_name": CLASS}
    )[1]
    ids = {"experiment_ids": [found["experiment"]["experiment_id"]]}
    assert rest(url, "/api/2.0/mlflow/logged-models/search", ids, auth=bob)[0] == 200


# --- 7. models yes, prompts no ---------------------------------------------------------------


def test_a_student_registers_a_model_but_no_prompt(seams, accounts):
    url, bob = seams.url, accounts["bob"]
    prompt = {"name": "bobs-prompt", "tags": [{"key": "mlflow.prompt.is_prompt", "value": "true"}]}
    status, said = rest(url, "/api/2.0/mlflow/registered-models/create", prompt, auth=bob)
    assert status == 403 and "prompt" in said["message"], said
    assert (
        rest(
            url,
            "/api/2.0/mlflow/registered-models/get",
            auth=seams.admin,
            query={"name": "bobs-prompt"},
        )[0]
        == 404
    )
    made = rest(url, "/api/2.0/mlflow/registered-models/create", {"name": "bobs-model"}, auth=bob)
    assert made[0] == 200
    for key in ("mlflow.prompt.is_prompt", " MLflow.Prompt.is_prompt", "mlflow.prompt\u200b.x"):
        tag = {"name": "bobs-model", "key": key, "value": "true"}  # judged by its spelling
        assert rest(url, "/api/2.0/mlflow/registered-models/set-tag", tag, auth=bob)[0] == 403
    # the control: an ordinary tag on his model
    tag = {"name": "bobs-model", "key": "note", "value": "x"}
    assert rest(url, "/api/2.0/mlflow/registered-models/set-tag", tag, auth=bob)[0] == 200


# --- 4. `stop` only what it started ---------------------------------------------------------


def test_status_and_stop_on_a_copy_leave_the_live_class_running(seams, tmp_path):
    copy = tmp_path / "class-copy"
    subprocess.run(["cp", "-a", str(seams.root), str(copy)], check=True)
    status = server_status(copy)
    assert not status.running and status.copy_of == str(seams.root)
    assert "is a copy of" in status.describe() and "gone" not in status.describe()
    with pytest.raises(ServerError, match="is a copy of the class folder"):
        stop_server(copy)
    time.sleep(1)
    assert seams.process is not None and seams.process.poll() is None
    assert seams.postgres.is_running()
    assert (
        rest(
            seams.url,
            "/api/2.0/mlflow/experiments/search",
            auth=seams.admin,
            query={"max_results": "1"},
        )[0]
        == 200
    )
    # the control: the live folder's own status says it runs
    live = server_status(seams.root)
    assert live.running and live.copy_of is None


# --- a busy server: retried, never twice, and the student told what the server holds -------


class LossyProxy:
    """A TCP proxy on 127.0.0.1 in front of the class server that forwards every request and
    drops the reply of the first request matching each of ``drop`` (the server acted on it;
    the client sees the connection closed, as after a timeout)."""

    def __init__(self, upstream: str, drop: list[str]) -> None:
        import socket
        import threading

        self.upstream = urllib.parse.urlsplit(upstream)
        self.drop = list(drop)
        self.dropped: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn) -> None:
        import socket

        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            first = head.split(b"\r\n")[0].decode()
            with socket.create_connection((self.upstream.hostname, self.upstream.port)) as up:
                up.sendall(head + b"\r\n\r\n" + body)
                reply = b""
                while chunk := up.recv(65536):
                    reply += chunk
            hit = next((d for d in self.drop if d in first), None)
            if hit is not None:
                self.drop.remove(hit)
                self.dropped.append(first)
                return  # the server acted; the client hears nothing
            conn.sendall(reply)

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("lost", ["runs/create", "PUT /api/2.0/mlflow-artifacts", "runs/update"])
def test_a_lost_reply_is_retried_once_in_effect_and_the_student_told_the_truth(
    seams, accounts, sized, lost
):
    a, mine = sized
    bob = accounts["bob"]
    before = {r["info"]["run_id"] for r in ClassClient(seams.url, seams.admin).search_runs(mine)}
    proxy = LossyProxy(seams.url, [lost])
    try:
        sent = submitting.submit(ClassClient(proxy.url, bob), "sized", answer_of(a, "bob"))
    finally:
        proxy.close()
    assert len(proxy.dropped) == 1 and lost in proxy.dropped[0]  # the reply was lost
    runs = [
        r
        for r in ClassClient(seams.url, seams.admin).search_runs(mine)
        if r["info"]["run_id"] not in before
    ]
    assert [r["info"]["run_id"] for r in runs] == [sent.run_id]  # one run, not two
    assert runs[0]["info"]["status"] == "FINISHED" and sent.report.all_right


def test_patience_retries_a_busy_answer_and_gives_up_in_one_line():
    from attention_ref.classroom.connection.errors import ServerTimeoutError
    from attention_ref.classroom.connection.patience import Patience, StillBusyError, patiently

    quick = Patience(tries=4, first_pause_s=0.01)
    answers = iter([(503, "busy"), (429, "busy"), (200, "done")])
    assert patiently(lambda: next(answers), quick) == (200, "done")

    def late() -> tuple[int, str]:
        raise ServerTimeoutError("timed out")

    with pytest.raises(StillBusyError, match="busy through 4 tries"):
        patiently(late, quick)
    # what the server holds already is used instead of asking again
    calls = []

    def lost() -> tuple[int, str]:
        calls.append(1)
        raise ServerTimeoutError("timed out")

    assert patiently(lost, quick, before_retry=lambda: "held") == (200, "held")
    assert calls == [1]
    # a refusal is an answer, not a busy server (the control)
    assert patiently(lambda: (403, "no"), quick) == (403, "no")


def test_the_class_root_opens_on_the_class_runs(seams, accounts):
    """MLflow 3's root is its GenAI home: the class server's root sends a teacher and a
    student on to the class experiment's runs, or to the page a link names after its "#"
    (test_ui.py opens a gradebook's link in a browser), once (the page it sends to is served)."""
    from attention_ref.classroom.gate.auth import LANDED

    exp = rest(
        seams.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=seams.admin,
        query={"experiment_name": CLASS},
    )[1]["experiment"]["experiment_id"]
    for who in (seams.admin, accounts["bob"]):
        conn = http.client.HTTPConnection(urllib.parse.urlsplit(seams.url).netloc, timeout=30)
        token = base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode()
        conn.request("GET", "/", headers={"Authorization": f"Basic {token}"})
        r = conn.getresponse()
        body = r.read().decode()
        assert r.status == 200, who[0]
        # the browser goes on to the page its link names after "#", else to the class's runs
        assert f'location.replace("/?{LANDED}" + (location.hash || ' in body
        assert f'"#/experiments/{exp}?workflowType=machine_learning"' in body
        conn.request("GET", f"/?{LANDED}", headers={"Authorization": f"Basic {token}"})
        page = conn.getresponse()
        assert page.status == 200 and b"<html" in page.read().lower()  # the UI, no second hop
        conn.close()
