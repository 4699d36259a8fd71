r"""The steps of today's attention as a chain of stages in interval arithmetic: grouped-query
attention (``gqa``), a causal sliding window (``window``) and rotary positions (``rope``).

The chain of `attention_ref.worked.steps`, with the stages a variant adds. Query heads
:math:`i = 1..h`, K/V heads :math:`j = 1..g` (:math:`g = h` but for ``gqa``), a head of width
:math:`d_k`:

.. math::
    Q^{(i)} = X W_Q^{(i)},\quad K^{(j)} = X W_K^{(j)},\quad V^{(j)} = X W_V^{(j)},\qquad
    \gamma(i) = \lfloor i\,g/h \rfloor

    \text{RoPE:}\quad x'_{2p} = x_{2p}\cos m\theta_p - x_{2p+1}\sin m\theta_p,\quad
    x'_{2p+1} = x_{2p}\sin m\theta_p + x_{2p+1}\cos m\theta_p,\quad
    \theta_p = 10000^{-2p/d_k}

    S^{(i)} = \frac{Q^{(i)}_{\text{rot}} K^{(\gamma(i))\top}_{\text{rot}}}{\sqrt{d_k}},\quad
    A^{(i)} = \operatorname{softmax}(S^{(i)} + M),\quad H^{(i)} = A^{(i)} V^{(\gamma(i))},\quad
    \text{output} = [H^{(1)} \mid \dots \mid H^{(h)}]\, W_O

with :math:`M` the causal mask, or the sliding window's :math:`M^{\text{win}}_{tu} = 0` where
:math:`0 \le t - u < w` and :math:`-\infty` elsewhere; without RoPE, :math:`x_{\text{rot}} = x`.

The steps' names are ``attnref explain --format json``'s for the variant examples: per query
head ``Q``, ``Q_rot``, ``K`` and ``V`` (the key and value that head reads: its group's, rotated
with RoPE), ``scores``, ``S``, ``S_masked``, ``A``, ``H``; per K/V head (``"kv_heads"`` in an
answer, keys ``("kv.K", j)`` here) ``K``, ``V``, ``K_rot``. The cosines and sines of the angles
are a stage of their own (``("cos", None)``, ``("sin", None)``), which the statement prints:
rounded as asked, like every step, so that a student who uses the printed values is carried.
The rotation is monotone in nothing, so its enclosure is the products' (``Iv.__mul__``).

The reference is `attention_ref.reference.gqa.grouped_query_attention` (with
``rope_base`` and the window's ``M``); with ``decimals=None`` the chain computes its numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import torch
from torch import Tensor

from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.reference import windows
from attention_ref.worked.steps import Data, Env, Iv, Stage, StageFn

#: The variants an exercise can ask (``mha``, the homework's, is `attention_ref.worked.steps`).
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


# --- the rotation on intervals -------------------------------------------------------------------


def _cols(x: Iv, index: slice) -> Iv:
    return Iv(x.lo[:, index], x.hi[:, index])


def rotate(x: Iv, cos: Iv, sin: Iv, *, halves: bool = False) -> Iv:
    r"""Each pair of every row turned by its angle, on intervals:
    :math:`x'_a = x_a \cos\phi - x_b \sin\phi,\ x'_b = x_a \sin\phi + x_b \cos\phi`.

    The pairs are RoFormer's :math:`(a, b) = (2p, 2p + 1)`; with ``halves``, Hugging Face's
    ``rotate_half`` layout :math:`(p, p + d/2)`. ``x``: ``(n, d)``; ``cos``, ``sin``:
    ``(n, d/2)``.
    """
    d = x.shape[-1]
    if halves:
        a, b = _cols(x, slice(0, d // 2)), _cols(x, slice(d // 2, d))
    else:
        a, b = _cols(x, slice(0, d, 2)), _cols(x, slice(1, d, 2))
    ra = a * cos - b * sin
    rb = a * sin + b * cos
    if halves:
        return Iv.cat([ra, rb])
    # (n, d/2) twice -> (n, d/2, 2) -> (n, d): back to x_0, x_1, x_2, …
    return Iv(torch.stack((ra.lo, rb.lo), -1).flatten(-2), torch.stack((ra.hi, rb.hi), -1)
              .flatten(-2))  # fmt: skip


def query_name(d: Data) -> str:
    """The queries the scores read: ``Q_rot`` with RoPE, else ``Q``."""
    return "Q_rot" if _rope(d) else "Q"


def key_name(d: Data) -> str:
    """The K/V heads' keys the query heads read: ``kv.K_rot`` with RoPE, else ``kv.K``."""
    return "kv.K_rot" if _rope(d) else "kv.K"


