"""The words about how busy the machine was and how long the arms ran: each on both sides of
its threshold, from results files as the benchmark scripts write them (old and new format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnref_book.conditions import (
    QUIET_LOAD_PER_CPU,
    budget_sentence,
    load_reading,
    load_said,
    load_sentence,
    quiet_summary,
)
from tests.test_layers import imported_names, violates

BENCH = Path(__file__).resolve().parents[2] / "docs" / "results" / "benchmarks"
EPS = 0.01


def after(load: float, cpus: int = 2) -> dict:
    """A results file of the scripts before issue 21: the load read after the timed work."""
    return {"machine": {"date_utc": "2026-11-23 12:34", "cpus": cpus, "loadavg_1min": load}}


def before(load: float | None, flagged: int = 0, cpus: int = 2, **extra: object) -> dict:
    """A results file of `_bench.machine`: the load read before each timed part."""
    summary = {
        "read": "before each timed part",
        "busy_limit": 0.5,
        "probe_s": 0.5,
        "parts": 6,
        "flagged": flagged,
        "first_load_1min": load,
        "max_load_1min": load,
        "max_busy_cores": 0.1,
        "reads": [],
    }
    machine = {
        "date_utc": "2026-11-24 09:00",
        "cpus": cpus,
        "loadavg_1min": load,
        "load_read": "before",
        "load": summary,
    }
    return {"machine": machine, **extra}


def test_the_module_is_pure():
    names = imported_names(Path("book/attnref_book/conditions.py").resolve())
    assert not any(violates(n, {"torch", "mlflow", "matplotlib", "attention_ref"}) for n in names)


@pytest.mark.parametrize(("load", "quiet"), [(0.3 - EPS, True), (0.3, True), (0.3 + EPS, False)])
def test_quiet_is_the_load_before_the_work_on_both_sides_of_the_limit(load, quiet):
    r = load_reading("throughput", before(load))
    assert r.quiet_limit == 2 * QUIET_LOAD_PER_CPU == 0.3
    assert r.quiet is quiet
    text = load_sentence(r)
    assert f"1-minute load {load:.2f} before the first timed part" in text
    assert text.endswith(": a quiet machine.") is quiet
    assert text.endswith(": not a quiet machine.") is not quiet
    assert ("at most the 0.3 on 2 CPUs of a quiet machine" in text) is quiet
    assert ("above the 0.3 on 2 CPUs of a quiet machine" in text) is not quiet


def test_the_limit_grows_with_the_cpus():
    assert load_reading("x", before(0.5, cpus=4)).quiet
    assert not load_reading("x", before(0.5, cpus=2)).quiet


@pytest.mark.parametrize("load", [0.05, 1.82])
def test_a_load_read_after_the_work_is_never_called_quiet(load):
    """The recorded case: 1.82 read after the throughput run counts the run itself."""
    r = load_reading("throughput", after(load))
    assert not r.quiet and not r.read_before
    text = load_sentence(r)
    assert f"1-minute load {load:.2f}, read *after* the timed work" in text
    assert "not claimed to have been quiet" in text and "a quiet machine." not in text
    assert "when the throughput run started" not in text


@pytest.mark.parametrize(("flagged", "quiet"), [(0, True), (1, False)])
def test_a_part_started_beside_busy_cores_makes_it_not_quiet(flagged, quiet):
    r = load_reading("scaling", before(0.1, flagged=flagged))
    assert r.quiet is quiet
    assert (
        f"{flagged} of its 6 load readings (one before each timed part, and the start's where "
        "the script takes one) found more than 0.5 cores busy" in load_sentence(r)
    )


@pytest.mark.parametrize(("script_quiet", "quiet"), [(True, True), (False, False)])
def test_the_script_s_own_verdict_on_its_start_is_kept(script_quiet, quiet):
    r = load_reading("time_to_quality", before(0.2, quiet_start={"quiet": script_quiet}))
    assert r.quiet is quiet
    assert ("the script itself judged its start loaded" in load_sentence(r)) is not quiet


def test_no_load_recorded_is_not_quiet():
    r = load_reading("sampling", before(None))
    assert not r.quiet and "no load recorded" in load_sentence(r)


def test_the_summary_counts_the_quiet_recordings():
    quiet = [load_reading(n, before(0.1)) for n in ("a", "b")]
    assert quiet_summary(quiet).startswith("Each of the 2 benchmarks below ran on a quiet machine")
    mixed = [*quiet, load_reading("c", after(0.1)), load_reading("d", before(1.0))]
    text = quiet_summary(mixed)
    assert text.startswith("2 of the 4 benchmarks below ran on a quiet machine;")
    assert "the load of `c` was read after the timed work" in text
    assert "Every" not in text


NAMES = ("throughput", "time_to_quality", "scaling", "sampling", "cli_latency")


def test_the_recorded_benchmarks_are_not_called_quiet():
    """The committed results read their load after the work: the page says so, whatever
    their value, until they are recorded again with the load read before."""
    readings = []
    for name in ("throughput", "time_to_quality", "scaling", "sampling"):
        doc = json.loads((BENCH / f"{name}.json").read_text(encoding="utf-8"))
        r = load_reading(name, doc)
        readings.append(r)
        load = doc["machine"]["loadavg_1min"]
        assert r.quiet is (r.read_before and load <= QUIET_LOAD_PER_CPU * r.cpus and not r.flagged)
    text = quiet_summary(readings)
    n_quiet = sum(r.quiet for r in readings)
    assert (
        text.startswith("Each of the 4") if n_quiet == 4 else text.startswith(f"{n_quiet} of the 4")
    )


def test_the_machine_of_each_recording_is_named_and_two_machines_are_said():
    """A benchmark's load names its processor; recordings made on two machines are not
    summed up as one machine's (the control: one machine, no count)."""
    epyc = {"cpu": "AMD EPYC", "cpu_bf16_flags": ["avx512_bf16"]}
    xeon = {"cpu": "Intel Xeon", "cpu_bf16_flags": []}
    a, b = before(0.1), before(0.1)
    a["machine"].update(epyc)
    b["machine"].update(xeon)
    ra, rb = load_reading("throughput", a), load_reading("cli_latency", b)
    assert "AMD EPYC, 2 CPUs, bf16: avx512_bf16" in load_sentence(ra)
    assert "Intel Xeon, 2 CPUs, no bf16 instructions" in load_sentence(rb)
    assert "(on 2 machines: the list names each one's)" in quiet_summary([ra, rb])
    assert "machines" not in quiet_summary([ra, load_reading("scaling", a)])
    # a record that names no processor is not counted as another machine
    assert "machines" not in quiet_summary([ra, load_reading("sampling", before(0.1))])
    # the recorded benchmarks: the latency ran on another processor than the others
    docs = {n: json.loads((BENCH / f"{n}.json").read_text(encoding="utf-8")) for n in NAMES}
    readings = [load_reading(n, d) for n, d in docs.items()]
    n = len({r.machine for r in readings})
    assert (f"on {n} machines" in quiet_summary(readings)) is (n > 1)


