"""A training checkpoint: one dataclass, written atomically; the one place its keys live.

On disk it is a ``torch.save`` dict with the keys ``model`` (state_dict), ``config`` (the flat
`attention_ref.lm.config.TrainConfig`), ``chars`` (the vocabulary), ``step``,
``best_val_loss`` and, for a checkpoint that can resume training, ``optimizer``, ``history``,
``batch_rng`` and ``torch_rng``, and ``device_batch_rng`` where the batches were drawn on a CUDA
device (the state of that generator; older checkpoints have none). A run's ``model/model.pt``
is the `Checkpoint.slim` copy of its best checkpoint: no optimizer, no RNG states.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import Vocab
from attention_ref.lm.model import CharGPT

#: the keys of a slim checkpoint (``model/model.pt``), in the order they are written
SLIM_KEYS = ("model", "config", "chars", "step", "best_val_loss")


@dataclass
class Checkpoint:
    """What `attention_ref.lm.train.train` saves and resumes from."""

    config: TrainConfig
    vocab: Vocab
    model: dict[str, Tensor]
    step: int
    best_val_loss: float
    optimizer: dict[str, Any] | None = None
    history: list[dict[str, float]] = field(default_factory=list)
    batch_rng: Tensor | None = None
    torch_rng: Tensor | None = None
    #: the CUDA generator of the batches (`attention_ref.lm.train.TrainStep`); None on the CPU
    device_batch_rng: Tensor | None = None

    @property
    def resumable(self) -> bool:
        """True when it holds the optimizer and both RNG states (a ``last.pt``)."""
        return None not in (self.optimizer, self.batch_rng, self.torch_rng)

    def slim(self) -> Checkpoint:
        """The model alone (what a run logs as ``model/model.pt``)."""
        return replace(
            self,
            optimizer=None,
            history=[],
            batch_rng=None,
            torch_rng=None,
            device_batch_rng=None,
        )

    def to_state(self) -> dict[str, Any]:
        """The dict written to disk."""
        state: dict[str, Any] = {
            "model": self.model,
            "config": self.config.to_flat(),
            "chars": list(self.vocab.chars),
            "step": self.step,
            "best_val_loss": self.best_val_loss,
        }
        if self.resumable:
            state |= {
                "optimizer": self.optimizer,
                "history": self.history,
                "batch_rng": self.batch_rng,
                "torch_rng": self.torch_rng,
            }
            if self.device_batch_rng is not None:
                state["device_batch_rng"] = self.device_batch_rng
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Checkpoint:
        """Inverse of `to_state`."""
        return cls(
            config=TrainConfig.from_flat(state["config"]),
            vocab=Vocab(tuple(state["chars"])),
            model=state["model"],
            step=int(state["step"]),
            best_val_loss=float(state["best_val_loss"]),
            optimizer=state.get("optimizer"),
            history=list(state.get("history", [])),
            batch_rng=state.get("batch_rng"),
            torch_rng=state.get("torch_rng"),
            device_batch_rng=state.get("device_batch_rng"),
        )

    def save(self, path: Path) -> Path:
        """Write to a temporary file beside ``path``, then rename: never a half file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        os.close(fd)
        try:
            torch.save(self.to_state(), tmp)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
        return path

    @classmethod
    def load(cls, path: Path, device: str | torch.device = "cpu") -> Checkpoint:
        """Read a checkpoint written by `save` (or by attnref before this class existed)."""
        return cls.from_state(torch.load(path, map_location=device, weights_only=False))

    def build_model(self) -> CharGPT:
        """The model with these weights, in eval mode, on the CPU."""
        model = CharGPT(replace(self.config.model, vocab_size=len(self.vocab)))
        model.load_state_dict(self.model)
        model.eval()
        return model
