"""Bodies bounded before anyone reads them (issue 57, finding 3), over real HTTP through the edge.

What a student did on c0e9f9b: three ``upload-artifact`` POSTs of 300 MiB to her own class
run, at once, were refused (403) after 35-41 s, but the application server grew from 309 MB to
3,268 MB: the edge let 512 MiB through on that route (MLflow takes 10 MiB there), and the gate
read each body whole before it judged. Here each route's largest body at the edge is MLflow's
there, a body no route reads is refused at the edge, and a refused upload leaves the
application server's memory within a bound.
"""

from __future__ import annotations

import inspect
import os
import re
import secrets
import socket
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.hosting.edge_config import MIB, EdgeLimits, render
from attention_ref.classroom.hosting.server import ClassServer
from tests.classroom.conftest import EXPERIMENT
from tests.classroom.test_gate_ids import class_experiment, class_run_of, raw, upload_artifact
from tests.classroom.test_gate_seams import put

# --- the configuration, pure ------------------------------------------------------------------


def _locations(conf: str) -> dict[str, str]:
    """``location pattern -> its client_max_body_size`` (the server's own under ``""``)."""
    found = {"": re.search(r"^    client_max_body_size (\S+);", conf, re.M).group(1)}
    for pattern, block in re.findall(r"location ~ (\S+) \{\n(.*?)\n        \}", conf, re.S):
        size = re.search(r"client_max_body_size (\S+);", block)
        found[pattern] = size.group(1) if size else found[""]
    return found


def _render(limits: EdgeLimits) -> str:
    return render(
        listen="127.0.0.1:5000",
        apps=[Path("/c/app/mlflow-0.sock")],
        limits=limits,
        directory=Path("/c/edge"),
        access_log=Path("/c/logs/a.log"),
    )


def test_each_route_takes_the_largest_body_mlflow_takes_there():
    from mlflow.server.handlers import upload_artifact_handler

    limits = EdgeLimits()
    # MLflow's upload-artifact refuses more than 10 MiB (and holds the body whole)
    assert "10 * 1024 * 1024" in inspect.getsource(upload_artifact_handler)
    assert limits.max_upload_artifact_bytes == 10 * 1024 * 1024
    sizes = _locations(_render(limits))
    assert sizes == {
        "": "4m",
        r"^/(ajax-)?api/2\.0/mlflow/upload-artifact": "10m",
        r"^/(ajax-)?api/2\.0/mlflow-artifacts/artifacts/": "128m",
    }
    other = _locations(_render(EdgeLimits(max_json_bytes=3 * MIB + 1, max_artifact_bytes=MIB)))
    assert other[""] == str(3 * MIB + 1) and "1m" in other.values()
    # a stalled client holds at most this much of the edge's disk per address
    assert limits.body_bytes_per_address == 2 * 128 * MIB + 14 * 4 * MIB


def test_an_upload_route_takes_a_large_body_only_for_its_upload_as_sent():
    conf = _render(EdgeLimits())
    upload = re.search(r'map "\$request_method \$request_uri" \$upload_route \{(.*?)\}', conf, re.S)
    rules = [
        (re.compile(m.group(1)), m.group(2))
        for m in re.finditer(r'"~([^"]+)" (\S+);', upload.group(1))
    ]

    def route(request: str) -> str:
        return next((name for pattern, name in rules if pattern.search(request)), "")

    assert route("PUT /api/2.0/mlflow-artifacts/artifacts/1/abc/artifacts/model.pt") == "artifact"
    assert route("PUT /ajax-api/2.0/mlflow-artifacts/artifacts/1/a%20b.txt") == "artifact"
    assert route("POST /api/2.0/mlflow/upload-artifact?run_uuid=a&path=b") == "upload-artifact"
    for other in (
        "POST /api/2.0/mlflow-artifacts/artifacts/1/x",  # no route reads a POST's body there
        "DELETE /api/2.0/mlflow-artifacts/artifacts/1/x",
        "PUT /api/2.0/mlflow-artifacts/artifacts/1/a%0Ab",  # off MLflow's streamed route
        "PUT /api/2.0/mlflow-artifacts/artifacts/1/x?q=1",
        "PUT /api/2.0/mlflow/x/..%2F..%2Fmlflow-artifacts/artifacts/1/x",
        "POST /api/2.0/mlflow/upload-artifact/../runs/create",
        "PUT /api/3.0/mlflow-artifacts/artifacts/1/x",
    ):
        assert route(other) == "", other
    assert "limit_conn uploads_per_address 2;" in conf and "return 413;" in conf


