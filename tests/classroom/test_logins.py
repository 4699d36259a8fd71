"""The throttle of failed logins (`attention_ref.classroom.logins`), on a clock the test moves."""

from __future__ import annotations

import pytest

from attention_ref.classroom.logins import LoginThrottle, ThrottleRule


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def throttle(clock: Clock, failures: int = 3, refill_s: float = 10.0) -> LoginThrottle:
    rule = ThrottleRule(failures, refill_s)
    return LoginThrottle(rule, ThrottleRule(failures * 2, refill_s), clock=clock)


def test_an_address_is_refused_once_its_failures_are_spent_and_waits_for_one_more():
    clock = Clock()
    t = throttle(clock)
    assert [t.take("10.0.0.9", f"user{i}") for i in range(3)] == [0, 0, 0]  # three failures
    assert t.take("10.0.0.9", "user9") == 10  # the fourth check waits, with no hash
    assert t.take("10.0.0.8", "user9") == 0  # the control: another address checks at once
    clock.now = 10.0
    assert t.take("10.0.0.9", "user9") == 0  # one more after the refill time
    assert t.take("10.0.0.9", "user9") == 10


def test_a_right_password_gives_its_token_back():
    clock = Clock()
    t = throttle(clock)
    for _ in range(10):
        assert t.take("10.0.0.7", "alice") == 0
        t.succeeded("10.0.0.7", "alice")
    assert t.take("10.0.0.7", "alice") == 0


def test_an_account_flooded_from_elsewhere_still_lets_in_an_address_it_knows():
    clock = Clock()
    t = throttle(clock)
    assert t.take("10.0.0.1", "admin") == 0
    t.succeeded("10.0.0.1", "admin")  # the teacher's machine, known
    for i in range(6):  # the account's six failures, from six addresses
        assert t.take(f"10.9.0.{i}", "admin") == 0
    assert t.take("10.9.0.99", "admin") == 10  # a seventh address: held back by the account
    assert t.take("10.0.0.1", "admin") == 0  # the known address is not


def test_the_servers_own_machine_has_no_address_bucket_but_its_accounts_count():
    clock = Clock()
    t = throttle(clock)
    for i in range(20):
        assert t.take("127.0.0.1", f"s{i}") == 0
    for _ in range(6):
        t.take("127.0.0.1", "admin")
    assert t.take("127.0.0.1", "admin") == 10


def test_a_class_behind_a_nat_has_its_students_times_the_numbers():
    one, thirty = LoginThrottle.for_class(1), LoginThrottle.for_class(30)
    assert thirty.per_address.failures == 30 * one.per_address.failures
    assert thirty.per_address.refill_s == pytest.approx(one.per_address.refill_s / 30)
    assert thirty.per_account == one.per_account


def test_the_tables_are_bounded():
    clock = Clock()
    t = LoginThrottle(max_entries=5, clock=clock)
    for i in range(50):
        t.take(f"10.1.0.{i}", f"u{i}")
    assert len(t._addresses) == 5 and len(t._accounts) == 5
