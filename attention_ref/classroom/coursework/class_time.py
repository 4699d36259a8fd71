"""The class's clock as people read it: a time zone per class, times shown in it with their
offset from UTC, and kept in UTC.

The server stores every time in UTC (the due time, when a submission was received, the
cut-off: `attention_ref.classroom.coursework.assignment.iso`). A class has a time zone, an IANA
name (``America/Sao_Paulo``): ``attnref server start --timezone`` sets it (default: the server's
own, `server_zone`), the class experiment keeps it (`CLASS_ZONE_TAG`), and each assignment
carries a copy, so that a student's commands read it with the assignment. Times are shown in
it with the offset they have on that date (`shown`: ``2026-12-05 23:40 UTC-03:00``; in UTC,
``2026-12-06 02:40 UTC``), so a reader in another zone can still convert them; a student who
sets ``ATTNREF_TIMEZONE`` reads them in theirs (`reader_zone`). A time typed without a zone
(``--due 2026-12-06T02:00``) is read in the class's zone (`read_local`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from pathlib import Path
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: the class experiment's tag holding the class's time zone (written by ``server start``)
CLASS_ZONE_TAG: Final = "attnref.class.timezone"
#: the variable in which a student names their own time zone
ZONE_ENV: Final = "ATTNREF_TIMEZONE"
UTC_NAME: Final = "UTC"
#: the longest IANA name is 32 characters (America/Argentina/ComodRivadavia)
MAX_ZONE_CHARS: Final = 64
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*")


class ZoneError(ValueError):
    """A time zone that is not one; the message says why, in one line."""


def zone_of(name: str, option: str = "--timezone") -> dt.tzinfo:
    """The time zone an IANA ``name`` names (``UTC``, ``America/Sao_Paulo``); `ZoneError`
    in one line for anything else (bounded and checked before the zone database is read)."""
    if name == UTC_NAME:
        return dt.UTC
    if len(name) > MAX_ZONE_CHARS or not _NAME.fullmatch(name):
        raise ZoneError(f"{option} must be a time zone like America/Sao_Paulo or UTC, got {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ZoneError(
            f"{option} {name!r} is no time zone this machine knows (an IANA name like "
            "America/Sao_Paulo, Europe/Berlin or UTC)"
        ) from None


def checked_zone(name: str, option: str = "--timezone") -> str:
    """``name`` once `zone_of` knows it (``Etc/UTC`` and the like read as ``UTC``)."""
    zone_of(name, option)
    return UTC_NAME if name in ("Etc/UTC", "Etc/UCT", "UCT", "Etc/Zulu", "Zulu") else name


def server_zone() -> str:
    """This machine's own time zone, by name: ``$TZ`` where it names one, else the zone
    ``/etc/localtime`` links to (``/etc/timezone`` on Debian), else ``UTC``."""
    candidates = [os.environ.get("TZ", "").removeprefix(":")]
    with contextlib.suppress(OSError):
        target = str(Path("/etc/localtime").resolve())
        candidates.append(target.split("/zoneinfo/", 1)[1] if "/zoneinfo/" in target else "")
    with contextlib.suppress(OSError, UnicodeDecodeError):
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    for name in candidates:
        if name:
            try:
                return checked_zone(name)
            except ZoneError:
                continue
    return UTC_NAME


def reader_zone(assigned: str) -> str:
    """The zone a student's commands show times in: ``$ATTNREF_TIMEZONE`` when they set one
    (`ZoneError` if it names none), else the assignment's (the class's)."""
    own = os.environ.get(ZONE_ENV, "").strip()
    return checked_zone(own, ZONE_ENV) if own else assigned


def offset_words(when: dt.datetime, zone: str) -> str:
    """``UTC`` or ``UTC-03:00``: the offset from UTC ``zone`` has at ``when``."""
    delta = when.astimezone(zone_of(zone)).utcoffset() or dt.timedelta(0)
    if not delta:
        return UTC_NAME
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def shown(when: dt.datetime, zone: str = UTC_NAME, *, seconds: bool = False) -> str:
    """``when`` (aware) in ``zone`` with its offset: ``2026-12-05 23:40 UTC-03:00`` (to the
    second with ``seconds``); in UTC, ``2026-12-06 02:40 UTC``."""
    local = when.astimezone(zone_of(zone))
    return f"{local:%Y-%m-%d %H:%M{':%S' if seconds else ''}} {offset_words(when, zone)}"


def read_local(when: dt.datetime, zone: str) -> dt.datetime:
    """A time typed without a zone (naive) as the class's ``zone`` reads it; an aware one as
    it is. Returned in UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone_of(zone))
    return when.astimezone(dt.UTC)


__all__ = [
    "CLASS_ZONE_TAG",
    "MAX_ZONE_CHARS",
    "UTC_NAME",
    "ZONE_ENV",
    "ZoneError",
    "checked_zone",
    "offset_words",
    "read_local",
    "reader_zone",
    "server_zone",
    "shown",
    "zone_of",
]
