"""The variants sweep (``attnref ablation --arms variants``): Q02's model with one change of
today's attention per arm; its words from numbers only, then the sweep itself on a real store."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import mlflow
import pytest

from attention_ref.cli.main import main
from attention_ref.experiments.findings import ArmRow
from attention_ref.experiments.variants_report import (
    kv_cache_bytes,
    variant_facts,
    variants_sentences,
    variants_table,
)
from tests.configs import TINY_ARGS as TINY
from tests.experiments.test_heads_report import CONFIG, SHA  # the default options, the data
from tests.test_layers import imported_names, violates

CHANGES = {"mha": {}, "mqa": {"kv_heads": "1"}, "rope": {"pos": "rope"}, "window": {"window": "32"}}


def row(name: str, best: float, n_params: int, tps: float = 50_000.0, **options: str) -> ArmRow:
    return ArmRow(
        attention=name,
        run_id=f"run-{name}",
        status="FINISHED",
        n_params=n_params,
        best_val_loss=best,
        final_val_loss=best + 0.01,
        final_train_loss=best - 0.1,
        tokens_per_sec=tps,
        wall_time_s=100.0,
        steps=6000,
        config=CONFIG | CHANGES.get(name, {}) | options,
        data_sha256=SHA,
    )


def sweep() -> list[ArmRow]:
    return [
        row("mha", 1.5500, 429_824),
        row("mqa", 1.5600, 396_800, 55_000.0),
        row("rope", 1.5400, 413_440),
        row("window", 1.5500, 429_824),
    ]


def test_the_module_is_pure():
    names = imported_names(Path("attention_ref/experiments/variants_report.py").resolve())
    assert not any(violates(n, {"torch", "mlflow", "matplotlib"}) for n in names)


def test_without_the_mha_arm_nothing_is_compared():
    with pytest.raises(ValueError, match="needs its 'mha' arm"):
        variant_facts([row("mqa", 1.56, 396_800)])


def test_the_kv_cache_is_read_off_the_shape():
    """2 · layers · K/V heads · d_k · 4 bytes: Q02 (2 layers, 2 heads of 64) keeps 2,048 bytes
    a character; one K/V head, half; a config recorded before --kv-heads, the default."""
    assert kv_cache_bytes(CONFIG) == 2 * 2 * 2 * 64 * 4
    assert kv_cache_bytes(CONFIG | {"kv_heads": "1"}) == 2 * 2 * 1 * 64 * 4
    old = {k: v for k, v in CONFIG.items() if k != "kv_heads"}
    assert kv_cache_bytes(old) == kv_cache_bytes(CONFIG)


def test_each_variant_is_said_against_mha_from_its_numbers():
    said = variants_sentences(sweep())
    assert said[0].startswith("Every arm has the same seed, number of steps, data")
    mqa, rope, window = said[1:]
    assert mqa.startswith("mqa, one K/V head shared by the query heads (multi-query attention): ")
    assert "33,024 fewer parameters (7.7%), a KV cache 2 times smaller per character" in mqa
    assert (
        "0.0100 nats above mha's 1.5500, at 1.10× (one run each: no spread) mha's tokens/s" in mqa
    )
    assert "16,384 fewer parameters (3.8%), the same KV cache per character;" in rope
    assert "0.0100 nats below mha's 1.5500" in rope
    assert "sees itself and the 31 before it" in window
    assert (
        "the same parameters, the same KV cache per character (a window of 32 could keep only "
        "32 keys, 65,536 bytes against 262,144 at 128 characters, but the model's cache keeps "
        "every key)"
    ) in window
    assert "could keep" not in rope  # the control: no window, no such clause
    assert "the same as mha's to 4 decimals" in window
    table = variants_table(sweep())
    assert "| mqa | one K/V head" in table and "| 1,024 | 1.5600 | +0.0100 |" in table


def test_arms_that_do_not_share_their_seed_are_not_called_comparable():
    rows = [*sweep()[:3], row("window", 1.55, 429_824, seed="7")]
    first = variants_sentences(rows)[0]
    assert first.startswith("The arms do not share seed")
    assert "the same seed" not in first


def test_the_sweep_runs_each_variant_under_one_parent(store, capsys):
    args = [*TINY, "--max-steps", "20", "--eval-interval", "20"]
    assert main(["ablation", "--arms", "variants", "--pos", "rope", *args]) == 2
    assert "leave out --pos" in capsys.readouterr().err
    assert main(["ablation", "--arms", "variants", *args]) == 0
    out = capsys.readouterr().out
    runs = {
        r.info.run_name: r
        for r in mlflow.search_runs(search_all_experiments=True, output_format="list")
    }
    assert set(runs) == {
        "variants",
        "variants/mha",
        "variants/mqa",
        "variants/rope",
        "variants/window",
    }
    params = {name: runs[f"variants/{name}"].data.params for name in CHANGES}
    assert params["mqa"]["kv_heads"] == "1" and params["rope"]["pos"] == "rope"
    assert params["window"]["window"] == "8"  # a quarter of TINY's block of 32
    assert {p["seed"] for p in params.values()} == {params["mha"]["seed"]}
    assert "| mqa |" in out and "mqa, one K/V head" in out
    parent = runs["variants"].info.run_id
    text = mlflow.artifacts.load_text(f"runs:/{parent}/comparison.md")
    assert "| rope | rotary positions" in text and "Every arm has the same seed" in text
    # an arm is sampled by name, as an ablation's
    assert main(["sample", "--run-id", parent, "--arm", "mqa", "--tokens", "10"]) == 0


def test_a_single_variant_run_is_not_taken_for_q02s_model(store, capsys):
    """``report`` without an ablation reads the latest single run of each mode: a RoPE run is
    not Q02's model (it has no position table), so it answers nothing; a plain run does."""
    from attention_ref.experiments.results import NoArmsError, find_arms

    args = [*TINY, "--max-steps", "20", "--eval-interval", "20"]
    assert main(["train", *args, "--pos", "rope"]) == 0
    with pytest.raises(NoArmsError):
        find_arms("shakespeare")
    assert main(["train", *args]) == 0
    (arm,) = find_arms("shakespeare").rows
    assert arm.config.get("pos") == "learned"


