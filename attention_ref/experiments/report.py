"""Q03 in words and tables: findings -> markdown, in English or in Portuguese.

Pure: no MLflow, no torch. `attention_ref.experiments.findings` turns the rows and baselines
into facts, each with the threshold it was decided by; `build_report` writes a sentence only
from those facts: where the numbers go the other way, the sentence says the other thing (the
tests put the numbers on both sides of each threshold); each arm's paragraph comes from
`attention_ref.experiments.arm_paragraphs`. Every function takes ``lang`` and says the facts
through the tables of `attention_ref.experiments.report_words`, one per language: the book's
Portuguese page prints these functions' Portuguese (`training_section`), not a copy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attention_ref.experiments.arm_paragraphs import (
    multihead_paragraph,
    none_paragraph,
    uniform_paragraph,
)
from attention_ref.experiments.arm_table import arms_table
from attention_ref.experiments.findings import (
    ASPECTS,
    BASELINE_TOLERANCE,
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
)
from attention_ref.experiments.report_words import (
    COLUMNS,
    COMPARABILITY_WORDS,
    PARTS,
    REPORT,
    SUMMARY,
    count,
    join_words,
    num,
    qualifier,
    rests_on,
    shown,
)
from attention_ref.experiments.spread import INTERVAL_MIN_SEEDS, Gap, ratio_spread

# --------------------------------------------------------------------------------- words


def best_column(lang: str = "en") -> str:
    """The start of the header of the best validation loss's column in ``lang`` (the column a
    terminal keeps whatever its width)."""
    return COLUMNS[lang]["best"]


def comparison_markdown(rows: Sequence[ArmRow], baseline: float, lang: str = "en") -> str:
    """The comparison table (markdown) with the bigram baseline under it, in ``lang``.

    One line per arm (`attention_ref.experiments.arm_table.arms_table`, the one table of a
    sweep's arms): an arm of several seeds (several rows of one ``attention``) shows the mean
    of each figure, the number of seeds, the range of the best validation loss and, from 3
    seeds, its 95 % t-interval."""
    say = REPORT[lang]
    groups = arm_seeds(rows)
    several = any(g.n > 1 for g in groups)
    lead = [(COLUMNS[lang]["attention"], lambda g: g.attention)]
    lines = arms_table(groups, lang, lead=lead)
    lines += ["", say["baseline_line"].format(baseline=num(baseline, ".4f", lang))]
    if several:
        seeds = sorted({g.n for g in groups})
        counts = join_words([str(n) for n in seeds], lang)
        lines += ["", say["means"].format(counts=counts, least=INTERVAL_MIN_SEEDS)]
    return "\n".join(lines) + "\n"


def comparability_sentence(c: Comparability, n_arms: int, lang: str = "en") -> str:
    """What the arms have in common, only as far as their rows record it, in ``lang``'s
    words (`COMPARABILITY_WORDS`)."""
    say = COMPARABILITY_WORDS[lang]
    if n_arms < 2:
        return str(say["single"])
    aspects: dict[str, tuple[str, str, str]] = say["aspects"]
    nouns = {keys[0]: aspects[aspect][0] for aspect, keys in ASPECTS.items() if len(keys) == 1}
    if c.differ:
        parts = [
            f"{nouns.get(k, k)} ({', '.join(f'{a} {shown(k, v)}' for a, v in by.items())})"
            for k, by in c.differ.items()
        ]
        return str(say["differ"]).format(parts=join_words(parts, lang))
    same: list[str] = []
    unknown: list[str] = []
    for aspect, keys in ASPECTS.items():
        noun, one, several_values = aspects[aspect]
        if any(k in c.unknown for k in keys):
            unknown.append(noun)
        elif len(keys) == 1:
            value = c.same[keys[0]]
            several = keys[0] == "seed" and ", " in value  # an arm of several seeds
            same.append(f"{several_values if several else one} ({shown(keys[0], value)})")
        else:
            same.append(one)
    text = str(say["same"]).format(items=join_words(same, lang)) if same else ""
    if not unknown:
        return text + "."
    missing = str(say["missing_one" if len(unknown) == 1 else "missing_many"]).format(
        items=join_words(unknown, lang)
    )
    return f"{text}; {missing}" if text else missing[0].upper() + missing[1:]


def parameters_sentence(c: Cost, lang: str = "en") -> str:
    """How many parameters are attention, from the breakdown of the model with attention, and
    what the arms differ by, part by part (only what the breakdowns record is said)."""
    say = REPORT[lang]
    m, n = c.with_attention, c.without
    if c.difference <= 0 or c.attention is None:
        known = "" if c.difference <= 0 else say["which_unknown"]
        total = say["params_total"].format(
            with_attention=count(m.n_params, lang), without=count(n.n_params, lang)
        )
        return total + known
    text = say["attention_has"].format(
        attention=count(c.attention, lang),
        total=count(m.n_params, lang),
        share=num(c.attention / m.n_params, ".0%", lang),
    )
    difference = count(c.difference, lang)
    if c.differing is None:
        return text + say["parts_unknown"].format(difference=difference)
    if c.differing == {Part.ATTENTION: c.attention}:
        return text + say["all_attention"]
    where = PARTS[lang]
    parts = [
        f"{count(d, lang)} {where.get(p) or say['part_other'].format(part=p)}"
        for p, d in c.differing.items()
    ]
    return text + say["differ_by"].format(difference=difference, parts=join_words(parts, lang))


def _cost(c: Cost, no: ArmFindings, g: Gap, lang: str, seeds: Sequence[ArmSeeds] = ()) -> str:
    """``g``: the arm with attention against the arm without it; ``seeds``: their runs (with,
    without), whose per-run ratios the speed-up is said with where there are several."""
    say = REPORT[lang]
    m, n = c.with_attention, c.without
    speeds = {
        "without": count(n.tokens_per_sec, lang),
        "with_attention": count(m.tokens_per_sec, lang),
    }
    spread = ""
    if len(seeds) == 2 and max(s.n for s in seeds) > 1:
        mine, theirs = ([r.tokens_per_sec for r in s.rows] for s in seeds)
        _, lo, hi = ratio_spread(theirs, mine)
        spread = say["speed_runs"].format(lo=num(lo, ".2f", lang), hi=num(hi, ".2f", lang))
    if c.faster:
        speed = say["faster"].format(**speeds, speedup=num(c.speedup, ".1f", lang), spread=spread)
    else:
        speed = say["not_faster"].format(**speeds)
    tail = ""
    if c.faster and no.stuck_at_baseline and g.side == Side.BELOW:
        gap = num(n.best_val_loss - m.best_val_loss, ".3f", lang)
        tail = say["buys_back"].format(gap=gap, rests=rests_on(g, lang))
    return say["cost"].format(parameters=parameters_sentence(c, lang), speed=speed, tail=tail)


def _ranking(f: Findings, lang: str) -> str | None:
    say = REPORT[lang]
    r, g = f.ranking, f.lead
    if len(r) < 2 or g is None:
        return None
    pair = {
        "first": r[0].attention,
        "first_loss": num(r[0].best_val_loss, ".3f", lang),
        "second": r[1].attention,
        "second_loss": num(r[1].best_val_loss, ".3f", lang),
    }
    if f.clear_lead:
        gap = num(r[1].best_val_loss - r[0].best_val_loss, ".3f", lang)
        return say["lowest"].format(**pair, gap=gap, rests=rests_on(g, lang))
    if g.one_seed:
        return say["no_clear_one_seed"].format(**pair, tolerance=num(BASELINE_TOLERANCE, "g", lang))
    return say["no_clear"].format(**pair, qualifier=qualifier(g, lang))


def _seeds_sentence(f: Findings, lang: str) -> str | None:
    """Where an arm has several seeds: that the figures are means, and how arms are ordered."""
    if f.n_seeds < 2:
        return None
    counts = sorted({s.n for s in f.seeds.values()})
    seeds = ", ".join(f"{a} {', '.join(s.seeds)}" for a, s in f.seeds.items())
    return REPORT[lang]["seeds"].format(
        counts=join_words([str(n) for n in counts], lang), seeds=seeds
    )


def _runs(g: ArmSeeds, lang: str) -> str:
    """An arm's runs: ``none `id``` (one seed), ``none `a` (seed 7), `b` (seed 8)``."""
    if g.n == 1:
        return f"{g.attention} `{g.rows[0].run_id}`"
    say = REPORT[lang]["run_of_seed"]
    return f"{g.attention} " + ", ".join(say.format(run=r.run_id, seed=r.seed) for r in g.rows)


def _training_lines(f: Findings, base: Baselines, lang: str) -> list[str]:
    """What happens in training: the seeds, each arm's paragraph, the ranking and the cost."""
    out = []
    if (seeds := _seeds_sentence(f, lang)) is not None:
        out += [seeds, ""]
    mh, no, un = f.arms.get("multihead"), f.arms.get("none"), f.arms.get("uniform")
    if mh is not None:
        out.append(multihead_paragraph(mh, base, lang))
    if no is not None:
        out.append(none_paragraph(no, base, lang))
    if un is not None:
        g = f.gap("uniform", "multihead") if mh else None
        out.append(uniform_paragraph(un, mh, base, g, lang))
    if (ranking := _ranking(f, lang)) is not None:
        out.append(ranking)
    if f.cost is not None and no is not None:
        runs = [f.seeds[a] for a in ("multihead", "none") if a in f.seeds]
        out.append(_cost(f.cost, no, f.gap("multihead", "none"), lang, runs))
    return out


def training_section(arms: Sequence[ArmRow], base: Baselines, lang: str = "en") -> str:
    """The body of the report's section *What happens in training* (without its heading and
    the runs), in ``lang``: the book's pages print it."""
    return "\n".join(_training_lines(findings(arms, base), base, lang)) + "\n"


def summary_lines(f: Findings, lang: str = "en") -> list[str]:
    """The experiments page's summary in ``lang``'s words (`SUMMARY`): each line only where
    the findings support it (attention below every bigram table; no attention stuck at the
    bigram baseline, or below it: a leak; uniform weights below every bigram table, and what
    learning where to look adds beyond the spread)."""
    say = SUMMARY[lang]
    mh, no, un = (f.arms.get(a) for a in ("multihead", "none", "uniform"))
    out = []
    if mh is not None and mh.beats_any_bigram:
        out.append(say["reads"].format())
    if no is not None and no.stuck_at_baseline:
        out.append(say["stuck"].format(step=no.plateau.step, last=no.plateau.last_step))
    elif no is not None and no.side == Side.BELOW:
        out.append(say["leak"])
    if un is not None and un.side == Side.BELOW and un.beats_any_bigram:
        g = f.gap("multihead", "uniform") if mh is not None else None
        tail = (
            say["closes"].format(rests=rests_on(g, lang))
            if g is not None and g.side == Side.BELOW
            else "."
        )
        out.append(say["uniform"] + tail)
    return out


def _reference(base: Baselines, lang: str) -> str:
    """The reference points: a uniform guess, the unigram, the bigram baseline (and the table
    counted on the validation split, said not to be a bound where it is lower)."""
    say = REPORT[lang]
    k = base.bigram_smoothing
    smoothing = say["add_one"] if k == 1 else say["add_k"].format(k=num(k, "g", lang))
    text = say["reference"].format(
        vocab=base.vocab_size,
        ln_vocab=num(math.log(base.vocab_size), ".3f", lang),
        unigram=num(base.unigram, ".3f", lang),
        bigram=num(base.bigram, ".3f", lang),
        smoothing=smoothing,
    )
    fitted = base.bigram_fitted_on_val
    if fitted is not None:
        key = "not_a_bound" if fitted < base.bigram else "fitted"
        text += say[key].format(fitted=num(fitted, ".3f", lang))
    return text


def arms_source(parent_run_id: str | None, lang: str = "en") -> str:
    """Where the arms come from, in ``lang``: an ablation's run, or the latest finished single
    run of each mode (``parent_run_id`` None)."""
    say = REPORT[lang]
    if parent_run_id is None:
        return say["single_source"]
    return say["ablation_source"].format(run=parent_run_id)


def build_report(
    experiment: str, source: str, arms: Sequence[ArmRow], base: Baselines, lang: str = "en"
) -> str:
    """The markdown answer to Q03 in ``lang``, every sentence written from `findings` of
    ``arms``, ``base``; ``source`` says where the arms come from (`arms_source`)."""
    say = REPORT[lang]
    f = findings(arms, base)
    out = [
        say["title"],
        "",
        say["opening"].format(
            experiment=experiment,
            source=source,
            comparability=comparability_sentence(f.comparability, len(arms), lang),
        ),
        "",
        comparison_markdown(arms, base.bigram, lang).rstrip(),
        "",
        _reference(base, lang),
        "",
        say["in_training"],
        "",
        *_training_lines(f, base, lang),
    ]
    runs = ("; " if f.n_seeds > 1 else ", ").join(_runs(g, lang) for g in f.seeds.values())
    out += ["", say["runs"].format(runs=runs), ""]
    todo = next_step("multihead" in f.arms, "none" in f.arms, lang)
    if todo is not None:
        out += [todo, ""]
    return "\n".join(out)


def next_step(with_attention: bool, without: bool, lang: str = "en") -> str | None:
    """What Q03 still needs when one of its two arms is not measured (a single `attnref train`
    run, say): the command that trains the other at the same settings; ``None`` with both."""
    if with_attention and without:
        return None
    say = REPORT[lang]
    missing = say["needs_without" if with_attention else "needs_with" if without else "needs_both"]
    return say["to_answer"].format(missing=missing)


def no_ablation_report(experiment: str, lang: str = "en") -> str:
    """The Q03 part of a report when the experiment has no run that answers it (no finished
    ablation, no finished single training run): it says so, and claims nothing."""
    say = REPORT[lang]
    return f"{say['title']}\n\n{say['no_ablation'].format(experiment=experiment)}\n"
