r"""The variants sweep in words: Q02's model with one change of today's attention per arm.

``attnref ablation --arms variants`` trains Q02's model as it is (``mha``) and with one change
each: one K/V head for both query heads (``mqa``, grouped-query attention at its extreme),
rotary positions instead of the learned position table (``rope``), a sliding window (``window``).
Pure (no MLflow, no torch): rows (`ArmRow`, the arm's name in ``attention``, its options in
``config``) -> facts (`variant_facts`) -> a table and sentences, each number computed here.

What an arm costs is read off its options: the parameters from the run, the KV cache a
generated character keeps from the shape,

$$
\text{bytes per character} = 2 \cdot L \cdot g \cdot d_k \cdot 4
$$

(K and V, every layer $L$, $g$ K/V heads of width $d_k$, fp32).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attention_ref.experiments.findings import (
    BASELINE_TOLERANCE,
    COMPARED_KEYS,
    RECORDED_BEFORE,
    ArmRow,
    ArmSeeds,
    arm_seeds,
    comparability,
)
from attention_ref.experiments.spread import Gap, compare, spread_cells

#: the arms and what each changes, as a sentence says it (``{window}``: the arm's width)
VARIANT_WORDS: dict[str, str] = {
    "mha": "Q02's model: multi-head attention, learned positions, the causal mask",
    "mqa": "one K/V head shared by the query heads (multi-query attention)",
    "rope": "rotary positions (RoPE) instead of the learned position table",
    "window": "a sliding window: each character sees itself and the {window_less} before it",
}
#: the arm every other is compared with
BASE = "mha"
#: bytes of one number of the KV cache (fp32)
CACHE_DTYPE_BYTES = 4


def kv_cache_bytes(config: Mapping[str, str]) -> int:
    """The KV cache of one generated character, in bytes: ``2 L g d_k · 4`` (K and V, fp32)."""
    n_embd, n_head = int(config["n_embd"]), int(config["n_head"])
    g = int(config.get("kv_heads", RECORDED_BEFORE["kv_heads"])) or n_head
    return 2 * int(config["n_layer"]) * g * (n_embd // n_head) * CACHE_DTYPE_BYTES


@dataclass(frozen=True)
class VariantFact:
    """One arm against the base arm (``mha``)."""

    name: str
    what: str
    n_params: int
    params_change: int  # against the base arm
    cache_bytes: int
    cache_ratio: float  # the base arm's cache / this arm's
    best_val_loss: float  # the mean over the arm's seeds
    val_change: float  # against the base arm, nats per character (means)
    tokens_per_sec: float
    #: the arm's best validation loss against the base arm's over their seeds (`compare`; one
    #: seed each: by `BASELINE_TOLERANCE`); None for the base arm itself
    gap: Gap | None = None
    seeds: ArmSeeds | None = None  # the arm's runs

    def against_base(self) -> str:
        """The order of this arm and the base arm, in words, from `gap`."""
        if self.gap is None:
            return ""
        if self.gap.one_seed:
            return "on one seed"
        side = {"below": "below", "above": "above", "at": "within"}[self.gap.side]
        spread = f"the spread of {self.gap.seeds}"
        return f"within {spread}" if side == "within" else f"{side} {BASE}'s beyond {spread}"


def _groups(rows: Sequence[ArmRow]) -> dict[str, ArmSeeds]:
    return {g.attention: g for g in arm_seeds(rows)}


def variant_facts(rows: Sequence[ArmRow]) -> list[VariantFact]:
    """Each arm's facts against the base arm; ``ValueError`` without a base arm. An arm of
    several seeds (several rows of one name): the means over them, and `VariantFact.gap`
    says whether its difference from the base arm exceeds their spread."""
    groups = _groups(rows)
    by_name = {a: g.mean_row for a, g in groups.items()}
    if BASE not in by_name:
        raise ValueError(f"the variants sweep needs its {BASE!r} arm to compare with")
    base = by_name[BASE]
    base_cache = kv_cache_bytes(base.config)
    facts = []
    for r in by_name.values():
        g = groups[r.attention]
        window = int(r.config.get("window", 0))
        what = VARIANT_WORDS.get(r.attention, r.attention).format(window_less=max(window - 1, 0))
        cache = kv_cache_bytes(r.config)
        facts.append(
            VariantFact(
                r.attention,
                what,
                r.n_params,
                r.n_params - base.n_params,
                cache,
                base_cache / cache,
                r.best_val_loss,
                r.best_val_loss - base.best_val_loss,
                r.tokens_per_sec,
                None
                if r.attention == BASE
                else compare(g.best, groups[BASE].best, BASELINE_TOLERANCE),
                g,
            )
        )
    return facts


def variants_table(rows: Sequence[ArmRow]) -> str:
    """The arms side by side (markdown). An arm of several seeds: the mean best validation
    loss, its seeds, min–max and (from 3 seeds) the 95 % interval; the precision where the runs
    record it. One seed each, no precision: the table of before."""
    facts = variant_facts(rows)
    several = any(f.seeds is not None and f.seeds.n > 1 for f in facts)
    precise = any(r.precision is not None for r in rows)
    cols = [
        "arm",
        "what changes",
        *(["seeds"] if several else []),
        *(["precision"] if precise else []),
        "parameters",
        "KV cache (bytes per character)",
        *(["best val loss (mean)", "min–max", "95 % interval"] if several else ["best val loss"]),
        f"against {BASE}",
        "tokens/s",
    ]
    out = ["| " + " | ".join(cols) + " |", "|---|---|" + "---:|" * (len(cols) - 2)]
    for f in facts:
        assert f.seeds is not None
        change = "" if f.name == BASE else f"{f.val_change:+.4f}"
        mean, rng, ci = spread_cells(f.seeds.best)
        cells = [
            f.name,
            f.what,
            *([str(f.seeds.n)] if several else []),
            *([f.seeds.precision or "not recorded"] if precise else []),
            f"{f.n_params:,}",
            f"{f.cache_bytes:,}",
            *([mean, rng, ci] if several else [f"{f.best_val_loss:.4f}"]),
            change,
            f"{f.tokens_per_sec:,.0f}",
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def variants_sentences(rows: Sequence[ArmRow]) -> list[str]:
    """What the arms share, then what each variant costs and changes, from the rows only."""
    variant_keys = tuple(RECORDED_BEFORE)
    groups = _groups(rows)
    means = [g.mean_row for g in groups.values()]
    shared = comparability(means, [k for k in COMPARED_KEYS if k not in variant_keys])
    n = max(g.n for g in groups.values())
    if shared.comparable and n == 1:
        first = (
            "Every arm has the same seed, number of steps, data, model shape (but for the "
            "variant), schedule and evaluation; each is one run of that seed, so a difference "
            "is one measurement, not an average over seeds."
        )
    elif shared.comparable:
        first = (
            f"Every arm has the same seeds ({means[0].config.get('seed')}), number of steps, "
            "data, model shape (but for the variant), schedule and evaluation; a figure is the "
            "mean over an arm's seeds, and an arm is called above or below "
            f"{BASE} only where the gap exceeds their spread (their 95 % t-intervals, or with "
            "2 seeds their ranges, do not overlap)."
        )
    else:
        keys = sorted({*shared.differ, *shared.unknown})
        first = (
            f"The arms do not share {', '.join(keys)}: their differences are not the variants' "
            "alone."
        )
    out = [first]
    facts = {f.name: f for f in variant_facts(rows)}
    by_name = {r.attention: r for r in means}
    base = facts[BASE]
    for f in facts.values():
        if f.name == BASE:
            continue
        if f.params_change:
            size = (
                f"{abs(f.params_change):,} {'fewer' if f.params_change < 0 else 'more'} "
                f"parameters ({abs(f.params_change) / base.n_params:.1%})"
            )
        else:
            size = "the same parameters"
        cache = (
            f"a KV cache {f.cache_ratio:g} times smaller per character"
            if f.cache_ratio > 1
            else "the same KV cache per character"
        )
        window = int(by_name[f.name].config.get("window", 0))
        block = int(by_name[f.name].config.get("block_size", 0))
        if 0 < window < block:
            cache += (
                f" (a window of {window} could keep only {window} keys, "
                f"{window * f.cache_bytes:,} bytes against {block * f.cache_bytes:,} at "
                f"{block} characters, but the model's cache keeps every key)"
            )
        if round(f.val_change, 4) == 0:
            than = f"the same as {BASE}'s to 4 decimals"
        else:
            side = "above" if f.val_change > 0 else "below"
            than = f"{abs(f.val_change):.4f} nats {side} {BASE}'s {base.best_val_loss:.4f}"
        if f.gap is not None and not f.gap.one_seed:
            than += f" ({f.gap.qualifier()})"
        mean = "mean best validation loss" if n > 1 else "best validation loss"
        out.append(
            f"{f.name}, {f.what}: {size}, {cache}; {mean} {f.best_val_loss:.4f}, "
            f"{than}, at {f.tokens_per_sec / base.tokens_per_sec:.2f}× its tokens/s."
        )
    return out
