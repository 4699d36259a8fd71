"""One optimizer step, graph-ready: the optimizer, the step, and its capture in a CUDA graph.

`make_optimizer` builds the fused AdamW (its learning rate a 0-dim tensor), `training_step`
takes one step on a batch, `TrainStep` holds a step whose batch, rate and outputs stay on the
device, and `capture_step` captures the whole of it (draw, forward, backward, clip, AdamW) in
one CUDA graph. The loop that runs the steps is `attention_ref.lm.train.train`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import get_batch
from attention_ref.lm.model import CharGPT
from attention_ref.lm.precision import autocast


def make_optimizer(
    model: torch.nn.Module, cfg: TrainConfig, lr: float | Tensor | None = None
) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only; fused on CPU and CUDA (same update rule),
    and capturable on CUDA (its step count on the device, so a CUDA graph can hold the step).

    ``lr``: the learning rate, ``cfg.lr`` by default; a 0-dim tensor (`TrainStep.lr`) is read
    by the fused kernel at each step, so writing it changes the rate of a captured step too.
    """
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    device = next(model.parameters()).device
    fused = device.type in ("cpu", "cuda")
    return torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": cfg.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=cfg.lr if lr is None else lr,
        betas=(0.9, 0.99),
        fused=fused or None,
        capturable=device.type == "cuda",
    )


def training_step(
    model: CharGPT,
    optimizer: torch.optim.Optimizer,
    x: Tensor,
    y: Tensor,
    *,
    grad_clip: float,
    precision: str = "fp32",
    autocast_cache: bool = True,
) -> tuple[Tensor, Tensor]:
    """One optimizer step on ``(x, y)``: the loss (before the step) and the gradient norm
    (before clipping), as tensors (reading them is the caller's choice: on a GPU it waits).

    The step is taken whatever the loss: `train` checks it afterwards (one wait instead of two
    on a GPU) and stops before a checkpoint could hold a spoiled step. Nothing here waits for
    the device: the clipping scales the gradients by a factor computed on the device (torch's
    foreach kernels on CUDA; the CPU has none and keeps its per-tensor loop).
    """
    with autocast(x.device, precision, cache=autocast_cache):
        _, loss = model(x, y)
    assert loss is not None
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    foreach = True if x.device.type == "cuda" else None
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip, foreach=foreach)
    optimizer.step()
    return loss.detach(), grad_norm


