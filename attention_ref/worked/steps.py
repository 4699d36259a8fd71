r"""The steps of one attention problem as a chain of named stages, in interval arithmetic.

A student computes by hand and rounds each step to the decimals the exercise asks
(:math:`p`, 3 unless it says otherwise), then computes the next step from the rounded values,
or from the unrounded ones, or from anything in between. So every step is an **interval**
``[lo, hi]`` per entry: the set of values such a student can hold. A stage maps the intervals of
its inputs to the interval of its exact result (``raw``); the student's rounding then widens it
to ``carried = [min(lo, ⌊lo⌉), max(hi, ⌊hi⌉)]`` (⌊·⌉: any rounding to :math:`p` decimals, ties
either way), which the next stages use. An integer step stays a point: rounding changes nothing.

The operations are enclosures (outward, up to float rounding): sums add ends; a product of
matrices takes midpoint and radius, :math:`C = A_m B_m \pm (|A_m| B_r + A_r |B_m| + A_r B_r)`;
the softmax is monotone in each score, so row :math:`i` has

.. math::
    A_{ij} \in \Big[\frac{e^{l_j}}{e^{l_j} + \sum_{k \ne j} e^{h_k}},\
    \frac{e^{h_j}}{e^{h_j} + \sum_{k \ne j} e^{l_k}}\Big].

A chain is data (`Stage`: a name, per head or not, and its function), so a variant of attention
can bring its own stages, and a `attention_ref.worked.mistakes.Mistake` replaces some of them.
With ``decimals=None`` nothing is rounded and points stay points: the exact computation (the
same floats as `attention_ref.reference`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import torch
from torch import Tensor

from attention_ref import reference as ref

if TYPE_CHECKING:
    from attention_ref.worked.mistakes import Mistake
    from attention_ref.worked.variant_steps import VariantTrace

#: A step: its stage name and head (0-based; ``None`` after the heads): ``("A", 1)``.
Key = tuple[str, int | None]


@dataclass(frozen=True)
class Iv:
    """An interval matrix: every entry between ``lo`` and ``hi`` (float64; ``-inf`` allowed)."""

    lo: Tensor
    hi: Tensor

    @classmethod
    def point(cls, t: Tensor) -> Iv:
        """A matrix known exactly."""
        t = t.to(torch.float64)
        return cls(t, t)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.lo.shape)

    @property
    def mid(self) -> Tensor:
        return torch.where(self.lo == self.hi, self.lo, (self.lo + self.hi) / 2)

    @property
    def rad(self) -> Tensor:
        return torch.where(self.lo == self.hi, torch.zeros_like(self.lo), (self.hi - self.lo) / 2)

    @property
    def is_point(self) -> bool:
        return bool(torch.equal(self.lo, self.hi))

    @property
    def T(self) -> Iv:
        return Iv(self.lo.T, self.hi.T)

    def __matmul__(self, other: Iv) -> Iv:
        if self.is_point and other.is_point:
            c = self.lo @ other.lo
            return Iv(c, c)
        am, ar, bm, br = self.mid, self.rad, other.mid, other.rad
        cm = am @ bm  # an infinite entry makes its products infinite or NaN: not writable
        finite_a = torch.where(torch.isfinite(am), am.abs(), 0.0)
        finite_b = torch.where(torch.isfinite(bm), bm.abs(), 0.0)
        cr = finite_a @ br + ar @ finite_b + ar @ br
        return Iv(cm - cr, cm + cr)

    def __add__(self, other: Iv) -> Iv:
        return Iv(self.lo + other.lo, self.hi + other.hi)

    def __sub__(self, other: Iv) -> Iv:
        return Iv(self.lo - other.hi, self.hi - other.lo)

    def __mul__(self, other: Iv) -> Iv:
        """Entry by entry (⊙): the least and greatest of the four products of the ends."""
        p = torch.stack([self.lo * other.lo, self.lo * other.hi, self.hi * other.lo,
                         self.hi * other.hi])  # fmt: skip
        return Iv(p.amin(0), p.amax(0))

    def __truediv__(self, c: float) -> Iv:
        """Divided by a positive number."""
        return Iv(self.lo / c, self.hi / c)

    def rowsum(self) -> Iv:
        """Sums along each row, as a column: ``(n, m) -> (n, 1)``."""
        return Iv(self.lo.sum(-1, keepdim=True), self.hi.sum(-1, keepdim=True))

    def colsum(self) -> Iv:
        """Sums along each column, as a row: ``(n, m) -> (1, m)``."""
        return Iv(self.lo.sum(0, keepdim=True), self.hi.sum(0, keepdim=True))

    def cols(self, start: int, stop: int) -> Iv:
        return Iv(self.lo[:, start:stop], self.hi[:, start:stop])

    def fill(self, where: Tensor, value: float) -> Iv:
        """Entries where ``where`` is true set to ``value`` (a mask of -inf, or zeros)."""
        return Iv(self.lo.masked_fill(where, value), self.hi.masked_fill(where, value))

    def softmax_rows(self) -> Iv:
        """Row-wise softmax of an interval matrix (the enclosure in the module docstring)."""
        if self.is_point:
            return Iv.point(ref.softmax_rows(self.lo))
        top = self.hi.amax(-1, keepdim=True)  # stabilised: e^(x - top)
        el, eh = torch.exp(self.lo - top), torch.exp(self.hi - top)
        sl, sh = el.sum(-1, keepdim=True), eh.sum(-1, keepdim=True)
        lo = el / (el + (sh - eh).clamp_min(0))
        hi = eh / (eh + (sl - el).clamp_min(0))
        return Iv(lo, torch.maximum(lo, hi))

    @staticmethod
    def cat(parts: Sequence[Iv]) -> Iv:
        """Side by side (the concat of the heads)."""
        return Iv(torch.cat([p.lo for p in parts], -1), torch.cat([p.hi for p in parts], -1))


def rounded_down(x: Tensor, decimals: int) -> Tensor:
    """The least rounding of ``x`` to ``decimals`` places (a tie may go down)."""
    s = 10.0**decimals
    return torch.where(torch.isfinite(x), torch.ceil(x * s - 0.5) / s, x)


def rounded_up(x: Tensor, decimals: int) -> Tensor:
    """The greatest rounding of ``x`` to ``decimals`` places (a tie may go up)."""
    s = 10.0**decimals
    return torch.where(torch.isfinite(x), torch.floor(x * s + 0.5) / s, x)


def carried(raw: Iv, decimals: int | None) -> Iv:
    """What a student who rounds to ``decimals`` may carry on: the value, its rounding, or
    anything between (``None``: nothing is rounded)."""
    if decimals is None:
        return raw
    return Iv(torch.minimum(raw.lo, rounded_down(raw.lo, decimals)),
              torch.maximum(raw.hi, rounded_up(raw.hi, decimals)))  # fmt: skip


# --- the problem and the chain -----------------------------------------------------------------


@dataclass(frozen=True)
class Data:
    """What the stages read: the problem's trace (X, weights, mask) and the upstream gradient
    ``G`` of the backward (all ones: ``L = Σ output``). A variant's problem (GQA, RoPE, a
    sliding window) brings its own trace, `attention_ref.worked.variant_steps.VariantTrace`."""

    trace: ref.AttentionTrace | VariantTrace
    G: Tensor

    @classmethod
    def of(cls, trace: ref.AttentionTrace | VariantTrace, G: Tensor | None = None) -> Data:
        return cls(trace, G if G is not None else torch.ones_like(trace.output))


Env = Mapping[Key, Iv]
#: A stage's function: the data, the steps so far, the head (``None`` after the heads).
StageFn = Callable[[Data, Env, "int | None"], Iv]


@dataclass(frozen=True)
class Stage:
    """One step of the chain: its name (the answer's JSON name), per head or not, its formula."""

    name: str
    per_head: bool
    fn: StageFn
    #: whether this problem has the step (``W_O`` missing: no ∂W_O)
    present: Callable[[Data], bool] = lambda d: True
    #: how many heads a per-head step has (``None``: the ``h`` heads of the trace; the K/V
    #: heads of grouped-query attention count ``g``)
    count: Callable[[Data], int] | None = None

    def indices(self, d: Data) -> list[int | None]:
        """The heads this step is computed for (``[None]``: once, after the heads)."""
        if not self.per_head:
            return [None]
        return list(range(self.count(d) if self.count is not None else d.trace.h))


def _w(d: Data, role: str, i: int | None) -> Iv:
    assert i is not None
    return Iv.point(getattr(d.trace, role)[i])


def _project(role: str) -> StageFn:
    def fn(d: Data, e: Env, i: int | None) -> Iv:
        X, W = Iv.point(d.trace.X), _w(d, f"W_{role}", i)
        b = getattr(d.trace, f"b_{role}")
        out = X @ W
        return out + Iv.point(b[i].expand_as(out.lo)) if b is not None and i is not None else out

    return fn


def _mask(d: Data) -> Tensor | None:
    """Where the causal mask blocks (``M = -inf``), or ``None`` without a mask."""
    return torch.isinf(d.trace.M) if d.trace.M is not None else None


def _s_masked(d: Data, e: Env, i: int | None) -> Iv:
    blocked = _mask(d)
    S = e["S", i]
    return S.fill(blocked, -math.inf) if blocked is not None else S


def _output(d: Data, e: Env, i: int | None) -> Iv:
    concat, W_O, b_O = e["concat", None], d.trace.W_O, d.trace.b_O
    if W_O is None:
        return concat
    out = concat @ Iv.point(W_O)
    return out + Iv.point(b_O.expand_as(out.lo)) if b_O is not None else out


def _heads(d: Data, e: Env, name: str) -> list[Iv]:
    return [e[name, j] for j in range(d.trace.h)]


FORWARD: Final[tuple[Stage, ...]] = (
    Stage("Q", True, _project("Q")),
    Stage("K", True, _project("K")),
    Stage("V", True, _project("V")),
    Stage("scores", True, lambda d, e, i: e["Q", i] @ e["K", i].T),
    Stage("S", True, lambda d, e, i: e["scores", i] / math.sqrt(d.trace.d_k)),
    Stage("S_masked", True, _s_masked),
    Stage("A", True, lambda d, e, i: e["S_masked", i].softmax_rows()),
    Stage("H", True, lambda d, e, i: e["A", i] @ e["V", i]),
    Stage("concat", False, lambda d, e, i: Iv.cat(_heads(d, e, "H"))),
    Stage("output", False, _output),
)


def _grad_x(d: Data, e: Env, i: int | None) -> Iv:
    """∂X = Σ_i ∂Q⁽ⁱ⁾ W_Q⁽ⁱ⁾ᵀ + ∂K⁽ⁱ⁾ W_K⁽ⁱ⁾ᵀ + ∂V⁽ⁱ⁾ W_V⁽ⁱ⁾ᵀ: the three paths of every head."""
    total = Iv.point(torch.zeros_like(d.trace.X))
    for j in range(d.trace.h):
        for role in ("Q", "K", "V"):
            total = total + e[f"grad.{role}", j] @ _w(d, f"W_{role}", j).T
    return total


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
    Stage("grad.W_O", False, lambda d, e, i: e["concat", None].T @ e["grad.output", None],
          present=lambda d: d.trace.W_O is not None),
    Stage("grad.b_O", False, lambda d, e, i: e["grad.output", None].colsum(),
          present=lambda d: d.trace.b_O is not None),
    Stage("grad.concat", False, lambda d, e, i: e["grad.output", None] @ Iv.point(d.trace.W_O).T
          if d.trace.W_O is not None else e["grad.output", None]),
    Stage("grad.H", True, _grad_h),
    Stage("grad.A", True, lambda d, e, i: e["grad.H", i] @ e["V", i].T),
    Stage("grad.V", True, lambda d, e, i: e["A", i].T @ e["grad.H", i]),
    Stage("grad.S_masked", True, _grad_s_masked),
    Stage("grad.S", True, lambda d, e, i: e["grad.S_masked", i]),
    Stage("grad.Q", True,
          lambda d, e, i: e["grad.S", i] @ e["K", i] / math.sqrt(d.trace.d_k)),
    Stage("grad.K", True,
          lambda d, e, i: e["grad.S", i].T @ e["Q", i] / math.sqrt(d.trace.d_k)),
    Stage("grad.W_Q", True, lambda d, e, i: Iv.point(d.trace.X).T @ e["grad.Q", i]),
    Stage("grad.W_K", True, lambda d, e, i: Iv.point(d.trace.X).T @ e["grad.K", i]),
    Stage("grad.W_V", True, lambda d, e, i: Iv.point(d.trace.X).T @ e["grad.V", i]),
    Stage("grad.X", False, _grad_x),
)  # fmt: skip


