r"""Interval matrices: what a student who rounds each step can hold, entry by entry.

A student computes by hand and rounds each step to the decimals the exercise asks
(:math:`p`), then computes the next step from the rounded values, or from the unrounded ones,
or from anything in between. So every step is an **interval** ``[lo, hi]`` per entry (`Iv`).
The student's rounding widens a step's exact interval ``raw`` to
``carried = [min(lo, ⌊lo⌉), max(hi, ⌊hi⌉)]`` (⌊·⌉: any rounding to :math:`p` decimals, ties
either way). An integer step stays a point: rounding changes nothing.

The operations are enclosures (outward, up to float rounding): sums add ends; a product of
matrices takes midpoint and radius, :math:`C = A_m B_m \pm (|A_m| B_r + A_r |B_m| + A_r B_r)`;
the softmax is monotone in each score, so row :math:`i` has

.. math::
    A_{ij} \in \Big[\frac{e^{l_j}}{e^{l_j} + \sum_{k \ne j} e^{h_k}},\
    \frac{e^{h_j}}{e^{h_j} + \sum_{k \ne j} e^{l_k}}\Big].

`Given` is a matrix as the student wrote it (each entry's decimals kept); `right_at` is the
one definition of a right entry, and `box` what a written entry says the student carried on.

The matrices are numpy's float64 arrays: grading a hand computation needs no torch, whose
import alone takes longer than the whole check (`quiet`: the operations on ``±inf`` are as
silent as torch's: ``inf - inf`` is NaN, not a warning on the student's terminal).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
from numpy.typing import NDArray

#: A matrix of the exercises: float64, ``-inf`` for a masked entry.
Array = NDArray[np.float64]
F = TypeVar("F", bound=Callable[..., Any])


def quiet(fn: F) -> F:
    """``fn`` with numpy's floating-point warnings off: ``-inf`` is a value here, not an error
    (``inf - inf`` is NaN, as in torch)."""

    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return inner  # type: ignore[return-value]


def softmax_rows(x: Array) -> Array:
    r"""Row-wise softmax :math:`e^{x_{ij} - m_i} / \sum_l e^{x_{il} - m_i}`, :math:`m_i =
    \max_l x_{il}`: `attention_ref.reference.softmax_rows` on float64 arrays (a masked entry
    gives 0 exactly)."""
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)


@dataclass(frozen=True)
class Iv:
    """An interval matrix: every entry between ``lo`` and ``hi`` (float64; ``-inf`` allowed)."""

    lo: Array
    hi: Array

    @classmethod
    def point(cls, t: Array) -> Iv:
        """A matrix known exactly."""
        t = np.asarray(t, dtype=np.float64)
        return cls(t, t)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.lo.shape)

    @property
    @quiet
    def mid(self) -> Array:
        return np.where(self.lo == self.hi, self.lo, (self.lo + self.hi) / 2)

    @property
    @quiet
    def rad(self) -> Array:
        return np.where(self.lo == self.hi, np.zeros_like(self.lo), (self.hi - self.lo) / 2)

    @property
    def is_point(self) -> bool:
        return bool(np.array_equal(self.lo, self.hi))

    @property
    def T(self) -> Iv:
        return Iv(self.lo.T, self.hi.T)

    @quiet
    def __matmul__(self, other: Iv) -> Iv:
        if self.is_point and other.is_point:
            c = self.lo @ other.lo
            return Iv(c, c)
        am, ar, bm, br = self.mid, self.rad, other.mid, other.rad
        cm = am @ bm  # an infinite entry makes its products infinite or NaN: not writable
        finite_a = np.where(np.isfinite(am), np.abs(am), 0.0)
        finite_b = np.where(np.isfinite(bm), np.abs(bm), 0.0)
        cr = finite_a @ br + ar @ finite_b + ar @ br
        return Iv(cm - cr, cm + cr)

    @quiet
    def __add__(self, other: Iv) -> Iv:
        return Iv(self.lo + other.lo, self.hi + other.hi)

    @quiet
    def __sub__(self, other: Iv) -> Iv:
        return Iv(self.lo - other.hi, self.hi - other.lo)

    @quiet
    def __mul__(self, other: Iv) -> Iv:
        """Entry by entry (⊙): the least and greatest of the four products of the ends."""
        p = np.stack(
            [self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi]
        )
        return Iv(p.min(0), p.max(0))

    @quiet
    def __truediv__(self, c: float) -> Iv:
        """Divided by a positive number."""
        return Iv(self.lo / c, self.hi / c)

    @quiet
    def rowsum(self) -> Iv:
        """Sums along each row, as a column: ``(n, m) -> (n, 1)``."""
        return Iv(self.lo.sum(-1, keepdims=True), self.hi.sum(-1, keepdims=True))

    @quiet
    def colsum(self) -> Iv:
        """Sums along each column, as a row: ``(n, m) -> (1, m)``."""
        return Iv(self.lo.sum(0, keepdims=True), self.hi.sum(0, keepdims=True))

    def cols(self, start: int, stop: int) -> Iv:
        return Iv(self.lo[:, start:stop], self.hi[:, start:stop])

    def fill(self, where: Array, value: float) -> Iv:
        """Entries where ``where`` is true set to ``value`` (a mask of -inf, or zeros)."""
        return Iv(np.where(where, value, self.lo), np.where(where, value, self.hi))

    @quiet
    def softmax_rows(self) -> Iv:
        """Row-wise softmax of an interval matrix (the enclosure in the module docstring)."""
        if self.is_point:
            return Iv.point(softmax_rows(self.lo))
        top = self.hi.max(-1, keepdims=True)  # stabilised: e^(x - top)
        el, eh = np.exp(self.lo - top), np.exp(self.hi - top)
        sl, sh = el.sum(-1, keepdims=True), eh.sum(-1, keepdims=True)
        lo = el / (el + np.maximum(sh - eh, 0))
        hi = eh / (eh + np.maximum(sl - el, 0))
        return Iv(lo, np.maximum(lo, hi))

    @staticmethod
    def cat(parts: Sequence[Iv]) -> Iv:
        """Side by side (the concat of the heads)."""
        return Iv(
            np.concatenate([p.lo for p in parts], -1), np.concatenate([p.hi for p in parts], -1)
        )


#: Slack for binary floating point around every comparison: outward (a value this close to a
#: boundary counts as on it, the way a tie counts either way), never a shrink.
SLACK: Final = 1e-9


def _tie(x: Array) -> Array:
    """How near a half unit ``x`` (in units of the last place) counts as a tie: float64 cannot
    tell 0.285 (28.499999999999996 units) from the tie it was written as, so the judge takes it
    either way, outward (`SLACK`)."""
    return SLACK * (1 + np.minimum(np.abs(x), 1e15))


@quiet
def rounded_down(x: Array, decimals: int) -> Array:
    """The least rounding of ``x`` to ``decimals`` places (a tie, or what float64 cannot tell
    from one, may go down)."""
    s = 10.0**decimals
    xs = x * s
    return np.where(np.isfinite(x), np.ceil(xs - 0.5 - _tie(xs)) / s, x)


@quiet
def rounded_up(x: Array, decimals: int) -> Array:
    """The greatest rounding of ``x`` to ``decimals`` places (a tie, or what float64 cannot
    tell from one, may go up)."""
    s = 10.0**decimals
    xs = x * s
    return np.where(np.isfinite(x), np.floor(xs + 0.5 + _tie(xs)) / s, x)


def carried(raw: Iv, decimals: int | None) -> Iv:
    """What a student who rounds to ``decimals`` may carry on: the value, its rounding, or
    anything between (``None``: nothing is rounded)."""
    if decimals is None:
        return raw
    return Iv(
        np.minimum(raw.lo, rounded_down(raw.lo, decimals)),
        np.maximum(raw.hi, rounded_up(raw.hi, decimals)),
    )


@dataclass(frozen=True)
class Given:
    """A matrix the student wrote: its values (``±inf`` allowed) and each entry's decimals."""

    value: Array
    decimals: NDArray[np.int64]  # int64, the shape of value


