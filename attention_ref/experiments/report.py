"""Q03 in words and tables, from numbers only: rows + baselines -> findings -> markdown.

Pure: no MLflow, no torch. `attention_ref.experiments.results` reads the rows out of the
store. Here `findings` turns the figures into the facts a sentence may state (which side of
the bigram baseline an arm is on, whether its curve has levelled off, which arm is lowest,
whether the arms are comparable at all), each with the threshold it was decided by, and
`build_report` writes a sentence only from those facts: where the numbers go the other way,
the sentence says the other thing (the tests put the numbers on both sides of each threshold).
The book's Portuguese page writes its own words from the same `findings`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from attention_ref.experiments.names import Metric

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
    "model shape": ("n_embd", "n_layer", "n_head", "block_size", "dropout"),
    "schedule": ("batch_size", "lr", "min_lr", "warmup_steps", "weight_decay", "grad_clip"),
    "evaluation": ("eval_interval", "eval_batches"),
}

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
    ) -> ArmRow:  # fmt: skip
        """A row from a run's metrics, keyed by `Metric` name (as logged, or as read back).

        ``config`` is the run's flat options; values are kept as strings, as MLflow returns
        its params, so a row built at logging time equals the row read back.
        """
        figures = {k: float(metrics[m]) for k, m in cls.METRICS.items()}
        opts = {k: str(v) for k, v in (config or {}).items()}
        return cls(attention, run_id, status, n_params, steps=steps, val_curve=list(val_curve),
                   config=opts, data_sha256=data_sha256, **figures)  # fmt: skip

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
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------- findings


class Side(StrEnum):
    """Where a loss lies against a reference, ``BASELINE_TOLERANCE`` deciding "at"."""

    BELOW = "below"
    AT = "at"
    ABOVE = "above"


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


def comparability(rows: Sequence[ArmRow]) -> Comparability:
    """Compare the arms' seed, number of steps, data and `SHARED_OPTIONS`, key by key."""

    def values(key: str) -> dict[str, str | None]:
        if key == "steps":
            return {r.attention: str(r.steps) for r in rows}
        if key == "data":
            return {r.attention: r.data_sha256 for r in rows}
        return {r.attention: r.config.get(key) for r in rows}

    same: dict[str, str] = {}
    differ: dict[str, dict[str, str]] = {}
    unknown: list[str] = []
    for key in (k for keys in ASPECTS.values() for k in keys):
        by_arm = values(key)
        known = {a: v for a, v in by_arm.items() if v is not None}
        if len(set(known.values())) > 1:
            differ[key] = known
        elif len(known) < len(by_arm):
            unknown.append(key)
        elif known:
            same[key] = next(iter(known.values()))
    return Comparability(same, differ, unknown)


@dataclass(frozen=True)
class Findings:
    """Everything a sentence of the Q03 answer may state, computed from rows and baselines."""

    base: Baselines
    arms: dict[str, ArmFindings]  # by attention mode, in the rows' order
    comparability: Comparability
    ranking: list[ArmRow]  # lowest best validation loss first
    #: the lowest arm beats the next by more than BASELINE_TOLERANCE (None: a single arm)
    clear_lead: bool | None


def findings(rows: Sequence[ArmRow], base: Baselines) -> Findings:
    """The facts of the ablation: each arm against the baselines, the ranking, comparability."""
    ranking = sorted(rows, key=lambda r: r.best_val_loss)
    lead = (
        None
        if len(ranking) < 2
        else side(ranking[0].best_val_loss, ranking[1].best_val_loss) == Side.BELOW
    )
    return Findings(
        base, {r.attention: arm_findings(r, base) for r in rows}, comparability(rows), ranking,
        lead,
    )  # fmt: skip


# --------------------------------------------------------------------------------- words