def test_a_speed_is_said_with_its_seeds_spread_and_only_between_like_runs():
    """The page said "0.98× its tokens/s" where the seeds' tokens/s overlapped mha's: the ratio
    now carries the runs' spread and says when the ranges overlap; runs in different
    precisions are not compared."""
    rows = [
        row("mha", 1.55, 429_824, 42_000.0, seed="1"),
        row("mha", 1.55, 429_824, 44_000.0, seed="2"),
        row("mqa", 1.56, 396_800, 41_000.0, seed="1", kv_heads="1"),
        row("mqa", 1.56, 396_800, 43_000.0, seed="2", kv_heads="1"),
        row("rope", 1.54, 413_440, 30_000.0, seed="1"),
        row("rope", 1.54, 413_440, 31_000.0, seed="2"),
    ]
    mqa, rope = variants_sentences(rows)[1:]
    assert "at 0.98× (of the medians; runs 0.93–1.02) mha's tokens/s; the ranges overlap" in mqa
    assert "at 0.71× (of the medians; runs 0.68–0.74) mha's tokens/s." in rope  # apart
    fp32 = [replace(r, precision="fp32") if r.attention == "rope" else r for r in rows]
    said = variants_sentences([replace(r, precision=r.precision or "bf16") for r in fp32])
    assert "its tokens/s not compared with mha's (trained in fp32 against bf16)" in said[2]


def test_the_portuguese_sentences_and_table_say_the_english_facts():
    """One function per page's facts, in each language (issue 60): the Portuguese page had its
    own copy of the sentences, with the ratio of speeds the English had dropped. The same
    numbers in each language, each with its decimal mark and grouping."""
    rows = [
        row("mha", 1.55, 429_824, 42_000.0, seed="1"),
        row("mha", 1.55, 429_824, 44_000.0, seed="2"),
        row("mqa", 1.56, 396_800, 41_000.0, seed="1", kv_heads="1"),
        row("mqa", 1.56, 396_800, 43_000.0, seed="2", kv_heads="1"),
    ]
    en, pt = variants_sentences(rows), variants_sentences(rows, "pt")
    assert len(en) == len(pt) == 2
    assert pt[0].startswith("Todos os braços têm as mesmas sementes (1, 2)")
    assert "33\u202f024 parâmetros a menos (7,7%)" in pt[1] and "33,024 fewer parameters" in en[1]
    assert "a 0,98× (das medianas; execuções 0,93–1,02) os tokens/s de mha; as faixas" in pt[1]
    assert (
        "(além da dispersão de 2 sementes)" in pt[1] and "(beyond the spread of 2 seeds)" in en[1]
    )
    numbers = [re.findall(r"\d+(?:[.,]\d+)?", s.replace("\u202f", "").replace(",", "")) for s in en]
    said_pt = [
        re.findall(r"\d+(?:[.,]\d+)?", s.replace("\u202f", "").replace(",", ".")) for s in pt
    ]
    assert [sorted(n) for n in numbers[1:]] == [sorted(n) for n in said_pt[1:]]
    table = variants_table(rows, "pt")
    assert "| braço | o que muda | sementes |" in table
    assert "| 396\u202f800 | 1\u202f024 | 1,5600 |" in table
