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

`Given` is a matrix as the student wrote it (each entry's decimals kept); `within` and
`loosely` compare it with a band.

The matrices are numpy's float64 arrays: grading a hand computation needs no torch, whose
import alone takes longer than the whole check (`quiet`: the operations on ``±inf`` are as
silent as torch's: ``inf - inf`` is NaN, not a warning on the student's terminal).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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


@quiet
def rounded_down(x: Array, decimals: int) -> Array:
    """The least rounding of ``x`` to ``decimals`` places (a tie may go down)."""
    s = 10.0**decimals
    return np.where(np.isfinite(x), np.ceil(x * s - 0.5) / s, x)


@quiet
def rounded_up(x: Array, decimals: int) -> Array:
    """The greatest rounding of ``x`` to ``decimals`` places (a tie may go up)."""
    s = 10.0**decimals
    return np.where(np.isfinite(x), np.floor(x * s + 0.5) / s, x)


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
    _half: dict[int, Array] = field(default_factory=dict, compare=False, repr=False)

    def shows(self, asked: int) -> bool:
        """Whether some finite entry is written to ``asked`` places: then every entry of the
        matrix is read with its trailing zeros put back (``0.27`` is ``0.270``)."""
        return bool(((self.decimals >= asked) & np.isfinite(self.value)).any())

    def half_unit(self, asked: int) -> Array:
        """Half a unit of the last place each entry holds, at least that of ``asked``; in a
        matrix that `shows` ``asked`` places, that of ``asked`` for every entry (its zeros put
        back: an entry written ``0.27`` there is ``0.270``, not ``0.27 ± 0.005``)."""
        if asked not in self._half:
            places = np.minimum(self.decimals, asked).astype(np.float64)
            if self.shows(asked):
                places = np.full_like(places, float(asked))
            self._half[asked] = 0.5 * 10.0**-places
        return self._half[asked]


#: Slack for binary floating point around every comparison.
SLACK: Final = 1e-9


@quiet
def within(value: Array, band: Iv, slack: Array | float) -> NDArray[np.bool_]:
    """Entry by entry: ``value`` in ``[lo - slack, hi + slack]``, up to float rounding. An
    infinite value is within only an equal infinite band (the float slack stays finite)."""
    eps = SLACK * (1 + np.minimum(np.abs(value), 1e6)) + slack
    return (value >= band.lo - eps) & (value <= band.hi + eps)


def loosely(g: Given, band: Iv, asked: int) -> NDArray[np.bool_]:
    """Each entry within its own half unit (or that of ``asked``, if larger) of the band."""
    return within(g.value, band, g.half_unit(asked))


__all__ = [
    "SLACK",
    "Array",
    "Given",
    "Iv",
    "carried",
    "loosely",
    "quiet",
    "rounded_down",
    "rounded_up",
    "softmax_rows",
    "within",
]
