"""The checker's band and names, exact (issue 41): each case is one an independent solver found
the checker getting wrong, written as the answer a student sends.

- after a step the student gave, the band is that step's rounding, its ends included (issue 59:
  never a shrink), and nothing wider: two units off is a slip;
- a matrix written wholly to fewer places than asked is read at the places asked (issue 59);
- a large number is a stand-in for −∞ only where a −∞ belongs;
- a mistake that changes none of the steps given is never their diagnosis;
- with more than four heads, two heads swapped are tried (and the generator draws again where
  a swap would be hidden).
"""

from __future__ import annotations

import json

import torch

from attention_ref.exercises import chain
from attention_ref.exercises.answer import answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.catalogue import mistakes_for
from attention_ref.exercises.draw import Problem, draw
from attention_ref.exercises.grader import Status, check_document, report_lines
from attention_ref.exercises.options import ExerciseOptions


def computed_steps(*args: object, **kw: object) -> dict:
    """`attention_ref.exercises.chain.computed_steps` (numpy) as torch tensors, for the torch
    arithmetic of these tests."""
    return {k: torch.tensor(v) for k, v in chain.computed_steps(*args, **kw).items()}  # type: ignore[arg-type]


def check(text: str):
    return check_document(read_answer_text(text))


def test_after_a_given_step_the_band_is_its_rounding_ends_included():
    """Seed 23: W_O's second column is a unit column, so output[3, 2] is concat[3, 2]; the
    concat given to 3 places (2.401) carries 2.401 or an unrounded value that rounds to it,
    either way at a tie: 2.4005 to 2.4015, ends in (no shrink). So the output is 2.401, or
    2.400 and 2.402 (those ends rounded the other way); two units off is a slip, named."""
    prob = Problem.of_exercise(ExerciseOptions(seed=23))
    W_O = prob.trace.W_O
    assert W_O is not None and W_O[:, 1].tolist() == [0.0, 1.0, 0.0, 0.0]
    steps = computed_steps(prob.data())
    text = answer_text(answer_from_steps(steps, prob.naming, 3, keys=("concat", "output")), 3)
    assert "[1.802, 2.401, 4.816, 5.217]" in text
    assert check(text).all_right  # the control: the right answer
    for tie in ("2.40", "2.400", "2.402"):
        report = check(text.replace("[1.802, 2.401, 4.816", f"[1.802, {tie}, 4.816"))
        assert report.all_right, (tie, report_lines(report))
    for slip in ("2.399", "2.403", "2.4026"):  # 2.4026 rounds to 2.403
        report = check(text.replace("[1.802, 2.401, 4.816", f"[1.802, {slip}, 4.816"))
        output = report.verdicts[-1]
        assert output.key == ("output", None) and output.status is Status.WRONG, slip
        assert [(o.row, o.col) for o in output.off] == [(2, 1)], slip


def test_a_matrix_written_wholly_to_fewer_places_is_read_at_the_places_asked():
    """RoPE seed 1 (one head): the scores to 2 places, every one, read to 3 places (12.00 is
    12.000), a rounding of what the rounded cosines carry: right, as the same values written
    to 3 places are. A matrix whose entries are the exact ones rounded to 2 places and not
    right at 3 (seed 4's A) is "give 3 decimals"."""
    prob = Problem.of_exercise(ExerciseOptions(seed=1, variant="rope", heads=1))
    two = "[[12.00, 8.20, 5.60], [3.97, 5.00, 10.68], [-4.07, -0.87, 15.00]]"
    three = "[[12.000, 8.200, 5.600], [3.970, 5.000, 10.680], [-4.070, -0.870, 15.000]]"
    for shown in (two, three):
        doc = json.dumps(prob.naming)[:-1] + ', "heads": [{"scores": ' + shown + "}]}"
        report = check(doc)
        assert report.all_right, report_lines(report)
    # the control: one entry read to 3 places outside every rounding is wrong, written either way
    for shown in (two.replace("5.60]", "5.61]"), three.replace("5.600]", "5.610]")):
        doc = json.dumps(prob.naming)[:-1] + ', "heads": [{"scores": ' + shown + "}]}"
        assert check(doc).verdicts[0].status is Status.WRONG, shown
    plain = Problem.of_exercise(ExerciseOptions(seed=4))
    A = computed_steps(plain.data())[("A", 0)]
    assert not torch.equal(A.round(decimals=2), A.round(decimals=3))
    doc = json.dumps(plain.naming | {"heads": [{"A": A.round(decimals=2).tolist()}]})
    assert check(doc).verdicts[0].status is Status.FEW_DECIMALS


