"""The class server's edge: Debian's nginx in front of ``mlflow server``, started like PostgreSQL.

The class's address and port are nginx's alone. ``mlflow server`` (uvicorn) listens on a Unix
socket in the class folder (``root/app/mlflow.sock``, its folder 0710: no one but the edge
reaches it), so every request of anyone, from the network or from this machine, comes through
the edge. The edge does what a proxy is for (TLS, the class's names, timeouts, limits per
client address, the largest body, the application's capacity): its nginx configuration and
the numbers in it, `EdgeLimits`, are `attention_ref.classroom.hosting.edge_config`'s; this module
runs nginx with it.

The process: `Edge.check` (``nginx -t`` on the written configuration), `Edge.start` (nginx in
the foreground of a process group of its own, ``daemon off``; waits until ``/health`` answers
through it), `Edge.stop` (SIGQUIT: finish what is in flight; SIGKILL what is left).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from attention_ref.classroom.connection.client import healthy
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.hosting.edge_config import EdgeLimits, render
from attention_ref.classroom.hosting.private_folder import PRIVATE_UMASK, traverse_mode

#: the system user nginx's workers run as when the edge is started as root (Debian's)
WORKER_USER = "www-data"
#: the folder of the application servers' sockets, under the class folder
APP_DIR = Path("app")


def nginx_program() -> Path:
    """Debian's ``nginx`` (``/usr/sbin/nginx``, else on ``$PATH``)."""
    for candidate in (Path("/usr/sbin/nginx"), shutil.which("nginx")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise ServerError(
        "nginx is not installed: the class server's edge is Debian's nginx "
        "(make server, or apt-get install nginx)"
    )


@dataclass
class Edge:
    """nginx for one class: its files in ``directory`` (configuration, pid, logs, buffers)."""

    directory: Path
    listen_host: str
    port: int
    apps: list[Path | tuple[str, int]]
    limits: EdgeLimits
    access_log: Path
    tls: tuple[Path, Path] | None = None
    #: the names its class answers to, as nginx writes them (IPv6 in brackets); a request for
    #: another is refused (`attention_ref.classroom.hosting.server_names`); none: any name is served
    server_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.directory = self.directory.absolute()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        """The configuration nginx runs with (written at each start)."""
        return self.directory / "nginx.conf"

    @property
    def error_log(self) -> Path:
        """nginx's own log: its refusals (limits) and errors."""
        return self.directory / "error.log"

    @property
    def listen(self) -> str:
        """nginx's ``listen`` address."""
        host = self.listen_host or "0.0.0.0"
        host = f"[{host}]" if ":" in host else host
        return f"{host}:{self.port}"

    def write(self) -> None:
        """Write the configuration and make nginx's folders: the buffers' its workers' (when
        root), the two above them entered by the workers and listed by no one else
        (`traverse_mode`)."""
        user = _worker_user()
        for d in (
            self.directory,
            *(self.directory / "tmp" / n for n in ("body", "proxy", "fastcgi", "uwsgi", "scgi")),
        ):
            d.mkdir(parents=True, exist_ok=True)
            if user is not None and d != self.directory:
                entry = pwd.getpwnam(user)
                os.chown(d, entry.pw_uid, entry.pw_gid)
        for d in (self.directory, self.directory / "tmp"):
            d.chmod(traverse_mode())
        self.access_log.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            render(
                listen=self.listen,
                apps=self.apps,
                limits=self.limits,
                directory=self.directory,
                access_log=self.access_log,
                tls=self.tls,
                user=user,
                server_names=self.server_names,
            ),
            encoding="utf-8",
        )

    def _command(self, *args: str) -> list[str]:
        return [
            str(nginx_program()),
            "-p",
            str(self.directory),
            "-e",
            str(self.error_log),
            "-c",
            str(self.config),
            *args,
        ]

    def check(self) -> None:
        """``nginx -t``: the configuration (and the certificate it names) is sound, or
        `ServerError` with nginx's last word."""
        out = subprocess.run(self._command("-t"), capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            lines = [ln for ln in out.stderr.splitlines() if "[emerg]" in ln or "failed" in ln]
            first = (lines or out.stderr.splitlines() or ["no output"])[0]
            raise ServerError(f"the edge (nginx) refused its configuration: {first}")

    def start(self, url: str, cafile: Path | None, timeout: float = 60) -> int:
        """Write and check the configuration, start nginx, wait until ``url`` answers
        ``/health`` through it; its pid."""
        self.write()
        self.check()
        with self.error_log.open("ab") as out:
            self.process = subprocess.Popen(
                self._command(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                umask=PRIVATE_UMASK,  # its logs and pid file: the teacher's only
            )
        deadline = time.monotonic() + timeout
        while not healthy(url, cafile=cafile):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"the edge (nginx) did not start: {_last_line(self.error_log)}")
            time.sleep(0.2)
        return self.process.pid

    def is_running(self) -> bool:
        """Whether this edge's nginx runs."""
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 30) -> None:
        """SIGQUIT (nginx finishes what is in flight), then SIGKILL to what is left."""
        proc, self.process = self.process, None
        if proc is None:
            return
        stop_group(proc.pid, timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def stop_group(pid: int, timeout: float = 30) -> None:
    """Stop nginx's process group (its master ``pid`` and workers): SIGQUIT, then SIGKILL."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGQUIT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def is_nginx(pid: int | None, directory: Path) -> bool:
    """Whether ``pid`` is the nginx master of the edge in ``directory`` (not a pid the system
    gave to another process)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    # the master names itself "nginx: master process /usr/sbin/nginx -p DIR …" (one string)
    words = raw.replace(b"\0", b" ").split()
    return b"nginx" in raw.split(b"\0")[0] and os.fsencode(directory) in words


def app_socket_dir(root: Path) -> Path:
    """The folder of the application's socket (0710; its group the edge's workers' when root)."""
    folder = root / APP_DIR
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o710)
    user = _worker_user()
    if user is not None:
        os.chown(folder, -1, pwd.getpwnam(user).pw_gid)
        probe = subprocess.run(["runuser", "-u", user, "--", "test", "-x", str(folder)])
        if probe.returncode != 0:
            raise ServerError(
                f"the edge's workers run as the system user {user}, which cannot reach {folder}: "
                "choose a directory whose parents it may enter (e.g. under /srv or /var/lib)"
            )
    return folder


def _worker_user() -> str | None:
    """nginx's workers' user: `WORKER_USER` when we are root (nginx switches to it), else us."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(WORKER_USER)
    except KeyError:
        raise ServerError(
            f"the edge's workers run as {WORKER_USER!r} when the server starts as root, and "
            "there is no such user: install Debian's nginx (it makes it)"
        ) from None
    return WORKER_USER


def _last_line(log: Path) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "no log"
    return text.splitlines()[-1] if text else "no output"
