"""Failed logins cost the sender, never a classmate behind the same address: what a worker
remembers of logins, and the token buckets that throttle failed password checks.

A password check costs a hash (MLflow's scrypt: about 0.16 s of a core; a drawn password's
`credentials.FAST_HASH`: under a millisecond) and a read of the account. The gate
(`attention_ref.classroom.gate.credentials.identify`) makes one only when it must, in this order:

1. **right credentials are recognised without a check**: MLflow's 60-second cache, then this
   worker's memory of right passwords (`LoginThrottle.recognises`: an HMAC of the account and
   password under a key drawn at start, with the account's stored hash it was checked
   against; valid while that stored hash is unchanged, from any address). A right password
   the worker has checked once never spends a token again, and nobody's failures can make it
   wait: a student behind a NAT is not locked out by a classmate's flood, nor by a flood of
   wrong passwords for her own name. The memory is bounded (oldest forgotten) and lost when
   the worker restarts; the edge sends an account's requests to one worker (``hash
   $remote_user``), so one check per account and worker is the usual cost.
2. **an account that does not exist** (checked against a hash of nothing, so that it costs
   what a wrong password does): the **address's** bucket for strangers, `ThrottleRule`
   ``per_address`` times the students behind the address (`for_class`). A flood of made-up
   names spends this bucket only: no student's login draws on it.
3. **an existing account**: the bucket of the **(address, account) pair** (``per_pair``), and
   unless the pair is known (a login succeeded from that address, on this worker) one of the
   **account's** two buckets (``per_account`` each): the newcomers' for a pair's first check,
   the other for the checks of pairs that have tried before. Failures for one account from one
   address hold back only that pair: a new student's first login from a flooded NAT address
   draws on a pair bucket of her own, full, and is checked at once; an attacker elsewhere that
   floods her name spends one newcomer's token, then only the other bucket.

A check takes its token before it runs (checks at once cannot overspend a bucket) and gives it
back when the password was right. A request whose bucket is empty is refused before any hash:
429 with ``Retry-After`` (the seconds until one more check is allowed). The server's own
machine (`own_addresses`: 127.0.0.1 and ::1, where the teacher's commands run) has no bucket
for strangers; its pairs and accounts count.

**What an attacker can buy** (one worker; N workers: each has its own buckets, but the edge
sends an account's requests to one), with the defaults (10 failures at once, one more every
6 s) and ``n`` students per address:

* per address: checks of absent accounts, ``10 n`` at once and ``n / 6`` a second (each a
  `FAST_HASH` of nothing: under a millisecond); checks of existing accounts, ``10`` at once
  and ``1 / 6`` a second for each account it names;
* in all: checks of each existing account from the addresses it does not know, ``20`` at once
  and ``2 / 6`` a second (its two buckets), whatever the number of addresses; from each address
  that knows it (its owner's), ``10`` and ``1 / 6`` more. A slow hash (scrypt: a password a
  person chose, the teacher's) is thus checked at most ``(2 + k) / 6`` times a second, ``k`` its
  known addresses: the accounts, not the attacker's addresses, bound the slow checks.

**How long an account can be kept out**: a right password this worker checked before: never.
A first check from an address that has not tried the account: while the account's newcomers'
bucket is empty, i.e. only by an attacker who spends a new address on the account every 6 s
(10 at once). **Still open**: a first check from the very address an attacker floods the
account's name from (a NAT's): the check cannot tell the owner from the attacker before it
runs, so the owner waits her turn with the attacker (a check each ``per_pair.refill_s``);
once in, she is recognised (1).
"""

from __future__ import annotations

import hmac
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from threading import Lock
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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
    #: a pair's: a check from it has run (a newcomer no more); its last drew a newcomer's token
    tried: bool = False
    newcomer: bool = False


