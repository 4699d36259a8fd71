"""The class server's edge as nginx's configuration: the numbers (`EdgeLimits`) and the file
(`render`), pure. `attention_ref.classroom.hosting.edge` writes it and runs nginx with it.

The edge does what a proxy is for, with the numbers of `EdgeLimits`:

* **TLS** (the teacher's certificate, or the self-signed one
`attention_ref.classroom.connection.tls`
  makes);
* **names**: the class answers to its names (`attention_ref.classroom.hosting.server_names`); a
  request for any other ``Host`` (or none) gets 421 from a default server (`_misdirected`);
* **timeouts**: a request's header must arrive within ``header_timeout_s`` and its body keep
  coming (``body_timeout_s`` between two reads); a connection that sends nothing costs an
  nginx connection (a few hundred bytes) for that long, and never a worker of the application:
  nginx passes a request on only once its header and body are whole (request buffering);
* **per client address**: at most ``connections`` requests at once and ``rate`` requests a
  second (``burst`` above it not refused: the first ``at_once`` at once, the rest held
  back to the rate; nginx's ``burst`` and ``delay``), each times ``students_per_address``
  (a class behind a NAT sends all its students from one address); past them, 429 with
  ``Retry-After``. The server's own machine (``own_addresses``: 127.0.0.1 and ::1, where the
  teacher's commands run) is not limited per address;
* **the largest body, per route**: what MLflow takes there (`EdgeLimits`: ``max_json_bytes``
  for the API, ``max_upload_artifact_bytes`` and ``max_artifact_bytes`` for the two upload
  routes, only for the method and the path, as sent, that upload; ``uploads`` of them at once
  per address): 413 past it, before a byte reaches the application;
* **the application's capacity**: at most ``in_flight`` requests per worker are passed on at
  once (nginx's ``max_conns``); past it, 503 with ``Retry-After``, at once, which
  `attention_ref.classroom.connection.patience` waits out.

Each refusal is a one-line JSON body in MLflow's error format (``error_code``, ``message``)
that says it is the class server's. nginx sets ``X-Real-IP`` to the client's address (any
value a client sent is replaced): the gate throttles failed logins by it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20


@dataclass(frozen=True)
class EdgeLimits:
    """What the edge allows each client address, and the application at once.

    The per-address numbers are for one student's machine (a training run and a browser on
    the UI: a browser opens up to 6 connections to a server, and the UI's first page asks for
    about 40 files at once); ``students_per_address`` multiplies them for a class that
    reaches the server through one address (a NAT).

    **Bodies** (in bytes), each route's what MLflow 3.17 takes there and the class sends:

    * ``max_json_bytes`` (4 MiB), every route but the two uploads: the largest ``log-batch``
      MLflow takes (``mlflow.utils.validation``: 1,000 entities, 100 params of 6,000
      characters, 100 tags of 8,000, keys of 250) is about 1.7 MB as its client sends it,
      ASCII; twice that leaves room for text in UTF-8. Larger bodies MLflow would take
      (a dataset's 16 MiB profile) are of routes the class does not use;
    * ``max_upload_artifact_bytes`` (10 MiB): ``upload-artifact``, where MLflow's handler
      refuses more than ``10 * 1024 * 1024`` (and holds the body in memory whole);
    * ``max_artifact_bytes`` (128 MiB): the artifact proxy's ``PUT`` (streamed to the store):
      a training's checkpoints and model, and the answers (`uploads.MAX_ANSWER_BYTES`, 1 MiB,
      counted by the application). The largest file a class command uploads is ``attnref
      train --preset nanogpt-shakespeare-char``'s ``last.pt`` (10.8M parameters and AdamW's
      two moments: about 124 MiB); Q02's defaults make one of about 5 MB;
    * ``uploads``: requests on the upload routes at once per student (a training uploads one
      file after another; MLflow's client asks again after a 429).

    A body larger than nginx's ``client_body_buffer_size`` (16 KiB, nginx's own) waits in
    an unlinked temporary file of the edge until its request ends (nginx closes it then, or
    at ``body_timeout_s`` without a byte): a client that stalls holds at most
    `body_bytes_per_address` of the edge's disk per address.
    """

    students_per_address: int = 1
    connections: int = 16
    rate: int = 20  # requests per second, sustained
    at_once: int = 50  # requests above the rate answered at once (a browser's first page)
    burst: int = 200  # requests above the rate not refused in all (at_once of them at once)
    header_timeout_s: int = 10
    body_timeout_s: int = 30
    idle_timeout_s: int = 30  # an idle kept-alive connection is closed after it
    send_timeout_s: int = 60
    upstream_timeout_s: int = 300
    in_flight: int = 24  # per worker of the application
    max_json_bytes: int = 4 * MIB
    max_upload_artifact_bytes: int = 10 * MIB
    max_artifact_bytes: int = 128 * MIB
    uploads: int = 2
    retry_after_s: int = 2
    #: the application does not answer at all (restarting): clients come back later than when
    #: it is only full (MLflow's own client waits what Retry-After says, 7 times)
    retry_after_down_s: int = 10
    max_idle_connections: int = 4096  # connections nginx holds in all (each worker)
    #: addresses the per-address limits leave alone: the server's own machine, where the
    #: teacher's commands run (a second loopback address, 127.0.0.2, is limited like any other)
    own_addresses: tuple[str, ...] = ("127.0.0.1", "::1")

    def __post_init__(self) -> None:
        for name in (
            "students_per_address",
            "connections",
            "rate",
            "at_once",
            "burst",
            "in_flight",
            "header_timeout_s",
            "body_timeout_s",
            "retry_after_s",
            "max_json_bytes",
            "max_upload_artifact_bytes",
            "max_artifact_bytes",
            "uploads",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"the edge's {name} must be a positive integer, got {value!r}")

    @property
    def uploads_per_address(self) -> int:
        """Requests on the upload routes in progress at once from one address."""
        return min(self.uploads * self.students_per_address, self.connections_per_address)

    @property
    def body_bytes_per_address(self) -> int:
        """The most body bytes the edge holds at once for one address's requests in progress
        (its temporary files): the uploads' bodies, and the JSON ones of the rest."""
        rest = self.connections_per_address - self.uploads_per_address
        return self.uploads_per_address * self.max_artifact_bytes + rest * self.max_json_bytes

    @property
    def connections_per_address(self) -> int:
        """Requests in progress at once from one address."""
        return self.connections * self.students_per_address

    @property
    def rate_per_address(self) -> int:
        """Requests a second from one address, sustained."""
        return self.rate * self.students_per_address

    @property
    def at_once_per_address(self) -> int:
        """Requests above the rate from one address answered at once."""
        return self.at_once * self.students_per_address

    @property
    def burst_per_address(self) -> int:
        """Requests above the rate from one address held back (to the rate) before any is
        refused."""
        return self.burst * self.students_per_address


