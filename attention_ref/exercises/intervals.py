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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref


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
        p = torch.stack(
            [self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi]
        )
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
    return Iv(
        torch.minimum(raw.lo, rounded_down(raw.lo, decimals)),
        torch.maximum(raw.hi, rounded_up(raw.hi, decimals)),
    )


@dataclass(frozen=True)
class Given:
    """A matrix the student wrote: its values (``±inf`` allowed) and each entry's decimals."""

    value: Tensor
    decimals: Tensor  # int64, the shape of value
    _half: dict[int, Tensor] = field(default_factory=dict, compare=False, repr=False)

    def shows(self, asked: int) -> bool:
        """Whether some finite entry is written to ``asked`` places: then every entry of the
        matrix is read with its trailing zeros put back (``0.27`` is ``0.270``)."""
        return bool(((self.decimals >= asked) & torch.isfinite(self.value)).any())

    def half_unit(self, asked: int) -> Tensor:
        """Half a unit of the last place each entry holds, at least that of ``asked``; in a
        matrix that `shows` ``asked`` places, that of ``asked`` for every entry (its zeros put
        back: an entry written ``0.27`` there is ``0.270``, not ``0.27 ± 0.005``)."""
        if asked not in self._half:
            places = torch.clamp(self.decimals, max=asked).to(torch.float64)
            if self.shows(asked):
                places = torch.full_like(places, float(asked))
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


__all__ = ["SLACK", "Given", "Iv", "carried", "loosely", "rounded_down", "rounded_up", "within"]
