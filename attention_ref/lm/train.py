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
from attention_ref.lm.sampling import WindowSampler, generate


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


def resolve_precision(
    name: str,
    device: torch.device,
    flags: frozenset[str] | None = None,
    cuda_bf16: bool | None = None,
) -> str:
    """``fp32`` or ``bf16``: ``auto`` takes bf16 on a CPU whose ``flags`` (default:
    `cpu_flags`) include one of `CPU_BF16_FLAGS`, and on a CUDA GPU that computes bf16
    (``cuda_bf16``, default ``torch.cuda.is_bf16_supported()``: Ampere and later); fp32
    elsewhere (MPS, older GPUs). With the step replayed as one CUDA graph (``attnref train``'s
    default on CUDA) the GPU is no longer bound by launching kernels, and bf16 is the faster
    arm there: 0.847 vs 1.126 ms a step at batch 32 on one H100, torch 2.11 (issue 33,
    benchmarks/results/gpu-h100/gpu_step.json); eager, where launching kernels sets the pace,
    bf16 measured 0.82x of fp32 in the same run (4.592 vs 3.744 ms). An explicit ``bf16`` is
    honoured everywhere (on CPUs without bf16 instructions it is emulated: slow).
    """
    if name not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {name!r}")
    if name != "auto":
        return name
    if device.type == "cpu":
        return "bf16" if CPU_BF16_FLAGS & (cpu_flags() if flags is None else flags) else "fp32"
    if device.type == "cuda":
        supported = torch.cuda.is_bf16_supported() if cuda_bf16 is None else cuda_bf16
        return "bf16" if supported else "fp32"
    return "fp32"


def autocast(
    device: torch.device, precision: str, *, cache: bool = True
) -> contextlib.AbstractContextManager[Any]:
    """The context of every forward pass: bf16 autocast for ``bf16``, nothing for ``fp32``.

    ``cache=False`` for a step that is captured in a CUDA graph (autocast's cache of cast
    weights must not outlive the capture); every weight is cast once per forward here, so
    the cache saves nothing and the numbers are the same either way.
    """
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16, cache_enabled=cache)
    return contextlib.nullcontext()


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
        lr=cfg.lr if lr is None else lr, betas=(0.9, 0.99), fused=fused or None,
        capturable=device.type == "cuda",
    )  # fmt: skip


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
            len(self.split) - self.block_size, (self.batch_size,),
            generator=self.device_gen, device=self.device,
        )  # fmt: skip
        windows = self.split[starts[:, None] + self.offsets]  # (B, 1) + (T + 1,) -> (B, T + 1)
        self.x.copy_(windows[:, :-1])  # (B, T + 1) -> (B, T)
        self.y.copy_(windows[:, 1:])  # (B, T + 1) -> (B, T)

    def __call__(self) -> tuple[Tensor, Tensor]:
        """Draw a batch and take one optimizer step on it (`training_step`)."""
        self.draw()
        self.loss, self.grad_norm = training_step(
            self.model, self.optimizer, self.x, self.y, grad_clip=self.grad_clip,
            precision=self.precision, autocast_cache=not self.on_device,
        )  # fmt: skip
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


class FixedEval:
    """The mean loss of each list of fixed batches (`estimate_loss` of each, in order).

    Eager (``graph=False``): `estimate_loss` itself, one list after the other. On CUDA
    (``graph=True``) the forward passes of every batch of every list are captured in one CUDA
    graph (eval mode, ``precision``, autocast without its cache as in a captured step: each
    weight is cast once per forward either way), replayed at each evaluation and read back in
    one wait: the same kernels on the same batches, so the same means (the CUDA tests of
    ``tests/lm/test_window_sampler.py`` compare them with `estimate_loss`). The graph reads the
    model's parameters where they are, so it follows the training, which updates them in place.
    """

    def __init__(
        self,
        model: CharGPT,
        splits: list[list[tuple[Tensor, Tensor]]],
        precision: str,
        *,
        graph: bool = False,
    ) -> None:
        self.model, self.splits, self.precision = model, splits, precision
        self.graph: Any = None
        self.means: Tensor | None = None
        if graph:
            self._capture()

    @torch.no_grad()
    def _means(self) -> Tensor:
        """Each list's mean loss, ``(len(splits),)``, as `estimate_loss` computes it."""
        means = []
        for batches in self.splits:
            losses = []
            for x, y in batches:
                with autocast(x.device, self.precision, cache=False):
                    losses.append(self.model(x, y)[1])
            means.append(torch.stack(losses).mean())  # type: ignore[arg-type]
        return torch.stack(means)

    def _capture(self) -> None:
        device = next(self.model.parameters()).device
        if device.type != "cuda":
            raise ValueError(f"a CUDA graph needs a CUDA device, not {device.type}")
        was_training = self.model.training
        self.model.eval()
        try:
            side = torch.cuda.Stream(device)
            side.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(side):
                self._means()  # warm-up (cuBLAS, autocast), outside the graph
            torch.cuda.current_stream(device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.means = self._means()
        finally:
            self.model.train(was_training)
        self.graph = graph

    def __call__(self) -> list[float]:
        """Each list's mean cross-entropy (nats), in the order of ``splits``."""
        if self.graph is None:
            return [estimate_loss(self.model, b, self.precision) for b in self.splits]
        self.graph.replay()
        assert self.means is not None
        return self.means.tolist()  # type: ignore[no-any-return]


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
    graph: bool = False  # the step runs as one captured CUDA graph
    #: one line on the graph where there is something to say (it runs, or why not where it was
    #: asked for or tried); empty where it was not (the CPU and MPS under ``auto``, ``off``)
    graph_note: str = ""


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
            StartInfo(n_params, str(device), step, cfg.max_steps, str(cfg.attention), precision,
                      graph=graph is not None, graph_note=graph_note)
        )  # fmt: skip

    def checkpoint(name: str) -> Path:
        path = out_dir / name
        Checkpoint(
            config=cfg, vocab=data.vocab, model=model.state_dict(), step=step, best_val_loss=best,
            optimizer=optimizer.state_dict(), history=history,
            batch_rng=batch_gen.get_state(), torch_rng=torch.get_rng_state(),
            device_batch_rng=None if step_fn.device_gen is None else step_fn.device_gen.get_state(),
        ).save(path)  # fmt: skip
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
