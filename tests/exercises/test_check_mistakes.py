"""The catalogue of mistakes: each diagnosed as itself and nothing else, from full answers and
from partial ones, on several seeds and shapes (n, d_model, h, causal or not); two together
named together; a slip named by row and column; nothing offered that changes nothing.

Wrong answers are built two ways: with the catalogue's own reproduction (every entry), and by
hand with torch for the issue's own cases (no causal mask on seeds 0, 1, 3, 7, 11, 12, a
transposed Q given), so the diagnosis is not only checked against itself.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import torch

from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.catalogue import CATALOGUE, Kind, Mistake, mistakes_for
from attention_ref.exercises.chain import Data, computed_steps
from attention_ref.exercises.draw import _numbers, draw_problem, trace_of
from attention_ref.exercises.exercise import ExerciseOptions
from attention_ref.exercises.grader import check_answer, check_document, report_lines
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.inputs.attention_input import parse_input
from attention_ref.reference import attention_backward
from attention_ref.worked.gradients import input_trace
from tests.exercises.shown import shown_steps

#: Shapes between them where every mistake of the catalogue shows: two heads with d_k = 3
#: (√d_model ≠ d_k ≠ √d_k), one head with square weights (transposable), no mask, 4 heads.
PROBLEMS = (
    ExerciseOptions(seed=5, tokens=3, d_model=6, heads=2),
    ExerciseOptions(seed=0, tokens=3, d_model=3, heads=1),
    ExerciseOptions(seed=11, tokens=4, d_model=4, heads=2, causal=False),
    ExerciseOptions(seed=7, tokens=4, d_model=2, heads=2),
    ExerciseOptions(seed=2, tokens=5, d_model=8, heads=4),
)
ALL = ("Q", "K", "V", "scores", "S", "S_masked", "A", "H", "concat", "output")
#: the issue's list (and the 13 the checker knew before it)
ISSUE_MISTAKES = {
    "no_mask",
    "mask_wrong_triangle",
    "mask_after_softmax",
    "mask_added_after_softmax",
    "no_scale",
    "scale_d_k",
    "scale_d_model",
    "softmax_columns",
    "K_Qt",
    "gave_Qt",
    "gave_Kt",
    "gave_Vt",
    "transposed_W_Q",
    "transposed_W_K",
    "transposed_W_V",
    "transposed_W_O",
    "heads_swapped",
    "no_W_O",
    "other_heads_V",
    "slip",
}


def problem(opt: ExerciseOptions) -> Problem:
    return Problem.of_exercise(opt)


def answer(prob: Problem, steps: dict, keys=ALL):
    """The steps written to 3 decimals and checked, through the answer's JSON text."""
    text = answer_text(answer_from_steps(steps, prob.naming, keys=keys), 3)
    return check_document(read_answer_text(text))


def cases() -> list[tuple[ExerciseOptions, str, int]]:
    """(problem, mistake name, index among its kind's instances): every mistake once per
    problem, two orders of the heads where there are many."""
    out = []
    for opt in PROBLEMS:
        seen: dict[str, int] = {}
        for m in mistakes_for(problem(opt).data()):
            if m.rank == 0 and seen.get(m.name, 0) < 2:
                out.append((opt, m.name, seen.get(m.name, 0)))
                seen[m.name] = seen.get(m.name, 0) + 1
    return out


def mistake(opt: ExerciseOptions, name: str, index: int = 0) -> Mistake:
    return [m for m in mistakes_for(problem(opt).data()) if m.name == name][index]


def wrong_steps(opt: ExerciseOptions, m: Mistake) -> dict:
    """The mistake's steps, leaving out any that cannot be written (NaN: −∞ · 0)."""
    steps = computed_steps(problem(opt).data(), [m])
    return {k: v for k, v in steps.items() if not np.isnan(v).any()}


