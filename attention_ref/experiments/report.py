"""Q03 in words and tables: findings -> markdown.

Pure: no MLflow, no torch. `attention_ref.experiments.findings` turns the rows and baselines
into facts, each with the threshold it was decided by; `build_report` writes a sentence only
from those facts: where the numbers go the other way, the sentence says the other thing (the
tests put the numbers on both sides of each threshold); each arm's paragraph comes from
`attention_ref.experiments.arm_paragraphs`. The book's Portuguese page writes its own words
from the same `findings`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from attention_ref.experiments.arm_paragraphs import (
    multihead_paragraph,
    none_paragraph,
    uniform_paragraph,
)
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
    cols = [
        "attention",
        *(["seeds"] if several else []),
        *(["precision"] if precise else []),
        "parameters",
        *(["best val loss (mean)", "min–max", "95 % interval"] if several else ["best val loss"]),
        "final val loss",
        "final train loss",
        "tokens/s",
        "wall time (s)",
        "steps",
    ]
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for g in groups:
        r = g.mean_row
        mean, rng, ci = spread_cells(g.best)
        cells = [
            r.attention,
            *([str(g.n)] if several else []),
            *([g.precision or "not recorded"] if precise else []),
            f"{r.n_params:,}",
            *([mean, rng, ci] if several else [f"{r.best_val_loss:.4f}"]),
            f"{r.final_val_loss:.4f}",
            f"{r.final_train_loss:.4f}",
            f"{r.tokens_per_sec:,.0f}",
            f"{r.wall_time_s:.0f}",
            str(r.steps),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Bigram baseline (validation cross-entropy of the bigram model counted on the "
        f"training split): {baseline:.4f} nats",
    ]
    if several:
        seeds = sorted({g.n for g in groups})
        lines += [
            "",
            f"Each arm's figures are means over its {join_words([str(n) for n in seeds])} "
            "seeds; min–max and the 95 % t-interval (from 3 seeds) are of its best "
            "validation loss.",
        ]
    return "\n".join(lines) + "\n"


#: the word that joins the last two items of a list, per language
AND: dict[str, str] = {"en": " and ", "pt": " e "}


def join_words(items: Sequence[str], lang: str = "en") -> str:
    """``a, b and c`` (``a, b e c`` in Portuguese): the report's lists, in both languages."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + AND[lang] + items[-1]


def _shown(key: str, value: str) -> str:
    return f"sha256 `{value[:12]}…`" if key == "data" else value


#: `comparability_sentence` in each language; ``aspects``: an aspect's noun (where the arms
#: differ or it is not recorded), then how "the same …" says it, of one value and of several
COMPARABILITY_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "single": "A single arm: nothing to compare it with.",
        "differ": "**The arms are not comparable as they stand**: they differ in {parts}, so a "
        "difference below mixes the attention with these.",
        "same": "Every arm has the same {items}",
        "missing_one": "the {items} is not recorded for every arm, so it is not claimed to be "
        "the same.",
        "missing_many": "the {items} are not recorded for every arm, so they are not claimed to "
        "be the same.",
        "aspects": {
            "seed": ("seed", "seed", "seeds"),
            "number of steps": ("number of steps", "number of steps", ""),
            "data": ("data", "data", ""),
            "model shape": ("model shape", "model shape", ""),
            "schedule": ("schedule", "schedule", ""),
            "evaluation": ("evaluation", "evaluation", ""),
        },
    },
    "pt": {
        "single": "Um só braço: nada com que compará-lo.",
        "differ": "**Os braços não são comparáveis como estão**: diferem em {parts}; as "
        "diferenças abaixo misturam a atenção com isso.",
        "same": "Todos os braços têm {items}",
        "missing_one": "não há registro de {items} para todos os braços, então não se afirma "
        "que seja igual.",
        "missing_many": "não há registro de {items} para todos os braços, então não se afirma "
        "que sejam iguais.",
        "aspects": {
            "seed": ("semente", "a mesma semente", "as mesmas sementes"),
            "number of steps": ("número de passos", "o mesmo número de passos", ""),
            "data": ("dados", "os mesmos dados", ""),
            "model shape": ("forma do modelo", "a mesma forma do modelo", ""),
            "schedule": ("cronograma de otimização", "o mesmo cronograma de otimização", ""),
            "evaluation": ("avaliação", "a mesma avaliação", ""),
        },
    },
}


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
            f"{nouns.get(k, k)} ({', '.join(f'{a} {_shown(k, v)}' for a, v in by.items())})"
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
            same.append(f"{several_values if several else one} ({_shown(keys[0], value)})")
        else:
            same.append(one)
    text = str(say["same"]).format(items=join_words(same, lang)) if same else ""
    if not unknown:
        return text + "."
    missing = str(say["missing_one" if len(unknown) == 1 else "missing_many"]).format(
        items=join_words(unknown, lang)
    )
    return f"{text}; {missing}" if text else missing[0].upper() + missing[1:]


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
        return (
            text + f"; the arms differ by {c.difference:,} (the other arm's parts are not recorded)"
        )
    if c.differing == {Part.ATTENTION: c.attention}:
        return text + ": the whole difference between the arms"
    parts = [f"{d:,} {PART_WORDS.get(p, f'in {p}')}" for p, d in c.differing.items()]
    return text + f"; the arms differ by {c.difference:,}: {join_words(parts)}"


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
        f"Each arm was trained on {join_words([str(n) for n in counts])} seeds ({seeds}); a figure "
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
        out.append(multihead_paragraph(mh, base))
    if no is not None:
        out.append(none_paragraph(no, base))
    if un is not None:
        out.append(uniform_paragraph(un, mh, base, f.gap("uniform", "multihead") if mh else None))
    if (ranking := _ranking(f)) is not None:
        out.append(ranking)
    if f.cost is not None and no is not None:
        out.append(_cost(f.cost, no, f.gap("multihead", "none")))
    out += [
        "",
        "Runs: " + ("; " if f.n_seeds > 1 else ", ").join(_runs(g) for g in f.seeds.values()) + ".",
        "",
    ]
    if (todo := next_step(mh is not None, no is not None)) is not None:
        out += [todo, ""]
    return "\n".join(out)


def next_step(with_attention: bool, without: bool) -> str | None:
    """What Q03 still needs when one of its two arms is not measured (a single `attnref train`
    run, say): the command that trains the other at the same settings; ``None`` with both."""
    if with_attention and without:
        return None
    if with_attention:
        missing = (
            "the same model without attention: `attnref train --no-attention` with this "
            "run's options (its seed and steps)"
        )
    elif without:
        missing = "the same model with attention: `attnref train` with this run's options"
    else:
        missing = (
            "the model with attention and without it: `attnref train` and `attnref train "
            "--no-attention` with these options"
        )
    return (
        f"**To answer Q03**, the experiment needs {missing}, or `attnref ablation` for the "
        "three arms at once; then `attnref report` again."
    )


def no_ablation_report(experiment: str) -> str:
    """The Q03 part of a report when the experiment has no run that answers it (no finished
    ablation, no finished single training run): it says so, and claims nothing."""
    return (
        "# Q03: the same model without attention, measured\n\n"
        f"Experiment `{experiment}` has no finished ablation and no finished single training "
        "run, so nothing here answers Q03 (the arms of a heads sweep are all models with "
        "attention); run `attnref ablation` first.\n"
    )