def comparison_markdown(rows: Sequence[ArmRow], baseline: float) -> str:
    """The comparison table (markdown) with the bigram baseline under it."""
    cols = ("attention", "parameters", "best val loss", "final val loss", "final train loss",
            "tokens/s", "wall time (s)", "steps")  # fmt: skip
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for r in rows:
        lines.append(
            f"| {r.attention} | {r.n_params:,} | {r.best_val_loss:.4f} | {r.final_val_loss:.4f} | "
            f"{r.final_train_loss:.4f} | {r.tokens_per_sec:,.0f} | {r.wall_time_s:.0f} | "
            f"{r.steps} |"
        )
    lines += [
        "",
        "Bigram baseline (validation cross-entropy of the bigram model counted on the training "
        f"split): {baseline:.4f} nats",
    ]
    return "\n".join(lines) + "\n"


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _shown(key: str, value: str) -> str:
    return f"sha256 `{value[:12]}…`" if key == "data" else value


def comparability_sentence(c: Comparability, n_arms: int) -> str:
    """What the arms have in common, only as far as their rows record it."""
    if n_arms < 2:
        return "A single arm: nothing to compare it with."
    words = {keys[0]: aspect for aspect, keys in ASPECTS.items() if len(keys) == 1}
    if c.differ:
        parts = [
            f"{words.get(k, k)} ({', '.join(f'{a} {_shown(k, v)}' for a, v in by.items())})"
            for k, by in c.differ.items()
        ]
        return (
            f"**The arms are not comparable as they stand**: they differ in {_join(parts)}, so "
            "a difference below mixes the attention with these."
        )
    same: list[str] = []
    unknown: list[str] = []
    for aspect, keys in ASPECTS.items():
        if any(k in c.unknown for k in keys):
            unknown.append(aspect)
        elif len(keys) == 1:
            same.append(f"{aspect} ({_shown(keys[0], c.same[keys[0]])})")
        else:
            same.append(aspect)
    text = f"Every arm has the same {_join(same)}" if same else ""
    if not unknown:
        return text + "."
    verb, it = ("is", "it is") if len(unknown) == 1 else ("are", "they are")
    missing = (
        f"the {_join(unknown)} {verb} not recorded for every arm, so {it} not claimed to be "
        "the same."
    )
    return f"{text}; {missing}" if text else missing[0].upper() + missing[1:]


def _vs_baseline(gap: float) -> str:
    """``gap`` = loss - bigram baseline in words, the sign said, never printed as "-x below"."""
    return {
        Side.BELOW: f"{-gap:.3f} nats below the bigram baseline",
        Side.ABOVE: f"{gap:.3f} nats above the bigram baseline",
        Side.AT: f"at the bigram baseline ({gap:+.3f} nats, within {BASELINE_TOLERANCE})",
    }[side(gap, 0.0)]


def _curve_words(f: ArmFindings) -> str:
    p = f.plateau
    if p is None:
        return "Its validation curve has fewer than two evaluations."
    if p.early:
        return (
            f"The curve levels off early: from step {p.step} of {p.last_step} the validation "
            f"loss stays within {PLATEAU_TOLERANCE} of its final {p.final:.3f}."
        )
    if p.levelled:
        return (
            f"The curve levels off only late: from step {p.step} of {p.last_step} the "
            f"validation loss stays within {PLATEAU_TOLERANCE} of its final {p.final:.3f}."
        )
    return (
        f"The curve has not levelled off: its last evaluation ({p.final:.3f} at step "
        f"{p.last_step}) is more than {PLATEAU_TOLERANCE} from the one before."
    )


def _context(f: ArmFindings, base: Baselines, conclusion: str) -> str:
    """The words after "below the bigram baseline": context is shown to be used only when
    the arm is below even the bigram table fitted on the validation split."""
    fitted = base.bigram_fitted_on_val
    if f.beats_any_bigram:
        return (
            f", and below even the bigram table counted on the validation split itself "
            f"({fitted:.3f}), which no table P(next | current) beats there: {conclusion}."
        )
    if fitted is not None:
        return (
            f", but not below the bigram table counted on the validation split ({fitted:.3f}): "
            "these numbers alone do not show that it uses context."
        )
    return "."


