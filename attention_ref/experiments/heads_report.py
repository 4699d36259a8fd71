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
from dataclasses import dataclass, field

from attention_ref.experiments.findings import ASPECTS, COMPARED_KEYS, comparability
from attention_ref.experiments.heads_words import HEADS
from attention_ref.experiments.report_words import (
    COLUMNS,
    COMPARABILITY_WORDS,
    REPORT,
    cells,
    count,
    join_words,
    num,
    qualifier,
    seeds_of,
    shown,
)
from attention_ref.experiments.spread import Gap, Side, Spread, compare, spread
from attention_ref.render import markdown_table

#: two best validation losses closer than this (nats) are not told apart: the losses are
#: measured on fixed validation batches of one seed, and differences this small are sampling
HEADS_TOLERANCE = 0.03


@dataclass
class HeadsRow:
    """One arm of the heads sweep: the figures of one finished run."""

    heads: int
    d_k: int
    run_id: str
    n_params: int
    best_val_loss: float
    final_val_loss: float
    final_train_loss: float
    tokens_per_sec: float
    wall_time_s: float
    steps: int
    val_curve: list[tuple[int, float]] = field(default_factory=list)
    #: the run's options (flat `TrainConfig`, as MLflow params hold them: strings)
    config: dict[str, str] = field(default_factory=dict)
    data_sha256: str | None = None  # the data set's sha256; None when not recorded
    precision: str | None = None  # the precision it trained in (fp32, bf16); None: not recorded

    @property
    def seed(self) -> str | None:
        return self.config.get("seed")


@dataclass(frozen=True)
class HeadsArm:
    """One number of heads over its seeds: the rows of its runs."""

    heads: int
    rows: tuple[HeadsRow, ...]

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def best(self) -> Spread:
        return spread([r.best_val_loss for r in self.rows])

    def mean(self, key: str) -> float:
        return spread([getattr(r, key) for r in self.rows]).mean

    @property
    def d_k(self) -> int:
        return self.rows[0].d_k

    @property
    def n_params(self) -> int:
        return self.rows[0].n_params

    @property
    def precision(self) -> str | None:
        known = [r.precision for r in self.rows]
        if any(p is None for p in known):
            return None
        return ", ".join(dict.fromkeys(p for p in known if p is not None))


def heads_arms(rows: Sequence[HeadsRow]) -> list[HeadsArm]:
    """The rows grouped by number of heads (each arm's runs over its seeds), by heads."""
    by: dict[int, list[HeadsRow]] = {}
    for r in rows:
        by.setdefault(r.heads, []).append(r)
    seed = lambda r: int(r.seed) if (r.seed or "").isdigit() else 0  # noqa: E731
    return [HeadsArm(h, tuple(sorted(by[h], key=seed))) for h in sorted(by)]


#: what the arms of a heads sweep must share: what an ablation's arms share, but the heads
SWEEP_KEYS: tuple[str, ...] = tuple(k for k in COMPARED_KEYS if k != "n_head")


def _joined_row(arm: HeadsArm) -> HeadsRow:
    """An arm as one row for `comparability`: an option that differs between its seeds (the
    seed) has their values joined, so two arms compare equal only with the same seeds."""
    first = arm.rows[0]
    if arm.n == 1:
        return first
    keys = list(dict.fromkeys(k for r in arm.rows for k in r.config))
    config = {}
    for k in keys:
        values = [r.config.get(k) for r in arm.rows]
        if None not in values:
            config[k] = ", ".join(dict.fromkeys(v for v in values if v is not None))
    shas = {r.data_sha256 for r in arm.rows}
    return HeadsRow(
        first.heads,
        first.d_k,
        first.run_id,
        first.n_params,
        first.best_val_loss,
        first.final_val_loss,
        first.final_train_loss,
        first.tokens_per_sec,
        first.wall_time_s,
        first.steps,
        config=config,
        data_sha256=shas.pop() if len(shas) == 1 else None,
    )


def sweep_source(run_id: str, lang: str = "en") -> str:
    """Where the sweep's arms come from, in ``lang``: its parent run."""
    return HEADS[lang]["source"].format(run=run_id)


def sweep_sentence(rows: Sequence[HeadsRow], lang: str = "en") -> str:
    """What the arms have in common besides their heads, only as far as their rows record it,
    in ``lang`` (the aspects in the words of the Q03 report's `COMPARABILITY_WORDS`)."""
    say = HEADS[lang]
    arms = heads_arms(rows)
    if len(arms) < 2:
        return say["single_arm"]
    rows = [_joined_row(a) for a in arms]
    c = comparability(rows, SWEEP_KEYS, name=lambda r: f"h = {r.heads}")
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


