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


@dataclass(frozen=True)
class GeneralProblem:
    """Any shapes: d_model, d_k, d_v, d_out independent; optional biases; maybe no ``W_O``.

    ``X`` is ``(*batch, n, d_model)``; weights per head (``W_Q`` ``(h, d_model, d_k)``), biases
    per head (``b_Q`` ``(h, d_k)``) or ``None``; ``W_O`` ``(h*d_v, d_out)`` or ``None``
    (then ``b_O`` is ``None`` and the output is the concat).
    """

    X: torch.Tensor
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor
    W_O: torch.Tensor | None
    b_Q: torch.Tensor | None  # noqa: N815
    b_K: torch.Tensor | None  # noqa: N815
    b_V: torch.Tensor | None  # noqa: N815
    b_O: torch.Tensor | None  # noqa: N815
    causal: bool

    @property
    def h(self) -> int:
        return self.W_Q.shape[0]

    @property
    def biases(self) -> dict[str, torch.Tensor | None]:
        return {"b_Q": self.b_Q, "b_K": self.b_K, "b_V": self.b_V, "b_O": self.b_O}


@st.composite
def general_problems(
    draw, *, max_n: int = 6, dtype=torch.float64, batch: bool = True
) -> GeneralProblem:
    """Sizes drawn independently (d_out ≠ d_model, h·d_v ≠ d_model included), values from a seed."""
    h = draw(st.integers(1, 3))
    d_model, d_k, d_v = (draw(st.integers(1, 5)) for _ in range(3))
    n = draw(st.integers(1, max_n))
    lead = draw(st.sampled_from([(), (2,), (2, 2)])) if batch else ()
    with_W_O = draw(st.booleans())
    d_out = draw(st.integers(1, 5))
    bias = {k: draw(st.booleans()) for k in ("b_Q", "b_K", "b_V", "b_O")}
    causal = draw(st.booleans())
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=dtype)

    return GeneralProblem(
        X=r(*lead, n, d_model),
        W_Q=r(h, d_model, d_k),
        W_K=r(h, d_model, d_k),
        W_V=r(h, d_model, d_v),
        W_O=r(h * d_v, d_out) if with_W_O else None,
        b_Q=r(h, d_k) if bias["b_Q"] else None,
        b_K=r(h, d_k) if bias["b_K"] else None,
        b_V=r(h, d_v) if bias["b_V"] else None,
        b_O=r(d_out) if bias["b_O"] and with_W_O else None,
        causal=causal,
    )
