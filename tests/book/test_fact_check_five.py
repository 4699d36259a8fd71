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


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_redrawn_gqa_problem_is_named_by_its_shape(lang):
    """The sixth pass: the check named "seed 0's gqa stream" under a table whose gqa row is
    h = 4, d_k = 2, where seed 0 is kept on its first draw; it was d_model 4 (d_k = 1)."""
    from attention_ref.exercises.draw import draw
    from attention_ref.exercises.exercise import ExerciseOptions
    from attnref_book.facts.exercises import no_hidden_mistake

    assert "`--variant gqa --d-model 4`" in no_hidden_mistake(lang)
    assert "(h = 4, d_k = 1)" in no_hidden_mistake(lang)
    named = ExerciseOptions(seed=0, variant="gqa", heads=4, d_model=4)
    tabled = ExerciseOptions(seed=0, variant="gqa", heads=4, d_model=8)
    assert draw(named).draws > 1 and draw(tabled).draws == 1  # why the shape must be named


def test_the_variants_check_names_the_mistakes_it_leaves_to_the_backward_s_test():
    from attention_ref.exercises.feature_table import TABLE
    from attnref_book.facts.exercises_variants import variant_mistakes

    text = variant_mistakes("en")
    backward = [k.name for f in TABLE.values() for k in f.kinds if k.backward_only]
    assert backward and all(f"`{n}`" in text for n in backward)
    assert "of the forward diagnosed as itself" in text


def test_the_suite_s_timings_on_the_developer_s_page_say_each_run_s_load():
    """The seventh pass: the README said the suite's loads, the developer's page did not."""
    import json

    from attnref_book.facts.develop import suite_timings

    text = suite_timings("en")
    runs = json.loads((ROOT / "docs/results/make-test.json").read_text("utf-8"))["recordings"]
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(lines) == len(runs)
    for line, r in zip(lines, runs, strict=True):
        assert f"the 1-minute load before it: {r['load_before_1min']:g}" in line
        assert ("not quiet" in line) == (r["load_before_1min"] > 0.15 * 2)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_metrics_quota_says_what_its_ten_times_count_leaves_out(lang):
    """The ninth pass: "ten times what attnref train logs" counted only the step and
    evaluation metrics; the final figures and MLflow's system metrics count against it too."""
    from dataclasses import fields

    from attention_ref.classroom.gate.quotas import Quotas, default_run_metrics
    from attention_ref.lm.callbacks import EvalMetrics, StepMetrics
    from attention_ref.lm.config import TrainConfig
    from attnref_book.facts.class_gate_limits import quotas_and_bounds

    cfg = TrainConfig()
    evals = cfg.max_steps // cfg.eval_interval + 1
    step, evaluation = len(fields(StepMetrics)), len(fields(EvalMetrics))
    assert default_run_metrics() == step * cfg.max_steps + evaluation * evals
    assert Quotas().metrics_per_run == 10 * default_run_metrics()
    text = quotas_and_bounds(lang)
    said = {"en": "final figures and MLflow's system metrics", "pt": "métricas de sistema"}
    assert said[lang] in text
