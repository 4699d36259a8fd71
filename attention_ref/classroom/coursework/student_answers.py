"""Answers as a student writes them: right, rounded as they go, mistaken, slipped, partial.

Each answer is every step of the problem's attention (the homework's, or a variant's) written
to the decimals asked (`attention_ref.exercises.answer.answer_text`), as the bytes of an answer
file. The homework's grader counts the steps of a whole answer with `right_answer`
(`attention_ref.classroom.exchange.grade.steps_asked`); the simulated class
(`attnref_book.simulated.simulate`) sends all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attention_ref.exercises.answer import Problem
    from attention_ref.exercises.intervals import Array


def _write(steps: dict[Any, Array], prob: Problem, decimals: int, **kw: Any) -> bytes:
    import numpy as np

    from attention_ref.exercises.answer import answer_from_steps, answer_text
    from attention_ref.exercises.problem import FINAL_STEPS

    steps = {k: v for k, v in steps.items() if not np.isnan(v).any()}
    # the steps of the problem's layout: its heads', its K/V heads' (none apart from the heads
    # in the homework's attention), then the concat and the output
    lay = prob.chain.layout
    keys = (*lay.heads, *(f"kv.{n}" for n in lay.kv_heads), *FINAL_STEPS)
    doc = answer_from_steps(steps, prob.naming, decimals, **{"keys": keys, **kw})
    return answer_text(doc, decimals).encode()


def _chain(prob: Problem) -> tuple[Sequence[Any], Sequence[Any]]:
    """The forward stages (what an answer holds) and the catalogue of the problem."""
    return prob.data().forward, prob.chain.catalogue


def right_answer(prob: Problem, decimals: int) -> bytes:
    """Every step, exact, written to ``decimals`` places."""
    from attention_ref.exercises.chain import computed_steps

    stages, _ = _chain(prob)
    return _write(computed_steps(prob.data(), (), stages), prob, decimals)


def carried_answer(prob: Problem, decimals: int) -> bytes:
    r"""Each step computed from the earlier steps as the student wrote them (rounded to
    ``decimals``): :math:`S = \mathrm{rnd}(QK^\top/\sqrt{d_k})`, :math:`A = \mathrm{softmax}(
    \mathrm{rnd}(\tilde S))`, :math:`H = \mathrm{rnd}(A) V`, output :math:`= \mathrm{rnd}(
    \text{concat}) W_O` (RoPE's cosines and sines as the statement prints them): right,
    within what the rounding carries, on every problem."""
    from attention_ref.exercises.chain import carried_steps

    stages, _ = _chain(prob)
    return _write(carried_steps(prob.data(), stages, decimals), prob, decimals)


def mistaken_answer(prob: Problem, decimals: int, names: Sequence[str]) -> bytes | None:
    """Every step as the mistakes ``names`` (of the catalogue, on this problem) make it, or
    ``None`` when one of them does not exist on this problem."""
    from attention_ref.exercises.catalogue import mistakes_for
    from attention_ref.exercises.chain import computed_steps

    stages, catalogue = _chain(prob)
    found = {
        m.name: m for m in mistakes_for(prob.data(), stages, decimals, catalogue) if m.rank == 0
    }
    if any(n not in found for n in names):
        return None
    return _write(computed_steps(prob.data(), [found[n] for n in names], stages), prob, decimals)


def slip_answer(prob: Problem, decimals: int) -> bytes:
    """Every step right but one entry of the output, off by 1 (an arithmetic slip)."""
    from attention_ref.exercises.chain import computed_steps

    steps = dict(computed_steps(prob.data()))
    out = steps[("output", None)].copy()
    out[-1, 0] += 1
    steps[("output", None)] = out
    return _write(steps, prob, decimals)


def partial_answer(prob: Problem, decimals: int) -> bytes:
    """Only the projections and the scores (a student who stopped half way), right."""
    from attention_ref.exercises.chain import computed_steps

    return _write(computed_steps(prob.data()), prob, decimals, keys=("Q", "K", "V", "scores", "S"))
