"""The one tiny training configuration of the tests: it still learns in 120 steps on 2 cores."""

from __future__ import annotations

from typing import Any

from attention_ref.lm.config import TrainConfig

TINY = TrainConfig().with_options(
    n_embd=32,
    n_layer=1,
    n_head=2,
    block_size=32,
    batch_size=16,
    max_steps=120,
    eval_interval=60,
    eval_batches=4,
    sample_tokens=40,
    warmup_steps=10,
    lr=1e-2,
    min_lr=1e-3,
    seed=7,
    device="cpu",
)

#: ``TINY`` as command-line options, less ``--max-steps`` and ``--eval-interval`` (each CLI test
#: sets its own): every option whose value differs from the default
TINY_ARGS: list[str] = [
    arg
    for (key, value), default in zip(
        TINY.to_flat().items(), TrainConfig().to_flat().values(), strict=True
    )
    if value != default and key not in ("max_steps", "eval_interval")
    for arg in (f"--{key.replace('_', '-')}", str(value))
]


def tiny(**change: Any) -> TrainConfig:
    """``TINY`` with some options changed (by their flat names)."""
    return TINY.with_options(**change)