def _refusal(status: int, code: str, message: str, retry_after: int | str | None) -> str:
    """A named location that answers ``status`` with MLflow's error format, in one line."""
    body = json.dumps({"error_code": code, "message": "class server: " + message})
    body = body.replace("\\", "\\\\").replace("'", "\\'")
    retry = f"        add_header Retry-After {retry_after} always;\n" if retry_after else ""
    return (
        f"    location @refused_{status} {{\n"
        "        default_type application/json;\n"
        f"{retry}"
        f"        return {status} '{body}\\n';\n"
        "    }\n"
    )


def _misdirected(listen: str, ssl: str, names: Sequence[str]) -> str:
    """The default server: a request for a name the class does not answer to (another
    ``Host``, or none) gets 421 Misdirected Request, one line in MLflow's error format, before
    anything reaches the application.

    Not ``ssl_reject_handshake``: a client that reaches the class by its address sends no
    name in its handshake (SNI carries no IP address), so the handshake must complete, with
    the class's certificate, for its ``Host`` to be judged. Not nginx's 444 (the connection
    closed unanswered): a student who typed another name is told which one the class has.
    It answers from memory, so it needs none of the class's limits.
    """
    body = json.dumps(
        {
            "error_code": "BAD_REQUEST",
            "message": "class server: this server does not answer to the name this request "
            f"asked for; its name is {names[0]}",
        }
    )
    body = body.replace("\\", "\\\\").replace("'", "\\'")
    return (
        "    server {\n"
        f"        listen {listen} default_server{ssl};\n"
        "        default_type application/json;\n"
        f"        return 421 '{body}\\n';\n"
        "    }\n"
    )


