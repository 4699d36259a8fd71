"""Q03's facts, from numbers only: rows + baselines -> findings (what a sentence may state).

Pure: no MLflow, no torch. `attention_ref.experiments.results` reads the rows out of the
store, `attention_ref.experiments.report` writes the words. Here `findings` turns the figures
into the facts a sentence may state (which side of the bigram baseline an arm is on, whether
its curve has levelled off, which arm is lowest, whether the arms are comparable at all, what
the parameters the arms differ by are), each with the threshold it was decided by; the
English report and the book's Portuguese page both write their words from these facts only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from attention_ref.experiments.names import Metric
from attention_ref.experiments.spread import Gap, Side, Spread, compare, spread

#: two losses closer than this (nats) are "at" each other, and neither is called lower: an
#: arm is measured on fixed validation batches, the baselines on the whole validation split,
#: so a smaller difference is sampling, not a finding
BASELINE_TOLERANCE = 0.03
#: an arm's curve has "levelled off" from the first evaluation within this of its final value
PLATEAU_TOLERANCE = 0.02
#: final train and validation losses "agree" (no overfitting to the training split) within this
AGREEMENT_TOLERANCE = 0.05

#: the options arms must share to be compared, by the words a sentence uses for them (keys of
#: the flat `TrainConfig`, as MLflow params); the seed, the steps and the data come on top
SHARED_OPTIONS: dict[str, tuple[str, ...]] = {
    "model shape": ("n_embd", "n_layer", "n_head", "kv_heads", "pos", "window", "block_size",
                    "dropout"),
    "schedule": ("batch_size", "lr", "min_lr", "warmup_steps", "weight_decay", "grad_clip"),
    "evaluation": ("eval_interval", "eval_batches"),
}  # fmt: skip

#: the value a row that does not record an option ran with: these options came after the first
#: recorded runs, whose code had only this behaviour (multi-head, learned positions, no window)
RECORDED_BEFORE: dict[str, str] = {"kv_heads": "0", "pos": "learned", "window": "0"}

#: what a sentence calls each compared key (one aspect may hold several options)
ASPECTS: dict[str, tuple[str, ...]] = {
    "seed": ("seed",),
    "number of steps": ("steps",),
    "data": ("data",),
    **SHARED_OPTIONS,
}


@dataclass
class ArmRow:
    """One line of the ablation's comparison table, and what the arm was run with."""

    attention: str
    run_id: str
    status: str
    n_params: int
    best_val_loss: float
    final_val_loss: float
    final_train_loss: float
    tokens_per_sec: float
    wall_time_s: float
    steps: int
    val_curve: list[tuple[int, float]] = field(default_factory=list)  # filled when read back
    #: the run's options (flat `TrainConfig`, values as MLflow params hold them: strings)
    config: dict[str, str] = field(default_factory=dict)
    data_sha256: str | None = None  # the data set's sha256; None when not recorded
    #: the model's parameters by `Part` (which tensors are attention, read from the model
    #: itself: `attention_ref.experiments.model_parts`); empty when not recorded
    param_groups: dict[str, int] = field(default_factory=dict)
    #: the precision the run trained in (``fp32``, ``bf16``: the resolved one, tag
    #: `attention_ref.experiments.names.Tag.PRECISION`); None when not recorded
    precision: str | None = None

    #: each figure of the row and the run metric it comes from (the one place they meet)
    METRICS: ClassVar[dict[str, Metric]] = {
        "best_val_loss": Metric.BEST_VAL_LOSS,
        "final_val_loss": Metric.FINAL_VAL_LOSS,
        "final_train_loss": Metric.FINAL_TRAIN_EVAL_LOSS,
        "tokens_per_sec": Metric.MEAN_TOKENS_PER_SEC,
        "wall_time_s": Metric.WALL_TIME_S,
    }

    @classmethod
    def from_metrics(
        cls, attention: str, run_id: str, status: str, n_params: int, steps: int,
        metrics: Mapping[str, float], val_curve: Sequence[tuple[int, float]] = (), *,
        config: Mapping[str, object] | None = None, data_sha256: str | None = None,
        param_groups: Mapping[str, int] | None = None, precision: str | None = None,
    ) -> ArmRow:  # fmt: skip
        """A row from a run's metrics, keyed by `Metric` name (as logged, or as read back).

        ``config`` is the run's flat options; values are kept as strings, as MLflow returns
        its params, so a row built at logging time equals the row read back.
        """
        figures = {k: float(metrics[m]) for k, m in cls.METRICS.items()}
        opts = {k: str(v) for k, v in (config or {}).items()}
        return cls(attention, run_id, status, n_params, steps=steps, val_curve=list(val_curve),
                   config=opts, data_sha256=data_sha256, param_groups=dict(param_groups or {}),
                   precision=precision, **figures)  # fmt: skip

    @property
    def seed(self) -> str | None:
        """The run's seed, as recorded (None when the row does not hold its options)."""
        return self.config.get("seed")


