"""The ablation's arms as rows: `ArmRow` (one run's figures and options), `Baselines` (what a
model does with less than context), the rows of an exported ``comparison.json``
(`rows_from_comparison`) and an arm over its seeds (`ArmSeeds`, `arm_seeds`).

Pure: no MLflow, no torch. `attention_ref.experiments.results` reads the rows out of the store;
`attention_ref.experiments.findings` turns them into facts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from attention_ref.experiments.names import Metric
from attention_ref.experiments.spread import Spread, spread


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
        cls,
        attention: str,
        run_id: str,
        status: str,
        n_params: int,
        steps: int,
        metrics: Mapping[str, float],
        val_curve: Sequence[tuple[int, float]] = (),
        *,
        config: Mapping[str, object] | None = None,
        data_sha256: str | None = None,
        param_groups: Mapping[str, int] | None = None,
        precision: str | None = None,
    ) -> ArmRow:
        """A row from a run's metrics, keyed by `Metric` name (as logged, or as read back).

        ``config`` is the run's flat options; values are kept as strings, as MLflow returns
        its params, so a row built at logging time equals the row read back.
        """
        figures = {k: float(metrics[m]) for k, m in cls.METRICS.items()}
        opts = {k: str(v) for k, v in (config or {}).items()}
        return cls(
            attention,
            run_id,
            status,
            n_params,
            steps=steps,
            val_curve=list(val_curve),
            config=opts,
            data_sha256=data_sha256,
            param_groups=dict(param_groups or {}),
            precision=precision,
            **figures,
        )

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
    rows, each with its validation curve: its own (``val_curve`` in its row), else, in exports
    made before rows held theirs, the arm's curve in ``doc["curves"]`` (which, for an arm of
    several seeds, is the mean over its seeds: no one run's curve).

    A row that does not hold its options (exports made before rows did) gets the parent's
    params (``doc["params"]``) less ``arms`` and ``bigram_floor``: the ablation logs on its
    parent exactly the options its arms share.
    """
    names = {f.name for f in fields(ArmRow)}
    shared = {k: v for k, v in doc.get("params", {}).items() if k not in _PARENT_ONLY}
    rows = []
    for r in doc["rows"]:
        row = ArmRow(**{k: v for k, v in r.items() if k in names})
        curve = row.val_curve or doc.get("curves", {}).get(row.attention, {}).get("val_loss", [])
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
        config = {
            k: v for k in keys if (v := _joined([r.config.get(k) for r in self.rows])) is not None
        }
        return ArmRow(
            self.attention,
            ", ".join(r.run_id for r in self.rows),
            first.status,
            first.n_params,
            steps=first.steps,
            val_curve=curve,
            config=config,
            data_sha256=_joined([r.data_sha256 for r in self.rows]),
            param_groups=dict(first.param_groups),
            precision=self.precision,
            **figures,
        )


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
