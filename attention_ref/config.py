"""What defines a training run: `TrainConfig` and its validation (no torch import).

The CLI builds its ``--options`` from these fields (and `CONFIG_HELP`), MLflow logs them as
params, and checkpoints carry them as a dict, so one definition serves all three.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attention_ref.model import ModelConfig

ATTENTION_MODES: tuple[str, ...] = ("multihead", "none", "uniform")
DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a run. Defaults: the homework's Q02 (128, 2 layers, 2 heads)."""

    n_embd: int = 128
    n_layer: int = 2
    n_head: int = 2
    block_size: int = 128
    dropout: float = 0.0
    attention: str = "multihead"
    batch_size: int = 32
    max_steps: int = 2600
    lr: float = 3e-3
    min_lr: float = 3e-4
    warmup_steps: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_interval: int = 250
    eval_batches: int = 20
    sample_tokens: int = 200
    seed: int = 1337
    device: str = "auto"
    threads: int = 0  # torch intra-op threads; 0 = torch's default

    def validate(self, data_tokens: int | None = None) -> None:
        """Raise ``ValueError`` with one line for the first option that cannot work."""
        positive = ("n_embd", "n_layer", "n_head", "block_size", "batch_size", "max_steps",
                    "eval_interval", "eval_batches")  # fmt: skip
        for name in positive:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(
                    f"--{name.replace('_', '-')} must be a positive integer, got {v!r}"
                )
        for name in ("warmup_steps", "sample_tokens", "threads"):
            v = getattr(self, name)
            if v < 0:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {v}")
        if self.n_embd % self.n_head:
            raise ValueError(
                f"--n-embd {self.n_embd} is not divisible by --n-head {self.n_head}: "
                f"each head needs d_k = n_embd / n_head columns"
            )
        if self.attention not in ATTENTION_MODES:
            raise ValueError(
                f"--attention must be one of {', '.join(ATTENTION_MODES)}, got {self.attention!r}"
            )
        if not 0 <= self.dropout < 1:
            raise ValueError(f"--dropout must be in [0, 1), got {self.dropout}")
        if not (self.lr > 0 and 0 <= self.min_lr <= self.lr):
            raise ValueError(
                f"need 0 < --lr and 0 <= --min-lr <= --lr, got {self.lr} and {self.min_lr}"
            )
        if self.grad_clip <= 0 or self.weight_decay < 0:
            raise ValueError("--grad-clip must be > 0 and --weight-decay >= 0")
        if self.device not in DEVICES:
            raise ValueError(f"unknown device {self.device!r}; choose one of: {', '.join(DEVICES)}")
        if data_tokens is not None and self.block_size >= data_tokens:
            raise ValueError(
                f"--block-size {self.block_size} is larger than the data split "
                f"({data_tokens} tokens)"
            )

    def model_config(self, vocab_size: int) -> ModelConfig:
        """The model part of the configuration."""
        from attention_ref.model import ModelConfig

        return ModelConfig(
            vocab_size=vocab_size, block_size=self.block_size, n_embd=self.n_embd,
            n_layer=self.n_layer, n_head=self.n_head, dropout=self.dropout,
            attention=self.attention,  # type: ignore[arg-type]
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for MLflow params and the config JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        """Inverse of `to_dict`, ignoring unknown keys."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


#: one line per `TrainConfig` field: the CLI's option help and the book's table
CONFIG_HELP: dict[str, str] = {
    "n_embd": "Embedding width d_model (Q02: 128).",
    "n_layer": "Number of transformer blocks (Q02: 2).",
    "n_head": "Attention heads per block; d_k = n_embd / n_head (Q02: 2).",
    "block_size": "Context length T in characters.",
    "dropout": "Dropout on attention weights, residual branches and embeddings.",
    "attention": "multihead (Q02), none (Q03: no attention sub-layer) or uniform (causal mean).",
    "batch_size": "Sequences per step.",
    "max_steps": "Optimizer steps; the cosine schedule ends here.",
    "lr": "Peak learning rate (AdamW) after warm-up.",
    "min_lr": "Learning rate at the end of the cosine decay.",
    "warmup_steps": "Linear warm-up steps.",
    "weight_decay": "AdamW weight decay on matrices (not on biases, LayerNorm gains).",
    "grad_clip": "Clip the global gradient L2 norm to this value.",
    "eval_interval": "Evaluate (and sample) every this many steps.",
    "eval_batches": "Fixed batches per evaluation, for each split.",
    "sample_tokens": "Characters sampled at each evaluation.",
    "seed": "Seed of initialisation, batches, dropout and samples.",
    "device": "auto (cuda, then mps, then cpu), cpu, cuda or mps.",
    "threads": "torch CPU threads (0: torch's default).",
}