def shown(opt: ExerciseOptions, m: Mistake) -> list:
    """The steps where the mistake shows at 3 decimals, in the order of the computation."""
    d = problem(opt).data()
    return shown_steps(d, computed_steps(d), wrong_steps(opt, m), ALL)


def ident(case) -> str:
    opt, name, index = case
    return f"{name}{index or ''}-d{opt.d_model}h{opt.heads}{'' if opt.causal else '-nomask'}"


def test_the_problems_cover_every_mistake_of_the_issue():
    names = {m.name for opt in PROBLEMS for m in mistakes_for(problem(opt).data())}
    assert names >= ISSUE_MISTAKES, ISSUE_MISTAKES - names


@pytest.mark.parametrize("case", cases(), ids=ident)
def test_each_mistake_is_diagnosed_as_itself_from_a_full_answer(case):
    opt, name, index = case
    m = mistake(opt, name, index)
    report = answer(problem(opt), wrong_steps(opt, m))
    assert not report.all_right
    assert report.diagnosis_names == [(name,)], report_lines(report)
    text = "\n".join(report_lines(report))
    assert f"Diagnosis: {m.words['en']}." in text
    assert report.first_wrong.key == shown(opt, m)[0]  # where it first shows


def indistinguishable(opt: ExerciseOptions, a: Mistake, b: Mistake, keys: list) -> bool:
    """Whether two mistakes write the same numbers (to 3 decimals) on these steps."""
    wa, wb = wrong_steps(opt, a), wrong_steps(opt, b)
    return all(
        k in wa and k in wb and wa[k].shape == wb[k].shape and np.allclose(wa[k], wb[k], atol=1e-3)
        for k in keys
    )


@pytest.mark.parametrize("case", [c for c in cases() if c[0].heads < 4], ids=ident)
def test_each_mistake_is_diagnosed_from_partial_answers(case):
    """Only the first step where it shows, only the output: the mistake is named, and any
    other named with it writes the same numbers on those steps (they cannot be told apart)."""
    opt, name, index = case
    m = mistake(opt, name, index)
    where = shown(opt, m)
    for keys in ([where[0]], [("output", None)]):
        if keys[0] not in where or (m.given and keys[0][0] not in m.given):
            continue  # (a mistake tried only where the steps it names are given)
        steps = {k: v for k, v in wrong_steps(opt, m).items() if k[0] == keys[0][0]}
        report = answer(problem(opt), steps, keys=(keys[0][0],))
        assert (name,) in report.diagnosis_names, (keys, report_lines(report))
        others = [mistake(opt, n[0]) for n in report.diagnosis_names if n != (name,)]
        assert all(indistinguishable(opt, m, o, list(steps)) for o in others), keys


# --- built by hand -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 3, 7, 11, 12])
def test_no_causal_mask_is_diagnosed_on_the_issues_seeds(seed):
    """Built with torch alone: softmax over every column, from A only, the output only, all."""
    prob = problem(ExerciseOptions(seed=seed))
    tr = prob.trace.reference()
    A = [torch.softmax(tr.S[i], -1) for i in range(2)]
    H = [A[i] @ tr.V[i] for i in range(2)]
    concat = torch.cat(H, -1)
    steps = {
        ("A", 0): A[0],
        ("A", 1): A[1],
        ("H", 0): H[0],
        ("H", 1): H[1],
        ("concat", None): concat,
        ("output", None): concat @ tr.W_O,
    }
    for keys in (("A",), ("output",), ("A", "H", "concat", "output")):
        report = answer(prob, steps, keys=keys)
        assert report.diagnosis_names == [("no_mask",)], (keys, report_lines(report))
    assert "Diagnosis: no causal mask" in "\n".join(report_lines(report))