class TrainStep:
    """One optimizer step whose inputs and outputs stay on the device: graph-ready.

    * the batch is drawn into the buffers ``x`` and ``y`` (``(B, T)``, allocated once): on the
      CPU (and MPS) with `get_batch` from ``batch_gen``, the generator of every run before
      this class, so the numbers are today's to the last bit; on CUDA from ``device_gen``, a
      CUDA generator seeded with ``cfg.seed``, as windows of the training split kept on the
      device (no host work, nothing copied per step);
    * the learning rate is ``lr``, a 0-dim tensor every group of the optimizer reads (float64
      on the CPU: the fused kernel then sees the very double of `lr_at`; float32 on CUDA, what
      its fused kernel reads); `set_lr` writes it (on MPS, whose AdamW is not fused, the groups
      get the number, as before);
    * calling the step returns ``(loss, grad_norm)`` and keeps them as ``loss`` and
      ``grad_norm``: a captured step (`capture_step`) writes the same tensors at each replay.
    """

    def __init__(
        self,
        model: CharGPT,
        optimizer: torch.optim.Optimizer,
        train_split: Tensor,
        cfg: TrainConfig,
        precision: str,
        batch_gen: torch.Generator,
    ) -> None:
        device = next(model.parameters()).device
        self.model, self.optimizer, self.device = model, optimizer, device
        self.precision, self.grad_clip = precision, cfg.grad_clip
        self.batch_size, self.block_size = cfg.batch_size, cfg.model.block_size
        self.on_device = device.type == "cuda"  # the batch drawn on the device
        self.batch_gen = batch_gen
        self.device_gen: torch.Generator | None = None
        self.split = train_split
        if self.on_device:
            self.split = train_split.to(device)
            self.device_gen = torch.Generator(device=device).manual_seed(cfg.seed)
            self.offsets = torch.arange(self.block_size + 1, device=device)  # (T + 1,)
        shape = (self.batch_size, self.block_size)
        self.x = torch.empty(shape, dtype=torch.long, device=device)
        self.y = torch.empty(shape, dtype=torch.long, device=device)
        lr_dtype = torch.float32 if device.type == "cuda" else torch.float64
        # MPS: no float64, and its (unfused) AdamW refuses a tensor rate; the groups keep a number
        self.lr_is_tensor = device.type in ("cpu", "cuda")
        self.lr = torch.tensor(
            cfg.lr, dtype=lr_dtype, device=device if self.lr_is_tensor else "cpu"
        )
        self.use_lr_tensor()
        self.loss: Tensor | None = None
        self.grad_norm: Tensor | None = None

    def use_lr_tensor(self) -> None:
        """Point every group of the optimizer at `lr` (again: loading a state replaces it)."""
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr if self.lr_is_tensor else float(self.lr)

    def set_lr(self, lr: float) -> None:
        """Write the rate of the next step (a kernel on the device, no wait)."""
        self.lr.fill_(lr)
        if not self.lr_is_tensor:
            for group in self.optimizer.param_groups:
                group["lr"] = lr

    def draw(self) -> None:
        """The next batch into ``x``, ``y``: random windows and their next characters."""
        if self.device_gen is None:
            x, y = get_batch(self.split, self.batch_size, self.block_size, self.batch_gen)
            self.x.copy_(x)
            self.y.copy_(y)
            return
        starts = torch.randint(
            len(self.split) - self.block_size,
            (self.batch_size,),
            generator=self.device_gen,
            device=self.device,
        )
        windows = self.split[starts[:, None] + self.offsets]  # (B, 1) + (T + 1,) -> (B, T + 1)
        self.x.copy_(windows[:, :-1])  # (B, T + 1) -> (B, T)
        self.y.copy_(windows[:, 1:])  # (B, T + 1) -> (B, T)

    def __call__(self) -> tuple[Tensor, Tensor]:
        """Draw a batch and take one optimizer step on it (`training_step`)."""
        self.draw()
        self.loss, self.grad_norm = training_step(
            self.model,
            self.optimizer,
            self.x,
            self.y,
            grad_clip=self.grad_clip,
            precision=self.precision,
            autocast_cache=not self.on_device,
        )
        return self.loss, self.grad_norm

    def state(self) -> dict[str, Any]:
        """A copy of everything a step changes: parameters, optimizer state, generators."""
        return {
            "params": [p.detach().clone() for p in self.model.parameters()],
            "optimizer": {
                p: {k: v.clone() if isinstance(v, Tensor) else v for k, v in s.items()}
                for p, s in self.optimizer.state.items()
            },
            "batch_gen": self.batch_gen.get_state(),
            "device_gen": None if self.device_gen is None else self.device_gen.get_state(),
            "cuda_rng": torch.cuda.get_rng_state(self.device) if self.on_device else None,
        }

    @torch.no_grad()
    def restore(self, saved: dict[str, Any]) -> None:
        """Put back a `state`, in place (a captured graph keeps reading the same tensors);
        optimizer state created since is zeroed, as AdamW creates it."""
        for p, old in zip(self.model.parameters(), saved["params"], strict=True):
            p.copy_(old)
        for p, s in self.optimizer.state.items():
            before = saved["optimizer"].get(p)
            for k, v in s.items():
                if isinstance(v, Tensor) and before is not None:
                    v.copy_(before[k])
                elif isinstance(v, Tensor):
                    v.zero_()
        self.batch_gen.set_state(saved["batch_gen"])
        if self.device_gen is not None:
            self.device_gen.set_state(saved["device_gen"])
        if saved["cuda_rng"] is not None:
            torch.cuda.set_rng_state(saved["cuda_rng"], self.device)


#: eager steps before the capture (cuBLAS handles, the optimizer's state and autograd's
#: buffers are allocated in them, outside the graph); `capture_step` undoes them
GRAPH_WARMUP_STEPS = 3


def capture_step(step: TrainStep, warmup_steps: int = GRAPH_WARMUP_STEPS) -> Any:
    """The whole of ``step`` (draw, forward, backward, clip, AdamW) captured in one
    ``torch.cuda.CUDAGraph``; ``graph.replay()`` then takes a step. Raises where it cannot
    (not CUDA, or an operation the capture refuses).

    Before the capture, ``warmup_steps`` real steps run on a side stream (PyTorch's recipe);
    afterwards the parameters, the optimizer's state and the generators are put back as they
    were (`TrainStep.restore`), so the first replay is the run's next step, the same one the
    eager loop would take.
    """
    if not step.on_device:
        raise ValueError(f"a CUDA graph needs a CUDA device, not {step.device.type}")
    saved = step.state()
    try:
        side = torch.cuda.Stream(step.device)
        side.wait_stream(torch.cuda.current_stream(step.device))
        with torch.cuda.stream(side):
            for _ in range(warmup_steps):
                step()
        torch.cuda.current_stream(step.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        graph.register_generator_state(step.device_gen)  # the batch draw; dropout's is default
        step.optimizer.zero_grad(set_to_none=True)  # the graph allocates the gradients
        with torch.cuda.graph(graph):
            step()
    finally:
        step.restore(saved)
    return graph