def _rope(d: Data) -> bool:
    return bool(getattr(d.trace, "rope", False))


def _kv_count(d: Data) -> int:
    return int(d.trace.g)  # type: ignore[union-attr]


def _project(role: str) -> StageFn:
    """``X W⁽ⁱ⁾`` for the head's (``Q``) or the K/V head's (``K``, ``V``) weight."""

    def fn(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        return Iv.point(d.trace.X) @ Iv.point(getattr(d.trace, f"W_{role}")[i])

    return fn


def _turn(source: str) -> StageFn:
    """``source`` rotated by RoPE, with the cosines and sines carried."""
    return lambda d, e, i: rotate(e[source, i], e["cos", None], e["sin", None])


def read_group(source: str) -> StageFn:
    """What query head ``i`` reads of the K/V heads: ``source`` of its group γ(i)."""

    def fn(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        return e[source, d.trace.group(i)]  # type: ignore[union-attr]

    return fn


def _scores(d: Data, e: Env, i: int | None) -> Iv:
    return e[query_name(d), i] @ e["K", i].T


def _s_masked(d: Data, e: Env, i: int | None) -> Iv:
    S = e["S", i]
    return S.fill(torch.isinf(d.trace.M), -math.inf) if d.trace.M is not None else S


def _output(d: Data, e: Env, i: int | None) -> Iv:
    concat = e["concat", None]
    return concat @ Iv.point(d.trace.W_O) if d.trace.W_O is not None else concat


FORWARD: Final[tuple[Stage, ...]] = (
    # the statement's table first: a mistake may rotate what comes after it (V, with RoPE)
    Stage("cos", False, lambda d, e, i: Iv.point(torch.cos(d.trace.angles)),  # type: ignore[union-attr]
          present=_rope),
    Stage("sin", False, lambda d, e, i: Iv.point(torch.sin(d.trace.angles)),  # type: ignore[union-attr]
          present=_rope),
    Stage("Q", True, _project("Q")),
    Stage("kv.K", True, _project("K"), count=_kv_count),
    Stage("kv.V", True, _project("V"), count=_kv_count),
    Stage("Q_rot", True, _turn("Q"), present=_rope),
    Stage("kv.K_rot", True, _turn("kv.K"), present=_rope, count=_kv_count),
    Stage("K", True, lambda d, e, i: read_group(key_name(d))(d, e, i)),
    Stage("V", True, read_group("kv.V")),
    Stage("scores", True, _scores),
    Stage("S", True, lambda d, e, i: e["scores", i] / math.sqrt(d.trace.d_k)),
    Stage("S_masked", True, _s_masked),
    Stage("A", True, lambda d, e, i: e["S_masked", i].softmax_rows()),
    Stage("H", True, lambda d, e, i: e["A", i] @ e["V", i]),
    Stage("concat", False, lambda d, e, i: Iv.cat([e["H", j] for j in range(d.trace.h)])),
    Stage("output", False, _output),
)  # fmt: skip


@dataclass(frozen=True)
class Layout:
    """The steps an answer to a variant holds: the names accepted per query head (under
    ``"heads"``) and per K/V head (``"kv_heads"``), and those its template asks."""

    heads: tuple[str, ...]
    kv_heads: tuple[str, ...]
    template_heads: tuple[str, ...]
    template_kv_heads: tuple[str, ...]


_AFTER: Final = ("scores", "S", "S_masked", "A", "H")
#: Per variant: what ``answer.json`` asks, in explain's JSON names.
LAYOUTS: Final[dict[str, Layout]] = {
    # the K/V heads once each, then every query head with what it computes
    "gqa": Layout(("Q", "K", "V", *_AFTER), ("K", "V"), ("Q", *_AFTER), ("K", "V")),
    # g = h: the homework's names
    "window": Layout(("Q", "K", "V", *_AFTER), ("K", "V"), ("Q", "K", "V", *_AFTER), ()),
    # explain's rope names: K_rot beside K, V on the K/V heads; Q_rot beside Q
    "rope": Layout(("Q", "Q_rot", "K", "V", *_AFTER), ("K", "V", "K_rot"),
                   ("Q", "Q_rot", *_AFTER), ("K", "V", "K_rot")),
}  # fmt: skip


__all__ = ["FORWARD", "LAYOUTS", "ROPE_BASE", "VARIANTS", "Layout", "VariantTrace", "key_name",
           "query_name", "read_group", "rotate", "variant_trace"]  # fmt: skip