@dataclass(frozen=True)
class Baselines:
    """What a model can do with less than context, on the whole validation split (nats/char)."""

    vocab_size: int
    unigram: float  # character frequencies counted on the training split
    #: the bigram baseline: validation cross-entropy of P(next | current) counted on the
    #: training split with add-k smoothing (k = ``bigram_smoothing``)
    bigram: float
    bigram_smoothing: float = 1.0
    #: the same table counted on the validation split itself: the lowest cross-entropy any
    #: table P(next | current) reaches there (None when not computed)
    bigram_fitted_on_val: float | None = None


#: keys of an ablation parent's params that are not options of its arms
_PARENT_ONLY = frozenset({"arms", "bigram_floor"})


def rows_from_comparison(doc: Mapping[str, Any]) -> list[ArmRow]:
    """The arms of an exported ``comparison.json`` (`attention_ref.experiments.export`) as
    rows, each with its validation curve (``doc["curves"]``).

    A row that does not hold its options (exports made before rows did) gets the parent's
    params (``doc["params"]``) less ``arms`` and ``bigram_floor``: the ablation logs on its
    parent exactly the options its arms share.
    """
    names = {f.name for f in fields(ArmRow)}
    shared = {k: v for k, v in doc.get("params", {}).items() if k not in _PARENT_ONLY}
    rows = []
    for r in doc["rows"]:
        row = ArmRow(**{k: v for k, v in r.items() if k in names})
        curve = doc.get("curves", {}).get(row.attention, {}).get("val_loss", row.val_curve)
        row.val_curve = [(int(s), float(v)) for s, v in curve]
        row.config = {str(k): str(v) for k, v in (row.config or shared).items()}
        row.param_groups = {str(k): int(v) for k, v in (row.param_groups or {}).items()}
        rows.append(row)
    return rows


# ------------------------------------------------------------------------- an arm over seeds


def _joined(values: Sequence[str | None]) -> str | None:
    """One value where every row has it, else the distinct values joined (``"7, 8"``), so
    a comparison of arms sees them; None where no row records it."""
    known = [v for v in values if v is not None]
    if len(known) < len(values):
        return None
    distinct = list(dict.fromkeys(known))
    return ", ".join(distinct) if distinct else None


@dataclass(frozen=True)
class ArmSeeds:
    """One arm trained on one or more seeds: its runs' rows, in the order of their seeds."""

    attention: str
    rows: tuple[ArmRow, ...]

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def seeds(self) -> list[str]:
        return [r.seed or "?" for r in self.rows]

    @property
    def best(self) -> Spread:
        """The best validation loss over the seeds."""
        return spread([r.best_val_loss for r in self.rows])

    def figure(self, key: str) -> Spread:
        """Any figure of `ArmRow.METRICS` over the seeds."""
        return spread([getattr(r, key) for r in self.rows])

    @property
    def precision(self) -> str | None:
        """The precision its runs trained in (``"bf16"``, ``"bf16, fp32"``), None if a run
        does not record it."""
        return _joined([r.precision for r in self.rows])

    @property
    def mean_row(self) -> ArmRow:
        """The arm as one row: each figure the mean over its seeds, the validation curve the
        mean at the steps every seed evaluated, an option that differs between its runs (the
        seed) their values joined. One seed: its row itself."""
        if self.n == 1:
            return self.rows[0]
        first = self.rows[0]
        figures = {k: self.figure(k).mean for k in ArmRow.METRICS}
        curves = [dict(r.val_curve) for r in self.rows]
        steps = sorted(set.intersection(*(set(c) for c in curves)))
        curve = [(s, math.fsum(c[s] for c in curves) / self.n) for s in steps]
        keys = list(dict.fromkeys(k for r in self.rows for k in r.config))
        config = {k: v for k in keys
                  if (v := _joined([r.config.get(k) for r in self.rows])) is not None}  # fmt: skip
        return ArmRow(
            self.attention, ", ".join(r.run_id for r in self.rows), first.status, first.n_params,
            steps=first.steps, val_curve=curve, config=config,
            data_sha256=_joined([r.data_sha256 for r in self.rows]),
            param_groups=dict(first.param_groups), precision=self.precision, **figures,
        )  # fmt: skip


def _seed_key(row: ArmRow) -> tuple[int, str]:
    seed = row.seed or ""
    return (int(seed), seed) if seed.lstrip("-").isdigit() else (0, seed)


def arm_seeds(rows: Sequence[ArmRow]) -> list[ArmSeeds]:
    """The rows grouped by arm (``attention``), the arms in the order they first come, each
    arm's runs by seed."""
    by_arm: dict[str, list[ArmRow]] = {}
    for r in rows:
        by_arm.setdefault(r.attention, []).append(r)
    return [ArmSeeds(a, tuple(sorted(rs, key=_seed_key))) for a, rs in by_arm.items()]


# ------------------------------------------------------------------------------- findings


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