@quiet
def within(value: Array, band: Iv, slack: Array | float) -> NDArray[np.bool_]:
    """Entry by entry: ``value`` in ``[lo - slack, hi + slack]``, up to float rounding. An
    infinite value is within only an equal infinite band (the float slack stays finite)."""
    eps = SLACK * (1 + np.minimum(np.abs(value), 1e6)) + slack
    return (value >= band.lo - eps) & (value <= band.hi + eps)


@quiet
def roundings(g: Given, asked: int) -> Iv:
    """What each written entry says at the ``asked`` decimals: an entry written to ``asked``
    places or fewer is itself (its zeros put back: ``2.7`` is 2.700, ``2`` is 2.000); one
    written to more places is its rounding to ``asked``, either way at a tie (2.1215 is 2.121
    or 2.122), so the interval holds one value or two neighbours."""
    lo, hi = rounded_down(g.value, asked), rounded_up(g.value, asked)  # 0.1235: a tie still
    plain = (g.decimals <= asked) | ~np.isfinite(g.value)
    return Iv(np.where(plain, g.value, lo), np.where(plain, g.value, hi))


@quiet
def right_at(g: Given, band: Iv, asked: int) -> NDArray[np.bool_]:
    r"""**The definition of right**, entry by entry: an entry is right when it is a value of
    ``band`` (the true value given the student's earlier steps, carried rounded or not) rounded
    to the ``asked`` decimals :math:`p`, either way at an exact tie. With :math:`u = 10^{-p}`
    those roundings are the multiples :math:`r` of :math:`u` with :math:`[r - u/2, r + u/2]`
    meeting ``[lo, hi]``; an entry is judged by what it says at :math:`p` places
    (`roundings`): written with fewer, its zeros put back (``1`` is 1.000, wrong for 0.707);
    with more, right only if it rounds to a right value (2.12177 rounds to 2.122, wrong where
    2.1213 is true). Float rounding is absorbed outward (`SLACK`)."""
    said = roundings(g, asked)
    half = 0.5 * 10.0**-asked
    eps = SLACK * (1 + np.minimum(np.abs(g.value), 1e6)) + half
    finite = np.isfinite(g.value)
    reach = (said.hi >= band.lo - eps) & (said.lo <= band.hi + eps)
    return np.where(finite, reach, within(g.value, band, 0.0))


@quiet
def box(g: Given, asked: int) -> Iv:
    """What a student who wrote ``g`` may have carried on: the written value, an unrounded one
    that rounds to it, either way at a tie (so the ends are in: ``[w - h, w + h]`` with ``h``
    half a unit of the places it holds, at least the ``asked`` ones: ``2.7`` carried on is
    2.700, within 0.0005), or, written to more places than asked, its rounding to the
    ``asked`` places (0.333 where 1 place is asked may go on as 0.3: `roundings`); widened by
    a float's rounding, never narrowed."""
    places = np.maximum(g.decimals, asked).astype(np.float64)
    h = 0.5 * 10.0**-places
    said = roundings(g, asked)
    lo = np.nextafter(np.minimum(g.value - h, said.lo), -np.inf)
    hi = np.nextafter(np.maximum(g.value + h, said.hi), np.inf)
    finite = np.isfinite(g.value)
    return Iv(np.where(finite, lo, g.value), np.where(finite, hi, g.value))


__all__ = [
    "SLACK",
    "Array",
    "Given",
    "Iv",
    "box",
    "carried",
    "quiet",
    "right_at",
    "rounded_down",
    "rounded_up",
    "roundings",
    "softmax_rows",
    "within",
]