def _multihead(f: ArmFindings, base: Baselines) -> str:
    r = f.row
    if f.falls is None:
        start = f"The best validation loss is {r.best_val_loss:.3f}"
    elif f.falls:
        step0, v0 = r.val_curve[0]
        start = f"Validation loss falls from {v0:.3f} at step {step0} to {r.best_val_loss:.3f}"
    else:
        step0, v0 = r.val_curve[0]
        start = (
            f"Validation loss does not fall below its first evaluation ({v0:.3f} at step "
            f"{step0}); the best is {r.best_val_loss:.3f}"
        )
    text = f"{start}, {_vs_baseline(f.gap)}"
    if f.side == Side.BELOW:
        text += _context(f, base, "the predictions use context, the previous characters of the "
                         "block weighted by softmax(QKᵀ/√d_k + M)")  # fmt: skip
    elif f.side == Side.AT:
        text += ": at these steps it has learned no more than a model that sees one character can."
    else:
        text += ": at these steps it has not learned even the bigram table."
    return f"* **With attention (Q02).** {text}"


def _none(f: ArmFindings, base: Baselines) -> str:
    r = f.row
    best = f"The best validation loss is {r.best_val_loss:.3f}, {_vs_baseline(f.gap)}"
    if f.side == Side.AT:
        best += ": the model has learned about as much as the bigram table of the training split."
    elif f.side == Side.ABOVE:
        best += ": it has not yet learned the bigram table as well as counting it does."
    else:
        best += (
            f": more than the {BASELINE_TOLERANCE} that fixed batches explain. A model without "
            "attention should not get there; **look for context leaking into its predictions**"
        )
        fitted = base.bigram_fitted_on_val
        if f.beats_any_bigram:
            best += (
                f". It is even below the bigram table counted on the validation split "
                f"({fitted:.3f}), which no model that sees one character can beat there: context "
                "leaks."
            )
        else:
            best += "."
    why = (
        "Without the attention sub-layer nothing moves information between positions: the MLP "
        "and the LayerNorms act on each position alone, so the prediction at position i is a "
        "function of character i and its position only, and the position inside a random "
        "window says nothing about the text. Such a model can at best learn the table "
        "P(next | current) of the training split, whose validation cross-entropy is the bigram "
        "baseline."
    )
    agree = (
        f"train ({r.final_train_loss:.3f}) and validation ({r.final_val_loss:.3f}) agree within "
        f"{AGREEMENT_TOLERANCE}"
        if f.train_val_agree
        else f"train ({r.final_train_loss:.3f}) and validation ({r.final_val_loss:.3f}) differ "
        f"by more than {AGREEMENT_TOLERANCE}"
    )
    if f.stuck_at_baseline:
        more = (
            f"More steps would not help: the curve has levelled off at the baseline and {agree}; "
            "the model is not under-trained, it is blind to context."
        )
    elif f.plateau is not None and not f.plateau.levelled:
        more = f"Its curve is still moving and {agree}: these steps do not show where it stops."
    else:
        more = f"Final {agree}."
    return f"* **Without attention (Q03).** {_curve_words(f)} {best} {why} {more}"


def _uniform(f: ArmFindings, mh: ArmFindings | None, base: Baselines) -> str:
    r = f.row
    text = (
        f"Averaging, at each position, itself and every position before it with equal weights "
        f"(no W_Q, W_K) reaches "
        f"{r.best_val_loss:.3f}, {_vs_baseline(f.gap)}"
    )
    text += {
        Side.BELOW: _context(f, base, "mixing context already helps"),
        Side.AT: ": at these steps mixing context has not helped.",
        Side.ABOVE: ": at these steps it has not learned even the bigram table.",
    }[f.side]
    if mh is not None:
        learned = mh.row.best_val_loss
        d = r.best_val_loss - learned
        against = {
            Side.ABOVE: f"Learned attention is {d:.3f} nats lower ({learned:.3f}): that "
            "difference is what learning *where to look* is worth here.",
            Side.BELOW: f"It is {-d:.3f} nats below learned attention ({learned:.3f}): at "
            "these steps equal weights beat learned ones.",
            Side.AT: f"It is within {BASELINE_TOLERANCE} of learned attention ({learned:.3f}, "
            f"{d:+.3f}): at these steps learning where to look has not paid.",
        }
        text += " " + against[side(r.best_val_loss, learned)]
    return f"* **Uniform attention.** {text}"


