"""Q03's arms in words: the paragraph of each arm of the ablation, from its findings.

Pure: no MLflow, no torch. `multihead_paragraph` (with attention, Q02), `none_paragraph`
(without it, Q03) and `uniform_paragraph` (equal weights) each choose a sentence only from the
facts of `attention_ref.experiments.findings` and the thresholds they were decided by, and say
it in ``lang`` through `attention_ref.experiments.arm_words`;
`attention_ref.experiments.report` puts them in the Q03 report.
"""

from __future__ import annotations

from attention_ref.experiments.arm_words import ARMS
from attention_ref.experiments.findings import (
    AGREEMENT_TOLERANCE,
    BASELINE_TOLERANCE,
    PLATEAU_TOLERANCE,
    ArmFindings,
    Baselines,
    Side,
    side,
)
from attention_ref.experiments.report_words import num, qualifier
from attention_ref.experiments.spread import Gap


def _loss(v: float, lang: str) -> str:
    """A loss as the paragraphs print it: 3 decimals."""
    return num(v, ".3f", lang)


def _vs_baseline(gap: float, lang: str) -> str:
    """``gap`` = loss - bigram baseline in words, the sign said, never printed as "-x below"."""
    say = ARMS[lang]
    where = side(gap, 0.0)
    if where == Side.AT:
        return say["at"].format(
            gap=num(gap, "+.3f", lang), tolerance=num(BASELINE_TOLERANCE, "g", lang)
        )
    return say[where].format(gap=_loss(abs(gap), lang))


def _curve_words(f: ArmFindings, lang: str) -> str:
    say = ARMS[lang]
    p = f.plateau
    if p is None:
        return say["no_curve"]
    key = "early" if p.early else "late" if p.levelled else "moving"
    return say[key].format(
        step=p.step,
        last=p.last_step,
        tolerance=num(PLATEAU_TOLERANCE, "g", lang),
        final=_loss(p.final, lang),
    )


def _context(f: ArmFindings, base: Baselines, conclusion: str, lang: str) -> str:
    """The words after "below the bigram baseline": context is shown to be used only when
    the arm is below even the bigram table fitted on the validation split."""
    fitted = base.bigram_fitted_on_val
    if fitted is None:
        return "."
    key = "beats_any" if f.beats_any_bigram else "not_below_fitted"
    return ARMS[lang][key].format(fitted=_loss(fitted, lang), conclusion=conclusion)


def multihead_paragraph(f: ArmFindings, base: Baselines, lang: str = "en") -> str:
    """The bullet of the arm with attention (Q02): how its validation loss moved, where it
    ends against the bigram baseline and, below it, what that shows of context."""
    say = ARMS[lang]
    r = f.row
    best = _loss(r.best_val_loss, lang)
    if f.falls is None:
        start = say["mh_best"].format(best=best)
    else:
        step0, v0 = r.val_curve[0]
        key = "mh_falls" if f.falls else "mh_flat"
        start = say[key].format(first=_loss(v0, lang), step=step0, best=best)
    text = f"{start}, {_vs_baseline(f.gap, lang)}"
    text += {
        Side.BELOW: lambda: _context(f, base, say["mh_context"], lang),
        Side.AT: lambda: say["mh_at"],
        Side.ABOVE: lambda: say["not_even_bigram"],
    }[f.side]()
    return say["mh"].format(text=text)


def none_paragraph(f: ArmFindings, base: Baselines, lang: str = "en") -> str:
    """The bullet of the arm without attention (Q03): its curve, its loss against the bigram
    baseline, why a model that sees one character stops there, and whether more steps would
    help."""
    say = ARMS[lang]
    r = f.row
    best = say["none_best"].format(
        best=_loss(r.best_val_loss, lang), where=_vs_baseline(f.gap, lang)
    )
    if f.side == Side.AT:
        best += say["none_at"]
    elif f.side == Side.ABOVE:
        best += say["none_above"]
    else:
        best += say["none_below"].format(tolerance=num(BASELINE_TOLERANCE, "g", lang))
        fitted = base.bigram_fitted_on_val
        if f.beats_any_bigram and fitted is not None:
            best += say["none_leaks"].format(fitted=_loss(fitted, lang))
        else:
            best += "."
    agree = say["agree" if f.train_val_agree else "differ"].format(
        train=_loss(r.final_train_loss, lang),
        val=_loss(r.final_val_loss, lang),
        tolerance=num(AGREEMENT_TOLERANCE, "g", lang),
    )
    if f.stuck_at_baseline:
        more = say["stuck"].format(agree=agree)
    elif f.plateau is not None and not f.plateau.levelled:
        more = say["still_moving"].format(agree=agree)
    else:
        more = say["final"].format(agree=agree)
    return say["none"].format(curve=_curve_words(f, lang), best=best, why=say["why"], more=more)


#: the sentence on uniform against learned attention, by the side of the uniform arm: over
#: one seed each (decided by a tolerance), and over several (decided by their spread)
_AGAINST_ONE_SEED = {Side.ABOVE: "lower_one_seed", Side.BELOW: "higher_one_seed"}
_AGAINST = {Side.ABOVE: "lower", Side.BELOW: "higher", Side.AT: "at_spread"}


def uniform_paragraph(
    f: ArmFindings, mh: ArmFindings | None, base: Baselines, g: Gap | None, lang: str = "en"
) -> str:
    """``g``: the uniform arm against the multihead arm (None without a multihead arm)."""
    say = ARMS[lang]
    r = f.row
    text = say["uniform_reaches"].format(
        best=_loss(r.best_val_loss, lang), where=_vs_baseline(f.gap, lang)
    )
    text += {
        Side.BELOW: lambda: _context(f, base, say["uniform_context"], lang),
        Side.AT: lambda: say["uniform_at"],
        Side.ABOVE: lambda: say["not_even_bigram"],
    }[f.side]()
    if mh is not None and g is not None:
        learned = mh.row.best_val_loss
        d = r.best_val_loss - learned
        figures = {"learned": _loss(learned, lang), "qualifier": qualifier(g, lang)}
        if g.side == Side.AT:
            # not told apart: the difference is said with its sign
            figures["d"] = num(d, "+.3f", lang)
            key = "at_one_seed" if g.one_seed else "at_spread"
        else:
            figures["d"] = _loss(abs(d), lang)
            key = (_AGAINST_ONE_SEED if g.one_seed else _AGAINST)[g.side]
        figures["tolerance"] = num(BASELINE_TOLERANCE, "g", lang)
        text += " " + say[key].format(**figures)
    return say["uniform"].format(text=text)
