r"""Training the character GPT (Q02) and its ablation (Q03): a plain loop, a small callback surface.

Learning rate: linear warm-up for $t_w$ steps, then cosine decay to ``min_lr`` at step $T$:

$$
\eta_t = \eta_{max} \frac{t+1}{t_w}\ (t < t_w),\qquad
\eta_t = \eta_{min} + \tfrac12(\eta_{max} - \eta_{min})
         \big(1 + \cos(\pi \tfrac{t - t_w}{T - t_w})\big)
$$

* AdamW (weight decay on matrices only), the fused kernel where torch has one for the device
  (one kernel for all parameters instead of a Python loop over them);
* precision: ``fp32``, or the forward pass under bf16 autocast (``bf16``; weights, gradients
  and the optimizer stay fp32, the loss is computed in fp32); ``auto`` takes bf16 where the
  device computes it natively (`resolve_precision`) and fp32 elsewhere;
* gradient clipping at ``grad_clip`` (global L2 norm);
* evaluation every ``eval_interval`` steps on *fixed* validation batches (drawn once from
  ``seed``), so every evaluation and every arm of the ablation sees the same text; the sample
  that goes with it is generated with the KV cache, on one thread (`attention_ref.lm.sampling`);
* the best checkpoint (lowest validation loss) and the last one are written atomically;
* one seed drives torch's global RNG (init, dropout) and the batch generator; the checkpoint
  holds both RNG states, so a resumed run continues exactly as an uninterrupted one.

Nothing here knows about MLflow: `attention_ref.experiments.tracking` plugs in through
`Callbacks`.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import DEVICES, PRECISIONS, TrainConfig
from attention_ref.lm.data import CharData, get_batch
from attention_ref.lm.model import CharGPT, count_parameters
from attention_ref.lm.sampling import generate


def resolve_device(name: str) -> torch.device:
    """``auto`` picks cuda, then mps, then cpu; an explicit device must be available."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for but CUDA is not available here")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ValueError("--device mps was asked for but MPS is not available here")
    if name not in DEVICES:
        raise ValueError(f"unknown device {name!r}; choose one of: {', '.join(DEVICES)}")
    return torch.device(name)


#: the CPU flags of native bf16 arithmetic (AVX-512 BF16, AMX); without them bf16 is emulated
CPU_BF16_FLAGS: frozenset[str] = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (Linux ``/proc/cpuinfo``); empty where that file is missing."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def resolve_precision(name: str, device: torch.device, flags: frozenset[str] | None = None) -> str:
    """``fp32`` or ``bf16``: ``auto`` takes bf16 on a CPU whose ``flags`` (default:
    `cpu_flags`) include one of `CPU_BF16_FLAGS`; fp32 elsewhere, CUDA and MPS included: at the
    Q02 shape an H100 is bound by per-step overhead, and bf16 autocast measured 0.82× of fp32
    there (``benchmarks/throughput.py --device cuda``; benchmarks/RESULTS.md). An explicit
    ``bf16`` is honoured everywhere (on CPUs without bf16 instructions it is emulated: slow).
    """
    if name not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {name!r}")
    if name != "auto":
        return name
    if device.type == "cpu":
        return "bf16" if CPU_BF16_FLAGS & (cpu_flags() if flags is None else flags) else "fp32"
    return "fp32"


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager[Any]:
    """The context of every forward pass: bf16 autocast for ``bf16``, nothing for ``fp32``."""
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only; fused on CPU and CUDA (same update rule)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    device = next(model.parameters()).device
    fused = device.type in ("cpu", "cuda")
    return torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": cfg.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=cfg.lr, betas=(0.9, 0.99), fused=fused or None,
    )  # fmt: skip


