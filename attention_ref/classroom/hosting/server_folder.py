"""One class server per folder: the folder's lock and pid file, its status, its stop.

``root/server.lock`` is held (``flock``) while a class server runs there and
``root/server.json`` says by whom (pid), where (URL) and which ``mlflow server``
(`attention_ref.classroom.hosting.server.ClassServer` takes the one and writes the other). From
them: `server_status` (``attnref server status``), `stop_server` (``attnref server stop``: SIGTERM
to the owner, or what a dead owner left running), `port_in_use` (a start on a taken port is
refused before anything is touched), and a folder copied while its class ran told apart from
the class itself (`folder_id`, `copied_from`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_ref.classroom.connection.client import healthy
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.hosting.cluster import Postgres
from attention_ref.classroom.hosting.edge import is_nginx, stop_group

LOCK_NAME, PID_NAME = "server.lock", "server.json"


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port`` (a trial bind, closed at once)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise ServerError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return False


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_mlflow(pid: int | None, root: Path | None = None) -> bool:
    """Whether ``pid`` is still an ``mlflow server`` (not a pid the system gave to another),
    and, given ``root``, the one serving that class folder's artifacts."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if not (any(part.endswith(b"mlflow") for part in cmdline[:2]) and b"server" in cmdline):
        return False
    return root is None or os.fsencode(root / "artifacts") in cmdline


def folder_id(root: Path) -> list[int]:
    """What a copy of the folder does not carry: its device and inode numbers."""
    st = root.stat()
    return [st.st_dev, st.st_ino]


def copied_from(root: Path, info: dict[str, Any]) -> str | None:
    """The folder a pid file was written for, when it is not ``root`` (``root`` is a copy of a
    class folder, taken while its server ran); ``None`` for ``root``'s own or an old pid file."""
    written = info.get("root")
    if written is None:
        return None
    try:
        same = Path(str(written)).resolve() == root.resolve() and info.get("root_id") in (
            None,
            folder_id(root),
        )
    except OSError:
        same = False
    return None if same else str(written)


@dataclass(frozen=True)
class Status:
    """What ``attnref server status DIR`` reports."""

    root: Path
    running: bool
    pid: int | None = None  # the process that owns the class server (``attnref server start``)
    url: str | None = None
    mlflow_pid: int | None = None
    healthy: bool = False
    stale: bool = False  # a pid file left by a server that is gone
    copy_of: str | None = None  # the folder whose pid file this is (``root`` is a copy of it)

    @property
    def serving(self) -> bool:
        """Running and answering ``/health``: what a script waiting for the class asks."""
        return self.running and self.healthy

    def describe(self) -> str:
        """One line."""
        if self.copy_of:
            return (
                f"no class server runs in {self.root}: it is a copy of {self.copy_of}, taken "
                f"while that class ran (attnref server status {self.copy_of})"
            )
        if self.running and not self.url:  # the lock taken, the pid file not written yet
            return (
                f"the class server in {self.root} is starting: its address is not written yet "
                f"(attnref server status {self.root} again in a moment)"
            )
        if self.running:
            state = "answering" if self.healthy else "not answering yet (starting?)"
            mlflow = f"; its mlflow server is pid {self.mlflow_pid}" if self.mlflow_pid else ""
            return (
                f"class server in {self.root} is running: pid {self.pid}, {self.url}, "
                f"{state}{mlflow}"
            )
        if self.stale:
            return f"no class server running in {self.root} (pid {self.pid} is gone)"
        return f"no class server running in {self.root}"


def read_pid_file(root: Path) -> dict[str, Any]:
    try:
        found = json.loads((root / PID_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _lock_is_held(root: Path) -> bool:
    """Whether a process holds the folder's lock (a class server runs there)."""
    path = root / LOCK_NAME
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def server_status(root: Path) -> Status:
    """Whether the class server of ``root`` runs (its lock is held), and where."""
    root = root.expanduser().resolve()  # a symlink or a ".." names the folder it leads to
    info = read_pid_file(root)
    if copy_of := copied_from(root, info):
        return Status(root, False, copy_of=copy_of)
    pid, url, mlflow_pid = info.get("pid"), info.get("url"), info.get("mlflow_pid")
    if _lock_is_held(root):
        cafile = Path(info["cert"]) if info.get("cert") else None
        up = bool(url) and healthy(str(url), cafile=cafile)
        return Status(root, True, pid, url, mlflow_pid, up)
    return Status(root, False, pid, url, mlflow_pid, stale=bool(info))


def stop_server(root: Path, timeout: float = 120) -> str:
    """Stop the class server of ``root`` by its pid file; one line saying what happened.

    A running server gets SIGTERM (it stops ``mlflow server`` and PostgreSQL itself); a stale
    pid file (its process gone) is removed, with the ``mlflow server`` and PostgreSQL that
    process left behind, if any.
    """
    status = server_status(root)
    if status.copy_of:
        raise ServerError(
            f"{status.root} is a copy of the class folder {status.copy_of}, taken while that "
            f"class ran: nothing here to stop (to stop that class: attnref server stop "
            f"{status.copy_of})"
        )
    if status.running:
        if not status.pid or not alive(status.pid):
            raise ServerError(f"the class server in {status.root} has no pid to stop")
        os.kill(status.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _lock_is_held(status.root):
            if time.monotonic() > deadline:
                raise ServerError(
                    f"the class server (pid {status.pid}) did not stop within {timeout:.0f} s"
                )
            time.sleep(0.2)
        return f"stopped the class server in {status.root} (pid {status.pid}, {status.url})"
    if not status.stale:
        return f"no class server running in {status.root}; nothing to stop"
    left = []
    edge = read_pid_file(status.root).get("edge_pid")
    if alive(edge) and is_nginx(edge, status.root / "edge"):
        stop_group(int(edge))
        left.append(f"its edge (nginx, pid {edge})")
    for pid in read_pid_file(status.root).get("mlflow_pids") or [status.mlflow_pid]:
        if alive(pid) and is_mlflow(pid, status.root):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid), signal.SIGTERM)
            left.append(f"its mlflow server (pid {pid})")
    cluster = Postgres(status.root / "postgres")
    if cluster.is_running():
        cluster.stop()
        left.append("its PostgreSQL")
    (status.root / PID_NAME).unlink(missing_ok=True)
    stopped = f"; stopped what it left running: {' and '.join(left)}" if left else ""
    return f"removed a stale pid file in {status.root} (pid {status.pid} is gone){stopped}"
