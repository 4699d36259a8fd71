"""The heads sweep in words and tables, from numbers only: rows -> markdown.

Seed 003 meets Q02: the same model trained with h = 1, 2, 4, 8 heads (same seed, data, steps;
``d_k = d_model / h``, so the parameter count does not change with h). Does the number of heads
matter at a fixed number of parameters? And the other reading of Q03, "without multi-head
attention" = with a single head: is one head worse?

Pure: no MLflow, no torch. Every sentence is written from the figures passed in, in English or
in Portuguese (``lang``: the words of `attention_ref.experiments.heads_words`, the numbers as
`attention_ref.experiments.report_words` writes them), and a claim is made only where those
figures support it (the tests put the numbers on both sides of each
threshold); what the arms share is compared option by option (`sweep_sentence`), as the
ablation's arms are (`attention_ref.experiments.findings.comparability`).
"""

from __future__ import annotations

from collections.abc import Sequence

from attention_ref.experiments.arm_table import arms_table
from attention_ref.experiments.findings import (
    ASPECTS,
    COMPARED_KEYS,
    ArmRow,
    ArmSeeds,
    arm_seeds,
    comparability,
)
from attention_ref.experiments.heads_words import HEADS
from attention_ref.experiments.report_words import (
    COLUMNS,
    COMPARABILITY_WORDS,
    REPORT,
    count,
    join_words,
    num,
    qualifier,
    seeds_of,
    shown,
)
from attention_ref.experiments.spread import Side, compare

#: two best validation losses closer than this (nats) are not told apart: the losses are
#: measured on fixed validation batches of one seed, and differences this small are sampling
HEADS_TOLERANCE = 0.03


def heads_of(arm: ArmSeeds) -> int:
    """An arm's number of heads: its name (the heads sweep names its arms ``1``, ``2``, …)."""
    return int(arm.attention)


def d_k_of(arm: ArmSeeds) -> int | None:
    """An arm's head width ``d_k = n_embd / h``, where its runs record ``n_embd``."""
    n_embd = arm.rows[0].config.get("n_embd")
    return int(n_embd) // heads_of(arm) if n_embd is not None else None


def heads_arms(rows: Sequence[ArmRow]) -> list[ArmSeeds]:
    """The rows grouped by number of heads (`arm_seeds`: each arm's runs by seed), by heads."""
    return sorted(arm_seeds(rows), key=heads_of)


#: what the arms of a heads sweep must share: what an ablation's arms share, but the heads
SWEEP_KEYS: tuple[str, ...] = tuple(k for k in COMPARED_KEYS if k != "n_head")


def sweep_source(run_id: str, lang: str = "en") -> str:
    """Where the sweep's arms come from, in ``lang``: its parent run."""
    return HEADS[lang]["source"].format(run=run_id)


def sweep_sentence(rows: Sequence[ArmRow], lang: str = "en") -> str:
    """What the arms have in common besides their heads, only as far as their rows record it,
    in ``lang`` (the aspects in the words of the Q03 report's `COMPARABILITY_WORDS`)."""
    say = HEADS[lang]
    arms = heads_arms(rows)
    if len(arms) < 2:
        return say["single_arm"]
    joined = [a.mean_row for a in arms]  # an option its seeds differ in: their values joined
    c = comparability(joined, SWEEP_KEYS, name=lambda r: f"h = {r.attention}")
    aspects: dict[str, tuple[str, str, str]] = COMPARABILITY_WORDS[lang]["aspects"]
    nouns = {keys[0]: aspects[aspect][0] for aspect, keys in ASPECTS.items() if len(keys) == 1}
    if c.differ:
        parts = [
            f"{nouns.get(k, k)} ({', '.join(f'{a}: {shown(k, v)}' for a, v in by.items())})"
            for k, by in c.differ.items()
        ]
        return say["differ"].format(parts=join_words(parts, lang))
    same, unknown = [], []
    for aspect, keys in ASPECTS.items():
        noun, one, several_values = aspects[aspect]
        mine = [k for k in keys if k in SWEEP_KEYS]
        if any(k in c.unknown for k in mine):
            unknown.append(noun)
        elif len(keys) == 1:
            value = shown(keys[0], c.same[keys[0]])
            plural = keys[0] == "seed" and ", " in value  # an arm of several seeds
            same.append(f"{several_values if plural else one} ({value})")
        else:
            same.append(one if mine == list(keys) else say["but_heads"].format(aspect=one))
    text = say["same"].format(items=join_words(same, lang)) if same else ""
    if unknown:
        key = "missing_one" if len(unknown) == 1 else "missing_many"
        missing = say[key].format(items=join_words(unknown, lang))
        text = f"{text}; {missing}" if text else missing
    return text


