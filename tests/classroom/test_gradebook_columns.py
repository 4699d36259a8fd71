"""The gradebook's description says what each column is: every metric and tag a gradebook run
holds is named, in words, and nothing else is. A run's description (Markdown in MLflow's UI)
holds what a student wrote as code: never a link, an image, emphasis."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from markdown_it import MarkdownIt

from attention_ref.classroom.coursework.gradebook import RUN_COLUMNS as COLUMNS
from attention_ref.classroom.coursework.gradebook import (
    SHOWN_COLUMNS,
    Chosen,
    Row,
    Standing,
    code_span,
    columns_text,
    view_state,
)

#: Markdown that fetches an image from an address the student chose, and shows a link
PAYLOAD = "![x](http://127.0.0.1:9/a.png) [appeal](http://evil/)"


def a_row() -> Row:
    return Row(
        student="alice",
        exercise=1,
        standing=Standing.GRADED,
        steps_right=9,
        steps_given=10,
        first_wrong="heads[0].A",
        diagnoses=(("no_mask",),),
        attempts=2,
        late=dt.timedelta(seconds=70),
        received=dt.datetime(2026, 11, 26, tzinfo=dt.UTC),
        submission="run1",
        chosen=Chosen.LATEST,
        reason="",
    )


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
    assert SHOWN_COLUMNS[:4] == (  # on screen at 1366 px (tests/classroom/test_ui.py)
        "metrics.`steps_right`",
        "metrics.`points`",
        "metrics.`late`",
        "tags.`attnref.grade.diagnosis`",
    )
    view = json.loads(view_state())
    assert view["selectedColumns"] == list(SHOWN_COLUMNS)
    assert view["columnOrder"][1 : 1 + len(SHOWN_COLUMNS)] == list(SHOWN_COLUMNS)
    assert (view["orderByKey"], view["orderByAsc"]) == ("tags.`mlflow.runName`", True)
    # the control: a column no run holds (a tag written as a metric) is found
    assert unknown(("metrics.`first_wrong`",), a_row()) == ["metrics.`first_wrong`"]


def test_a_gradebook_runs_description_says_its_grade_in_sentences():
    """`Row.note`, the run's description in MLflow's UI: the steps, the first wrong step, the
    mistakes in words with their names, the attempts, which one counts and when it came."""
    from attention_ref.exercises.catalogue import mistake_words

    row = a_row()
    note = row.note(mistake_words)
    assert note == (
        "**`alice`**, exercise 1: 9 of 10 steps right; the first wrong step is "
        "`heads[0].A`. The mistake that reproduces the answer: no causal mask "
        "(`no_mask`). 2 attempts; the latest counts, received 2026-11-26 00:00:00 "
        "UTC, late by 1 min 10 s."
    )
    either = replace(row, diagnoses=(("no_mask",), ("no_scale", "K_Qt"))).note(mistake_words)
    assert (
        "Each of these reproduces the answer: no causal mask (`no_mask`); no scaling "
        "(`no_scale`) together with K Qᵀ"
    ) in either
    none = replace(row, diagnoses=()).note(mistake_words)
    assert "No mistake of the catalogue reproduces the answer." in none
    short = replace(row, first_wrong="", diagnoses=()).note(mistake_words)
    assert "9 of 10 steps right; no step is wrong, the others are short of the decimals" in short
    right = replace(row, steps_right=10, first_wrong="", diagnoses=(), late=None)
    assert right.note(mistake_words).startswith("**`alice`**, exercise 1: all 10 steps right. ")
    assert right.note(mistake_words).endswith(", on time.")
    assert Row("bob", 2, Standing.MISSING).note() == "**`bob`**, exercise 2: no submission."
    bad = Row("carol", 1, Standing.MALFORMED, attempts=1, reason="not JSON")
    assert bad.note() == "**`carol`**, exercise 1: not graded (malformed: `not JSON`); 1 attempt."
    # the control: without the words, a mistake is named by its name alone
    assert "(`no_mask`)" not in row.note() and "`no_mask`" in row.note()


def inline(markdown: str) -> list:
    """The inline tokens of ``markdown``, parsed as CommonMark, with the blocks it makes."""
    blocks = MarkdownIt("commonmark").parse(markdown)
    return [b.type for b in blocks if b.type != "inline"] + [
        t for b in blocks for t in b.children or []
    ]


def markup_in(markdown: str) -> list[str]:
    """Every token of ``markdown`` that is not text or code: links, images, emphasis, HTML."""
    shown = (
        "text",
        "code_inline",
        "softbreak",
        "paragraph_open",
        "paragraph_close",
        "strong_open",
        "strong_close",
    )
    return [
        t if isinstance(t, str) else t.type
        for t in inline(markdown)
        if (t if isinstance(t, str) else t.type) not in shown
    ]


#: what a student might write: Markdown, HTML, backticks anywhere, blank lines, spaces
WRITTEN = [PAYLOAD, "<img src=http://evil/a.png>", "*em* _em_ **b**", "a`b", "``x``", "`",
           "` x `", " a", "  ", "", "line\n\n# heading [l](http://e/)", "[r]: http://e/\n[r]",
           "x\\", "<http://evil/>", "a\r\nb\u2028c", "\\`not a fence"]  # fmt: skip


@pytest.mark.parametrize("text", WRITTEN)
def test_a_code_span_shows_what_was_written_and_nothing_else(text):
    """`code_span` in a sentence, as a note has it: one code span, holding the text (its line
    endings and control characters as spaces), and no other markup."""
    written = f"the reason: {code_span(text)}; 1 attempt."
    tokens = inline(written)
    codes = [t.content for t in tokens if not isinstance(t, str) and t.type == "code_inline"]
    expected = "".join(" " if c in "\r\n\u2028" else c for c in text) or " "
    assert codes == [expected], written
    assert markup_in(written) == [], written


def test_the_check_finds_markup_in_text_not_made_code():
    """The control: the same checks find the link and the image where the text is written as
    it came, or between one backtick on either side (the student's backticks close that span
    early; their blank line ends the paragraph before the span does)."""
    assert markup_in(f"the reason: {PAYLOAD}.") == ["image", "link_open", "link_close"]
    ticked = f"a` {PAYLOAD} `b"
    assert markup_in(f"the reason: `{ticked}`.") == ["image", "link_open", "link_close"]
    assert markup_in(f"the reason: {code_span(ticked)}.") == []
    broken = "line\n\n# heading [l](http://e/)"
    assert {"heading_open", "link_open"} <= set(markup_in(f"the reason: `{broken}`."))
    assert markup_in(f"the reason: {code_span(broken)}.") == []


def test_a_note_holds_what_a_student_wrote_as_code():
    """Whatever the standing, a gradebook run's description shows the student's name, the
    reason that quotes their answer and the step it names as code: no link, no image."""
    from attention_ref.exercises.catalogue import mistake_words

    row = replace(a_row(), student=PAYLOAD, first_wrong=PAYLOAD, reason=PAYLOAD)
    for standing in Standing:
        note = replace(row, standing=standing).note(mistake_words)
        assert markup_in(note) == [], note
        codes = [
            t.content for t in inline(note) if not isinstance(t, str) and t.type == "code_inline"
        ]
        assert codes.count(PAYLOAD) == 1 + (standing is not Standing.MISSING), note
