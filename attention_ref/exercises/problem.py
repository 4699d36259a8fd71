r"""The problem model of an exercise: attention with ``h`` query heads sharing ``g`` K/V heads,
a mask (causal, none, or a sliding window of ``w`` keys) and positions (none, or RoPE).

The homework's masked multi-head attention is the problem with no feature
(`attention_ref.exercises.features`: :math:`g = h`, causal, no rotation); ``gqa``
(:math:`g < h`), ``window`` (:math:`M^{\text{win}}_{tu} = 0` where :math:`0 \le t - u < w`,
:math:`-\infty` elsewhere) and ``rope`` are features, and any of them together is a problem.
`ProblemTrace` is what the one chain (`attention_ref.exercises.chain`) reads of every problem:
its numbers, not a computation (an ``--input`` file's biases included), as numpy's float64
arrays (the masks and RoPE's angles are the reference's formulas, so that drawing and grading
need no torch; `ProblemTrace.reference` computes in torch); `layout` says which
steps an answer holds, in the names of ``attnref explain --format json``, from the features.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from attention_ref.exercises.intervals import Array
from attention_ref.reference.spec import ROPE_BASE, kv_group

if TYPE_CHECKING:
    from attention_ref import reference as ref


def causal_mask(n: int) -> Array:
    r"""`attention_ref.reference.causal_mask`: :math:`M_{ij} = 0` for :math:`j \le i`,
    :math:`-\infty` for :math:`j > i` (the future)."""
    return np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, 0.0)


def window_mask(n: int, w: int) -> Array:
    r"""`attention_ref.reference.windows.sliding_window_mask`: :math:`M_{ij} = 0` where
    :math:`0 \le i - j < w`, :math:`-\infty` elsewhere."""
    delta = np.arange(n)[:, None] - np.arange(n)[None, :]
    return np.where((delta >= 0) & (delta < w), 0.0, -np.inf)


def rope_frequencies(d_k: int, base: float = ROPE_BASE) -> Array:
    r"""`attention_ref.reference.rope.rope_frequencies`: :math:`\theta_p =
    \text{base}^{-2p/d_k}`, ``(d_k/2,)``."""
    return base ** (-2.0 * np.arange(d_k // 2, dtype=np.float64) / d_k)


def rope_angles(n: int, d_k: int, base: float = ROPE_BASE) -> Array:
    r"""`attention_ref.reference.rope.rope_angles`: :math:`m\theta_p`, ``(n, d_k/2)``, a row
    per position :math:`m = 0..n-1`."""
    return np.arange(n, dtype=np.float64)[:, None] * rope_frequencies(d_k, base)


@dataclass(frozen=True, kw_only=True)
class ProblemTrace:
    r"""One problem's numbers: ``X`` ``(n, d_model)``, ``W_Q`` ``(h, d_model, d_k)``, ``W_K``
    and ``W_V`` ``(g, d_model, d_k)`` (one per K/V head; :math:`g = h` in the homework's
    attention), ``W_O`` (or ``None``: the output is the concat), the additive mask ``M``
    (causal, the window's, or ``None``), the window's ``w``, RoPE's base (``None``: no
    rotation) and an ``--input`` file's biases (the exercises have none)."""

    tokens: tuple[str, ...]
    X: Array
    W_Q: Array
    W_K: Array
    W_V: Array
    W_O: Array | None
    M: Array | None
    window: int | None = None
    rope_base: float | None = None
    b_Q: Array | None = None  # noqa: N815
    b_K: Array | None = None  # noqa: N815
    b_V: Array | None = None  # noqa: N815
    b_O: Array | None = None  # noqa: N815
    #: what the scores read: the query heads' step, the K/V heads' (RoPE's rotated ones), and
    #: how a gradient of those turns back to ∂Q, ∂K (``(env, ∂x_read) → ∂x``; ``None``: it
    #: is the same); set by the features (`attention_ref.exercises.features.Feature`)
    reads_query: str = "Q"
    reads_key: str = "kv.K"
    turn_back: Callable[[Any, Any], Any] | None = None
    #: the stages the features add to the chain, each ``(before, stage)``: it goes in before
    #: the homework's stage ``before`` (`attention_ref.exercises.chain.forward_of`)
    extra: tuple[tuple[str, Any], ...] = ()
    #: a bias added to each query head's scores, ``(h, n, n)`` (ALiBi's), and the per-head
    #: steps that add it to ``S`` before the mask (``("B",)``)
    bias: Array | None = None
    added: tuple[str, ...] = ()

    @classmethod
    def of_attention(cls, tr: ref.AttentionTrace) -> ProblemTrace:
        """The numbers of a reference trace of the homework's attention (an ``--input``
        file's, an example's: biases and all)."""

        def a(t: object) -> Array | None:
            return None if t is None else np.asarray(t, dtype=np.float64)

        return cls(
            tokens=tuple(tr.tokens),
            X=a(tr.X),  # type: ignore[arg-type]
            W_Q=a(tr.W_Q),  # type: ignore[arg-type]
            W_K=a(tr.W_K),  # type: ignore[arg-type]
            W_V=a(tr.W_V),  # type: ignore[arg-type]
            W_O=a(tr.W_O),
            M=a(tr.M),
            b_Q=a(tr.b_Q),
            b_K=a(tr.b_K),
            b_V=a(tr.b_V),
            b_O=a(tr.b_O),
        )

    @property
    def h(self) -> int:
        return int(self.W_Q.shape[0])

    @property
    def g(self) -> int:
        return int(self.W_K.shape[0])

    @property
    def d_k(self) -> int:
        return int(self.W_Q.shape[-1])

    @property
    def d_v(self) -> int:
        return int(self.W_V.shape[-1])

    @property
    def d_model(self) -> int:
        return int(self.X.shape[-1])

    @property
    def output_shape(self) -> tuple[int, int]:
        """``(n, d_out)``: ``W_O``'s columns, or the concat's ``h d_v``."""
        width = int(self.W_O.shape[-1]) if self.W_O is not None else self.h * self.d_v
        return int(self.X.shape[-2]), width

    @property
    def theta(self) -> Array:
        r"""Each pair's frequency :math:`\theta_p = \text{base}^{-2p/d_k}`, ``(d_k/2,)``."""
        return rope_frequencies(self.d_k, self.rope_base or ROPE_BASE)

    @property
    def angles(self) -> Array:
        r"""The angles :math:`m\theta_p`, ``(n, d_k/2)``: a row per token, a column per pair
        (`rope_angles`)."""
        return rope_angles(int(self.X.shape[-2]), self.d_k, self.rope_base or ROPE_BASE)

    def group(self, i: int) -> int:
        r"""The K/V head of query head ``i`` (0-based): :math:`\gamma(i) = \lfloor i g/h
        \rfloor` (`attention_ref.reference.spec.kv_group`)."""
        return kv_group(i, self.h, self.g)

    def reference(self) -> ref.AttentionTrace:
        """The reference computation of this problem (`attention_ref.reference.
        masked_multihead_attention`, the one composition), biases and all."""
        import torch

        from attention_ref import reference as ref

        def t(a: Array | None) -> torch.Tensor | None:
            return None if a is None else torch.from_numpy(np.array(a, dtype=np.float64))

        return ref.masked_multihead_attention(
            t(self.X),  # type: ignore[arg-type]
            t(self.W_Q),  # type: ignore[arg-type]
            t(self.W_K),  # type: ignore[arg-type]
            t(self.W_V),  # type: ignore[arg-type]
            t(self.W_O),
            b_Q=t(self.b_Q),
            b_K=t(self.b_K),
            b_V=t(self.b_V),
            b_O=t(self.b_O),
            causal=False,
            M=t(self.M if self.bias is None else self.bias + (0.0 if self.M is None else self.M)),
            rope_base=self.rope_base,
            tokens=self.tokens,
        )


