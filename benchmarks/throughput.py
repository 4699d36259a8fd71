"""Training throughput: attnref's loop vs the field's reference trainer, at the Q02 shape.

Run (one command; a quiet machine; ``ATTNREF_DATA`` or the cache gives the data)::

    .venv/bin/python benchmarks/throughput.py --out benchmarks/results
    .venv/bin/python benchmarks/throughput.py --device cuda --peak-tflops 989 --out DIR   # GPU

Arms, measured in one process, interleaved (the order rotates every repetition), each
repetition a fresh model trained ``--warmup`` steps untimed then ``--steps`` steps timed:

* ``baseline``: ``benchmarks/baseline_trainer.py``: nanoGPT's own model (vendored) in its
  ``train.py``'s loop on a CPU: fp32, ``F.scaled_dot_product_attention``, plain AdamW, no
  compile (dropout ``--baseline-dropout``, 0 like attnref's default, so neither drops out;
  its output head is tied to the token embedding, attnref's is not: the same products, 8,320
  parameters fewer at the Q02 shape);
* ``attnref``: `attention_ref.lm.train.train` itself, the loop ``attnref train`` runs (its
  callbacks, NaN check and all), at ``--precision`` (default ``auto``);
* ``attnref-fp32``: the same at fp32, shown when ``--precision`` resolves to bf16 (what bf16
  buys);
* ``attnref-bf16-attention``: the ``attnref`` arm with the attention kernel in bf16 too (on the
  CPU the model runs it in fp32 under bf16 autocast: the lever measured here), shown when the
  precision resolves to bf16 on the CPU;
* ``reference``: attnref's loop with the textbook functions of `attention_ref.reference`
  (scores, scale, mask, softmax, weighted sum, merge) as every layer's attention, at the
  precision of ``attnref-fp32``: what the fused kernel buys.

Tokens/s of each repetition is ``steps · batch · block / time``, the clock read after each
step (on a GPU after a synchronisation); the table shows medians, min-max and the ratio of
medians to the baseline. Model-FLOPs utilisation, with ``--peak-tflops``, uses
``6·N + 12·L·T·C`` FLOPs per token (see ``_bench.flops_per_token``).

Then (``--rss-steps`` > 0, CPU only) the peak resident memory of ``attnref train`` at the
defaults (all options default; ``--max-steps`` as given, so it evaluates, samples and
checkpoints at least once), as a subprocess with its own MLflow sqlite store in a temp dir.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import _bench
import torch
from baseline_trainer import RECIPE, BaselineConfig
from baseline_trainer import train as baseline_train
from torch import Tensor

import attention_ref.reference as ref
from attention_ref.lm.config import PRECISIONS, TrainConfig
from attention_ref.lm.data import CharData, load, locate
from attention_ref.lm.model import CausalSelfAttention, CharGPT, LayerCache
from attention_ref.lm.train import Callbacks, resolve_precision, train

ARMS = ("baseline", "attnref", "attnref-fp32", "attnref-bf16-attention", "reference")


def reference_forward(
    self: CausalSelfAttention, x: Tensor, cache: LayerCache | None = None, last_only: bool = False
) -> Tensor:
    """`CausalSelfAttention.forward` with the textbook functions instead of the fused kernel
    (a training step: no cache, every position)."""
    if cache is not None or last_only:
        raise ValueError("the textbook arm times training steps: no cache, every position")
    _, T, C = x.size()
    q, k, v = self.qkv(x).split(C, dim=2)  # (B, T, 3C) -> 3 × (B, T, C)
    Q, K, V = (ref.split_heads(t, self.n_head) for t in (q, k, v))  # (B, T, C) -> (B, h, T, d_k)
    S = ref.scale(ref.scores(Q, K), C // self.n_head)  # S = Q Kᵀ / √d_k: (B, h, T, T)
    M = ref.causal_mask(T, dtype=S.dtype).to(x.device)
    A = ref.softmax_rows(ref.add_mask(S, M))  # A = softmax(S + M)
    A = ref.attention_dropout(A, self.dropout if self.training else 0.0)
    H = ref.weighted_sum(A, V)  # (B, h, T, d_k)
    return self.resid_drop(self.proj(ref.merge_heads(H)))  # (B, T, C) · W_O


@contextlib.contextmanager
def textbook_attention() -> Iterator[None]:
    """Every `CausalSelfAttention` built meanwhile attends with the reference functions."""
    fast = CausalSelfAttention.forward
    CausalSelfAttention.forward = reference_forward  # type: ignore[method-assign]
    try:
        yield
    finally:
        CausalSelfAttention.forward = fast  # type: ignore[method-assign]


def timed_steps(
    device: torch.device, warmup: int, steps: int
) -> tuple[Callable[[int], bool], list[float]]:
    """An ``on_step`` that reads the clock after step ``warmup`` and after the last one."""
    marks: list[float] = []

    def on_step(step: int) -> bool:
        if step in (warmup, warmup + steps):
            marks.append(_bench.now(device))
        return step >= warmup + steps

    return on_step, marks


@contextlib.contextmanager
def bf16_attention_kernel() -> Iterator[None]:
    """Under CPU bf16 autocast, give the attention kernel bf16 inputs (the model's rule off)."""
    keep = CausalSelfAttention.cpu_bf16_attention_in_fp32
    CausalSelfAttention.cpu_bf16_attention_in_fp32 = False
    try:
        yield
    finally:
        CausalSelfAttention.cpu_bf16_attention_in_fp32 = keep


def run_attnref(
    cfg: TrainConfig,
    data: CharData,
    warmup: int,
    steps: int,
    patch: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
) -> float:
    """Seconds for ``steps`` steps of `attention_ref.lm.train.train` after ``warmup`` steps,
    inside ``patch()`` (the arms that change the model)."""
    device = _bench.pick_device(cfg.device)
    on_step, marks = timed_steps(device, warmup, steps)
    run_cfg = cfg.with_options(
        max_steps=warmup + steps, eval_interval=warmup + steps, eval_batches=1, sample_tokens=0
    )
    with tempfile.TemporaryDirectory() as tmp, patch():
        train(run_cfg, data, Path(tmp), callbacks=Callbacks(on_step=lambda s, m: on_step(s)))
    return marks[1] - marks[0]


def run_baseline(
    cfg: BaselineConfig, data: CharData, device: torch.device, warmup: int, steps: int
) -> float:
    """Seconds for ``steps`` steps of the nanoGPT-style loop after ``warmup`` steps."""
    on_step, marks = timed_steps(device, warmup, steps)
    baseline_train(cfg, data.train, warmup + steps, device, on_step=lambda s, m: on_step(s))
    return marks[1] - marks[0]


def attnref_rss(steps: int, data_path: Path) -> dict[str, Any]:
    """Peak RSS of ``attnref train`` at the defaults (``--max-steps steps``), in a subprocess."""
    exe = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            exe,
            "train",
            "--max-steps",
            str(steps),
            "--data",
            str(data_path),
            "--out-dir",
            f"{tmp}/runs",
            "--tracking-uri",
            f"sqlite:///{tmp}/mlflow.db",
            "--experiment",
            "throughput-rss",
        ]
        before = _bench.peak_rss_mib(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=tmp, env={**os.environ, "COLUMNS": "100"}
        )
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"attnref train failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    peak = _bench.peak_rss_mib(resource.RUSAGE_CHILDREN)
    return {
        "command": " ".join(["attnref", *cmd[1:3], "(defaults)"]),
        "steps": steps,
        "peak_rss_mib": peak,
        "earlier_children_peak_mib": before,
        "wall_s": wall,
    }


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, mps or auto")
    p.add_argument(
        "--precision", default="auto", choices=PRECISIONS, help="attnref's arm (default auto)"
    )
    p.add_argument("--reps", type=int, default=5, help="repetitions per arm (default 5)")
    p.add_argument(
        "--warmup", type=int, default=10, help="untimed steps per repetition (default 10)"
    )
    p.add_argument("--steps", type=int, default=60, help="timed steps per repetition (default 60)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument(
        "--arms", default=",".join(ARMS), help=f"comma-separated subset of {','.join(ARMS)}"
    )
    p.add_argument(
        "--baseline-dropout",
        type=float,
        default=0.0,
        help="baseline dropout (default 0, like attnref)",
    )
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=2)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument(
        "--peak-tflops",
        type=float,
        default=0.0,
        help="device peak for MFU (e.g. 989 for H100 bf16 dense)",
    )
    p.add_argument(
        "--rss-steps",
        type=int,
        default=300,
        help="attnref train steps for the RSS probe (0: skip; 2600: the full defaults)",
    )
    p.add_argument(
        "--data", type=Path, default=None, help="input.txt (default: $ATTNREF_DATA, the cache)"
    )
    p.add_argument(
        "--out", type=Path, default=None, help="write throughput.json and throughput.md here"
    )
    return p.parse_args()