@pytest.mark.parametrize(
    ("ends", "at_most"),
    [({"attnref": 299.9, "baseline": 300.0}, True), ({"attnref": 300.0, "baseline": 301.1}, False)],
)
def test_at_most_the_budget_is_said_only_when_no_arm_ran_past_it(ends, at_most):
    text = budget_sentence(300.0, ends)
    assert text.startswith("each arm trains for at most 300 s") is at_most
    assert ("can end a little later" in text) is not at_most
    assert all(f"{a} {s:.1f} s" in text for a, s in ends.items())
    assert "before the budget" not in text


def test_an_arm_that_ran_out_of_steps_is_not_said_to_have_run_out_of_time():
    """The bf16 arm finished its 6,000 steps at 182.5 s: it did not train "until 300 s"."""
    ends = {"attnref": 182.5, "attnref-fp32": 268.8, "baseline": 300.6}
    text = budget_sentence(300.0, ends)
    assert text.endswith("; attnref, attnref-fp32 finished their schedules before the budget")
    one = budget_sentence(300.0, {"attnref": 182.5, "baseline": 299.0})
    assert one.endswith("; attnref finished its schedule before the budget")


@pytest.mark.parametrize(
    ("load", "shown", "above"),
    [
        (0.3003, "0.3003", True),
        (0.3, "0.30", False),
        (0.2996, "0.30", False),
        (0.31, "0.31", True),
    ],
)
def test_a_load_is_shown_with_the_decimals_that_put_it_on_its_side_of_the_limit(load, shown, above):
    """The fact-check of issue 60: throughput's 0.3003 was printed "0.30 … above the 0.3";
    the load is shown with as many decimals as put it on its side of the limit (0.2996 reads
    0.30, which is at most the 0.3, as 0.2996 is)."""
    assert load_said(load, 0.3) == shown
    text = load_sentence(load_reading("throughput", before(load)))
    assert f"1-minute load {shown} before the first timed part" in text
    assert ("above the 0.3 on 2 CPUs" in text) is above
    assert load_said(load, 0.3, "pt") == shown.replace(".", ",")


