"""``attnref server``: the class server (PostgreSQL-backed MLflow with accounts) and its people.

``attnref server start DIR`` runs in the foreground: it starts PostgreSQL and ``mlflow server``
(`attention_ref.classroom.hosting.server`), prints how students connect, and stops both on Ctrl-C or
SIGTERM; ``status DIR`` and ``stop DIR`` find it by its pid file. ``add-student``,
``add-teacher``, ``remove-student`` and ``reset-password`` manage the accounts; ``runs``
(`attention_ref.cli.server_runs`) lists the class's runs with their owners.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.server_start import (
    Quotas,
    ServerNames,
    StopOnSignal,
    print_welcome,
    quotas_of,
    run_detached,
)

if TYPE_CHECKING:
    from attention_ref.classroom.connection.class_client import ClassClient

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
ClassDir = Annotated[
    Path, typer.Argument(help="Where the class lives: PostgreSQL's cluster, artifacts, logs.")
]
TrackingUri = Annotated[
    str | None,
    typer.Option(
        "--tracking-uri",
        help="The class server (default: $MLFLOW_TRACKING_URI); for HTTPS, its certificate "
        "as attnref server start says (an MLflow variable).",
        show_default=False,
    ),
]
Name = Annotated[str, typer.Argument(help="The account's name.")]
PasswordFile = Annotated[
    Path | None,
    typer.Option(
        "--password-file",
        help="The account's password (first line); default: a new random one, printed once.",
        show_default=False,
    ),
]


def server_url(tracking_uri: str | None) -> str:
    url = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not url or not url.startswith(("http://", "https://")):
        raise CLIError("--tracking-uri (or $MLFLOW_TRACKING_URI) must be the class server's URL")
    return url


def admin_credentials(admin_password_file: Path | None, url: str) -> tuple[str, str]:
    """The admin's credentials, once the server is known to answer at ``url``."""
    from attention_ref.classroom.connection.accounts import ADMIN_USERNAME, read_password
    from attention_ref.classroom.connection.client import healthy

    password = read_password(admin_password_file, existing=True)
    if not healthy(url, timeout=5):
        raise CLIError(f"no class server answers at {url}; start it: attnref server start DIR")
    return ADMIN_USERNAME, password


def teacher_client(
    tracking_uri: str | None, admin_password_file: Path | None, *, reader: bool = False
) -> ClassClient:
    """The teacher's client of the class server: the admin's account, or with ``reader`` the
    account in $MLFLOW_TRACKING_USERNAME / $MLFLOW_TRACKING_PASSWORD when both are set."""
    from attention_ref.classroom.connection.class_client import ClassClient

    url = server_url(tracking_uri)
    user, password = (
        os.environ.get("MLFLOW_TRACKING_USERNAME"),
        os.environ.get("MLFLOW_TRACKING_PASSWORD"),
    )
    if reader and user and password:
        return ClassClient(url, (user, password))
    return ClassClient(url, admin_credentials(admin_password_file, url))


def _say(text: str) -> None:
    """``text`` broken at spaces to the terminal's width (`attention_ref.cli.tables.say`): an
    address, a folder or a password, one word each, is never cut."""
    from attention_ref.cli.tables import console, say

    say(console(), text)


def _new_password(password_file: Path | None) -> tuple[str, str]:
    """``(password, what to print)``: from the file (not printed), or made and shown once."""
    from attention_ref.classroom.connection.accounts import generated_password, read_password

    if password_file is not None:
        return read_password(password_file), ""
    password = generated_password()
    return password, f"; password {password} (shown once: hand it over)"


