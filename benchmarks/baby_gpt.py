"""nanoGPT's baby GPT on Shakespeare, both ways in one run: ``attnref train --preset
nanogpt-shakespeare-char`` against nanoGPT's own ``train.py config/train_shakespeare_char.py``
(issue 33's stretch). Which reaches a validation loss of ``--target`` (1.47) first, in wall time?

Run on a CUDA machine (torch and attnref only: no MLflow, no network)::

    PYTHONPATH=. python3 benchmarks/baby_gpt.py --data PATH/input.txt --out DIR

and here, to check that it runs (a tiny shape, a few steps, nanoGPT uncompiled in fp32)::

    PYTHONPATH=. .venv/bin/python benchmarks/baby_gpt.py --device cpu --quick

* **attnref**: `attention_ref.lm.train.train` on `preset_config` ``("nanogpt-shakespeare-char")``
  (6 layers, 6 heads, 384 wide, block 256, dropout 0.2, batch 64, 5,000 steps, an evaluation
  of 200 fixed batches per split every 250 steps; ``--precision auto`` and ``--cuda-graph
  auto``: on a GPU with bf16 the whole step is one CUDA graph in bf16, the evaluation and the
  sample graphs too), its checkpoints written as ``attnref train`` writes them. The clock starts
  before the call (the model's creation, the capture and every evaluation are inside it); each
  evaluation is stamped as its callback arrives. After the run, the best checkpoint's loss on
  the whole validation split (`_bench.split_loss`: every window of 256 once, no random draw).
* **nanoGPT**: its ``train.py`` (``benchmarks/nanogpt``, vendored unmodified) with its
  ``config/train_shakespeare_char.py`` as it is (bf16 autocast where the GPU has it,
  ``compile=True``, 200 random batches per split at each evaluation, a checkpoint where
  validation improves), stopped after ``--nanogpt-iters`` iterations (2,500: its schedule is
  set by ``lr_decay_iters`` = 5,000, untouched, so the iterations it runs are those of its full
  run). Its ``step N: train loss …, val loss …`` lines are stamped as they arrive; the clock
  starts when the process is launched (compilation included; the time to its first iteration
  is kept beside it).

The results (``baby_gpt.json`` and ``.md`` in ``--out``) are written after each arm.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import _bench
import nanogpt_arm
import torch

from attention_ref.lm.callbacks import Callbacks, EvalMetrics, StartInfo
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import PRESETS, preset_config
from attention_ref.lm.data import CharData, load, locate
from attention_ref.lm.model import CharGPT
from attention_ref.lm.train import train

PRESET = "nanogpt-shakespeare-char"
#: ``--quick`` (the CPU check): a tiny model, a few steps, small evaluations
QUICK = {
    "n_layer": 1,
    "n_head": 2,
    "n_embd": 32,
    "block_size": 32,
    "batch_size": 8,
    "max_steps": 20,
    "eval_interval": 10,
    "eval_batches": 2,
    "warmup_steps": 2,
}


def process_age() -> float | None:
    """Seconds since this process was launched (Linux: ``/proc``), or ``None`` elsewhere."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return uptime - ticks / os.sysconf("SC_CLK_TCK")


def first_at(evals: list[dict[str, float]], target: float) -> dict[str, float] | None:
    """The first evaluation whose validation loss is at or below ``target``, or ``None``."""
    return next((e for e in evals if e["val"] <= target), None)


def attnref_arm(
    data: CharData, device: str, quick: bool, target: float, seed: int = 1337
) -> dict[str, Any]:
    """One run of the preset through `train` (at ``seed``); its evaluations stamped from the
    call."""
    cfg = preset_config(PRESET, device=device, seed=seed, **(QUICK if quick else {}))
    evals: list[dict[str, float]] = []
    starts: list[StartInfo] = []
    age = process_age()  # python, torch and attnref imported, the data read: before the clock
    t0 = time.perf_counter()

    def on_eval(step: int, m: EvalMetrics, _sample: str) -> None:
        evals.append(
            {
                "step": step,
                "train": m.train_eval_loss,
                "val": m.val_loss,
                "s": time.perf_counter() - t0,
            }
        )

    with tempfile.TemporaryDirectory(prefix="baby-gpt-") as tmp:
        r = train(
            cfg,
            data,
            Path(tmp),
            callbacks=Callbacks(on_start=starts.append, on_eval=on_eval),
            metrics_every=cfg.eval_interval,
        )
        wall = time.perf_counter() - t0
        best = Checkpoint.load(Path(tmp) / "best.pt")
        model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size)).to(device)
        model.load_state_dict(best.model)
        whole = _bench.split_loss(
            model,
            [
                (x.to(device), y.to(device))
                for x, y in _bench.split_batches(data.val, cfg.model.block_size)
            ],
        )
    info = starts[0]
    reached = first_at(evals, target)
    return {
        "arm": "attnref" if seed == 1337 else f"attnref seed {seed}",
        "preset": PRESET,
        "options": cfg.to_flat(),
        "n_params": r.n_params,
        "precision": info.precision,
        "graph": info.graph,
        "graph_note": info.graph_note,
        "evals": evals,
        "wall_s": wall,
        "best_val": r.best_val_loss,
        "best_step": min(evals, key=lambda e: e["val"])["step"],
        "best_whole_val": whole,
        "best_checkpoint_step": best.step,
        "reached": reached,
        "steps": r.steps_done,
        "before_clock_s": age,
    }


