r"""The problem model of an exercise: attention with ``h`` query heads sharing ``g`` K/V heads,
a mask (causal, none, or a sliding window of ``w`` keys) and positions (none, or RoPE).

The homework's masked multi-head attention is the preset :math:`g = h`, causal, no rotation
(its trace is the reference's `attention_ref.reference.AttentionTrace`); today's variants are
``gqa`` (:math:`g < h`), ``window`` and ``rope`` (`VariantTrace`, from
`attention_ref.reference.gqa.grouped_query_attention` with ``rope_base`` and the window's
``M``: :math:`M^{\text{win}}_{tu} = 0` where :math:`0 \le t - u < w`, :math:`-\infty`
elsewhere). One chain computes them all (`attention_ref.exercises.chain`); `Layout` says
which steps an answer to each holds, in the names of ``attnref explain --format json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from torch import Tensor

from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.reference import windows

#: Today's variants an exercise can ask (beside ``mha``, the homework's).
VARIANTS: Final = ("gqa", "window", "rope")
#: RoFormer's base, the one `attention_ref.reference.rope` uses.
ROPE_BASE: Final = ref_rope.DEFAULT_BASE


@dataclass(frozen=True)
class VariantTrace:
    """A variant's problem and its reference computation (`ref_gqa.GQATrace`), with the names
    the chain and the catalogue read (``h``, ``g``, ``d_k``, ``M``, ``W_O`` …; no biases)."""

    variant: str
    ref: ref_gqa.GQATrace
    window: int | None = None

    # no biases: the exercises' layers have none (the homework's stages read them)
    @property
    def b_Q(self) -> None:
        return None

    @property
    def b_K(self) -> None:
        return None

    @property
    def b_V(self) -> None:
        return None

    @property
    def b_O(self) -> None:
        return None

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.ref.tokens

    @property
    def X(self) -> Tensor:
        return self.ref.X

    @property
    def W_Q(self) -> Tensor:
        """``(h, d_model, d_k)``."""
        return self.ref.W_Q

    @property
    def W_K(self) -> Tensor:
        """``(g, d_model, d_k)``."""
        return self.ref.W_K

    @property
    def W_V(self) -> Tensor:
        """``(g, d_model, d_v)``."""
        return self.ref.W_V

    @property
    def W_O(self) -> Tensor | None:
        return self.ref.W_O

    @property
    def M(self) -> Tensor | None:
        """The additive mask: causal, the window's, or ``None``."""
        return self.ref.M

    @property
    def output(self) -> Tensor:
        return self.ref.output

    @property
    def concat(self) -> Tensor:
        return self.ref.concat

    @property
    def h(self) -> int:
        return self.ref.h

    @property
    def g(self) -> int:
        return self.ref.g

    @property
    def d_k(self) -> int:
        return self.ref.d_k

    @property
    def d_v(self) -> int:
        return int(self.ref.V.shape[-1])

    @property
    def d_model(self) -> int:
        return int(self.ref.X.shape[-1])

    @property
    def rope(self) -> bool:
        """Whether Q and K are rotated."""
        return self.ref.rope_base is not None

    @property
    def theta(self) -> Tensor:
        r"""Each pair's frequency :math:`\theta_p = \text{base}^{-2p/d_k}`, ``(d_k/2,)``."""
        return ref_rope.rope_frequencies(self.d_k, self.ref.rope_base or ROPE_BASE)

    @property
    def angles(self) -> Tensor:
        r"""The angles :math:`m\theta_p`, ``(n, d_k/2)``: a row per token, a column per pair."""
        return ref_rope.rope_angles(self.ref.positions, self.theta)

    def group(self, i: int) -> int:
        r"""The K/V head of query head ``i`` (0-based): :math:`\gamma(i)`."""
        return ref_gqa.kv_group(i, self.h, self.g)


def variant_trace(
    variant: str,
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None,
    *,
    causal: bool = True,
    window: int | None = None,
    tokens: tuple[str, ...] | None = None,
) -> VariantTrace:
    """The reference computation of a variant's problem (``W_K``, ``W_V`` with ``g`` heads)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    M = None
    if variant == "window":
        if window is None:
            raise ValueError("the window variant needs its width w")
        M = windows.sliding_window_mask(int(X.shape[-2]), window, dtype=X.dtype)
    tr = ref_gqa.grouped_query_attention(
        X, W_Q, W_K, W_V, W_O, causal=causal, M=M,
        rope_base=ROPE_BASE if variant == "rope" else None, tokens=tokens,
    )  # fmt: skip
    return VariantTrace(variant, tr, window if variant == "window" else None)


@dataclass(frozen=True)
class Layout:
    """The steps an answer to a variant holds: the names accepted per query head (under
    ``"heads"``) and per K/V head (``"kv_heads"``), and those its template asks."""

    heads: tuple[str, ...]
    kv_heads: tuple[str, ...]
    template_heads: tuple[str, ...]
    template_kv_heads: tuple[str, ...]
    #: steps of the whole problem beside ``concat`` and ``output`` (the window's mask ``M``)
    top: tuple[str, ...] = ()


#: The steps of one head, in seed 000's order; the steps after the heads.
HEAD_STEPS: Final = ("Q", "K", "V", "scores", "S", "S_masked", "A", "H")
FINAL_STEPS: Final = ("concat", "output")
#: Gradient names: per head, and of the whole (``"grads"`` of the answer).
GRAD_HEAD_STEPS: Final = ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")
GRAD_STEPS: Final = ("output", "W_O", "b_O", "concat", "X")
_AFTER: Final = ("scores", "S", "S_masked", "A", "H")
#: Per variant: what ``answer.json`` asks, in explain's JSON names.
LAYOUTS: Final[dict[str, Layout]] = {
    # the K/V heads once each, then every query head with what it computes
    "gqa": Layout(("Q", "K", "V", *_AFTER), ("K", "V"), ("Q", *_AFTER), ("K", "V")),
    # g = h: the homework's names
    "window": Layout(("Q", "K", "V", *_AFTER), ("K", "V"), ("Q", "K", "V", *_AFTER), (),
                     ("M",)),
    # explain's rope names: K_rot beside K, V on the K/V heads; Q_rot beside Q
    "rope": Layout(("Q", "Q_rot", "K", "V", *_AFTER), ("K", "V", "K_rot"),
                   ("Q", "Q_rot", *_AFTER), ("K", "V", "K_rot")),
}  # fmt: skip


__all__ = [
    "FINAL_STEPS",
    "GRAD_HEAD_STEPS",
    "GRAD_STEPS",
    "HEAD_STEPS",
    "LAYOUTS",
    "ROPE_BASE",
    "VARIANTS",
    "Layout",
    "VariantTrace",
    "variant_trace",
]