def main() -> None:
    args = parse()
    try:
        device = _bench.pick_device(args.device)
        arms = [a.strip() for a in args.arms.split(",") if a.strip()]
        unknown = sorted(set(arms) - set(ARMS))
        if unknown or args.reps < 1 or args.steps < 1 or args.warmup < 1:
            raise ValueError(
                f"unknown arm(s) {unknown}; choose among {ARMS}"
                if unknown
                else "--reps, --steps and --warmup must be >= 1"
            )
        data_path = locate(args.data)
        data = load(data_path)
        cfg = TrainConfig().with_options(
            n_embd=args.n_embd,
            n_layer=args.n_layer,
            n_head=args.n_head,
            block_size=args.block_size,
            batch_size=args.batch_size,
            device=str(device.type),
            threads=args.threads,
            precision=args.precision,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.threads:
        torch.set_num_threads(args.threads)
    precision = resolve_precision(args.precision, device)
    if "attnref-fp32" in arms and precision == "fp32":
        arms.remove("attnref-fp32")  # it would be the attnref arm again
    if "attnref-bf16-attention" in arms and (precision != "bf16" or device.type != "cpu"):
        arms.remove("attnref-bf16-attention")  # the rule it turns off applies to CPU bf16 only
    base_cfg = replace(
        RECIPE,
        vocab_size=data.vocab_size,
        n_embd=args.n_embd,
        n_layer=args.n_layer,
        n_head=args.n_head,
        block_size=args.block_size,
        batch_size=args.batch_size,
        dropout=args.baseline_dropout,
    )
    fp32 = cfg.with_options(precision="fp32")
    runners: dict[str, Callable[[], float]] = {
        "baseline": lambda: run_baseline(base_cfg, data, device, args.warmup, args.steps),
        "attnref": lambda: run_attnref(cfg, data, args.warmup, args.steps),
        "attnref-fp32": lambda: run_attnref(fp32, data, args.warmup, args.steps),
        "attnref-bf16-attention": lambda: run_attnref(
            cfg, data, args.warmup, args.steps, bf16_attention_kernel
        ),
        "reference": lambda: run_attnref(fp32, data, args.warmup, args.steps, textbook_attention),
    }
    tokens = args.steps * args.batch_size * args.block_size
    shape = (
        f"n_embd {args.n_embd}, {args.n_layer} layers, {args.n_head} heads, "
        f"block {args.block_size}, batch {args.batch_size}"
    )
    plan = f"{args.reps} interleaved repetitions of {args.warmup} + {args.steps} steps"
    print(
        f"throughput: {', '.join(arms)}; {plan}; {shape}; device {device}, "
        f"attnref precision {args.precision} -> {precision}, threads {torch.get_num_threads()}",
        flush=True,
    )
    tps: dict[str, list[float]] = {a: [] for a in arms}
    loads = _bench.LoadLog()
    for rep in range(args.reps):
        order = arms[rep % len(arms) :] + arms[: rep % len(arms)]
        for arm in order:
            loads.before(f"rep {rep + 1} {arm}")
            seconds = runners[arm]()
            tps[arm].append(tokens / seconds)
            ms = seconds / args.steps * 1e3
            print(
                f"  rep {rep + 1}/{args.reps}  {arm:13s} {tokens / seconds:12,.0f} tokens/s "
                f"({ms:.1f} ms/step)",
                flush=True,
            )
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size))
    fpt = _bench.flops_per_token(
        _bench.matmul_params(model), args.n_layer, args.block_size, args.n_embd
    )
    base = _bench.median(tps["baseline"]) if "baseline" in tps else float("nan")
    rows, results = [], {}
    labels = {
        "baseline": "baseline (nanoGPT-style, fp32)",
        "attnref": f"attnref ({precision})",
        "attnref-fp32": "attnref (fp32)",
        "attnref-bf16-attention": "attnref (bf16, attention kernel in bf16 too)",
        "reference": "attnref + textbook attention (fp32)",
    }
    for arm in arms:
        med = _bench.median(tps[arm])
        mfu = fpt * med / (args.peak_tflops * 1e12) if args.peak_tflops else float("nan")
        results[arm] = {
            "tokens_per_s": tps[arm],
            "median": med,
            "ratio_to_baseline": med / base,
            "mfu": mfu,
            "ms_per_step": args.batch_size * args.block_size / med * 1e3,
        }
        rows.append(
            [
                labels[arm],
                _bench.fmt(med),
                f"{_bench.fmt(min(tps[arm]))}-{_bench.fmt(max(tps[arm]))}",
                f"{args.batch_size * args.block_size / med * 1e3:.1f}",
                f"{med / base:.2f}" if base == base else "-",
                f"{mfu:.2%}" if mfu == mfu else "-",
            ]
        )
    header = ["arm", "median tokens/s", "min-max", "ms/step", "× baseline", "MFU"]
    print("\n" + _bench.text_table(header, rows))
    print(f"FLOPs/token (6·N + 12·L·T·C): {fpt:,}")
    rss = None
    if args.rss_steps > 0:
        if device.type != "cpu":
            print("(peak RSS of attnref train: measured on the CPU runs only)")
        else:
            rss = attnref_rss(args.rss_steps, data_path)
            print(
                f"peak RSS of `attnref train` (defaults, --max-steps {args.rss_steps}): "
                f"{rss['peak_rss_mib']:,.0f} MiB ({rss['wall_s']:.0f} s)"
            )
    machine = _bench.machine(device, loads)
    md = [
        f"### Throughput — `benchmarks/throughput.py` ({machine['date_utc']} UTC)",
        "",
        f"{_bench.describe(machine)}. {plan}; {shape}.",
        "",
        _bench.markdown_table(header, rows),
    ]
    if rss:
        md += [
            "",
            f"Peak RSS of `attnref train` at the defaults (`--max-steps {args.rss_steps}`): "
            f"{rss['peak_rss_mib']:,.0f} MiB.",
        ]
    payload = {
        "args": vars(args),
        "machine": machine,
        "precision": precision,
        "flops_per_token": fpt,
        "arms": results,
        "rss": rss,
    }
    _bench.write_results(args.out, "throughput", payload, "\n".join(md))


if __name__ == "__main__":
    main()
