"""Stand-ins for the public URL of Tiny Shakespeare: real servers on 127.0.0.1, good and bad.

`DataServer` is a real HTTP server (``http.server``) that serves one body at every path but
these, each a way a download goes wrong:

* ``/cut``: the full ``Content-Length``, a third of the bytes, then the connection closed;
* ``/cut-chunked``: chunked transfer, a chunk cut short, then closed (``http.client`` raises
  ``IncompleteRead``, which is no ``OSError``);
* ``/stall``: the full ``Content-Length``, a third of the bytes, then nothing until the server
  stops;
* ``/wrong``: as many bytes as the real file, not its bytes;
* ``/missing``: 404.

It counts the requests it answered (``hits``). `silent_url` is a server that accepts the
connection and never answers; `refused_url` a port where nothing listens. No test here reaches
beyond 127.0.0.1.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from tests.ports import free_port


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(
        self,
        *args: object,
        body: bytes,
        hits: list[str],
        stopping: threading.Event,
        **kw: object,
    ) -> None:
        self.body, self.hits, self.stopping = body, hits, stopping
        super().__init__(*args, **kw)  # type: ignore[arg-type]

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.close_connection = True
        if self.path == "/missing":
            self.send_error(404)
            return
        self.send_response(200)
        if self.path == "/cut-chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n" % 300_000 + self.body[:300_000] + b"\r\n")
            self.wfile.write(b"%x\r\n" % 300_000 + self.body[:1_000])  # cut mid-chunk
            return
        body = bytes(len(self.body)) if self.path == "/wrong" else self.body
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in ("/cut", "/stall"):
            self.wfile.write(body[: len(body) // 3])
            self.wfile.flush()
            if self.path == "/stall":
                self.stopping.wait(30)  # the client times out first
            return
        self.wfile.write(body)


class DataServer:
    """A real HTTP server on 127.0.0.1 in a thread, serving ``body`` (see the module's paths);
    ``with`` it, it stops (`stop`) at the end."""

    def __init__(self, body: bytes) -> None:
        self.hits: list[str] = []
        self.stopping = threading.Event()
        handler = partial(_Handler, body=body, hits=self.hits, stopping=self.stopping)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop serving and close the port: a request after this one is refused."""
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def __enter__(self) -> DataServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.thread.is_alive():
            self.stop()


@contextmanager
def silent_url() -> Iterator[str]:
    """A URL whose server accepts the connection (the kernel's backlog does) and never says a
    word: a download waits for its timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/input.txt"


def refused_url() -> str:
    """A URL on a port of 127.0.0.1 where nothing listens: the connection is refused."""
    return f"http://127.0.0.1:{free_port()}/input.txt"


#: a host that does not resolve, as on a machine without a network, found out without asking
#: a name server: a link-local address on an interface that does not exist (getaddrinfo says
#: "Name or service not known" and sends nothing, strace shows)
UNRESOLVABLE_URL = "http://[fe80::1%25nosuchif0]/input.txt"
#: a host name no resolver can hold (a label over 63 characters): refused before any look-up
INVALID_HOST_URL = f"http://{'x' * 64}.invalid/input.txt"
