r"""The problem model of an exercise: attention with ``h`` query heads sharing ``g`` K/V heads,
a mask (causal, none, or a sliding window of ``w`` keys) and positions (none, or RoPE).

The homework's masked multi-head attention is the problem with no feature
(`attention_ref.exercises.features`: :math:`g = h`, causal, no rotation); ``gqa``
(:math:`g < h`), ``window`` (:math:`M^{\text{win}}_{tu} = 0` where :math:`0 \le t - u < w`,
:math:`-\infty` elsewhere) and ``rope`` are features, and any of them together is a problem.
`ProblemTrace` is what the one chain (`attention_ref.exercises.chain`) reads of every problem:
its numbers, not a computation (an ``--input`` file's biases included); `layout` says which
steps an answer holds, in the names of ``attnref explain --format json``, from the features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import torch
from torch import Tensor

from attention_ref.exercises.features import Features
from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.reference import windows
from attention_ref.reference.attention import causal_mask

if TYPE_CHECKING:
    from attention_ref import reference as ref

#: RoFormer's base, the one `attention_ref.reference.rope` uses.
ROPE_BASE: Final = ref_rope.DEFAULT_BASE


@dataclass(frozen=True, kw_only=True)
class ProblemTrace:
    r"""One problem's numbers: ``X`` ``(n, d_model)``, ``W_Q`` ``(h, d_model, d_k)``, ``W_K``
    and ``W_V`` ``(g, d_model, d_k)`` (one per K/V head; :math:`g = h` in the homework's
    attention), ``W_O`` (or ``None``: the output is the concat), the additive mask ``M``
    (causal, the window's, or ``None``), the window's ``w``, RoPE's base (``None``: no
    rotation) and an ``--input`` file's biases (the exercises have none)."""

    tokens: tuple[str, ...]
    X: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    W_O: Tensor | None
    M: Tensor | None
    window: int | None = None
    rope_base: float | None = None
    b_Q: Tensor | None = None  # noqa: N815
    b_K: Tensor | None = None  # noqa: N815
    b_V: Tensor | None = None  # noqa: N815
    b_O: Tensor | None = None  # noqa: N815

    @classmethod
    def of_attention(cls, tr: ref.AttentionTrace) -> ProblemTrace:
        """The numbers of a reference trace of the homework's attention (an ``--input``
        file's, an example's: biases and all)."""
        return cls(
            tokens=tuple(tr.tokens),
            X=tr.X,
            W_Q=tr.W_Q,
            W_K=tr.W_K,
            W_V=tr.W_V,
            W_O=tr.W_O,
            M=tr.M,
            b_Q=tr.b_Q,
            b_K=tr.b_K,
            b_V=tr.b_V,
            b_O=tr.b_O,
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
    def features(self) -> Features:
        return Features(self.g < self.h, self.window is not None, self.rope_base is not None)

    @property
    def theta(self) -> Tensor:
        r"""Each pair's frequency :math:`\theta_p = \text{base}^{-2p/d_k}`, ``(d_k/2,)``."""
        return ref_rope.rope_frequencies(self.d_k, self.rope_base or ROPE_BASE)

    @property
    def angles(self) -> Tensor:
        r"""The angles :math:`m\theta_p`, ``(n, d_k/2)``: a row per token, a column per pair."""
        n = int(self.X.shape[-2])
        return ref_rope.rope_angles(torch.arange(n, dtype=self.X.dtype), self.theta)

    def group(self, i: int) -> int:
        r"""The K/V head of query head ``i`` (0-based): :math:`\gamma(i)`."""
        return ref_gqa.kv_group(i, self.h, self.g)

    def reference(self) -> ref_gqa.GQATrace:
        """The reference computation of this problem; `ValueError` where it has biases (an
        ``--input`` file's: its reference is the trace it was read from)."""
        if any(b is not None for b in (self.b_Q, self.b_K, self.b_V, self.b_O)):
            raise ValueError("a problem with biases: its reference is its --input trace")
        return ref_gqa.grouped_query_attention(
            self.X,
            self.W_Q,
            self.W_K,
            self.W_V,
            self.W_O,
            causal=False,
            M=self.M,
            rope_base=self.rope_base,
            tokens=self.tokens,
        )


def problem_trace(
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None,
    features: Features,
    *,
    causal: bool = True,
    window: int | None = None,
    tokens: tuple[str, ...] = (),
) -> ProblemTrace:
    """A problem's numbers with its mask: the window's (``features.windowed``), the causal
    one, or none."""
    n = int(X.shape[-2])
    if features.windowed:
        if window is None:
            raise ValueError("a sliding window needs its width w")
        M = windows.sliding_window_mask(n, window, dtype=X.dtype)
    else:
        M = causal_mask(n, dtype=X.dtype) if causal else None
    return ProblemTrace(
        tokens=tokens,
        X=X,
        W_Q=W_Q,
        W_K=W_K,
        W_V=W_V,
        W_O=W_O,
        M=M,
        window=window if features.windowed else None,
        rope_base=ROPE_BASE if features.rotary else None,
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
_AFTER: Final = ("scores", "S", "S_masked", "A", "H")


def layout(f: Features, backward: bool | None = None) -> Layout:
    """What an answer to a problem of features ``f`` holds. Per query head: ``Q`` (and
    ``Q_rot`` with RoPE), the ``K`` and ``V`` it reads, then ``scores`` … ``H``; per K/V head
    (any feature: the homework's attention has none apart from its heads) ``K``, ``V`` (and
    ``K_rot``). The template asks each step once: where the K/V heads are apart (``g < h`` or
    RoPE) it asks them there and not again per query head. Gradients where the problem has a
    backward (``None``: the homework's attention has one, always; a problem with features when
    its exercise asks it)."""
    rot_q, rot_k = ("Q_rot",) * f.rotary, ("K_rot",) * f.rotary
    heads = ("Q", *rot_q, "K", "V", *_AFTER)
    kv = ("K", "V", *rot_k) if f.any else ()
    grads = not f.any if backward is None else backward
    if f.separate_kv:
        return Layout(heads, kv, ("Q", *rot_q, *_AFTER), kv, ("M",) * f.windowed, grads)
    return Layout(heads, kv, heads, (), ("M",) * f.windowed, grads)


__all__ = [
    "FINAL_STEPS",
    "GRAD_HEAD_STEPS",
    "GRAD_KV_STEPS",
    "GRAD_STEPS",
    "HEAD_STEPS",
    "ROPE_BASE",
    "Layout",
    "ProblemTrace",
    "layout",
    "problem_trace",
]