def test_a_transposed_Q_is_named_whether_its_shape_or_its_values_give_it_away():
    """Qᵀ of 2×3 for a 3×2 Q (the issue's case), and Qᵀ of a square Q."""
    for opt in (ExerciseOptions(seed=3), ExerciseOptions(seed=4, d_model=3, heads=1)):
        prob = problem(opt)
        Q = prob.trace.reference().Q
        K = prob.trace.reference().K
        doc = prob.naming | {
            "heads": [
                {"Q": Q[i].T.int().tolist(), "K": K[i].int().tolist()} for i in range(opt.heads)
            ]
        }
        report = check_document(read_answer_text(json.dumps(doc)))
        assert report.diagnosis_names == [("gave_Qt",)], report_lines(report)
        text = "\n".join(report_lines(report))
        assert "you gave Qᵀ, the transpose of Q, instead of Q" in text
        square = Q.shape[-1] == Q.shape[-2]
        assert ("shape 2×3, expected 3×2" in text) is not square
    assert not torch.equal(Q[0], Q[0].T)  # the square one is not symmetric


def test_a_slip_is_named_by_row_and_column_carried_on_or_not():
    opt = ExerciseOptions(seed=9)
    prob = problem(opt)
    tr = prob.trace.reference()
    exact = computed_steps(prob.data())
    S = torch.from_numpy(exact[("S", 1)].copy())
    S[2, 0] += 0.5  # the slip
    carried = {("S", 1): S, ("A", 1): torch.softmax(S + tr.M, -1)}
    not_carried = {("S", 1): S, ("A", 1): torch.from_numpy(exact[("A", 1)])}
    for steps in (carried, not_carried):
        report = answer(prob, steps, keys=("S", "A"))
        assert report.diagnosis_names == [("slip",)], report_lines(report)
        text = "\n".join(report_lines(report))
        right = f"{float(exact[('S', 1)][2, 0]):.3f}"
        assert f"S⁽²⁾ at [{tr.tokens[2]}, 1] is {float(S[2, 0]):.3f} where {right} is right" in text
    # negative control: two entries off is no slip
    S[0, 0] += 0.5
    assert answer(prob, {("S", 1): S}, keys=("S",)).diagnosis_names == []


@pytest.mark.parametrize(
    ("opt", "names"),
    [
        (PROBLEMS[0], ("no_mask", "no_W_O")),
        (PROBLEMS[0], ("no_scale", "heads_swapped")),
        (PROBLEMS[0], ("scale_d_k", "other_heads_V")),
        (PROBLEMS[1], ("softmax_columns", "transposed_W_Q")),
    ],
    ids=lambda x: "+".join(x) if isinstance(x, tuple) else "",
)
def test_two_mistakes_together_are_both_named(opt, names):
    pair = [mistake(opt, n) for n in names]
    prob = problem(opt)
    steps = computed_steps(prob.data(), pair)
    for keys in (ALL, ("output",)):
        report = answer(prob, steps, keys=keys)
        assert report.diagnosis_names in ([names], [names[::-1]]), report_lines(report)
    text = "\n".join(report_lines(report))
    assert "two mistakes together:" in text and "Recomputing with both mistakes" in text
    # negative control: either alone is named alone
    alone = answer(prob, computed_steps(prob.data(), pair[:1]))
    assert alone.diagnosis_names == [names[:1]]


def test_a_mistake_that_changes_nothing_is_not_offered():
    """K Qᵀ when Q Kᵀ is symmetric, no scaling when d_k = 1, a mask when there is none."""
    for opt, absent in (
        (ExerciseOptions(seed=0, d_model=3, heads=1), "K_Qt"),  # Q = K here: symmetric scores
        (ExerciseOptions(seed=1, d_model=2, heads=2), "no_scale"),  # √d_k = 1
        (ExerciseOptions(seed=1, causal=False), "no_mask"),
        (ExerciseOptions(seed=1, d_model=1, heads=1), "no_W_O"),  # no W_O at all
    ):
        # the first draw of the seed's stream (the generator draws seed 0's again: it hides
        # K Qᵀ; a problem from a file may be any)
        numbers = trace_of(opt, _numbers(random.Random(opt.seed), opt))
        tr = numbers.reference()
        names = {m.name for m in mistakes_for(Data.of(numbers))}
        assert absent not in names, (opt, absent)
        if absent == "K_Qt":
            assert torch.equal(tr.QKt[0], tr.QKt[0].T)
    # negative controls: each offered where it changes something
    assert {"K_Qt", "no_scale", "no_mask", "no_W_O"} <= {
        m.name for m in mistakes_for(problem(ExerciseOptions(seed=5, d_model=6)).data())
    }


