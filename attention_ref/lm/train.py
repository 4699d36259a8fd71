r"""Training the character GPT (Q02) and its ablation (Q03): a plain loop, a small callback surface.

Learning rate: linear warm-up for $t_w$ steps, then cosine decay to ``min_lr`` at step $T$:

$$
\eta_t = \eta_{max} \frac{t+1}{t_w}\ (t < t_w),\qquad
\eta_t = \eta_{min} + \tfrac12(\eta_{max} - \eta_{min})
         \big(1 + \cos(\pi \tfrac{t - t_w}{T - t_w})\big)
$$

* AdamW (weight decay on matrices only), the fused kernel where torch has one for the device
  (one kernel for all parameters instead of a Python loop over them); its learning rate is a
  0-dim tensor the loop writes before each step (`TrainStep`), so a captured step reads it;
* precision: ``fp32``, or the forward pass under bf16 autocast (``bf16``; weights, gradients
  and the optimizer stay fp32, the loss is computed in fp32); ``auto`` takes bf16 where the
  device computes it natively (`resolve_precision`) and fp32 elsewhere;
* gradient clipping at ``grad_clip`` (global L2 norm), on the device: no host sync;
* one step is a `TrainStep`: its batch is drawn into buffers that stay put, its outputs (loss,
  gradient norm) are tensors read only when the loop asks. On the CPU it draws from the same
  generator as before and gives the same numbers to the last bit (tests/lm/test_graph_step.py).
  On CUDA the batch is drawn on the device from the training split kept there, and the whole
  step (draw, forward, backward, clip, fused capturable AdamW) is captured in one CUDA graph
  after a few warm-up steps that are then undone (`capture_step`), and replayed: the loop
  then reads the loss back every ``metrics_every`` steps (and at evaluations, the last step and
  an interrupt), not after every step. Where capture is impossible (CPU, MPS, ``--cuda-graph
  off``, an error while capturing) the same step runs eagerly, and `StartInfo.graph_note`
  says why in one line where it was asked for or tried;
* evaluation every ``eval_interval`` steps on *fixed* validation batches (drawn once from
  ``seed``), so every evaluation and every arm of the ablation sees the same text; the sample
  that goes with it is generated with the KV cache, on one thread (`attention_ref.lm.sampling`).
  With the step graphed, the evaluation's forward passes are one CUDA graph too (`FixedEval`:
  the same means, read back in one wait) and so is the step of the sample's characters
  (`attention_ref.lm.sampling.WindowSampler`: the same draws, read back once);
* the best checkpoint (lowest validation loss) and the last one are written atomically;
* one seed drives torch's global RNG (init, dropout) and the batch generator; the checkpoint
  holds both RNG states, so a resumed run continues exactly as an uninterrupted one.


Nothing here knows about MLflow: `attention_ref.experiments.tracking` plugs in through
`Callbacks`.

This module is the loop (`train`), its schedule (`lr_at`) and its seeding; the rest lives
beside it and every name is importable from here as before: `attention_ref.lm.precision`
(`resolve_device`, `resolve_precision`, `autocast`), `attention_ref.lm.step` (`make_optimizer`,
`training_step`, `TrainStep`, `capture_step`), `attention_ref.lm.evaluation` (`estimate_loss`,
`FixedEval`) and `attention_ref.lm.callbacks` (`Callbacks`, `StartInfo`, `StepMetrics`,
`EvalMetrics`, `TrainResult`, `NonFiniteLossError`).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from attention_ref.lm.callbacks import (
    Callbacks,
    EvalMetrics,
    NonFiniteLossError,
    StartInfo,
    StepMetrics,
    TrainResult,
)
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import CharData, get_batch
from attention_ref.lm.evaluation import FixedEval
from attention_ref.lm.evaluation import estimate_loss as estimate_loss
from attention_ref.lm.model import CharGPT, count_parameters
from attention_ref.lm.precision import CPU_BF16_FLAGS as CPU_BF16_FLAGS
from attention_ref.lm.precision import autocast as autocast
from attention_ref.lm.precision import cpu_flags as cpu_flags
from attention_ref.lm.precision import resolve_device, resolve_precision
from attention_ref.lm.sampling import WindowSampler, generate
from attention_ref.lm.step import GRAPH_WARMUP_STEPS, TrainStep, capture_step, make_optimizer
from attention_ref.lm.step import training_step as training_step


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


def _graph_for(
    step: TrainStep, cfg: TrainConfig, device: torch.device, precision: str, remaining: int
) -> tuple[Any, str]:
    """The captured step (or ``None``: the step runs eagerly) and `StartInfo.graph_note`."""
    if cfg.cuda_graph == "off":
        return None, ""
    if device.type != "cuda":
        said = cfg.cuda_graph == "on"
        return None, f"CUDA graph off: {device.type} is not a CUDA device" if said else ""
    if remaining <= GRAPH_WARMUP_STEPS:
        return None, f"CUDA graph off: {remaining} step(s) left, fewer than a capture needs"
    try:
        graph = capture_step(step)
    except Exception as e:  # any refusal of the capture: the eager step is the same step
        first = (str(e).strip().splitlines() or [""])[0][:200]
        return (
            None,
            f"CUDA graph off, the step runs eagerly: capture failed ({type(e).__name__}: {first})",
        )
    return graph, (
        f"CUDA graph on: the whole step replayed as one graph ({precision}; captured after "
        f"{GRAPH_WARMUP_STEPS} warm-up steps, undone)"
    )


def _graphs_for_eval(
    model: CharGPT, cfg: TrainConfig, splits: list[list[tuple[Tensor, Tensor]]], precision: str
) -> tuple[FixedEval, WindowSampler | None, str]:
    """With the step graphed: the evaluation (`FixedEval`) and the sample (`WindowSampler`)
    as CUDA graphs too, and the words `StartInfo.graph_note` adds; eager where a capture
    fails (`estimate_loss`, `generate`: the numbers of every run before these graphs)."""
    try:
        evaluate = FixedEval(model, splits, precision, graph=True)
        sampler = None
        if cfg.sample_tokens:
            sampler = WindowSampler(model, cfg.sample_tokens, graph=True)
    except Exception as e:  # any refusal of a capture: the eager evaluation is the same one
        first = (str(e).strip().splitlines() or [""])[0][:200]
        return (
            FixedEval(model, splits, precision),
            None,
            f"; evaluation and sample eager: capture failed ({type(e).__name__}: {first})",
        )
    said = "evaluation and sample" if sampler is not None else "evaluation"
    return evaluate, sampler, f"; the {said} one graph each"


def train(
    cfg: TrainConfig,
    data: CharData,
    out_dir: Path,
    *,
    callbacks: Callbacks | None = None,
    resume_from: Checkpoint | None = None,
    should_stop: Callable[[], bool] | None = None,
    metrics_every: int = 1,
) -> TrainResult:
    """Train a `CharGPT` on ``data`` with ``cfg``; checkpoints go to ``out_dir``.

    ``resume_from`` continues a resumable `Checkpoint` written by this function (model,
    optimizer, step, both RNG states); the steps after it are the same as in an uninterrupted
    run. ``cfg`` is the config to run with (the checkpoint's, with ``device`` and ``threads``
    possibly changed).
    ``should_stop()`` is polled after every step (Ctrl-C / SIGTERM handlers set it): the loop
    then writes ``last.pt`` and returns with ``interrupted=True``.

    ``metrics_every``: with the step replayed as a CUDA graph, the loss and gradient norm are
    read back (the host waits for the device), checked for NaN and handed to ``on_step`` only
    every this many steps, at each evaluation, at the last step and when stopping (the CLI
    passes its ``--log-every``); the tokens/s of `StepMetrics` is then the rate since the
    previous read. The eager step (CPU, MPS, no graph) reads them after every step, as always.
    """
    cb = callbacks or Callbacks()
    cfg.check_fits(data.smallest_split)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    if metrics_every < 1:
        raise ValueError(f"metrics_every must be a positive integer, got {metrics_every}")
    batch_gen = seed_everything(cfg.seed)
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size)).to(device)
    optimizer = make_optimizer(model, cfg)
    step_fn = TrainStep(model, optimizer, data.train, cfg, precision, batch_gen)
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
            group["capturable"] = optimizer.defaults["capturable"]
        step_fn.use_lr_tensor()  # the saved groups carry a number (or another tensor)
        if optimizer.defaults["fused"]:  # the fused kernel keeps its step count on the device
            for p, state in optimizer.state.items():
                if "step" in state:
                    state["step"] = state["step"].to(p.device, torch.float32)
        step, best = resume_from.step, resume_from.best_val_loss
        history = list(resume_from.history)
        batch_gen.set_state(resume_from.batch_rng)
        torch.set_rng_state(resume_from.torch_rng)
        if step_fn.device_gen is not None and resume_from.device_batch_rng is not None:
            step_fn.device_gen.set_state(resume_from.device_batch_rng)
        elif step_fn.device_gen is not None:  # a run moved onto CUDA: draws of its own
            step_fn.device_gen.manual_seed(cfg.seed + step)
    graph, graph_note = _graph_for(step_fn, cfg, device, precision, remaining=cfg.max_steps - step)
    splits = [val_batches, train_eval_batches]
    evaluate, sampler = FixedEval(model, splits, precision), None  # type: ignore[arg-type]
    if graph is not None:  # the step replayed: evaluation and sample graphed too
        evaluate, sampler, more = _graphs_for_eval(model, cfg, splits, precision)  # type: ignore[arg-type]
        graph_note += more
    n_params = count_parameters(model)
    if cb.on_start:
        cb.on_start(
            StartInfo(
                n_params,
                str(device),
                step,
                cfg.max_steps,
                str(cfg.attention),
                precision,
                graph=graph is not None,
                graph_note=graph_note,
            )
        )

    def checkpoint(name: str) -> Path:
        path = out_dir / name
        Checkpoint(
            config=cfg,
            vocab=data.vocab,
            model=model.state_dict(),
            step=step,
            best_val_loss=best,
            optimizer=optimizer.state_dict(),
            history=history,
            batch_rng=batch_gen.get_state(),
            torch_rng=torch.get_rng_state(),
            device_batch_rng=None if step_fn.device_gen is None else step_fn.device_gen.get_state(),
        ).save(path)
        if cb.on_checkpoint:
            cb.on_checkpoint(path, name)
        return path

    sample_gen = torch.Generator()
    tokens_seen, t_start = 0, time.perf_counter()
    t_window, tok_window = t_start, 0
    train_loss = val_loss = math.nan
    interrupted = False
    tokens_per_step = cfg.batch_size * cfg.model.block_size

    def report(step: int, lr: float, loss: Tensor, norm: Tensor) -> None:
        """Read the step's loss and gradient norm (one wait), check them, call ``on_step``."""
        nonlocal t_window, tok_window
        loss_value, grad_norm = torch.stack([loss, norm.to(loss.dtype)]).tolist()
        if not math.isfinite(loss_value):  # no checkpoint holds the step it spoiled
            raise NonFiniteLossError(step, loss_value)  # the step whose loss it is
        now = time.perf_counter()
        metrics = StepMetrics(loss_value, lr, grad_norm, tok_window / max(now - t_window, 1e-9))
        if cb.on_step:
            cb.on_step(step, metrics)
        if graph is not None or step % 50 == 0:
            t_window, tok_window = now, 0

    model.train()
    while step < cfg.max_steps:
        lr = lr_at(step, cfg)
        step_fn.set_lr(lr)
        if graph is not None:
            graph.replay()
            loss, norm = step_fn.loss, step_fn.grad_norm
        else:
            loss, norm = step_fn()
        assert loss is not None and norm is not None
        step += 1
        tokens_seen += tokens_per_step
        tok_window += tokens_per_step
        evaluating = step % cfg.eval_interval == 0 or step == cfg.max_steps
        read = graph is None or step % metrics_every == 0 or evaluating
        if read:
            report(step, lr, loss, norm)
        if evaluating:
            val_loss, train_loss = evaluate()
            record = {"step": float(step), "train_loss": train_loss, "val_loss": val_loss}
            history.append(record)
            sample_gen.manual_seed(cfg.seed + step)
            start = torch.tensor([data.vocab.encode("\n")], device=device)
            if sampler is not None:
                out = sampler(start, cfg.sample_tokens, sample_gen)
            else:
                out = generate(model, start, cfg.sample_tokens, generator=sample_gen)
            text = data.vocab.decode(out[0, 1:].tolist())
            if val_loss < best:
                best = val_loss
                checkpoint("best.pt")
            if cb.on_eval:
                cb.on_eval(step, EvalMetrics(val_loss, train_loss, best), text)
        if should_stop is not None and should_stop() and step < cfg.max_steps:
            if not read:  # a graphed step not read yet: checked before its checkpoint
                report(step, lr, loss, norm)
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
