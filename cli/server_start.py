"""``attnref server start``'s words and its background run: the welcome it prints once the
class answers (`print_welcome`), ``--detach`` (`run_detached`): the same start in a
session of its own, its output in ``DIR/start.log``, returning once the server answers; and
its ``--server-name`` option (`ServerNames`)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli.errors import CLIError

if TYPE_CHECKING:
    from attention_ref.classroom.gate.quotas import Quotas as QuotaNumbers
    from attention_ref.classroom.hosting.server import ClassServer

#: how long ``--detach`` waits for the class to answer (PostgreSQL's first start included)
DETACH_WAIT_S = 300.0
#: the welcome's last words (`print_welcome`): the class answers and has said how to use it
WELCOMED = "stops the edge, the MLflow server and"
_MAIN = "import sys; from attention_ref.cli.main import main; sys.exit(main(sys.argv[1:]))"
#: set by `run_detached` in the background start's environment: its welcome says how it stops
DETACHED_ENV = "ATTNREF_DETACHED_START"
#: the gradebooks the welcome names (the newest), the others on the class's page
_NAMED = 5

ServerNames = Annotated[
    list[str] | None,
    typer.Option(
        "--server-name",
        help="A name students reach the class by (class.example.edu; repeat for more; the "
        "first is the one printed). The edge refuses requests for any other name; the "
        "certificate must cover each (the self-signed one is made for them). Default: --host, "
        "or this machine's address and names for 0.0.0.0.",
        show_default=False,
    ),
]


def _quota_defaults() -> str:
    """``runs=1000, artifact-mib=1024, …``: the quotas' defaults, as the option writes them."""
    from dataclasses import asdict

    from attention_ref.classroom.gate.quotas import Quotas as QuotaNumbers

    return ", ".join(f"{k.replace('_', '-')}={v}" for k, v in asdict(QuotaNumbers()).items())


Quotas = Annotated[
    list[str] | None,
    typer.Option(
        "--quota",
        help="What one student may store, NAME=NUMBER (repeat for more): runs (runs in all), "
        "artifact-mib (MiB of their runs' and models' files), metrics-per-run (metric "
        "values; ten times the step and evaluation metrics attnref train logs by default), "
        "params-per-run. Defaults: "
        f"{_quota_defaults()}.",
        show_default=False,
    ),
]


def quotas_of(given: list[str]) -> QuotaNumbers:
    """The quotas of ``--quota`` options; `ValueError` in one line."""
    from attention_ref.classroom.gate.quotas import Quotas as QuotaNumbers

    return QuotaNumbers.parse(given)