def test_a_new_kind_of_mistake_plugs_in_without_touching_the_grader():
    """A variant's mistake (here the scores doubled) is one more catalogue entry."""
    doubled = Kind(
        "scores_doubled",
        {"en": "the scores doubled", "pt": "os scores dobrados"},
        lambda d, kind: [
            kind.mistake(stages={"scores": lambda d, e, i: (e["Q", i] @ e["K", i].T) / 0.5})
        ],
    )
    opt = ExerciseOptions(seed=3)
    prob = problem(opt)
    steps = computed_steps(prob.data(), doubled.instances(prob.data(), doubled))  # type: ignore[arg-type]
    ans = __import__("attention_ref.exercises.answer", fromlist=["parse_answer"]).parse_answer(
        read_answer_text(answer_text(answer_from_steps(steps, prob.naming), 3))
    )
    assert check_answer(ans, (*CATALOGUE, doubled)).diagnosis_names == [("scores_doubled",)]
    assert check_answer(ans).diagnosis_names != [("scores_doubled",)]  # not in the catalogue
    assert math.isfinite(float(steps[("output", None)].sum()))


def test_a_transposed_gradient_of_W_O_is_named():
    opt = ExerciseOptions(seed=3, backward=True)
    prob = problem(opt)
    g = attention_backward(input_trace(parse_input(draw_problem(opt))))
    r3 = lambda t: [[round(x, 3) for x in row] for row in t.tolist()]  # noqa: E731
    assert not torch.equal(g.W_O, g.W_O.T)
    doc = prob.naming | {"grads": {"W_O": r3(g.W_O.T), "X": r3(g.X)}}
    report = check_document(read_answer_text(json.dumps(doc)))
    assert report.diagnosis_names == [("gave_dW_Ot",)], report_lines(report)
    assert "you gave (∂W_O)ᵀ, the transpose of ∂W_O" in "\n".join(report_lines(report))
    # negative control: the forward alone never offers it (it changes no forward step)
    assert "gave_dW_Ot" not in {m.name for m in mistakes_for(prob.data())}


def test_too_many_candidates_are_not_tried_in_pairs_and_the_report_says_so():
    """22 heads of square, non-symmetric weights: 66 transposed weights, among others."""
    from attention_ref.inputs.attention_input import parse_input
    from attention_ref.worked.gradients import input_trace

    head = {"W_Q": [[1, 2], [0, 1]], "W_K": [[1, 0], [2, 1]], "W_V": [[1, 1], [0, 1]]}
    doc = {"X": [[1, 0], [0, 1], [1, 1]], "heads": [head] * 22}
    prob = Problem(
        ProblemTrace.of_attention(input_trace(parse_input(doc))),
        {"input": "many.json"},
        "--input many.json",
    )
    assert len(mistakes_for(prob.data())) > 64
    output = (
        prob.trace.reference().output + torch.arange(3 * 44).reshape(3, 44) % 7 * 0.1
    ).tolist()
    report = check_document(read_answer_text(json.dumps({"output": output})), prob)
    assert not report.diagnoses and not report.pairs_tried
    assert (
        "alone (this problem has too many candidates to try two at a time)"
        in report_lines(report)[-1]
    )
    # negative control: a small problem tries pairs, and says so
    small = problem(PROBLEMS[0])
    out = (small.trace.reference().output + torch.arange(18).reshape(3, 6) % 7 * 0.1).tolist()
    report = check_document(read_answer_text(json.dumps({"output": out})), small)
    assert report.pairs_tried and "alone or two together" in report_lines(report)[-1]
