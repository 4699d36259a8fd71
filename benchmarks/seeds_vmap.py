"""N seeds of one arm at once (``torch.func.stack_module_state`` + ``vmap``) against N separate
runs, on the CPU or a GPU: does training the seeds together cost less?

Run: ``ATTNREF_DATA=... .venv/bin/python benchmarks/seeds_vmap.py [--seeds 1,3] [--steps 40] [--reps
3] [--out DIR] [--device cuda --shape q02]``. Each repetition times, interleaved, for each N:
``separate`` (N models one after the other, each with its own fused AdamW: what ``attnref ablation
--seeds N`` does) and ``vmap`` (the N models' parameters stacked, one vmapped forward and backward
of the summed per-seed losses, the gradient clipped per seed, one fused AdamW over the stacks). Both
draw the same batches per seed, in fp32, eval mode off, no evaluations. ``--shape q02`` trains Q02's
model (128 wide, 2 layers, 2 heads, block 128, batch 16) instead of the tests' tiny one; ``--device
cuda`` runs both on the GPU (eager, ``torch.cuda.synchronize()`` around each timed part; the batches
are drawn on the CPU beforehand and moved to the GPU, outside the timing). After the timing, the
final per-seed losses and weights of the two are compared (are they the same runs?). The load is
read before each timed part (`_bench.LoadLog`).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import time
from pathlib import Path

import _bench
import torch
from torch.func import functional_call, stack_module_state, vmap

from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import load, locate
from attention_ref.lm.model import CharGPT
from attention_ref.lm.train import make_optimizer

#: the tests' tiny shape (tests/configs.py TINY)
TINY = dict(
    n_embd=32, n_layer=1, n_head=2, block_size=32, batch_size=16, lr=1e-2, seed=7, precision="fp32"
)
#: Q02's model and recipe (the defaults), in fp32
Q02 = dict(precision="fp32")
SHAPES = {"tiny": TINY, "q02": Q02}


def batches(train: torch.Tensor, cfg: TrainConfig, seed: int, steps: int) -> list[torch.Tensor]:
    """``steps`` index tensors ``(B, T + 1)`` drawn with the seed's own generator."""
    g = torch.Generator().manual_seed(seed)
    T, B = cfg.model.block_size, cfg.batch_size
    out = []
    for _ in range(steps):
        starts = torch.randint(len(train) - T - 1, (B,), generator=g)
        out.append(torch.stack([train[s : s + T + 1] for s in starts.tolist()]))
    return out


def models(cfg: TrainConfig, n: int, device: str = "cpu") -> list[CharGPT]:
    out = []
    for i in range(n):
        torch.manual_seed(cfg.seed + i)
        out.append(CharGPT(cfg.model).to(device))
    return out


def sync(device: str) -> None:
    """Wait for the GPU's queued work (nothing on the CPU)."""
    if device == "cuda":
        torch.cuda.synchronize()


def separate(cfg: TrainConfig, nets: list[CharGPT], data: list[list[torch.Tensor]]) -> list[float]:
    """Each model trained on its own, one after the other; the last losses."""
    last = []
    for net, seq in zip(nets, data, strict=True):
        opt = make_optimizer(net, cfg)
        for xy in seq:
            _, loss = net(xy[:, :-1].contiguous(), xy[:, 1:].contiguous())
            assert loss is not None
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.grad_clip)
            opt.step()
        last.append(loss.item())
    return last


def attention_kernel(device: torch.device) -> contextlib.AbstractContextManager[None]:
    """On CUDA, SDPA's math kernel: the fused kernel SDPA picked refused the batch dimension
    vmap adds in its backward (torch 2.11 on an H200, once: "LSE is not correctly aligned
    (strideH)"; the other fused kernels not tried); on the CPU, whichever SDPA picks."""
    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.MATH)