def heads_table(rows: Sequence[HeadsRow], lang: str = "en") -> str:
    """The comparison table of the sweep (markdown, headers in ``lang``): one line per number
    of heads; an arm of several seeds shows the means, its seeds and the spread of its best
    validation loss, the precision where the runs record it. One seed each, no precision: the
    table of before."""
    col = COLUMNS[lang]
    arms = heads_arms(rows)
    several = any(a.n > 1 for a in arms)
    precise = any(r.precision is not None for r in rows)
    names = [
        "heads",
        "d_k",
        *(["seeds"] if several else []),
        *(["precision"] if precise else []),
        "parameters",
        *(["best_mean", "range", "interval"] if several else ["best"]),
        "final_val",
        "final_train",
        "tokens_per_sec",
        "wall_time",
        "steps",
    ]
    body: list[list[str]] = []
    for a in arms:
        mean, rng, ci = cells(a.best, lang)
        row = [
            str(a.heads),
            str(a.d_k),
            *([str(a.n)] if several else []),
            *([a.precision or col["not_recorded"]] if precise else []),
            count(a.n_params, lang),
            *([mean, rng, ci] if several else [mean]),
            num(a.mean("final_val_loss"), ".4f", lang),
            num(a.mean("final_train_loss"), ".4f", lang),
            count(a.mean("tokens_per_sec"), lang),
            num(a.mean("wall_time_s"), ".0f", lang),
            str(a.rows[0].steps),
        ]
        body.append(row)
    lines = markdown_table([col[n] for n in names], body, left=1)
    return "\n".join(lines) + "\n"


def parameters_sentence(rows: Sequence[HeadsRow], lang: str = "en") -> str:
    """Whether the parameter counts are equal, from the counts."""
    say = HEADS[lang]
    counts = sorted({r.n_params for r in rows})
    if len(counts) == 1:
        return say["one_count"].format(n=count(counts[0], lang))
    listed = ", ".join(f"h = {r.heads}: {count(r.n_params, lang)}" for r in rows)
    return say["counts_differ"].format(listed=listed)


def _gap(a: HeadsArm, b: HeadsArm, tolerance: float) -> Gap:
    return compare(a.best, b.best, tolerance)


def verdict(rows: Sequence[HeadsRow], tolerance: float = HEADS_TOLERANCE, lang: str = "en") -> str:
    """Does the number of heads matter? The lowest arm against the highest: beyond their spread
    over seeds (one seed each: beyond ``tolerance``) it matters, within it it is not shown."""
    say = HEADS[lang]
    arms = heads_arms(rows)
    if len(arms) < 2:
        return say["one_arm"]
    best = min(arms, key=lambda a: a.best.mean)
    worst = max(arms, key=lambda a: a.best.mean)
    g = _gap(worst, best, tolerance)
    figures = {
        "gap": num(g.diff, ".3f", lang),
        "lo": num(best.best.mean, ".3f", lang),
        "hi": num(worst.best.mean, ".3f", lang),
        "best": best.heads,
        "worst": worst.heads,
        "tolerance": num(tolerance, "g", lang),
        "qualifier": qualifier(g, lang),
    }
    if g.one_seed:
        return say["flat_one_seed" if g.side == Side.AT else "matters_one_seed"].format(**figures)
    return say["flat" if g.side == Side.AT else "matters"].format(**figures)


#: how one head against the best of several is said, by the side of the single head
_ONE_HEAD = {Side.ABOVE: "worse", Side.BELOW: "better", Side.AT: "as_well"}


def single_head_sentence(
    rows: Sequence[HeadsRow], tolerance: float = HEADS_TOLERANCE, lang: str = "en"
) -> str:
    """Q03's other reading, "without multi-head attention" = one head: is one head worse?"""
    say = HEADS[lang]
    arms = heads_arms(rows)
    one = next((a for a in arms if a.heads == 1), None)
    many = [a for a in arms if a.heads > 1]
    if one is None or not many:
        return say["no_single_head"]
    best = min(many, key=lambda a: a.best.mean)
    g = _gap(one, best, tolerance)
    noise = (
        say["noise_one_seed"].format(tolerance=num(tolerance, "g", lang))
        if g.one_seed
        else say["noise_spread"].format(seeds=seeds_of(g, lang))
    )
    how = say[_ONE_HEAD[g.side]].format(
        one=num(one.best.mean, ".3f", lang),
        many=num(best.best.mean, ".3f", lang),
        heads=best.heads,
        diff=num(abs(g.diff), ".3f", lang),
        noise=noise,
        d_k=one.d_k,
    )
    return say["one_head"].format(how=how)


def heads_report(source: str, rows: Sequence[HeadsRow], lang: str = "en") -> str:
    """The markdown section on the heads sweep in ``lang``, every figure taken from ``rows``;
    ``source`` says where they come from (`sweep_source`)."""
    if not rows:
        raise ValueError("the heads sweep has no finished arm to report on")
    say = HEADS[lang]
    arms = heads_arms(rows)
    rows = [r for a in arms for r in a.rows]
    several = max(a.n for a in arms) > 1
    runs = ", ".join(
        f"h = {r.heads} `{r.run_id}`" + (say["run_seed"].format(seed=r.seed) if several else "")
        for r in rows
    )
    trained = say["trained"].format(
        source=source,
        heads=", ".join(str(a.heads) for a in arms),
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
