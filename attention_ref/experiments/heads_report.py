"""The heads sweep in words and tables, from numbers only: rows -> markdown.

Seed 003 meets Q02: the same model trained with h = 1, 2, 4, 8 heads (same seed, data, steps;
``d_k = d_model / h``, so the parameter count does not change with h). Does the number of heads
matter at a fixed number of parameters? And the other reading of Q03, "without multi-head
attention" = with a single head: is one head worse?

Pure: no MLflow, no torch. Every sentence is written from the figures passed in, and a claim
is made only where those figures support it (the tests put the numbers on both sides of each
threshold); what the arms share is compared option by option (`sweep_sentence`), as the
ablation's arms are (`attention_ref.experiments.findings.comparability`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from attention_ref.experiments.findings import ASPECTS, COMPARED_KEYS, comparability
from attention_ref.experiments.spread import Gap, Side, Spread, compare, spread, spread_cells

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


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _shown(key: str, value: str) -> str:
    return f"sha256 `{value[:12]}…`" if key == "data" else value


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


def sweep_sentence(rows: Sequence[HeadsRow]) -> str:
    """What the arms have in common besides their heads, only as far as their rows record it."""
    arms = heads_arms(rows)
    if len(arms) < 2:
        return "a single arm"
    rows = [_joined_row(a) for a in arms]
    c = comparability(rows, SWEEP_KEYS, name=lambda r: f"h = {r.heads}")
    if c.differ:
        parts = [
            f"{k} ({', '.join(f'{a}: {_shown(k, v)}' for a, v in by.items())})"
            for k, by in c.differ.items()
        ]
        return (
            f"**the arms are not comparable as they stand**: besides the heads they differ in "
            f"{_join(parts)}"
        )
    same, unknown = [], []
    for aspect, keys in ASPECTS.items():
        mine = [k for k in keys if k in SWEEP_KEYS]
        if any(k in c.unknown for k in mine):
            unknown.append(aspect)
        elif len(keys) == 1:
            value = _shown(keys[0], c.same[keys[0]])
            plural = keys[0] == "seed" and ", " in value  # an arm of several seeds
            same.append(f"{aspect}s ({value})" if plural else f"{aspect} ({value})")
        else:
            same.append(aspect if mine == list(keys) else f"{aspect} but for the heads")
    text = f"every arm has the same {_join(same)}" if same else ""
    if unknown:
        verb = "is" if len(unknown) == 1 else "are"
        missing = f"the {_join(unknown)} {verb} not recorded for every arm, so not claimed the same"
        text = f"{text}; {missing}" if text else missing
    return text


def heads_table(rows: Sequence[HeadsRow]) -> str:
    """The comparison table of the sweep (markdown): one line per number of heads; an arm of
    several seeds shows the means, its seeds and the spread of its best validation loss, the
    precision where the runs record it. One seed each, no precision: the table of before."""
    arms = heads_arms(rows)
    several = any(a.n > 1 for a in arms)
    precise = any(r.precision is not None for r in rows)
    cols = [
        "heads h",
        "d_k",
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
    for a in arms:
        mean, rng, ci = spread_cells(a.best)
        cells = [
            str(a.heads),
            str(a.d_k),
            *([str(a.n)] if several else []),
            *([a.precision or "not recorded"] if precise else []),
            f"{a.n_params:,}",
            *([mean, rng, ci] if several else [mean]),
            f"{a.mean('final_val_loss'):.4f}",
            f"{a.mean('final_train_loss'):.4f}",
            f"{a.mean('tokens_per_sec'):,.0f}",
            f"{a.mean('wall_time_s'):.0f}",
            str(a.rows[0].steps),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def parameters_sentence(rows: Sequence[HeadsRow]) -> str:
    """Whether the parameter counts are equal, from the counts."""
    counts = sorted({r.n_params for r in rows})
    if len(counts) == 1:
        return (
            f"Every arm has {counts[0]:,} parameters: the heads split d_model = h · d_k "
            "between them, they add no weights."
        )
    listed = ", ".join(f"h = {r.heads}: {r.n_params:,}" for r in rows)
    return f"The parameter counts differ ({listed}), so the comparison is not at fixed size."


def _gap(a: HeadsArm, b: HeadsArm, tolerance: float) -> Gap:
    return compare(a.best, b.best, tolerance)


def verdict(rows: Sequence[HeadsRow], tolerance: float = HEADS_TOLERANCE) -> str:
    """Does the number of heads matter? The lowest arm against the highest: beyond their spread
    over seeds (one seed each: beyond ``tolerance``) it matters, within it it is not shown."""
    arms = heads_arms(rows)
    if len(arms) < 2:
        return "One arm only: nothing to compare."
    best = min(arms, key=lambda a: a.best.mean)
    worst = max(arms, key=lambda a: a.best.mean)
    g = _gap(worst, best, tolerance)
    gap = g.diff
    lo, hi = best.best.mean, worst.best.mean
    if g.one_seed:
        if g.side == Side.AT:
            return (
                f"**The number of heads does not matter measurably here.** The best validation "
                f"losses lie within {gap:.3f} nats of each other (from {lo:.3f} to {hi:.3f}), no "
                f"more than the {tolerance} nats that one seed's fixed validation batches cannot "
                "tell apart."
            )
        return (
            f"**The number of heads matters here.** h = {best.heads} reaches the lowest best "
            f"validation loss ({lo:.3f}), h = {worst.heads} the highest ({hi:.3f}): a spread of "
            f"{gap:.3f} nats, more than the {tolerance} nats of sampling noise, on one seed."
        )
    if g.side == Side.AT:
        return (
            f"**The number of heads does not matter measurably here.** The mean best validation "
            f"losses lie within {gap:.3f} nats of each other (from {lo:.3f} with h = "
            f"{best.heads} to {hi:.3f} with h = {worst.heads}), {g.qualifier()}."
        )
    return (
        f"**The number of heads matters here.** h = {best.heads} reaches the lowest mean best "
        f"validation loss ({lo:.3f}), h = {worst.heads} the highest ({hi:.3f}): {gap:.3f} nats "
        f"apart, {g.qualifier()}."
    )


def single_head_sentence(rows: Sequence[HeadsRow], tolerance: float = HEADS_TOLERANCE) -> str:
    """Q03's other reading, "without multi-head attention" = one head: is one head worse?"""
    arms = heads_arms(rows)
    one = next((a for a in arms if a.heads == 1), None)
    many = [a for a in arms if a.heads > 1]
    if one is None or not many:
        return (
            "The sweep has no single-head arm and a multi-head arm both, so it cannot say "
            "what one head costs."
        )
    best = min(many, key=lambda a: a.best.mean)
    g = _gap(one, best, tolerance)
    x, y, diff = one.best.mean, best.best.mean, g.diff
    noise = f"the {tolerance} of noise" if g.one_seed else f"the spread of {g.seeds}"
    if g.side == Side.ABOVE:
        how = (
            f"a single head is worse: {x:.3f} against {y:.3f} with h = {best.heads}, {diff:.3f} "
            f"nats, more than {noise}. Several heads can look at several places at once; one "
            "head mixes them in one softmax."
        )
    elif g.side == Side.BELOW:
        how = (
            f"a single head is better: {x:.3f} against the best multi-head {y:.3f} "
            f"(h = {best.heads}), {-diff:.3f} nats, more than {noise}: at this size and this "
            f"many steps, wide heads (d_k = {one.d_k}) help more than many of them."
        )
    else:
        how = (
            f"a single head does as well: {x:.3f} against the best multi-head {y:.3f} "
            f"(h = {best.heads}), a difference of {abs(diff):.3f} nats, within {noise}."
        )
    return f"Read as *with one head instead of several* (the same parameters), {how}"


def heads_report(source: str, rows: Sequence[HeadsRow]) -> str:
    """The markdown section on the heads sweep, every figure taken from ``rows``."""
    if not rows:
        raise ValueError("the heads sweep has no finished arm to report on")
    arms = heads_arms(rows)
    rows = [r for a in arms for r in a.rows]
    several = max(a.n for a in arms) > 1
    runs = ", ".join(
        f"h = {r.heads} `{r.run_id}`" + (f" (seed {r.seed})" if several else "") for r in rows
    )
    out = [
        "## Heads sweep: does the number of heads matter at fixed parameters?",
        "",
        f"{source}: one model trained with h = "
        + ", ".join(str(a.heads) for a in arms)
        + f" heads; {sweep_sentence(rows)}.",
        "",
        heads_table(rows).rstrip(),
        "",
        parameters_sentence(rows),
        "",
        verdict(rows),
        "",
        single_head_sentence(rows),
        "",
        "Runs: " + runs + ".",
        "",
    ]
    return "\n".join(out)
