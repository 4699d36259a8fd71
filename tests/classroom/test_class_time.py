"""The class's clock (`attention_ref.classroom.coursework.class_time`): a zone per class, times
shown in it with their offset, typed in it, stored in UTC; refused zones are one line."""

from __future__ import annotations

import datetime as dt

import pytest

from attention_ref.classroom.coursework.assignment import Assignment, due_words, parse_due
from attention_ref.classroom.coursework.class_time import (
    ZONE_ENV,
    ZoneError,
    checked_zone,
    read_local,
    reader_zone,
    server_zone,
    shown,
)
from attention_ref.classroom.coursework.policy import Policy

AT = dt.datetime(2026, 12, 6, 2, 40, 15, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Mars/Olympus",
        "America/Sao Paulo",
        "../../etc/passwd",
        "/etc/localtime",
        "x" * 65,
        "America//Sao_Paulo",
        "-03:00",
        "UTC-3",
    ],
)
def test_what_is_no_time_zone_is_refused_in_one_line(name):
    with pytest.raises(ZoneError) as e:
        checked_zone(name)
    assert "\n" not in str(e.value) and "--timezone" in str(e.value)


def test_a_time_is_shown_in_the_class_zone_with_its_offset():
    assert shown(AT) == "2026-12-06 02:40 UTC"  # the control: UTC reads as before
    assert shown(AT, "America/Sao_Paulo") == "2026-12-05 23:40 UTC-03:00"
    assert shown(AT, "America/Sao_Paulo", seconds=True) == "2026-12-05 23:40:15 UTC-03:00"
    assert shown(AT, "Asia/Kolkata") == "2026-12-06 08:10 UTC+05:30"
    # the offset is the one of that date: Berlin in winter and in summer
    assert shown(AT, "Europe/Berlin").endswith("UTC+01:00")
    assert shown(AT.replace(month=7), "Europe/Berlin").endswith("UTC+02:00")
    assert checked_zone("Etc/UTC") == "UTC"


def test_a_time_typed_without_a_zone_is_the_class_s_and_kept_in_utc():
    typed = dt.datetime(2026, 12, 5, 23, 40)
    assert read_local(typed, "America/Sao_Paulo") == AT.replace(second=0)
    assert parse_due("2026-12-05T23:40", zone="America/Sao_Paulo") == AT.replace(second=0)
    # a zone typed wins over the class's
    assert parse_due("2026-12-06T02:40Z", zone="America/Sao_Paulo") == AT.replace(second=0)
    assert parse_due("2026-12-05T23:40", zone="UTC") != AT.replace(second=0)


def test_due_words_and_the_policy_s_cutoff_in_the_zone():
    assert due_words(AT, "pt", "America/Sao_Paulo") == "prazo 2026-12-05 23:40 UTC-03:00"
    assert due_words(AT, "en") == "due 2026-12-06 02:40 UTC"
    policy = Policy(cutoff=AT + dt.timedelta(days=1))
    assert "2026-12-06 23:40 UTC-03:00" in policy.words("en", zone="America/Sao_Paulo")


def test_the_zone_travels_with_the_assignment_and_is_no_part_of_its_exercises():
    a = Assignment(name="a1", due=AT, timezone="America/Sao_Paulo")
    back = Assignment.from_tags(a.tags("gradebook"))
    assert back.timezone == "America/Sao_Paulo" and back.describe_due().endswith("UTC-03:00")
    assert back.same_exercises(Assignment(name="a1", salt=a.salt, timezone="UTC"))
    # an assignment written before it had a zone reads in UTC
    tags = a.tags("gradebook")
    del tags["attnref.homework.timezone"]
    assert Assignment.from_tags(tags).timezone == "UTC"


def test_a_student_reads_times_in_their_own_zone_when_they_set_one(monkeypatch):
    monkeypatch.delenv(ZONE_ENV, raising=False)
    assert reader_zone("America/Sao_Paulo") == "America/Sao_Paulo"
    monkeypatch.setenv(ZONE_ENV, "Europe/Lisbon")
    assert reader_zone("America/Sao_Paulo") == "Europe/Lisbon"
    monkeypatch.setenv(ZONE_ENV, "Lisbon")
    with pytest.raises(ZoneError, match=ZONE_ENV):
        reader_zone("America/Sao_Paulo")


def test_the_server_zone_is_read_from_tz_else_the_system(monkeypatch):
    monkeypatch.setenv("TZ", "America/Sao_Paulo")
    assert server_zone() == "America/Sao_Paulo"
    monkeypatch.setenv("TZ", ":Europe/Berlin")
    assert server_zone() == "Europe/Berlin"
    monkeypatch.setenv("TZ", "not a zone")
    checked_zone(server_zone())  # the system's, else UTC: always a zone


def test_a_class_under_no_time_zone_is_refused_before_anything_starts(tmp_path):
    """``server start --timezone`` with a name that is no zone: one line, exit 2, no folder."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    attnref = str(Path(sys.executable).with_name("attnref"))
    env = os.environ | {"ATTNREF_ADMIN_PASSWORD": "a-long-enough-password-1"}
    folder = tmp_path / "class"
    done = subprocess.run(
        [attnref, "server", "start", str(folder), "--timezone", "Mars/Olympus"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Mars/Olympus" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not folder.exists()
