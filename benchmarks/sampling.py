"""Sampling speed: characters/s of ``attnref sample``-style generation (500 characters).

Run (one command)::

    .venv/bin/python benchmarks/sampling.py --out benchmarks/results
    .venv/bin/python benchmarks/sampling.py --checkpoint runs/RUN_ID/best.pt --out DIR
    .venv/bin/python benchmarks/sampling.py --run-id RUN_ID --out DIR   # + the CLI end to end

The model is the Q02 defaults' shape (random weights: the speed does not depend on them), or
a checkpoint's. Arms, interleaved, ``--reps`` repetitions, medians:

* ``cached``: `attention_ref.lm.sampling.generate` as ``attnref sample`` calls it (KV cache,
  one thread for a single sequence on the CPU);
* ``uncached-1-thread``: ``use_cache=False`` (the whole window recomputed every character),
  one thread;
* ``uncached-default-threads``: the generation before issue 11: the whole window every
  character with torch's default threads.

Also the evaluation sample of training (``--sample-tokens``, 200 by default) with the cache;
and with ``--run-id``, the wall time of ``attnref sample --run-id ... --tokens 500`` (start-up,
model download from the store, generation and output).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import _bench
import torch

import attention_ref.lm.sampling as sampling
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.model import CharGPT, ModelConfig

ARMS = ("cached", "uncached-1-thread", "uncached-default-threads")


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=500, help="characters per generation (500)")
    p.add_argument("--sample-tokens", type=int, default=200, help="training's eval sample (200)")
    p.add_argument("--reps", type=int, default=5, help="repetitions per arm (5)")
    p.add_argument("--arms", default=",".join(ARMS), help=f"subset of {','.join(ARMS)}")
    p.add_argument("--checkpoint", type=Path, default=None, help="a best.pt/last.pt to sample")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, mps or auto")
    p.add_argument("--run-id", default=None, help="also time `attnref sample --run-id RUN_ID`")
    p.add_argument("--tracking-uri", default=None, help="the store of --run-id")
    p.add_argument("--out", type=Path, default=None, help="write sampling.json and sampling.md")
    return p.parse_args()


def timed(fn: Callable[[], object], device: torch.device) -> float:
    t0 = _bench.now(device)
    fn()
    return _bench.now(device) - t0


def main() -> None:
    args = parse()
    try:
        device = _bench.pick_device(args.device)
        arms = [a.strip() for a in args.arms.split(",") if a.strip()]
        if set(arms) - set(ARMS) or args.tokens < 1 or args.reps < 1:
            raise ValueError(f"--arms among {', '.join(ARMS)}; --tokens and --reps >= 1")
        if args.checkpoint is not None:
            model = Checkpoint.load(args.checkpoint).build_model()
        else:
            torch.manual_seed(0)
            model = CharGPT(ModelConfig())
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    model = model.to(device).eval()
    start = torch.zeros(1, 1, dtype=torch.long, device=device)  # the prompt "\n" (any index)

    def generate(n: int, cache: bool, threads: bool) -> Callable[[], object]:
        def run() -> object:
            g = torch.Generator().manual_seed(0)
            with contextlib.ExitStack() as stack:
                if threads:  # the old behaviour: leave torch's threads alone
                    stack.enter_context(_default_threads())
                return sampling.generate(model, start, n, generator=g, use_cache=cache)

        return run

    runs = {
        "cached": generate(args.tokens, True, False),
        "uncached-1-thread": generate(args.tokens, False, False),
        "uncached-default-threads": generate(args.tokens, False, True),
    }
    generate(20, True, False)()  # warm-up
    seconds: dict[str, list[float]] = {a: [] for a in arms}
    evals: list[float] = []
    print(
        f"sampling: {args.tokens} characters, block {model.cfg.block_size}, n_embd "
        f"{model.cfg.n_embd}, {model.cfg.n_layer} layers; device {device}; "
        f"{torch.get_num_threads()} default threads; {args.reps} reps",
        flush=True,
    )
    loads = _bench.LoadLog()
    for rep in range(args.reps):
        for arm in arms[rep % len(arms) :] + arms[: rep % len(arms)]:
            loads.before(f"rep {rep + 1} {arm}")
            seconds[arm].append(timed(runs[arm], device))
            print(f"  rep {rep + 1}/{args.reps}  {arm:25s} {seconds[arm][-1]:7.3f} s", flush=True)
        loads.before(f"rep {rep + 1} eval sample")
        evals.append(timed(generate(args.sample_tokens, True, False), device))
    header = ["generation", "characters", "median s", "min-max s", "characters/s"]
    rows = []
    for arm in arms:
        med = _bench.median(seconds[arm])
        rows.append(
            [
                arm,
                args.tokens,
                f"{med:.3f}",
                f"{min(seconds[arm]):.3f}-{max(seconds[arm]):.3f}",
                _bench.fmt(args.tokens / med),
            ]
        )
    med, spread = _bench.median(evals), f"{min(evals):.3f}-{max(evals):.3f}"
    n = args.sample_tokens
    rows.append(["training's eval sample (cached)", n, f"{med:.3f}", spread, _bench.fmt(n / med)])
    cli = None
    if args.run_id:
        cli = time_cli(args.run_id, args.tracking_uri, args.tokens, args.reps, loads)
        med = _bench.median(cli)
        rows.append(
            [
                f"`attnref sample --tokens {args.tokens}` (wall, incl. start-up)",
                args.tokens,
                f"{med:.3f}",
                f"{min(cli):.3f}-{max(cli):.3f}",
                _bench.fmt(args.tokens / med),
            ]
        )
    print("\n" + _bench.text_table(header, rows))
    machine = _bench.machine(device, loads)
    source = f"from {args.checkpoint}" if args.checkpoint else "the Q02 shape, random weights"
    md = "\n".join(
        [
            f"### Sampling — `benchmarks/sampling.py` ({machine['date_utc']} UTC)",
            "",
            f"{_bench.describe(machine)}. {args.reps} interleaved repetitions; model: {source}.",
            "",
            _bench.markdown_table(header, rows),
        ]
    )
    payload = {
        "args": vars(args),
        "machine": machine,
        "seconds": seconds,
        "eval_sample_seconds": evals,
        "cli_seconds": cli,
        "table": {"header": header, "rows": rows},
    }
    _bench.write_results(args.out, "sampling", payload, md)


@contextlib.contextmanager
def _default_threads():  # type: ignore[no-untyped-def]
    """Make `generate` keep torch's default threads (how it ran before the one-thread rule)."""
    keep = sampling.one_thread_for
    sampling.one_thread_for = lambda idx: contextlib.nullcontext()  # type: ignore[assignment]
    try:
        yield
    finally:
        sampling.one_thread_for = keep


def time_cli(
    run_id: str, tracking_uri: str | None, tokens: int, reps: int, loads: _bench.LoadLog
) -> list[float]:
    exe = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))
    cmd = [exe, "sample", "--run-id", run_id, "--tokens", str(tokens)]
    if tracking_uri:
        cmd += ["--tracking-uri", tracking_uri]
    out = []
    for rep in range(reps):
        loads.before(f"rep {rep + 1} attnref sample")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
        out.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"attnref sample failed: {proc.stderr.strip()[-500:]}")
    return out


if __name__ == "__main__":
    main()