def _cost(mh: ArmFindings, no: ArmFindings) -> str:
    m, n = mh.row, no.row
    extra = m.n_params - n.n_params
    params = (
        f"Attention has {extra:,} of the {m.n_params:,} parameters ({extra / m.n_params:.0%})"
        if extra > 0
        else f"The model with attention has {m.n_params:,} parameters, without it {n.n_params:,}"
    )
    faster = n.tokens_per_sec > m.tokens_per_sec
    speed = (
        f"the model without it trains at {n.tokens_per_sec:,.0f} tokens/s against "
        f"{m.tokens_per_sec:,.0f} ({n.tokens_per_sec / m.tokens_per_sec:.1f}× as fast)"
        if faster
        else f"the model without it is not faster ({n.tokens_per_sec:,.0f} tokens/s against "
        f"{m.tokens_per_sec:,.0f})"
    )
    tail = ""
    if faster and no.stuck_at_baseline and side(m.best_val_loss, n.best_val_loss) == Side.BELOW:
        tail = (
            f", but speed does not buy back the context: its loss has levelled off "
            f"{n.best_val_loss - m.best_val_loss:.3f} nats above the model with attention"
        )
    return f"* **Cost.** {params}; {speed}{tail}."


def _ranking(f: Findings) -> str | None:
    r = f.ranking
    if len(r) < 2:
        return None
    if f.clear_lead:
        return (
            f"* **Lowest validation loss: {r[0].attention}** ({r[0].best_val_loss:.3f}), "
            f"{r[1].best_val_loss - r[0].best_val_loss:.3f} nats below the next "
            f"({r[1].attention}, {r[1].best_val_loss:.3f})."
        )
    return (
        f"* **No clear best arm:** {r[0].attention} ({r[0].best_val_loss:.3f}) and "
        f"{r[1].attention} ({r[1].best_val_loss:.3f}) are within {BASELINE_TOLERANCE} of each "
        "other."
    )


def build_report(experiment: str, source: str, arms: Sequence[ArmRow], base: Baselines) -> str:
    """The markdown answer to Q03, every sentence written from `findings` of ``arms``, ``base``."""
    f = findings(arms, base)
    k = base.bigram_smoothing
    smoothing = "add-one" if k == 1 else f"add-{k:g}"
    reference = (
        "Reference points on the whole validation split: a uniform guess over the "
        f"{base.vocab_size} characters costs ln {base.vocab_size} = "
        f"{math.log(base.vocab_size):.3f}; character frequencies alone (unigram) "
        f"{base.unigram:.3f}; the **bigram baseline** {base.bigram:.3f}: the validation "
        "cross-entropy of the bigram model P(next | current) counted on the training split "
        f"({smoothing} smoothing), which a model that sees one character can at best approach "
        "as it learns the same table."
    )
    fitted = base.bigram_fitted_on_val
    if fitted is not None:
        reference += (
            " It is not a lower bound: the table counted on the validation split itself gives "
            f"{fitted:.3f}."
            if fitted < base.bigram
            else f" The table counted on the validation split itself gives {fitted:.3f}."
        )
    out = [
        "# Q03: the same model without attention, measured",
        "",
        f"Experiment `{experiment}`, {source}. "
        + comparability_sentence(f.comparability, len(arms))
        + " Losses are cross-entropy in nats per character on fixed validation batches.",
        "",
        comparison_markdown(arms, base.bigram).rstrip(),
        "",
        reference,
        "",
        "## What happens in training",
        "",
    ]
    mh, no, un = f.arms.get("multihead"), f.arms.get("none"), f.arms.get("uniform")
    if mh is not None:
        out.append(_multihead(mh, base))
    if no is not None:
        out.append(_none(no, base))
    if un is not None:
        out.append(_uniform(un, mh, base))
    if (ranking := _ranking(f)) is not None:
        out.append(ranking)
    if mh is not None and no is not None:
        out.append(_cost(mh, no))
    out += [
        "",
        "Runs: " + ", ".join(f"{a.attention} `{a.run_id}`" for a in arms) + ".",
        "",
    ]
    return "\n".join(out)