@dataclass(frozen=True)
class Layout:
    """The steps an answer to a problem holds: the names accepted per query head (under
    ``"heads"``) and per K/V head (``"kv_heads"``), those its template asks, the steps of the
    whole problem beside ``concat`` and ``output`` (the window's mask ``M``), and whether it
    takes gradients (``"grads"``: every problem but RoPE's, not yet)."""

    heads: tuple[str, ...]
    kv_heads: tuple[str, ...]
    template_heads: tuple[str, ...]
    template_kv_heads: tuple[str, ...]
    top: tuple[str, ...] = ()
    grads: bool = False


#: The steps of one head, in seed 000's order; the steps after the heads.
HEAD_STEPS: Final = ("Q", "K", "V", "scores", "S", "S_masked", "A", "H")
FINAL_STEPS: Final = ("concat", "output")
#: Gradient names: per head, and of the whole (``"grads"`` of the answer).
GRAD_HEAD_STEPS: Final = ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")
GRAD_STEPS: Final = ("output", "W_O", "b_O", "concat", "X")
#: Gradient names per K/V head (``"grads": {"kv_heads": [...]}``): its group's sums.
GRAD_KV_STEPS: Final = ("K", "V", "W_K", "W_V")


__all__ = [
    "FINAL_STEPS",
    "GRAD_HEAD_STEPS",
    "GRAD_KV_STEPS",
    "GRAD_STEPS",
    "HEAD_STEPS",
    "Layout",
    "ProblemTrace",
    "causal_mask",
    "rope_angles",
    "rope_frequencies",
    "window_mask",
]
