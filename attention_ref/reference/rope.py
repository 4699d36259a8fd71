r"""Rotary position embeddings (RoPE, Su et al., *RoFormer*, 2021), one formula per function.

Instead of adding a position vector to the token, RoPE rotates each query and key by an angle
proportional to its position ``m``. A head of width ``d`` (even) is cut into ``d/2`` pairs of
coordinates $(x_{2i}, x_{2i+1})$, and pair ``i`` turns at its own frequency:

$$
\theta_i = \text{base}^{-2i/d}\ (i = 0, \dots, d/2 - 1),\qquad
\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
\begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
\begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}
$$

(``base = 10000`` in RoFormer; Llama 3 uses 500000). Written for the whole vector,
$x'_m = R_m x_m$ with $R_m$ block-diagonal (RoFormer's eq. 15); in the documents' row
convention a token is a row, so $x'_m = x_m R_m^\top$. Because rotations compose,
$R_m^\top R_n = R_{n-m}$, the score depends on the positions only through their difference:

$$
(R_m q) \cdot (R_n k) = q^\top R_m^\top R_n k = q \cdot (R_{n-m} k)
$$

Three formulations of the same rotation are here, and the tests hold them equal:
`rotate_pairs` (cosines and sines of each pair, what a model computes), `rope_by_matrices`
(the block-diagonal $R_m$, as the paper writes it) and `rope_by_complex` (pair ``i`` as the
complex number $x_{2i} + \mathrm{i}\,x_{2i+1}$ times $e^{\mathrm{i} m \theta_i}$, as Meta's
Llama code computes it). Hugging Face's ``rotate_half`` pairs coordinate ``i`` with
``i + d/2`` instead: the same rotations on a permutation of the coordinates, which gives
different numbers for the same weights.

The backward of a rotation is its transpose, a rotation by $-m\theta_i$ (`rope_backward`).

Book page: ``docs/rope.md`` "Rotary position embeddings".
"""

from __future__ import annotations

import torch
from torch import Tensor

from attention_ref.reference.spec import ROPE_BASE

__all__ = [
    "apply_rope",
    "rope_angles",
    "rope_backward",
    "rope_by_complex",
    "rope_by_matrices",
    "rope_frequencies",
    "rotate_pairs",
    "rotation_matrix",
]


def _positions(n: int, positions: Tensor | None, dtype: torch.dtype) -> Tensor:
    """``positions`` as a float vector of length ``n``; ``None`` means ``0, 1, …, n - 1``."""
    if positions is None:
        return torch.arange(n, dtype=dtype)
    positions = torch.as_tensor(positions).to(dtype)
    if positions.shape != (n,):
        raise ValueError(f"need one position per token, {n}, got shape {tuple(positions.shape)}")
    return positions


# --8<-- [start:rope_frequencies]
def rope_frequencies(d: int, base: float = ROPE_BASE, dtype: torch.dtype = torch.float64) -> Tensor:
    r"""The frequency of each pair, $\theta_i = \text{base}^{-2i/d}$, ``(d/2,)``.

    Pair 0 turns by 1 radian per position, the last pair by almost nothing: the fast pairs
    tell neighbours apart, the slow ones still change over long distances.
    """
    if d < 2 or d % 2 != 0:
        raise ValueError(f"RoPE rotates pairs of coordinates: the head width must be even, got {d}")
    i = torch.arange(d // 2, dtype=dtype)  # pair index 0 .. d/2 - 1
    return base ** (-2.0 * i / d)


def rope_angles(positions: Tensor, theta: Tensor) -> Tensor:
    r"""The angle of pair ``i`` at position ``m``, $m\,\theta_i$.

    ``positions``: ``(n,)``; ``theta``: ``(d/2,)``; returns ``(n, d/2)``.
    """
    return positions.unsqueeze(-1) * theta  # (n,) -> (n, 1), times (d/2,) -> (n, d/2)


# --8<-- [end:rope_frequencies]


# --8<-- [start:rotate_pairs]
def rotate_pairs(x: Tensor, angles: Tensor) -> Tensor:
    r"""Rotate each pair $(x_{2i}, x_{2i+1})$ of every row by its angle $\phi = m\theta_i$:

    $$
    x'_{2i} = x_{2i} \cos\phi - x_{2i+1} \sin\phi,\qquad
    x'_{2i+1} = x_{2i} \sin\phi + x_{2i+1} \cos\phi
    $$

    ``x``: ``(..., n, d)``; ``angles``: ``(n, d/2)``, one row per token; returns ``(..., n, d)``.
    """
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., n, d) -> two (..., n, d/2)
    cos, sin = torch.cos(angles), torch.sin(angles)
    rotated_even = x_even * cos - x_odd * sin
    rotated_odd = x_even * sin + x_odd * cos
    # (..., n, d/2) twice -> (..., n, d/2, 2) -> (..., n, d): back to x_0, x_1, x_2, …
    return torch.stack((rotated_even, rotated_odd), dim=-1).flatten(-2)


