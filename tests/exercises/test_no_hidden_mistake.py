"""No drawn problem hides a mistake of its catalogue, and the grader reads a dropped zero the
same way whether the entry is right or not.

The control of the generator's invariant is the first draw of seed 0's stream for the default
``attnref exercise --variant gqa`` (h = 4, g = 2): both K/V heads equal, so the interleaved
grouping gives the right numbers. The generator draws that problem first and refuses it.
"""

from __future__ import annotations

import json
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref.exercises import chain
from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.catalogue import CATALOGUES, hidden, mistakes_for
from attention_ref.exercises.chain import Data
from attention_ref.exercises.draw import _numbers, asked_keys, draw, problem_of, trace_of
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.features import PROBLEMS, Features, default_shape
from attention_ref.exercises.grader import Status, check_document, report_lines
from attention_ref.render import render


def computed_steps(*args: object, **kw: object) -> dict:
    """`attention_ref.exercises.chain.computed_steps` (numpy) as torch tensors, for the torch
    arithmetic of these tests."""
    return {k: torch.tensor(v) for k, v in chain.computed_steps(*args, **kw).items()}  # type: ignore[arg-type]


GQA = ExerciseOptions(seed=0, variant="gqa", heads=4)  # gqa's default: h = 4, g = 2, d_k = 1


def check(prob: Problem, steps: dict, keys: tuple[str, ...], decimals: int = 3):
    text = answer_text(answer_from_steps(steps, prob.naming, decimals, keys=keys), decimals)
    return check_document(read_answer_text(text))


def interleaved(opt: ExerciseOptions) -> dict:
    """Query head i reads K/V head i mod g: computed by hand from the problem's numbers."""
    prob = Problem.of_exercise(opt)
    tr = prob.trace.reference()
    g = tr.g
    K = torch.stack([tr.K[i % g] for i in range(tr.h)])
    V = torch.stack([tr.V[i % g] for i in range(tr.h)])
    S = tr.Q @ K.transpose(-2, -1) / tr.d_k**0.5
    A = torch.softmax(S + tr.M, -1)
    H = A @ V
    concat = torch.cat(list(H), -1)
    return {("A", i): A[i] for i in range(tr.h)} | {("output", None): concat @ tr.W_O}


# --- the control: the stream's first draw hides the grouping ---------------------------------


def test_the_first_draw_of_seed_0_hides_the_grouping_and_is_drawn_again():
    first = _numbers(random.Random(0), GQA)
    tr = trace_of(GQA, first)
    # the K = [1, 1, 2], V = [0, 1, 1] for both K/V heads
    assert torch.equal(tr.reference().K[0], tr.reference().K[1]) and torch.equal(
        tr.reference().V[0], tr.reference().V[1]
    )
    d = Data.of(tr)
    shown, _ = hidden(d, d.forward, 3, asked_keys(GQA, True), CATALOGUES["gqa"])
    assert "gqa_interleaved" in {m.name for m in shown}
    drawn = draw(GQA)
    assert drawn.draws > 1 and drawn.problem != first
    again = trace_of(GQA, drawn.problem).reference()
    assert not (torch.equal(again.K[0], again.K[1]) and torch.equal(again.V[0], again.V[1]))


@pytest.mark.parametrize("seed", range(8))
def test_the_interleaved_grouping_is_wrong_and_named_on_every_seed(seed):
    opt = ExerciseOptions(seed=seed, variant="gqa", heads=4)
    report = check(Problem.of_exercise(opt), interleaved(opt), ("A", "output"))
    assert not report.all_right
    assert ("gqa_interleaved",) in report.diagnosis_names, report_lines(report)
    assert "the K/V heads repeated in the wrong order" in "\n".join(report_lines(report))


# --- the invariant, over seeds, shapes and variants ------------------------------------------


#: Every problem the property draws from: the four presets and every combination (issue 59)
VARIANTS = PROBLEMS


