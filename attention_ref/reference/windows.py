r"""Sliding-window causal masks and ALiBi biases: additive matrices on the scores.

Both change only the matrix added to the scaled scores before the softmax,
$\tilde S = S + M$ (`attention_ref.reference.add_mask`). Query ``i`` and key ``j`` are
compared by their distance $\Delta_{ij} = p_i - j$, where $p_i$ is the position of query
``i``: $p_i = i$ when the queries are all the tokens, and the last positions when they are
only the newest ones (one decode step against a KV cache: $p_0 = n_k - 1$).

**Sliding window** of ``w`` keys (Mistral's local attention; Longformer's in its causal form):
a query sees itself and the ``w - 1`` tokens before it,

$$
M^{\text{win}}_{ij} = \begin{cases} 0 & 0 \le \Delta_{ij} < w \\ -\infty & \text{otherwise}
\end{cases}
$$

so $w \ge n$ is the causal mask and $w = 1$ lets a token see only itself. Libraries count
the window differently (FlashAttention's ``window_size=(w - 1, 0)`` is this mask); here
``w`` is the number of keys a query sees, itself included.

**ALiBi** (Press, Smith and Lewis, *Train Short, Test Long*, ICLR 2022): no position
embeddings; head ``i`` adds a penalty proportional to the distance, with a fixed slope
$m_i$, on top of the causal mask $M$:

$$
B^{(i)}_{qk} = -m_i\, \Delta_{qk},\qquad \tilde S^{(i)} = S^{(i)} + B^{(i)} + M,\qquad
m_i = 2^{-8 i / h}\ (i = 1, \dots, h)
$$

Book page: ``docs/windows-alibi.md`` "Sliding windows and ALiBi".
"""

from __future__ import annotations

import torch
from torch import Tensor

from attention_ref.reference import spec

__all__ = [
    "alibi_bias",
    "alibi_mask",
    "alibi_slopes",
    "relative_positions",
    "sliding_window_mask",
    "window_allowed",
]


def _keys(n_q: int, n_k: int | None) -> int:
    """``n_k`` (default ``n_q``), checked: at least as many keys as queries, at least one."""
    n_k = n_q if n_k is None else n_k
    if n_q < 1 or n_k < n_q:
        raise ValueError(
            f"need 1 <= n_q <= n_k (the queries are the last n_q of the n_k tokens), "
            f"got n_q={n_q}, n_k={n_k}"
        )
    return n_k


# --8<-- [start:relative_positions]
def relative_positions(n_q: int, n_k: int | None = None) -> Tensor:
    r"""The distances $\Delta_{ij} = p_i - j$ of query ``i`` to key ``j``, ``(n_q, n_k)``.

    The queries are the last ``n_q`` of the ``n_k`` tokens: $p_i = n_k - n_q + i$ (all the
    tokens when ``n_q = n_k``: $\Delta_{ij} = i - j$). $\Delta > 0$: the key is in the past;
    $\Delta < 0$: in the future.
    """
    n_k = _keys(n_q, n_k)
    p = torch.arange(n_k - n_q, n_k).unsqueeze(-1)  # query positions: (n_q,) -> (n_q, 1)
    j = torch.arange(n_k).unsqueeze(0)  # key positions: (n_k,) -> (1, n_k)
    return p - j  # (n_q, 1) - (1, n_k) -> (n_q, n_k)


# --8<-- [end:relative_positions]


# --8<-- [start:sliding_window_mask]
def window_allowed(n_q: int, w: int, n_k: int | None = None) -> Tensor:
    r"""``(n_q, n_k)`` booleans, True where query ``i`` may see key ``j``: $0 \le \Delta_{ij} < w$.

    The boolean form of `sliding_window_mask` (``attn_mask`` of PyTorch's
    ``scaled_dot_product_attention`` takes it: True means "may attend").
    """
    if isinstance(w, bool) or not isinstance(w, int) or w < 1:
        raise ValueError(f"the window w must be a whole number of keys >= 1, got {w!r}")
    delta = relative_positions(n_q, n_k)
    return (delta >= 0) & (delta < w)  # not the future, and fewer than w steps back


def sliding_window_mask(
    n_q: int, w: int, *, n_k: int | None = None, dtype: torch.dtype = torch.float64
) -> Tensor:
    r"""The additive sliding-window causal mask, ``(n_q, n_k)``:

    $$
    M^{\text{win}}_{ij} = 0 \text{ if } 0 \le \Delta_{ij} < w, \quad -\infty \text{ otherwise}
    $$

    ``w >= n_k`` gives `attention_ref.reference.causal_mask`. For ``n = 4``, ``w = 2``:

    $$
    \begin{bmatrix} 0 & -\infty & -\infty & -\infty \\ 0 & 0 & -\infty & -\infty \\
    -\infty & 0 & 0 & -\infty \\ -\infty & -\infty & 0 & 0 \end{bmatrix}
    $$
    """
    blocked = ~window_allowed(n_q, w, n_k)  # True where the key is out of the window
    return torch.zeros(blocked.shape, dtype=dtype).masked_fill(blocked, float("-inf"))


# --8<-- [end:sliding_window_mask]


# --8<-- [start:alibi]
def alibi_slopes(h: int, dtype: torch.dtype = torch.float64) -> Tensor:
    r"""ALiBi's slopes, one per head, ``(h,)``: $m_i = 2^{-8 i / h}$ for $i = 1, \dots, h$
    (`attention_ref.reference.spec.alibi_slopes`: the paper's rule where ``h`` is not a power
    of 2, one home for the exercises too)."""
    return torch.tensor(spec.alibi_slopes(h), dtype=dtype)


def alibi_bias(slopes: Tensor, n_q: int, n_k: int | None = None) -> Tensor:
    r"""ALiBi's linear penalty $B^{(i)}_{qk} = -m_i\, \Delta_{qk}$, ``(h, n_q, n_k)``.

    0 on the diagonal, $-m_i$ one step back, $-2 m_i$ two steps back, …; the entries above
    the diagonal are positive here and are removed by the causal mask (`alibi_mask`).
    """
    delta = relative_positions(n_q, n_k).to(slopes.dtype)
    # (h,) -> (h, 1, 1), times (n_q, n_k) -> (h, n_q, n_k)
    return -slopes.reshape(-1, 1, 1) * delta


def alibi_mask(slopes: Tensor, n_q: int, n_k: int | None = None) -> Tensor:
    r"""What ALiBi adds to head ``i``'s scores: $B^{(i)} + M$, ``(h, n_q, n_k)``.

    $B^{(i)}_{qk} = -m_i \Delta_{qk}$ where $\Delta_{qk} \ge 0$, $-\infty$ in the future.
    """
    bias = alibi_bias(slopes, n_q, n_k)
    future = relative_positions(n_q, n_k) < 0  # (n_q, n_k), broadcast over the heads
    return bias.masked_fill(future, float("-inf"))


# --8<-- [end:alibi]
