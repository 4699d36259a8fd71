r"""FlashAttention's online softmax: attention over tiles of keys, never the whole ``n × n``.

The softmax of a row needs its maximum and its sum, which seem to need the whole row of
scores. FlashAttention (Dao et al., 2022; the form below is FlashAttention-2's, Dao 2023)
reads the keys and values in tiles of ``b`` and keeps, per query row, three running numbers:
the maximum so far $m$, the sum so far $\ell = \sum e^{s - m}$, and the unnormalised output
$O = \sum e^{s - m} v$. Tile ``j`` (keys $K_j$, values $V_j$, mask $M_j$) updates them:

$$
S_j = \frac{Q K_j^\top}{\sqrt{d_k}} + M_j,\quad
m' = \max\big(m, \operatorname{rowmax}(S_j)\big),\quad
P_j = e^{S_j - m'},\quad \alpha = e^{m - m'}
$$

$$
\ell' = \alpha\, \ell + \operatorname{rowsum}(P_j),\qquad O' = \alpha\, O + P_j V_j
$$

starting from $m = -\infty$, $\ell = 0$, $O = 0$; after the last tile $H = O / \ell$, the
attention output, exactly (in exact arithmetic) the softmax's. $\alpha$ rescales what was
summed under an older, smaller maximum. A row that has seen only masked keys so far has
$m' = -\infty$; then $e^{-\infty - (-\infty)}$ would be NaN, so the subtraction uses 0
instead of $m'$ (`safe_max`): such a tile adds $P_j = 0$ and leaves the row empty, as it
should (FlashAttention's kernels do the same).

**Backward.** The forward keeps only $H$ and, per row, $L = m + \log \ell$ (the logsumexp),
not the ``n × n`` weights. The backward recomputes each tile's weights from them,
$P_j = e^{S_j - L}$ (equal to $A$'s columns of that tile), and with
$D = \operatorname{rowsum}(\partial H \odot H)$ (which equals
$\operatorname{rowsum}(\partial A \odot A)$ of the softmax backward):

$$
\partial V_j = P_j^\top \partial H,\quad \partial P_j = \partial H\, V_j^\top,\quad
\partial S_j = P_j \odot (\partial P_j - D),\quad
\partial Q \mathrel{+}= \frac{\partial S_j K_j}{\sqrt{d_k}},\quad
\partial K_j = \frac{\partial S_j^\top Q}{\sqrt{d_k}}
$$

Every function works on one head ``(n, d)`` and on any leading dimensions ``(..., n, d)``.

Book page: ``docs/online-softmax.md`` "FlashAttention's online softmax".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from attention_ref.reference.attention import scale, scores

__all__ = [
    "BackwardTile",
    "OnlineGradients",
    "OnlineSoftmaxTrace",
    "TileStep",
    "logsumexp_rows",
    "online_softmax_attention",
    "online_softmax_backward",
    "rescale_factor",
    "running_max",
    "running_output",
    "running_sum",
    "safe_max",
    "tile_bounds",
    "tile_probabilities",
    "tile_scores",
]


def tile_bounds(n_k: int, b: int) -> list[tuple[int, int]]:
    """The key ranges ``[start, stop)`` of tiles of ``b`` keys; the last may be shorter."""
    if isinstance(b, bool) or not isinstance(b, int) or b < 1:
        raise ValueError(f"the tile size must be a whole number of keys >= 1, got {b!r}")
    return [(s, min(s + b, n_k)) for s in range(0, n_k, b)]


# --8<-- [start:online_steps]
def tile_scores(Q: Tensor, K_j: Tensor, M_j: Tensor | None) -> Tensor:
    r"""$S_j = Q K_j^\top / \sqrt{d_k} + M_j$: the scores of every query against tile ``j``.

    ``Q``: ``(..., n_q, d_k)``; ``K_j``: ``(..., b, d_k)``; ``M_j``: ``(n_q, b)`` or ``None``;
    returns ``(..., n_q, b)``.
    """
    S_j = scale(scores(Q, K_j), Q.shape[-1])
    return S_j if M_j is None else S_j + M_j


def running_max(m: Tensor, S_j: Tensor) -> Tensor:
    r"""$m' = \max(m, \operatorname{rowmax}(S_j))$: ``(..., n_q, 1)``."""
    return torch.maximum(m, S_j.amax(dim=-1, keepdim=True))  # (..., n_q, b) -> (..., n_q, 1)


def safe_max(m: Tensor) -> Tensor:
    r"""$m$ with $-\infty$ replaced by 0, the number subtracted before ``exp``.

    A row whose keys so far were all masked has $m = -\infty$, and $-\infty - (-\infty)$ is
    NaN; subtracting 0 instead gives $e^{-\infty} = 0$ for every masked score, the right
    answer. Any finite $m$ is kept: the exponents stay $\le 0$, so nothing overflows.
    """
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def tile_probabilities(S_j: Tensor, m_new: Tensor) -> Tensor:
    r"""$P_j = e^{S_j - m'}$, the tile's unnormalised weights (0 where masked)."""
    return torch.exp(S_j - safe_max(m_new))