def apply_rope(x: Tensor, positions: Tensor | None = None, base: float = ROPE_BASE) -> Tensor:
    r"""RoPE on queries or keys: $x'_m = x_m R_m^\top$, every row ``m`` rotated by its position.

    ``x``: ``(..., n, d)`` (a head's Q or K, or all heads ``(..., h, n, d)``); ``positions``:
    ``(n,)``, by default ``0, 1, …, n - 1`` (a decode step passes its own, e.g. ``[t]``).
    """
    n, d = x.shape[-2], x.shape[-1]
    theta = rope_frequencies(d, base, x.dtype)
    return rotate_pairs(x, rope_angles(_positions(n, positions, x.dtype), theta))


# --8<-- [end:rotate_pairs]


# --8<-- [start:rope_backward]
def rope_backward(
    dx_rot: Tensor, positions: Tensor | None = None, base: float = ROPE_BASE
) -> Tensor:
    r"""The gradient through RoPE: the transpose of the rotation, $\partial x_m =
    \partial x'_m R_m$, i.e. each pair rotated back by $-m\theta_i$.

    $x'_m = x_m R_m^\top$ is linear in $x_m$, so $\partial x_m = \partial x'_m R_m$; and
    $R_m = (R_m^\top)^{-1}$ is the rotation by the opposite angles. ``(..., n, d)`` ->
    ``(..., n, d)``.
    """
    n, d = dx_rot.shape[-2], dx_rot.shape[-1]
    theta = rope_frequencies(d, base, dx_rot.dtype)
    return rotate_pairs(dx_rot, -rope_angles(_positions(n, positions, dx_rot.dtype), theta))


# --8<-- [end:rope_backward]


# --8<-- [start:rotation_matrix]
def rotation_matrix(angles: Tensor) -> Tensor:
    r"""RoFormer's $R_{\Theta,m}$ (eq. 15): ``(d/2,)`` angles of one position -> ``(d, d)``.

    $$
    R_{\Theta,m} = \begin{pmatrix}
    \cos m\theta_0 & -\sin m\theta_0 & & \\ \sin m\theta_0 & \cos m\theta_0 & & \\
    & & \ddots & \\ & & & \begin{smallmatrix} \cos m\theta_{d/2-1} & -\sin m\theta_{d/2-1}
    \\ \sin m\theta_{d/2-1} & \cos m\theta_{d/2-1} \end{smallmatrix} \end{pmatrix}
    $$

    A column vector turns as $R x$; a row (the documents' convention) as $x R^\top$.
    """
    half = angles.shape[-1]
    cos, sin = torch.cos(angles), torch.sin(angles)
    R = torch.zeros(2 * half, 2 * half, dtype=angles.dtype)
    for i in range(half):  # block i acts on coordinates 2i, 2i+1
        R[2 * i, 2 * i], R[2 * i, 2 * i + 1] = cos[i], -sin[i]
        R[2 * i + 1, 2 * i], R[2 * i + 1, 2 * i + 1] = sin[i], cos[i]
    return R


def rope_by_matrices(x: Tensor, positions: Tensor | None = None, base: float = ROPE_BASE) -> Tensor:
    r"""RoPE as the paper writes it: row ``m`` times $R_{\Theta,m}^\top$, one matrix per position.

    ``x``: ``(..., n, d)``; returns ``(..., n, d)``. A slow, literal second formulation,
    tested equal to `apply_rope`.
    """
    n, d = x.shape[-2], x.shape[-1]
    angles = rope_angles(_positions(n, positions, x.dtype), rope_frequencies(d, base, x.dtype))
    R = torch.stack([rotation_matrix(a) for a in angles])  # (n, d, d): R_m for each m
    # x_m R_mᵀ: (..., n, 1, d) @ (n, d, d) -> (..., n, 1, d) -> (..., n, d)
    return (x.unsqueeze(-2) @ R.transpose(-2, -1)).squeeze(-2)


# --8<-- [end:rotation_matrix]


# --8<-- [start:rope_by_complex]
def rope_by_complex(x: Tensor, positions: Tensor | None = None, base: float = ROPE_BASE) -> Tensor:
    r"""RoPE with complex numbers: $z_i = x_{2i} + \mathrm{i}\, x_{2i+1}$ times
    $e^{\mathrm{i} m \theta_i}$.

    Multiplying by $e^{\mathrm{i}\phi} = \cos\phi + \mathrm{i}\sin\phi$ turns a complex number
    by $\phi$: $(a + \mathrm{i}b)(\cos\phi + \mathrm{i}\sin\phi) = (a\cos\phi - b\sin\phi) +
    \mathrm{i}(a\sin\phi + b\cos\phi)$, the pair rotation of `rotate_pairs`. ``(..., n, d)``
    -> ``(..., n, d)``; tested equal to `apply_rope` and `rope_by_matrices`.
    """
    n, d = x.shape[-2], x.shape[-1]
    angles = rope_angles(_positions(n, positions, x.dtype), rope_frequencies(d, base, x.dtype))
    # (..., n, d) -> (..., n, d/2, 2) -> (..., n, d/2) complex: z_i = x_2i + i x_2i+1
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())
    turn = torch.polar(torch.ones_like(angles), angles)  # e^{i m θ_i}: (n, d/2)
    # (..., n, d/2) complex -> (..., n, d/2, 2) -> (..., n, d)
    return torch.view_as_real(z * turn).flatten(-2)


# --8<-- [end:rope_by_complex]
