"""Failed logins cost the sender, not the class: failures throttled per address and per account.

A password check (werkzeug's scrypt, MLflow's hash) costs about 0.1-0.2 s of a core. A flood of
wrong passwords would buy the server's time with nothing: so the gate checks a password at most
once per request, only when the credentials are not already known right (MLflow's cache of
right ones, `attention_ref.classroom.credentials`), and only while the sender has failures
left. Each worker keeps, in memory, two token buckets:

* per **client address** (the edge's ``X-Real-IP``): `ThrottleRule.failures` failed checks at
  once, one more every `ThrottleRule.refill_s` seconds;
* per **account**: the same numbers, but an address that logged in to that account before (on
  this worker) is not held back by the account's bucket, so that a flood on ``admin`` from
  elsewhere does not lock the teacher out.

A check takes its token before it runs (checks at once cannot overspend a bucket) and gives
it back when the password was right. A request whose bucket is empty is refused before any
hash: 429 with ``Retry-After`` (the seconds until a failure is allowed again). The server's
own machine (127.0.0.1, ::1: where the teacher's commands run, as the edge's
``own_addresses``) has no address bucket; its accounts' buckets still count. A class behind a
NAT shares one address: the address's numbers are multiplied by its students per address.
Each worker keeps its own buckets (N workers: N times the numbers in all); the tables are
bounded (oldest forgotten).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from threading import Lock


@dataclass(frozen=True)
class ThrottleRule:
    """A token bucket's size (failed checks at once) and its refill (seconds per failure)."""

    failures: int = 10
    refill_s: float = 6.0

    def __post_init__(self) -> None:
        if self.failures < 1 or self.refill_s <= 0:
            raise ValueError(f"a throttle needs failures >= 1 and refill_s > 0, got {self}")


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class LoginThrottle:
    """Failed password checks, throttled per client address and per account (one worker's)."""

    per_address: ThrottleRule = field(default_factory=ThrottleRule)
    per_account: ThrottleRule = field(default_factory=ThrottleRule)
    max_entries: int = 100_000
    clock: Callable[[], float] = time.monotonic
    #: addresses whose own bucket is not kept: the server's machine (the edge's own_addresses)
    own_addresses: frozenset[str] = frozenset({"127.0.0.1", "::1"})

    def __post_init__(self) -> None:
        self._addresses: OrderedDict[str, _Bucket] = OrderedDict()
        self._accounts: OrderedDict[str, _Bucket] = OrderedDict()
        self._known: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = Lock()

    @classmethod
    def for_class(cls, students_per_address: int = 1) -> LoginThrottle:
        """The class server's throttle: an address's numbers times its students (a NAT)."""
        n = max(1, students_per_address)
        base = ThrottleRule()
        return cls(ThrottleRule(base.failures * n, base.refill_s / n), base)

    def _level(self, table: OrderedDict[str, _Bucket], key: str, rule: ThrottleRule) -> _Bucket:
        now = self.clock()
        bucket = table.get(key)
        if bucket is None:
            bucket = _Bucket(float(rule.failures), now)
            table[key] = bucket
            while len(table) > self.max_entries:
                table.popitem(last=False)
        else:
            bucket.tokens = min(rule.failures, bucket.tokens + (now - bucket.at) / rule.refill_s)
            bucket.at = now
            table.move_to_end(key)
        return bucket

    @staticmethod
    def _wait(bucket: _Bucket, rule: ThrottleRule) -> float:
        return 0.0 if bucket.tokens >= 1 else (1 - bucket.tokens) * rule.refill_s

    def take(self, address: str, account: str) -> int:
        """Take one failure's token for a password check of ``account`` from ``address``
        before the check (so that checks at once cannot overspend a bucket): 0 when taken,
        else the seconds until one is allowed (nothing taken). `succeeded` gives it back."""
        with self._lock:
            held = []
            if address not in self.own_addresses:
                held.append(
                    (self._level(self._addresses, address, self.per_address), self.per_address)
                )
            if (address, account) not in self._known:
                held.append(
                    (self._level(self._accounts, account, self.per_account), self.per_account)
                )
            longest = max((self._wait(b, rule) for b, rule in held), default=0.0)
            if longest > 0:
                return max(1, math.ceil(longest))
            for bucket, _ in held:
                bucket.tokens -= 1
        return 0

    def _give_back(self, address: str, account: str) -> None:
        if address not in self.own_addresses:
            self._level(self._addresses, address, self.per_address).tokens += 1
        if (address, account) not in self._known:
            self._level(self._accounts, account, self.per_account).tokens += 1

    def give_back(self, address: str, account: str) -> None:
        """The check could not be made (the accounts' store was down): its tokens back."""
        with self._lock:
            self._give_back(address, account)

    def succeeded(self, address: str, account: str) -> None:
        """The check passed: its tokens back, and ``address`` known for ``account`` from now
        on (the account's bucket no longer holds it back)."""
        with self._lock:
            self._give_back(address, account)
            self._known[(address, account)] = None
            self._known.move_to_end((address, account))
            while len(self._known) > self.max_entries:
                self._known.popitem(last=False)