def nginx_size(n: int) -> str:
    """A size in nginx's words: whole MiB as ``4m``, else bytes."""
    return f"{n // MIB}m" if n % MIB == 0 else str(n)


def _upload_location(route: str, largest: int, lim: EdgeLimits) -> str:
    """The location of an upload route (``route`` under ``/api/2.0/`` or ``/ajax-api/2.0/``):
    bodies up to ``largest`` for that route's upload itself (``$upload_route``), none for any
    other request there (413: MLflow reads none, but its bridge to Flask would hold one whole
    in memory), and `EdgeLimits.uploads_per_address` of them at once (a ``limit_conn`` here
    replaces the server's, so the per-address one is said again)."""
    path = route.replace(".", "\\.")
    return (
        f"        location ~ ^/(ajax-)?api/2\\.0/{path} {{\n"
        f"            client_max_body_size {nginx_size(largest)};\n"
        f"            limit_conn per_address {lim.connections_per_address};\n"
        f"            limit_conn uploads_per_address {lim.uploads_per_address};\n"
        "            if ($stray_body) {\n"
        "                return 413;\n"
        "            }\n"
        "            proxy_pass http://application;\n"
        "        }\n"
    )


def upstream(address: Path | tuple[str, int]) -> str:
    """nginx's name of an application server: its Unix socket, or its host and port."""
    if isinstance(address, Path):
        return f"unix:{address}"
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def render(
    *,
    listen: str,
    apps: Sequence[Path | tuple[str, int]],
    limits: EdgeLimits,
    directory: Path,
    access_log: Path,
    tls: tuple[Path, Path] | None = None,
    user: str | None = None,
    server_names: Sequence[str] = (),
) -> str:
    """nginx's configuration for the edge (the whole file): pure, from its arguments. ``apps``:
    the application servers, each taking `EdgeLimits.in_flight` requests at once; an account's
    requests all go to one of them (its password is checked once, where it is kept).
    ``server_names``: the names the class answers to (nginx's ``server_name``, the first the
    class's own); a request for another goes to `_misdirected`'s default server. None: the
    class's server answers any name."""
    lim = limits
    temp = directory / "tmp"
    servers = "".join(
        f"        server {upstream(a)} max_conns={lim.in_flight} max_fails=0;\n" for a in apps
    )
    balance = "        hash $remote_user consistent;\n" if len(apps) > 1 else ""
    ssl = (
        f" ssl;\n        ssl_certificate {tls[0]};\n        ssl_certificate_key {tls[1]};\n"
        "        ssl_protocols TLSv1.2 TLSv1.3;\n        ssl_session_cache shared:tls:4m;\n"
        "        ssl_session_timeout 10m"
        if tls
        else ""
    )
    user_line = f"user {user};\n" if user else ""
    named = f"        server_name {' '.join(server_names)};\n" if server_names else ""
    misdirected = _misdirected(listen, ssl, server_names) if server_names else ""
    own = "".join(f"        {address} 0;\n" for address in lim.own_addresses)
    at_once = lim.at_once_per_address
    retry = lim.retry_after_s
    refusals = "".join(
        (
            _refusal(
                429,
                "REQUEST_LIMIT_EXCEEDED",
                f"too many requests from your address at once; try again in {retry} s",
                retry,
            ),
            _refusal(503, "TEMPORARILY_UNAVAILABLE", "$unavailable", "$retry_after"),
            _refusal(
                413,
                "INVALID_PARAMETER_VALUE",
                "the request's body is larger than the class server takes on this route",
                None,
            ),
        )
    )
    return f"""# the class server's edge (attention_ref.classroom.hosting.edge): written at start
{user_line}worker_processes auto;
pid {directory / "nginx.pid"};
error_log {directory / "error.log"} warn;
daemon off;
events {{
    worker_connections {lim.max_idle_connections};
}}
http {{
    server_tokens off;
    # nginx's combined format, then which application server answered and in how long
    log_format edge '$remote_addr - $remote_user [$time_local] "$request" $status '
                    '$body_bytes_sent "$http_referer" "$http_user_agent" '
                    'upstream=$upstream_addr $request_time';
    access_log {access_log} edge;
    client_body_temp_path {temp / "body"};
    proxy_temp_path {temp / "proxy"};
    fastcgi_temp_path {temp / "fastcgi"};
    uwsgi_temp_path {temp / "uwsgi"};
    scgi_temp_path {temp / "scgi"};

    client_header_timeout {lim.header_timeout_s}s;
    client_body_timeout {lim.body_timeout_s}s;
    keepalive_timeout {lim.idle_timeout_s}s;
    send_timeout {lim.send_timeout_s}s;
    reset_timedout_connection on;
    client_max_body_size {nginx_size(lim.max_json_bytes)};

    # the per-address limits count every address but the server's own (an empty key: none)
    geo $limited {{
        default 1;
{own}    }}
    map $limited $per_address {{
        0 "";
        1 $binary_remote_addr;
    }}
    limit_conn_zone $per_address zone=per_address:10m;
    # an upload's large body only where MLflow reads one: the method and the path as the client
    # sent them (what the application routes, not nginx's normalized URI; no %0A, which takes a
    # path off MLflow's streamed route into its Flask bridge, which reads a body whole)
    map "$request_method $request_uri" $upload_route {{
        default "";
        "~^PUT /(ajax-)?api/2\\.0/mlflow-artifacts/artifacts/([^?%]|%(?!0[aA]))+$" artifact;
        "~^POST /(ajax-)?api/2\\.0/mlflow/upload-artifact(\\?|$)" upload-artifact;
    }}
    map "$upload_route:$http_content_length:$http_transfer_encoding" $stray_body {{
        default 1;
        "~^[a-z]" 0;
        "::" 0;
        ":0:" 0;
    }}
    map $upload_route $upload_per_address {{
        "" "";
        default $per_address;
    }}
    limit_conn_zone $upload_per_address zone=uploads_per_address:10m;
    limit_req_zone $per_address zone=rate_per_address:10m rate={lim.rate_per_address}r/s;
    limit_conn_status 429;
    limit_req_status 429;
    limit_conn_log_level warn;
    limit_req_log_level warn;

    upstream application {{
        zone application 64k;
        # an account's requests to one server (its password checked there once); a server is
        # never marked down: a request none can take is told so, each time
{balance}{servers}    }}
    # full (every connection to the application in use: "no live upstreams", the group's
    # name) or not answering (restarting: the socket's address): come back soon, or later
    map $upstream_addr $retry_after {{
        application {retry};
        default {lim.retry_after_down_s};
    }}
    map $upstream_addr $unavailable {{
        application "busy: too many requests at once; try again in {retry} s";
        default "not answering for a moment (restarting?); try again in {lim.retry_after_down_s} s";
    }}

{misdirected}    server {{
        listen {listen}{ssl};
{named}        limit_conn per_address {lim.connections_per_address};
        limit_req zone=rate_per_address burst={lim.burst_per_address} delay={at_once};

        error_page 429 = @refused_429;
        error_page 502 503 504 = @refused_503;
        error_page 413 = @refused_413;
        # a request nginx cannot read (400, 414, 494: a NUL in its path, a header too large)
        # keeps nginx's own answer: its request line is no URI to redirect

        proxy_http_version 1.1;
        # the name as nginx matched it (lower case) with the class's port, whatever case,
        # port or absolute URI the client wrote: what MLflow's own check of Host expects
        proxy_set_header Host $host:$server_port;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $remote_addr;
        proxy_set_header X-Forwarded-Proto $scheme;
        # the body's length as the client announced it, for the gate's quota (MLflow's bridge
        # to its FastAPI routes hands the gate the headers with Content-Length 0)
        proxy_set_header X-Body-Length $content_length;
        proxy_set_header Connection "";
        proxy_read_timeout {lim.upstream_timeout_s}s;
        proxy_send_timeout {lim.upstream_timeout_s}s;
        proxy_connect_timeout 5s;
        # a server that cannot be reached: the next one (a request is never sent twice)
        proxy_next_upstream error;
        proxy_next_upstream_tries 2;

        location / {{
            proxy_pass http://application;
        }}
{_upload_location("mlflow/upload-artifact", lim.max_upload_artifact_bytes, lim)}\
{_upload_location("mlflow-artifacts/artifacts/", lim.max_artifact_bytes, lim)}\
{refusals}    }}
}}
"""
