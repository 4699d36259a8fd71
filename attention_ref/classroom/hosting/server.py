"""The class server: one MLflow tracking server that a whole course trains into at once.

The embedded sqlite store is right for one person. For a class the teacher runs what MLflow's
own users run at that scale, on one machine and in one directory (``root``):

* PostgreSQL (Debian's ``postgresql``): a cluster of its own in ``root/postgres``, created
  with ``initdb`` the first time, started and stopped with ``pg_ctl``. It listens on no TCP
  port, only on a Unix socket in ``root/postgres/socket`` (mode 0700): no port to pick, and no
  one but its owner (and root) can connect. PostgreSQL refuses to run as root; when the
  command runs as root, the cluster runs as the system user ``postgres`` (``runuser``).
* ``mlflow server`` on a Unix socket in ``root/app`` (no TCP port), its runs in the database
  ``mlflow``, its accounts and permissions in ``mlflow_auth``, artifacts proxied to
  ``root/artifacts`` on local disk (``--artifacts-destination``), with MLflow's basic-auth
  app (``--app-name basic-auth``) and the class's gate (`attention_ref.classroom.gate.auth`: the
  access table of `attention_ref.classroom.gate.access`, deny by default).
* The edge, Debian's nginx (`attention_ref.classroom.hosting.edge`), alone on ``host:port``
  (127.0.0.1 unless asked): TLS, timeouts, limits per client address, the largest body, the
  application's capacity. On any host but loopback it serves HTTPS
  (`attention_ref.classroom.connection.tls`) unless told ``insecure``. It answers to the class's
  names only (``--server-name``, `attention_ref.classroom.hosting.server_names`), as MLflow and the
  certificate do.
* The folder is its owner's alone (`attention_ref.classroom.hosting.private_folder`): made under a
  umask that leaves nothing to other users, and mended at start where it does.
* Accounts: ``admin`` (the teacher), whose password is read from ``$ATTNREF_ADMIN_PASSWORD``
  or a file: there is no default, and it is never printed, logged, written to disk by us or
  put on a command line (the server gets it in its environment). Other admin accounts are
  teachers. An account reads nothing by default (``default_permission = NO_PERMISSIONS``); a
  student gets EDIT on the class experiment: reads all of it, creates runs in it, changes
  their own runs only.
* One server per directory: ``root/server.lock`` is held (``flock``) while it runs and
  ``root/server.json`` says by whom (pid), where (URL) and which ``mlflow server``. A second
  start on the directory, or on a port already taken, is refused before anything is touched;
  a failed start stops only what it started itself.

Students point ``--tracking-uri`` / ``MLFLOW_TRACKING_URI`` at the server and give their
account in ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD`` (MLflow's variables),
and, for HTTPS, the server's certificate in ``MLFLOW_TRACKING_SERVER_CERT_PATH``.

This module composes the class server (`ClassServer`) of its parts, each in a module of its
own: the PostgreSQL cluster (`attention_ref.classroom.hosting.cluster`), the ``mlflow server``
process (`attention_ref.classroom.hosting.tracking_server`), the edge
(`attention_ref.classroom.hosting.edge`), the REST calls
(`attention_ref.classroom.connection.client`), the accounts
(`attention_ref.classroom.connection.accounts`) and the folder's lock, pid file, status and stop
(`attention_ref.classroom.hosting.server_folder`). Each name is imported from the module that
defines it (this module re-exports nothing).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from attention_ref.classroom.connection.accounts import ADMIN_USERNAME
from attention_ref.classroom.connection.client import class_experiment_id
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.connection.tls import check_pair, is_loopback, is_wildcard, self_signed
from attention_ref.classroom.coursework.class_time import checked_zone, server_zone
from attention_ref.classroom.gate import pools
from attention_ref.classroom.gate.quotas import ENV as QUOTAS_ENV
from attention_ref.classroom.gate.quotas import Quotas
from attention_ref.classroom.hosting import tracking_server
from attention_ref.classroom.hosting.cluster import AUTH_DB, TRACKING_DB, Postgres, class_exists
from attention_ref.classroom.hosting.edge import APP_DIR, Edge, app_socket_dir, is_nginx
from attention_ref.classroom.hosting.edge_config import EdgeLimits
from attention_ref.classroom.hosting.private_folder import (
    make_private,
    private_umask,
    traverse_mode,
)
from attention_ref.classroom.hosting.server_folder import (
    LOCK_NAME,
    PID_NAME,
    alive,
    folder_id,
    is_mlflow,
    port_in_use,
    read_pid_file,
)
from attention_ref.classroom.hosting.server_names import (
    allowed_hosts,
    edge_names,
    host_form,
    origins,
    resolve,
)
from attention_ref.experiments.names import ui_experiment_url

DEFAULT_EXPERIMENT = "shakespeare"
DEFAULT_PORT = 5000
DEFAULT_WORKERS = 2


@dataclass
class ClassServer:
    """PostgreSQL + ``mlflow server`` with basic auth and the class's gate + the edge (nginx),
    all under ``root``.

    `start` takes the folder's lock, checks the port, brings both up and creates the class
    experiment; `stop` takes down what it started (also as a context manager).
    `start_mlflow` / `stop_mlflow` and ``postgres`` act on one part (the tests restart each
    under a running class). ``workers``: the application servers (each one ``mlflow server``
    of one worker), behind the edge, which sends each account's requests to one of them.
    TLS: ``tls_cert``/``tls_key`` (the teacher's), or ``tls=True`` for a self-signed
    certificate made in ``root/tls``; a host other than loopback requires one of them unless
    ``insecure``. ``limits``: what the edge allows (`EdgeLimits`). ``server_names``: the
    names it answers to (``--server-name``; `attention_ref.classroom.hosting.server_names`: given,
    or derived from ``host`` and a teacher's certificate), the first in `public_url`; the edge
    refuses any other. ``mended``: after `start`, the line that says what of an existing
    folder was made private (`attention_ref.classroom.hosting.private_folder`), else ``None``.
    """

    root: Path
    admin_password: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    workers: int = DEFAULT_WORKERS
    experiment: str = DEFAULT_EXPERIMENT
    tls: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure: bool = False
    limits: EdgeLimits = field(default_factory=EdgeLimits)
    #: the application servers listen on loopback ports (as other hosts would on theirs)
    #: instead of Unix sockets of the folder: one port each
    app_ports: tuple[int, ...] = ()
    server_names: tuple[str, ...] = ()
    #: what one student may store (`attention_ref.classroom.gate.quotas`)
    quotas: Quotas = field(default_factory=Quotas)
    #: the class's time zone (`attention_ref.classroom.coursework.class_time`): the server's
    #: own unless given; due and received times are shown in it
    timezone: str = field(default_factory=server_zone)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.root = self.root.expanduser().resolve()  # the folder itself, not a symlink to it
        self.postgres = Postgres(self.root / "postgres", pools.max_connections(self.workers))
        self._lock_fd: int | None = None
        self._own_postgres = False
        self._wrote_pid_file = False
        self.mended: str | None = None
        try:
            self.timezone = checked_zone(self.timezone)
        except ValueError as e:
            raise ServerError(str(e)) from None
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ServerError("give both --tls-cert and --tls-key, or neither")
        if self.tls_cert is not None:
            self.tls = True
            self.tls_cert, self.tls_key = self.tls_cert.absolute(), self.tls_key.absolute()  # type: ignore[union-attr]
            check_pair(self.tls_cert, self.tls_key)
        if not self.tls and not is_loopback(self.host) and not self.insecure:
            raise ServerError(
                f"--host {self.host} puts the class on the network, where basic auth over plain "
                "HTTP shows every password: serve HTTPS (--tls for a self-signed certificate, "
                "or --tls-cert/--tls-key), or say --insecure"
            )
        try:
            self.server_names = resolve(self.server_names, self.host, self.tls_cert)
        except ValueError as e:
            raise ServerError(str(e)) from None
        key = self.tls_key or self.root / "tls" / "key.pem"
        if self.app_ports and len(self.app_ports) != self.workers:
            raise ServerError(
                f"{self.workers} application servers need as many ports, not {len(self.app_ports)}"
            )
        self.edge = Edge(
            self.root / "edge",
            self.host,
            self.port,
            list(self.apps),
            self.limits,
            self.root / "logs" / "edge-access.log",
            (self.cert, key) if self.cert is not None else None,
            tuple(host_form(n) for n in edge_names(self.server_names, self.host)),
        )

    @property
    def scheme(self) -> str:
        """``https`` with TLS, else ``http``."""
        return "https" if self.tls else "http"

    @property
    def url(self) -> str:
        """Where this machine reaches it (loopback for a wildcard host)."""
        host = "127.0.0.1" if is_wildcard(self.host) else self.host
        host = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def public_url(self) -> str:
        """Where students reach it: its first name (``--server-name``; without one the host,
        or the machine's network address for a wildcard host)."""
        if not self.server_names:
            return self.url
        return f"{self.scheme}://{host_form(self.server_names[0])}:{self.port}"

    @property
    def cert(self) -> Path | None:
        """The certificate students verify the server with (``None``: plain HTTP)."""
        if not self.tls:
            return None
        return self.tls_cert or self.root / "tls" / "cert.pem"

    @property
    def admin(self) -> tuple[str, str]:
        """The teacher's credentials."""
        return ADMIN_USERNAME, self.admin_password

    @property
    def log(self) -> Path:
        """The MLflow server's log."""
        return self.root / "logs" / "mlflow-server.log"

    @property
    def apps(self) -> list[tracking_server.Address]:
        """Where each application server listens: ``workers`` Unix sockets of the folder (only
        the edge reaches them), or ``app_ports`` on loopback."""
        if self.app_ports:
            return [("127.0.0.1", p) for p in self.app_ports]
        return [self.root / APP_DIR / f"mlflow-{i}.sock" for i in range(self.workers)]

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The first application server's process (``None`` when none runs)."""
        return self.processes[0] if self.processes else None

    def stopped_app(self) -> subprocess.Popen[bytes] | None:
        """An application server that exited by itself, if any."""
        return next((p for p in self.processes if p.poll() is not None), None)

    @property
    def artifacts(self) -> Path:
        """Where the artifacts of every run are kept (``--artifacts-destination``)."""
        return self.root / "artifacts"

    def runs_page(self, experiment_id: str) -> str:
        """The UI's page of the class experiment's runs."""
        return ui_experiment_url(self.public_url, experiment_id)

    # --- the folder's lock and pid file

    def _take_lock(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            info = read_pid_file(self.root)
            raise ServerError(
                f"the class server in {self.root} is already running (pid {info.get('pid', '?')}, "
                f"{info.get('url', 'starting')}); stop it first: attnref server stop {self.root}"
            ) from None
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            if self._wrote_pid_file:  # a stale one of another is left for `stop_server`
                (self.root / PID_NAME).unlink(missing_ok=True)
                self._wrote_pid_file = False
            # held: the file is this server's to remove (a start that failed leaves none)
            (self.root / LOCK_NAME).unlink(missing_ok=True)
            os.close(self._lock_fd)  # drops the lock
            self._lock_fd = None

    def _write_pid_file(self) -> None:
        info = {
            "pid": os.getpid(),
            "url": self.url,
            "public_url": self.public_url,
            "mlflow_pid": self.process.pid if self.process else None,
            "mlflow_pids": [p.pid for p in self.processes],
            "edge_pid": self.edge.process.pid if self.edge.process else None,
            "cert": str(self.cert) if self.cert else None,
            "experiment": self.experiment,
            "quotas": asdict(self.quotas),
            "timezone": self.timezone,
            "started": dt.datetime.now().isoformat(timespec="seconds"),
            "root": str(self.root),
            "root_id": folder_id(self.root),
        }
        tmp = self.root / (PID_NAME + ".tmp")
        tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.root / PID_NAME)
        self._wrote_pid_file = True

    # --- start and stop

    def start(self, timeout: float = 300) -> None:
        """Refuse if the folder's server runs or the port is taken (before touching anything
        else); then PostgreSQL, the MLflow server, the edge, the class experiment. A failure
        stops only what this call started, and a folder it made and left empty is removed.
        Everything is made under `private_umask`; what of an existing folder other users could
        read is made private first (`mended` says what)."""
        with private_umask():
            self._start(timeout)

    def _start(self, timeout: float) -> None:
        existed = class_exists(self.root)
        made = not self.root.exists()
        self._take_lock()
        try:
            self._check_leftovers()
            if port_in_use("0.0.0.0" if is_wildcard(self.host) else self.host, self.port):
                raise ServerError(
                    f"port {self.port} is in use on {self.host}: another server listens there "
                    "(choose another with --port)"
                )
            edge = self.edge.directory
            self.mended = make_private(self.root, (self.root, edge, edge / "tmp"))
            self.root.chmod(traverse_mode())  # PostgreSQL's and nginx's users enter it as root
            self._write_pid_file()
            if self.tls and self.tls_cert is None:
                self_signed(self.root / "tls", self.host, self.server_names)
            self.postgres.init()
            self._own_postgres = self.postgres.start() or self._own_postgres
            for db in (TRACKING_DB, AUTH_DB):
                self.postgres.ensure_database(db)
            self.start_mlflow(timeout)
            self.edge.start(self.url, self.cert, timeout=min(timeout, 60))
            self._write_pid_file()
            try:
                class_experiment_id(
                    self.url, self.admin, self.experiment, self.cert, zone=self.timezone
                )
            except ServerError as e:
                if existed and "HTTP 401" in str(e):
                    raise ServerError(
                        f"the class in {self.root} was made with another admin password (its "
                        "accounts' database keeps the one of its first start): start it with "
                        "that one"
                    ) from None
                raise
        except BaseException:
            self.stop()
            if made:  # a refused start leaves no empty class folder behind
                with contextlib.suppress(OSError):  # not empty: PostgreSQL's files, its logs
                    self.root.rmdir()
            raise

    def _check_leftovers(self) -> None:
        """A pid file of a server that died without stopping: its mlflow server may still run."""
        info = read_pid_file(self.root)
        for left in info.get("mlflow_pids") or [info.get("mlflow_pid")]:
            if alive(left) and is_mlflow(left, self.root):
                raise ServerError(
                    f"the mlflow server (pid {left}) of a class server that did not stop is "
                    f"still running; stop it first: attnref server stop {self.root}"
                )
        edge = info.get("edge_pid")
        if info and alive(edge) and is_nginx(edge, self.edge.directory):
            raise ServerError(
                f"the edge (nginx, pid {edge}) of a class server that did not stop is still "
                f"running; stop it first: attnref server stop {self.root}"
            )

    def start_mlflow(self, timeout: float = 300) -> int:
        """Start the application servers, each ``mlflow server`` in a process group of its own;
        the first alone (it makes or upgrades the databases' tables), then the others; wait for
        ``/health`` on each; the first's pid."""
        with private_umask():
            return self._start_mlflow(timeout)

    def _start_mlflow(self, timeout: float) -> int:
        self.artifacts.mkdir(parents=True, exist_ok=True)
        app_socket_dir(self.root)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        env = tracking_server.environment(
            tracking_server.write_auth_config(
                self.root / "basic_auth.ini", self.postgres.uri(AUTH_DB), ADMIN_USERNAME
            ),
            self.admin_password,
            tracking_server.secret_key(self.root / "secret_key"),
            self.experiment,
            self.limits.students_per_address,
            allowed_hosts(self.server_names, self.host, self.port, self.app_ports),
            origins(self.server_names, self.scheme, self.port),
        ) | {QUOTAS_ENV: self.quotas.to_env()}
        deadline = time.monotonic() + timeout
        apps = self.apps
        for batch in (apps[:1], apps[1:]):
            started = []
            for address in batch:
                if isinstance(address, Path):
                    address.unlink(missing_ok=True)  # left by a server that was killed
                cmd = tracking_server.command(
                    self.postgres.uri(TRACKING_DB), self.artifacts, address
                )
                started.append((tracking_server.launch(cmd, env, self.log), address))
            self.processes += [p for p, _ in started]
            if self._lock_fd is not None:  # their pids known at once: a kill now leaves none
                self._write_pid_file()
            for proc, address in started:
                if not tracking_server.wait_until_healthy(proc, address, deadline):
                    self.stop_mlflow()
                    last = tracking_server.last_log_line(self.log)
                    raise ServerError(f"mlflow server did not start: {last} (see {self.log})")
        return self.processes[0].pid

    def stop_mlflow(self) -> None:
        """Stop the application servers: SIGTERM to each process group, SIGKILL what is left."""
        procs, self.processes = self.processes, []
        for proc in procs:
            tracking_server.stop_process_group(proc)

    def stop(self) -> None:
        """What this server started: the edge, the MLflow server, then PostgreSQL; then the
        lock (each step runs whatever the one before it raised)."""
        try:
            self.edge.stop()
        finally:
            try:
                self.stop_mlflow()
            finally:
                try:
                    if self._own_postgres:
                        self.postgres.stop()
                        self._own_postgres = False
                finally:
                    self._release_lock()

    def __enter__(self) -> ClassServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
