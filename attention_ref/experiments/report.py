"""Q03 in words and tables: findings -> markdown.

Pure: no MLflow, no torch. `attention_ref.experiments.findings` turns the rows and baselines
into facts, each with the threshold it was decided by; `build_report` writes a sentence only
from those facts: where the numbers go the other way, the sentence says the other thing (the
tests put the numbers on both sides of each threshold). The book's Portuguese page writes its
own words from the same `findings`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attention_ref.experiments.findings import (
    AGREEMENT_TOLERANCE,
    ASPECTS,
    BASELINE_TOLERANCE,
    PLATEAU_TOLERANCE,
    ArmFindings,
    ArmRow,
    ArmSeeds,
    Baselines,
    Comparability,
    Cost,
    Findings,
    Part,
    Side,
    arm_seeds,
    findings,
    side,
)
from attention_ref.experiments.spread import Gap, spread_cells

# --------------------------------------------------------------------------------- words


def comparison_markdown(rows: Sequence[ArmRow], baseline: float) -> str:
    """The comparison table (markdown) with the bigram baseline under it.

    One line per arm. An arm of several seeds (several rows of one ``attention``) shows the
    mean of each figure, the number of seeds, the range of the best validation loss and,
    from 3 seeds, its 95 % t-interval; the precision column appears where the runs record it.
    Arms of one run each without a recorded precision: the one-seed table of before."""
    groups = arm_seeds(rows)
    several = any(g.n > 1 for g in groups)
    precise = any(r.precision is not None for r in rows)
    cols = ["attention", *(["seeds"] if several else []), *(["precision"] if precise else []),
            "parameters", *(["best val loss (mean)", "min–max", "95 % interval"] if several
                            else ["best val loss"]),
            "final val loss", "final train loss", "tokens/s", "wall time (s)", "steps"]  # fmt: skip
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for g in groups:
        r = g.mean_row
        mean, rng, ci = spread_cells(g.best)
        cells = [r.attention, *([str(g.n)] if several else []),
                 *([g.precision or "not recorded"] if precise else []), f"{r.n_params:,}",
                 *([mean, rng, ci] if several else [f"{r.best_val_loss:.4f}"]),
                 f"{r.final_val_loss:.4f}", f"{r.final_train_loss:.4f}",
                 f"{r.tokens_per_sec:,.0f}", f"{r.wall_time_s:.0f}", str(r.steps)]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Bigram baseline (validation cross-entropy of the bigram model counted on the "
              f"training split): {baseline:.4f} nats"]  # fmt: skip
    if several:
        seeds = sorted({g.n for g in groups})
        lines += ["", f"Each arm's figures are means over its {_join([str(n) for n in seeds])} "
                  "seeds; min–max and the 95 % t-interval (from 3 seeds) are of its best "
                  "validation loss."]  # fmt: skip
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
            value = c.same[keys[0]]
            several = keys[0] == "seed" and ", " in value  # an arm of several seeds
            shown = _shown(keys[0], value)
            same.append(f"{aspect}s ({shown})" if several else f"{aspect} ({shown})")
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


def _uniform(f: ArmFindings, mh: ArmFindings | None, base: Baselines, g: Gap | None) -> str:
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


#: where the cost sentence says a part's parameters are
PART_WORDS: dict[str, str] = {
    Part.EMBEDDINGS: "in the embeddings",
    Part.ATTENTION: "in the attention sub-layers",
    Part.ATTENTION_NORM: "in the LayerNorm before each attention sub-layer",
    Part.MLP: "in the MLPs",
    Part.MLP_NORM: "in the LayerNorm before each MLP",
    Part.FINAL_NORM: "in the final LayerNorm",
    Part.HEAD: "in the output head",
}


def parameters_sentence(c: Cost) -> str:
    """How many parameters are attention, from the breakdown of the model with attention, and
    what the arms differ by, part by part (only what the breakdowns record is said)."""
    m, n = c.with_attention, c.without
    if c.difference <= 0 or c.attention is None:
        known = "" if c.difference <= 0 else "; which of them are attention is not recorded"
        return (
            f"The model with attention has {m.n_params:,} parameters, without it "
            f"{n.n_params:,}{known}"
        )
    text = (
        f"Attention has {c.attention:,} of the {m.n_params:,} parameters "
        f"({c.attention / m.n_params:.0%})"
    )
    if c.differing is None:
        return text + f"; the arms differ by {c.difference:,} (the other arm's parts are not " \
            "recorded)"  # fmt: skip
    if c.differing == {Part.ATTENTION: c.attention}:
        return text + ": the whole difference between the arms"
    parts = [f"{d:,} {PART_WORDS.get(p, f'in {p}')}" for p, d in c.differing.items()]
    return text + f"; the arms differ by {c.difference:,}: {_join(parts)}"


def _cost(c: Cost, no: ArmFindings, g: Gap) -> str:
    """``g``: the arm with attention against the arm without it."""
    m, n = c.with_attention, c.without
    speed = (
        f"the model without attention trains at {n.tokens_per_sec:,.0f} tokens/s against "
        f"{m.tokens_per_sec:,.0f} ({c.speedup:.1f}× as fast)"
        if c.faster
        else f"the model without attention is not faster ({n.tokens_per_sec:,.0f} tokens/s "
        f"against {m.tokens_per_sec:,.0f})"
    )
    tail = ""
    if c.faster and no.stuck_at_baseline and g.side == Side.BELOW:
        tail = (
            f", but speed does not buy back the context: its loss has levelled off "
            f"{n.best_val_loss - m.best_val_loss:.3f} nats above the model with attention"
            f" ({'on one seed' if g.one_seed else g.qualifier()})"
        )
    return f"* **Cost.** {parameters_sentence(c)}; {speed}{tail}."


def _ranking(f: Findings) -> str | None:
    r, g = f.ranking, f.lead
    if len(r) < 2 or g is None:
        return None
    if f.clear_lead:
        rests = "on one seed" if g.one_seed else g.qualifier()
        return (
            f"* **Lowest validation loss: {r[0].attention}** ({r[0].best_val_loss:.3f}), "
            f"{r[1].best_val_loss - r[0].best_val_loss:.3f} nats below the next "
            f"({r[1].attention}, {r[1].best_val_loss:.3f}), {rests}."
        )
    if g.one_seed:
        return (
            f"* **No clear best arm:** {r[0].attention} ({r[0].best_val_loss:.3f}) and "
            f"{r[1].attention} ({r[1].best_val_loss:.3f}) are within {BASELINE_TOLERANCE} of "
            "each other, on one seed."
        )
    return (
        f"* **No clear best arm:** {r[0].attention} ({r[0].best_val_loss:.3f}) and "
        f"{r[1].attention} ({r[1].best_val_loss:.3f}) are {g.qualifier()}."
    )


def _seeds_sentence(f: Findings) -> str | None:
    """Where an arm has several seeds: that the figures are means, and how arms are ordered."""
    if f.n_seeds < 2:
        return None
    counts = sorted({s.n for s in f.seeds.values()})
    seeds = ", ".join(f"{a} {', '.join(s.seeds)}" for a, s in f.seeds.items())
    return (
        f"Each arm was trained on {_join([str(n) for n in counts])} seeds ({seeds}); a figure "
        "below is the mean over an arm's seeds, and one arm is called lower than another only "
        "where the gap exceeds their spread (their 95 % t-intervals, or with 2 seeds their "
        "ranges, do not overlap)."
    )


def _runs(g: ArmSeeds) -> str:
    """An arm's runs: ``none `id``` (one seed), ``none `a` (seed 7), `b` (seed 8)``."""
    if g.n == 1:
        return f"{g.attention} `{g.rows[0].run_id}`"
    return f"{g.attention} " + ", ".join(f"`{r.run_id}` (seed {r.seed})" for r in g.rows)


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
    if (seeds := _seeds_sentence(f)) is not None:
        out += [seeds, ""]
    mh, no, un = f.arms.get("multihead"), f.arms.get("none"), f.arms.get("uniform")
    if mh is not None:
        out.append(_multihead(mh, base))
    if no is not None:
        out.append(_none(no, base))
    if un is not None:
        out.append(_uniform(un, mh, base, f.gap("uniform", "multihead") if mh else None))
    if (ranking := _ranking(f)) is not None:
        out.append(ranking)
    if f.cost is not None and no is not None:
        out.append(_cost(f.cost, no, f.gap("multihead", "none")))
    out += [
        "",
        "Runs: " + ("; " if f.n_seeds > 1 else ", ").join(_runs(g) for g in f.seeds.values()) + ".",
        "",
    ]
    return "\n".join(out)


def no_ablation_report(experiment: str) -> str:
    """The Q03 part of a report when the experiment has no run that answers it (no finished
    ablation, no finished single training run): it says so, and claims nothing."""
    return (
        "# Q03: the same model without attention, measured\n\n"
        f"Experiment `{experiment}` has no finished ablation and no finished single training "
        "run, so nothing here answers Q03 (the arms of a heads sweep are all models with "
        "attention); run `attnref ablation` first.\n"
    )
