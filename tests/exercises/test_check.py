"""``attnref check``'s grading: by the decimals the exercise asks, never by those written.

The judge is tested first with what it must refuse (the one-hot A, the integer S, answers to
2 decimals), then with what it must accept (the exact values to 3 decimals, a student who
rounds every step and carries on from the rounded values, entries whose zeros were dropped),
on 100 seeds. The student below is written with torch alone, not with the checker's chain.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import torch

from attention_ref import reference as ref
from attention_ref.exercises.answer import (
    Problem,
    answer_from_steps,
    answer_text,
    parse_answer,
    read_answer_text,
)
from attention_ref.exercises.catalogue import mistakes_for
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.exercise import ExerciseOptions, draw_problem
from attention_ref.exercises.grader import Status, check_document, report_lines
from attention_ref.inputs.attention_input import InputError, parse_input
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.gradients import input_trace

FORWARD_NAMES = ("Q", "K", "V", "scores", "S", "S_masked", "A", "H", "concat", "output")


def r(t: torch.Tensor, p: int) -> torch.Tensor:
    t = torch.as_tensor(t)
    return torch.where(torch.isinf(t), t, t.round(decimals=p))


def student(tr: ref.AttentionTrace, p: int = 3) -> dict:
    """Every step by hand: each computed from the previous steps as written (rounded to p)."""
    out: dict = {}
    heads = []
    X, M = torch.as_tensor(tr.X), None if tr.M is None else torch.as_tensor(tr.M)
    for i in range(tr.h):
        Q, K, V = (r(X @ torch.as_tensor(getattr(tr, f"W_{x}")[i]), p) for x in "QKV")
        scores = r(Q @ K.T, p)
        S = r(scores / math.sqrt(tr.d_k), p)
        S_masked = S + M if M is not None else S
        A = r(torch.softmax(S_masked, -1), p)
        H = r(A @ V, p)
        out |= {
            ("Q", i): Q,
            ("K", i): K,
            ("V", i): V,
            ("scores", i): scores,
            ("S", i): S,
            ("S_masked", i): S_masked,
            ("A", i): A,
            ("H", i): H,
        }
        heads.append(H)
    concat = torch.cat(heads, -1)
    out[("concat", None)] = concat
    out[("output", None)] = r(concat @ torch.as_tensor(tr.W_O), p) if tr.W_O is not None else concat
    return out


def options(seed: int) -> ExerciseOptions:
    """A problem per seed, its shape drawn from the seed too (n, d_model, h, causal)."""
    rng = random.Random(seed)
    d_model = rng.choice([2, 3, 4, 6, 8])
    heads = rng.choice([h for h in (1, 2, 4) if d_model % h == 0])
    return ExerciseOptions(
        seed=seed,
        tokens=rng.randint(1, 5),
        d_model=d_model,
        heads=heads,
        causal=rng.random() < 0.75,
    )


def check_text(text: str):
    return check_document(read_answer_text(text))


def check_steps(prob: Problem, steps: dict, decimals: int = 3, keys=FORWARD_NAMES, **kw):
    """The steps written to ``decimals`` places (``0.670``), as a student hands them in."""
    doc = answer_from_steps(steps, prob.naming, decimals, keys=keys)
    return check_text(answer_text(doc, decimals))


# --- what the judge must refuse -------------------------------------------------------------


def life_problem() -> Problem:
    return parse_answer({"example": "life-is-awesome", "output": [[0]]}).problem


def test_the_one_hot_A_with_integer_H_and_output_is_not_right():
    """The issue's answer: A⁽¹⁾ = [[1,0,0],[1,0,0],[0,0,1]], H and output computed from it."""
    tr = life_problem().trace.reference()
    A = torch.tensor([[1, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=torch.float64)
    H = A @ tr.V[0]
    concat = torch.cat([H, tr.H[1].round()], -1)
    doc = {
        "example": "life-is-awesome",
        "heads": [{"A": A.int().tolist(), "H": H.int().tolist()}],
        "output": (concat @ tr.W_O).round().int().tolist(),
    }
    report = check_text(json.dumps(doc))
    assert not report.all_right and report.verdicts[0].status is not Status.RIGHT
    assert report_lines(report)[-1] != "Every step you gave is right."
    # negative control: the true A to 3 decimals (0.670, 0.330 in row 2) is right
    right = check_text(
        json.dumps({"example": "life-is-awesome", "heads": [{"A": r(tr.A[0], 3).tolist()}]})
    )
    assert right.all_right and tr.A[0][1, 0].item() == pytest.approx(0.670, abs=5e-4)


def test_integer_S_is_not_right():
    """2 for 2.121: "give 3 decimals"; the same S to 3 decimals is right."""
    for seed in range(6):
        prob = Problem.of_exercise(ExerciseOptions(seed=seed))
        S = prob.trace.reference().S[0]
        assert not torch.equal(S, S.round())  # √2 in the denominator: not integers
        integer = check_text(json.dumps(prob.naming | {"heads": [{"S": S.round().int().tolist()}]}))
        assert integer.verdicts[0].status is Status.FEW_DECIMALS and not integer.all_right
        assert f"give 3 decimals: {int((S.round() != S).sum())} of 9 entries" in "\n".join(
            report_lines(integer)
        )
        three = check_steps(prob, {("S", 0): S}, keys=("S",))
        assert three.all_right


def test_answers_rounded_to_two_decimals_are_never_right():
    for seed in range(40):
        prob = Problem.of_exercise(options(seed))
        exact = computed_steps(prob.data())
        report = check_steps(prob, exact, decimals=2)
        shapes_with_fractions = any(
            not torch.equal(torch.as_tensor(v), r(v, 2)) for v in exact.values()
        )
        assert report.all_right is not shapes_with_fractions, seed
        if not report.all_right:
            assert report.first_wrong is None  # nothing wrong: short of decimals
            assert {v.status for v in report.verdicts} <= {Status.RIGHT, Status.FEW_DECIMALS}


def test_a_wrong_entry_with_three_decimals_is_wrong_not_short_of_decimals():
    prob = Problem.of_exercise(ExerciseOptions(seed=3))
    A = prob.trace.reference().A[1].clone()
    A[2, 0] += 0.004  # off by 8 half-units: no rounding of earlier steps explains it
    report = check_steps(prob, {("A", 1): A}, keys=("A",))
    assert report.verdicts[0].status is Status.WRONG and report.first_wrong.label == "heads[1].A"
    # negative control: off by less than half a unit is right
    A[2, 0] -= 0.0037
    assert check_steps(prob, {("A", 1): A}, keys=("A",)).all_right


# --- what the judge must accept ---------------------------------------------------------------


def test_right_answers_to_three_decimals_pass_on_100_seeds():
    """The exact values rounded; a student who rounds each step and goes on from it; the same
    student's output alone; and the same with trailing zeros dropped (0.67 for 0.670)."""
    carried = short = 0
    for seed in range(100):
        prob = Problem.of_exercise(options(seed))
        exact = computed_steps(prob.data())
        mine = student(prob.trace)
        for steps, keys in ((exact, FORWARD_NAMES), (mine, FORWARD_NAMES), (mine, ("output",))):
            report = check_steps(prob, steps, keys=keys)
            assert report.all_right, (seed, report_lines(report))
            carried += sum(v.carried > 0 for v in report.verdicts)
        # every zero dropped (json writes 0.67 for 0.670, 2.0 for 2.000): right, each entry read
        # at the 3 places asked, even where a whole matrix then holds no entry to 3 places
        text = json.dumps(answer_from_steps(mine, prob.naming, 3, keys=("A", "H", "output")))
        dropped = check_text(text)
        assert dropped.all_right, (seed, report_lines(dropped))
        # (counted: such a matrix where the exact values to 3 places are not those written)
        read = parse_answer(read_answer_text(text)).steps
        short += sum(
            not bool((g.decimals >= 3).any())
            and not np.allclose(np.round(exact[k], 3), g.value, atol=1e-9, equal_nan=True)
            for k, g in read.items()
        )
    assert carried > 20, "the rounding carried must show on some seeds for this to mean much"
    assert short > 0, "a matrix short of places where the exact one needs them: must occur"


def test_entries_with_fewer_decimals_are_read_with_their_zeros_put_back():
    """0.67 is 0.670 wherever it stands (as the statement says): beside entries to 3 places a
    row rounded to 2 is wrong, entry by entry; a matrix written to 2 places throughout is
    "give 3 decimals"; integers written as integers are right (2 for 2.000)."""
    prob = Problem.of_exercise(ExerciseOptions(seed=4, tokens=4))
    tr = prob.trace.reference()
    Q = tr.Q[0].int().tolist()  # integers written as integers: 2 for 2.000
    A = r(tr.A[0], 3)
    row = next(
        i for i in range(4) if any(0 < x < 1 and round(x * 100) != x * 100 for x in A[i].tolist())
    )
    doc = prob.naming | {"heads": [{"Q": Q, "A": A.tolist()}]}
    assert check_text(json.dumps(doc)).all_right
    two = A.clone()
    two[row] = two[row].round(decimals=2)
    report = check_text(json.dumps(prob.naming | {"heads": [{"A": two.tolist()}]}))
    assert report.verdicts[0].status is Status.WRONG
    lines = "\n".join(report_lines(report))
    assert f"[{tr.tokens[row]}," in lines and "First wrong step: A⁽¹⁾ (heads[0].A)." in lines
    whole = check_text(json.dumps(prob.naming | {"heads": [{"A": r(tr.A[0], 2).tolist()}]}))
    assert whole.verdicts[0].status is Status.FEW_DECIMALS
    text = "\n".join(report_lines(whole))
    assert "Not right yet: give 3 decimals in A⁽¹⁾ (heads[0].A) (the exercise asks for 3)." in text


def test_the_rounding_carried_is_said_and_measured():
    """A step off the exact value by more than half a unit, but as the student's own rounded
    earlier steps give it, is right with the distance said; the exact value has no note."""
    for seed in range(30):
        prob = Problem.of_exercise(options(seed))
        report = check_steps(prob, student(prob.trace), keys=("H", "output"))
        noted = [v for v in report.verdicts if v.carried]
        if noted:
            break
    assert report.all_right and noted
    exact = computed_steps(prob.data())
    for v in noted:
        gap = float((r(exact[v.key], 3) - student(prob.trace)[v.key]).abs().max())
        assert (
            v.carried > 0.0005
            and v.carried
            == pytest.approx(
                float((student(prob.trace)[v.key] - torch.as_tensor(exact[v.key])).abs().max())
            )
            and gap > 0
        )
    assert "which the rounding of earlier steps explains" in "\n".join(report_lines(report))
    plain = check_steps(prob, exact, keys=("H", "output"))
    assert plain.all_right and not any(v.carried for v in plain.verdicts)


def test_the_homeworks_printed_numbers_pass_as_an_answer():
    doc = {
        "example": "life-is-awesome",
        "heads": [
            {
                "Q": life.DOC_LIFE_Q[i],
                "K": life.DOC_LIFE_K[i],
                "V": life.DOC_LIFE_V[i],
                "scores": life.DOC_LIFE_QKT[i],
                "A": life.DOC_LIFE_A[i],
                "H": life.DOC_LIFE_H[i],
            }
            for i in range(2)
        ],
        "concat": life.DOC_LIFE_CONCAT,
        "output": life.DOC_LIFE_OUTPUT,
    }
    report = check_text(json.dumps(doc))
    assert report.all_right, report_lines(report)


def test_gradients_are_graded_with_the_rounding_of_the_forward():
    opt = ExerciseOptions(seed=3, backward=True)
    prob = Problem.of_exercise(opt)
    g = ref.attention_backward(input_trace(parse_input(draw_problem(opt))))
    grads = {
        "W_O": r(g.W_O, 3).tolist(),
        "X": r(g.X, 3).tolist(),
        "heads": [{"A": r(g.head(0)["A"], 3).tolist(), "W_Q": r(g.head(0)["W_Q"], 3).tolist()}],
    }
    right = check_text(json.dumps(prob.naming | {"grads": grads}))
    assert right.all_right, report_lines(right)
    assert [v.label for v in right.verdicts] == [
        "grads.W_O",
        "grads.heads[0].A",
        "grads.heads[0].W_Q",
        "grads.X",
    ]
    # ∂S̃ from the student's A rounded to 3 decimals: right, though off the exact value
    A = r(prob.trace.reference().A[0], 3)
    dA = g.head(0)["A"]
    dS = r(A * (dA - (dA * A).sum(-1, keepdim=True)), 3)
    mine = {"heads": [{"A": A.tolist()}], "grads": {"heads": [{"S_masked": dS.tolist()}]}}
    assert check_text(json.dumps(prob.naming | mine)).all_right
    grads["X"][0][0] += 1
    wrong = check_text(json.dumps(prob.naming | {"grads": grads}))
    assert wrong.first_wrong.label == "grads.X"


# --- the report as data, and in words -------------------------------------------------------


def test_the_report_as_data_and_its_json():
    prob = Problem.of_exercise(ExerciseOptions(seed=9))
    steps = computed_steps(prob.data())
    steps[("A", 1)] = steps[("A", 1)].copy()
    steps[("A", 1)][2, 1] += 0.2  # a slip, carried into H⁽²⁾
    steps[("H", 1)] = steps[("A", 1)] @ prob.trace.reference().V[1].numpy()
    report = check_steps(prob, steps, keys=("S", "A", "H"))
    assert (report.steps_given, report.steps_right) == (6, 4)
    assert report.first_wrong.label == "heads[1].A"
    assert report.diagnosis_names == [("slip",)]
    doc = json.loads(json.dumps(report.to_json()))
    assert doc["steps_given"] == 6 and doc["steps_right"] == 4 and doc["all_right"] is False
    assert doc["first_wrong"] == "heads[1].A" and doc["diagnoses"] == [["slip"]]
    assert doc["verdicts"][3]["off"] == [
        {
            "row": 3,
            "col": 2,
            "yours": pytest.approx(float(steps[("A", 1)][2, 1]), abs=5e-4),
            "right": pytest.approx(float(prob.trace.reference().A[1][2, 1])),
            "verdict": "wrong",
        }
    ]
    text = "\n".join(report_lines(report))
    tok = prob.trace.tokens[2]
    assert f"an arithmetic slip in one entry: A⁽²⁾ at [{tok}, 2]" in text


@pytest.mark.parametrize(
    ("keys", "words"), [(("A",), "1 step given"), (("S", "A"), "4 steps given")]
)
def test_the_number_of_steps_is_said_in_good_english(keys, words):
    prob = Problem.of_exercise(ExerciseOptions(seed=2, heads=1 if len(keys) == 1 else 2))
    first = report_lines(check_steps(prob, computed_steps(prob.data()), keys=keys))[0]
    assert f": {words}, graded to 3 decimals." in first and "1 steps" not in first


def test_the_portuguese_report():
    """An exercise drawn in Portuguese is checked in Portuguese: its tokens, words and commas."""
    opt = ExerciseOptions(seed=6, lang="pt")
    prob = Problem.of_exercise(opt)
    assert set(prob.trace.tokens) <= set(
        __import__("attention_ref.exercises.exercise", fromlist=["WORDS"]).WORDS["pt"]
    )
    d = prob.data()
    steps = computed_steps(d, [m for m in mistakes_for(d) if m.name == "no_scale"])
    report = check_steps(prob, steps, keys=("S", "A"))
    text = "\n".join(report_lines(report))
    assert report.lang == "pt"
    for words in (
        "Conferindo a sua resposta",
        "4 passos dados, avaliação com 3 casas decimais",
        "ERRADO",
        "Primeiro passo errado: S⁽¹⁾ (heads[0].S).",
        "Diagnóstico: sem escala: S = Q Kᵀ não foi dividido por √d_k = 1,414.",
        f"[{prob.trace.tokens[0]}, 1]",
    ):
        assert words in text, words
    for english in ("Checking", "WRONG", "Diagnosis", "steps given", "yours", "right"):
        assert english not in text, english
    assert not __import__("re").search(r"\d\.\d", text)  # decimal commas only
    # negative control: the same answer in English
    en = Problem.of_exercise(ExerciseOptions(seed=6))
    text_en = "\n".join(report_lines(check_steps(en, steps, keys=("S", "A"))))
    assert "Diagnosis: no scaling" in text_en and "Conferindo" not in text_en


# --- the answer document ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "must be a JSON object"),
        ({"heads": [{"Q": [[1]]}]}, "exactly one of"),
        ({"exercise": {"seed": 1}, "example": "life-is-awesome", "output": [[1]]}, "exactly one"),
        ({"exercise": {"seed": 1}, "nope": 1}, 'unknown key "nope"'),
        ({"exercise": {"seed": 1}}, "no step given yet"),
        ({"exercise": {"seed": 1}, "heads": [{"Q": None}, None], "output": None}, "no step given"),
        ({"exercise": {"seed": 1, "heads": 3}, "output": [[1]]}, "--heads must divide"),
        ({"exercise": {"tokens": 3}, "output": [[1]]}, 'needs "seed"'),
        ({"exercise": {"seed": 1, "lang": 5}, "output": [[1]]}, '"lang" must be one of'),
        ({"exercise": {"seed": 1, "decimals": 0}, "output": [[1]]}, "--decimals must be"),
        ({"exercise": {"seed": 1}, "lang": "pt", "output": [[1]]}, '"lang" goes inside'),
        ({"example": "life-is-awesome", "lang": "fr", "output": [[1]]}, '"lang" must be'),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, 2], [3]]}]}, "ragged"),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, "x"]]}]}, "write a number"),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, True]]}]}, "not a number"),
        ({"exercise": {"seed": 1}, "heads": [{"Q": [[1, {}]]}]}, "dict: write a number"),
        ({"exercise": {"seed": 1}, "heads": [{"Z": [[1]]}]}, 'unknown step "Z"'),
        ({"exercise": {"seed": 1}, "heads": [{}, {}, {}]}, "h = 2 heads"),
        ({"example": "hello-shiny-sun", "output": [[1]]}, '"example" must be one of'),
        ({"example": ["life-is-awesome"], "output": [[1]]}, '"example" must be one of'),
        ({"exercise": {"seed": 1}, "grads": {"Y": [[1]]}}, 'unknown key "Y"'),
        ({"input": "x.json", "output": [[1]]}, "reads no files"),
        ({"X": [[1]], "heads": []}, "this is the exercise, not an answer"),
        ({"input": {"X": [[1]]}, "output": [[1]]}, "this is the exercise, not an answer"),
    ],
)
def test_bad_answers_say_what_is_wrong(doc, message):
    with pytest.raises(InputError, match=__import__("re").escape(message)):
        check_document(read_answer_text(json.dumps(doc)))


