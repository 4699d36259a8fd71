"""A class under its public name (``attnref server start --server-name class.example.edu``).

Issue 57's finding 1 on c0e9f9b: with ``Host: class.example.edu`` (or ``203.0.113.5``) MLflow
answered 403 "Invalid Host header - possible DNS rebinding attack detected" to every route:
the class never told MLflow its names, and nginx passed any Host on. Here a class runs under
``class.example.edu`` with its self-signed certificate, reached on loopback with that name in
the TLS handshake (SNI) and in ``Host``, as a student's machine whose DNS names the class
reaches it; any other name is refused by the edge (421), before MLflow sees it.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import secrets
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from attention_ref.classroom.connection.accounts import add_student
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.connection.tls import (
    certificate_names,
    covers,
    fingerprint,
    primary_address,
    self_signed,
)
from attention_ref.classroom.hosting.edge_config import EdgeLimits, render
from attention_ref.classroom.hosting.server import ClassServer
from attention_ref.classroom.hosting.server_names import (
    allowed_hosts,
    checked,
    default_names,
    edge_names,
    resolve,
)
from tests.classroom.conftest import ATTNREF, class_dir, free_port, one_line_error

NAME = "class.example.edu"
STUDENT = "amelia"
SEARCH = "/api/2.0/mlflow/experiments/search?max_results=1"


# --- the names, pure ---------------------------------------------------------------------------


def test_a_name_is_a_host_name_or_an_address_in_one_form():
    assert checked("Class.Example.EDU.") == NAME
    assert checked("[2001:DB8::1]") == "2001:db8::1" and checked("203.0.113.5") == "203.0.113.5"
    for bad in ("", "bad name", "-x.edu", "a..b", "x_y.edu", "1.2.3", "*.example.edu"):
        with pytest.raises(ValueError, match="is not a host name"):
            checked(bad)


def test_the_edge_and_mlflow_answer_to_the_names_and_loopback_only():
    names = edge_names([NAME], "0.0.0.0")
    assert names == [NAME, "127.0.0.1", "localhost", "::1"]
    hosts = allowed_hosts([NAME], "0.0.0.0", 5443)
    assert hosts == [f"{NAME}:5443", "127.0.0.1:5443", "localhost:5443", "[::1]:5443"]
    # a loopback --host other than 127.0.0.1 is the machine's own too
    assert "127.0.0.2" in edge_names(["127.0.0.2"], "127.0.0.2")


def test_without_server_name_the_names_are_what_worked_before():
    assert default_names("10.1.2.3") == ["10.1.2.3"]
    assert default_names("127.0.0.1") == ["127.0.0.1"]
    wildcard = default_names("0.0.0.0")
    assert wildcard[0] == (primary_address() or socket.gethostname())
    server = ClassServer(Path("/nonexistent/c"), "x" * 12, host="0.0.0.0", tls=True, port=5443)
    assert server.public_url == f"https://{wildcard[0]}:5443"  # as before --server-name
    loopback = ClassServer(Path("/nonexistent/c"), "x" * 12, port=5443)
    assert loopback.public_url == loopback.url == "http://127.0.0.1:5443"
    named = ClassServer(Path("/nonexistent/c"), "x" * 12, server_names=("Class.Example.Edu",))
    assert named.server_names == (NAME,) and named.public_url.startswith(f"http://{NAME}:")


def test_the_rendered_edge_names_the_class_and_refuses_every_other_name(tmp_path):
    common = {
        "listen": "0.0.0.0:5443",
        "apps": [tmp_path / "app" / "mlflow-0.sock"],
        "limits": EdgeLimits(),
        "directory": tmp_path,
        "access_log": tmp_path / "access.log",
        "tls": (tmp_path / "cert.pem", tmp_path / "key.pem"),
    }
    text = render(**common, server_names=(NAME, "127.0.0.1", "localhost", "[::1]"))
    default, _, named = text.partition("    server {\n        listen 0.0.0.0:5443 ssl;")
    assert f"server_name {NAME} 127.0.0.1 localhost [::1];" in named
    # the default server: the same certificate (a client by address sends no SNI), then 421
    refusal = default[default.index("    server {\n        listen 0.0.0.0:5443 default_server") :]
    assert f"ssl_certificate {tmp_path / 'cert.pem'};" in refusal
    assert "proxy_pass" not in refusal and "return 421 '" in refusal
    body = json.loads(refusal.split("return 421 '", 1)[1].split("\\n';", 1)[0])
    assert body["error_code"] == "BAD_REQUEST" and NAME in body["message"]
    # MLflow is told the name nginx matched, in lower case, with the class's port
    assert "proxy_set_header Host $host:$server_port;" in named
    # without names (the edge alone, as before): no default server, any name served
    plain = render(**common)
    assert "default_server" not in plain and "server_name" not in plain


# --- the certificate's names -------------------------------------------------------------------


def test_the_self_signed_certificate_carries_the_names_and_changes_only_with_them(tmp_path):
    cert, _ = self_signed(tmp_path, "127.0.0.1", [NAME])
    carried = certificate_names(cert)
    assert NAME in carried and "127.0.0.1" in carried and "localhost" in carried
    first = fingerprint(cert)
    self_signed(tmp_path, "127.0.0.1", [NAME])
    assert fingerprint(cert) == first  # the file students were given stays valid
    self_signed(tmp_path, "127.0.0.1", [NAME, "lab.example.edu"])
    assert fingerprint(cert) != first and "lab.example.edu" in certificate_names(cert)
    # openssl, which the teacher would ask, reads the same names
    text = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", str(cert)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"DNS:{NAME}" in text and "DNS:lab.example.edu" in text


def test_a_teachers_certificate_must_cover_each_name(tmp_path):
    cert, key = self_signed(tmp_path / "theirs", "other.example.org")
    with pytest.raises(ServerError, match=f"does not cover --server-name {NAME}"):
        ClassServer(tmp_path / "c", "x" * 12, tls_cert=cert, tls_key=key, server_names=(NAME,))
    assert covers(["*.example.edu"], NAME) and not covers(["*.example.edu"], "example.edu")
    assert not covers(["*.example.edu"], "a.class.example.edu")
    # without --server-name, the certificate's names are the class's too (after the host's)
    assert "other.example.org" in resolve((), "10.1.2.3", cert)
    assert not (tmp_path / "c").exists()


def test_the_command_refuses_a_name_in_one_line(tmp_path):
    cert, key = self_signed(tmp_path / "theirs", "other.example.org")
    start = [ATTNREF, "server", "start", str(tmp_path / "c")]
    env = os.environ | {"ATTNREF_ADMIN_PASSWORD": "x" * 16, "LANG": "C.UTF-8"}
    for extra, expected in (
        (["--server-name", "bad name"], "is not a host name"),
        (
            ["--server-name", NAME, "--tls-cert", str(cert), "--tls-key", str(key)],
            f"does not cover --server-name {NAME}",
        ),
    ):
        out = subprocess.run([*start, *extra], capture_output=True, text=True, env=env)
        assert expected in one_line_error(out), extra
    assert not (tmp_path / "c").exists()


# --- a class under its name, over real HTTPS ---------------------------------------------------


@pytest.fixture(scope="module")
def named() -> Iterator[tuple[ClassServer, str]]:
    """A class under ``class.example.edu`` (self-signed, HTTPS) and a student's password."""
    root = class_dir("attnref-named-")
    server = ClassServer(
        root / "class",
        secrets.token_urlsafe(18),
        port=free_port(),
        workers=1,
        experiment="named",
        tls=True,
        server_names=(NAME,),
    )
    with server:
        password = secrets.token_urlsafe(15)
        add_student(server.url, server.admin, STUDENT, password, "named", server.cert)
        yield server, password
    shutil.rmtree(root, ignore_errors=True)


