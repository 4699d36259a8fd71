"""The one description of a sweep: arms that differ in one thing, trained under one parent run.

Q03's ablation (one arm per attention mode), the heads sweep (Q02's model with h = 1, 2, 4, 8
heads at the same parameter count, ``d_k = d_model / h``) and the variants (Q02's model with one
change of today's attention each) are each a `Sweep`: its arms (an arm's name -> the options it
trains with), the parent run's name, kind and note, and each arm's label. One function runs any of
them (`attention_ref.experiments.ablation.run_sweep`), one logs its comparison
(`attention_ref.experiments.comparison_log.log_comparison`), one says it (`comparison`): a table
(`attention_ref.experiments.arm_table.arms_table`, the one writer of an arms' table) and the
sentences of the sweep's question (`attention_ref.experiments.report`,
`attention_ref.experiments.heads_report`, `attention_ref.experiments.variants_report`: three
questions, so three sets of sentences, over one row type, `ArmRow`, grouped by one class,
`ArmSeeds`).

Pure: no MLflow, no torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attention_ref.experiments.arm_rows import ArmRow, Baselines
from attention_ref.experiments.heads_report import heads_table, parameters_sentence
from attention_ref.experiments.names import (
    ABLATION_RUN_NAME,
    HEADS_SWEEP_RUN_NAME,
    VARIANTS_RUN_NAME,
    RunKind,
    RunStatus,
)
from attention_ref.experiments.report import comparison_markdown
from attention_ref.experiments.variants_report import BASE, variants_sentences, variants_table
from attention_ref.experiments.variants_report import WORDS as VARIANTS_WORDS
from attention_ref.lm.config import ATTENTION_MODES, TrainConfig


@dataclass(frozen=True)
class Sweep:
    """A sweep: its arms (name -> options), its parent run and how its arms are labelled."""

    kind: RunKind
    #: the parent run's name; an arm's run is ``{parent}/{arm}`` (`names.arm_run_name`)
    parent: str
    #: each arm's name (its runs' `Tag.ARM`) and the options it trains with
    arms: Mapping[str, TrainConfig]
    #: the parent's param that names the arms (``{"arms": "multihead,none"}``)
    params: Mapping[str, str]
    #: what the sweep compares, the first words of the parent's note
    what: str
    #: the title of the overlaid loss curves
    title: str
    #: an arm's label where it differs from its name (the progress, the parent's metrics, the
    #: curves): the heads sweep's arm ``4`` is ``h4``
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, arm: str) -> str:
        """An arm as the progress, the parent's metrics and the curves name it."""
        return self.labels.get(arm, arm)

    def keys(self, seeds: int) -> dict[str, str]:
        """Each run's key (`seed_key`: what ``on_run_start`` and ``callbacks_for`` are called
        with) and its label, in the order the runs train."""
        return {
            seed_key(arm, cfg.seed + i, seeds): seed_key(self.label(arm), cfg.seed + i, seeds)
            for arm, cfg in self.arms.items()
            for i in range(seeds)
        }


def seed_key(arm: str, seed: int, seeds: int) -> str:
    """What a sweep's run is called in its progress and ``on_run_start``: the arm alone with one
    seed, ``none seed 8`` with several."""
    return arm if seeds == 1 else f"{arm} seed {seed}"


def ablation_sweep(cfg: TrainConfig, arms: Sequence[str] = ATTENTION_MODES) -> Sweep:
    """Q03: ``cfg`` once per attention mode in ``arms`` (a mode the model does not know fails
    here, before any run)."""
    return Sweep(
        RunKind.ABLATION,
        ABLATION_RUN_NAME,
        {arm: cfg.with_options(attention=arm) for arm in arms},
        {"arms": ",".join(arms)},
        "Q03's ablation: the same model with attention, without it and with uniform weights",
        "Q03: the same model with and without attention",
    )