def heads_table(rows: Sequence[ArmRow], lang: str = "en") -> str:
    """The comparison table of the sweep (markdown, headers in ``lang``): one line per number
    of heads (`attention_ref.experiments.arm_table.arms_table`), its heads and ``d_k`` first."""
    col = COLUMNS[lang]
    lead = [
        (col["heads"], lambda g: str(heads_of(g))),
        (col["d_k"], lambda g: str(d_k_of(g) or col["not_recorded"])),
    ]
    return "\n".join(arms_table(heads_arms(rows), lang, lead=lead, left=1)) + "\n"


def parameters_sentence(rows: Sequence[ArmRow], lang: str = "en") -> str:
    """Whether the parameter counts are equal, from the counts."""
    say = HEADS[lang]
    counts = sorted({r.n_params for r in rows})
    if len(counts) == 1:
        return say["one_count"].format(n=count(counts[0], lang))
    listed = ", ".join(f"h = {r.attention}: {count(r.n_params, lang)}" for r in rows)
    return say["counts_differ"].format(listed=listed)


def verdict(rows: Sequence[ArmRow], tolerance: float = HEADS_TOLERANCE, lang: str = "en") -> str:
    """Does the number of heads matter? The lowest arm against the highest: beyond their spread
    over seeds (one seed each: beyond ``tolerance``) it matters, within it it is not shown."""
    say = HEADS[lang]
    arms = heads_arms(rows)
    if len(arms) < 2:
        return say["one_arm"]
    best = min(arms, key=lambda a: a.best.mean)
    worst = max(arms, key=lambda a: a.best.mean)
    g = compare(worst.best, best.best, tolerance)
    figures = {
        "gap": num(g.diff, ".3f", lang),
        "lo": num(best.best.mean, ".3f", lang),
        "hi": num(worst.best.mean, ".3f", lang),
        "best": heads_of(best),
        "worst": heads_of(worst),
        "tolerance": num(tolerance, "g", lang),
        "qualifier": qualifier(g, lang),
    }
    if g.one_seed:
        return say["flat_one_seed" if g.side == Side.AT else "matters_one_seed"].format(**figures)
    return say["flat" if g.side == Side.AT else "matters"].format(**figures)


#: how one head against the best of several is said, by the side of the single head
_ONE_HEAD = {Side.ABOVE: "worse", Side.BELOW: "better", Side.AT: "as_well"}


def single_head_sentence(
    rows: Sequence[ArmRow], tolerance: float = HEADS_TOLERANCE, lang: str = "en"
) -> str:
    """Q03's other reading, "without multi-head attention" = one head: is one head worse?"""
    say = HEADS[lang]
    arms = heads_arms(rows)
    one = next((a for a in arms if heads_of(a) == 1), None)
    many = [a for a in arms if heads_of(a) > 1]
    if one is None or not many:
        return say["no_single_head"]
    best = min(many, key=lambda a: a.best.mean)
    g = compare(one.best, best.best, tolerance)
    noise = (
        say["noise_one_seed"].format(tolerance=num(tolerance, "g", lang))
        if g.one_seed
        else say["noise_spread"].format(seeds=seeds_of(g, lang))
    )
    how = say[_ONE_HEAD[g.side]].format(
        one=num(one.best.mean, ".3f", lang),
        many=num(best.best.mean, ".3f", lang),
        heads=heads_of(best),
        diff=num(abs(g.diff), ".3f", lang),
        noise=noise,
        d_k=d_k_of(one),
    )
    return say["one_head"].format(how=how)


def heads_report(source: str, rows: Sequence[ArmRow], lang: str = "en") -> str:
    """The markdown section on the heads sweep in ``lang``, every figure taken from ``rows``;
    ``source`` says where they come from (`sweep_source`)."""
    if not rows:
        raise ValueError("the heads sweep has no finished arm to report on")
    say = HEADS[lang]
    arms = heads_arms(rows)
    rows = [r for a in arms for r in a.rows]
    several = max(a.n for a in arms) > 1
    runs = ", ".join(
        f"h = {r.attention} `{r.run_id}`" + (say["run_seed"].format(seed=r.seed) if several else "")
        for r in rows
    )
    trained = say["trained"].format(
        source=source,
        heads=", ".join(str(heads_of(a)) for a in arms),
        sweep=sweep_sentence(rows, lang),
    )
    out = [
        say["title"],
        "",
        trained,
        "",
        heads_table(rows, lang).rstrip(),
        "",
        parameters_sentence(rows, lang),
        "",
        verdict(rows, lang=lang),
        "",
        single_head_sentence(rows, lang=lang),
        "",
        REPORT[lang]["runs"].format(runs=runs),
        "",
    ]
    return "\n".join(out)
