"""Recipe sweep for the Q02 shape: which schedule, batch and rate learn most per step.

Run (the losses do not depend on the machine's load: training on CPU is deterministic for a
seed, torch version and thread count, so this may run beside other work; only ``wall`` does)::

    THREADS=1 .venv/bin/python benchmarks/recipe_sweep.py OUT.jsonl \\
        "R0-default:eval_interval=650" \\
        "R5-b16-lr5e-3:eval_interval=1500,batch_size=16,max_steps=6000,lr=5e-3,min_lr=1e-4"

Each ``NAME:key=value,…`` trains `attention_ref.lm.train.train` with the defaults changed as
given (``sample_tokens`` 0, ``threads`` from ``$THREADS``, default 2), prints its in-loop curve
(on the recipe's own fixed validation batches, which depend on its batch size), then
evaluates the final model on **one common validation sample for every recipe**: 100 batches
of 32 windows of the block size, drawn from the validation split with seed 4242 (409,600
characters at block 128), so recipes with different batch sizes compare. Appends one JSON line
per recipe to ``OUT.jsonl``: the changes, the curve, ``common_val``, the wall time and steps.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench
import torch

from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import TrainConfig, option_defaults
from attention_ref.lm.data import CharData, get_batch, load, locate
from attention_ref.lm.train import Callbacks, EvalMetrics, estimate_loss, train

COMMON_SEED, COMMON_BATCHES, COMMON_BATCH = 4242, 100, 32


def parse_recipe(spec: str, threads: int) -> tuple[str, dict[str, Any]]:
    """``NAME:key=value,…`` → the name and the option changes (typed as the defaults)."""
    defaults = option_defaults()
    name, _, kv = spec.partition(":")
    changes: dict[str, Any] = {"threads": threads, "sample_tokens": 0}
    for item in filter(None, kv.split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in defaults:
            raise ValueError(f"{spec!r}: expected NAME:KEY=VALUE,… with KEY among the options")
        changes[key] = type(defaults[key])(value)
    return name, changes


def common_val(model: torch.nn.Module, data: CharData, block_size: int) -> float:
    """The final model's loss on the common validation sample (see the module docstring)."""
    gen = torch.Generator().manual_seed(COMMON_SEED)
    batches = [get_batch(data.val, COMMON_BATCH, block_size, gen) for _ in range(COMMON_BATCHES)]
    return estimate_loss(model, batches, "fp32")  # type: ignore[arg-type]


def run(name: str, changes: dict[str, Any], data: CharData) -> dict[str, Any]:
    cfg = TrainConfig().with_options(**changes)
    curve: list[tuple[int, float, float]] = []
    loads = _bench.LoadLog()
    loads.before(name)  # the losses do not depend on it; the wall times beside them do
    t0 = time.perf_counter()

    def on_eval(step: int, m: EvalMetrics, _sample: str) -> None:
        curve.append((step, round(time.perf_counter() - t0, 1), round(m.val_loss, 4)))
        print(name, curve[-1], flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        r = train(cfg, data, Path(tmp), callbacks=Callbacks(on_eval=on_eval))
        model = Checkpoint.load(Path(tmp) / "last.pt").build_model()
    return {
        "name": name,
        "changes": changes,
        "curve": curve,
        "common_val": round(common_val(model, data, cfg.model.block_size), 4),
        "wall": round(r.wall_time_s, 1),
        "steps": r.steps_done,
        "load_before": loads.summary(),
    }


def main() -> None:
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        raise SystemExit(2)
    out = Path(sys.argv[1])
    try:
        threads = int(os.environ.get("THREADS", "2"))
        recipes = [parse_recipe(spec, threads) for spec in sys.argv[2:]]
        data = load(locate(None))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    for name, changes in recipes:
        rec = run(name, changes, data)
        print("RESULT", json.dumps(rec), flush=True)
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
