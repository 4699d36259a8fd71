"""``attnref check``'s library: verdicts, tolerance from the decimals, diagnoses by recomputing.

Every answer here is built by running the steps (with a mistake, or rounding as a student
does) and writing them to 3 decimals, the way a student hands them in.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

from attention_ref.worked import check as C
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.exercise import ExerciseOptions, draw_problem
from attention_ref.worked.gradients import input_trace
from attention_ref.worked.inputs import InputError, parse_input

#: Two problems between them make every mistake of the issue distinguishable: two heads with
#: d_k = 3 (so √d_model ≠ d_k ≠ √d_k), and one head with square weights (transposable).
TWO_HEADS = ExerciseOptions(seed=5, tokens=3, d_model=6, heads=2)
ONE_HEAD = ExerciseOptions(seed=0, tokens=3, d_model=3, heads=1)
ISSUE_MISTAKES = {
    "no_scale", "scale_d_model", "scale_d_k", "softmax_columns", "mask_wrong_triangle",
    "mask_after_softmax", "K_Qt", "transposed_W_Q", "transposed_W_K", "transposed_W_V",
    "transposed_W_O", "heads_swapped", "no_W_O",
}  # fmt: skip


def trace_of(opt: ExerciseOptions):
    return input_trace(parse_input(draw_problem(opt)))


def answer(doc: dict, decimals: int = 3) -> C.Answer:
    """The answer as a student's file would be read: through its JSON text."""
    return C.parse_answer(json.loads(C.answer_text(doc, decimals), parse_float=C._Literal))


def written(opt: ExerciseOptions, steps: dict, keys=C.HEAD_STEPS + C.FINAL_STEPS) -> C.Answer:
    """Steps rounded to 3 decimals, naming the exercise; steps with NaN are left out."""
    finite = {k: v for k, v in steps.items() if not torch.isnan(v).any()}
    return answer(C.answer_from_steps(finite, {"exercise": opt.to_json()}, keys=keys))


def cases() -> list[tuple[ExerciseOptions, C.Mistake]]:
    return [(opt, m) for opt in (TWO_HEADS, ONE_HEAD) for m in C.mistakes_for(trace_of(opt))]


def test_the_two_problems_cover_every_mistake_of_the_issue():
    assert {m.name for _, m in cases()} >= ISSUE_MISTAKES


@pytest.mark.parametrize(("opt", "mistake"), cases(), ids=lambda x: getattr(x, "name", "") or "")
def test_each_mistake_is_diagnosed_as_itself_and_no_other(opt, mistake):
    tr = trace_of(opt)
    report = C.check_answer(written(opt, C.run_steps(tr, mistake)))
    assert not report.all_right
    assert [d.text for d in report.diagnoses] == [mistake.text]
    lines = "\n".join(C.report_lines(report))
    assert f"Diagnosis: {mistake.text}." in lines


@pytest.mark.parametrize(("opt", "mistake"), cases(), ids=lambda x: getattr(x, "name", "") or "")
def test_the_first_wrong_step_is_where_the_mistake_first_shows(opt, mistake):
    tr = trace_of(opt)
    exact, wrong = C.run_steps(tr), C.run_steps(tr, mistake)
    report = C.check_answer(written(opt, wrong))
    first = report.first_wrong
    assert first is not None
    order = C._order(list(exact), C.HEAD_STEPS, C.FINAL_STEPS)
    differs = [k for k in order if not torch.allclose(exact[k], wrong[k], atol=5e-4,
                                                       equal_nan=False)]  # fmt: skip
    assert first.key == differs[0]


def test_a_right_answer_to_three_decimals_passes():
    for opt in (TWO_HEADS, ONE_HEAD, ExerciseOptions(seed=11, causal=False)):
        report = C.check_answer(written(opt, C.run_steps(trace_of(opt))))
        assert report.all_right and not report.diagnoses
        assert all(v.decimals == 3 and not v.note for v in report.verdicts)
        assert C.report_lines(report)[-1] == "Every step you gave is right."


def test_the_homeworks_printed_numbers_pass_as_an_answer():
    """Seed 000's own matrices (3 decimals) checked against the exact computation."""
    doc = {
        "example": "life-is-awesome",
        "heads": [{"Q": life.DOC_LIFE_Q[i], "K": life.DOC_LIFE_K[i], "V": life.DOC_LIFE_V[i],
                   "scores": life.DOC_LIFE_QKT[i], "A": life.DOC_LIFE_A[i],
                   "H": life.DOC_LIFE_H[i]} for i in range(2)],
        "concat": life.DOC_LIFE_CONCAT,
        "output": life.DOC_LIFE_OUTPUT,
    }  # fmt: skip
    report = C.check_answer(answer(doc))
    assert report.all_right, C.report_lines(report)


def student_rounding(tr, decimals: int = 3) -> dict:
    """Each step computed by hand from the previous steps as written (rounded)."""
    given: dict = {}
    order = C._order(list(C.run_steps(tr)), C.HEAD_STEPS, C.FINAL_STEPS)
    for key in order:
        value = C.run_steps(tr, given=given)[key]
        given[key] = torch.where(torch.isinf(value), value, value.round(decimals=decimals))
    return given