@pytest.mark.parametrize("field", ["max_json_bytes", "max_artifact_bytes", "uploads"])
def test_a_body_limit_that_is_not_a_positive_integer_is_refused(field):
    with pytest.raises(ValueError, match="positive integer"):
        EdgeLimits(**{field: "8m"})


def test_the_largest_log_batch_mlflow_takes_fits_the_api_body_twice():
    """MLflow's limits on ``log-batch`` (its server checks the counts and lengths; its size
    check measures a dict's keys), as MLflow's client sends it (JSON, ASCII)."""
    import json

    from mlflow.protos.service_pb2 import LogBatch
    from mlflow.utils import validation as v
    from mlflow.utils.proto_json_utils import message_to_json

    batch = LogBatch(run_id="0" * 32)
    for i in range(v.MAX_ENTITIES_PER_BATCH - 2 * v.MAX_PARAMS_TAGS_PER_BATCH):
        batch.metrics.add(
            key=f"{i:04d}".ljust(v.MAX_ENTITY_KEY_LENGTH, "m"),
            value=-1.2345678901234567e-300,
            timestamp=1_800_000_000_000,
            step=2**62,
        )
    for i in range(v.MAX_PARAMS_TAGS_PER_BATCH):
        key = f"{i:04d}".ljust(v.MAX_ENTITY_KEY_LENGTH, "k")
        batch.params.add(key=key, value="p" * v.MAX_PARAM_VAL_LENGTH)
        batch.tags.add(key=key, value="t" * v.MAX_TAG_VAL_LENGTH)
    sent = json.dumps(json.loads(message_to_json(batch))).encode()  # requests' json=
    assert len(sent) > 1_000_000 and 2 * len(sent) < EdgeLimits().max_json_bytes


def test_the_largest_checkpoint_a_class_command_uploads_fits_the_artifact_route():
    """``attnref train``'s ``last.pt``: the model and AdamW's two moments, float32 (its
    config, vocabulary, history and random states: well under a MiB)."""
    import torch

    from attention_ref.lm.config import PRESETS, preset_config
    from attention_ref.lm.model import CharGPT

    largest = 0
    for name in PRESETS:
        with torch.device("meta"):
            model = CharGPT(preset_config(name).model)
        weights = sum(p.numel() for p in model.parameters())
        largest = max(largest, 3 * 4 * weights + MIB)
    assert 100 * MIB < largest <= EdgeLimits().max_artifact_bytes


# --- over real HTTP ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair(server) -> tuple[tuple[str, str], tuple[str, str]]:
    """Two students of the class: alice-bodies (whose run is written) and mallory-bodies."""
    made = tuple((f"{n}-bodies", secrets.token_urlsafe(15)) for n in ("alice", "mallory"))
    for who in made:
        add_student(server.url, server.admin, *who, EXPERIMENT)
    return made  # type: ignore[return-value]


def _announce(server: ClassServer, method: str, target: str, length: int) -> tuple[int, str]:
    """A request that announces ``length`` bytes of body and sends none: the edge's answer."""
    host = urllib.parse.urlsplit(server.url).netloc
    h, _, port = host.rpartition(":")
    with socket.create_connection((h, int(port)), timeout=30) as s:
        s.sendall(
            f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Basic eDp5\r\nContent-Length: {length}\r\n\r\n".encode()
        )
        got = b""
        while b"\r\n\r\n" not in got:
            piece = s.recv(65536)
            if not piece:
                break
            got += piece
    return int(got.split(b" ", 2)[1]), got.decode("latin-1")


