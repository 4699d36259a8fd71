"""RoPE's backward mistakes, named (issue 59): written by an independent student in torch (its own
forward with the mistake, its gradients by autograd, or turned back by hand), never with the
checker's chain.

On c0e9f9b a scaling mistake with ``--backward`` went unnamed in 34 of 44 answers (its backward
read the unrotated Q and never turned the gradient back), a rotation mistake differentiated
through the student's own rotation in 59 of 77, and positions from 1 turned back with the right
angles in 18 of 21.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.options import ExerciseOptions

Turn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, halves: bool = False):
    """RoFormer's pairs (2p, 2p + 1) turned by their angles; Hugging Face's (p, p + d/2)."""
    d = x.shape[-1]
    a, b = (x[:, : d // 2], x[:, d // 2 :]) if halves else (x[:, 0::2], x[:, 1::2])
    ra, rb = a * cos - b * sin, a * sin + b * cos
    return torch.cat([ra, rb], -1) if halves else torch.stack([ra, rb], -1).reshape(x.shape)


ROTATIONS: dict[str, Turn] = {
    "right": rope,
    "rope_wrong_sign": lambda x, c, s: rope(x, c, -s),
    "rope_wrong_pair": lambda x, c, s: rope(x, c.flip(-1), s.flip(-1)),
    "rope_half_pairs": lambda x, c, s: rope(x, c, s, halves=True),
}


def student(prob: Problem, *, q: Turn, k: Turn, scale: float, shift: int = 0, back=None):
    """The answer of a student whose forward turns Q by ``q`` and K by ``k`` (at positions
    from ``shift``) and divides the scores by ``scale``; gradients of L = Σ output by autograd
    (through their own rotation), or, with ``back`` (cos, sin of the right angles), ∂Q_rot and
    ∂K_rot turned back by hand by the right rotation."""
    tr = prob.trace
    T = {n: torch.tensor(getattr(tr, n), requires_grad=True) for n in ("X", "W_Q", "W_K", "W_V")}
    W_O = torch.tensor(tr.W_O, requires_grad=True)
    angles = torch.tensor(tr.angles + shift * tr.theta)
    cos, sin = torch.cos(angles), torch.sin(angles)
    M = None if tr.M is None else torch.tensor(tr.M)
    K = [T["X"] @ T["W_K"][j] for j in range(tr.g)]
    V = [T["X"] @ T["W_V"][j] for j in range(tr.g)]
    K_rot = [k(x, cos, sin) for x in K]
    for x in K_rot:
        x.retain_grad()
    heads, kept = [], {}
    for i in range(tr.h):
        Q_rot = q(T["X"] @ T["W_Q"][i], cos, sin)
        Q_rot.retain_grad()
        S = Q_rot @ K_rot[tr.group(i)].T / scale
        S_masked = S + M if M is not None else S
        S_masked.retain_grad()
        A = torch.softmax(S_masked, -1)
        A.retain_grad()
        heads.append(A @ V[tr.group(i)])
        kept[i] = (Q_rot, S_masked, A)
    output = torch.cat(heads, -1) @ W_O
    output.sum().backward()
    _, S_masked0, A0 = kept[0]
    steps = {
        ("output", None): output.detach().numpy(),
        ("grad.W_O", None): W_O.grad.numpy(),
        ("grad.A", 0): A0.grad.numpy(),
        ("grad.S_masked", 0): S_masked0.grad.numpy(),
        ("grad.W_Q", 0): T["W_Q"].grad[0].numpy(),
        ("grad.X", None): T["X"].grad.numpy(),
    }
    if back is not None:  # ∂Q = ∂Q_rot R_m and ∂K = ∂K_rot R_m, by the right angles
        c, s = back
        X = T["X"].detach()
        dX = value_path(prob, kept, W_O)  # ∂V's path: no rotation on it
        for i in range(tr.h):
            dQ = rope(kept[i][0].grad, c, -s)
            dX = dX + dQ @ T["W_Q"][i].detach().T
            if i == 0:
                steps["grad.W_Q", 0] = (X.T @ dQ).numpy()
        for j in range(tr.g):
            dX = dX + rope(K_rot[j].grad, c, -s) @ T["W_K"][j].detach().T
        steps["grad.X", None] = dX.numpy()
    return steps


def value_path(prob: Problem, kept: dict, W_O: torch.Tensor) -> torch.Tensor:
    """Σ_j ∂V⁽ʲ⁾ W_V⁽ʲ⁾ᵀ: ∂V⁽ʲ⁾ = Σ_{i in group j} A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾, ∂H⁽ⁱ⁾ the head's columns of
    G W_Oᵀ (G all ones)."""
    tr = prob.trace
    G = torch.ones(tr.output_shape, dtype=torch.float64)
    dconcat = G @ W_O.detach().T
    total = torch.zeros(tr.X.shape, dtype=torch.float64)
    for i in range(tr.h):
        dH = dconcat[:, i * tr.d_v : (i + 1) * tr.d_v]
        dV = kept[i][2].detach().T @ dH
        total += dV @ torch.tensor(tr.W_V[tr.group(i)]).T
    return total


def check(prob: Problem, steps: dict):
    doc = answer_from_steps(steps, prob.naming, 3, keys=tuple({k[0] for k in steps}))
    return check_document(read_answer_text(answer_text(doc, 3)))


#: (variant, h, d_model): d_k = 4 throughout (two pairs: the wrong pair and the halves show)
PROBLEMS = [("rope", 1, 4), ("rope", 2, 8), ("gqa+rope", 2, 8)]


def problems():
    for variant, heads, d_model in PROBLEMS:
        for seed in range(3):
            opt = ExerciseOptions(
                seed=seed, variant=variant, heads=heads, d_model=d_model, tokens=3, backward=True
            )
            yield Problem.of_exercise(opt)


def right_scale(prob: Problem) -> float:
    return math.sqrt(prob.trace.d_k)


def test_the_right_student_is_right():
    """The control: the right forward and autograd's gradients, and the same turned back by
    hand, are right: the harness computes what the checker calls right."""
    for prob in problems():
        steps = student(prob, q=rope, k=rope, scale=right_scale(prob))
        report = check(prob, steps)
        assert report.all_right, report_lines(report)
        angles = torch.tensor(prob.trace.angles)
        by_hand = student(
            prob,
            q=rope,
            k=rope,
            scale=right_scale(prob),
            back=(torch.cos(angles), torch.sin(angles)),
        )
        assert check(prob, by_hand).all_right


@pytest.mark.parametrize("name", ["rope_wrong_sign", "rope_wrong_pair", "rope_half_pairs"])
def test_a_rotation_mistake_differentiated_through_the_students_own_rotation_is_named(name):
    turn = ROTATIONS[name]
    for prob in problems():
        report = check(prob, student(prob, q=turn, k=turn, scale=right_scale(prob)))
        assert (name,) in report.diagnosis_names, (prob.source, report_lines(report))


@pytest.mark.parametrize(
    "name, q, k",
    [
        ("rope_keys_not_rotated", rope, lambda x, c, s: x),
        ("rope_queries_not_rotated", lambda x, c, s: x, rope),
    ],
)
def test_one_side_not_rotated_differentiated_as_computed_is_named(name, q, k):
    for prob in problems():
        report = check(prob, student(prob, q=q, k=k, scale=right_scale(prob)))
        assert (name,) in report.diagnosis_names, (prob.source, report_lines(report))


def test_positions_from_1_turned_back_by_the_right_angles_is_named():
    """Positions from 1 in the forward, the gradient turned back by the right angles (from 0)
    by hand: named. Through the student's own (shifted) rotation, by autograd, every step is
    right: the scores depend on t − u only, so L is the same function of X and the weights
    and nothing shows (the checker says so: right, no diagnosis)."""
    for prob in problems():
        angles = torch.tensor(prob.trace.angles)
        own = student(prob, q=rope, k=rope, scale=right_scale(prob), shift=1)
        right = student(
            prob,
            q=rope,
            k=rope,
            scale=right_scale(prob),
            shift=1,
            back=(torch.cos(angles), torch.sin(angles)),
        )
        assert check(prob, own).all_right
        report = check(prob, right)
        assert report.diagnosis_names == [("rope_positions_from_1",)], (
            prob.source,
            report_lines(report),
        )


def test_a_scaling_mistake_with_rope_is_named_in_the_backward():
    """Scores divided by d_k (or √d_model): its backward through the rotated Q and K, turned
    back (34 of 44 unnamed on c0e9f9b)."""
    for prob in problems():
        tr = prob.trace
        for name, c in (("scale_d_k", float(tr.d_k)), ("scale_d_model", math.sqrt(tr.d_model))):
            if math.isclose(c, right_scale(prob)):
                continue
            report = check(prob, student(prob, q=rope, k=rope, scale=c))
            assert any(name in n[0] for n in report.diagnosis_names), (
                prob.source,
                report_lines(report),
            )
