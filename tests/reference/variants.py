"""Hypothesis strategies for the attention variants: GQA shapes, masks, tiles (float64)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

DT = torch.float64
TOL = 1e-10


@dataclass(frozen=True)
class GQAProblem:
    """X ``(*batch, n, d_model)``, ``h`` query heads and ``g`` K/V heads, ``W_O`` or ``None``."""

    X: torch.Tensor
    W_Q: torch.Tensor  # (h, d_model, d_k)
    W_K: torch.Tensor  # (g, d_model, d_k)
    W_V: torch.Tensor  # (g, d_model, d_v)
    W_O: torch.Tensor | None  # (h*d_v, d_out)
    seed: int

    @property
    def h(self) -> int:
        return self.W_Q.shape[0]

    @property
    def g(self) -> int:
        return self.W_K.shape[0]

    @property
    def n(self) -> int:
        return self.X.shape[-2]

    def randn(self, *shape: int) -> torch.Tensor:
        """More numbers from this problem's seed (an upstream gradient, say)."""
        gen = torch.Generator().manual_seed(self.seed + 1)
        return torch.randn(*shape, generator=gen, dtype=DT)


@st.composite
def gqa_problems(
    draw, *, max_n: int = 8, g_equals_h: bool | None = None, even_d_k: bool = False
) -> GQAProblem:
    """``g`` divides ``h``; ``d_k`` even when RoPE will rotate it."""
    g = draw(st.integers(1, 3))
    r = 1 if g_equals_h else draw(st.integers(1, 3))
    h = g * r
    d_k = 2 * draw(st.integers(1, 3)) if even_d_k else draw(st.integers(1, 4))
    d_v, d_model, d_out = draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(1, 5))
    n = draw(st.integers(1, max_n))
    batch = draw(st.sampled_from([(), (2,)]))
    seed = draw(st.integers(0, 2**31 - 2))
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=DT)

    with_W_O = draw(st.booleans())
    return GQAProblem(
        X=randn(*batch, n, d_model),
        W_Q=randn(h, d_model, d_k),
        W_K=randn(g, d_model, d_k),
        W_V=randn(g, d_model, d_v),
        W_O=randn(h * d_v, d_out) if with_W_O else None,
        seed=seed,
    )