def test_nan_and_huge_numbers_in_the_file_are_refused():
    for text, message in (
        ('{"exercise": {"seed": 1}, "output": [[NaN]]}', 'write "-inf"'),
        ('{"exercise": {"seed": 1}, "output": [[1e999]]}', "too large"),
    ):
        with pytest.raises(InputError, match=message):
            read_answer_text(text)


def test_masked_entries_may_be_written_minus_inf():
    prob = Problem.of_exercise(ExerciseOptions(seed=5, d_model=6))
    S_masked = prob.trace.reference().S_masked[0]
    assert math.isinf(float(S_masked[0, 1]))
    assert check_steps(prob, {("S_masked", 0): S_masked}, keys=("S_masked",)).all_right
    flipped = S_masked.clone()
    flipped[0, 1] = 0.0  # a masked entry written as a number is wrong
    assert not check_steps(prob, {("S_masked", 0): flipped}, keys=("S_masked",)).all_right


def test_a_document_checked_against_a_given_problem():
    """For the gradebook: the problem comes from the assignment, not from the document."""
    prob = Problem.of_exercise(ExerciseOptions(seed=8))
    doc = read_answer_text(
        json.dumps({"heads": [{"A": r(prob.trace.reference().A[0], 3).tolist()}]})
    )
    assert check_document(doc, prob).all_right
    with pytest.raises(InputError, match="exactly one of"):
        check_document(doc)  # negative control: alone, the document names no problem
    other = read_answer_text(json.dumps({"exercise": {"seed": 9}, "output": [[1]]}))
    with pytest.raises(InputError, match="names another problem"):
        check_document(other, prob)
    same = read_answer_text(
        json.dumps(
            {"exercise": {"seed": 8}, "heads": [{"Q": r(prob.trace.reference().Q[0], 3).tolist()}]}
        )
    )
    assert check_document(same, prob).all_right


def test_an_exercise_asking_two_decimals_is_graded_by_two():
    prob = Problem.of_exercise(ExerciseOptions(seed=3, decimals=2))
    exact = computed_steps(prob.data())
    report = check_steps(prob, exact, decimals=2, keys=("S", "A"))
    assert report.all_right and "graded to 2 decimals" in report_lines(report)[0]
    one = check_steps(prob, exact, decimals=1, keys=("S", "A"))
    assert not one.all_right and "give 2 decimals" in "\n".join(report_lines(one))