@server_app.command("start")
def start(
    directory: ClassDir,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on (0.0.0.0: every interface; any but loopback needs TLS "
            "or --insecure).",
        ),
    ] = "127.0.0.1",
    server_name: ServerNames = None,
    port: Annotated[
        int, typer.Option("--port", help="Port the class listens on (its edge, nginx).")
    ] = 5000,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            help="Application servers (mlflow server, one worker each) behind the edge; each "
            "account's requests go to one of them.",
        ),
    ] = 2,
    experiment: ClassExperiment = "shakespeare",
    admin_password_file: AdminPasswordFile = None,
    tls: Annotated[
        bool,
        typer.Option(
            "--tls",
            help="Serve HTTPS with a self-signed certificate made in DIR/tls (its fingerprint "
            "is printed). \\[default: off]",
        ),
    ] = False,
    tls_cert: Annotated[
        Path | None,
        typer.Option(
            "--tls-cert", help="Serve HTTPS with this certificate (PEM).", show_default=False
        ),
    ] = None,
    tls_key: Annotated[
        Path | None,
        typer.Option("--tls-key", help="The certificate's private key (PEM).", show_default=False),
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Serve plain HTTP on a network address: every password crosses the network "
            "readable. \\[default: refused]",
        ),
    ] = False,
    students_per_address: Annotated[
        int,
        typer.Option(
            "--students-per-address",
            help="Students who reach the server from one address (a classroom behind a NAT): "
            "the edge's limits per address, and failed logins allowed, are multiplied by it.",
        ),
    ] = 1,
    quota: Quotas = None,
    timezone: Annotated[
        str | None,
        typer.Option(
            "--timezone",
            help="The class's time zone (America/Sao_Paulo): due and received times are shown "
            "in it, with their offset from UTC, and a --due without a zone is read in it; the "
            "server keeps them in UTC. Default: this machine's.",
            show_default=False,
        ),
    ] = None,
    detach: Annotated[
        bool,
        typer.Option(
            "--detach",
            help="Run in the background: return once the server answers, its output in "
            "DIR/start.log; attnref server stop DIR stops it.",
        ),
    ] = False,
) -> None:
    """Start PostgreSQL, the MLflow server with accounts, and its edge (nginx); Ctrl-C stops
    them (with --detach, attnref server stop DIR)."""
    from attention_ref.classroom.connection.accounts import read_password
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.class_time import checked_zone, server_zone
    from attention_ref.classroom.hosting.cluster import class_exists
    from attention_ref.classroom.hosting.edge_config import EdgeLimits
    from attention_ref.classroom.hosting.server import ClassServer

    if not 0 < port < 65536:
        raise CLIError(f"--port must be in 1..65535, got {port}")
    if workers < 1:
        raise CLIError(f"--workers must be a positive integer, got {workers}")
    if students_per_address < 1:
        raise CLIError(
            f"--students-per-address must be a positive integer, got {students_per_address}"
        )
    try:
        # before anything starts
        quotas = quotas_of(quota or [])
        zone = checked_zone(timezone) if timezone else server_zone()
        password = read_password(admin_password_file, existing=class_exists(directory))
        server = ClassServer(
            directory,
            password,
            host=host,
            port=port,
            workers=workers,
            experiment=experiment,
            tls=tls,
            tls_cert=tls_cert,
            tls_key=tls_key,
            insecure=insecure,
            limits=EdgeLimits(students_per_address=students_per_address),
            server_names=tuple(server_name or ()),
            quotas=quotas,
            timezone=zone,
        )
    except (ServerError, ValueError) as e:
        raise CLIError(str(e)) from None
    if detach:  # the same start, in a session of its own; its password in its environment
        options = [
            *("--host", host, "--port", str(port), "--workers", str(workers)),
            *("--experiment", experiment),
            *("--students-per-address", str(students_per_address), "--timezone", zone),
            *(["--tls"] if tls else []),
            *(["--tls-cert", str(tls_cert)] if tls_cert else []),
            *(["--tls-key", str(tls_key)] if tls_key else []),
            *(["--insecure"] if insecure else []),
            *(f"--server-name={n}" for n in server_name or ()),
            *(f"--quota={q}" for q in quota or ()),
        ]
        run_detached(directory, password, options)
        return
    stop = StopOnSignal()
    with stop:
        try:
            server.start()
        except ServerError as e:
            raise CLIError(str(e)) from None
        try:
            print_welcome(server)
            while not stop.requested:
                if server.stopped_app() is not None:
                    raise CLIError(f"the mlflow server stopped; its log: {server.log}")
                time.sleep(0.5)
            print("stopping the edge, the mlflow server and PostgreSQL ...", flush=True)
        finally:
            server.stop()
    print("stopped", flush=True)


@server_app.command("status")
def status(directory: ClassDir) -> None:
    """Whether the class server of DIR runs: its pid and URL. Exit 0 when it answers, 1 when
    it does not run or does not answer yet (starting)."""
    from attention_ref.classroom.hosting.server_folder import server_status

    found = server_status(directory)
    _say(found.describe())
    if not found.serving:
        raise typer.Exit(1)
    _print_use(found.root)