def ask(
    server: ClassServer,
    host: str | None,
    sni: str | None,
    method: str = "GET",
    target: str = SEARCH,
    who: tuple[str, str] | None = None,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> tuple[int, str]:
    """One HTTPS request to the class on 127.0.0.1, with ``sni`` in the handshake (verified
    against the class's certificate when given; none, as a client by address sends) and
    ``host`` as its Host header (none: no Host at all, which HTTP/1.1 forbids): its status
    and its body."""
    assert server.cert is not None
    context = ssl.create_default_context(cafile=str(server.cert))
    context.check_hostname = sni is not None
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.sock = context.wrap_socket(raw, server_hostname=sni)
    sent = dict(headers or {})
    if who is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(":".join(who).encode()).decode()
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for key, value in (({"Host": host} if host is not None else {}) | sent).items():
            conn.putheader(key, value)
        if body:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def test_a_student_reaches_the_class_by_its_name(named):
    server, password = named
    student = (STUDENT, password)
    assert server.public_url == f"https://{NAME}:{server.port}"
    port = server.port
    # the name in the handshake (verified: the certificate is the name's) and in Host
    for host in (f"{NAME}:{port}", NAME, f"Class.Example.EDU:{port}"):
        status, said = ask(server, host, NAME, who=student)
        assert status == 200, (host, status, said)
        assert "Invalid Host header" not in said and '"experiments"' in said
    # the UI under the name: a state-changing API call from its own origin is taken
    exp = json.loads(ask(server, NAME, NAME, who=student)[1])["experiments"][0]["experiment_id"]
    status, said = ask(
        server,
        f"{NAME}:{port}",
        NAME,
        "POST",
        "/ajax-api/2.0/mlflow/runs/search",
        student,
        {"Origin": f"https://{NAME}:{port}", "Content-Type": "application/json"},
        json.dumps({"experiment_ids": [exp], "max_results": 1}).encode(),
    )
    assert status == 200, said
    # the machine's own forms keep working: the teacher's commands, the edge's health check
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert ask(server, host, None, who=student)[0] == 200, host


def test_any_other_name_is_refused_at_the_edge(named):
    server, password = named
    student = (STUDENT, password)
    before = server.log.read_text(encoding="utf-8", errors="replace")
    for host, sni in (
        ("203.0.113.5", None),  # the NAT's public address, by address: no SNI
        (f"203.0.113.5:{server.port}", None),
        ("evil.example", NAME),  # the right handshake, another Host
        ("evil.example", "evil.example"),  # another name throughout (no name check here)
        (None, "evil.example"),  # no Host at all (HTTP/1.0)
    ):
        if sni == "evil.example":
            status, said = ask_unverified(server, host)
        else:
            status, said = ask(server, host, sni, who=student)
        assert status == 421, (host, sni, status, said)
        refusal = json.loads(said)
        assert refusal["error_code"] == "BAD_REQUEST" and NAME in refusal["message"]
    # none of them reached MLflow (it would have logged its own refusal of the Host)
    after = server.log.read_text(encoding="utf-8", errors="replace")
    assert "Invalid Host header" not in after[len(before) :]


def ask_unverified(server: ClassServer, host: str | None) -> tuple[int, str]:
    """A request whose handshake names ``evil.example`` (the edge completes it with the
    class's certificate, which that name does not match: nothing checked on this side), with
    ``host`` as its Host (none: an HTTP/1.0 request without one)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    with context.wrap_socket(raw, server_hostname="evil.example") as tls:
        head = (
            f"GET {SEARCH} HTTP/1.1\r\nHost: {host}\r\n" if host else f"GET {SEARCH} HTTP/1.0\r\n"
        )
        tls.sendall(f"{head}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode("utf-8", "replace")