def chain_keys(d: Data, stages: Sequence[Stage]) -> list[Key]:
    """Every step of the chain, in the order it runs (a step for every head, then the next)."""
    return [(s.name, i) for s in stages if s.present(d) for i in s.indices(d)]


def computed_steps(
    d: Data, mistakes: Sequence[Mistake] = (), stages: Sequence[Stage] = FORWARD
) -> dict[Key, Tensor]:
    """Every step computed exactly (with ``mistakes``, if any), as written: for examples of
    answers, in the book and the tests."""
    return {k: v.lo for k, v in run_chain(d, stages, decimals=None, mistakes=mistakes).raw.items()}


# --- running the chain -------------------------------------------------------------------------


@dataclass(frozen=True)
class Given:
    """A matrix the student wrote: its values (``±inf`` allowed) and each entry's decimals."""

    value: Tensor
    decimals: Tensor  # int64, the shape of value
    _half: dict[int, Tensor] = field(default_factory=dict, compare=False, repr=False)

    def half_unit(self, asked: int) -> Tensor:
        """Half a unit of the last place each entry holds, at least that of ``asked``."""
        if asked not in self._half:
            places = torch.clamp(self.decimals, max=asked).to(torch.float64)
            self._half[asked] = 0.5 * 10.0**-places
        return self._half[asked]


