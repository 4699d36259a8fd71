"""Mistakes the checker names that it left unnamed on c0e9f9b (issue 59): a slip in a 1 × 1 step,
a mistake of the heads' formulas made in some heads only (named with its heads), and the heads
in any order in the concat (3-cycles and every other order, where more than four heads are
past what is tried one order at a time)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.catalogue import CATALOGUE, mistakes_for
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.mistakes import heads_said, in_heads
from attention_ref.exercises.options import ExerciseOptions


def check(prob: Problem, steps: dict, keys: tuple[str, ...]):
    doc = answer_from_steps(steps, prob.naming, prob.decimals, keys=keys)
    return check_document(read_answer_text(answer_text(doc, prob.decimals)))


def said(report, lang: str = "en") -> list[str]:
    return [t for d in report.diagnoses for t in d.texts[lang]]


def test_a_slip_in_a_1_by_1_step_is_named():
    """One token, d_model 1: every step of the heads is 1 × 1; Q one unit off, the later
    steps from it, is a slip (never named on c0e9f9b: 41 of 41)."""
    for seed in range(4):
        prob = Problem.of_exercise(ExerciseOptions(seed=seed, tokens=1, d_model=1, heads=1))
        ex = computed_steps(prob.data())
        assert ex["Q", 0].shape == (1, 1)
        Q = ex["Q", 0] + 1
        report = check(prob, {("Q", 0): Q}, ("Q",))
        assert report.diagnosis_names == [("slip",)], report_lines(report)
        assert f"is {Q[0, 0]:.3f} where {ex['Q', 0][0, 0]:.3f} is right" in said(report)[0]
        # the control: the right Q is right, and nothing is diagnosed
        right = check(prob, {("Q", 0): ex["Q", 0]}, ("Q",))
        assert right.all_right and not right.diagnoses


@pytest.mark.parametrize("heads", [2, 4])
def test_a_mistake_in_some_heads_only_is_named_with_its_heads(heads):
    """The mask added after the softmax (and no scaling, the softmax over the columns, K Qᵀ) in
    head 2 only, or heads 1 and 3: "no mistake of the catalogue" on c0e9f9b; named now, with
    the heads, in both languages. The control: the same mistake in every head is named
    without them."""
    kinds = ("mask_added_after_softmax", "no_scale", "softmax_columns", "K_Qt")
    for seed in range(2):
        prob = Problem.of_exercise(ExerciseOptions(seed=seed, heads=heads, d_model=8))
        d = prob.data()
        for m in (m for m in mistakes_for(d, d.forward, 3, CATALOGUE) if m.name in kinds):
            keys = ("S", "A") if m.name == "mask_added_after_softmax" else ("S", "A", "H", "output")
            for some in ({1}, {0, 2}) if heads == 4 else ({1},):
                only = in_heads(m, frozenset(some), d.forward)
                assert only is not None
                report = check(prob, computed_steps(d, [only]), keys)
                assert (m.name,) in report.diagnosis_names, (m.name, some, report_lines(report))
                words = said(report)[report.diagnosis_names.index((m.name,))]
                assert words.endswith(heads_said(some, "en")), words
                assert said(report, "pt")[0].endswith(heads_said(some, "pt"))
            every = check(prob, computed_steps(d, [m]), keys)
            assert (m.name,) in every.diagnosis_names and not any(
                "only" in t for t in said(every)
            ), report_lines(every)


def test_the_heads_are_said_as_the_words_say_them():
    assert heads_said({1}, "en") == ", in head 2 only"
    assert heads_said({0, 2}, "en") == ", in heads 1 and 3 only"
    assert heads_said({0, 1, 3}, "pt") == ", só nas cabeças 1, 2 e 4"


@pytest.mark.parametrize("h", [5, 6, 8])
def test_the_heads_in_any_order_in_the_concat_are_named(h):
    """With more than four heads, every 3-cycle (0 of 144 named on c0e9f9b) and random
    orders: the concat's blocks matched to the heads, the order said as written."""
    prob = Problem.of_exercise(ExerciseOptions(seed=3, heads=h, d_model=h, tokens=3))
    ex = computed_steps(prob.data())
    rng = random.Random(h)
    cycles = [
        tuple(np.roll(list(c), 1)[list(c).index(x)] if x in c else x for x in range(h))
        for c in itertools.combinations(range(h), 3)
    ]
    orders = rng.sample(cycles, 3) + [tuple(rng.sample(range(h), h)) for _ in range(3)]
    for perm in orders:
        if perm == tuple(range(h)):
            continue
        concat = np.concatenate([ex["H", j] for j in perm], 1)
        steps = {("concat", None): concat, ("output", None): concat @ prob.trace.W_O}
        report = check(prob, steps, ("concat", "output"))
        order = " | ".join(f"H{''.join('⁽' + '⁰¹²³⁴⁵⁶⁷⁸⁹'[j + 1] + '⁾')}" for j in perm)
        assert said(report) == [f"the heads in the wrong order in the concat: [{order}]"], (
            perm,
            report_lines(report),
        )
    # the control: the concat in the right order is right
    concat = np.concatenate([ex["H", j] for j in range(h)], 1)
    right = check(prob, {("concat", None): concat}, ("concat",))
    assert right.all_right


@pytest.mark.parametrize("h", [5, 8])
def test_the_answers_list_of_heads_in_any_order_is_named(h):
    """``heads[i]`` holding head ``perm[i]``'s steps (and the concat in that order), for an
    order past the swaps and the reversal tried one at a time: read from the answer, named
    with the order. The control: a swap (one of those tried) is named as before."""
    prob = Problem.of_exercise(ExerciseOptions(seed=3, heads=h, d_model=h, tokens=3))
    ex = computed_steps(prob.data())
    rng = random.Random(h)
    swap = list(range(h))
    swap[0], swap[1] = 1, 0
    for perm in (tuple(rng.sample(range(h), h)), (1, 2, 0, *range(3, h)), tuple(swap)):
        steps = {(n, i): ex[n, perm[i]] for i in range(h) for n in ("Q", "A", "H")}
        concat = np.concatenate([ex["H", j] for j in perm], 1)
        steps |= {("concat", None): concat, ("output", None): concat @ prob.trace.W_O}
        report = check(prob, steps, ("Q", "A", "H", "concat", "output"))
        order = " | ".join("H⁽" + "⁰¹²³⁴⁵⁶⁷⁸⁹"[j + 1] + "⁾" for j in perm)
        assert said(report) == [
            f"the heads in another order in your answer: its list of heads and the concat "
            f"hold [{order}]"
        ], (perm, report_lines(report))