def heads_sweep(cfg: TrainConfig, heads: Sequence[int] = (1, 2, 4, 8)) -> Sweep:
    """Seed 003 meets Q02: ``cfg`` (multihead attention) once per number of heads; the same
    ``n_embd`` in every arm (``d_k = n_embd / h``, the same parameter count). A repeated number,
    one that does not divide ``n_embd``, or K/V heads shared (``kv_heads``: the count would
    change with h) fails here, before any run."""
    if not heads or len(set(heads)) != len(heads):
        raise ValueError(f"--heads must list distinct numbers of heads, got {list(heads)}")
    if cfg.model.kv_heads:
        raise ValueError(
            "--heads compares numbers of heads at one parameter count; leave out --kv-heads "
            f"(got {cfg.model.kv_heads}: each K/V head fewer takes parameters out)"
        )
    arms = {str(h): cfg.with_options(attention="multihead", n_head=h) for h in heads}
    return Sweep(
        RunKind.HEADS_SWEEP,
        HEADS_SWEEP_RUN_NAME,
        arms,
        {"heads": ",".join(map(str, heads))},
        "The heads sweep (seed 003 meets Q02): the Q02 model with different numbers of heads at "
        "a fixed number of parameters",
        "Heads sweep: the Q02 model with h heads, the same parameters",
        {str(h): f"h{h}" for h in heads},
    )


def variants(cfg: TrainConfig) -> dict[str, dict[str, Any]]:
    """The arms of ``--arms variants``: Q02's model (``mha``) and one change of today's
    attention each: one K/V head (``mqa``), RoPE (``rope``), a window of a quarter of the
    block (``window``)."""
    return {
        "mha": {},
        "mqa": {"kv_heads": 1},
        "rope": {"pos": "rope"},
        "window": {"window": max(cfg.model.block_size // 4, 1)},
    }


def variants_sweep(cfg: TrainConfig, arms: Mapping[str, Mapping[str, Any]] | None = None) -> Sweep:
    """Q02's model (multihead attention) once per variant: ``arms`` maps an arm's name to the
    options it changes (`variants` by default); a variant the model cannot be built with fails
    here, before any run."""
    chosen = dict(arms if arms is not None else variants(cfg))
    return Sweep(
        RunKind.VARIANTS,
        VARIANTS_RUN_NAME,
        {name: cfg.with_options(attention="multihead", **ch) for name, ch in chosen.items()},
        {"variants": ",".join(chosen)},
        "Q02's model with today's attention: one K/V head, RoPE, a sliding window",
        "Q02's model with today's attention",
    )


@dataclass
class SweepOutcome:
    """A sweep's parent run and its arms' rows (`attention_ref.experiments.ablation.run_sweep`)."""

    parent_run_id: str
    status: RunStatus
    rows: list[ArmRow] = field(default_factory=list)
    bigram_floor: float = math.nan  # the bigram baseline (`Baselines.bigram`)
    failed: str | None = None
    baselines: Baselines | None = None  # written into comparison.json beside the rows


@dataclass(frozen=True)
class Comparison:
    """What a sweep says of its arms: a table (markdown) and the sentences under it."""

    table: str
    sentences: tuple[str, ...] = ()

    def markdown(self) -> str:
        """The table, then each sentence a paragraph (``comparison.md``)."""
        parts = [self.table.rstrip("\n"), *self.sentences] if self.table else [*self.sentences]
        return "\n\n".join(parts) + "\n"


def _ablation(rows: Sequence[ArmRow], bigram_floor: float, lang: str) -> Comparison:
    return Comparison(comparison_markdown(rows, bigram_floor, lang))


def _heads(rows: Sequence[ArmRow], bigram_floor: float, lang: str) -> Comparison:
    return Comparison(heads_table(rows, lang), (parameters_sentence(rows, lang),))


def _variants(rows: Sequence[ArmRow], bigram_floor: float, lang: str) -> Comparison:
    if not any(r.attention == BASE for r in rows):
        return Comparison("", (VARIANTS_WORDS[lang]["no_base"].format(base=BASE),))
    return Comparison(variants_table(rows, lang), tuple(variants_sentences(rows, lang)))


#: what each kind of sweep says of its arms
SAYS: dict[str, Callable[[Sequence[ArmRow], float, str], Comparison]] = {
    RunKind.ABLATION: _ablation,
    RunKind.HEADS_SWEEP: _heads,
    RunKind.VARIANTS: _variants,
}


def comparison(
    kind: str, rows: Sequence[ArmRow], bigram_floor: float, lang: str = "en"
) -> Comparison:
    """The comparison a sweep of ``kind`` prints and logs, in ``lang``: Q03's table with the
    bigram baseline under it; the heads' table and whether their parameter counts are equal;
    the variants' table and what each variant costs and changes (without the ``mha`` arm to
    compare with, that nothing is compared). A kind with no entry in `SAYS`: ``ValueError``."""
    if kind not in SAYS:
        raise ValueError(f"no sweep of kind {str(kind)!r}")
    return SAYS[kind](rows, bigram_floor, lang)