@dataclass
class LoginThrottle:
    """One worker's memory of right passwords and its buckets of failed checks: per address
    (absent accounts), per (address, account) pair, per account (see the module)."""

    per_address: ThrottleRule = field(default_factory=ThrottleRule)
    per_account: ThrottleRule = field(default_factory=ThrottleRule)
    per_pair: ThrottleRule = field(default_factory=ThrottleRule)
    max_entries: int = 100_000
    clock: Callable[[], float] = time.monotonic
    #: addresses with no bucket for strangers: the server's machine (the edge's own_addresses)
    own_addresses: frozenset[str] = frozenset({"127.0.0.1", "::1"})

    def __post_init__(self) -> None:
        self._addresses: OrderedDict[str, _Bucket] = OrderedDict()
        self._pairs: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()
        self._accounts: OrderedDict[str, _Bucket] = OrderedDict()
        self._newcomers: OrderedDict[str, _Bucket] = OrderedDict()
        self._known: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._right: OrderedDict[tuple[str, bytes], str] = OrderedDict()
        self._key = secrets.token_bytes(32)
        self._lock = Lock()

    @classmethod
    def for_class(cls, students_per_address: int = 1) -> LoginThrottle:
        """The class server's throttle: an address's bucket for strangers times its students
        (a NAT); a pair's and an account's are one person's."""
        n = max(1, students_per_address)
        base = ThrottleRule()
        return cls(ThrottleRule(base.failures * n, base.refill_s / n), base, base)

    def _remember(self, table: OrderedDict[K, V], key: K, value: V) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.max_entries:
            table.popitem(last=False)

    def _level(self, table: OrderedDict[K, _Bucket], key: K, rule: ThrottleRule) -> _Bucket:
        now = self.clock()
        bucket = table.get(key)
        if bucket is None:
            bucket = _Bucket(float(rule.failures), now)
            self._remember(table, key, bucket)
        else:
            bucket.tokens = min(rule.failures, bucket.tokens + (now - bucket.at) / rule.refill_s)
            bucket.at = now
            table.move_to_end(key)
        return bucket

    def _buckets(
        self, address: str, account: str, exists: bool, returned: bool = False
    ) -> list[tuple[_Bucket, ThrottleRule]]:
        """The buckets a check of ``account`` from ``address`` draws on (see the module), or
        (``returned``) those a right check gives its tokens back to."""
        if not exists:
            if address in self.own_addresses:
                return []
            return [(self._level(self._addresses, address, self.per_address), self.per_address)]
        pair = self._level(self._pairs, (address, account), self.per_pair)
        held = [(pair, self.per_pair)]
        if (address, account) not in self._known:
            newcomer = pair.newcomer if returned else not pair.tried
            table = self._newcomers if newcomer else self._accounts
            held.append((self._level(table, account, self.per_account), self.per_account))
        return held

    def take(self, address: str, account: str, exists: bool = True) -> int:
        """Take one failure's token for a password check of ``account`` (``exists``: the
        account was found) from ``address``, before the check: 0 when taken, else the seconds
        until one is allowed (nothing taken). `succeeded` gives it back."""
        with self._lock:
            held = self._buckets(address, account, exists)
            longest = max(
                ((1 - b.tokens) * rule.refill_s for b, rule in held if b.tokens < 1), default=0.0
            )
            if longest > 0:
                return max(1, math.ceil(longest))
            for bucket, _ in held:
                bucket.tokens -= 1
            if exists:
                pair = held[0][0]
                pair.newcomer = len(held) > 1 and not pair.tried
                pair.tried = True
        return 0

    def _digest(self, account: str, password: str) -> tuple[str, bytes]:
        mac = hmac.new(self._key, f"{account}\0{password}".encode(), "sha256")
        return account, mac.digest()

    def recognises(self, account: str, password: str, stored_hash: str) -> bool:
        """Whether ``password`` was checked right for ``account`` on this worker against the
        stored hash it still has: right, with no hash computed and no token spent."""
        with self._lock:
            seen = self._right.get(self._digest(account, password))
        return seen is not None and hmac.compare_digest(seen, stored_hash)

    def succeeded(self, address: str, account: str, password: str, stored_hash: str) -> None:
        """The check of ``password`` against ``stored_hash`` passed: its tokens back, the pair
        known from now on (the account's bucket no longer holds it back), and the password
        recognised without a check while the account keeps that stored hash."""
        with self._lock:
            held = self._buckets(address, account, exists=True, returned=True)
            for bucket, rule in held:
                bucket.tokens = min(rule.failures, bucket.tokens + 1)
            held[0][0].newcomer = False
            self._remember(self._known, (address, account), None)
            self._remember(self._right, self._digest(account, password), stored_hash)