def test_a_large_wrong_gradient_is_graded_not_refused_as_a_stand_in():
    """--backward, 4 tokens, d_model 8, 2 heads, seed 5: softmax over the columns with the
    key's backward formulas gives ∂L/∂X near −1502; ∂X has no masked entry."""
    prob = Problem.of_exercise(ExerciseOptions(seed=5, backward=True, tokens=4, d_model=8, heads=2))
    d = prob.data()
    stages = d.forward + BACKWARD
    columns = [
        m
        for m in mistakes_for(d, stages, 3, prob.chain.catalogue)
        if m.name == "softmax_columns" and not getattr(m, "backward", False)
    ]
    steps = computed_steps(d, columns, stages)
    assert float(steps[("grad.X", None)].min()) < -1000
    report = check(answer_text(answer_from_steps(steps, prob.naming, 3, keys=("grad.X",)), 3))
    assert not report.all_right and report.first_wrong.key == ("grad.X", None)
    # the control: -1e9 where a −∞ belongs is still refused with the spelling to write
    masked = computed_steps(d)[("S_masked", 0)]
    rows = [["-1e9" if torch.isinf(x) else round(float(x), 3) for x in row] for row in masked]
    text = json.dumps(prob.naming | {"heads": [{"S_masked": rows}]}).replace('"-1e9"', "-1e9")
    try:
        check(text)
    except ValueError as e:
        assert 'write "-inf" for a masked entry' in str(e)
    else:
        raise AssertionError("a stand-in for −∞ was graded")


def test_a_mistake_that_cannot_change_the_steps_given_is_not_their_diagnosis():
    """RoPE seed 0 (one head): S alone with one entry 0.001 off. Positions counted from 1 turn
    every row further but leave Q_rot K_rotᵀ as it is (it depends on t − u only): the slip is
    the diagnosis."""
    prob = Problem.of_exercise(ExerciseOptions(seed=0, variant="rope", heads=1))
    S = torch.round(computed_steps(prob.data())[("S", 0)], decimals=3)
    assert float(S[2, 0]) == -1.059
    S[2, 0] = -1.060
    report = check(json.dumps(prob.naming | {"heads": [{"S": S.tolist()}]}))
    assert report.diagnosis_names == [("slip",)], report_lines(report)
    # the control: with Q_rot given too, positions from 1 change a step given, and are named
    shifted = [
        m
        for m in mistakes_for(prob.data(), None, 3, prob.chain.catalogue)
        if m.name == "rope_positions_from_1"
    ]
    steps = computed_steps(prob.data(), shifted)
    text = answer_text(answer_from_steps(steps, prob.naming, 3, keys=("Q_rot", "S")), 3)
    assert check(text).diagnosis_names == [("rope_positions_from_1",)]


def test_two_heads_swapped_are_named_with_eight_heads():
    prob = Problem.of_exercise(ExerciseOptions(seed=0, d_model=8, heads=8))
    H = [computed_steps(prob.data())[("H", i)] for i in range(8)]
    swapped = torch.round(torch.cat([H[1], H[0], *H[2:]], -1), decimals=3)
    report = check(json.dumps(prob.naming | {"concat": swapped.tolist()}))
    assert report.diagnosis_names == [("heads_swapped",)], report_lines(report)
    assert "[H⁽²⁾ | H⁽¹⁾ | H⁽³⁾" in "\n".join(report_lines(report))
    # when nothing reproduces, the report says which orders it tried (not every one of 8!)
    off = swapped.clone()
    off[0, 0] += 0.5
    off[1, 1] += 0.5
    lines = "\n".join(report_lines(check(json.dumps(prob.naming | {"concat": off.tolist()}))))
    assert "the heads' order (two swapped, or all reversed)" in lines


def test_the_generator_draws_again_where_two_of_eight_heads_would_hide_a_swap():
    """GQA with 8 query heads, seed 37: its first draw gives two query heads the same H, so a
    swap of them changes nothing; the generator draws again."""
    opt = ExerciseOptions(seed=37, variant="gqa", heads=8, d_model=8)
    drawn = draw(opt)
    assert drawn.draws > 1 and {m.name for m in drawn.hidden} == {"no_scale"}  # d_k = 1
    H = [computed_steps(Problem.of_exercise(opt).data())[("H", i)] for i in range(8)]
    assert all(not torch.allclose(H[i], H[j], atol=1e-3) for i in range(8) for j in range(i))


