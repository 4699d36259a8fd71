"""The chain of steps the checker grades with: points equal the reference, intervals enclose.

The grader's allowance for rounding comes from interval arithmetic
(`attention_ref.exercises.chain`),
so the enclosures are tested against random points inside their inputs (what must be inside),
and just outside them (what must not be).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.exercises.answer import Problem
from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.chain import (
    BASE_FORWARD,
    Data,
    Given,
    Iv,
    carried,
    chain_keys,
    run_chain,
    within,
)
from attention_ref.exercises.exercise import ExerciseOptions, draw_problem
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.inputs.attention_input import parse_input
from attention_ref.worked.gradients import input_trace
from tests.inputs.test_inputs import BIASED

DT = torch.float64
tt = torch.as_tensor  # the chain's numpy arrays, to compare with torch's


def test_points_are_the_reference_forward_and_backward():
    """Nothing rounded, points in: the trace's numbers, and attention_backward's, to 1e-12 (the
    last bits of a float64 product depend on the CPU's matrix kernel, which the chain's 2-D
    products and the trace's batched ones need not share)."""
    traces = [
        input_trace(
            parse_input(draw_problem(ExerciseOptions(seed=s, tokens=4, d_model=4, heads=h)))
        )
        for s, h in ((1, 2), (2, 1), (3, 4))
    ]
    traces.append(input_trace(parse_input(BIASED)))  # biases everywhere, W_O 2×4
    for tr in traces:
        G = torch.randn(tr.output.shape, dtype=DT, generator=torch.Generator().manual_seed(0))
        run = run_chain(
            Data.of(ProblemTrace.of_attention(tr), G.numpy()),
            BASE_FORWARD + BACKWARD,
            decimals=None,
        )
        grads = ref.attention_backward(tr, G)
        for i in range(tr.h):
            for name, value in tr.head(i).items():
                key = ("scores" if name == "QKt" else name, i)
                if key in run.raw:
                    assert torch.allclose(tt(run.raw[key].lo), value, rtol=0, atol=1e-12), key
                    assert torch.allclose(tt(run.raw[key].hi), value, rtol=0, atol=1e-12), key
            for name, value in grads.head(i).items():
                if ("grad." + name, i) in run.raw:
                    assert torch.allclose(tt(run.raw["grad." + name, i].lo), value, atol=1e-12)
        assert torch.allclose(tt(run.raw["output", None].lo), tr.output, rtol=0, atol=1e-12)
        for name in ("X", "W_O", "b_O", "concat"):
            if getattr(grads, name) is None:  # no W_O or b_O: no step either
                assert ("grad." + name, None) not in run.raw
                continue
            assert torch.allclose(
                tt(run.raw["grad." + name, None].lo).reshape(-1),
                getattr(grads, name).reshape(-1),
                atol=1e-12,
            )


def test_the_chain_runs_each_head_then_the_next_step():
    d = Problem.of_exercise(ExerciseOptions(seed=1)).data()
    keys = chain_keys(d, d.forward)
    # the homework's attention is g = h K/V heads: computed once each, then read by their head
    assert keys[:3] == [("Q", 0), ("Q", 1), ("kv.K", 0)] and keys[-2:] == [
        ("concat", None),
        ("output", None),
    ]


def intervals(draw, shape: tuple[int, int]) -> tuple[Iv, torch.Tensor]:
    """An interval matrix and a random point inside it."""
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    mid = torch.randn(shape, dtype=DT, generator=gen) * 2
    rad = torch.rand(shape, dtype=DT, generator=gen) * draw(st.sampled_from([0.0, 1e-3, 0.3]))
    t = torch.rand(shape, dtype=DT, generator=gen) * 2 - 1
    return Iv((mid - rad).numpy(), (mid + rad).numpy()), mid + t * rad


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(1, 5), st.integers(1, 5), st.integers(1, 4))
def test_interval_operations_enclose_every_point_inside(data, n, m, k):
    a, x = intervals(data.draw, (n, m))
    b, y = intervals(data.draw, (m, k))
    c, z = intervals(data.draw, (n, m))
    inside = lambda value, band: bool(within(value.numpy(), band, 0.0).all())  # noqa: E731
    assert inside(x @ y, a @ b)
    assert inside(x * z, a * c) and inside(x + z, a + c) and inside(x - z, a - c)
    assert inside(torch.softmax(x, -1), a.softmax_rows())
    assert inside(x.sum(-1, keepdim=True), a.rowsum()) and inside(x / 3.0, a / 3.0)
    blocked = torch.ones(n, m, dtype=torch.bool).triu(1)
    masked = x.masked_fill(blocked, -math.inf)
    assert inside(torch.softmax(masked, -1), a.fill(blocked.numpy(), -math.inf).softmax_rows())


def test_the_softmax_enclosure_is_tight_enough_to_refuse_a_neighbour():
    """Negative control: a point 0.01 outside the softmax interval is not within it."""
    S = Iv(np.array([[0.0, 1.0]]) - 1e-3, np.array([[0.0, 1.0]]) + 1e-3)
    A = S.softmax_rows()
    exact = torch.softmax(torch.tensor([[0.0, 1.0]], dtype=DT), -1).numpy()
    assert bool(within(exact, A, 0.0).all())
    assert not bool(within(exact + np.array([[0.01, 0.0]]), A, 0.0).all())
    assert float((A.hi - A.lo).max()) < 1e-3  # ∂A/∂S ≤ 1/4: the width shrinks


def test_rounding_carries_integers_as_points_and_fractions_as_both_ends():
    raw = Iv.point(np.array([[2.0, 0.6703, 0.0625]]))
    c = carried(raw, 3)
    assert c.lo.tolist() == [[2.0, 0.670, 0.062]] and c.hi.tolist() == [[2.0, 0.6703, 0.063]]
    assert carried(raw, None) is raw


def test_infinities_are_within_only_equal_infinities():
    band = Iv.point(np.array([[-math.inf, 0.5]]))
    assert within(np.array([[-math.inf, 0.5]]), band, 0.5).tolist() == [[True, True]]
    assert within(np.array([[0.0, -math.inf]]), band, 0.5).tolist() == [[False, False]]


def test_a_step_the_run_accepts_is_carried_from_the_students_numbers():
    """The student's S (3 decimals) is used for A: the point run from it gives their A."""
    d = Problem.of_exercise(ExerciseOptions(seed=4)).data()
    exact = run_chain(d, d.forward, decimals=None)
    S = exact.raw["S", 0].lo.round(3)
    mine = {("S", 0): Given(S, np.full(S.shape, 3))}
    yours = run_chain(d, d.forward, decimals=None, given=mine)
    assert ("S", 0) in yours.taken
    masked = tt(np.where(np.isinf(exact.raw["S_masked", 0].lo), -math.inf, S))
    # to 1e-12: the student's S (3 decimals) moves A by about 1e-4, the CPU's exp its last bits
    assert torch.allclose(tt(yours.raw["A", 0].lo), torch.softmax(masked, -1), rtol=0, atol=1e-12)
    # negative control: S written to 2 decimals is not taken as the student's exact value
    two = {("S", 0): Given(S.round(2), np.full(S.shape, 2))}
    assert ("S", 0) not in run_chain(d, d.forward, decimals=None, given=two).taken
