"""Scaling: training tokens/s and peak memory as block size, n_embd and layers grow.

Run (one command; a quiet machine)::

    .venv/bin/python benchmarks/scaling.py --out benchmarks/results
    .venv/bin/python benchmarks/scaling.py --device cuda --out DIR
    .venv/bin/python benchmarks/scaling.py --blocks 64,128 --embds 64 --layers 1 --steps 3 --out DIR

Around the Q02 defaults (n_embd 128, 2 layers, 2 heads, block 128, batch 32) one axis moves at
a time: ``--blocks`` (64…512), ``--embds`` (64…512), ``--layers`` (1…8). Each point runs in its
own subprocess (so its peak memory is its own): `attention_ref.lm.train.train`, ``--warmup``
untimed steps then ``--steps`` timed ones; it reports tokens/s, ms/step, peak RSS (on CUDA
also the peak of allocated GPU memory) and the RSS right before training (torch, data), and
FLOPs/token (``6·N + 12·L·T·C``) so the table shows how the cost grows against the arithmetic.
Writes ``scaling.{json,md}`` and ``scaling.png`` (if matplotlib is there) to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _bench
import torch

from attention_ref.lm.config import PRECISIONS, TrainConfig
from attention_ref.lm.data import load, locate
from attention_ref.lm.model import CharGPT
from attention_ref.lm.train import Callbacks, resolve_precision, train


def one_point(spec: dict[str, Any]) -> dict[str, Any]:
    """Train ``spec['options']`` for warmup + steps steps here; what it measured."""
    data = load(locate(spec["data"]))
    cfg = TrainConfig().with_options(**spec["options"])
    device = _bench.pick_device(cfg.device)
    warmup, steps = spec["warmup"], spec["steps"]
    marks: list[float] = []
    rss_before = _bench.peak_rss_mib()

    def on_step(step: int, _m: object) -> None:
        if step in (warmup, warmup + steps):
            marks.append(_bench.now(device))

    run = cfg.with_options(
        max_steps=warmup + steps, eval_interval=warmup + steps, eval_batches=1, sample_tokens=0
    )
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    with tempfile.TemporaryDirectory() as tmp:
        train(run, data, Path(tmp), callbacks=Callbacks(on_step=on_step))
    tokens = steps * cfg.batch_size * cfg.model.block_size
    model = CharGPT(cfg.model)
    m = cfg.model
    return {
        "tokens_per_s": tokens / (marks[1] - marks[0]),
        "ms_per_step": (marks[1] - marks[0]) / steps * 1e3,
        "peak_rss_mib": _bench.peak_rss_mib(),
        "rss_before_training_mib": rss_before,
        "cuda_peak_mib": torch.cuda.max_memory_allocated(device) / 2**20
        if device.type == "cuda"
        else None,
        "params": sum(p.numel() for p in model.parameters()),
        "flops_per_token": _bench.flops_per_token(
            _bench.matmul_params(model), m.n_layer, m.block_size, m.n_embd
        ),
        "precision": resolve_precision(cfg.precision, device),
    }


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--blocks", default="64,128,256,512", help="block sizes (64,128,256,512)")
    p.add_argument("--embds", default="64,128,256,512", help="n_embd values (64,128,256,512)")
    p.add_argument("--layers", default="1,2,4,8", help="n_layer values (1,2,4,8)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps per point (5)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per point (20)")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, mps or auto")
    p.add_argument("--precision", default="auto", choices=PRECISIONS)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--data", type=Path, default=None)
    p.add_argument("--out", type=Path, default=None, help="write the table and the plot here")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a child: one point (JSON)
    return p.parse_args()


def ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def plot(points: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    axes = ["block_size", "n_embd", "n_layer"]
    fig, grid = plt.subplots(2, 3, figsize=(11, 6))
    for col, axis in enumerate(axes):
        pts = [p for p in points if p["axis"] == axis]
        xs = [p["value"] for p in pts]
        grid[0][col].plot(xs, [p["tokens_per_s"] for p in pts], marker="o")
        grid[0][col].set(xscale="log", yscale="log", title=axis, ylabel="tokens/s")
        grid[1][col].plot(xs, [p["peak_rss_mib"] for p in pts], marker="o", label="peak RSS")
        if pts and pts[0]["cuda_peak_mib"] is not None:
            grid[1][col].plot(xs, [p["cuda_peak_mib"] for p in pts], marker="s", label="GPU peak")
        grid[1][col].set(xscale="log", xlabel=axis, ylabel="MiB")
        grid[1][col].legend()
        for ax in grid[:, col]:
            ax.set_xscale("log", base=2)
            ax.minorticks_off()
            ax.set_xticks(xs, [str(x) for x in xs])
    fig.suptitle("attnref training: throughput and memory, one axis at a time (Q02 otherwise)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main() -> None:
    args = parse()
    if args.one is not None:
        print(json.dumps(one_point(json.loads(args.one))))
        return
    try:
        device = _bench.pick_device(args.device)
        grid = [("block_size", v) for v in ints(args.blocks)]
        grid += [("n_embd", v) for v in ints(args.embds)]
        grid += [("n_layer", v) for v in ints(args.layers)]
        data_path = locate(args.data)
        if args.steps < 1 or args.warmup < 1:
            raise ValueError("--steps and --warmup must be >= 1")
        for axis, value in grid:  # every point is a valid config before any work starts
            TrainConfig().with_options(**{axis: value})
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    base = {"device": device.type, "precision": args.precision, "threads": args.threads}
    print(
        f"scaling: {len(grid)} points, {args.warmup} + {args.steps} steps each; device "
        f"{device}, precision {args.precision}",
        flush=True,
    )
    points = []
    loads = _bench.LoadLog()
    for axis, value in grid:
        loads.before(f"{axis}={value}")
        spec = {
            "options": {**base, axis: value},
            "warmup": args.warmup,
            "steps": args.steps,
            "data": str(data_path),
        }
        cmd = [sys.executable, __file__, "--one", json.dumps(spec)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"  {axis}={value}: failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        point = {"axis": axis, "value": value, **json.loads(proc.stdout.strip().splitlines()[-1])}
        points.append(point)
        print(
            f"  {axis:10s} {value:4d}  {point['tokens_per_s']:12,.0f} tokens/s  "
            f"{point['ms_per_step']:8.1f} ms/step  peak RSS {point['peak_rss_mib']:7,.0f} MiB",
            flush=True,
        )
    header = [
        "axis",
        "value",
        "params",
        "FLOPs/token",
        "tokens/s",
        "ms/step",
        "GFLOP/s",
        "peak RSS MiB",
        "RSS before MiB",
        "GPU peak MiB",
    ]
    rows = [
        [
            p["axis"],
            p["value"],
            _bench.fmt(p["params"]),
            _bench.fmt(p["flops_per_token"]),
            _bench.fmt(p["tokens_per_s"]),
            f"{p['ms_per_step']:.1f}",
            f"{p['flops_per_token'] * p['tokens_per_s'] / 1e9:.1f}",
            _bench.fmt(p["peak_rss_mib"]),
            _bench.fmt(p["rss_before_training_mib"]),
            _bench.fmt(p["cuda_peak_mib"]) if p["cuda_peak_mib"] is not None else "-",
        ]
        for p in points
    ]
    print("\n" + _bench.text_table(header, rows))
    machine = _bench.machine(device, loads)
    md = "\n".join(
        [
            f"### Scaling — `benchmarks/scaling.py` ({machine['date_utc']} UTC)",
            "",
            f"{_bench.describe(machine)}. One axis at a time around the Q02 defaults; "
            f"{args.warmup} + {args.steps} steps per point, precision {args.precision} -> "
            f"{points[0]['precision'] if points else '-'}.",
            "",
            _bench.markdown_table(header, rows),
        ]
    )
    _bench.write_results(
        args.out, "scaling", {"args": vars(args), "machine": machine, "points": points}, md
    )
    if args.out is not None and points and plot(points, args.out / "scaling.png"):
        print(f"wrote {args.out / 'scaling.png'}")


if __name__ == "__main__":
    main()
