"""The suite's own scheduling: the slowest files that ``make test`` hands out first exist."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOWEST_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_file_listed_slowest_first_is_a_test_file_of_the_suite() -> None:
    """A renamed or removed file would silently fall back into collection order (and the last
    file handed out could be a long one again): the list must name files that exist."""
    missing = [path for path in SLOWEST_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert all(Path(path).name.startswith("test_") for path in SLOWEST_FIRST)


def test_the_list_is_slowest_first() -> None:
    seconds = list(SLOWEST_FIRST.values())
    assert seconds == sorted(seconds, reverse=True)
