"""The class server's ``mlflow server`` process: its configuration, command, start and stop.

`attention_ref.classroom.hosting.server.ClassServer` starts it (``start_mlflow``) and stops it
(``stop_mlflow``) with these: basic auth's configuration file (`write_auth_config`: no
permission by default, the accounts in PostgreSQL, the class's gate as its
``authorization_function``), the process's environment (`environment`: the admin password is
there, never on its command line), its command line (`command`: the workers, the socket), its
start in a process group of its own (`launch`), the wait
for ``/health`` on its socket (`wait_until_healthy`) and the stop of the whole group
(`stop_process_group`).

It listens on a Unix socket in the class folder, never on a TCP port: the edge
(`attention_ref.classroom.hosting.edge`, nginx) alone listens on the class's address, holds the TLS
and the limits, and passes requests on through that socket.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.gate import pools
from attention_ref.classroom.hosting.private_folder import PRIVATE_UMASK

#: a password's hash is checked once a minute per account and worker, not on every request
#: (scrypt costs ~0.1 s of CPU: a class logs many requests a second); a changed password or a
#: removed account is refused by every worker within this time
AUTH_CACHE_TTL_S = 60
_AUTHORIZATION_FUNCTION = "attention_ref.classroom.gate.auth:authenticate"
#: the longest path of a Unix socket (``sun_path`` holds 108 bytes with its NUL)
SOCKET_PATH_MAX = 107
#: the variable that names the class experiment to the gate inside ``mlflow server``
CLASS_EXPERIMENT_ENV = "ATTNREF_CLASS_EXPERIMENT"


def secret_key(path: Path) -> str:
    """The Flask secret key of basic auth's CSRF protection: made once, kept in ``path`` (0600)."""
    if not path.is_file():
        path.touch(mode=0o600)
        path.write_text(secrets.token_hex(32), encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()


def write_auth_config(path: Path, database_uri: str, admin_username: str) -> Path:
    """Basic auth's configuration file, written at ``path``: no permission by default, the
    accounts in ``database_uri``, ``admin_username`` the admin, the class's gate as the
    ``authorization_function``, a password checked once per `AUTH_CACHE_TTL_S`."""
    path.write_text(
        "[mlflow]\n"
        "default_permission = NO_PERMISSIONS\n"
        f"database_uri = {database_uri}\n"
        f"admin_username = {admin_username}\n"
        f"authorization_function = {_AUTHORIZATION_FUNCTION}\n"
        f"auth_cache_ttl_seconds = {AUTH_CACHE_TTL_S}\n",
        encoding="utf-8",
    )
    return path


#: the variable that tells the gate how many students may share one client address (a NAT)
STUDENTS_PER_ADDRESS_ENV = "ATTNREF_STUDENTS_PER_ADDRESS"


def environment(
    auth_config: Path,
    admin_password: str,
    flask_secret_key: str,
    experiment: str,
    students_per_address: int = 1,
    allowed_hosts: Sequence[str] = (),
    origins: Sequence[str] = (),
) -> dict[str, str]:
    """``mlflow server``'s environment: ours without a client's ``MLFLOW_TRACKING_*``
    variables, with basic auth's configuration and admin password, the Flask secret key, the
    class experiment's name, the students per client address (for the gate), and the class's
    names (`attention_ref.classroom.hosting.server_names`): the ``Host`` values MLflow answers
    (``allowed_hosts``; MLflow's default, loopback and private addresses, refuses a public
    name with 403 "Invalid Host header") and the browser origins whose API calls it takes
    (``origins``; by default only loopback's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
    env |= {
        "MLFLOW_AUTH_CONFIG_PATH": str(auth_config),
        "MLFLOW_AUTH_ADMIN_PASSWORD": admin_password,  # the environment, never argv
        "MLFLOW_FLASK_SERVER_SECRET_KEY": flask_secret_key,
        # MLflow's job runner (GenAI scorers, online scoring): nothing a class uses
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
        # the class experiment: the UI's root opens on its runs (the gate's `landing`)
        CLASS_EXPERIMENT_ENV: experiment,
        # a route no validator of MLflow's covers is refused (behind the class's own table)
        "MLFLOW_BASIC_AUTH_FAIL_CLOSED": "true",
        STUDENTS_PER_ADDRESS_ENV: str(students_per_address),
    }
    if allowed_hosts:
        env["MLFLOW_SERVER_ALLOWED_HOSTS"] = ",".join(allowed_hosts)
    if origins:
        env["MLFLOW_SERVER_CORS_ALLOWED_ORIGINS"] = ",".join(origins)
    # the stores' pools: two connections per request that can run at once (`pools`)
    env |= pools.store_environment()
    return env


#: where one application server listens: a Unix socket, or (as another host would) host, port
Address = Path | tuple[str, int]


def command(backend_store_uri: str, artifacts: Path, address: Address) -> list[str]:
    """One application server's command line (``mlflow server``, one uvicorn worker): runs in
    ``backend_store_uri``, artifacts proxied to ``artifacts``, basic auth, listening on
    ``address``: a Unix socket (uvicorn's ``--uds``: the host and port ``mlflow server`` asks
    for are not listened on), or a host and port.

    uvicorn takes the client's address from ``X-Forwarded-For``, which the edge sets (any value
    a client sent replaced): only the edge reaches the application."""
    mlflow = str(Path(sys.executable).with_name("mlflow"))
    opts = "--forwarded-allow-ips '*'"
    host, port = "127.0.0.1", 0
    if isinstance(address, Path):
        if len(os.fsencode(address)) > SOCKET_PATH_MAX:
            raise ServerError(
                f"the class folder is too deep for the application's socket {address} "
                f"(at most {SOCKET_PATH_MAX} bytes); choose a shorter one"
            )
        opts = f"--uds {shlex.quote(str(address))} " + opts
    else:
        host, port = address
    return [
        mlflow,
        "server",
        "--backend-store-uri",
        backend_store_uri,
        "--artifacts-destination",
        str(artifacts),
        "--host",
        host,
        "--port",
        str(port),
        "--workers",
        "1",
        "--app-name",
        "basic-auth",
        "--uvicorn-opts",
        opts,
    ]


def launch(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in a process group of its own, its output appended to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            umask=PRIVATE_UMASK,  # its artifacts (students' answers) are the teacher's only
        )


def healthy_on(address: Address, timeout: float = 5) -> bool:
    """Whether an application server answers ``/health`` at ``address``."""

    class _Unix(http.client.HTTPConnection):
        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(str(address))

    if isinstance(address, Path):
        conn: http.client.HTTPConnection = _Unix("localhost", timeout=timeout)
    else:
        conn = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def wait_until_healthy(process: subprocess.Popen[bytes], address: Address, deadline: float) -> bool:
    """Wait (every half second) until the application server answers ``/health``: ``True``;
    ``False`` when ``process`` exited or ``deadline`` (``time.monotonic``) passed first."""
    while not healthy_on(address):
        if process.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def last_log_line(log: Path) -> str:
    """The log's last line (``no output`` for an empty log): why a start failed."""
    text = log.read_text(encoding="utf-8", errors="replace").strip()
    return text.splitlines()[-1] if text else "no output"


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server and its workers: SIGTERM to its process group, SIGKILL what is left."""
    with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # workers that outlived their parent
    proc.wait()