def together(
    cfg: TrainConfig, nets: list[CharGPT], data: list[list[torch.Tensor]]
) -> tuple[list[float], dict[str, torch.Tensor]]:
    """The models stacked and trained in one vmapped step; the last losses and the stacks."""
    params, buffers = stack_module_state(nets)  # name -> (N, ...) leaves
    base = copy.deepcopy(nets[0]).to("meta")
    stacked = list(params.values())
    decay = [p for p in stacked if p.dim() >= 3]  # a matrix per seed
    rest = [p for p in stacked if p.dim() < 3]
    opt = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": cfg.weight_decay},
            {"params": rest, "weight_decay": 0.0},
        ],
        lr=cfg.lr,
        betas=(0.9, 0.99),
        fused=True,
    )

    def loss_of(p: dict, b: dict, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return functional_call(base, (p, b), (x,), {"targets": y})[1]

    step = vmap(loss_of)
    for xys in zip(*data, strict=True):
        xy = torch.stack(xys)  # (N, B, T + 1)
        with attention_kernel(xy.device):
            losses = step(params, buffers, xy[..., :-1].contiguous(), xy[..., 1:].contiguous())
        opt.zero_grad(set_to_none=True)
        with attention_kernel(xy.device):
            losses.sum().backward()  # each seed's gradient is its own loss's
        # clip each seed's gradient by its own norm, as clip_grad_norm_ does per model
        norms = torch.stack([p.grad.flatten(1).pow(2).sum(1) for p in stacked]).sum(0).sqrt()
        scale = (cfg.grad_clip / (norms + 1e-6)).clamp(max=1.0)
        for p in stacked:
            p.grad.mul_(scale.view(-1, *([1] * (p.dim() - 1))))
        opt.step()
    return [float(v) for v in losses], params


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,3")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--shape", choices=tuple(SHAPES), default="tiny")
    a = ap.parse_args()
    dev = a.device
    if a.threads:
        torch.set_num_threads(a.threads)
    loads = _bench.LoadLog()
    text = load(locate())
    cfg = TrainConfig().with_options(**SHAPES[a.shape])
    assert cfg.model.vocab_size == text.vocab_size
    train = text.train
    ns = [int(n) for n in a.seeds.split(",")]
    data = {
        n: [[b.to(dev) for b in batches(train, cfg, cfg.seed + i, a.steps)] for i in range(n)]
        for n in ns
    }
    times: dict[str, list[float]] = {}
    for n in ns:  # warm-up, untimed: first calls (vmap's tracing, allocator) out of the figures
        separate(cfg, models(cfg, n, dev), [seq[:2] for seq in data[n]])
        together(cfg, models(cfg, n, dev), [seq[:2] for seq in data[n]])
    for rep in range(a.reps):
        for n in ns:
            for arm in ("separate", "vmap"):
                nets = models(cfg, n, dev)
                sync(dev)
                loads.before(f"{arm} N={n} rep {rep}")
                t0 = time.perf_counter()
                if arm == "separate":
                    separate(cfg, nets, data[n])
                else:
                    together(cfg, nets, data[n])
                sync(dev)
                times.setdefault(f"{arm} N={n}", []).append(time.perf_counter() - t0)
    # the same runs? the final losses and weights of each seed, both ways
    n = max(ns)
    one = models(cfg, n, dev)
    sep_losses = separate(cfg, one, data[n])
    vm_losses, stacks = together(cfg, models(cfg, n, dev), data[n])
    weight_diff = max(
        (stacks[name][i] - dict(one[i].named_parameters())[name]).abs().max().item()
        for name in stacks
        for i in range(n)
    )
    rows = []
    for n in ns:
        sep, vm = _bench.median(times[f"separate N={n}"]), _bench.median(times[f"vmap N={n}"])
        per = a.steps * n
        rows.append([n, f"{sep * 1e3 / per:.2f}", f"{vm * 1e3 / per:.2f}", f"{sep / vm:.2f}"])
    table = _bench.markdown_table(
        ["seeds N", "separate (ms per seed-step)", "vmap (ms per seed-step)", "separate / vmap"],
        rows,
    )
    summary = loads.summary()
    same = (
        f"N = {n}, {a.steps} steps: final losses separate {[round(v, 6) for v in sep_losses]}, "
        f"vmap {[round(v, 6) for v in vm_losses]}; largest weight difference {weight_diff:.3g}"
    )
    md = (
        f"{_bench.describe(_bench.machine(torch.device(dev), loads))}\n\n"
        f"shape: {a.shape} ({SHAPES[a.shape]} over the defaults), {a.steps} steps per run, "
        f"{a.reps} interleaved repetitions, medians; "
        f"torch threads {torch.get_num_threads()}\n\n{table}\n\n{same}\n\n"
        f"load: {_bench.describe_load(summary)}\n"
    )
    print(md)
    _bench.write_results(
        a.out,
        "seeds_vmap",
        {"args": vars(a) | {"out": str(a.out)}, "times_s": times, "same": same, "load": summary},
        md,
    )


if __name__ == "__main__":
    main()
