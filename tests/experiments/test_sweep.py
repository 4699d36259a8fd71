"""The one description of a sweep: its arms and labels, what each kind says, the one table.

Pure: configs and rows made here, no MLflow, no training.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attention_ref.experiments.names import RunKind
from attention_ref.experiments.sweep import (
    SAYS,
    ablation_sweep,
    comparison,
    heads_sweep,
    seed_key,
    variants_sweep,
)
from attention_ref.lm.config import TrainConfig
from tests.experiments import test_heads_report as heads
from tests.experiments import test_variants as variants
from tests.test_layers import imported_names, violates


def test_a_kind_with_no_words_is_refused():
    """Deny by default: a sweep kind `comparison` has no entry for is an error, not a guess."""
    with pytest.raises(ValueError, match="no sweep of kind 'train'"):
        comparison(RunKind.TRAIN, variants.sweep(), 2.48)
    assert set(SAYS) == {RunKind.ABLATION, RunKind.HEADS_SWEEP, RunKind.VARIANTS}


def test_the_module_is_pure():
    names = imported_names(Path("attention_ref/experiments/sweep.py").resolve())
    assert not any(violates(n, {"torch", "mlflow", "matplotlib"}) for n in names)


def test_each_sweep_names_its_arms_parent_and_labels():
    cfg = TrainConfig()
    q03 = ablation_sweep(cfg, ("multihead", "none"))
    assert (q03.kind, q03.parent, list(q03.arms)) == ("ablation", "ablation", ["multihead", "none"])
    assert q03.arms["none"].model.attention == "none" and q03.params == {"arms": "multihead,none"}
    h = heads_sweep(cfg, (1, 4))
    assert [c.model.n_head for c in h.arms.values()] == [1, 4]
    assert {c.model.attention for c in h.arms.values()} == {"multihead"}
    assert (h.label("4"), q03.label("none")) == ("h4", "none")
    v = variants_sweep(cfg)
    assert list(v.arms) == ["mha", "mqa", "rope", "window"]
    assert v.arms["mqa"].model.kv_heads == 1 and v.arms["window"].model.window == 32
    # every run's key, in training order, and its label (several seeds: the seed named)
    assert h.keys(2) == {
        "1 seed 1337": "h1 seed 1337",
        "1 seed 1338": "h1 seed 1338",
        "4 seed 1337": "h4 seed 1337",
        "4 seed 1338": "h4 seed 1338",
    }
    assert q03.keys(1) == {"multihead": "multihead", "none": "none"}
    assert seed_key("none", 8, 1) == "none" and seed_key("none", 8, 2) == "none seed 8"


def test_a_sweep_that_cannot_be_built_fails_before_any_run():
    cfg = TrainConfig()
    with pytest.raises(ValueError, match="distinct numbers of heads"):
        heads_sweep(cfg, (2, 2))
    with pytest.raises(ValueError, match="not divisible by --n-head 3"):
        heads_sweep(cfg, (1, 3))
    with pytest.raises(ValueError):
        ablation_sweep(cfg, ("multihead", "sparse"))


def test_each_kind_says_its_table_and_its_sentences():
    q03 = comparison(RunKind.ABLATION, variants.sweep()[:1], 2.4842)
    assert "| attention |" in q03.table and q03.sentences == ()
    assert "2.4842" in q03.markdown()
    h = comparison(RunKind.HEADS_SWEEP, heads.sweep(1.6, 1.55), 2.48)
    assert h.table.startswith("| heads h | d_k |")
    assert h.sentences[0].startswith("Every arm has 824,000 parameters")
    assert h.markdown() == h.table.rstrip("\n") + "\n\n" + h.sentences[0] + "\n"
    v = comparison(RunKind.VARIANTS, variants.sweep(), 2.48)
    assert v.table.startswith("| arm | what changes |") and len(v.sentences) == 4
    none = comparison(RunKind.VARIANTS, variants.sweep()[1:], 2.48)
    assert none.table == "" and none.markdown() == "no mha arm finished: nothing to compare with\n"
    pt = comparison(RunKind.VARIANTS, variants.sweep()[1:], 2.48, "pt")
    assert pt.sentences == ("nenhum braço mha terminou: nada com que comparar",)


def test_the_three_tables_are_one_writer_s():
    """After each sweep's own first columns the three tables have the same columns: the
    parameters, then the best validation loss (mean, range, interval with several seeds)."""

    def header(table: str) -> list[str]:
        return [c.strip() for c in table.splitlines()[0].strip("|").split("|")]

    seeded = [
        *variants.sweep(),
        *(variants.row(n, 1.56, 429_824, seed="1338") for n in ("mha", "mqa", "rope", "window")),
    ]
    tables = {
        "q03": comparison(RunKind.ABLATION, seeded, 2.48).table,
        "heads": comparison(
            RunKind.HEADS_SWEEP, [*heads.sweep(1.6, 1.5), heads.row(1, 1.61, seed=7)], 2.48
        ).table,
        "variants": comparison(RunKind.VARIANTS, seeded, 2.48).table,
    }
    shared = ["seeds", "parameters"]
    best = ["best val loss (mean)", "min–max", "95 % interval"]
    assert header(tables["q03"])[1:6] == [*shared, *best]
    assert header(tables["heads"])[2:7] == [*shared, *best]
    cache = "KV cache (bytes per character)"
    assert header(tables["variants"])[2:8] == [*shared, cache, *best]


def test_the_heads_sweep_refuses_shared_kv_heads():
    """The tenth fact-check: with --kv-heads the heads' arms differ in parameters (429,824
    down to 372,032 for h = 1..8 with one K/V head), so "at a fixed parameter count" fails."""
    shared = TrainConfig().with_options(kv_heads=1)
    with pytest.raises(ValueError, match="leave out --kv-heads"):
        heads_sweep(shared, (1, 2))
    assert heads_sweep(TrainConfig(), (1, 2)).arms["2"].model.kv_heads == 0  # the control
