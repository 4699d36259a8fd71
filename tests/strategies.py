"""Hypothesis strategies for attention problems: sizes, then tensors drawn from a seed."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st


@dataclass(frozen=True)
class Problem:
    """A random attention problem: X ``(B, n, d_model)`` and per-head weights."""

    X: torch.Tensor
    W_Q: torch.Tensor  # (h, d_model, d_k)
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor  # (h*d_k, d_model)

    @property
    def h(self) -> int:
        return self.W_Q.shape[0]


@st.composite
def problems(draw, *, max_n: int = 9, max_batch: int = 3, dtype=torch.float64) -> Problem:
    """Sizes (n, h, d_k, B) with d_model = h * d_k, values from a drawn seed."""
    h = draw(st.integers(1, 4))
    d_k = draw(st.integers(1, 4))
    d_model = h * d_k
    n = draw(st.integers(1, max_n))
    B = draw(st.integers(1, max_batch))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=dtype)

    scale = d_model**-0.5
    return Problem(
        X=r(B, n, d_model),
        W_Q=r(h, d_model, d_k) * scale,
        W_K=r(h, d_model, d_k) * scale,
        W_V=r(h, d_model, d_k) * scale,
        W_O=r(h * d_k, d_model) * scale,
    )
