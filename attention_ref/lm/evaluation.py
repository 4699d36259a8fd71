"""The evaluation: the mean loss on fixed batches, eager (`estimate_loss`) or one CUDA graph
(`FixedEval`); the training loop (`attention_ref.lm.train.train`) runs it every
``eval_interval`` steps.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from attention_ref.lm.model import CharGPT
from attention_ref.lm.precision import autocast


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
