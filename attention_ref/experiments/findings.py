"""Q03's facts, from numbers only: rows + baselines -> findings (what a sentence may state).

Pure: no MLflow, no torch. `attention_ref.experiments.results` reads the rows out of the
store, `attention_ref.experiments.report` writes the words. Here `findings` turns the figures
into the facts a sentence may state (which side of the bigram baseline an arm is on, whether
its curve has levelled off, which arm is lowest, whether the arms are comparable at all, what
the parameters the arms differ by are), each with the threshold it was decided by; the
English report and the book's Portuguese page both write their words from these facts only.

This module holds the facts of each arm and of the ablation (`arm_findings`, `findings`); the
rest lives beside it, and every name is importable from here as before:
`attention_ref.experiments.arm_rows` (`ArmRow`, `Baselines`, `rows_from_comparison`,
`ArmSeeds`, `arm_seeds`), `attention_ref.experiments.comparability` (`comparability`,
`COMPARED_KEYS`, `ASPECTS`, `RECORDED_BEFORE`) and `attention_ref.experiments.attention_cost`
(`Part`, `recorded_parts`, `Cost`, `cost`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from attention_ref.experiments.arm_rows import ArmRow, ArmSeeds, Baselines, arm_seeds
from attention_ref.experiments.arm_rows import rows_from_comparison as rows_from_comparison
from attention_ref.experiments.attention_cost import Cost, cost
from attention_ref.experiments.attention_cost import Part as Part
from attention_ref.experiments.attention_cost import recorded_parts as recorded_parts
from attention_ref.experiments.comparability import ASPECTS as ASPECTS
from attention_ref.experiments.comparability import COMPARED_KEYS as COMPARED_KEYS
from attention_ref.experiments.comparability import RECORDED_BEFORE as RECORDED_BEFORE
from attention_ref.experiments.comparability import SHARED_OPTIONS as SHARED_OPTIONS
from attention_ref.experiments.comparability import Comparability, comparability
from attention_ref.experiments.comparability import Compared as Compared
from attention_ref.experiments.spread import Gap, Side, compare

#: two losses closer than this (nats) are "at" each other, and neither is called lower: an
#: arm is measured on fixed validation batches, the baselines on the whole validation split,
#: so a smaller difference is sampling, not a finding
BASELINE_TOLERANCE = 0.03
#: an arm's curve has "levelled off" from the first evaluation within this of its final value
PLATEAU_TOLERANCE = 0.02
#: final train and validation losses "agree" (no overfitting to the training split) within this
AGREEMENT_TOLERANCE = 0.05


def side(value: float, reference: float, tolerance: float = BASELINE_TOLERANCE) -> Side:
    """``BELOW`` if ``value < reference - tolerance``, ``ABOVE`` if ``> reference + tolerance``."""
    if value < reference - tolerance:
        return Side.BELOW
    if value > reference + tolerance:
        return Side.ABOVE
    return Side.AT


def plateau_step(curve: Sequence[tuple[int, float]], tolerance: float = PLATEAU_TOLERANCE) -> int:
    """First evaluation step from which validation loss stays within ``tolerance`` of its end."""
    final = curve[-1][1]
    step = curve[-1][0]
    for s, v in reversed(curve):
        if abs(v - final) > tolerance:
            break
        step = s
    return step


@dataclass(frozen=True)
class Plateau:
    """Where a validation curve levels off (`plateau_step`) within its evaluations."""

    step: int  # first evaluation within PLATEAU_TOLERANCE of the final value, and staying so
    first_step: int
    last_step: int
    final: float

    @property
    def levelled(self) -> bool:
        """The curve stays within the tolerance over more than its last evaluation."""
        return self.step < self.last_step

    @property
    def early(self) -> bool:
        """Levelled off by the middle of the evaluated steps."""
        return self.levelled and self.step <= (self.first_step + self.last_step) / 2


def plateau(curve: Sequence[tuple[int, float]]) -> Plateau | None:
    """The curve's `Plateau`; None for fewer than two evaluations (nothing to say)."""
    if len(curve) < 2:
        return None
    return Plateau(plateau_step(curve), curve[0][0], curve[-1][0], curve[-1][1])


@dataclass(frozen=True)
class ArmFindings:
    """What the numbers of one arm support, each fact with its threshold applied."""

    row: ArmRow
    gap: float  # best validation loss - bigram baseline (negative: below it)
    side: Side  # of the bigram baseline
    #: below the bigram table fitted on validation by more than the tolerance: no table
    #: P(next | current) does that (None when that table is not known)
    beats_any_bigram: bool | None
    plateau: Plateau | None
    train_val_agree: bool  # |final train - final validation| <= AGREEMENT_TOLERANCE
    #: the best validation loss is below the first evaluation (None: no curve)
    falls: bool | None

    @property
    def stuck_at_baseline(self) -> bool:
        """At the bigram baseline, levelled off early, train and validation agreeing."""
        p = self.plateau
        return self.side == Side.AT and p is not None and p.early and self.train_val_agree


