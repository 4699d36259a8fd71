"""The class server's PostgreSQL cluster: made with ``initdb``, run with ``pg_ctl``.

A cluster of its own in ``root/postgres`` (`Postgres`): its data directory (``data``, with
``PG_VERSION`` once made and ``postmaster.pid`` while it runs), its log, and its Unix socket
in ``socket`` (mode 0700), its only way in: it listens on no TCP port. PostgreSQL refuses to
run as root; when the command runs as root, the cluster runs as the system user ``postgres``
(``runuser``, `cluster_user`). `attention_ref.classroom.hosting.server` starts and stops it with the
class.
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from attention_ref.classroom.connection.errors import ServerError

#: the cluster's superuser; it connects over the private Unix socket only (trust: the socket's
#: directory is 0700)
DB_USER = "attnref"
TRACKING_DB = "mlflow"
AUTH_DB = "mlflow_auth"
#: PostgreSQL refuses to run as root: as root, the cluster belongs to this system user
#: (Debian's postgresql package creates it)
POSTGRES_SYSTEM_USER = "postgres"
_SOCKET_PATH_MAX = 100  # a Unix socket path holds 107 bytes; "/.s.PGSQL.5432" is in the count


def class_exists(root: Path) -> bool:
    """Whether ``root`` holds a class already (its PostgreSQL cluster was made)."""
    return (root.expanduser().resolve() / "postgres" / "data" / "PG_VERSION").is_file()


def postgres_program(name: str) -> Path:
    """``initdb`` / ``pg_ctl`` of Debian's newest installed PostgreSQL (else on ``$PATH``)."""
    debian = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    if debian:
        return debian[-1]
    found = shutil.which(name)
    if found:
        return Path(found)
    raise ServerError(
        f"PostgreSQL's {name} is not installed: install Debian's postgresql "
        "(make postgres, or apt-get install postgresql)"
    )


def cluster_user() -> str | None:
    """The system user the cluster runs as: ``postgres`` when we are root, else ``None`` (us)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(POSTGRES_SYSTEM_USER)
    except KeyError:
        raise ServerError(
            "PostgreSQL refuses to run as root and there is no system user "
            f"{POSTGRES_SYSTEM_USER!r} to run it as: install Debian's postgresql (it creates "
            "the user), or run attnref server as an ordinary user"
        ) from None
    return POSTGRES_SYSTEM_USER


@dataclass
class Postgres:
    """A PostgreSQL cluster in ``directory`` (data, socket, log): created, started, stopped."""

    directory: Path
    #: PostgreSQL's ``max_connections`` (`attention_ref.classroom.gate.pools.max_connections`);
    #: ``None``: PostgreSQL's default (100)
    max_connections: int | None = None

    def __post_init__(self) -> None:
        self.directory = self.directory.absolute()

    @property
    def data(self) -> Path:
        """The cluster's data directory (``initdb -D``)."""
        return self.directory / "data"

    @property
    def socket_dir(self) -> Path:
        """The directory of its Unix socket (mode 0700): its only way in."""
        return self.directory / "socket"

    @property
    def log(self) -> Path:
        """The server's log (``pg_ctl -l``)."""
        return self.directory / "postgres.log"

    def uri(self, database: str) -> str:
        """SQLAlchemy's URI of ``database`` over the cluster's Unix socket (psycopg2)."""
        host = urllib.parse.quote(str(self.socket_dir), safe="/")
        return f"postgresql+psycopg2://{DB_USER}@/{database}?host={host}"

    def _command(self, program: str, *args: str) -> list[str]:
        user = cluster_user()
        cmd = [str(postgres_program(program)), *args]
        return ["runuser", "-u", user, "--", *cmd] if user else cmd

    def _run(self, program: str, *args: str) -> None:
        out = subprocess.run(
            self._command(program, *args), capture_output=True, text=True, timeout=120
        )
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines() or ["no output"]
            raise ServerError(f"PostgreSQL's {program} failed: {detail[-1]} (see {self.log})")

    def init(self) -> None:
        """Create the cluster the first time (``initdb``); later calls find it and do nothing."""
        if (self.data / "PG_VERSION").is_file():
            return
        sock = len(str(self.socket_dir / ".s.PGSQL.5432").encode())
        if sock > _SOCKET_PATH_MAX:
            raise ServerError(
                f"the directory {self.directory} is too deep for PostgreSQL's socket path "
                f"({sock} bytes, at most {_SOCKET_PATH_MAX}); choose a shorter one"
            )
        for d in (self.directory, self.socket_dir):
            d.mkdir(parents=True, exist_ok=True)
            d.chmod(0o700)
        user = cluster_user()
        if user is not None:
            entry = pwd.getpwnam(user)
            for d in (self.directory, self.socket_dir):
                os.chown(d, entry.pw_uid, entry.pw_gid)
            probe = subprocess.run(["runuser", "-u", user, "--", "test", "-w", str(self.directory)])
            if probe.returncode != 0:
                raise ServerError(
                    f"PostgreSQL runs as the system user {user} (it refuses root), which cannot "
                    f"reach {self.directory}: choose a directory whose parents it may enter "
                    "(e.g. under /srv or /var/lib)"
                )
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            DB_USER,
            "--auth-local=trust",
            "--auth-host=reject",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-instructions",
        )

    def copied_from(self) -> str | None:
        """The data directory a running postmaster's ``postmaster.pid`` names, when it is not
        this one (this folder is a copy taken while that cluster ran); else ``None``."""
        try:
            lines = (self.data / "postmaster.pid").read_text(errors="replace").splitlines()
        except OSError:
            return None
        named = lines[1].strip() if len(lines) > 1 else ""
        return named if named and Path(named) != self.data else None

    def is_running(self) -> bool:
        """``pg_ctl status``: whether the cluster's server is up, serving *this* data directory
        (a copy of the folder names the original's postmaster, which is not this cluster)."""
        if not (self.data / "PG_VERSION").is_file() or self.copied_from() is not None:
            return False
        out = subprocess.run(
            self._command("pg_ctl", "status", "-D", str(self.data)), capture_output=True
        )
        return out.returncode == 0

    def start(self) -> bool:
        """Start the cluster (no TCP, only the private Unix socket); wait until it accepts.

        Returns whether it was started here (``False``: it was running already).
        """
        if self.is_running():
            return False
        options = f"-h '' -k {shlex.quote(str(self.socket_dir))}"
        if self.max_connections is not None:
            options += f" -c max_connections={int(self.max_connections)}"
        self._run(
            "pg_ctl",
            "start",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "-o",
            options,
        )
        return True

    def stop(self) -> None:
        """Stop the cluster (``-m fast``: sessions are ended, committed data is on disk)."""
        if self.is_running():
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w")

    def ensure_database(self, name: str) -> None:
        """Create database ``name`` unless it exists."""
        import psycopg2

        conn = psycopg2.connect(host=str(self.socket_dir), user=DB_USER, dbname="postgres")
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cur.fetchone() is None:
                    cur.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()