def nanogpt_args(iters: int, device: str, quick: bool) -> list[str]:
    """``train.py``'s command line: the shakespeare_char config as it is, stopped at ``iters``;
    ``--quick``: the tiny shape on the CPU, fp32, uncompiled."""
    args = ["config/train_shakespeare_char.py", f"--max_iters={iters}"]
    if quick:
        q = QUICK
        args += [
            f"--n_layer={q['n_layer']}",
            f"--n_head={q['n_head']}",
            f"--n_embd={q['n_embd']}",
            f"--block_size={q['block_size']}",
            f"--batch_size={q['batch_size']}",
            f"--eval_interval={q['eval_interval']}",
            f"--eval_iters={q['eval_batches']}",
            f"--warmup_iters={q['warmup_steps']}",
            "--compile=False",
        ]
    if device == "cpu":
        args += ["--device=cpu", "--dtype=float32"]
    return args


def nanogpt_run(
    data_file: Path, iters: int, device: str, quick: bool, target: float, timeout_s: float
) -> dict[str, Any]:
    """nanoGPT's ``train.py`` (`nanogpt_arm.launch`), its evaluations stamped from launch."""
    row = nanogpt_arm.launch(data_file, nanogpt_args(iters, device, quick), timeout_s=timeout_s)
    evals = [{"step": n, "train": tr, "val": va, "s": s} for n, tr, va, s in row.pop("evals")]
    row |= {"arm": "nanoGPT train.py", "evals": evals, "reached": first_at(evals, target)}
    if evals:
        best = min(evals, key=lambda e: e["val"])
        row |= {"best_val": best["val"], "best_step": best["step"]}
    return row


def markdown(result: dict[str, Any]) -> str:
    """The table of both arms and their evaluations, from the results."""
    target = result["target"]
    rows = []
    for arm in result["arms"]:
        got = arm.get("reached")
        # from the process's launch: attnref's clock starts after its imports and the data
        launched = got["s"] + (arm.get("before_clock_s") or 0.0) if got else None
        rows.append(
            [
                arm["arm"],
                f"{got['s']:.1f} s (step {got['step']:,})" if got else "not reached",
                f"{launched:.1f}" if launched is not None else "–",
                f"{arm['to_first_iter_s']:.1f}" if "to_first_iter_s" in arm else "–",
                f"{arm['best_val']:.4f} (step {arm['best_step']:,})" if "best_val" in arm else "–",
                f"{arm['wall_s']:.1f}",
                arm.get("error", ""),
            ]
        )
    out = [
        f"{_bench.describe(result['machine'])}\n",
        f"Time to a validation loss of {target} or less, from the start of training (model "
        "built, compiled or captured, evaluations included); 'from launch': from the "
        "process's start (attnref: its imports and the data read before the clock added; "
        "nanoGPT: its clock starts at the launch); nanoGPT's 'to first iteration': its start, "
        "compilation and evaluation at step 0:\n",
        _bench.markdown_table(
            [
                "arm",
                f"first val ≤ {target}",
                "from launch s",
                "to first iteration s",
                "best val",
                "wall s",
                "error",
            ],
            rows,
        ),
    ]
    for arm in result["arms"]:
        evals = ", ".join(f"{e['step']}: {e['val']:.4f} at {e['s']:.1f} s" for e in arm["evals"])
        out.append(f"\n{arm['arm']}'s evaluations (step: val at seconds): {evals}")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--target", type=float, default=1.47)
    ap.add_argument("--nanogpt-iters", type=int, default=2500)
    ap.add_argument("--nanogpt-timeout", type=float, default=240.0)
    ap.add_argument("--no-nanogpt", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", default="1337", help="attnref's seeds, comma-separated")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    loads = _bench.LoadLog()
    data_file = a.data or locate()
    data = load(data_file)
    device = _bench.pick_device(a.device)
    result: dict[str, Any] = {
        "target": a.target,
        "preset": PRESETS[PRESET],
        "arms": [],
        "torch": torch.__version__,
        "args": {k: str(v) for k, v in vars(a).items()},
    }

    def write() -> None:
        result["machine"] = _bench.machine(device, loads)
        md = markdown(result)
        print(md, flush=True)
        _bench.write_results(a.out, "baby_gpt", result, md)

    for i, seed in enumerate(int(x) for x in a.seeds.split(",")):
        loads.before(f"attnref seed {seed}")
        arm = attnref_arm(data, device.type, a.quick, a.target, seed)
        if i:  # the process's age then holds the arms before it: no 'from launch' figure
            arm["before_clock_s"] = None
        result["arms"].append(arm)
        write()
    if not a.no_nanogpt:
        loads.before("nanoGPT")
        iters = QUICK["max_steps"] if a.quick else a.nanogpt_iters
        result["arms"].append(
            nanogpt_run(data_file, iters, device.type, a.quick, a.target, a.nanogpt_timeout)
        )
        write()
    sys.exit(0 if all("error" not in arm for arm in result["arms"]) else 1)


if __name__ == "__main__":
    main()
