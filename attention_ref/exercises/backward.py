r"""The backward of the one chain (`attention_ref.exercises.chain`), for every ``g``, with or
without RoPE: the homework's gradients, and those of today's attention.

For :math:`L = \sum \text{output}` (or the upstream gradient ``G``), per query head ``i``:

.. math::
    \partial H^{(i)} = (G W_O^\top)_{[:, i]},\quad \partial A^{(i)} = \partial H^{(i)}
    V^{(\gamma(i))\top},\quad \partial \tilde S^{(i)} = A^{(i)} \odot (\partial A^{(i)} -
    \operatorname{rowsum}(\partial A^{(i)} \odot A^{(i)}))

    \partial Q^{(i)} = \partial S^{(i)} K^{(\gamma(i))} / \sqrt{d_k},\quad
    \partial K^{(i)} = \partial S^{(i)\top} Q^{(i)} / \sqrt{d_k},\quad
    \partial V^{(i)} = A^{(i)\top} \partial H^{(i)}

(``grad.K``, ``grad.V``, ``grad.W_K``, ``grad.W_V`` of a query head: what comes through it);
each K/V head ``j`` collects its group's (``grad.kv.K`` …):
:math:`\partial K^{(j)} = \sum_{i: \gamma(i) = j} \partial K^{(i)}`,
:math:`\partial W_K^{(j)} = X^\top \partial K^{(j)}`; and
:math:`\partial X = \sum_i \partial Q^{(i)} W_Q^{(i)\top} + \sum_j \partial K^{(j)}
W_K^{(j)\top} + \partial V^{(j)} W_V^{(j)\top}`. With :math:`g = h` every group is one head:
the homework's backward. With RoPE the scores read :math:`Q_{\text{rot}}` and
:math:`K_{\text{rot}}`, so the two formulas above give :math:`\partial Q_{\text{rot}}` and
:math:`\partial K_{\text{rot}}`; the rotation of row :math:`m` is linear and orthogonal
(:math:`x'_m = x_m R_m^\top`), so :math:`\partial x_m = \partial x'_m R_m`: each pair turned
back by :math:`-m\theta_p` (`attention_ref.reference.rope.rope_backward`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Final

import numpy as np

from attention_ref.exercises.chain import (
    Data,
    Env,
    Iv,
    Stage,
    StageFn,
    kv_count,
    query_name,
    weight,
)
from attention_ref.exercises.mistakes import Kind, Mistake

Instances = Callable[[Data, Kind], Iterable[Mistake]]


def _turned_back(d: Data, e: Env, dx_read: Iv) -> Iv:
    """∂x from the gradient of what the scores read: the problem's own turn back
    (`attention_ref.exercises.problem.ProblemTrace.turn_back`: RoPE's, ∂x = ∂x_rot R_m), or
    ``dx_read`` itself where the scores read Q and K."""
    back = d.trace.turn_back
    return dx_read if back is None else back(e, dx_read)


def through_reads(fn: StageFn) -> StageFn:
    """A gradient of the queries or keys the scores read (``fn``: ∂Q_rot, ∂K_rot with RoPE),
    turned back to the projection's (∂Q, ∂K): `_turned_back`."""
    return lambda d, e, i: _turned_back(d, e, fn(d, e, i))


def queries_read(d: Data, e: Env, i: int | None) -> Iv:
    """The queries the scores read: ``Q_rot`` with RoPE."""
    return e[query_name(d), i]


def _grad_x(d: Data, e: Env, i: int | None) -> Iv:
    """∂X = Σ_i ∂Q⁽ⁱ⁾ W_Q⁽ⁱ⁾ᵀ + Σ_j ∂K⁽ʲ⁾ W_K⁽ʲ⁾ᵀ + ∂V⁽ʲ⁾ W_V⁽ʲ⁾ᵀ: the query path of every
    query head, the key and value paths of every K/V head (each its group's sum)."""
    total = Iv.point(np.zeros_like(d.trace.X))
    for i in range(d.trace.h):
        total = total + e["grad.Q", i] @ weight(d, "W_Q", i).T
    for j in range(d.g):
        for role in ("K", "V"):
            total = total + e[f"grad.kv.{role}", j] @ weight(d, f"W_{role}", j).T
    return total


def _group_sum(role: str) -> StageFn:
    r"""∂K⁽ʲ⁾ (or ∂V⁽ʲ⁾) of K/V head j: the sum over the query heads of its group of what
    came through each (:math:`\sum_{i: \gamma(i) = j} \partial K^{(i)}`)."""

    def fn(d: Data, e: Env, j: int | None) -> Iv:
        parts = [e[f"grad.{role}", i] for i in range(d.trace.h) if d.group(i) == j]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total

    return fn


def _grad_h(d: Data, e: Env, i: int | None) -> Iv:
    assert i is not None
    d_v = d.trace.d_v
    return e["grad.concat", None].cols(i * d_v, (i + 1) * d_v)


def _grad_s_masked(d: Data, e: Env, i: int | None) -> Iv:
    """∂S̃ = A ⊙ (∂A − rowsum(∂A ⊙ A))."""
    A, dA = e["A", i], e["grad.A", i]
    return A * (dA - (dA * A).rowsum())


BACKWARD: Final[tuple[Stage, ...]] = (
    Stage("grad.output", False, lambda d, e, i: Iv.point(d.G)),
    Stage(
        "grad.W_O",
        False,
        lambda d, e, i: e["concat", None].T @ e["grad.output", None],
        present=lambda d: d.trace.W_O is not None,
    ),
    Stage(
        "grad.b_O",
        False,
        lambda d, e, i: e["grad.output", None].colsum(),
        present=lambda d: d.trace.b_O is not None,
    ),
    Stage(
        "grad.concat",
        False,
        lambda d, e, i: (
            e["grad.output", None] @ Iv.point(d.trace.W_O).T
            if d.trace.W_O is not None
            else e["grad.output", None]
        ),
    ),
    Stage("grad.H", True, _grad_h),
    Stage("grad.A", True, lambda d, e, i: e["grad.H", i] @ e["V", i].T),
    Stage("grad.V", True, lambda d, e, i: e["A", i].T @ e["grad.H", i]),
    Stage("grad.S_masked", True, _grad_s_masked),
    Stage("grad.S", True, lambda d, e, i: e["grad.S_masked", i]),
    # the scores read Q_rot and K_rot with RoPE: ∂S K_rot / √d_k is ∂Q_rot, turned back to ∂Q
    Stage(
        "grad.Q",
        True,
        through_reads(lambda d, e, i: e["grad.S", i] @ e["K", i] / math.sqrt(d.trace.d_k)),
    ),
    Stage(
        "grad.K",
        True,
        through_reads(
            lambda d, e, i: e["grad.S", i].T @ queries_read(d, e, i) / math.sqrt(d.trace.d_k)
        ),
    ),
    Stage("grad.W_Q", True, lambda d, e, i: Iv.point(d.trace.X).T @ e["grad.Q", i]),
    Stage("grad.W_K", True, lambda d, e, i: Iv.point(d.trace.X).T @ e["grad.K", i]),
    Stage("grad.W_V", True, lambda d, e, i: Iv.point(d.trace.X).T @ e["grad.V", i]),
    # the K/V heads collect their groups' gradients (with g = h, each its one head's)
    Stage("grad.kv.K", True, _group_sum("K"), count=kv_count),
    Stage("grad.kv.V", True, _group_sum("V"), count=kv_count),
    Stage(
        "grad.kv.W_K",
        True,
        lambda d, e, j: Iv.point(d.trace.X).T @ e["grad.kv.K", j],
        count=kv_count,
    ),
    Stage(
        "grad.kv.W_V",
        True,
        lambda d, e, j: Iv.point(d.trace.X).T @ e["grad.kv.V", j],
        count=kv_count,
    ),
    Stage("grad.X", False, _grad_x),
)


# --- the same mistake carried consistently into the backward ----------------------------------


def _col_softmax_backward(d: Data, e: Env, i: int | None) -> Iv:
    """∂S̃ of a softmax over the columns: A ⊙ (∂A − colsum(∂A ⊙ A))."""
    A, dA = e["A", i], e["grad.A", i]
    return A * (dA - (dA * A).T.rowsum().T)


#: Per forward mistake, the backward stages of a student who differentiates what they computed
#: (the scores not scaled, K Qᵀ, Aᵀ V, Concat W_Oᵀ, the softmax over the columns).
CONSISTENT_BACKWARD: Final[dict[str, dict[str, StageFn]]] = {
    "no_scale": {
        "grad.Q": through_reads(lambda d, e, i: e["grad.S", i] @ e["K", i]),
        "grad.K": through_reads(lambda d, e, i: e["grad.S", i].T @ queries_read(d, e, i)),
    },
    "K_Qt": {
        "grad.Q": through_reads(
            lambda d, e, i: e["grad.S", i].T @ e["K", i] / math.sqrt(d.trace.d_k)
        ),
        "grad.K": through_reads(
            lambda d, e, i: e["grad.S", i] @ queries_read(d, e, i) / math.sqrt(d.trace.d_k)
        ),
    },
    "At_V": {
        "grad.A": lambda d, e, i: e["V", i] @ e["grad.H", i].T,
        "grad.V": lambda d, e, i: e["A", i] @ e["grad.H", i],
    },
    "transposed_W_O": {
        "grad.concat": lambda d, e, i: e["grad.output", None] @ Iv.point(d.trace.W_O),  # type: ignore[arg-type]
        "grad.W_O": lambda d, e, i: e["grad.output", None].T @ e["concat", None],
    },
    "softmax_columns": {"grad.S_masked": _col_softmax_backward},
}


def carried_back(instances: Instances) -> Instances:
    """The kind's mistakes, and each again written consistently into the backward
    (`CONSISTENT_BACKWARD`; `Mistake.backward`)."""

    def both(d: Data, kind: Kind) -> Iterable[Mistake]:
        for m in instances(d, kind):
            yield m
            back = CONSISTENT_BACKWARD.get(kind.name)
            if back is not None:
                yield replace(m, stages={**m.stages, **back}, backward=True)

    return both


def scaled_back(c: float) -> dict[str, StageFn]:
    """The backward of scores divided by ``c``: ∂Q = ∂S K / c, ∂K = ∂Sᵀ Q / c (with RoPE, of
    the rotated ones, turned back: `through_reads`)."""
    return {
        "grad.Q": through_reads(lambda d, e, i: e["grad.S", i] @ e["K", i] / c),
        "grad.K": through_reads(lambda d, e, i: e["grad.S", i].T @ queries_read(d, e, i) / c),
    }


__all__ = [
    "BACKWARD",
    "CONSISTENT_BACKWARD",
    "carried_back",
    "queries_read",
    "scaled_back",
    "through_reads",
]
