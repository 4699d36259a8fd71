r"""An arm over seeds: its mean, its spread, and whether two arms are told apart.

Pure: no MLflow, no torch, nothing of the package. An arm trained on N seeds gives N values of a
figure (its best validation loss); `Spread` holds them, with their mean, their range
(min–max) and, where N >= 3, the 95 % t-interval of the mean

$$
\bar x \pm t_{0.975,\,N-1} \cdot \frac{s}{\sqrt N}, \qquad
s^2 = \frac{1}{N-1} \sum_i (x_i - \bar x)^2 .
$$

`compare` says whether one arm is lower than another only where the gap exceeds the spread:
their *bands* do not overlap, a band being the t-interval where N >= 3, the range where
N = 2, the value itself where N = 1. Two arms of one seed each have no spread to measure: they
are told apart by a fixed tolerance, and the sentence says that the order rests on one seed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

#: t_{0.975, df} for df = 1..30 (two-sided 95 %); beyond 30, `t_quantile_975`'s expansion
_T975: tuple[float, ...] = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
_Z975 = 1.959963984540054
#: the fewest seeds that give a t-interval (with two, s has one degree of freedom and the
#: interval is ±12.7 s/√2: wider than the range says anything about)
INTERVAL_MIN_SEEDS = 3


def t_quantile_975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (the half-width factor
    of a two-sided 95 % interval): tabulated to df = 30, then the Cornish–Fisher expansion
    around the normal quantile (error below 1e-5 there)."""
    if df < 1:
        raise ValueError(f"a t quantile needs at least 1 degree of freedom, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


class Side(StrEnum):
    """Where a value (or an arm) lies against a reference (or another arm)."""

    BELOW = "below"
    AT = "at"  # within the tolerance, or within the spread
    ABOVE = "above"


@dataclass(frozen=True)
class Spread:
    """The values of one figure over an arm's seeds."""

    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("a spread needs at least one value")

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return math.fsum(self.values) / self.n

    @property
    def lo(self) -> float:
        return min(self.values)

    @property
    def hi(self) -> float:
        return max(self.values)

    @property
    def sd(self) -> float | None:
        """The sample standard deviation (None for one value)."""
        return statistics.stdev(self.values) if self.n > 1 else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % t-interval of the mean where ``n >= INTERVAL_MIN_SEEDS``, else None."""
        if self.n < INTERVAL_MIN_SEEDS:
            return None
        assert self.sd is not None
        half = t_quantile_975(self.n - 1) * self.sd / math.sqrt(self.n)
        return (self.mean - half, self.mean + half)

    @property
    def band(self) -> tuple[float, float]:
        """What the arm's figure is known to within: the t-interval, else the range."""
        return self.interval or (self.lo, self.hi)

    @property
    def measure(self) -> str:
        """What `band` is, in words: "95 % interval", "range", "one seed"."""
        if self.interval is not None:
            return "95 % interval"
        return "range" if self.n > 1 else "one seed"


def spread(values: Sequence[float]) -> Spread:
    """`Spread` of ``values`` (an arm's figure, one value per seed)."""
    return Spread(tuple(float(v) for v in values))


@dataclass(frozen=True)
class Gap:
    """One arm (``a``) against another (``b``): ``a - b`` and whether it is told apart."""

    a: Spread
    b: Spread
    side: Side  # of ``a`` against ``b``: BELOW (lower), ABOVE, or AT (not told apart)
    tolerance: float  # what decided between two arms of one seed each

    @property
    def diff(self) -> float:
        """Mean of ``a`` minus mean of ``b``."""
        return self.a.mean - self.b.mean

    @property
    def one_seed(self) -> bool:
        """Both arms are one seed each: the order rests on that seed."""
        return self.a.n == 1 and self.b.n == 1

    @property
    def seeds(self) -> str:
        """How many seeds the arms have, in words: "3 seeds", "3 and 2 seeds", "one seed"."""
        if self.a.n == self.b.n:
            return "one seed" if self.a.n == 1 else f"{self.a.n} seeds"
        lo, hi = sorted((self.a.n, self.b.n))
        return f"{hi} and {lo} seeds"

    def qualifier(self) -> str:
        """The words that say what the order of the two arms rests on."""
        if self.one_seed:
            if self.side == Side.AT:
                return f"within {self.tolerance} of each other, on one seed"
            return f"more than {self.tolerance} apart, on one seed"
        if self.side == Side.AT:
            return f"within the spread of {self.seeds}"
        return f"beyond the spread of {self.seeds}"


def compare(a: Spread, b: Spread, tolerance: float) -> Gap:
    """``a`` against ``b``: lower or higher only where the gap exceeds the spread (their
    `Spread.band` do not overlap); two arms of one seed each by ``tolerance`` on the values."""
    if a.n == 1 and b.n == 1:
        x, y = a.values[0], b.values[0]
        side = Side.BELOW if x < y - tolerance else Side.ABOVE if x > y + tolerance else Side.AT
        return Gap(a, b, side, tolerance)
    (a_lo, a_hi), (b_lo, b_hi) = a.band, b.band
    side = Side.BELOW if a_hi < b_lo else Side.ABOVE if a_lo > b_hi else Side.AT
    return Gap(a, b, side, tolerance)


def spread_cells(s: Spread, digits: int = 4) -> tuple[str, str, str]:
    """The table cells of a spread: the mean, the range, the 95 % interval ("–" where there is
    none to give)."""
    rng = f"{s.lo:.{digits}f}–{s.hi:.{digits}f}" if s.n > 1 else "–"
    iv = s.interval
    ci = f"{iv[0]:.{digits}f}–{iv[1]:.{digits}f}" if iv is not None else "–"
    return f"{s.mean:.{digits}f}", rng, ci


def overlap(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether the ranges ``[min a, max a]`` and ``[min b, max b]`` meet."""
    return min(a) <= max(b) and min(b) <= max(a)


def ratio_spread(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """``a``'s median over ``b``'s, and the least and the greatest ratio two runs give
    (``min a / max b``, ``max a / min b``)."""
    mid = statistics.median(a) / statistics.median(b)
    return mid, min(a) / max(b), max(a) / min(b)
