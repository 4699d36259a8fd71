r"""One attention problem as a chain of named stages, in interval arithmetic (the homework's
attention and today's: one chain).

Query heads :math:`i = 1..h`, K/V heads :math:`j = 1..g` (the homework's attention is the
case :math:`g = h`, no window, no rotation), a head of width :math:`d_k`:

.. math::
    Q^{(i)} = X W_Q^{(i)},\quad K^{(j)} = X W_K^{(j)},\quad V^{(j)} = X W_V^{(j)},\qquad
    \gamma(i) = \lfloor i\,g/h \rfloor

    \text{RoPE:}\quad x'_{2p} = x_{2p}\cos m\theta_p - x_{2p+1}\sin m\theta_p,\quad
    x'_{2p+1} = x_{2p}\sin m\theta_p + x_{2p+1}\cos m\theta_p

    S^{(i)} = \frac{Q^{(i)}_{\text{rot}} K^{(\gamma(i))\top}_{\text{rot}}}{\sqrt{d_k}},\quad
    A^{(i)} = \operatorname{softmax}(S^{(i)} + M),\quad H^{(i)} = A^{(i)} V^{(\gamma(i))},\quad
    \text{output} = [H^{(1)} \mid \dots \mid H^{(h)}]\, W_O

with :math:`M` the causal mask, a sliding window's, or none; without RoPE,
:math:`x_{\text{rot}} = x`; biases (an ``--input`` file's) are added after each projection.

A stage maps the intervals (`attention_ref.exercises.intervals.Iv`) of its inputs to the
interval of its exact result (``raw``); the student's rounding then widens it (``carried``),
and the next stages use that. The steps' names are ``attnref explain --format json``'s: per
query head ``Q``, ``Q_rot``, ``K`` and ``V`` (the key and value that head reads: its group's,
rotated with RoPE), ``scores``, ``S``, ``S_masked``, ``A``, ``H``; per K/V head (``"kv_heads"``
in an answer, ``("kv.K", j)`` here) ``K``, ``V``, ``K_rot``; RoPE's cosines and sines are a
stage of their own, rounded like every step, so that a student who uses the printed values is
carried. The backward (`BACKWARD`, of every ``g``, with or without RoPE) follows the forward: per
query head ``grad.K``, ``grad.V`` are what comes through it, per K/V head (``grad.kv.K`` …) their
group's sum.

A chain is data (`Stage`), and a `Change` (a catalogue mistake,
`attention_ref.exercises.mistakes.Mistake`) replaces some of its stages. With
``decimals=None`` nothing is rounded and points stay points: the exact computation, in numpy's
float64 (`attention_ref.reference`'s numbers, to the last bits the CPU's kernels may round
otherwise: 1e-12 in the tests). No torch: ``attnref check`` grades without importing it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np

from attention_ref.exercises.intervals import (
    SLACK,
    Array,
    Given,
    Iv,
    box,
    carried,
    quiet,
    right_at,
    within,
)

if TYPE_CHECKING:
    from attention_ref.exercises.problem import ProblemTrace

#: A step: its stage name and head (0-based; ``None`` after the heads): ``("A", 1)``.
Key = tuple[str, int | None]


# --- the problem and the chain -----------------------------------------------------------------


@dataclass(frozen=True)
class Data:
    """What the stages read: the problem's numbers
    (`attention_ref.exercises.problem.ProblemTrace`: X, the weights, the mask, RoPE's base) and
    the upstream gradient ``G`` of the backward (all ones: ``L = Σ output``)."""

    trace: ProblemTrace
    G: Array

    @classmethod
    def of(cls, trace: ProblemTrace, G: Array | None = None) -> Data:
        if G is None:
            G = np.ones(trace.output_shape)
        return cls(trace, np.asarray(G, dtype=np.float64))

    @property
    def n(self) -> int:
        """The number of tokens."""
        return int(self.trace.X.shape[0])

    @property
    def forward(self) -> tuple[Stage, ...]:
        """The problem's forward: the homework's stages and its features' (`forward_of`)."""
        return forward_of(self.trace.extra)

    @property
    def g(self) -> int:
        """The number of K/V heads (``h`` for the homework's attention)."""
        return self.trace.g

    def group(self, i: int) -> int:
        r"""The K/V head query head ``i`` reads (0-based): :math:`\gamma(i) = \lfloor i g/h
        \rfloor` (`ProblemTrace.group`)."""
        return self.trace.group(i)


Env = Mapping[Key, Iv]
#: A stage's function: the data, the steps so far, the head (``None`` after the heads).
StageFn = Callable[[Data, Env, "int | None"], Iv]
#: a hook on each computed step: (key, raw, the student's value, the run's notes, decimals)
Adjust = Callable[[Key, Iv, "Given | None", MutableMapping[str, object], int], Iv]


class Change(Protocol):
    """What a mistake does to the chain (`attention_ref.exercises.mistakes.Mistake`): stages
    it computes instead (``stages``), steps it writes another way (``written``), and a hook on
    each step that may use the student's numbers (``adjust``; carried on or only written)."""

    @property
    def stages(self) -> Mapping[str, StageFn]: ...

    @property
    def written(self) -> Mapping[str, Callable[[Iv], Iv]]: ...

    @property
    def adjust(self) -> Adjust | None: ...

    @property
    def adjust_carries(self) -> bool: ...


@dataclass(frozen=True)
class Stage:
    """One step of the chain: its name (the answer's JSON name), per head or not, its formula."""

    name: str
    per_head: bool
    fn: StageFn
    #: whether this problem has the step (``W_O`` missing: no ∂W_O)
    present: Callable[[Data], bool] = lambda d: True
    #: how many heads a per-head step has (``None``: the ``h`` query heads; the K/V heads
    #: count ``g``)
    count: Callable[[Data], int] | None = None

    def indices(self, d: Data) -> list[int | None]:
        """The heads this step is computed for (``[None]``: once, after the heads)."""
        if not self.per_head:
            return [None]
        return list(range(self.count(d) if self.count is not None else d.trace.h))


def weight(d: Data, role: str, i: int | None) -> Iv:
    """The problem's ``W_{role}`` of head ``i`` (a K/V head's for K and V), as a point."""
    assert i is not None
    return Iv.point(getattr(d.trace, role)[i])


def project(role: str, W: Array | None = None) -> StageFn:
    """``X W⁽ⁱ⁾ (+ b⁽ⁱ⁾)``: the query head's (``Q``) or the K/V head's (``K``, ``V``) weight;
    ``W``: other weights instead of the problem's (a mistake's, one per head)."""

    def fn(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        w = Iv.point(W[i]) if W is not None else weight(d, f"W_{role}", i)
        out = Iv.point(d.trace.X) @ w
        b = getattr(d.trace, f"b_{role}")
        return out + Iv.point(np.broadcast_to(b[i], out.shape)) if b is not None else out

    return fn


def _cols(x: Iv, index: slice) -> Iv:
    return Iv(x.lo[:, index], x.hi[:, index])


def rotate(x: Iv, cos: Iv, sin: Iv, *, halves: bool = False) -> Iv:
    r"""Each pair of every row turned by its angle, on intervals:
    :math:`x'_a = x_a \cos\phi - x_b \sin\phi,\ x'_b = x_a \sin\phi + x_b \cos\phi`.

    The pairs are RoFormer's :math:`(a, b) = (2p, 2p + 1)`; with ``halves``, Hugging Face's
    ``rotate_half`` layout :math:`(p, p + d/2)`. ``x``: ``(n, d)``; ``cos``, ``sin``:
    ``(n, d/2)``. The rotation is monotone in nothing: its enclosure is the products'.
    """
    d = x.shape[-1]
    if halves:
        a, b = _cols(x, slice(0, d // 2)), _cols(x, slice(d // 2, d))
    else:
        a, b = _cols(x, slice(0, d, 2)), _cols(x, slice(1, d, 2))
    ra = a * cos - b * sin
    rb = a * sin + b * cos
    if halves:
        return Iv.cat([ra, rb])
    # (n, d/2) twice -> (n, d/2, 2) -> (n, d): back to x_0, x_1, x_2, …
    return Iv(
        np.stack((ra.lo, rb.lo), -1).reshape(*ra.shape[:-1], -1),
        np.stack((ra.hi, rb.hi), -1).reshape(*ra.shape[:-1], -1),
    )


def query_name(d: Data) -> str:
    """The queries the scores read: ``Q``, or a feature's (``Q_rot`` with RoPE)."""
    return d.trace.reads_query


def key_name(d: Data) -> str:
    """The K/V heads' keys the query heads read: ``kv.K``, or a feature's (``kv.K_rot``)."""
    return d.trace.reads_key


def kv_count(d: Data) -> int:
    """How many K/V heads: ``g``."""
    return d.g


def read_group(source: str, pick: Callable[[Data, int], int] | None = None) -> StageFn:
    """What query head ``i`` reads of the K/V heads: ``source`` of its group γ(i) (``pick``:
    another K/V head, a mistake's)."""

    def fn(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        return e[source, pick(d, i) if pick is not None else d.group(i)]

    return fn


def _s_masked(d: Data, e: Env, i: int | None) -> Iv:
    """``S + M``: the mask as the student wrote it where it is a step (the window's: a slip in
    it carries on), else the problem's."""
    S = e["S", i]
    for term in d.trace.added:  # a feature's bias on the scores (ALiBi's B), as written
        S = S + e[term, i]
    if ("M", None) in e:
        return S + e["M", None]
    return S.fill(np.isinf(d.trace.M), -math.inf) if d.trace.M is not None else S


def output_of(concat: Iv, d: Data, W_O: Array | None) -> Iv:
    """``concat W_O (+ b_O)``, or the concat without ``W_O``."""
    if W_O is None:
        return concat
    out = concat @ Iv.point(W_O)
    b_O = d.trace.b_O
    return out + Iv.point(np.broadcast_to(b_O, out.shape)) if b_O is not None else out


#: The homework's stages; the features' own go in before the one each names
#: (`attention_ref.exercises.feature_table.FORWARD`: the chain of every problem).
BASE_FORWARD: Final[tuple[Stage, ...]] = (
    Stage("Q", True, project("Q")),
    Stage("kv.K", True, project("K"), count=kv_count),
    Stage("kv.V", True, project("V"), count=kv_count),
    Stage("K", True, lambda d, e, i: read_group(key_name(d))(d, e, i)),
    Stage("V", True, read_group("kv.V")),
    Stage("scores", True, lambda d, e, i: e[query_name(d), i] @ e["K", i].T),
    Stage("S", True, lambda d, e, i: e["scores", i] / math.sqrt(d.trace.d_k)),
    Stage("S_masked", True, _s_masked),
    Stage("A", True, lambda d, e, i: e["S_masked", i].softmax_rows()),
    Stage("H", True, lambda d, e, i: e["A", i] @ e["V", i]),
    Stage("concat", False, lambda d, e, i: Iv.cat([e["H", j] for j in range(d.trace.h)])),
    Stage("output", False, lambda d, e, i: output_of(e["concat", None], d, d.trace.W_O)),
)


def forward_of(extra: Sequence[tuple[str, Stage]]) -> tuple[Stage, ...]:
    """`BASE_FORWARD` with each ``(before, stage)`` of ``extra`` (a problem's features' own
    stages, `attention_ref.exercises.problem.ProblemTrace.extra`) in before ``before``."""
    out: list[Stage] = []
    for stage in BASE_FORWARD:
        out += [s for before, s in extra if before == stage.name]
        out.append(stage)
    return tuple(out)


def chain_keys(d: Data, stages: Sequence[Stage]) -> list[Key]:
    """Every step of the chain, in the order it runs (a step for every head, then the next)."""
    return [(s.name, i) for s in stages if s.present(d) for i in s.indices(d)]


def computed_steps(
    d: Data, mistakes: Sequence[Change] = (), stages: Sequence[Stage] | None = None
) -> dict[Key, Array]:
    """Every step computed exactly (with ``mistakes``, if any), as written: for examples of
    answers, in the book and the tests (``stages``: the problem's forward by default)."""
    run = run_chain(d, d.forward if stages is None else stages, decimals=None, mistakes=mistakes)
    return {k: v.lo for k, v in run.raw.items()}


@quiet
def carried_steps(d: Data, stages: Sequence[Stage], decimals: int) -> dict[Key, Array]:
    """Every step computed from the earlier steps as a student writes them: each rounded to
    ``decimals`` places before the next step reads it (masked entries stay −∞)."""
    env: dict[Key, Iv] = {}
    out: dict[Key, Array] = {}
    for stage in stages:
        if not stage.present(d):
            continue
        for i in stage.indices(d):
            v = stage.fn(d, env, i).lo
            v = np.where(np.isfinite(v), v.round(decimals), v)
            env[stage.name, i], out[stage.name, i] = Iv.point(v), v
    return out


# --- running the chain -------------------------------------------------------------------------


@dataclass
class Run:
    """One pass of the chain: each step's exact interval as written (``raw``) and what the
    student carries on (``env``); ``notes`` are what mistakes recorded (a slip's place)."""

    raw: dict[Key, Iv] = field(default_factory=dict)
    env: dict[Key, Iv] = field(default_factory=dict)
    notes: dict[str, object] = field(default_factory=dict)
    stopped: bool = False
    #: the steps where the run carried on from the student's numbers, in order
    taken: list[Key] = field(default_factory=list)


@quiet
def run_chain(
    d: Data,
    stages: Sequence[Stage],
    *,
    decimals: int | None,
    asked: int = 3,
    given: Mapping[Key, Given] | None = None,
    mistakes: Sequence[Change] = (),
    until: Callable[[Key, Iv], bool] | None = None,
    base: Run | None = None,
) -> Run:
    """Run every stage (each replaced by the first mistake that replaces it), round as a
    student does to ``decimals``, and where the student gave a step that the run accepts,
    carry on from the student's own numbers. Accepts: every entry right at the ``asked``
    decimals (`attention_ref.exercises.intervals.right_at`, the one definition of right); with
    ``decimals=None`` (points, nothing rounded), within half a unit of the ``asked`` decimals.
    ``until`` sees each step as written and stops the run (``stopped``) when it returns false.
    ``base``: a run of the same chain without mistakes, whose steps before the first stage the
    mistakes change are taken as they are (the same numbers, computed once)."""
    given = given or {}
    out = Run()
    start = first_changed(stages, mistakes) if base is not None else 0
    for index, stage in enumerate(stages):
        if not stage.present(d):
            continue
        if base is not None and index < start:
            for key in [k for k in base.raw if k[0] == stage.name]:
                out.raw[key], out.env[key] = base.raw[key], base.env[key]
                if until is not None and not until(key, out.raw[key]):
                    out.stopped = True
                    return out
            out.taken += [k for k in base.taken if k[0] == stage.name]
            continue
        fn = next((m.stages[stage.name] for m in mistakes if stage.name in m.stages), stage.fn)
        for i in stage.indices(d):
            key = (stage.name, i)
            raw = fn(d, out.env, i)
            shown = raw
            for m in mistakes:
                if m.adjust is not None:
                    shown = m.adjust(key, shown, given.get(key), out.notes, asked)
                    raw = shown if m.adjust_carries else raw
            for m in mistakes:
                if stage.name in m.written:
                    shown = m.written[stage.name](shown)
            out.raw[key] = shown
            if until is not None and not until(key, shown):
                out.stopped = True
                return out
            carry = carried(raw, decimals)
            g = given.get(key)
            if g is not None and shown is raw and g.value.shape == raw.shape:
                accepted = (
                    right_at(g, raw, asked)
                    if decimals is not None
                    else within(g.value, raw, 0.5 * 10.0**-asked)
                )
                if bool(accepted.all()):
                    carry = _meet(carry, g, decimals, asked)
                    out.taken.append(key)
            out.env[key] = carry
    return out


def first_changed(stages: Sequence[Stage], mistakes: Sequence[Change]) -> int:
    """The index of the first stage that the mistakes change (0 when one adjusts every step)."""
    if any(m.adjust is not None for m in mistakes):
        return 0
    names = {n for m in mistakes for n in (*m.stages, *m.written)}
    return next((k for k, s in enumerate(stages) if s.name in names), len(stages))


@quiet
def _meet(carry: Iv, g: Given, decimals: int | None, asked: int) -> Iv:
    """The carried interval narrowed to what the student's written value allows (`box`: their
    value, or an unrounded one that rounds to it, either way at a tie, the ends included);
    never empty: it keeps the written value."""
    if decimals is None:
        return Iv.point(g.value)
    b = box(g, asked)
    lo = np.minimum(np.maximum(carry.lo, b.lo), g.value)
    hi = np.maximum(np.minimum(carry.hi, b.hi), g.value)
    return Iv(lo, hi)


__all__ = [
    "BASE_FORWARD",
    "SLACK",
    "Adjust",
    "Change",
    "Data",
    "Env",
    "Given",
    "Iv",
    "Key",
    "Run",
    "Stage",
    "StageFn",
    "carried",
    "carried_steps",
    "chain_keys",
    "computed_steps",
    "first_changed",
    "forward_of",
    "key_name",
    "kv_count",
    "output_of",
    "project",
    "query_name",
    "read_group",
    "right_at",
    "rotate",
    "run_chain",
    "weight",
    "within",
]