@dataclass(frozen=True)
class Comparability:
    """Which of the seed, steps, data and shared options the arms have in common."""

    same: dict[str, str]  # key -> the one value every arm has
    differ: dict[str, dict[str, str]]  # key -> arm -> value
    unknown: list[str]  # keys some arm does not record

    @property
    def comparable(self) -> bool:
        """Every key recorded, and the same for every arm."""
        return not self.differ and not self.unknown


class Compared(Protocol):
    """What `comparability` reads of a row: its steps, its data and its options."""

    @property
    def steps(self) -> int: ...
    @property
    def data_sha256(self) -> str | None: ...
    @property
    def config(self) -> Mapping[str, str]: ...


#: every key `comparability` compares by default: the seed, steps, data and shared options
COMPARED_KEYS: tuple[str, ...] = tuple(k for keys in ASPECTS.values() for k in keys)


def comparability(
    rows: Sequence[Compared],
    keys: Sequence[str] = COMPARED_KEYS,
    name: Callable[[Any], str] = lambda r: r.attention,
) -> Comparability:
    """Compare the arms' seed, number of steps, data and `SHARED_OPTIONS` (or ``keys``), key by
    key; ``name`` says which arm a row is (its attention mode by default)."""

    def values(key: str) -> dict[str, str | None]:
        if key == "steps":
            return {name(r): str(r.steps) for r in rows}
        if key == "data":
            return {name(r): r.data_sha256 for r in rows}

        def value(r: Compared) -> str | None:
            v = r.config.get(key, RECORDED_BEFORE.get(key))
            return None if v is None else str(v)

        return {name(r): value(r) for r in rows}

    same: dict[str, str] = {}
    differ: dict[str, dict[str, str]] = {}
    unknown: list[str] = []
    for key in keys:
        by_arm = values(key)
        known = {a: v for a, v in by_arm.items() if v is not None}
        if len(set(known.values())) > 1:
            differ[key] = known
        elif len(known) < len(by_arm):
            unknown.append(key)
        elif known:
            same[key] = next(iter(known.values()))
    return Comparability(same, differ, unknown)


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


class Part(StrEnum):
    """The parts of the character GPT its parameters belong to (a `ArmRow.param_groups` key)."""

    EMBEDDINGS = "embeddings"  # token and position embeddings
    ATTENTION = "attention"  # each block's attention sub-layer: W_Q, W_K, W_V, W_O, biases
    ATTENTION_NORM = "attention LayerNorm"  # each block's LayerNorm before its attention
    MLP = "MLP"
    MLP_NORM = "MLP LayerNorm"  # each block's LayerNorm before its MLP
    FINAL_NORM = "final LayerNorm"
    HEAD = "output head"


def recorded_parts(row: ArmRow) -> dict[str, int] | None:
    """The row's parameters by part, when recorded and adding up to its ``n_params``; else
    ``None`` (a breakdown that does not add up says nothing about which are attention)."""
    groups = row.param_groups
    if not groups or sum(groups.values()) != row.n_params:
        return None
    return dict(groups)


@dataclass(frozen=True)
class Cost:
    """What attention costs: the parameters the arms differ by, and the speed."""

    with_attention: ArmRow
    without: ArmRow
    difference: int  # n_params with attention - n_params without
    #: the parameters of the attention sub-layers of the arm with attention (None: its
    #: breakdown is not recorded)
    attention: int | None
    #: part -> how many more parameters the arm with attention has there (None: a breakdown
    #: is missing); the parts that do not differ are left out
    differing: dict[str, int] | None
    #: tokens/s without attention / with it
    speedup: float

    @property
    def faster(self) -> bool:
        """The model without attention trains at more tokens/s."""
        return self.without.tokens_per_sec > self.with_attention.tokens_per_sec


def cost(mh: ArmRow, no: ArmRow) -> Cost:
    """The parameters and the speed of the arm with attention against the arm without it,
    each part read from the rows' breakdowns (`recorded_parts`)."""
    mine, theirs = recorded_parts(mh), recorded_parts(no)
    differing = None
    if mine is not None and theirs is not None:
        parts = [p for p in Part if p in mine or p in theirs]
        parts += sorted((set(mine) | set(theirs)) - set(parts))  # a part this code does not name
        differing = {p: mine.get(p, 0) - theirs.get(p, 0) for p in parts}
        differing = {p: d for p, d in differing.items() if d}
    return Cost(
        with_attention=mh,
        without=no,
        difference=mh.n_params - no.n_params,
        attention=None if mine is None else mine.get(Part.ATTENTION, 0),
        differing=differing,
        speedup=no.tokens_per_sec / mh.tokens_per_sec,
    )


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
        else compare(groups[ranking[0].attention].best, groups[ranking[1].attention].best,
                     BASELINE_TOLERANCE).side == Side.BELOW
    )  # fmt: skip
    arms = {r.attention: arm_findings(r, base) for r in means}
    mh, no = arms.get("multihead"), arms.get("none")
    return Findings(
        base, arms, comparability(means), ranking, lead,
        cost(mh.row, no.row) if mh is not None and no is not None else None, groups,
    )  # fmt: skip
