"""The training step on a GPU: eager vs one CUDA graph, fp32 vs bf16, beside the baseline;
then the wall time of whole runs (Q02's defaults, the three arms of the ablation).

Run on a CUDA machine (needs torch and attnref only: no MLflow, no network)::

    PYTHONPATH=. python3 benchmarks/gpu_step.py --data PATH/input.txt --out FILE.md

and here, to check that it runs (tiny steps, no graph arms: a CPU has no CUDA graphs)::

    PYTHONPATH=. .venv/bin/python benchmarks/gpu_step.py --device cpu --quick

Part 1, the step, at the Q02 shape (n_embd 128, 2 layers, 2 heads, block 128) for each
``--batch`` (16 and 32): every arm builds a fresh model, runs ``--warmup`` steps untimed, then
``--steps`` steps between two ``torch.cuda.synchronize()``; ``--reps`` repetitions, interleaved
(the order of the arms rotates every repetition); the table shows medians, ms/step and
tokens/s (``steps · batch · block / time``).

* ``baseline``: ``benchmarks/baseline_trainer.py`` (nanoGPT's own model in its ``train.py``'s
  loop: fp32, SDPA, plain AdamW, its
  batch drawn on the CPU and copied; dropout 0 like attnref's default);
* ``eager fp32`` / ``eager bf16``: attnref's `TrainStep` called step by step, the loss and
  gradient norm read back after each step (what `train` does without a graph);
* ``graph fp32`` / ``graph bf16``: the same step captured once (`capture_step`) and replayed,
  the loss read back every 100 steps (``attnref train``'s ``--log-every`` default).

Part 2, whole runs through `attention_ref.lm.train.train` (evaluations, samples and
checkpoints included; ``metrics_every=100`` as the CLI passes): Q02's defaults on the device
(``--cuda-graph auto``, ``--precision auto``: with the step graphed, the evaluation and the
sample are graphs too), and the three attention modes of the ablation in sequence with the
defaults; with ``--eager-run`` also Q02 with ``--cuda-graph off`` (the eager loop: 42 s on
an H100, benchmarks/results/gpu-h100).

Part 3, nanoGPT's own ``train.py`` (``benchmarks/nanogpt``, vendored unmodified; run by
``benchmarks/nanogpt_arm.py``) at its GPU defaults (bf16 autocast where the GPU has it,
``compile=True``) at the Q02 shape (2 layers, 2 heads, 128 wide, block 128, dropout 0) and
batch ``--nanogpt-batch`` (32): tokens/s over its own iterations ``--nanogpt-skip`` ..
``--nanogpt-iters``, after its compilation; where ``compile=True`` fails, once more with
``compile=False`` (said in the table). ``--no-nanogpt`` skips it; on the CPU (``--quick``)
it is a tiny fp32 run without compile, a check that it runs.

The results file is written after each part, so a part that runs out of time leaves the
parts before it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import _bench
import nanogpt_arm
import torch
from baseline_trainer import RECIPE
from baseline_trainer import train as baseline_train

from attention_ref.lm.config import AttentionMode, TrainConfig
from attention_ref.lm.data import CharData, load, locate
from attention_ref.lm.model import CharGPT
from attention_ref.lm.train import (
    TrainStep,
    capture_step,
    lr_at,
    make_optimizer,
    seed_everything,
    train,
)

ARMS = ("baseline", "eager fp32", "eager bf16", "graph fp32", "graph bf16")
#: the graphed arms read the loss back this often (``attnref train --log-every`` default)
READ_EVERY = 100


def time_baseline(data: CharData, batch: int, warmup: int, steps: int, dev: torch.device) -> float:
    """Seconds of ``steps`` baseline steps after ``warmup`` untimed ones."""
    marks: list[float] = []

    def on_step(step: int, _model: Any) -> bool:
        if step in (warmup, warmup + steps):
            marks.append(_bench.now(dev))
        return step >= warmup + steps

    cfg = replace(RECIPE, batch_size=batch, dropout=0.0)
    baseline_train(cfg, data.train, warmup + steps, dev, on_step=on_step)
    return marks[1] - marks[0]


def time_attnref(
    data: CharData, batch: int, warmup: int, steps: int, dev: torch.device, arm: str
) -> float:
    """Seconds of ``steps`` attnref steps (eager or replayed, fp32 or bf16) after ``warmup``."""
    mode, precision = arm.split()
    cfg = TrainConfig(batch_size=batch, device=dev.type, precision=precision)
    batch_gen = seed_everything(cfg.seed)
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size)).to(dev)
    step_fn = TrainStep(model, make_optimizer(model, cfg), data.train, cfg, precision, batch_gen)
    model.train()
    if mode == "graph":
        graph = capture_step(step_fn)

        def one(i: int) -> None:
            step_fn.set_lr(lr_at(i, cfg))
            graph.replay()
            if (i + 1) % READ_EVERY == 0:
                torch.stack([step_fn.loss, step_fn.grad_norm]).tolist()  # type: ignore[list-item]
    else:

        def one(i: int) -> None:
            step_fn.set_lr(lr_at(i, cfg))
            loss, norm = step_fn()
            torch.stack([loss, norm]).tolist()  # the read of every eager step

    for i in range(warmup):
        one(i)
    t0 = _bench.now(dev)
    for i in range(warmup, warmup + steps):
        one(i)
    return _bench.now(dev) - t0


def measure_steps(
    data: CharData,
    dev: torch.device,
    batches: list[int],
    args: argparse.Namespace,
    loads: _bench.LoadLog,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every (batch, arm) ``args.reps`` times, interleaved; the arms that could not run."""
    arms = [a for a in ARMS if dev.type == "cuda" or not a.startswith("graph")]
    skipped = {a: "no CUDA graphs on a CPU" for a in ARMS if a not in arms}
    times: dict[tuple[int, str], list[float]] = {}
    for rep in range(args.reps):
        for batch in batches:
            order = arms[rep % len(arms) :] + arms[: rep % len(arms)]
            for arm in order:
                if arm in skipped:
                    continue
                loads.before(f"{arm} b{batch} rep {rep}")
                try:
                    if arm == "baseline":
                        t = time_baseline(data, batch, args.warmup, args.steps, dev)
                    else:
                        t = time_attnref(data, batch, args.warmup, args.steps, dev, arm)
                except Exception as e:  # a capture the GPU refused: said in the table
                    skipped[arm] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                    print(f"{arm}: {skipped[arm]}", file=sys.stderr)
                    continue
                times.setdefault((batch, arm), []).append(t)
                print(f"rep {rep} batch {batch} {arm}: {1e3 * t / args.steps:.3f} ms/step")
    rows = []
    for batch in batches:
        base = times.get((batch, "baseline"))
        base_s = _bench.median(base) if base else float("nan")
        for arm in arms:
            ts = times.get((batch, arm))
            if not ts:
                continue
            s = _bench.median(ts)
            rows.append(
                {
                    "batch": batch,
                    "arm": arm,
                    "seconds": ts,
                    "median_s": s,
                    "ms_per_step": 1e3 * s / args.steps,
                    "tokens_per_s": args.steps * batch * RECIPE.block_size / s,
                    "vs_baseline": base_s / s,
                }
            )
    return rows, skipped