def training_step(
    model: CharGPT,
    optimizer: torch.optim.Optimizer,
    x: Tensor,
    y: Tensor,
    *,
    grad_clip: float,
    precision: str = "fp32",
) -> tuple[Tensor, Tensor]:
    """One optimizer step on ``(x, y)``: the loss (before the step) and the gradient norm
    (before clipping), as tensors (reading them is the caller's choice: on a GPU it waits).

    The step is taken whatever the loss: `train` checks it afterwards (one wait instead of two
    on a GPU) and stops before a checkpoint could hold a spoiled step.
    """
    with autocast(x.device, precision):
        _, loss = model(x, y)
    assert loss is not None
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.detach(), grad_norm


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Warm-up then cosine decay (see the module docstring)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(1, cfg.max_steps - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / span)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python and torch; return the generator that draws training batches."""
    random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


@torch.no_grad()
def estimate_loss(
    model: CharGPT, batches: list[tuple[Tensor, Tensor]], precision: str = "fp32"
) -> float:
    """Mean cross-entropy (nats) over fixed batches, in eval mode, at ``precision``."""
    was_training = model.training
    model.eval()
    losses = []
    for x, y in batches:
        with autocast(x.device, precision):
            losses.append(model(x, y)[1])
    model.train(was_training)
    return float(torch.stack(losses).mean())  # type: ignore[arg-type]


class NonFiniteLossError(RuntimeError):
    """The training loss became NaN or infinite."""

    def __init__(self, step: int, value: float) -> None:
        super().__init__(f"the training loss became {value} at step {step}; the run stopped")
        self.step = step


@dataclass(frozen=True)
class StartInfo:
    """What the loop tells its callbacks before the first step."""

    n_params: int
    device: str
    start_step: int  # 0, or the step a resumed run continues from
    max_steps: int
    attention: str
    precision: str = "fp32"  # the resolved one: fp32 or bf16


@dataclass(frozen=True)
class StepMetrics:
    """Measured at every optimizer step (the field names are the metric names)."""

    train_loss: float
    lr: float
    grad_norm: float
    tokens_per_sec: float


@dataclass(frozen=True)
class EvalMetrics:
    """Measured at each evaluation, on the fixed batches (the field names are the metric names)."""

    val_loss: float
    train_eval_loss: float
    best_val_loss: float


@dataclass
class Callbacks:
    """Hooks the loop calls; every one is optional."""

    on_start: Callable[[StartInfo], None] | None = None
    on_step: Callable[[int, StepMetrics], None] | None = None
    on_eval: Callable[[int, EvalMetrics, str], None] | None = None
    on_checkpoint: Callable[[Path, str], None] | None = None

    @staticmethod
    def chain(*parts: Callbacks) -> Callbacks:
        """One `Callbacks` that calls each of ``parts`` in order (tracking, then output)."""

        def fan(name: str) -> Callable[..., None] | None:
            hooks = [getattr(p, name) for p in parts if getattr(p, name) is not None]
            if not hooks:
                return None

            def call(*args: Any) -> None:
                for hook in hooks:
                    hook(*args)

            return call

        return Callbacks(
            on_start=fan("on_start"), on_step=fan("on_step"),
            on_eval=fan("on_eval"), on_checkpoint=fan("on_checkpoint"),
        )  # fmt: skip


@dataclass
class TrainResult:
    """What a finished (or interrupted) run measured."""

    steps_done: int
    best_val_loss: float
    final_val_loss: float
    final_train_loss: float
    n_params: int
    tokens_per_sec: float
    wall_time_s: float
    interrupted: bool = False
    history: list[dict[str, float]] = field(default_factory=list)
    checkpoint: Path | None = None


def train(
    cfg: TrainConfig,
    data: CharData,
    out_dir: Path,
    *,
    callbacks: Callbacks | None = None,
    resume_from: Checkpoint | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainResult:
    """Train a `CharGPT` on ``data`` with ``cfg``; checkpoints go to ``out_dir``.

    ``resume_from`` continues a resumable `Checkpoint` written by this function (model,
    optimizer, step, both RNG states); the steps after it are the same as in an uninterrupted
    run. ``cfg`` is the config to run with (the checkpoint's, with ``device`` and ``threads``
    possibly changed).
    ``should_stop()`` is polled after every step (Ctrl-C / SIGTERM handlers set it): the loop
    then writes ``last.pt`` and returns with ``interrupted=True``.
    """
    cb = callbacks or Callbacks()
    cfg.check_fits(data.smallest_split)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    batch_gen = seed_everything(cfg.seed)
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size)).to(device)
    optimizer = make_optimizer(model, cfg)
    # fixed validation batches: the same text at every evaluation and in every arm
    eval_gen = torch.Generator().manual_seed(cfg.seed + 1)

    def fixed_batches(split: Tensor) -> list[tuple[Tensor, ...]]:
        batches = (
            get_batch(split, cfg.batch_size, cfg.model.block_size, eval_gen)
            for _ in range(cfg.eval_batches)
        )
        return [tuple(t.to(device) for t in b) for b in batches]

    val_batches = fixed_batches(data.val)
    train_eval_batches = fixed_batches(data.train)
    step, best = 0, math.inf
    history: list[dict[str, float]] = []
    if resume_from is not None:
        if not resume_from.resumable:
            raise ValueError("this checkpoint holds no optimizer or RNG state: it cannot resume")
        assert resume_from.batch_rng is not None and resume_from.torch_rng is not None
        model.load_state_dict(resume_from.model)
        optimizer.load_state_dict(resume_from.optimizer)  # type: ignore[arg-type]
        for group in optimizer.param_groups:  # the saved groups carry the old kernel choice
            group["fused"], group["foreach"] = optimizer.defaults["fused"], None
        if optimizer.defaults["fused"]:  # the fused kernel keeps its step count on the device
            for p, state in optimizer.state.items():
                if "step" in state:
                    state["step"] = state["step"].to(p.device, torch.float32)
        step, best = resume_from.step, resume_from.best_val_loss
        history = list(resume_from.history)
        batch_gen.set_state(resume_from.batch_rng)
        torch.set_rng_state(resume_from.torch_rng)
    n_params = count_parameters(model)
    if cb.on_start:
        cb.on_start(
            StartInfo(n_params, str(device), step, cfg.max_steps, str(cfg.attention), precision)
        )

    def checkpoint(name: str) -> Path:
        path = out_dir / name
        Checkpoint(
            config=cfg, vocab=data.vocab, model=model.state_dict(), step=step, best_val_loss=best,
            optimizer=optimizer.state_dict(), history=history,
            batch_rng=batch_gen.get_state(), torch_rng=torch.get_rng_state(),
        ).save(path)  # fmt: skip
        if cb.on_checkpoint:
            cb.on_checkpoint(path, name)
        return path

    sample_gen = torch.Generator()
    tokens_seen, t_start = 0, time.perf_counter()
    t_window, tok_window = t_start, 0
    train_loss = val_loss = math.nan
    interrupted = False
    model.train()
    while step < cfg.max_steps:
        lr = lr_at(step, cfg)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = get_batch(data.train, cfg.batch_size, cfg.model.block_size, batch_gen)
        x, y = x.to(device), y.to(device)
        loss, norm = training_step(
            model, optimizer, x, y, grad_clip=cfg.grad_clip, precision=precision
        )
        loss_value, grad_norm = torch.stack([loss, norm.to(loss.dtype)]).tolist()  # one wait
        if not math.isfinite(loss_value):  # no checkpoint holds the step it spoiled
            raise NonFiniteLossError(step + 1, loss_value)  # the step whose loss it is
        step += 1
        tokens_seen += x.numel()
        tok_window += x.numel()
        now = time.perf_counter()
        tps = tok_window / max(now - t_window, 1e-9)
        metrics = StepMetrics(loss_value, lr, grad_norm, tps)
        if cb.on_step:
            cb.on_step(step, metrics)
        if step % 50 == 0:
            t_window, tok_window = now, 0
        if step % cfg.eval_interval == 0 or step == cfg.max_steps:
            val_loss = estimate_loss(model, val_batches, precision)  # type: ignore[arg-type]
            train_loss = estimate_loss(model, train_eval_batches, precision)  # type: ignore[arg-type]
            record = {"step": float(step), "train_loss": train_loss, "val_loss": val_loss}
            history.append(record)
            sample_gen.manual_seed(cfg.seed + step)
            start = torch.tensor([data.vocab.encode("\n")], device=device)
            text = data.vocab.decode(
                generate(model, start, cfg.sample_tokens, generator=sample_gen)[0, 1:].tolist()
            )
            if val_loss < best:
                best = val_loss
                checkpoint("best.pt")
            if cb.on_eval:
                cb.on_eval(step, EvalMetrics(val_loss, train_loss, best), text)
        if should_stop is not None and should_stop() and step < cfg.max_steps:
            interrupted = True
            break
    last = checkpoint("last.pt")
    wall = time.perf_counter() - t_start
    return TrainResult(
        steps_done=step,
        best_val_loss=best,
        final_val_loss=val_loss,
        final_train_loss=train_loss,
        n_params=n_params,
        tokens_per_sec=tokens_seen / max(wall, 1e-9),
        wall_time_s=wall,
        interrupted=interrupted,
        history=history,
        checkpoint=last,
    )
