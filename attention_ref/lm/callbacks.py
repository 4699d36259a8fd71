"""What the training loop tells the rest: its callbacks, their payloads, its result, its error.

`attention_ref.lm.train.train` calls `Callbacks` with `StartInfo`, `StepMetrics` and
`EvalMetrics` (their field names are the metric names), returns a `TrainResult`, and raises
`NonFiniteLossError` when the loss is no longer a number. Plain data: no torch here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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
            on_start=fan("on_start"),
            on_step=fan("on_step"),
            on_eval=fan("on_eval"),
            on_checkpoint=fan("on_checkpoint"),
        )


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
