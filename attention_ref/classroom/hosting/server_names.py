"""The names a class server answers to (``attnref server start --server-name``), one list for
every part that judges a request's name.

A class lives under a public name (``class.example.edu``) or an address. Three parts judge
that name, and they must agree, or a class under DNS answers no one:

* the edge (nginx): its class ``server`` answers to `edge_names` (``server_name``); a request
  for any other ``Host`` (or none) falls to a default server that refuses it, 421 Misdirected
  Request (`attention_ref.classroom.hosting.edge_config`);
* MLflow's own check of ``Host`` (DNS rebinding, ``MLFLOW_SERVER_ALLOWED_HOSTS``):
  `allowed_hosts`, what the edge passes on (it sends ``$host:$server_port``, the name in
  lower case with the class's port, whatever case or port the client wrote), and its check
  of a browser's ``Origin`` on state-changing API calls (``MLFLOW_SERVER_CORS_ALLOWED_ORIGINS``):
  `origins`, the UI's own pages under each name;
* the TLS certificate's subjectAltName: the self-signed one is made for the names
  (`attention_ref.classroom.connection.tls.self_signed`); a teacher's own must cover each name given
  (`resolve` refuses one that does not, in one line).

The machine's loopback forms (``127.0.0.1``, ``localhost``, ``::1``, and a loopback ``--host``)
are always answered: the edge's own check that it is up and the teacher's commands on the
machine use them. Without ``--server-name``, `default_names` keeps what worked before: the
``--host`` given, or for a wildcard host the machine's network address (the first: what
`attention_ref.classroom.hosting.server.ClassServer.public_url` names), its host name and its fully
qualified one; with a teacher's certificate, the names it carries too.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable, Sequence
from pathlib import Path

from attention_ref.classroom.connection.tls import (
    certificate_names,
    covers,
    is_loopback,
    is_wildcard,
    primary_address,
)

#: the machine's own names, always answered (the edge's health check, the teacher's commands)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")


def checked(name: str) -> str:
    """``name`` as the class keeps it: a DNS name in lower case without a final dot, or an IP
    address (IPv6 without brackets); ``ValueError`` in one line for anything else."""
    text = name.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    text = text.removesuffix(".")
    labels = text.split(".")
    if len(text) > 253 or not all(_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise ValueError(
            f"--server-name {name!r} is not a host name (such as class.example.edu) nor an IP "
            "address"
        )
    return text


def host_form(name: str) -> str:
    """``name`` as it stands in a URL, a ``Host`` header or nginx's ``server_name``: an IPv6
    address in brackets."""
    return f"[{name}]" if ":" in name else name


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _valid(names: Iterable[str]) -> list[str]:
    kept = []
    for name in names:
        try:
            kept.append(checked(name))
        except ValueError:
            continue  # a machine's odd host name is not a name students can use
    return kept


def default_names(host: str) -> list[str]:
    """The names of a class started without ``--server-name`` on ``host``: ``host`` itself,
    or for a wildcard host the machine's network address, host name and qualified name."""
    if not is_wildcard(host):
        return _valid([host])
    return _unique(
        _valid([primary_address() or socket.gethostname(), socket.gethostname(), socket.getfqdn()])
    )


def resolve(given: Sequence[str], host: str, cert: Path | None) -> tuple[str, ...]:
    """The class's names: ``given`` (``--server-name``, checked, in order), else
    `default_names` of ``host`` and the names a teacher's certificate ``cert`` carries (not
    its wildcards). ``ValueError`` in one line for a name that is none, or that the teacher's
    certificate does not cover."""
    names = _unique(checked(n) for n in given)
    cert_names = certificate_names(cert) if cert is not None else []
    if cert is not None and names:
        missing = [n for n in names if not covers(cert_names, n)]
        if missing:
            carried = ", ".join(cert_names) or "no name (it has no subjectAltName)"
            raise ValueError(
                f"the certificate {cert} does not cover --server-name {', '.join(missing)}: it "
                f"is valid for {carried} (get one for the name, or name one it carries)"
            )
    if names:
        return tuple(names)
    return tuple(_unique([*default_names(host), *_valid(n for n in cert_names if "*" not in n)]))


def edge_names(names: Sequence[str], host: str) -> list[str]:
    """What the edge answers to: the class's ``names`` and the machine's loopback forms (a
    loopback ``host`` such as 127.0.0.2 among them)."""
    loopback = [*LOOPBACK_NAMES, *([host] if is_loopback(host) else [])]
    return _unique([*names, *_valid(loopback)])


def allowed_hosts(
    names: Sequence[str], host: str, port: int, app_ports: Sequence[int] = ()
) -> list[str]:
    """MLflow's allowed ``Host`` values (``MLFLOW_SERVER_ALLOWED_HOSTS``): each of
    `edge_names` with the class's ``port`` (what the edge passes on), and the loopback forms
    with each application server's own port when they listen on loopback ports (a request
    made to one of them directly, as the tests make)."""
    hosts = [f"{host_form(n)}:{port}" for n in edge_names(names, host)]
    hosts += [f"{host_form(n)}:{p}" for p in app_ports for n in LOOPBACK_NAMES]
    return _unique(hosts)


def origins(names: Sequence[str], scheme: str, port: int) -> list[str]:
    """The browser origins of the UI under each name (``MLFLOW_SERVER_CORS_ALLOWED_ORIGINS``):
    with the class's port, and without it (a port forwarded from the scheme's own, 443 or
    80). MLflow admits loopback origins by itself."""
    return _unique(
        origin
        for n in names
        for origin in (f"{scheme}://{host_form(n)}:{port}", f"{scheme}://{host_form(n)}")
    )