def _edge_line(server: ClassServer, marker: str) -> str:
    """The edge's access-log line of the request marked ``marker`` (nginx writes it once the
    request is over: after the client closed, for a body refused unread)."""
    for _ in range(100):
        lines = [ln for ln in server.edge.access_log.read_text().splitlines() if marker in ln]
        if lines:
            break
        time.sleep(0.1)
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.slow
def test_a_body_over_its_routes_limit_is_refused_at_the_edge(server, pair):
    limits = EdgeLimits()
    run = class_run_of(server, pair[0])
    exp = class_experiment(server, pair[0])
    mark = secrets.token_hex(4)
    target = f"/ajax-api/2.0/mlflow/upload-artifact?run_uuid={run}&path=big-{mark}.bin"
    status, said = _announce(server, "POST", target, limits.max_upload_artifact_bytes + 1)
    assert status == 413 and "class server" in said, said
    assert "upstream=- " in _edge_line(server, f"big-{mark}")  # never reached the application
    proxy = f"/api/2.0/mlflow-artifacts/artifacts/{exp}/{run}/artifacts/huge-{mark}.pt"
    assert _announce(server, "PUT", proxy, limits.max_artifact_bytes + 1)[0] == 413
    assert "upstream=- " in _edge_line(server, f"huge-{mark}")
    # a JSON route takes the API's body, not an upload's
    assert _announce(server, "POST", "/api/2.0/mlflow/runs/search", 5 * MIB)[0] == 413
    # a body where no route reads one, or sent to a path the application would not stream
    for method, path in (
        ("POST", f"/api/2.0/mlflow-artifacts/artifacts/{exp}/{run}/artifacts/p-{mark}"),
        ("PUT", f"/api/2.0/mlflow-artifacts/artifacts/{exp}/{run}/artifacts/n%0A{mark}"),
    ):
        assert raw(server, method, path, pair[0], b"x" * 1024)[0] == 413, path
    assert "upstream=- " in _edge_line(server, f"p-{mark}")


@pytest.mark.slow
def test_a_students_uploads_still_reach_her_own_run(server, pair):
    run = class_run_of(server, pair[0])
    exp = class_experiment(server, pair[0])
    nine = os.urandom(9 * MIB)
    assert upload_artifact(server, pair[0], run, run, "nine.bin", nine)[0] == 200
    proxy = f"/api/2.0/mlflow-artifacts/artifacts/{exp}/{run}/artifacts/model-{run[:6]}.pt"
    status, said = put(server, proxy, os.urandom(20 * MIB), pair[0])
    assert status == 200, said


def _worker_memory(server: ClassServer) -> dict[int, tuple[int, int]]:
    """``pid -> (VmRSS, VmHWM)`` in bytes of each process of the application server (its
    process group: ``mlflow server`` and its uvicorn worker)."""
    group = server.process.pid
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[2]) != group:  # its process group
                continue
            status = Path(f"/proc/{entry}/status").read_text()
        except (OSError, IndexError, ValueError):
            continue
        kib = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M))
        found[int(entry)] = (int(kib["VmRSS"]) * 1024, int(kib["VmHWM"]) * 1024)
    return found


@pytest.mark.slow
def test_refused_uploads_leave_the_application_server_within_bounds(server, pair):
    """Five uploads of 9 MiB at once into a classmate's run (403) and five of 64 MiB into
    one's own (413): the application server's peak grows by at most 150 MiB (the bridge from
    FastAPI to Flask holds an ``upload-artifact`` body whole, about 3 copies of 9 MiB each
    while it is refused; nothing of a body the edge refused)."""
    alices_run = class_run_of(server, pair[0])
    own_run = class_run_of(server, pair[1])
    before = _worker_memory(server)
    assert before, "no process of the application server found"
    for pid in before:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # its peak (VmHWM) starts again here
    nine, big = os.urandom(9 * MIB), os.urandom(64 * MIB)

    def attack(i: int) -> int:
        if i % 2:
            return upload_artifact(server, pair[1], alices_run, alices_run, "x.bin", nine)[0]
        return upload_artifact(server, pair[1], own_run, own_run, "y.bin", big)[0]

    with ThreadPoolExecutor(10) as pool:
        statuses = list(pool.map(attack, range(10)))
    assert sorted(statuses) == [403] * 5 + [413] * 5, statuses
    after = _worker_memory(server)
    grown = max(after[pid][1] - before[pid][0] for pid in before if pid in after)
    assert grown < 150 * MIB, f"the application server's peak grew by {grown / MIB:.0f} MiB"