def run_wall(data: CharData, cfg: TrainConfig, loads: _bench.LoadLog, label: str) -> dict[str, Any]:
    """One whole run through `train`: its wall time (from the call to the return), its
    losses and whether the step ran as a graph."""
    from attention_ref.lm.train import Callbacks, StartInfo

    starts: list[StartInfo] = []
    loads.before(label)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        r = train(
            cfg,
            data,
            Path(tmp),
            callbacks=Callbacks(on_start=starts.append),
            metrics_every=READ_EVERY,
        )
        wall = time.perf_counter() - t0
    info = starts[0]
    row = {
        "run": label,
        "attention": str(cfg.attention),
        "steps": r.steps_done,
        "wall_s": wall,
        "loop_s": r.wall_time_s,
        "best_val": r.best_val_loss,
        "final_val": r.final_val_loss,
        "precision": info.precision,
        "graph": info.graph,
        "graph_note": info.graph_note,
    }
    print(
        f"{label}: {wall:.1f} s, best val {r.best_val_loss:.4f} ({info.precision}, "
        f"graph {'on' if info.graph else 'off'}) {info.graph_note}"
    )
    return row


def markdown(
    info: dict[str, Any],
    steps: list[dict[str, Any]],
    skipped: dict[str, str],
    runs: list[dict[str, Any]],
    args: argparse.Namespace,
    nano: list[dict[str, Any]] | None = None,
) -> str:
    lines = [
        "# The training step on a GPU (benchmarks/gpu_step.py)",
        "",
        f"{_bench.describe(info)}; CUDA runtime {torch.version.cuda or '-'}.",
        "",
        f"Q02 shape (n_embd 128, 2 layers, 2 heads, block 128); medians of {args.reps} "
        f"interleaved repetitions of {args.steps} timed steps after {args.warmup} warm-up "
        f"steps, torch.cuda.synchronize() around the timing; eager arms read the loss after "
        f"every step, graph arms every {READ_EVERY} steps.",
        "",
        _bench.markdown_table(
            ["batch", "arm", "ms/step", "tokens/s", "× baseline", "min–max ms/step"],
            [
                [
                    r["batch"],
                    r["arm"],
                    f"{r['ms_per_step']:.3f}",
                    _bench.fmt(r["tokens_per_s"]),
                    f"{r['vs_baseline']:.2f}",
                    f"{1e3 * min(r['seconds']) / args.steps:.3f}–"
                    f"{1e3 * max(r['seconds']) / args.steps:.3f}",
                ]
                for r in steps
            ],
        ),
    ]
    if skipped:
        lines += ["", *[f"- {arm}: not measured ({why})" for arm, why in skipped.items()]]
    if nano:
        lines += ["", *nanogpt_lines(nano, steps)]
    if not runs:
        return "\n".join(lines)
    lines += [
        "",
        "Whole runs through `attention_ref.lm.train.train` (evaluations, samples, checkpoints "
        f"included; loss read every {READ_EVERY} steps):",
        "",
        _bench.markdown_table(
            ["run", "attention", "steps", "precision", "graph", "wall s", "best val", "final val"],
            [
                [
                    r["run"],
                    r["attention"],
                    r["steps"],
                    r["precision"],
                    "on" if r["graph"] else "off",
                    f"{r['wall_s']:.1f}",
                    f"{r['best_val']:.4f}",
                    f"{r['final_val']:.4f}",
                ]
                for r in runs
            ],
        ),
    ]
    ablation = [r for r in runs if r["run"].startswith("ablation")]
    if ablation:
        total = sum(r["wall_s"] for r in ablation)
        lines += ["", f"The {len(ablation)} ablation arms in sequence: {total:.1f} s."]
    notes = sorted({r["graph_note"] for r in runs if r["graph_note"]})
    if notes:
        lines += ["", *[f"- {n}" for n in notes]]
    return "\n".join(lines)


