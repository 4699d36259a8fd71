"""The class server's lifecycle, as a teacher meets it: a mistaken command never takes the class
down, accounts are managed by commands that say what they did, and HTTPS on the network.

Against the package's running class (`tests/classroom/conftest.py`): a second ``server start``
on its folder, another folder on its port, a double ``add-student``; each is one line, exit 2
(or 0 for what is not an error), and a request after it still gets 200. ``attnref server
start --tls`` in a child process: a real TLS handshake on loopback, its fingerprint printed,
``status`` and ``stop`` by the pid file, a stale pid file.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from attention_ref.classroom.connection.client import healthy, rest
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.connection.tls import fingerprint, is_loopback, names_for
from attention_ref.classroom.hosting.cluster import Postgres
from attention_ref.classroom.hosting.server import ClassServer
from attention_ref.classroom.hosting.server_folder import LOCK_NAME, PID_NAME, server_status
from tests.classroom.conftest import ATTNREF, EXPERIMENT, class_dir, free_port, one_line_error

pytestmark = [pytest.mark.slow, pytest.mark.soak]

SEARCH, ONE = "/api/2.0/mlflow/experiments/search", {"max_results": "1"}


def words(text: str) -> str:
    """A command's words, whatever its lines: it breaks them at the terminal's width
    (``COLUMNS``, which pytest-xdist's workers set), never inside a word."""
    return " ".join(text.split())


def attnref(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run(
        [ATTNREF, *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def admin_env(password: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
    return env | {"ATTNREF_ADMIN_PASSWORD": password, **more}


def class_serves(server: ClassServer) -> None:
    """The running class answers: a read (200) and PostgreSQL up."""
    assert rest(server.url, SEARCH, auth=server.admin, query=ONE)[0] == 200
    assert server.postgres.is_running() and server.process and server.process.poll() is None


# --------------------------------------------------------------- against the running class


def test_a_second_start_on_the_folder_is_refused_and_the_class_keeps_serving(server):
    status = server_status(server.root)
    assert status.running and status.pid == os.getpid() and status.url == server.url
    out = attnref(
        "server",
        "start",
        str(server.root),
        "--port",
        str(free_port()),
        env=admin_env(server.admin_password),
    )
    line = one_line_error(out)
    assert f"already running (pid {os.getpid()}, {server.url})" in line
    assert "class server on" not in out.stdout  # no banner: it refused before anything
    class_serves(server)


def test_a_taken_port_is_refused_before_anything_starts(server):
    other = class_dir("attnref-port-")

    def start_in(folder: Path) -> str:
        """``server start FOLDER`` on the running class's port: its one line of refusal."""
        port = str(server.port)
        out = attnref(
            "server", "start", str(folder), "--port", port, env=admin_env(server.admin_password)
        )
        return one_line_error(out)

    try:
        assert f"port {server.port} is in use" in start_in(other / "class")
        assert not (other / "class" / "postgres").exists()  # nothing created
        assert not (other / "class" / PID_NAME).exists()
        assert not (other / "class" / LOCK_NAME).exists()  # a failed start leaves no lock file
        assert not (other / "class").exists()  # nor the empty folder it made (issue 42, item 10)
        (other / "kept").mkdir()  # the control: a folder that was there before stays
        assert f"port {server.port} is in use" in start_in(other / "kept")
        assert (other / "kept").is_dir() and not any((other / "kept").iterdir())
    finally:
        shutil.rmtree(other, ignore_errors=True)
    class_serves(server)


def test_add_student_twice_says_what_it_did(server):
    url, env = server.url, admin_env(server.admin_password)
    first = attnref(
        "server", "add-student", "frank", "--tracking-uri", url, "--experiment", EXPERIMENT, env=env
    )
    assert first.returncode == 0, first.stderr
    assert words(first.stdout).startswith("created account 'frank'; may now train into 'class'")
    password = words(first.stdout).split("; password ")[1].split()[0]
    again = attnref(
        "server", "add-student", "frank", "--tracking-uri", url, "--experiment", EXPERIMENT, env=env
    )
    assert again.returncode == 0 and again.stderr == ""
    assert words(again.stdout) == (  # what it did, and no password: it is unchanged
        f"account 'frank' exists (password unchanged); already may train into 'class' "
        f"(experiment {first.stdout.split('(experiment ')[1].split(')')[0]}) on {url}"
    )
    assert rest(url, SEARCH, auth=("frank", password), query=ONE)[0] == 200  # unchanged
    class_serves(server)


def test_remove_student_and_reset_password(server, tmp_path):
    url, env = server.url, admin_env(server.admin_password)
    made = attnref(
        "server", "add-student", "gina", "--tracking-uri", url, "--experiment", EXPERIMENT, env=env
    )
    old = words(made.stdout).split("; password ")[1].split()[0]
    new_file = tmp_path / "gina.txt"
    new_file.write_text("ginas-new-password\n", encoding="utf-8")
    reset = attnref(
        "server",
        "reset-password",
        "gina",
        "--tracking-uri",
        url,
        "--password-file",
        str(new_file),
        env=env,
    )
    assert reset.returncode == 0 and "ginas-new-password" not in reset.stdout
    # one worker: the change is seen at once (MLflow drops the account from its cache)
    assert rest(url, SEARCH, auth=("gina", old), query=ONE)[0] == 401
    assert rest(url, SEARCH, auth=("gina", "ginas-new-password"), query=ONE)[0] == 200
    gone = attnref("server", "remove-student", "gina", "--tracking-uri", url, env=env)
    assert gone.returncode == 0 and "removed the account 'gina'" in words(gone.stdout)
    assert rest(url, SEARCH, auth=("gina", "ginas-new-password"), query=ONE)[0] == 401
    again = attnref("server", "remove-student", "gina", "--tracking-uri", url, env=env)
    assert "no account 'gina'" in one_line_error(again)
    admin = attnref("server", "remove-student", "admin", "--tracking-uri", url, env=env)
    assert "teacher's account" in one_line_error(admin)
    class_serves(server)


def test_the_teacher_sees_who_owns_each_run(server, students):
    url = server.url
    _, exp = rest(
        url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": EXPERIMENT},
    )
    exp_id = exp["experiment"]["experiment_id"]
    made = {}
    for name in ("alice", "bob"):
        body = {"experiment_id": exp_id, "run_name": f"owned-{name}"}
        made[name] = rest(url, "/api/2.0/mlflow/runs/create", body, auth=(name, students[name]))[1][
            "run"
        ]["info"]["run_id"]
    out = attnref(
        "server",
        "runs",
        "--tracking-uri",
        url,
        "--experiment",
        EXPERIMENT,
        env=admin_env(server.admin_password),
    )
    assert out.returncode == 0, out.stderr
    cells = [line.replace("│", " ").split() for line in out.stdout.splitlines()]
    rows = {c[0]: c for c in cells if len(c) > 2 and c[1].startswith("owned-")}
    assert rows[made["alice"]][1:3] == ["owned-alice", "alice"]
    assert rows[made["bob"]][1:3] == ["owned-bob", "bob"]


def test_bad_input_of_the_server_commands_is_one_line(tmp_path):
    env = admin_env("a-long-enough-password")
    cases = [
        (["server", "start", str(tmp_path / "c"), "--host", "0.0.0.0"], "--insecure"),
        (
            ["server", "start", str(tmp_path / "c"), "--tls-cert", str(tmp_path / "x.pem")],
            "both --tls-cert and --tls-key",
        ),
        (
            [
                "server",
                "start",
                str(tmp_path / "c"),
                "--tls-cert",
                str(tmp_path / "x.pem"),
                "--tls-key",
                str(tmp_path / "y.pem"),
            ],
            "no such file",
        ),
        (["server", "stop", str(tmp_path / "nothing")], None),
        (["server", "add-student", "x", "--tracking-uri", "ftp://nowhere"], "must be the class"),
        (
            ["server", "add-student", "x", "--tracking-uri", f"http://127.0.0.1:{free_port()}"],
            "no class server answers",
        ),
    ]
    for args, expected in cases:
        out = attnref(*args, env=env, timeout=120)
        if expected is None:  # not an error: nothing to stop
            assert out.returncode == 0 and "nothing to stop" in out.stdout
            continue
        assert expected in one_line_error(out), args
    assert not (tmp_path / "c").exists()  # refused before anything was created


def test_a_network_host_needs_tls_or_insecure_in_so_many_words(tmp_path):
    with pytest.raises(ServerError, match="--insecure"):
        ClassServer(tmp_path / "c", "x" * 12, host="0.0.0.0")
    with pytest.raises(ServerError, match="--insecure"):
        ClassServer(tmp_path / "c", "x" * 12, host="192.168.1.20")
    assert ClassServer(tmp_path / "c", "x" * 12, host="0.0.0.0", tls=True).scheme == "https"
    assert ClassServer(tmp_path / "c", "x" * 12, host="0.0.0.0", insecure=True).scheme == "http"
    assert ClassServer(tmp_path / "c", "x" * 12, host="127.0.0.1").scheme == "http"
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1")
    assert names_for("10.1.2.3")[1][-1] == "10.1.2.3" and "localhost" in names_for("x")[0]
    assert not (tmp_path / "c").exists()


def test_a_stale_pid_file_is_reported_and_removed(tmp_path):
    root = tmp_path / "class"
    root.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (root / PID_NAME).write_text(json.dumps({"pid": dead.pid, "url": "http://127.0.0.1:1"}))
    out = attnref("server", "status", str(root), timeout=60)
    assert out.returncode == 1
    assert words(out.stdout) == f"no class server running in {root} (pid {dead.pid} is gone)"
    out = attnref("server", "stop", str(root), timeout=60)
    assert out.returncode == 0
    assert f"removed a stale pid file in {root} (pid {dead.pid} is gone)" in words(out.stdout)
    assert not (root / PID_NAME).exists()


def test_a_class_still_starting_says_so_and_is_not_yet_serving(tmp_path):
    """Item 10 of issue 42: while a class starts (its lock taken, its pid file not written)
    status said "pid None, None" and exit 0. Now it says it is starting, exit 1; once its pid
    file names an address that does not answer yet: "not answering yet", exit 1, no None."""
    root = tmp_path / "class"
    root.mkdir()
    fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what `attnref server start` holds
        out = attnref("server", "status", str(root), timeout=60)
        assert out.returncode == 1, out.stdout
        assert words(out.stdout) == (
            f"the class server in {root} is starting: its address is not written yet "
            f"(attnref server status {root} again in a moment)"
        )
        url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        (root / PID_NAME).write_text(json.dumps({"pid": os.getpid(), "url": url}))
        out = attnref("server", "status", str(root), timeout=60)
        assert out.returncode == 1 and "None" not in out.stdout, out.stdout
        assert words(out.stdout) == (
            f"class server in {root} is running: pid {os.getpid()}, {url}, not answering yet "
            "(starting?)"
        )
    finally:
        os.close(fd)
    # the control: the lock let go, the same folder is no class at all
    out = attnref("server", "status", str(root), timeout=60)
    assert out.returncode == 1 and "no class server running" in words(out.stdout)


# ---------------------------------------------------- attnref server start --tls, as a command


def test_attnref_server_start_tls_status_stop(tmp_path):
    """The command a teacher runs, with HTTPS on loopback: the banner's fingerprint is the
    certificate's, a real TLS handshake verifies with that file only, MLflow's client uses
    it through MLFLOW_TRACKING_SERVER_CERT_PATH; ``status`` and ``stop`` find it by its pid
    file, and ``stop`` stops the MLflow server and PostgreSQL."""
    root = class_dir("attnref-cli-")
    folder = root / "class"
    port, password = free_port(), secrets.token_urlsafe(18)
    url = f"https://127.0.0.1:{port}"
    env = admin_env(password)
    log = (tmp_path / "server.out").open("w")
    proc = subprocess.Popen(
        [ATTNREF, "server", "start", str(folder), "--port", str(port), "--workers", "1", "--tls"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    cert = folder / "tls" / "cert.pem"
    try:
        deadline = time.monotonic() + 300
        while not healthy(url, cafile=cert) and proc.poll() is None:
            assert time.monotonic() < deadline, (tmp_path / "server.out").read_text()
            time.sleep(1)
        deadline = time.monotonic() + 60
        while "Ctrl-C" not in (tmp_path / "server.out").read_text():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.5)
        printed = (tmp_path / "server.out").read_text()
        assert f"SHA-256 fingerprint {fingerprint(cert)}" in printed
        assert f"{url}/#/experiments/" in printed and "?workflowType=machine_learning" in printed

        # a real handshake on loopback, verified with the printed certificate
        context = ssl.create_default_context(cafile=str(cert))
        with (
            socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            der = tls.getpeercert(binary_form=True)
            assert tls.version() in ("TLSv1.2", "TLSv1.3")
        assert ssl.DER_cert_to_PEM_cert(der).strip() == cert.read_text().strip()
        # the controls: without the certificate, or in plain HTTP, nothing gets through
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(url + "/health", timeout=30)
        assert not healthy(f"http://127.0.0.1:{port}")

        # a student's MLflow client with MLFLOW_TRACKING_SERVER_CERT_PATH, and without it
        added = attnref(
            "server",
            "add-student",
            "hana",
            "--tracking-uri",
            url,
            env=env | {"MLFLOW_TRACKING_SERVER_CERT_PATH": str(cert)},
        )
        assert added.returncode == 0, added.stderr
        hana = words(added.stdout).split("; password ")[1].split()[0]
        code = "from mlflow import MlflowClient; print(MlflowClient().search_experiments()[0].name)"
        student = env | {
            "MLFLOW_TRACKING_URI": url,
            "MLFLOW_TRACKING_USERNAME": "hana",
            "MLFLOW_TRACKING_PASSWORD": hana,
            "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
        }
        python = str(Path(ATTNREF).with_name("python"))
        seen = subprocess.run(
            [python, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            env=student | {"MLFLOW_TRACKING_SERVER_CERT_PATH": str(cert)},
        )
        assert seen.returncode == 0 and seen.stdout.strip() == "shakespeare", seen.stderr
        blind = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=120, env=student
        )
        assert blind.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in blind.stderr
        # attnref's own commands verify the same way (and say so in one line when they cannot)
        listed = attnref(
            "runs",
            "--tracking-uri",
            url,
            env=student | {"MLFLOW_TRACKING_SERVER_CERT_PATH": str(cert)},
        )
        assert listed.returncode == 0, listed.stderr
        refused = attnref("runs", "--tracking-uri", url, env=student)
        assert "CERTIFICATE_VERIFY_FAILED" in one_line_error(refused)

        status = attnref("server", "status", str(folder), timeout=60)
        assert status.returncode == 0
        assert words(status.stdout).startswith(
            f"class server in {folder} is running: pid {proc.pid}, {url}"
        )
        again = attnref("server", "start", str(folder), "--port", str(free_port()), env=env)
        assert f"already running (pid {proc.pid}, {url})" in one_line_error(again)
        assert healthy(url, cafile=cert)  # still serving
        # the folder by a symlink, or by a path with "..", is the folder (issue 39, 9: on
        # 4104091 both were "a copy", and stop refused)
        link = root / "link"
        link.symlink_to(folder)
        for other in (link, folder / ".." / "class"):
            seen = attnref("server", "status", str(other), timeout=60)
            assert seen.returncode == 0 and "is running: pid" in words(seen.stdout), seen.stdout
            assert "copy" not in seen.stdout

        stopped = attnref("server", "stop", str(link), timeout=180)
        assert stopped.returncode == 0, stopped.stderr
        said = words(stopped.stdout)
        assert said.startswith(f"stopped the class server in {folder} (pid {proc.pid}")
        assert proc.wait(timeout=60) == 0
        after = attnref("server", "status", str(folder), timeout=60)
        assert after.returncode == 1 and words(after.stdout) == (
            f"no class server running in {folder}"
        )
    finally:
        if proc.poll() is None:  # a failed check: let the command stop what it started
            proc.terminate()
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        printed = (tmp_path / "server.out").read_text()
        cluster = Postgres(folder / "postgres")
        running = cluster.is_running()
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert printed.rstrip().endswith("stopped")
    assert password not in printed
    assert not healthy(url, cafile=cert) and not running


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "no admin password: set ATTNREF_ADMIN_PASSWORD"),
        ({"ATTNREF_ADMIN_PASSWORD": "short"}, "too short"),
    ],
)
def test_the_server_refuses_to_start_without_a_password(tmp_path, env, expected):
    base = {k: v for k, v in os.environ.items() if k != "ATTNREF_ADMIN_PASSWORD"}
    out = attnref(
        "server",
        "start",
        str(tmp_path / "class"),
        "--port",
        str(free_port()),
        env=base | env,
        timeout=120,
    )
    assert expected in one_line_error(out)
    assert not (tmp_path / "class").exists()  # nothing started, nothing created


def test_a_restart_with_another_password_says_the_class_was_made_with_another(tmp_path):
    """The class keeps the admin password of its first start: another one, or one too short
    to be it, is refused in words that say so (not "too short", not a bare HTTP 401)."""
    root = class_dir("attnref-repass-")
    try:
        first = ClassServer(root / "class", "first-password-1234", port=free_port(), workers=1)
        with first:
            assert "answering" in server_status(first.root).describe()
        again = ClassServer(root / "class", "other-password-5678", port=free_port(), workers=1)
        with pytest.raises(ServerError, match="was made with another admin password"):
            again.start()
        assert again.process is None and not again.postgres.is_running()
        base = {k: v for k, v in os.environ.items() if k != "ATTNREF_ADMIN_PASSWORD"}
        out = attnref(
            "server",
            "start",
            str(root / "class"),
            "--port",
            str(free_port()),
            env=base | {"ATTNREF_ADMIN_PASSWORD": "short"},
            timeout=120,
        )
        line = one_line_error(out)
        assert "is not the class's admin password" in line and "too short" not in line
        # the control: the first password starts it again
        with ClassServer(
            root / "class", "first-password-1234", port=free_port(), workers=1
        ) as back:
            assert healthy(back.url)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_start_detach_returns_once_the_class_answers_and_stop_stops_it():
    """``server start --detach`` (issue 42, item 10): the command returns, the class keeps
    serving in a session of its own (its output in DIR/start.log, with the welcome printed),
    the password never on a command line; ``status`` finds it and ``stop`` stops it."""
    root = class_dir("attnref-detach-")
    folder = root / "class"
    port, password = free_port(), secrets.token_urlsafe(18)
    try:
        started = attnref(
            "server",
            "start",
            str(folder),
            "--port",
            str(port),
            "--workers",
            "1",
            "--detach",
            env=admin_env(password),
        )
        assert started.returncode == 0, started.stdout + started.stderr
        assert f"class server on http://127.0.0.1:{port}" in started.stdout
        assert "running in the background (pid " in started.stdout
        assert f"attnref server stop {folder} stops it" in started.stdout
        assert healthy(f"http://127.0.0.1:{port}")  # the command is gone, the class serves
        pid = int(re.search(r"in the background \(pid (\d+)\)", started.stdout).group(1))
        assert password not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        assert "class server on" in (folder / "start.log").read_text()
        assert attnref("server", "status", str(folder)).returncode == 0
    finally:
        stopped = attnref("server", "stop", str(folder))
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert attnref("server", "status", str(folder)).returncode == 1
    assert not healthy(f"http://127.0.0.1:{port}")
    shutil.rmtree(root, ignore_errors=True)