def arm_findings(row: ArmRow, base: Baselines) -> ArmFindings:
    """The facts of one arm against the baselines."""
    gap = row.best_val_loss - base.bigram
    fitted = base.bigram_fitted_on_val
    return ArmFindings(
        row=row,
        gap=gap,
        side=side(row.best_val_loss, base.bigram),
        beats_any_bigram=None if fitted is None else side(row.best_val_loss, fitted) == Side.BELOW,
        plateau=plateau(row.val_curve),
        train_val_agree=abs(row.final_train_loss - row.final_val_loss) <= AGREEMENT_TOLERANCE,
        falls=row.best_val_loss < row.val_curve[0][1] if row.val_curve else None,
    )


class Span(StrEnum):
    """Which positions a causal average gives weight to, row by row (`span`)."""

    ITSELF_AND_BEFORE = "itself and every position before it"  # j <= i
    BEFORE_ONLY = "every position before it, not itself"  # j < i
    OTHER = "other positions"


def span(A: Sequence[Sequence[float]]) -> Span:
    """Which keys each query ``i`` of the weights ``A`` averages with equal weights: every
    ``j <= i`` (``A_ij = 1/i``, positions from 1), every ``j < i``, or something else."""
    n = len(A)

    def rows_are(weighted: Callable[[int, int], bool]) -> bool:
        for i, row in enumerate(A):
            w = [row[j] for j in range(n) if weighted(i, j)]
            if any(row[j] != 0 for j in range(n) if not weighted(i, j)):
                return False
            if w and not all(abs(v - 1 / len(w)) < 1e-9 for v in w):
                return False
        return True

    if n and rows_are(lambda i, j: j <= i):
        return Span.ITSELF_AND_BEFORE
    if n and rows_are(lambda i, j: j < i):
        return Span.BEFORE_ONLY
    return Span.OTHER


@dataclass(frozen=True)
class Findings:
    """Everything a sentence of the Q03 answer may state, computed from rows and baselines.

    An arm of several seeds is one `ArmSeeds`: its findings are those of its `ArmSeeds.mean_row`
    (the figures' means), and one arm is lower than another only beyond their spread
    (`attention_ref.experiments.spread.compare`)."""

    base: Baselines
    arms: dict[str, ArmFindings]  # by attention mode, in the rows' order
    comparability: Comparability
    ranking: list[ArmRow]  # lowest best validation loss first (the arms' mean rows)
    #: the lowest arm beats the next beyond their spread (one seed each: by more than
    #: BASELINE_TOLERANCE); None: a single arm
    clear_lead: bool | None
    #: the arm with attention against the arm without it (None: one of them is missing)
    cost: Cost | None = None
    #: each arm's runs over its seeds, by attention mode
    seeds: dict[str, ArmSeeds] = field(default_factory=dict)

    def gap(self, a: str, b: str) -> Gap:
        """Arm ``a``'s best validation loss against arm ``b``'s, over their seeds."""
        return compare(self.seeds[a].best, self.seeds[b].best, BASELINE_TOLERANCE)

    @property
    def lead(self) -> Gap | None:
        """The lowest arm against the next (None: a single arm)."""
        if len(self.ranking) < 2:
            return None
        return self.gap(self.ranking[0].attention, self.ranking[1].attention)

    @property
    def n_seeds(self) -> int:
        """The most seeds any arm has (1: every arm is one run)."""
        return max((s.n for s in self.seeds.values()), default=1)


def findings(rows: Sequence[ArmRow], base: Baselines) -> Findings:
    """The facts of the ablation: each arm against the baselines, the ranking, comparability.

    Several rows of one arm (``attention``) are its seeds: the arm's facts are read off their
    mean (`ArmSeeds.mean_row`)."""
    groups = {g.attention: g for g in arm_seeds(rows)}
    means = [g.mean_row for g in groups.values()]
    ranking = sorted(means, key=lambda r: r.best_val_loss)
    lead = (
        None
        if len(ranking) < 2
        else compare(
            groups[ranking[0].attention].best, groups[ranking[1].attention].best, BASELINE_TOLERANCE
        ).side
        == Side.BELOW
    )
    arms = {r.attention: arm_findings(r, base) for r in means}
    mh, no = arms.get("multihead"), arms.get("none")
    return Findings(
        base,
        arms,
        comparability(means),
        ranking,
        lead,
        cost(mh.row, no.row) if mh is not None and no is not None else None,
        groups,
    )
