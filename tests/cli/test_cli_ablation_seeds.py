"""``attnref ablation --seeds N``: every arm on N seeds in a real sqlite store, each run tagged
with its seed, arm and group; the table and ``attnref report`` give each arm's mean and spread."""

from __future__ import annotations

import json
from pathlib import Path

import mlflow

from attention_ref.cli.main import main
from attention_ref.experiments.names import Tag
from tests.configs import TINY as TINY_CFG
from tests.configs import TINY_ARGS as TINY


def runs() -> list:
    return mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")


def test_ablation_on_two_seeds_then_report(store, capsys):
    args = [*TINY, "--max-steps", "30", "--eval-interval", "15", "--log-every", "30"]
    assert main(["ablation", *args, "--arms", "multihead,none", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    (parent,) = [r for r in runs() if r.data.tags.get(Tag.KIND) == "ablation"]
    assert parent.data.params["seeds"] == "2"
    children = [r for r in runs() if r.data.tags.get(Tag.PARENT_RUN_ID) == parent.info.run_id]
    s0, s1 = str(TINY_CFG.seed), str(TINY_CFG.seed + 1)
    by_arm: dict[str, list[str]] = {}
    for r in children:
        assert r.info.status == "FINISHED"
        tags = r.data.tags
        assert tags[Tag.GROUP] == f"ablation/{tags[Tag.ARM]}"
        assert tags[Tag.SEED] == r.data.params["seed"]
        assert tags[Tag.PRECISION] in ("fp32", "bf16")
        assert r.info.run_name == f"ablation/{tags[Tag.ARM]} seed {tags[Tag.SEED]}"
        by_arm.setdefault(tags[Tag.ARM], []).append(tags[Tag.SEED])
    assert {a: sorted(s) for a, s in by_arm.items()} == {"multihead": [s0, s1], "none": [s0, s1]}
    assert f"arm 1/4: multihead seed {s0}" in out and f"arm 4/4: none seed {s1}" in out
    # the table: one line per arm, its mean and spread (two seeds: a range, no interval)
    assert "| attention | seeds | precision | parameters | best val loss (mean) | min–max |" in out
    mh = next(line for line in out.splitlines() if line.startswith("| multihead | 2 |"))
    assert mh.count("–") >= 2  # min–max given, "–" for the interval of 2 seeds
    # the parent's arm metrics are the means over the seeds
    bests = [
        r.data.metrics["best_val_loss"] for r in children if r.data.tags[Tag.ARM] == "multihead"
    ]
    parent = mlflow.get_run(parent.info.run_id)
    assert abs(parent.data.metrics["multihead_best_val_loss"] - sum(bests) / 2) < 1e-9
    # sample --arm takes the arm's first seed
    first = next(
        r for r in children if r.data.tags[Tag.ARM] == "none" and r.data.tags[Tag.SEED] == s0
    )
    assert main(["sample", "--run-id", parent.info.run_id, "--arm", "none", "--tokens", "5"]) == 0
    picked = capsys.readouterr().out
    assert main(["sample", "--run-id", first.info.run_id, "--tokens", "5"]) == 0
    assert capsys.readouterr().out == picked
    # the report: the same rule, the same table
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert f"Each arm was trained on 2 seeds (multihead {s0}, {s1}, none {s0}, {s1})" in text
    assert "| multihead | 2 |" in text and "best val loss (mean)" in text
    assert f"Every arm has the same seeds ({s0}, {s1})" in text
    assert f"(seed {s1})" in text.split("Runs:")[1]
    # the export the book reads: each run keeps its own curve; an arm's curve is the mean of
    # its seeds'; its sample, maps and explorer model are its first seed's
    dest = Path.cwd() / "results"
    assert main(["report", "--export", str(dest)]) == 0
    doc = json.loads((dest / "comparison.json").read_text(encoding="utf-8"))
    own = {(r["attention"], r["config"]["seed"]): r["val_curve"] for r in doc["rows"]}
    assert own[("none", s0)] != own[("none", s1)]  # two seeds, two curves
    assert doc["curves"]["none"]["val_loss"] == [
        [a[0], (a[1] + b[1]) / 2] for a, b in zip(own[("none", s0)], own[("none", s1)], strict=True)
    ]
    assert {a: v["seed"] for a, v in doc["shown"].items()} == {"multihead": s0, "none": s0}
    sample = next(
        r for r in children if r.data.tags[Tag.ARM] == "none" and r.data.tags[Tag.SEED] == s0
    )
    assert doc["shown"]["none"]["run_id"] == sample.info.run_id
    manifest = json.loads((dest / "explorer" / "model.json").read_text(encoding="utf-8"))
    assert f"MLflow run {doc['shown']['multihead']['run_id']} " in manifest["model"]["source"]
    # the rows read back: each with its own curve, not the arm's last seed's
    from attention_ref.experiments.findings import rows_from_comparison

    read = {(r.attention, r.seed): r.val_curve for r in rows_from_comparison(doc)}
    assert read[("none", s0)] == [tuple(p) for p in own[("none", s0)]]


def test_heads_sweep_on_two_seeds(store, capsys):
    args = [*TINY, "--max-steps", "20", "--eval-interval", "20", "--log-every", "20"]
    assert main(["ablation", *args, "--heads", "1,2", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    (parent,) = [r for r in runs() if r.data.tags.get(Tag.KIND) == "heads_sweep"]
    children = [r for r in runs() if r.data.tags.get(Tag.PARENT_RUN_ID) == parent.info.run_id]
    assert sorted((r.data.tags[Tag.ARM], r.data.tags[Tag.SEED]) for r in children) == sorted(
        (h, str(TINY_CFG.seed + i)) for h in ("1", "2") for i in range(2)
    )
    assert "| heads h | d_k | seeds | precision | parameters | best val loss (mean) |" in out
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert "| 1 | 32 | 2 | " in text and "| 2 | 16 | 2 | " in text and "not recorded" not in text
    assert "the spread of 2 seeds" in text


def test_seeds_must_be_positive(capsys):
    assert main(["ablation", "--seeds", "0"]) == 2
    assert "--seeds must be a positive number of seeds, got 0" in capsys.readouterr().err