class StopOnSignal:
    """SIGINT/SIGTERM set ``requested`` (the foreground loop then stops both servers)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def __enter__(self) -> StopOnSignal:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


def _gradebooks(server: ClassServer, class_id: str) -> str:
    """The welcome's gradebooks line: where the class's page links them (`update_landing`
    writes the links, for assignments made by an earlier attnref too), and the newest's
    page; a line saying why, where they cannot be listed."""
    from attention_ref.classroom.connection.class_client import ClassClient
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.classroom.coursework.assignment import AssignmentError
    from attention_ref.classroom.coursework.gradebook import ui_url
    from attention_ref.classroom.exchange.landing import update_landing

    try:
        books = update_landing(ClassClient(server.url, server.admin, server.cert), class_id)
    except (ServerError, AssignmentError) as e:
        return f"  gradebooks:     not linked on that page ({e})\n"
    if not books:
        return "  gradebooks:     none yet (each assignment's is linked at the top of that page)\n"
    names = ", ".join(b.name for b in books[:_NAMED]) + (", ..." if len(books) > _NAMED else "")
    return (
        f"  gradebooks:     {len(books)} ({names}), linked at the top of that page; the "
        f"newest, {books[0].name}'s:\n    {ui_url(server.public_url, books[0].experiment_id)}\n"
    )


def print_welcome(server: ClassServer) -> None:
    """What the teacher reads once the class answers: the line saying what of the folder was
    made private, if anything was; then where the class is and how students connect (at its
    first name, `ClassServer.public_url`), where the gradebooks are, and how it stops: Ctrl-C,
    or for a start in the background (`DETACHED_ENV`) ``attnref server stop DIR``."""
    from attention_ref.classroom.connection.client import CERT_PATH_ENV, class_experiment_id
    from attention_ref.classroom.connection.tls import fingerprint
    from attention_ref.classroom.coursework.class_time import offset_words

    now = dt.datetime.now(dt.UTC)

    if server.mended:
        print(server.mended, flush=True)
    url, pid = server.public_url, server.process.pid if server.process else None
    edge, lim = server.edge.process.pid if server.edge.process else None, server.limits
    n = len(server.apps)
    apps = f"{n} application server{'s' if n != 1 else ''} (mlflow server)"
    exp_id = class_experiment_id(server.url, server.admin, server.experiment, server.cert)
    cert = server.cert
    stops = f"Ctrl-C (or attnref server stop {server.root})"
    if os.environ.get(DETACHED_ENV):  # no terminal: Ctrl-C reaches it from nowhere
        stops = f"It runs in the background: attnref server stop {server.root}"
    tls = ""
    if cert is not None:
        tls = (
            f"  HTTPS certificate: {cert}\n"
            f"    SHA-256 fingerprint {fingerprint(cert)}\n"
            f"    hand the file to students; they set {CERT_PATH_ENV}=cert.pem\n"
        )
    print(
        f"class server on {url}, experiment {server.experiment!r} (mlflow server pid {pid}; "
        f"this process, pid {os.getpid()}, owns it)\n"
        f"  time zone: {server.timezone} (now {offset_words(now, server.timezone)}): due and "
        "received times are shown in it, a --due without a zone is read in it (--timezone)\n"
        f"  runs: PostgreSQL in {server.postgres.directory} (Unix socket only); artifacts in "
        f"{server.artifacts}; logs in {server.log.parent}\n"
        f"  edge: nginx on {server.host}:{server.port} (pid {edge}), per address at most "
        f"{lim.connections_per_address} requests at once and {lim.rate_per_address}/s; the "
        f"{apps} behind it\n"
        f"{tls}"
        f"  add a student:  attnref server add-student NAME --tracking-uri {url}\n"
        f"  students run:   MLFLOW_TRACKING_URI={url} MLFLOW_TRACKING_USERNAME=NAME "
        f"MLFLOW_TRACKING_PASSWORD=... attnref train --experiment {server.experiment}\n"
        f"  who owns which run: attnref server runs --tracking-uri {url}\n"
        f"  homework:       attnref server assign NAME --tracking-uri {url}\n"
        f"  browse the runs: {server.runs_page(exp_id)} (log in as admin; the class's page, "
        "its top links each assignment's gradebook)\n"
        f"{_gradebooks(server, exp_id)}"
        f"{stops} stops the edge, the MLflow server and PostgreSQL.",
        flush=True,
    )


def run_detached(directory: Path, password: str, options: list[str]) -> None:
    """``attnref server start DIRECTORY OPTIONS`` in a new session (no terminal: it outlives
    this one), its output appended to ``DIRECTORY/start.log``, the admin password in its
    environment (never on a command line); prints its welcome once ``server status`` says it
    answers. A start that ends first is one line, its log's last, and this folder left as the
    start left it."""
    from attention_ref.classroom.connection.accounts import ADMIN_PASSWORD_ENV
    from attention_ref.classroom.hosting.private_folder import private_umask
    from attention_ref.classroom.hosting.server_folder import server_status

    made = not directory.exists()
    with private_umask():  # the folder and its log: the teacher's only
        directory.mkdir(parents=True, exist_ok=True)
        log = directory / "start.log"
        log.touch()
    before = log.stat().st_size  # what earlier starts wrote there
    env = {**os.environ, ADMIN_PASSWORD_ENV: password, DETACHED_ENV: "1"}
    with log.open("ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", _MAIN, "server", "start", str(directory), *options],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + DETACH_WAIT_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            said = [line for line in _since(log, before).splitlines() if line]
            if made and {p.name for p in directory.iterdir()} == {"start.log"}:
                log.unlink()
                directory.rmdir()
            raise CLIError(f"the class server did not start: {said[-1] if said else 'no output'}")
        if WELCOMED in _since(log, before) and server_status(directory).serving:
            print(_since(log, before).rstrip(), flush=True)
            print(
                f"running in the background (pid {child.pid}); its output: {log}; "
                f"attnref server status {directory}; attnref server stop {directory} stops it",
                flush=True,
            )
            return
        time.sleep(0.5)
    raise CLIError(
        f"the class server does not answer after {DETACH_WAIT_S:.0f} s (pid {child.pid}); its "
        f"output: {log}; attnref server stop {directory} stops it"
    )


def _since(log: Path, offset: int) -> str:
    """What ``log`` holds past ``offset`` (this start's output)."""
    with log.open("rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", errors="replace")