#: Slack for binary floating point around every comparison.
SLACK: Final = 1e-9


def within(value: Tensor, band: Iv, slack: Tensor | float) -> Tensor:
    """Entry by entry: ``value`` in ``[lo - slack, hi + slack]``, up to float rounding. An
    infinite value is within only an equal infinite band (the float slack stays finite)."""
    eps = SLACK * (1 + value.abs().clamp(max=1e6)) + slack
    return (value >= band.lo - eps) & (value <= band.hi + eps)


def loosely(g: Given, band: Iv, asked: int) -> Tensor:
    """Each entry within its own half unit (or that of ``asked``, if larger) of the band."""
    return within(g.value, band, g.half_unit(asked))


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


def run_chain(
    d: Data,
    stages: Sequence[Stage],
    *,
    decimals: int | None,
    asked: int = 3,
    given: Mapping[Key, Given] | None = None,
    mistakes: Sequence[Mistake] = (),
    until: Callable[[Key, Iv], bool] | None = None,
    base: Run | None = None,
) -> Run:
    """Run every stage (each replaced by the first mistake that replaces it), round as a
    student does to ``decimals``, and where the student gave a step that the run accepts,
    carry on from the student's own numbers. Accepts: each entry within its half unit (or
    that of the ``asked`` decimals, if larger) of the interval; with ``decimals=None`` (points,
    nothing rounded), within half a unit of the ``asked`` decimals, so that a step written
    with fewer decimals than asked is not taken as the student's exact value. ``until`` sees
    each step as written and stops the run (``stopped``) when it returns false. ``base``: a
    run of the same chain without mistakes, whose steps before the first stage the mistakes
    change are taken as they are (the same numbers, computed once)."""
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
                accepted = (loosely(g, raw, asked) if decimals is not None
                            else within(g.value, raw, 0.5 * 10.0**-asked))  # fmt: skip
                if bool(accepted.all()):
                    carry = _meet(carry, g, decimals)
                    out.taken.append(key)
            out.env[key] = carry
    return out


def first_changed(stages: Sequence[Stage], mistakes: Sequence[Mistake]) -> int:
    """The index of the first stage that the mistakes change (0 when one adjusts every step)."""
    if any(m.adjust is not None for m in mistakes):
        return 0
    names = {n for m in mistakes for n in (*m.stages, *m.written)}
    return next((k for k, s in enumerate(stages) if s.name in names), len(stages))


def _meet(carry: Iv, g: Given, decimals: int | None) -> Iv:
    """The carried interval narrowed to what the student's written value allows (their value
    or what it rounds); never empty: it keeps the written value."""
    if decimals is None:
        return Iv.point(g.value)
    h = g.half_unit(15)
    lo = torch.minimum(torch.maximum(carry.lo, g.value - h), g.value)
    hi = torch.maximum(torch.minimum(carry.hi, g.value + h), g.value)
    return Iv(lo, hi)


__all__ = ["BACKWARD", "FORWARD", "Data", "Given", "Iv", "Key", "Run", "Stage", "carried",
           "chain_keys", "loosely", "run_chain", "within"]  # fmt: skip