def nanogpt_lines(nano: list[dict[str, Any]], steps: list[dict[str, Any]]) -> list[str]:
    """Part 3's table: nanoGPT's train.py, and attnref's graph arms at its batch beside it."""
    first = nano[0]
    lines = [
        f"nanoGPT's own `train.py` (karpathy/nanoGPT {first['commit'][:12]}, vendored "
        f"unmodified in benchmarks/nanogpt; its shakespeare_char recipe at the same shape, "
        f"dropout 0, batch {first['batch']}; bf16 autocast where the GPU has it), timed over its "
        "own printed iterations after its compilation (wall time between two printed "
        "iterations; it reads the loss every 10), beside attnref's arms of the table above at "
        "the same batch:",
        "",
    ]
    rows = []
    for r in nano:
        label = f"nanoGPT train.py, compile={r['compile']}"
        if "tokens_per_s" not in r:
            rows.append([label, "-", "-", "-", f"failed: {r.get('error', '?')}"])
            continue
        rows.append(
            [
                label,
                f"{r['ms_per_step']:.3f}",
                _bench.fmt(r["tokens_per_s"]),
                "1.00",
                f"iterations {r['first_iter']}–{r['last_iter']}, {r['to_first_iter_s']:.0f} s to "
                f"the first (start{', compilation' if r['compile'] else ''}); printed median "
                f"{r['printed_ms_median']:.2f} ms",
            ]
        )
    timed = [r for r in nano if "tokens_per_s" in r]
    if timed:
        base = timed[-1]["tokens_per_s"]
        beside = ("baseline", "graph fp32", "graph bf16")
        for r in steps:
            if r["batch"] == first["batch"] and r["arm"] in beside:
                ratio = r["tokens_per_s"] / base
                rows.append(
                    [
                        f"attnref {r['arm']}" if r["arm"] != "baseline" else "baseline",
                        f"{r['ms_per_step']:.3f}",
                        _bench.fmt(r["tokens_per_s"]),
                        f"{ratio:.2f}",
                        "the table above",
                    ]
                )
    lines.append(_bench.markdown_table(["arm", "ms/step", "tokens/s", "× nanoGPT", "how"], rows))
    return lines