def rescale_factor(m: Tensor, m_new: Tensor) -> Tensor:
    r"""$\alpha = e^{m - m'}$: how much smaller the old terms become under the new maximum
    (1 when the maximum did not change, 0 when nothing was summed yet)."""
    return torch.exp(m - safe_max(m_new))


def running_sum(ell: Tensor, alpha: Tensor, P_j: Tensor) -> Tensor:
    r"""$\ell' = \alpha\,\ell + \operatorname{rowsum}(P_j)$: ``(..., n_q, 1)``."""
    return alpha * ell + P_j.sum(dim=-1, keepdim=True)  # (..., n_q, b) -> (..., n_q, 1)


def running_output(O: Tensor, alpha: Tensor, P_j: Tensor, V_j: Tensor) -> Tensor:
    r"""$O' = \alpha\, O + P_j V_j$: the unnormalised output, ``(..., n_q, d_v)``."""
    return alpha * O + P_j @ V_j  # (..., n_q, b) @ (..., b, d_v) -> (..., n_q, d_v)


def logsumexp_rows(m: Tensor, ell: Tensor) -> Tensor:
    r"""$L = m + \log \ell = \log \sum_j e^{s_j}$, all the backward keeps of the softmax."""
    return m + torch.log(ell)


# --8<-- [end:online_steps]


@dataclass(frozen=True, kw_only=True)
class TileStep:
    """The state after one tile: its keys ``[start, stop)``, its scores ``S_j`` and weights
    ``P_j`` ``(..., n_q, b)``, the rescale factor ``alpha`` and the running ``m``, ``ell``
    ``(..., n_q, 1)`` and ``O`` ``(..., n_q, d_v)``; ``partial`` is ``O / ell``, the
    attention over the keys read so far (NaN in a row that has seen only masked keys)."""

    start: int
    stop: int
    S_j: Tensor
    P_j: Tensor
    alpha: Tensor
    m: Tensor
    ell: Tensor
    O: Tensor

    @property
    def partial(self) -> Tensor:
        """``O / ell``: the output if the keys stopped at this tile."""
        return self.O / self.ell


@dataclass(frozen=True, kw_only=True)
class OnlineSoftmaxTrace:
    """The online-softmax forward: its inputs, every tile's `TileStep`, and the results
    ``H = O / ell`` ``(..., n_q, d_v)`` and ``L = m + log ell`` ``(..., n_q, 1)``."""

    Q: Tensor
    K: Tensor
    V: Tensor
    M: Tensor | None
    tile: int
    steps: tuple[TileStep, ...]
    m: Tensor
    ell: Tensor
    H: Tensor
    L: Tensor


def _mask_tile(M: Tensor | None, start: int, stop: int) -> Tensor | None:
    """The mask's columns of one tile (``None`` stays ``None``)."""
    return None if M is None else M[..., start:stop]


# --8<-- [start:online_softmax_attention]
def online_softmax_attention(
    Q: Tensor, K: Tensor, V: Tensor, M: Tensor | None = None, *, tile: int
) -> OnlineSoftmaxTrace:
    r"""Attention $\operatorname{softmax}(Q K^\top / \sqrt{d_k} + M)\, V$ read in tiles of
    ``tile`` keys, with the running $m$, $\ell$, $O$ (module docstring); $H = O / \ell$.

    ``Q``: ``(..., n_q, d_k)``; ``K``: ``(..., n_k, d_k)``; ``V``: ``(..., n_k, d_v)``;
    ``M``: the additive mask ``(n_q, n_k)`` (or broadcastable), ``None`` for none.
    """
    n_k = K.shape[-2]
    lead = Q.shape[:-1]  # (..., n_q)
    m = torch.full((*lead, 1), -math.inf, dtype=Q.dtype)  # running max: (..., n_q, 1)
    ell = torch.zeros((*lead, 1), dtype=Q.dtype)  # running sum of e^{s - m}
    O = torch.zeros((*lead, V.shape[-1]), dtype=Q.dtype)  # running Σ e^{s - m} v: (..., n_q, d_v)
    steps: list[TileStep] = []
    for start, stop in tile_bounds(n_k, tile):
        K_j, V_j = K[..., start:stop, :], V[..., start:stop, :]  # (..., b, d)
        S_j = tile_scores(Q, K_j, _mask_tile(M, start, stop))  # (..., n_q, b)
        m_new = running_max(m, S_j)
        P_j = tile_probabilities(S_j, m_new)
        alpha = rescale_factor(m, m_new)
        ell = running_sum(ell, alpha, P_j)
        O = running_output(O, alpha, P_j, V_j)
        m = m_new
        steps.append(
            TileStep(start=start, stop=stop, S_j=S_j, P_j=P_j, alpha=alpha, m=m, ell=ell, O=O)
        )
    H = O / ell  # the softmax's normalisation, once, at the end
    return OnlineSoftmaxTrace(
        Q=Q,
        K=K,
        V=V,
        M=M,
        tile=tile,
        steps=tuple(steps),
        m=m,
        ell=ell,
        H=H,
        L=logsumexp_rows(m, ell),
    )