def _print_use(root: Path) -> None:
    """Each student's use of the running class beside their quotas (`student_use`)."""
    from attention_ref.classroom.gate.quotas import Quotas as QuotaNumbers
    from attention_ref.classroom.hosting.server_folder import read_pid_file
    from attention_ref.classroom.hosting.student_use import HEADINGS, students_use
    from attention_ref.cli.tables import Column, console, print_table

    try:
        quotas = QuotaNumbers(**read_pid_file(root).get("quotas", {}))
        rows = [u.cells() for u in students_use(root, quotas)]
    except Exception as e:  # another user's class, a database that does not answer: one line
        _say(f"cannot read what each student stores: {str(e).splitlines()[0]}")
        return
    columns = [Column(HEADINGS[0], keep=True), *(Column(h, justify="right") for h in HEADINGS[1:])]
    print_table(console(), f"what each student stores ({len(rows)} students)", columns, rows)


@server_app.command("stop")
def stop(directory: ClassDir) -> None:
    """Stop the class server of DIR by its pid file (a stale one is cleaned up)."""
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.hosting.server_folder import stop_server

    try:
        _say(stop_server(directory))
    except ServerError as e:
        raise CLIError(str(e)) from None


@server_app.command("add-student")
def add_student(
    name: Name,
    tracking_uri: TrackingUri = None,
    experiment: ClassExperiment = "shakespeare",
    password_file: PasswordFile = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Create a student's account: reads the class, trains into its experiment, and has their
    own variant of every assignment made so far.

    Run again, it completes an existing account (its password unchanged) and says what it did.
    """
    from attention_ref.classroom.connection.accounts import add_student as add
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.exchange.assign import enrol_everywhere

    url = server_url(tracking_uri)
    try:
        client = teacher_client(url, admin_password_file)
        password, shown = _new_password(password_file)
        change = add(url, client.auth, name, password, experiment)
        given = enrol_everywhere(client, name)
    except (ServerError, AssignmentError) as e:
        raise CLIError(str(e)) from None
    _say(change.describe(experiment, url) + (shown if change.created else ""))
    if given:
        _say(f"{name} now has their exercises of: {', '.join(given)}")
    sys.stdout.flush()


@server_app.command("add-teacher")
def add_teacher(
    name: Name,
    tracking_uri: TrackingUri = None,
    password_file: PasswordFile = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Create a teacher's account (an MLflow admin: everything the admin may do)."""
    from attention_ref.classroom.connection.accounts import add_teacher as add
    from attention_ref.classroom.connection.errors import ServerError

    url = server_url(tracking_uri)
    try:
        admin = admin_credentials(admin_password_file, url)
        password, shown = _new_password(password_file)
        change = add(url, admin, name, password)
    except ServerError as e:
        raise CLIError(str(e)) from None
    _say(change.describe(None, url) + (shown if change.created else ""))


@server_app.command("remove-student")
def remove_student(
    name: Name, tracking_uri: TrackingUri = None, admin_password_file: AdminPasswordFile = None
) -> None:
    """Delete a student's account; their runs stay, under their name."""
    from attention_ref.classroom.connection.accounts import remove_student as remove
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.hosting.tracking_server import AUTH_CACHE_TTL_S

    url = server_url(tracking_uri)
    try:
        remove(url, admin_credentials(admin_password_file, url), name)
    except ServerError as e:
        raise CLIError(str(e)) from None
    _say(
        f"removed the account {name!r} from {url} (refused everywhere within "
        f"{AUTH_CACHE_TTL_S} s); their runs stay"
    )


@server_app.command("reset-password")
def reset_password(
    name: Name,
    tracking_uri: TrackingUri = None,
    password_file: PasswordFile = None,
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """Give an account a new password (the old one stops working within a minute)."""
    from attention_ref.classroom.connection.accounts import reset_password as reset
    from attention_ref.classroom.connection.errors import ServerError

    url = server_url(tracking_uri)
    try:
        admin = admin_credentials(admin_password_file, url)
        password, shown = _new_password(password_file)
        reset(url, admin, name, password)
    except ServerError as e:
        raise CLIError(str(e)) from None
    _say(f"new password for {name!r} on {url}{shown}")
