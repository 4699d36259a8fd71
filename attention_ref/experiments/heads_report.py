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


#: what the arms of a heads sweep must share: what an ablation's arms share, but the heads
SWEEP_KEYS: tuple[str, ...] = tuple(k for k in COMPARED_KEYS if k != "n_head")


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _shown(key: str, value: str) -> str:
    return f"sha256 `{value[:12]}…`" if key == "data" else value


def sweep_sentence(rows: Sequence[HeadsRow]) -> str:
    """What the arms have in common besides their heads, only as far as their rows record it."""
    if len(rows) < 2:
        return "a single arm"
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
            same.append(f"{aspect} ({_shown(keys[0], c.same[keys[0]])})")
        else:
            same.append(aspect if mine == list(keys) else f"{aspect} but for the heads")
    text = f"every arm has the same {_join(same)}" if same else ""
    if unknown:
        verb = "is" if len(unknown) == 1 else "are"
        missing = f"the {_join(unknown)} {verb} not recorded for every arm, so not claimed the same"
        text = f"{text}; {missing}" if text else missing
    return text


def heads_table(rows: Sequence[HeadsRow]) -> str:
    """The comparison table of the sweep (markdown)."""
    cols = ("heads h", "d_k", "parameters", "best val loss", "final val loss",
            "final train loss", "tokens/s", "wall time (s)", "steps")  # fmt: skip
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for r in rows:
        lines.append(
            f"| {r.heads} | {r.d_k} | {r.n_params:,} | {r.best_val_loss:.4f} | "
            f"{r.final_val_loss:.4f} | {r.final_train_loss:.4f} | {r.tokens_per_sec:,.0f} | "
            f"{r.wall_time_s:.0f} | {r.steps} |"
        )
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


def verdict(rows: Sequence[HeadsRow], tolerance: float = HEADS_TOLERANCE) -> str:
    """Does the number of heads matter? From the spread of the best validation losses."""
    if len(rows) < 2:
        return "One arm only: nothing to compare."
    best = min(rows, key=lambda r: r.best_val_loss)
    worst = max(rows, key=lambda r: r.best_val_loss)
    spread = worst.best_val_loss - best.best_val_loss
    if spread <= tolerance:
        return (
            f"**The number of heads does not matter measurably here.** The best validation "
            f"losses lie within {spread:.3f} nats of each other (from {best.best_val_loss:.3f} "
            f"to {worst.best_val_loss:.3f}), no more than the {tolerance} nats that one seed's "
            "fixed validation batches cannot tell apart."
        )
    return (
        f"**The number of heads matters here.** h = {best.heads} reaches the lowest best "
        f"validation loss ({best.best_val_loss:.3f}), h = {worst.heads} the highest "
        f"({worst.best_val_loss:.3f}): a spread of {spread:.3f} nats, more than the "
        f"{tolerance} nats of sampling noise."
    )


def single_head_sentence(rows: Sequence[HeadsRow], tolerance: float = HEADS_TOLERANCE) -> str:
    """Q03's other reading, "without multi-head attention" = one head: is one head worse?"""
    one = next((r for r in rows if r.heads == 1), None)
    many = [r for r in rows if r.heads > 1]
    if one is None or not many:
        return (
            "The sweep has no single-head arm and a multi-head arm both, so it cannot say "
            "what one head costs."
        )
    best = min(many, key=lambda r: r.best_val_loss)
    diff = one.best_val_loss - best.best_val_loss
    if diff > tolerance:
        how = (
            f"a single head is worse: {one.best_val_loss:.3f} against {best.best_val_loss:.3f} "
            f"with h = {best.heads}, {diff:.3f} nats more than the {tolerance} of noise. "
            "Several heads can look at several places at once; one head mixes them in one "
            "softmax."
        )
    elif diff < -tolerance:
        how = (
            f"a single head is better: {one.best_val_loss:.3f} against the best multi-head "
            f"{best.best_val_loss:.3f} (h = {best.heads}), {-diff:.3f} nats, more than the "
            f"{tolerance} of noise: at this size and this many steps, wide heads "
            f"(d_k = {one.d_k}) help more than many of them."
        )
    else:
        how = (
            f"a single head does as well: {one.best_val_loss:.3f} against the best multi-head "
            f"{best.best_val_loss:.3f} (h = {best.heads}), a difference of {abs(diff):.3f} "
            f"nats, within the {tolerance} of noise."
        )
    return f"Read as *with one head instead of several* (the same parameters), {how}"


def heads_report(source: str, rows: Sequence[HeadsRow]) -> str:
    """The markdown section on the heads sweep, every figure taken from ``rows``."""
    if not rows:
        raise ValueError("the heads sweep has no finished arm to report on")
    rows = sorted(rows, key=lambda r: r.heads)
    out = [
        "## Heads sweep: does the number of heads matter at fixed parameters?",
        "",
        f"{source}: one model trained with h = "
        + ", ".join(str(r.heads) for r in rows)
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
        "Runs: " + ", ".join(f"h = {r.heads} `{r.run_id}`" for r in rows) + ".",
        "",
    ]
    return "\n".join(out)
