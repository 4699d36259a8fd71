"""Q02 within a wall-clock budget: how low does validation loss go in N seconds on this machine?

Run: ``ATTNREF_DATA=... .venv/bin/python benchmarks/q02_budget.py SECONDS [key=value ...]``
(e.g. ``attention=none``, ``block_size=64``). Prints one line per evaluation: step, elapsed
seconds, train and validation loss; the last line is a summary to record in the README.
The run stops at the budget (the loop's ``should_stop``), so ``max_steps`` only shapes the
learning-rate schedule. The load is read before the run starts (`_bench.LoadLog`) and stated
in the summary.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import _bench

from attention_ref.lm.config import TrainConfig, option_defaults
from attention_ref.lm.data import load, locate
from attention_ref.lm.train import Callbacks, EvalMetrics, train


def main() -> None:
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 300.0
    overrides: dict[str, object] = {}
    defaults = option_defaults()
    for arg in sys.argv[2:]:
        key, value = arg.split("=", 1)
        overrides[key] = type(defaults[key])(value)
    cfg = TrainConfig().with_options(**overrides)
    data = load(locate())
    loads = _bench.LoadLog()
    loads.before("run")
    t0 = time.perf_counter()

    def on_eval(step: int, m: EvalMetrics, sample: str) -> None:
        print(
            f"step {step:6d}  {time.perf_counter() - t0:7.1f} s  "
            f"train {m.train_eval_loss:.4f}  val {m.val_loss:.4f}",
            flush=True,
        )

    with TemporaryDirectory() as tmp:
        r = train(
            cfg,
            data,
            Path(tmp),
            callbacks=Callbacks(on_eval=on_eval),
            should_stop=lambda: time.perf_counter() - t0 > budget,
        )
    print(
        f"summary: {overrides or 'defaults'}; {r.steps_done} steps in {r.wall_time_s:.0f} s, "
        f"{r.tokens_per_sec:,.0f} tokens/s, best val {r.best_val_loss:.4f}, params "
        f"{r.n_params:,}; {_bench.describe_load(loads.summary())}"
    )


if __name__ == "__main__":
    main()
