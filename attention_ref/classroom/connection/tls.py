"""TLS for a class server on the network: its certificate, made or given, and its fingerprint.

Basic auth sends every password with every request; over plain HTTP anyone on the LAN reads
them. A class server on an address other than loopback therefore serves HTTPS: with the
teacher's certificate and key, or with a self-signed certificate it makes once (kept in the
class folder, so its fingerprint stays the same across restarts). Students pass the
certificate file to MLflow's clients (``MLFLOW_TRACKING_SERVER_CERT_PATH``), which then trust
that one server and no impostor; the SHA-256 fingerprint, printed at start, lets them check
the file they were given.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
import ssl
from collections.abc import Sequence
from pathlib import Path

#: how long a certificate the server makes is valid (a school year and some)
SELF_SIGNED_DAYS = 400
CERT_NAME, KEY_NAME = "cert.pem", "key.pem"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Whether ``host`` means every interface (0.0.0.0, ::, or empty)."""
    return host in ("", "0.0.0.0", "::")


def primary_address() -> str | None:
    """The address this machine reaches the network from (no packet is sent), or ``None``."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: routing only, nothing is sent
            return str(s.getsockname()[0])
        except OSError:
            return None


def names_for(host: str, server_names: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """``(DNS names, IP addresses)`` a certificate for a server on ``host``, answering to
    ``server_names`` (``--server-name``), must carry.

    A wildcard host adds this machine's name and its network address; loopback is always in.
    """
    dns, ips = ["localhost"], ["127.0.0.1", "::1"]
    wanted = [host] if not is_wildcard(host) else []
    if is_wildcard(host):
        dns += [n for n in {socket.gethostname(), socket.getfqdn()} if n and n not in dns]
        address = primary_address()
        if address and address not in ips:
            ips.append(address)
    for name in (*wanted, *server_names):
        try:
            ip = str(ipaddress.ip_address(name.strip("[]")))
        except ValueError:
            if name not in dns:
                dns.append(name)
        else:
            if ip not in ips:
                ips.append(ip)
    return dns, ips


def certificate_names(cert: Path) -> list[str]:
    """The names the (first) certificate in ``cert`` is valid for: its subjectAltName's DNS
    names (a wildcard as ``*.example.edu``) and IP addresses; ``ValueError`` in one line for
    a file that is no PEM certificate."""
    from cryptography import x509

    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    except (OSError, ValueError) as e:
        raise ValueError(f"{cert} is not a PEM certificate ({e})") from None
    try:
        san = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    ips = [str(ip) for ip in san.get_values_for_type(x509.IPAddress)]
    return [n.lower() for n in san.get_values_for_type(x509.DNSName)] + ips


def covers(names: Sequence[str], name: str) -> bool:
    """Whether a certificate valid for ``names`` (`certificate_names`) is valid for ``name``
    (a DNS name in lower case, or an IP address): by equality, or by a wildcard for one
    left-most label (``*.example.edu`` covers ``class.example.edu``, not ``example.edu`` nor
    ``a.b.example.edu``), as browsers and Python's ``ssl`` match them."""
    if name in names:
        return True
    head, _, rest = name.partition(".")
    return bool(head and rest) and f"*.{rest}" in names


def self_signed(directory: Path, host: str, server_names: Sequence[str] = ()) -> tuple[Path, Path]:
    """``(certificate, key)`` in ``directory``: made now (key 0600) unless both exist and the
    certificate covers ``server_names`` (a new name makes a new certificate, whose fingerprint
    the start prints; the same names keep the one students were given).

    An EC P-256 key and a certificate for `names_for` ``host`` and ``server_names``, valid
    `SELF_SIGNED_DAYS` days; it is its own issuer, so a client given the file trusts exactly
    this server.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    cert_path, key_path = directory / CERT_NAME, directory / KEY_NAME
    if cert_path.is_file() and key_path.is_file():
        made_for = certificate_names(cert_path)
        if all(covers(made_for, n.strip("[]")) for n in server_names):
            return cert_path, key_path
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    dns, ips = names_for(host, server_names)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "attnref class server")])
    now = dt.datetime.now(dt.UTC)
    san = [x509.DNSName(n) for n in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    usage = x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=True,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def fingerprint(cert: Path) -> str:
    """The certificate's SHA-256 fingerprint, ``AB:CD:…`` (what browsers and openssl show)."""
    der = ssl.PEM_cert_to_DER_cert(cert.read_text(encoding="ascii"))
    from hashlib import sha256

    return ":".join(f"{b:02X}" for b in sha256(der).digest())


def check_pair(cert: Path, key: Path) -> None:
    """``ValueError`` unless ``cert`` and ``key`` are readable PEM files that belong together."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except FileNotFoundError as e:
        raise ValueError(f"no such file: {e.filename}") from None
    except (ssl.SSLError, OSError) as e:
        raise ValueError(f"{cert} and {key} are not a certificate and its key ({e})") from None


def client_context(cafile: Path | None) -> ssl.SSLContext:
    """What a client of the class server verifies it with: ``cafile`` (the server's own
    certificate, trusted as it is, even a leaf), else the system's authorities."""
    context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    if cafile:
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return context