def test_steps_from_rounded_inputs_are_right_with_a_note():
    opt = ExerciseOptions(seed=4, tokens=5, d_model=6)
    tr = trace_of(opt)
    steps = student_rounding(tr, decimals=3)
    exact = C.run_steps(tr)
    off = [k for k in steps if not C.matches(C.Given(steps[k], 3), exact[k])]
    assert off, "the rounding must drift somewhere for this test to mean anything"
    report = C.check_answer(written(opt, steps))
    assert report.all_right, C.report_lines(report)
    noted = {v.key for v in report.verdicts if v.note}
    assert noted == set(off)
    assert "computed from your rounded earlier values" in "\n".join(C.report_lines(report))


def test_an_unexplained_slip_is_wrong_without_a_diagnosis():
    opt = TWO_HEADS
    steps = C.run_steps(trace_of(opt))
    steps[("H", 1)] = steps[("H", 1)].clone()
    steps[("H", 1)][2, 0] += 0.25
    report = C.check_answer(written(opt, {k: v for k, v in steps.items() if k[0] == "H"}))
    assert [v.right for v in report.verdicts] == [True, False]
    assert report.first_wrong.label == "heads[1].H"
    assert not report.diagnoses
    text = "\n".join(C.report_lines(report))
    assert "No single common mistake" in text
    assert "1 of 9 entries off" in text


def test_tolerance_follows_the_decimals_written():
    opt = TWO_HEADS
    A = C.run_steps(trace_of(opt))[("A", 0)].clone()
    A[1, 0] += 0.003  # off by 0.003: within ±0.005 (2 decimals), not ±0.0005 (3 decimals)
    keys = {("A", 0): A}
    two = C.check_answer(written_at(opt, keys, 2))
    three = C.check_answer(written_at(opt, keys, 3))
    assert two.all_right and two.verdicts[0].decimals == 2
    assert not three.all_right and three.verdicts[0].decimals == 3


def written_at(opt, steps, decimals):
    doc = C.answer_from_steps(steps, {"exercise": opt.to_json()}, decimals)
    return answer(doc, decimals)


def r3(t: torch.Tensor) -> list:
    return [[round(x, 3) for x in row] for row in t.tolist()]


def test_gradients_are_checked():
    opt = ExerciseOptions(seed=3, backward=True)
    tr = trace_of(opt)
    from attention_ref import reference as ref

    g = ref.attention_backward(tr)
    grads = {"W_O": r3(g.W_O), "X": r3(g.X),
             "heads": [{"A": r3(g.head(0)["A"]), "W_Q": r3(g.head(0)["W_Q"])}]}  # fmt: skip
    right = C.check_answer(answer({"exercise": opt.to_json(), "grads": grads}))
    assert right.all_right and [v.label for v in right.verdicts] == [
        "grads.heads[0].A", "grads.heads[0].W_Q", "grads.W_O", "grads.X"]  # fmt: skip
    grads["X"][0][0] += 1
    wrong = C.check_answer(answer({"exercise": opt.to_json(), "grads": grads}))
    assert wrong.first_wrong.label == "grads.X" and not wrong.diagnoses


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "must be a JSON object"),
        ({"heads": [{"Q": [[1]]}]}, "exactly one of"),
        ({"exercise": {"seed": 1}, "example": "life-is-awesome", "output": [[1]]}, "exactly one"),
        ({"exercise": {"seed": 1}, "nope": 1}, "unknown key 'nope'"),
        ({"exercise": {"seed": 1}}, "no step to check"),
        ({"exercise": {"seed": 1, "heads": 3}, "output": [[1]]}, "--heads must divide"),
        ({"exercise": {"tokens": 3}, "output": [[1]]}, 'needs "seed"'),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, 2], [3]]}]}, "ragged"),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, "x"]]}]}, "write a number"),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, True]]}]}, "not a number"),
        ({"exercise": {"seed": 1}, "heads": [{"Z": [[1]]}]}, "unknown step 'Z'"),
        ({"exercise": {"seed": 1}, "heads": [{}, {}, {}]}, "h = 2 heads"),
        ({"example": "hello-shiny-sun", "output": [[1]]}, '"example" must be one of'),
        ({"exercise": {"seed": 1}, "grads": {"Y": [[1]]}}, "unknown key 'Y'"),
    ],
)
def test_bad_answers_say_what_is_wrong(doc, message):
    with pytest.raises(InputError, match=message):
        C.parse_answer(json.loads(json.dumps(doc), parse_float=C._Literal))


def test_nan_in_the_file_is_refused(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('{"exercise": {"seed": 1}, "output": [[NaN]]}', encoding="utf-8")
    with pytest.raises(InputError, match='write "-inf"'):
        C.load_answer(p)


def test_masked_entries_may_be_written_minus_inf():
    opt = TWO_HEADS
    S_masked = C.run_steps(trace_of(opt))[("S_masked", 0)]
    assert math.isinf(float(S_masked[0, 1]))
    report = C.check_answer(written(opt, {("S_masked", 0): S_masked}))
    assert report.all_right
    flipped = S_masked.clone()
    flipped[0, 1] = 0.0  # a masked entry written as a number is wrong
    assert not C.check_answer(written(opt, {("S_masked", 0): flipped})).all_right