def test_the_recorded_throughput_load_reads_true():
    doc = json.loads((BENCH / "throughput.json").read_text(encoding="utf-8"))
    text = load_sentence(load_reading("throughput", doc))
    assert "1-minute load 0.3003 before the first timed part, above the 0.3" in text
    assert "load 0.30 before" not in text


def test_the_conditions_in_portuguese():
    r = load_reading("throughput", before(0.3003))
    text = load_sentence(r, "pt")
    assert text == (
        "`throughput` (2026-11-24 09:00 UTC): carga de 1 minuto 0,3003 antes da primeira parte "
        "cronometrada, acima dos 0,3 em 2 CPUs de uma máquina ociosa; 0 das suas 6 leituras de "
        "carga (uma antes de cada parte cronometrada, e a do início onde o script a faz) "
        "acharam mais de 0,5 núcleos ocupados com outro trabalho: máquina não ociosa."
    )
    assert load_sentence(load_reading("x", before(0.1)), "pt").endswith(": máquina ociosa.")
    assert "lida *depois* do trabalho" in load_sentence(load_reading("x", after(1.82)), "pt")
    epyc = before(0.1)
    epyc["machine"].update({"cpu": "AMD EPYC", "cpu_bf16_flags": []})
    assert "AMD EPYC, 2 CPUs, sem instruções bf16" in load_sentence(load_reading("x", epyc), "pt")
    quiet = [load_reading(n, before(0.1)) for n in ("a", "b")]
    assert quiet_summary(quiet, "pt").startswith("Cada um dos 2 benchmarks abaixo rodou numa")
    mixed = [*quiet, load_reading("c", after(0.1)), load_reading("d", before(1.0))]
    assert quiet_summary(mixed, "pt") == (
        "Máquina ociosa em 2 dos 4 benchmarks abaixo; a carga de `c` foi lida depois do trabalho "
        "cronometrado, então não se sabe: não se afirma que os tempos dos outros sejam os "
        "melhores desta máquina."
    )
    ends = {"attnref": 182.5, "attnref-fp32": 268.8, "baseline": 300.6}
    assert budget_sentence(300.0, ends, "pt") == (
        "cada braço treina até passarem 300 s de tempo de relógio e para na sua próxima "
        "verificação, então pode terminar um pouco depois (attnref 182,5 s; attnref-fp32 "
        "268,8 s; baseline 300,6 s); attnref, attnref-fp32 terminaram os seus cronogramas antes "
        "do fim do orçamento"
    )
    assert budget_sentence(300.0, {"a": 299.9}, "pt").startswith(
        "cada braço treina por no máximo 300 s de tempo de relógio (a 299,9 s)"
    )
