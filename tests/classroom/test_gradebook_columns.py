"""The gradebook's description says what each column is: every metric and tag a gradebook run
holds is named, in words, and nothing else is."""

from __future__ import annotations

import datetime as dt
import json

from attention_ref.classroom.gradebook import RUN_COLUMNS as COLUMNS
from attention_ref.classroom.gradebook import (
    SHOWN_COLUMNS,
    Chosen,
    Row,
    Standing,
    columns_text,
    view_state,
)


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


def unknown(shown: tuple[str, ...], row: Row) -> list[str]:
    """The columns of ``shown`` (MLflow's keys) that name no metric or tag of ``row``'s run."""
    have = {f"metrics.`{k}`" for k in row.metrics()} | {f"tags.`{k}`" for k in row.tags()}
    return [c for c in shown if c not in have]


def test_the_gradebooks_view_shows_columns_its_runs_hold():
    """The view the gradebook's link opens (`view_state`) selects the grade's columns, each a
    metric or tag a gradebook run holds, the steps first, the runs by name."""
    assert unknown(SHOWN_COLUMNS, a_row()) == []
    assert SHOWN_COLUMNS[:3] == ("metrics.`steps_right`", "metrics.`steps_given`",
                                 "tags.`attnref.grade.first_wrong`")  # fmt: skip
    view = json.loads(view_state())
    assert view["selectedColumns"] == list(SHOWN_COLUMNS)
    assert view["columnOrder"][1:8] == list(SHOWN_COLUMNS)
    assert (view["orderByKey"], view["orderByAsc"]) == ("tags.`mlflow.runName`", True)
    # the control: a column no run holds (a tag written as a metric) is found
    assert unknown(("metrics.`first_wrong`",), a_row()) == ["metrics.`first_wrong`"]


def test_a_gradebook_runs_description_says_its_grade_in_sentences():
    """`Row.note`, the run's description in MLflow's UI: the steps, the first wrong step, the
    mistakes in words with their names, the attempts, which one counts and when it came."""
    from dataclasses import replace

    from attention_ref.exercises.catalogue import mistake_words

    row = a_row()
    note = row.note(mistake_words)
    assert note == ("**alice**, exercise 1: 9 of 10 steps right; the first wrong step is "
                    "`heads[0].A`. The mistake that reproduces the answer: no causal mask "
                    "(`no_mask`). 2 attempts; the latest counts, received 2026-11-26 00:00:00 "
                    "UTC, late by 1 min 10 s.")  # fmt: skip
    either = replace(row, diagnoses=(("no_mask",), ("no_scale", "K_Qt"))).note(mistake_words)
    assert ("Each of these reproduces the answer: no causal mask (`no_mask`); no scaling "
            "(`no_scale`) together with K Qᵀ") in either  # fmt: skip
    none = replace(row, diagnoses=()).note(mistake_words)
    assert "No mistake of the catalogue reproduces the answer." in none
    short = replace(row, first_wrong="", diagnoses=()).note(mistake_words)
    assert "9 of 10 steps right; no step is wrong, the others are short of the decimals" in short
    right = replace(row, steps_right=10, first_wrong="", diagnoses=(), late=None)
    assert right.note(mistake_words).startswith("**alice**, exercise 1: all 10 steps right. ")
    assert right.note(mistake_words).endswith(", on time.")
    assert Row("bob", 2, Standing.MISSING).note() == "**bob**, exercise 2: no submission."
    bad = Row("carol", 1, Standing.MALFORMED, attempts=1, reason="not JSON")
    assert bad.note() == "**carol**, exercise 1: not graded (malformed: not JSON); 1 attempt."
    # the control: without the words, a mistake is named by its name alone
    assert "(`no_mask`)" not in row.note() and "`no_mask`" in row.note()
