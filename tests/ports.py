"""Ports for the servers the tests start, chosen so that two never meet.

A port the kernel hands out for ``bind(0)`` is in its ephemeral range (Linux: 32768-60999), the
range every outgoing connection's local port comes from as well: between the test picking one
and nginx binding it, a connection (a browser's, a client's, the other xdist worker's) may take
it, and nginx says "still could not bind()". So a server's port is drawn below that range,
from a band of its own for each xdist worker (``gw0``, ``gw1``, …), never twice in one run, and
only if nothing listens there now.
"""

from __future__ import annotations

import os
import random
import socket

#: the ports drawn from: under Linux's default ephemeral range
LOW, HIGH = 20000, 32768
_given: set[int] = set()


def _band() -> range:
    """This process's band: the range split between the xdist workers (all of it without)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker.removeprefix("gw")) if worker.removeprefix("gw").isdigit() else 0
    width = (HIGH - LOW) // max(count, 1)
    start = LOW + (index % max(count, 1)) * width
    return range(start, start + width)


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now, of this worker's band, not given
    before in this run."""
    band = _band()
    for port in random.sample(band, min(len(band), 200)):
        if port in _given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _given.add(port)
        return port
    raise RuntimeError(f"no free port in {band.start}-{band.stop - 1}")
