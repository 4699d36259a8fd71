"""Q03 in words and tables, from numbers only: rows + baselines -> markdown.

Pure: no MLflow, no torch. `attention_ref.experiments.results` reads the rows out of the
store; here every sentence is written from the figures passed in, and a claim is made only
where those figures support it (the tests put the numbers on both sides of each threshold).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from attention_ref.experiments.names import Metric

#: how far (nats) below the bigram floor a no-attention arm may land before the report calls
#: it a leak of context: the floor is measured on the whole validation split, the arm on
#: fixed batches, so a small difference is sampling
FLOOR_TOLERANCE = 0.03
#: an arm's curve has "flattened" from the first evaluation within this of its final value
PLATEAU_TOLERANCE = 0.02


@dataclass
class ArmRow:
    """One line of the ablation's comparison table."""

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
        metrics: Mapping[str, float], val_curve: Sequence[tuple[int, float]] = (),
    ) -> ArmRow:  # fmt: skip
        """A row from a run's metrics, keyed by `Metric` name (as logged, or as read back)."""
        figures = {k: float(metrics[m]) for k, m in cls.METRICS.items()}
        return cls(attention, run_id, status, n_params, steps=steps, val_curve=list(val_curve),
                   **figures)  # fmt: skip


@dataclass(frozen=True)
class Baselines:
    """What a model can do with less than context, on the validation split (nats/char)."""

    vocab_size: int
    unigram: float  # character frequencies alone
    bigram_floor: float  # P(next | current), counted on the training split


def comparison_markdown(rows: Sequence[ArmRow], floor: float) -> str:
    """The comparison table (markdown) with the bigram floor under it."""
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
        f"Bigram floor (counted on the training split; validation cross-entropy): {floor:.4f} nats",
    ]
    return "\n".join(lines) + "\n"


def plateau_step(curve: Sequence[tuple[int, float]], tolerance: float = PLATEAU_TOLERANCE) -> int:
    """First evaluation step from which validation loss stays within ``tolerance`` of its end."""
    final = curve[-1][1]
    step = curve[-1][0]
    for s, v in reversed(curve):
        if abs(v - final) > tolerance:
            break
        step = s
    return step


def build_report(experiment: str, source: str, arms: Sequence[ArmRow], base: Baselines) -> str:
    """The markdown answer to Q03, every figure taken from ``arms`` and ``base``."""
    floor = base.bigram_floor
    by = {a.attention: a for a in arms}
    out = [
        "# Q03: the same model without attention, measured",
        "",
        f"Experiment `{experiment}`, {source}; every arm has the same seed, data, schedule and "
        "number of steps. Losses are cross-entropy in nats per character on fixed validation "
        "batches.",
        "",
        comparison_markdown(arms, floor).rstrip(),
        "",
        "Reference points on the validation split: a uniform guess over the "
        f"{base.vocab_size} characters costs ln {base.vocab_size} = "
        f"{math.log(base.vocab_size):.3f}; character frequencies alone (unigram) "
        f"{base.unigram:.3f}; the **bigram floor** "
        f"{floor:.3f}: the table P(next | current) counted on the training split.",
        "",
        "## What happens in training",
        "",
    ]
    mh, no, un = by.get("multihead"), by.get("none"), by.get("uniform")
    if mh is not None:
        first = mh.val_curve[0]
        out.append(
            f"* **With attention (Q02).** Validation loss falls from {first[1]:.3f} at step "
            f"{first[0]} to {mh.best_val_loss:.3f}, {floor - mh.best_val_loss:.3f} nats below the "
            "bigram floor: every prediction reads the previous characters of its block, weighted "
            "by softmax(QKᵀ/√d_k + M), so it can use words, names and line structure."
        )
    if no is not None:
        gap = no.best_val_loss - floor
        plateau = plateau_step(no.val_curve)
        verdict = (
            f"that is {gap:+.3f} nats from the floor: the model has learned the bigram table "
            "and can learn nothing more"
            if gap >= -FLOOR_TOLERANCE
            else f"that is {-gap:.3f} nats BELOW the floor, which a model without attention "
            "cannot reach: context leaks into the predictions somewhere"
        )
        out.append(
            f"* **Without attention (Q03).** The curve flattens early: from step {plateau} of "
            f"{no.steps} the validation loss stays within {PLATEAU_TOLERANCE} of its final "
            f"{no.final_val_loss:.3f}, and the best is {no.best_val_loss:.3f}; {verdict}. "
            "Without the attention sub-layer nothing moves information between positions: the "
            "MLP and the LayerNorms act on each position alone, so the prediction at position i "
            "is a function of character i and its position only, and the position inside a "
            "random window says nothing about the text. The best such a model can do is "
            "P(next | current): the bigram floor. More steps would not help: "
            f"train ({no.final_train_loss:.3f}) and validation agree, the model is not "
            "under-trained, it is blind to context."
        )
    if un is not None:
        ref = f", {un.best_val_loss - mh.best_val_loss:.3f} above learned attention" if mh else ""
        out.append(
            f"* **Uniform attention.** Averaging all previous positions with equal weights "
            f"(no W_Q, W_K) reaches {un.best_val_loss:.3f}: below the floor, so mixing context "
            f"already helps{ref}. The difference is what learning *where to look* is worth."
        )
    if mh is not None and no is not None:
        out.append(
            f"* **Cost.** Attention has {mh.n_params - no.n_params:,} of the "
            f"{mh.n_params:,} parameters ({(mh.n_params - no.n_params) / mh.n_params:.0%}); the "
            f"model without it trains at {no.tokens_per_sec:,.0f} tokens/s against "
            f"{mh.tokens_per_sec:,.0f}, but no amount of extra speed buys back the context."
        )
    out += [
        "",
        "Runs: " + ", ".join(f"{a.attention} `{a.run_id}`" for a in arms) + ".",
        "",
    ]
    return "\n".join(out)
