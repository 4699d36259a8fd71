r"""The one trace of masked multi-head attention, forward (`AttentionTrace`) and backward
(`GradientTrace`): every intermediate of `attention_ref.reference.multihead`'s composition and
every gradient of `attention_ref.reference.backward.attention_backward`.

One trace serves every attention here. The homework's multi-head attention is the case
$g = h$ (every query head its own K/V head) with no rotation ($\rho$ the identity); grouped-
and multi-query attention have $g < h$; RoPE rotates the queries and keys ($\rho$); a window
or ALiBi is the mask $M$:

$$
H^{(i)} = \operatorname{softmax}\Big(\frac{\rho(Q^{(i)})\,\rho(K^{(\gamma(i))})^\top}{\sqrt{d_k}}
+ M^{(i)}\Big) V^{(\gamma(i))},\qquad \gamma(i) = \lfloor i g / h \rfloor
$$

The tests, ``attnref explain``, the exercises and the book read these fields; nothing here
computes but the shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from attention_ref.reference.attention import fuse_heads
from attention_ref.reference.spec import kv_group

__all__ = ["AttentionTrace", "GradientTrace"]


@dataclass(frozen=True, kw_only=True)
class AttentionTrace:
    r"""Every intermediate of one masked multi-head attention.

    Query-side tensors have ``h`` heads on the head axis (``Q`` is ``(..., h, n, d_k)``),
    K/V-side tensors ``g`` (``K`` is ``(..., g, n, d_k)``; ``g = h`` in the homework);
    ``K_rep``, ``V_rep`` are the K/V heads repeated to ``h`` (`attention_ref.reference.gqa.
    repeat_kv`; with ``g = h`` they are ``K_rot`` and ``V`` themselves). With RoPE,
    ``Q_rot``, ``K_rot`` are the rotated ``Q``, ``K`` at ``positions`` (``rope_base`` its
    base); without, ``Q_rot is Q``, ``K_rot is K`` and ``rope_base`` is ``None``.

    The weights are kept as they were used, per head whichever view was given (``W_Q`` is
    ``(h, d_model, d_k)``, ``W_K`` ``(g, d_model, d_k)``; `fuse_heads` gives the fused one),
    with the biases ``b_Q`` ``(h, d_k)``, ``b_K``, ``b_V`` ``(g, d)`` or ``None``. ``M`` is the
    additive mask used, ``(n, n)`` or per query head ``(h, n, n)`` (ALiBi), ``None`` when none
    was applied (then ``S_masked`` is ``S``). ``A_dropped`` holds the weights after dropout
    when dropout was applied (``None`` otherwise); ``H`` is always computed from the weights
    actually used. ``W_O`` is ``None`` when there was no output projection: then ``output`` is
    ``concat`` itself (and ``b_O`` is ``None``).
    """

    tokens: tuple[str, ...]
    X: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    b_Q: Tensor | None  # noqa: N815
    b_K: Tensor | None  # noqa: N815
    b_V: Tensor | None  # noqa: N815
    Q: Tensor
    K: Tensor
    V: Tensor
    positions: Tensor
    rope_base: float | None
    Q_rot: Tensor
    K_rot: Tensor
    K_rep: Tensor
    V_rep: Tensor
    QKt: Tensor
    S: Tensor
    M: Tensor | None
    S_masked: Tensor
    A: Tensor
    A_dropped: Tensor | None
    H: Tensor
    concat: Tensor
    W_O: Tensor | None
    b_O: Tensor | None  # noqa: N815
    output: Tensor

    @property
    def h(self) -> int:
        """Number of query heads."""
        return int(self.Q.shape[-3])

    @property
    def g(self) -> int:
        """Number of K/V heads (``g = h``: multi-head attention; ``g = 1``: multi-query)."""
        return int(self.K.shape[-3])

    @property
    def group_size(self) -> int:
        """Query heads per K/V head, ``r = h / g``."""
        return self.h // self.g

    @property
    def d_k(self) -> int:
        """Width of a query/key head."""
        return int(self.Q.shape[-1])

    @property
    def d_v(self) -> int:
        """Width of a value head."""
        return int(self.V.shape[-1])

    @property
    def d_model(self) -> int:
        """Width of a token of ``X``."""
        return int(self.X.shape[-1])

    @property
    def d_out(self) -> int:
        """Width of the output: ``W_O``'s columns, or ``h*d_v`` without ``W_O``."""
        return int(self.output.shape[-1])

    def head(self, i: int) -> dict[str, Tensor]:
        r"""The intermediates of query head ``i`` (0-based): Q, K, V, QKt, S, S_masked, A, H,
        with ``K``, ``V`` those of its K/V head $\gamma(i)$."""
        j = kv_group(i, self.h, self.g)
        per_query = {
            "Q": self.Q,
            "QKt": self.QKt,
            "S": self.S,
            "S_masked": self.S_masked,
            "A": self.A,
            "H": self.H,
        }
        out = {name: t[..., i, :, :] for name, t in per_query.items()}
        out |= {"K": self.K[..., j, :, :], "V": self.V[..., j, :, :]}
        return {name: out[name] for name in ("Q", "K", "V", "QKt", "S", "S_masked", "A", "H")}


