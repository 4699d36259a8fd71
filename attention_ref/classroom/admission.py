"""How many requests a server worker takes on at once: the rest are told to come back (503).

A whole class submitting in the deadline's last minute sends more requests than two workers on
two cores answer within a client's timeout. Queued behind each other, they time out at the
client while the server still does their work, and the clients' retries add more: the server
thrashes and students are told nothing certain. So each worker takes on at most
``ATTNREF_MAX_IN_FLIGHT`` requests (default `DEFAULT_LIMIT`) and answers the others at once,
before any password is checked: 503 with ``Retry-After`` (a few seconds, jittered so that
the class does not come back in one wave). `attention_ref.classroom.patience` waits as told.
"""

from __future__ import annotations

import os
import random
from threading import Lock
from typing import Final

#: requests one worker takes on at once, unless ``ATTNREF_MAX_IN_FLIGHT`` says otherwise
DEFAULT_LIMIT: Final = 24
#: the variable that sets the limit inside ``mlflow server``
LIMIT_ENV: Final = "ATTNREF_MAX_IN_FLIGHT"


class Admission:
    """A worker's count of the requests it is answering, against a limit."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"{LIMIT_ENV} must be a positive integer, got {limit}")
        self.limit = limit
        self.in_flight = 0
        self._lock = Lock()

    def enter(self) -> bool:
        """Take a request on (``True``), or say the worker is full (``False``)."""
        with self._lock:
            if self.in_flight >= self.limit:
                return False
            self.in_flight += 1
            return True

    def leave(self) -> None:
        """A request taken on is answered."""
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)

    def retry_after(self) -> int:
        """Seconds a refused client waits before asking again: 1 to 4, at random."""
        return random.randint(1, 4)


def from_environment() -> Admission:
    """The worker's admission, its limit from ``ATTNREF_MAX_IN_FLIGHT`` (or the default)."""
    raw = os.environ.get(LIMIT_ENV, "")
    return Admission(int(raw) if raw.isdigit() else DEFAULT_LIMIT)