@st.composite
def exercise_options(draw_):
    variant = draw_(st.sampled_from(VARIANTS))
    f = Features.parse(variant)
    d_model = draw_(st.sampled_from([2, 3, 4, 6, 8]))
    heads = draw_(st.sampled_from([h for h in (1, 2, 3, 4) if d_model % h == 0]))
    tokens = draw_(st.integers(2, 5))
    kw: dict = {}
    if f.grouped:
        if heads < 2:
            heads = 2 if d_model % 2 == 0 else 3
        if d_model % heads:
            d_model = heads * 2
    if f.rotary and (d_model // heads) % 2:
        d_model, heads = (
            (8, 2 * draw_(st.sampled_from([1, 2])))
            if f.grouped
            else (4, draw_(st.sampled_from([1, 2])))
        )
    if f.windowed:
        kw["window"] = draw_(st.integers(1, tokens - 1))
    return ExerciseOptions(
        seed=draw_(st.integers(0, 10_000)),
        tokens=tokens,
        d_model=d_model,
        heads=heads,
        variant=variant,
        causal=f.windowed or "alibi" in f or draw_(st.booleans()),  # the causal features
        backward=not f.rotary and draw_(st.booleans()),
        **kw,
    )


@settings(max_examples=60, deadline=None)
@given(exercise_options())
def test_every_mistake_that_applies_changes_an_asked_step(opt):
    """The drawn problem hides nothing but what its shape cannot show, and says so."""
    drawn = draw(opt)
    d = Data.of(trace_of(opt, drawn.problem))
    keys = asked_keys(opt, "W_O" in drawn.problem)
    stages = d.forward + BACKWARD if opt.backward else d.forward
    shown, blind = hidden(
        d, stages, opt.decimals, keys, problem_of(opt, drawn.problem).chain.catalogue
    )
    said = {m.words["en"] for m in drawn.hidden}
    assert {m.words["en"] for m in shown} <= said  # (only when the draws ran out)
    assert {m.words["en"] for m in blind} <= said
    statement = render(make_exercise(opt).statement, "markdown", 3)
    assert ("cannot tell them apart" in statement) is bool(drawn.hidden)


def test_the_homeworks_default_shape_is_drawn_first_on_most_seeds():
    """Most seeds of the default shape keep their problem (their sha256 pins stay)."""
    again = [s for s in range(200) if draw(ExerciseOptions(seed=s)).draws > 1]
    assert len(again) < 20, again


def test_a_shape_that_cannot_show_a_mistake_says_which():
    """d_k = 1: dividing by √d_k = 1 changes nothing, so no scaling cannot be told apart."""
    ex = make_exercise(GQA)
    text = render(ex.statement, "markdown", 3)
    assert "the check cannot tell them apart from the right answer: no scaling" in text
    pt = render(
        make_exercise(ExerciseOptions(seed=0, variant="gqa", heads=4, lang="pt")).statement,
        "markdown",
        3,
    )
    assert "não consegue distingui-los da resposta certa: sem escala" in pt
    # negative control: the homework's default shape shows every mistake
    assert "cannot tell" not in render(
        make_exercise(ExerciseOptions(seed=0)).statement, "markdown", 3
    )


def test_the_default_rope_exercise_can_show_rotate_half():
    """attnref exercise --variant rope draws one head of d_k = 4: two pairs."""
    heads, d_model = default_shape("rope")
    opt = ExerciseOptions(seed=0, variant="rope", heads=heads, d_model=d_model)
    assert opt.d_k == 4
    names = {
        m.name for m in mistakes_for(Problem.of_exercise(opt).data(), None, 3, CATALOGUES["rope"])
    }
    assert {"rope_half_pairs", "rope_wrong_pair"} <= names


# --- the zeros dropped: right stays right, a slip is a slip ----------------------------------


def test_a_right_matrix_with_every_zero_dropped_is_right():
    """exercise --seed 1 --variant rope: H from the printed cos and sin ends in 0 at the third
    place in every entry; written without the zeros it is right, as with them."""
    opt = ExerciseOptions(seed=1, variant="rope")
    prob = Problem.of_exercise(opt)
    for i in range(opt.heads):
        H = computed_steps(prob.data())[("H", i)]
        for shown in (H, H.round(decimals=3)):
            doc = prob.naming | {"heads": [{} for _ in range(i)] + [{"H": shown.tolist()}]}
            report = check_document(read_answer_text(json.dumps(doc)))
            assert report.all_right, report_lines(report)
    # a matrix truly rounded to 2 places where 3 are asked is still short of decimals
    prob = Problem.of_exercise(ExerciseOptions(seed=4))
    A = prob.trace.reference().A[0]
    assert not torch.equal(A.round(decimals=2), A.round(decimals=3))
    doc = prob.naming | {"heads": [{"A": A.round(decimals=2).tolist()}]}
    report = check_document(read_answer_text(json.dumps(doc)))
    assert report.verdicts[0].status is Status.FEW_DECIMALS


def test_a_slip_onto_a_trailing_zero_is_named_as_a_slip():
    """exercise --seed 1 --tokens 5 --d-model 8 --heads 2: one entry one unit off, onto a 0
    (0.269 as 0.27, a JSON number): wrong, and the slip named with its place."""
    opt = ExerciseOptions(seed=1, tokens=5, d_model=8, heads=2)
    prob = Problem.of_exercise(opt)
    steps = computed_steps(prob.data())
    for (name, head), value in steps.items():
        if name not in ("A", "H") or head is None:
            continue
        thousandths = (value * 1000).round()
        spots = ((thousandths % 10 == 9) & torch.isfinite(value)).nonzero().tolist()
        if not spots:
            continue
        r_, c_ = spots[0]
        written = [[round(float(x), 3) for x in row] for row in value.tolist()]
        written[r_][c_] = round((float(thousandths[r_, c_]) + 1) / 1000, 2)  # 0.269 -> 0.27
        doc = prob.naming | {"heads": [{} for _ in range(head)] + [{name: written}]}
        text = json.dumps(doc)
        assert f"{written[r_][c_]}" in text and len(str(written[r_][c_]).split(".")[1]) < 3
        report = check_document(read_answer_text(text))
        assert report.verdicts[0].status is Status.WRONG, report_lines(report)
        assert report.diagnosis_names == [("slip",)], report_lines(report)
        assert f"at [{prob.trace.tokens[r_]}, {c_ + 1}]" in "\n".join(report_lines(report))
        return
    pytest.fail("no entry ends in 9 at the third place")
