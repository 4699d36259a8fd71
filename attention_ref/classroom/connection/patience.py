"""How a student's command talks to a busy class server: retry what is safe, read back the rest.

In the last minute before a deadline a whole class submits at once, and the server answers some
requests late (the client times out: `ServerTimeoutError`) or says it is busy (503: the edge
passes a bounded number of requests to the application at once, 429: an address sent more
than its share; `attention_ref.classroom.hosting.edge`). A request is then asked again, after a
pause that doubles (``first_pause_s``, ×2, … with jitter, for up to five minutes): reads always;
writes only where asking again cannot make a second thing
(`attention_ref.classroom.exchange.submit` makes each write idempotent: the run carries a key
the client drew, the upload and the finish are checked against what the server holds before
they are sent again).

A server that is not there at all (connection refused, a wrong name) is not retried: the student
is told at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from attention_ref.classroom.connection.errors import ServerTimeoutError

_T = TypeVar("_T")

#: statuses a busy server answers, that a client asks again after a pause
BUSY: frozenset[int] = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class Patience:
    """How long a client waits for a busy server: at most ``tries`` requests and
    ``give_up_after_s`` seconds in all, the first pause ``first_pause_s`` doubling up to
    ``max_pause_s``; ``say`` (when given) is told of each wait, in one line."""

    tries: int = 100
    first_pause_s: float = 0.5
    max_pause_s: float = 8.0
    give_up_after_s: float = 300.0
    say: Callable[[str], None] | None = None

    def pauses(self) -> list[float]:
        """The pause before each retry (jittered by up to a quarter)."""
        out, pause = [], self.first_pause_s
        for _ in range(self.tries - 1):
            out.append(min(pause, self.max_pause_s) * (1 + random.random() / 4))
            pause *= 2
        return out


#: the students' command's patience: five minutes for a server that is busy, then one line
PATIENCE = Patience()


class StillBusyError(ServerTimeoutError):
    """The server stayed busy through every try."""


def patiently(
    call: Callable[[], tuple[int, _T]],
    patience: Patience = PATIENCE,
    before_retry: Callable[[], _T | None] | None = None,
) -> tuple[int, _T]:
    """``call()`` until it answers with a status that is not `BUSY` and does not time out.

    ``before_retry()``, when given, is asked before a retry that follows a lost reply (a
    timeout; a busy answer was not acted on) whether the server already holds what the call was
    for (it returns the answer to use instead, or ``None`` to ask again): so a write whose reply
    was lost is not made twice. After the last try: `StillBusyError`.
    """
    last: Any = None
    asked = 0
    deadline = time.monotonic() + patience.give_up_after_s
    for i, pause in enumerate([0.0, *patience.pauses()]):
        if i:
            if time.monotonic() + pause > deadline:
                break
            if patience.say is not None:
                patience.say(f"the class server is busy ({last}); asking again in {pause:.0f} s")
            time.sleep(pause)
            # a 503 was not acted on: only a reply lost (a timeout) may hide a write done
            if before_retry is not None and isinstance(last, ServerTimeoutError):
                try:
                    held = before_retry()
                except ServerTimeoutError:
                    held = None  # not known: asking again is safe (the server refuses a twin)
                if held is not None:
                    return 200, held
        asked += 1
        try:
            status, answer = call()
        except ServerTimeoutError as e:
            last = e
            continue
        if status not in BUSY:
            return status, answer
        last = f"HTTP {status}"
    raise StillBusyError(f"the class server stayed busy through {asked} tries ({last})")