# --8<-- [end:online_softmax_attention]


@dataclass(frozen=True, kw_only=True)
class BackwardTile:
    r"""One tile of the backward: keys ``[start, stop)``, the recomputed weights
    $P_j = e^{S_j - L}$, $\partial P_j$, $\partial S_j$ ``(..., n_q, b)``, the tile's
    $\partial K_j$, $\partial V_j$ ``(..., b, d)`` and $\partial Q$ summed so far."""

    start: int
    stop: int
    P_j: Tensor
    dP_j: Tensor  # noqa: N815
    dS_j: Tensor  # noqa: N815
    dK_j: Tensor  # noqa: N815
    dV_j: Tensor  # noqa: N815
    dQ: Tensor  # noqa: N815


@dataclass(frozen=True, kw_only=True)
class OnlineGradients:
    r"""The backward by recomputation: ``Q``, ``K``, ``V`` are $\partial L/\partial Q$, …;
    ``D`` is $\operatorname{rowsum}(\partial H \odot H)$ ``(..., n_q, 1)``; ``tiles`` holds
    each tile's `BackwardTile`, in order."""

    Q: Tensor
    K: Tensor
    V: Tensor
    D: Tensor
    tiles: tuple[BackwardTile, ...]

    @property
    def P(self) -> tuple[Tensor, ...]:
        """Each tile's recomputed weights $e^{S_j - L}$."""
        return tuple(tile.P_j for tile in self.tiles)


# --8<-- [start:online_softmax_backward]
def online_softmax_backward(trace: OnlineSoftmaxTrace, dH: Tensor) -> OnlineGradients:
    r"""FlashAttention's backward: each tile's weights recomputed from $L = m + \log\ell$,
    $P_j = e^{S_j - L}$, never stored; then the softmax backward tile by tile with
    $D = \operatorname{rowsum}(\partial H \odot H)$:

    $$
    \partial V_j = P_j^\top \partial H,\ \ \partial S_j = P_j \odot (\partial H V_j^\top - D),
    \ \ \partial Q = \sum_j \frac{\partial S_j K_j}{\sqrt{d_k}},\ \
    \partial K_j = \frac{\partial S_j^\top Q}{\sqrt{d_k}}
    $$

    ``dH``: $\partial L / \partial H$, the shape of ``trace.H``.
    """
    Q, K, V, M = trace.Q, trace.K, trace.V, trace.M
    root = math.sqrt(Q.shape[-1])
    D = (dH * trace.H).sum(dim=-1, keepdim=True)  # rowsum(∂H ⊙ H): (..., n_q, d_v) -> (..., n_q, 1)
    dQ = torch.zeros_like(Q)
    tiles: list[BackwardTile] = []
    for start, stop in tile_bounds(K.shape[-2], trace.tile):
        K_j, V_j = K[..., start:stop, :], V[..., start:stop, :]
        S_j = tile_scores(Q, K_j, _mask_tile(M, start, stop))  # recomputed, not stored
        P_j = torch.exp(S_j - trace.L)  # = the softmax's weights of this tile (0 where masked)
        dV_j = P_j.transpose(-2, -1) @ dH  # P_jᵀ ∂H: (..., b, n_q) @ (..., n_q, d_v)
        dP_j = dH @ V_j.transpose(-2, -1)  # ∂H V_jᵀ: (..., n_q, b)
        dS_j = P_j * (dP_j - D)
        dQ = dQ + dS_j @ K_j / root  # (..., n_q, b) @ (..., b, d_k)
        dK_j = dS_j.transpose(-2, -1) @ Q / root  # (..., b, n_q) @ (..., n_q, d_k)
        tiles.append(
            BackwardTile(
                start=start, stop=stop, P_j=P_j, dP_j=dP_j, dS_j=dS_j, dK_j=dK_j, dV_j=dV_j, dQ=dQ
            )
        )
    return OnlineGradients(
        Q=dQ,
        K=torch.cat([tile.dK_j for tile in tiles], dim=-2),  # the tiles' rows, in order
        V=torch.cat([tile.dV_j for tile in tiles], dim=-2),
        D=D,
        tiles=tuple(tiles),
    )


# --8<-- [end:online_softmax_backward]
