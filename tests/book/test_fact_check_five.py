"""The fifth fact-check's sentences, each held to what it measured or to the code it describes.

Each test fails on the sentence as it stood: the gradebook's view listed in an order the code
does not give, the recorded gradebook divided by the steps given where the command it names
divides by the steps asked, a class of 1000 said late on any machine, the exercises' check
leaving out a preset, the suite's duration with no date, commit or load.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from attention_ref.classroom.coursework.gradebook import SHOWN_COLUMNS
from attention_ref.exercises.features import PRESETS
from attnref_book.facts.class_gate_load import whole_class
from attnref_book.facts.teaching import gradebook_view
from attnref_book.facts.teaching_records import class_record

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import readme_measured as measured  # noqa: E402


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_gradebook_view_is_said_in_the_code_s_order(lang):
    text = gradebook_view(lang)
    metrics = [k.split("`")[1] for k in SHOWN_COLUMNS if k.startswith("metrics.")]
    places = [text.index(f"`{m}`") for m in metrics]
    assert places == sorted(places) and len(metrics) >= 5
    assert metrics[:3] == ["steps_right", "points", "late"]  # a teacher's first columns


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_recorded_gradebook_divides_by_the_steps_asked_as_the_command_does(lang):
    """The screen of the command is another recording (another class drawn): the two share
    the denominator, the steps a whole answer has, not every student's steps right."""
    screen = (ROOT / "docs/results/screens/server-grades.txt").read_text("utf-8")
    shown = {d for _, d in re.findall(r"│ (\w+)\s+│ \d+/(\d+)", screen)}
    rows = dict(re.findall(r"\| (\w+) \| [^|]* \| (\d+/\d+) \|", class_record(lang)))
    assert len(rows) >= 25 and {r.split("/")[1] for r in rows.values()} == shown == {"18"}
    assert rows["elisa"] == "10/18"  # a partial answer all right is not 10/10


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_late_class_is_said_of_the_machine_it_was_measured_on(lang):
    text = whole_class(lang)
    said = {"en": "on such a machine", "pt": "numa máquina assim"}[lang]
    unmeasured = {"en": "was not measured", "pt": "não foi medido"}[lang]
    assert said in text and unmeasured in text


def test_every_preset_is_in_the_exercises_check():
    from attnref_book.facts.exercises import no_hidden_mistake

    text = no_hidden_mistake("en")
    for name in PRESETS:
        assert ("`attnref exercise`" if name == "mha" else f"`--variant {name} (") in text


def test_the_suite_s_duration_says_when_where_and_how_loaded():
    run = {
        "wall_s": 664,
        "commit": "1122673",
        "date": "2026-12-07 11:11 UTC",
        "machine": "Debian GNU/Linux 12 (bookworm), 2 cores, AMD EPYC",
        "load_before_1min": 1.13,
        "wall_includes": "no set-up",
    }
    loaded = measured.suite_said(run)
    assert "at commit 1122673, 2026-12-07 11:11 UTC" in loaded
    assert "not quiet: 1-minute load 1.13 before it, above 0.3" in loaded
    quiet = measured.suite_said(run | {"load_before_1min": 0.2})
    assert "not quiet" not in quiet and "1-minute load 0.2 before it" in quiet
    assert "load not recorded" in measured.suite_said({**run, "load_before_1min": None})