@dataclass(frozen=True, kw_only=True)
class GradientTrace:
    r"""Every gradient of one masked multi-head attention: field ``Z`` is $\partial L/\partial Z$.

    The shapes are those of the forward's `AttentionTrace`: ``Q_rot``, ``K_rep``, ``V_rep``
    have ``h`` heads, ``K``, ``V``, ``K_rot`` have ``g`` (their sums over each group,
    `attention_ref.reference.gqa.sum_kv_groups`); weights per head (``W_Q`` is
    ``(h, d_model, d_k)``, ``W_K`` ``(g, d_model, d_k)``; `fused` gives ``(d_model, heads*d)``).
    Without RoPE ``Q`` equals ``Q_rot`` and ``K`` equals ``K_rot``. ``output`` is the upstream
    gradient $G$ itself. ``W_O`` is ``None`` when the forward had no output projection, ``b_*``
    when it had no such bias (``b_Q`` is ``(h, d_k)``, ``b_K`` ``(g, d_k)``; ``b_O`` is
    ``(d_out,)``). ``X_from_Q``, ``X_from_K``, ``X_from_V`` are the three paths whose sum is
    ``X``.
    """

    output: Tensor
    W_O: Tensor | None
    b_O: Tensor | None  # noqa: N815
    concat: Tensor
    H: Tensor
    A: Tensor
    S_masked: Tensor
    S: Tensor
    QKt: Tensor
    Q_rot: Tensor
    K_rep: Tensor
    V_rep: Tensor
    K_rot: Tensor
    Q: Tensor
    K: Tensor
    V: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    b_Q: Tensor | None  # noqa: N815
    b_K: Tensor | None  # noqa: N815
    b_V: Tensor | None  # noqa: N815
    X_from_Q: Tensor
    X_from_K: Tensor
    X_from_V: Tensor
    X: Tensor

    @property
    def h(self) -> int:
        """Number of query heads."""
        return int(self.Q.shape[-3])

    @property
    def g(self) -> int:
        """Number of K/V heads."""
        return int(self.K.shape[-3])

    def head(self, i: int) -> dict[str, Tensor]:
        r"""The gradients of query head ``i`` (0-based): H, A, S_masked, S, QKt, Q, K, V, W_Q,
        W_K, W_V; ``K``, ``V``, ``W_K``, ``W_V`` those of its K/V head $\gamma(i)$, which
        collect every head of its group."""
        j = kv_group(i, self.h, self.g)
        acts = {"H": self.H, "A": self.A, "S_masked": self.S_masked, "S": self.S}
        out = {name: t[..., i, :, :] for name, t in acts.items()}
        out |= {"QKt": self.QKt[..., i, :, :], "Q": self.Q[..., i, :, :]}
        out |= {"K": self.K[..., j, :, :], "V": self.V[..., j, :, :]}
        out |= {"W_Q": self.W_Q[i], "W_K": self.W_K[j], "W_V": self.W_V[j]}
        return out

    def fused(self, role: str) -> Tensor:
        r"""$\partial W$ of the fused view, ``(d_model, heads*d)``, for ``role`` in Q, K, V."""
        weights = {"Q": self.W_Q, "K": self.W_K, "V": self.W_V}
        if role not in weights:
            raise ValueError(f"role must be one of Q, K, V, got {role!r}")
        return fuse_heads(weights[role])