def test_a_slip_is_named_whether_the_student_carried_it_rounded_or_not():
    """Seed 15: A⁽¹⁾[3, 3] slipped to 0.943 (0.993 is right); H⁽¹⁾[3, 2] is 3.786 from the A
    written, 3.785 from its unrounded entries (0.007032·2 + 0.000416 + 0.9428·4): both name
    the slip."""
    prob = Problem.of_exercise(ExerciseOptions(seed=15))
    steps = computed_steps(prob.data())
    A = torch.round(steps[("A", 0)], decimals=3)
    H = torch.round(steps[("H", 0)], decimals=3)
    assert A[2].tolist() == [0.007, 0.0, 0.993]
    A[2, 2] = 0.943
    for h in (3.786, 3.785):
        H[2] = torch.tensor([0.943, h], dtype=torch.float64)
        doc = prob.naming | {"heads": [{"A": A.tolist(), "H": H.tolist()}]}
        report = check(json.dumps(doc))
        assert report.diagnosis_names == [("slip",)], (h, report_lines(report))
    H[2, 1] = 3.790  # the control: no rounding of the slipped row gives 3.790
    report = check(json.dumps(prob.naming | {"heads": [{"A": A.tolist(), "H": H.tolist()}]}))
    assert report.diagnosis_names != [("slip",)]


def test_a_slip_in_the_windows_mask_is_carried_into_the_masked_scores():
    """A window of 2 keys over 4 tokens: M_win[4, 2] written 0 (token 4 sees token 2 too), and
    S̃ and A computed from that M: the slip in M is the diagnosis."""
    prob = Problem.of_exercise(ExerciseOptions(seed=3, variant="window", tokens=4))
    steps = computed_steps(prob.data())
    M = steps[("M", None)].clone()
    assert float(M[3, 1]) == float("-inf")
    M[3, 1] = 0.0
    steps[("M", None)] = M
    for i in range(prob.trace.h):
        steps[("S_masked", i)] = steps[("S", i)] + M
        steps[("A", i)] = torch.softmax(steps[("S_masked", i)], -1)
    text = answer_text(answer_from_steps(steps, prob.naming, 3, keys=("M", "S_masked", "A")), 3)
    report = check(text.replace("-Infinity", '"-inf"'))
    assert report.diagnosis_names == [("slip",)], report_lines(report)
    assert "M_win at [sleep, 2] is 0.000 where −∞ is right" in "\n".join(report_lines(report))


def test_a_forward_mistake_carried_consistently_into_the_backward_is_named():
    """--backward, seed 3: a student who did not scale S and then differentiated what they
    computed (∂Q = ∂S K, ∂K = ∂Sᵀ Q, no 1/√d_k) gives every gradient from that: no scaling is
    the diagnosis, as it is for the same S with the key's backward formulas; and so for each
    forward mistake the catalogue carries into the backward."""
    from dataclasses import replace

    from attention_ref.exercises.backward import CONSISTENT_BACKWARD

    prob = Problem.of_exercise(ExerciseOptions(seed=3, backward=True))
    d = prob.data()
    stages = d.forward + BACKWARD
    forward = {m.name: m for m in mistakes_for(d, d.forward, 3, prob.chain.catalogue)}
    keys = ("S", "A", "H", "output", "grad.W_O", "grad.A", "grad.S_masked", "grad.W_Q", "grad.X")

    def diagnosis(m) -> list:
        steps = computed_steps(d, [m], stages)
        text = answer_text(answer_from_steps(steps, prob.naming, 3, keys=keys), 3)
        return check(text.replace("-Infinity", '"-inf"')).diagnosis_names

    by_hand = {
        "grad.Q": lambda d, e, i: e["grad.S", i] @ e["K", i],
        "grad.K": lambda d, e, i: e["grad.S", i].T @ e["Q", i],
    }
    no_scale = forward["no_scale"]
    assert diagnosis(replace(no_scale, stages={**no_scale.stages, **by_hand})) == [("no_scale",)]
    assert diagnosis(no_scale) == [("no_scale",)]  # the key's backward formulas
    for name, back in CONSISTENT_BACKWARD.items():
        m = forward[name]
        assert diagnosis(replace(m, stages={**m.stages, **back})) == [(name,)], name
