"""``attnref server``: the class server (PostgreSQL-backed MLflow with accounts) and its students.

``attnref server start DIR`` runs in the foreground: it starts PostgreSQL and ``mlflow server``
(`attention_ref.experiments.server`), prints how students connect, and stops both on Ctrl-C
or SIGTERM. ``attnref server add-student NAME`` creates a student's account on it.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from cli.errors import CLIError

if TYPE_CHECKING:
    from attention_ref.experiments.server import ClassServer

server_app = typer.Typer(
    name="server",
    help="The class server: one MLflow server (PostgreSQL, accounts) for a whole course.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

AdminPasswordFile = Annotated[
    Path | None,
    typer.Option(
        "--admin-password-file",
        help="A file whose first line is the admin password (default: $ATTNREF_ADMIN_PASSWORD; "
        "there is no default password).",
        show_default=False,
    ),
]
ClassExperiment = Annotated[
    str, typer.Option("--experiment", help="The class experiment students train into.")
]


@server_app.command("start")
def start(
    directory: Annotated[
        Path,
        typer.Argument(help="Where the class lives: PostgreSQL's cluster, artifacts, logs."),
    ],
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port of the MLflow server.")] = 5000,
    workers: Annotated[int, typer.Option("--workers", help="MLflow server workers.")] = 2,
    experiment: ClassExperiment = "shakespeare",
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Start PostgreSQL and the MLflow server with accounts; Ctrl-C stops both."""
    from attention_ref.experiments.server import ClassServer, ServerError, read_password

    if not 0 < port < 65536:
        raise CLIError(f"--port must be in 1..65535, got {port}")
    if workers < 1:
        raise CLIError(f"--workers must be a positive integer, got {workers}")
    try:
        password = read_password(admin_password_file)  # before anything starts
    except ServerError as e:
        raise CLIError(str(e)) from None
    server = ClassServer(
        directory, password, host=host, port=port, workers=workers, experiment=experiment
    )
    stop = _StopOnSignal()
    with stop:
        try:
            print(f"starting PostgreSQL and mlflow server in {server.root} ...", flush=True)
            server.start()
            _print_welcome(server)
            while not stop.requested:
                assert server.process is not None
                if server.process.poll() is not None:
                    raise CLIError(f"the mlflow server stopped; its log: {server.log}")
                time.sleep(0.5)
            print("stopping the mlflow server and PostgreSQL ...", flush=True)
        except ServerError as e:
            raise CLIError(str(e)) from None
        finally:
            server.stop()
    print("stopped", flush=True)


def _print_welcome(server: ClassServer) -> None:
    url, pid = server.url, server.process.pid if server.process else None
    print(
        f"class server on {url}, experiment {server.experiment!r} (mlflow server pid {pid})\n"
        f"  runs: PostgreSQL in {server.postgres.directory} (Unix socket only); artifacts in "
        f"{server.artifacts}; logs in {server.log.parent}\n"
        f"  add a student:  attnref server add-student NAME --tracking-uri {url}\n"
        f"  students run:   MLFLOW_TRACKING_URI={url} MLFLOW_TRACKING_USERNAME=NAME "
        f"MLFLOW_TRACKING_PASSWORD=... attnref train --experiment {server.experiment}\n"
        f"  browse:         {url} (log in as admin)\n"
        "Ctrl-C stops the MLflow server and PostgreSQL.",
        flush=True,
    )


class _StopOnSignal:
    """SIGINT/SIGTERM set ``requested`` (the foreground loop then stops both servers)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def __enter__(self) -> _StopOnSignal:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


@server_app.command("add-student")
def add_student(
    name: Annotated[str, typer.Argument(help="The student's account name.")],
    tracking_uri: Annotated[
        str | None,
        typer.Option(
            "--tracking-uri",
            help="The class server (default: $MLFLOW_TRACKING_URI).",
            show_default=False,
        ),
    ] = None,
    experiment: ClassExperiment = "shakespeare",
    password_file: Annotated[
        Path | None,
        typer.Option(
            "--password-file",
            help="The student's password (first line); default: a new random one, printed once.",
            show_default=False,
        ),
    ] = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Create a student's account: reads every run, trains into the class experiment."""
    from attention_ref.experiments.server import (
        ADMIN_USERNAME,
        ServerError,
        healthy,
        read_password,
    )
    from attention_ref.experiments.server import add_student as add

    url = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not url or not url.startswith(("http://", "https://")):
        raise CLIError("--tracking-uri (or $MLFLOW_TRACKING_URI) must be the class server's URL")
    try:
        admin = read_password(admin_password_file)
        if password_file is not None:
            password = read_password(password_file)
            shown = ""
        else:
            password = secrets.token_urlsafe(12)
            shown = f", password {password} (shown once: hand it to the student)"
        if not healthy(url, timeout=5):
            raise CLIError(f"no class server answers at {url}; start it: attnref server start DIR")
        exp_id = add(url, (ADMIN_USERNAME, admin), name, password, experiment)
    except ServerError as e:
        raise CLIError(str(e)) from None
    print(f"account {name!r} may train into {experiment!r} (id {exp_id}) on {url}{shown}")
    sys.stdout.flush()