def run_nanogpt(
    data_path: Path, dev: torch.device, args: argparse.Namespace, loads: _bench.LoadLog
) -> list[dict[str, Any]]:
    """Part 3: nanoGPT's train.py at its defaults; again without compile where that failed."""
    on_gpu = dev.type == "cuda"
    shape = {
        "batch": args.nanogpt_batch,
        "iters": args.nanogpt_iters,
        "skip": args.nanogpt_skip,
        "device": dev.type,
    }
    loads.before("nanoGPT train.py")
    rows = [nanogpt_arm.run(data_path, compile=on_gpu, timeout_s=args.nanogpt_timeout, **shape)]
    if on_gpu and "tokens_per_s" not in rows[0]:
        print(
            f"nanoGPT compile=True: {rows[0].get('error')}; once more, compile=False",
            file=sys.stderr,
        )
        print("\n".join(rows[0].get("tail", [])), file=sys.stderr)
        loads.before("nanoGPT train.py, compile=False")
        rows.append(nanogpt_arm.run(data_path, compile=False, timeout_s=60.0, **shape))
    for r in rows:
        said = (
            f"{r['ms_per_step']:.3f} ms/step, {_bench.fmt(r['tokens_per_s'])} tokens/s"
            if "tokens_per_s" in r
            else f"failed: {r.get('error')}"
        )
        print(
            f"nanoGPT train.py compile={r['compile']} batch {r['batch']}: {said} "
            f"({r.get('wall_s', 0):.0f} s in all)"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=None, help="Tiny Shakespeare's input.txt")
    p.add_argument("--out", type=Path, default=None, help="markdown file (JSON beside it)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--batch", type=int, nargs="+", default=[16, 32])
    p.add_argument("--steps", type=int, default=200, help="timed steps per repetition")
    p.add_argument("--warmup", type=int, default=30, help="untimed steps before them")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument(
        "--max-steps", type=int, default=None, help="steps of the whole runs (default: Q02's 6000)"
    )
    p.add_argument("--no-runs", action="store_true", help="no whole runs (part 2)")
    p.add_argument(
        "--eager-run", action="store_true", help="part 2 also runs Q02 with --cuda-graph off"
    )
    p.add_argument("--no-nanogpt", action="store_true", help="skip nanoGPT's train.py (part 3)")
    p.add_argument("--nanogpt-batch", type=int, default=32)
    p.add_argument(
        "--nanogpt-iters", type=int, default=600, help="its last iteration (a multiple of 10)"
    )
    p.add_argument(
        "--nanogpt-skip", type=int, default=100, help="its first timed iteration (a multiple of 10)"
    )
    p.add_argument(
        "--nanogpt-timeout", type=float, default=150.0, help="seconds before its run is stopped"
    )
    p.add_argument(
        "--quick", action="store_true", help="a check that it runs: tiny steps and runs (CPU)"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.warmup, args.reps, args.batch = 4, 2, 1, [4]
        args.max_steps = args.max_steps or 20
        args.nanogpt_batch, args.nanogpt_iters, args.nanogpt_skip = 4, 20, 10
    dev = _bench.pick_device(args.device)
    data_path = locate(args.data)
    data = load(data_path)
    loads = _bench.LoadLog(window=0.2)
    t_start = time.perf_counter()
    steps: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    runs: list[dict[str, Any]] = []
    nano: list[dict[str, Any]] = []

    def save(final: bool) -> None:
        """The results so far (after each part): the markdown, and JSON beside it."""
        info = _bench.machine(dev, loads)
        info["total_s"] = time.perf_counter() - t_start
        text = markdown(info, steps, skipped, runs, args, nano)
        if final:
            print("\n" + text)
            print(f"\ntotal {info['total_s']:.0f} s")
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text + "\n")
            payload = {
                "machine": info,
                "steps": steps,
                "skipped": skipped,
                "runs": runs,
                "nanogpt": nano,
                "complete": final,
                "args": {k: str(v) for k, v in vars(args).items()},
            }
            args.out.with_suffix(".json").write_text(json.dumps(payload, indent=2, default=str))
            if final:
                print(f"wrote {args.out} and {args.out.with_suffix('.json')}")

    steps, skipped = measure_steps(data, dev, args.batch, args, loads)
    save(final=False)
    if not args.no_runs:
        base = TrainConfig(device=dev.type)
        if args.max_steps is not None:
            n = args.max_steps
            base = base.with_options(
                max_steps=n,
                eval_interval=max(1, n // 2),
                warmup_steps=min(base.warmup_steps, n // 2),
            )
        if args.quick:
            base = base.with_options(eval_batches=2, sample_tokens=10, batch_size=4)
        runs.append(run_wall(data, base, loads, "q02 defaults"))
        if args.eager_run:
            runs.append(run_wall(data, base.with_options(cuda_graph="off"), loads, "q02 eager"))
        for mode in AttentionMode:
            runs.append(
                run_wall(data, base.with_options(attention=str(mode)), loads, f"ablation {mode}")
            )
        save(final=False)
    if not args.no_nanogpt:
        nano.extend(run_nanogpt(data_path, dev, args, loads))
    save(final=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
