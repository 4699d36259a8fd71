"""Q03's arms in words: the paragraph of each arm of the ablation, from its findings.

Pure: no MLflow, no torch. `multihead_paragraph` (with attention, Q02), `none_paragraph`
(without it, Q03) and `uniform_paragraph` (equal weights) each write a sentence only from the
facts of `attention_ref.experiments.findings` and the thresholds they were decided by;
`attention_ref.experiments.report` puts them in the Q03 report.
"""

from __future__ import annotations

from attention_ref.experiments.findings import (
    AGREEMENT_TOLERANCE,
    BASELINE_TOLERANCE,
    PLATEAU_TOLERANCE,
    ArmFindings,
    Baselines,
    Side,
    side,
)
from attention_ref.experiments.spread import Gap


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


def multihead_paragraph(f: ArmFindings, base: Baselines) -> str:
    """The bullet of the arm with attention (Q02): how its validation loss moved, where it
    ends against the bigram baseline and, below it, what that shows of context."""
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
        text += _context(
            f,
            base,
            "the predictions use context, the previous characters of the "
            "block weighted by softmax(QKᵀ/√d_k + M)",
        )
    elif f.side == Side.AT:
        text += ": at these steps it has learned no more than a model that sees one character can."
    else:
        text += ": at these steps it has not learned even the bigram table."
    return f"* **With attention (Q02).** {text}"


def none_paragraph(f: ArmFindings, base: Baselines) -> str:
    """The bullet of the arm without attention (Q03): its curve, its loss against the bigram
    baseline, why a model that sees one character stops there, and whether more steps would
    help."""
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


def uniform_paragraph(
    f: ArmFindings, mh: ArmFindings | None, base: Baselines, g: Gap | None
) -> str:
    """``g``: the uniform arm against the multihead arm (None without a multihead arm)."""
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
    if mh is not None and g is not None:
        learned = mh.row.best_val_loss
        d = r.best_val_loss - learned
        if g.one_seed:
            against = {
                Side.ABOVE: f"Learned attention is {d:.3f} nats lower ({learned:.3f}): that "
                "difference is what learning *where to look* is worth here, on one seed.",
                Side.BELOW: f"It is {-d:.3f} nats below learned attention ({learned:.3f}): at "
                "these steps equal weights beat learned ones, on one seed.",
                Side.AT: f"It is within {BASELINE_TOLERANCE} of learned attention ({learned:.3f}, "
                f"{d:+.3f}): at these steps learning where to look has not paid.",
            }
        else:
            q = g.qualifier()
            against = {
                Side.ABOVE: f"Learned attention is {d:.3f} nats lower ({learned:.3f}), {q}: "
                "that difference is what learning *where to look* is worth here.",
                Side.BELOW: f"It is {-d:.3f} nats below learned attention ({learned:.3f}), {q}: "
                "at these steps equal weights beat learned ones.",
                Side.AT: f"It is {d:+.3f} nats from learned attention ({learned:.3f}), {q}: "
                "these steps do not show that learning where to look pays.",
            }
        text += " " + against[g.side]
    return f"* **Uniform attention.** {text}"
