"""The gradebook's description says what each column is: every metric and tag a gradebook run
holds is named, in words, and nothing else is."""

from __future__ import annotations

import datetime as dt

from attention_ref.classroom.gradebook import RUN_COLUMNS as COLUMNS
from attention_ref.classroom.gradebook import Chosen, Row, Standing, columns_text


def a_row() -> Row:
    return Row(student="alice", exercise=1, standing=Standing.GRADED, steps_right=9,
               steps_given=10, first_wrong="heads[0].A", diagnoses=(("no_mask",),), attempts=2,
               late=dt.timedelta(seconds=70), received=dt.datetime(2026, 11, 26, tzinfo=dt.UTC),
               submission="run1", chosen=Chosen.LATEST, reason="")  # fmt: skip


def undescribed(row: Row, columns: dict[str, str]) -> set[str]:
    """The run's metrics and tags that ``columns`` leaves out, and the names it has too many."""
    return (set(row.metrics()) | set(row.tags())) ^ set(columns)


def test_every_column_of_a_gradebook_run_is_described():
    assert undescribed(a_row(), COLUMNS) == set()
    text = columns_text()
    assert all(f"`{name}`: {words}" in text for name, words in COLUMNS.items())
    # the control: a column the description forgets is found
    fewer = {k: v for k, v in COLUMNS.items() if k != "steps_right"}
    assert undescribed(a_row(), fewer) == {"steps_right"}
