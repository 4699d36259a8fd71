r"""An exercise's numbers from the grader's own float64 chain, for its key: no torch.

`forward_numbers` stacks the chain's exact steps (`attention_ref.exercises.chain.computed_steps`)
into the fields the worked examples' layout reads from the one trace
(`attention_ref.reference.AttentionTrace`: ``Q`` per query head ``(h, n, d_k)``, ``K``, ``V`` per
K/V head, ``K_rep``, ``V_rep`` the K/V head each query head reads, ``QKt``, ``S``,
``S_masked``, ``A``, ``H``, the concat and the output); `backward_numbers` the gradients of
:math:`L = \sum \text{output}` the key writes (`attention_ref.exercises.backward.BACKWARD`),
per query head what comes through it and per K/V head its group's sum. A test holds both equal
to torch's reference on every preset and combination; the key is then written without importing
torch, whose import alone takes longer than the whole exercise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.chain import Data, Key, computed_steps
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.problem import ProblemTrace


@dataclass(frozen=True)
class ForwardNumbers:
    """The forward's numbers in a grouped-query trace's fields (numpy's float64 arrays)."""

    tokens: tuple[str, ...]
    X: Array
    W_Q: Array
    W_K: Array
    W_V: Array
    Q: Array
    K: Array
    V: Array
    positions: Array
    rope_base: float | None
    Q_rot: Array
    K_rot: Array
    K_rep: Array
    V_rep: Array
    QKt: Array
    S: Array
    M: Array | None
    S_masked: Array
    A: Array
    H: Array
    concat: Array
    W_O: Array | None
    output: Array

    @property
    def h(self) -> int:
        return int(self.Q.shape[0])

    @property
    def g(self) -> int:
        return int(self.K.shape[0])

    @property
    def d_k(self) -> int:
        return int(self.Q.shape[-1])


@dataclass(frozen=True)
class BackwardNumbers:
    """The gradients the key writes: per query head (``heads``) and per K/V head
    (``kv_heads``) in the layout's names, and ∂output, ∂W_O, ∂concat, ∂X."""

    heads: list[dict[str, Array]]
    kv_heads: list[dict[str, Array]]
    output: Array
    W_O: Array | None
    concat: Array
    X: Array


def _stack(steps: dict[Key, Array], name: str, k: int) -> Array:
    return np.stack([steps[name, i] for i in range(k)])


def forward_numbers(tr: ProblemTrace) -> ForwardNumbers:
    """The forward of ``tr`` as the key lays it out, from the chain's exact steps."""
    d = Data.of(tr)
    steps = computed_steps(d, stages=d.forward)
    h, g = tr.h, tr.g
    Q, K = _stack(steps, "Q", h), _stack(steps, "kv.K", g)
    return ForwardNumbers(
        tokens=tr.tokens,
        X=tr.X,
        W_Q=tr.W_Q,
        W_K=tr.W_K,
        W_V=tr.W_V,
        Q=Q,
        K=K,
        V=_stack(steps, "kv.V", g),
        positions=np.arange(tr.X.shape[0], dtype=np.float64),
        rope_base=tr.rope_base,
        Q_rot=_stack(steps, tr.reads_query, h),  # what the scores read: Q, or RoPE's
        K_rot=_stack(steps, tr.reads_key, g),
        K_rep=_stack(steps, "K", h),
        V_rep=_stack(steps, "V", h),
        QKt=_stack(steps, "scores", h),
        S=_stack(steps, "S", h),
        M=tr.M if tr.bias is None else tr.bias + tr.M,  # what is added to S: the bias too
        S_masked=_stack(steps, "S_masked", h),
        A=_stack(steps, "A", h),
        H=_stack(steps, "H", h),
        concat=steps["concat", None],
        W_O=tr.W_O,
        output=steps["output", None],
    )


#: A query head's gradients: the layout's name for each of the chain's steps.
_HEAD = {n: f"grad.{n}" for n in ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")}
_KV = {n: f"grad.kv.{n}" for n in ("K", "V", "W_K", "W_V")}


def backward_numbers(tr: ProblemTrace) -> BackwardNumbers:
    """The gradients of ``L = Σ output`` (``G`` all ones), from the chain's exact backward."""
    d = Data.of(tr)
    steps = computed_steps(d, stages=d.forward + BACKWARD)
    return BackwardNumbers(
        heads=[{n: steps[s, i] for n, s in _HEAD.items()} for i in range(tr.h)],
        kv_heads=[{n: steps[s, j] for n, s in _KV.items()} for j in range(tr.g)],
        output=steps["grad.output", None],
        W_O=steps.get(("grad.W_O", None)),
        concat=steps["grad.concat", None],
        X=steps["grad.X", None],
    )


__all__ = ["BackwardNumbers", "ForwardNumbers", "backward_numbers", "forward_numbers"]
