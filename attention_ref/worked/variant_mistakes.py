r"""The mistakes ``attnref check`` can name in a variant's exercise: catalogue entries (`Kind`)
over the stages of `attention_ref.worked.variant_steps`, with the grader untouched.

**Grouped-query attention** (``gqa``): query head :math:`i` (0-based) reads K/V head
:math:`\gamma(i) = \lfloor i / r \rfloor`, :math:`r = h/g`: consecutive query heads share one
(``repeat_interleave``, PyTorch's ``enable_gqa``, Llama's ``repeat_kv``). Students repeat the
K/V heads the other way, in turn, :math:`i \bmod g` (``K.repeat(1, r, 1)``'s order 1, 2, 1, 2
instead of ``repeat_interleave``'s 1, 1, 2, 2: ``gqa_interleaved``, a name kept though the
order is not ``repeat_interleave``'s), or give every query head the first K/V head, as
multi-query attention does (``gqa_one_kv``).

**Sliding window** of :math:`w` keys (``window``): :math:`M^{\text{win}}_{tu} = 0` where
:math:`0 \le t - u < w`. The width off by one, :math:`w + 1` keys (counting :math:`w` tokens
*before* the query, as FlashAttention's ``window_size`` does: ``window_plus_one``) or
:math:`w - 1` (``window_minus_one``); the window forgotten, the causal mask
(``window_causal``); the band on the other side of the diagonal (``window_ahead``). When
:math:`w + 1 \ge n`, a window one key too wide is the causal mask: ``window_causal`` names it.

**RoPE** (``rope``): pair :math:`p` of the row at position :math:`m` turns by
:math:`m\theta_p`, :math:`(x_{2p}, x_{2p+1}) \mapsto (x_{2p}\cos - x_{2p+1}\sin,\
x_{2p}\sin + x_{2p+1}\cos)`. Students read the angle of the wrong pair (the table's columns in
the reverse order: ``rope_wrong_pair``), pair the coordinates as Hugging Face's
``rotate_half`` does, :math:`(x_p, x_{p+d/2})` (``rope_half_pairs``), turn the wrong way,
:math:`-m\theta` (:math:`x R_m` for :math:`x R_m^\top`, the row convention's transpose:
``rope_wrong_sign``), rotate V too, as if RoPE were a position embedding added to the token
(``rope_on_V``), or rotate the queries only (``rope_keys_not_rotated``). The pairs' two
mistakes need two pairs or more (:math:`d_k \ge 4`).

Each variant keeps the homework's mistakes that still apply (scaling, softmax direction, mask,
``K Qᵀ``, transposed weights or steps, the heads' order or V, ``W_O``, a slip), the ones that
read the heads' weights rewritten for K/V heads. `variant_chain` gives a variant's
`attention_ref.worked.answer.Chain`: its stages, this catalogue, its answer's layout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import Final

import torch

from attention_ref.reference import windows
from attention_ref.worked.answer import Chain
from attention_ref.worked.mistakes import CATALOGUE, LANGS, Kind, Mistake, sup
from attention_ref.worked.steps import Data, Env, Iv, StageFn
from attention_ref.worked.variant_steps import (
    FORWARD,
    LAYOUTS,
    VARIANTS,
    VariantTrace,
    key_name,
    query_name,
    rotate,
)

#: The homework's mistakes, by name.
MHA: Final[dict[str, Kind]] = {k.name: k for k in CATALOGUE}


def _trace(d: Data) -> VariantTrace:
    assert isinstance(d.trace, VariantTrace)
    return d.trace


def _heads_list(heads: Iterable[int]) -> str:
    return ", ".join(str(j + 1) for j in heads)


# --- grouped-query attention --------------------------------------------------------------------


def _reads(pick: Callable[[int], int]) -> dict[str, StageFn]:
    """Every query head ``i`` reads K/V head ``pick(i)`` (its K and its V)."""
    return {"K": lambda d, e, i: e[key_name(d), pick(i or 0)],
            "V": lambda d, e, i: e["kv.V", pick(i or 0)]}  # fmt: skip


def _group_fields(tr: VariantTrace, wrong: list[int]) -> dict[str, dict[str, object]]:
    right = [tr.group(i) for i in range(tr.h)]
    return {lang: {"h": tr.h, "g": tr.g, "r": tr.h // tr.g, "wrong": _heads_list(wrong),
                   "right": _heads_list(right)} for lang in LANGS}  # fmt: skip


def _interleaved(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Query head ``i`` reads K/V head ``i mod g`` (needs ``1 < g < h``)."""
    tr = _trace(d)
    g = tr.g
    if not 1 < g < tr.h:
        return []
    wrong = [i % g for i in range(tr.h)]
    return [kind.mistake(stages=_reads(lambda i: i % g), fields=_group_fields(tr, wrong))]


def _one_kv(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Every query head reads K/V head 1 (needs ``g > 1``)."""
    tr = _trace(d)
    if tr.g < 2:
        return []
    return [kind.mistake(stages=_reads(lambda i: 0), fields=_group_fields(tr, [0] * tr.h))]


# --- the sliding window -------------------------------------------------------------------------


def _masked_by(blocked: torch.Tensor) -> StageFn:
    return lambda d, e, i: e["S", i].fill(blocked, float("-inf"))


def _seen(keys: int, lang: str) -> dict[str, str]:
    """``keys`` keys in words: how many (``3 keys``) and which (``itself and the 2 before
    it``, ``only itself``)."""
    if lang == "pt":
        count = f"{keys} chave{'s' * (keys != 1)}"
        which = "só ele mesmo" if keys == 1 else f"ele mesmo e os {keys - 1} anteriores"
        if keys == 2:
            which = "ele mesmo e o anterior"
    else:
        count = f"{keys} key{'s' * (keys != 1)}"
        which = "only itself" if keys == 1 else f"itself and the {keys - 1} before it"
    return {"keys": count, "which": which}


def _width(delta: int) -> Callable[[Data, Kind], Iterable[Mistake]]:
    """A window of ``w + delta`` keys, when that is a window (``1 <= w + delta < n``)."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        tr = _trace(d)
        n, w = int(tr.X.shape[0]), tr.window
        if w is None or not 1 <= w + delta < n:
            return []
        blocked = ~windows.window_allowed(n, w + delta)
        fields = {lang: {"w": w, **_seen(w + delta, lang)} for lang in LANGS}
        return [kind.mistake(stages={"S_masked": _masked_by(blocked)}, fields=fields)]

    return instances


def _window_causal(d: Data, kind: Kind) -> Iterable[Mistake]:
    tr = _trace(d)
    n, w = int(tr.X.shape[0]), tr.window
    if w is None:
        return []
    blocked = ~windows.window_allowed(n, n)  # w >= n: the causal mask
    fields = {lang: {"w": w} for lang in LANGS}
    return [kind.mistake(stages={"S_masked": _masked_by(blocked)}, fields=fields)]


def _window_ahead(d: Data, kind: Kind) -> Iterable[Mistake]:
    tr = _trace(d)
    n, w = int(tr.X.shape[0]), tr.window
    if w is None:
        return []
    blocked = ~windows.window_allowed(n, w).T  # token t sees t .. t + w - 1
    k = w - 1
    fields = {
        "en": {"which": "the token after it instead of the one before it" if k == 1
               else f"the {k} tokens after it instead of the {k} before it"},
        "pt": {"which": "o token seguinte em vez do anterior" if k == 1
               else f"os {k} tokens seguintes em vez dos {k} anteriores"},
    }  # fmt: skip
    return [kind.mistake(stages={"S_masked": _masked_by(blocked)}, fields=fields)]


# --- RoPE -------------------------------------------------------------------------------------


def _flip(x: Iv) -> Iv:
    """The columns in the reverse order (pair p takes pair d/2 − 1 − p's angle)."""
    return Iv(x.lo.flip(-1), x.hi.flip(-1))


def _neg(x: Iv) -> Iv:
    return Iv(-x.hi, -x.lo)


Turn = Callable[[Iv, Iv, Iv], Iv]


def _turned(turn: Turn) -> dict[str, StageFn]:
    """Q and K rotated by ``turn(x, cos, sin)`` instead of RoPE's rotation."""
    return {
        "Q_rot": lambda d, e, i: turn(e["Q", i], e["cos", None], e["sin", None]),
        "kv.K_rot": lambda d, e, i: turn(e["kv.K", i], e["cos", None], e["sin", None]),
    }


def _rope_only(
    turn: Turn, *, pairs: int = 1
) -> Callable[[Data, Kind], Iterable[Mistake]]:  # fmt: skip
    """The rotation replaced by ``turn``, when the head has at least ``pairs`` pairs."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        tr = _trace(d)
        if not tr.rope or tr.d_k // 2 < pairs:
            return []
        last = tr.d_k // 2 - 1
        fields = {lang: {"last": last, "theta": f"θ_{last}"} for lang in LANGS}
        return [kind.mistake(stages=_turned(turn), fields=fields)]

    return instances


def _rope_on_V(d: Data, kind: Kind) -> Iterable[Mistake]:
    """V rotated too: written rotated on the K/V heads, or only used rotated in H."""
    if not _trace(d).rope:
        return []

    def kv_V(d: Data, e: Env, j: int | None) -> Iv:
        assert j is not None
        V = Iv.point(d.trace.X) @ Iv.point(d.trace.W_V[j])
        return rotate(V, e["cos", None], e["sin", None])

    def read_V(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        return rotate(e["kv.V", _trace(d).group(i)], e["cos", None], e["sin", None])

    return [kind.mistake(stages={"kv.V": kv_V}), kind.mistake(stages={"V": read_V})]


def _keys_not_rotated(d: Data, kind: Kind) -> Iterable[Mistake]:
    if not _trace(d).rope:
        return []
    return [kind.mistake(stages={"kv.K_rot": lambda d, e, i: e["kv.K", i]})]


# --- the homework's mistakes on K/V heads ---------------------------------------------------------


def _K_Qt(d: Data, kind: Kind) -> Iterable[Mistake]:
    return [kind.mistake(stages={"scores": lambda d, e, i: e["K", i] @ e[query_name(d), i].T})]


def _transposed_weights(d: Data, kind: Kind) -> Iterable[Mistake]:
    """``X W⁽ⁱ⁾ᵀ`` for a square, non-symmetric weight: W_Q of a query head, W_K or W_V of a
    K/V head (square only when ``d_k = d_model``, one head)."""
    tr = _trace(d)
    for role, stage in (("Q", "Q"), ("K", "kv.K"), ("V", "kv.V")):
        W = getattr(tr, f"W_{role}")
        for i in range(W.shape[0]):
            if W.shape[-1] != W.shape[-2] or torch.equal(W[i], W[i].T):
                continue
            symbol = f"W_{role}{sup(i) if W.shape[0] > 1 else ''}"

            def project(d: Data, e: Env, j: int | None, role: str = role, i: int = i) -> Iv:
                W = getattr(d.trace, f"W_{role}")[j]
                return Iv.point(d.trace.X) @ Iv.point(W.T if j == i else W)

            yield kind.mistake(f"transposed_W_{role}", stages={stage: project},
                               fields={lang: {"sym": symbol} for lang in LANGS})  # fmt: skip


def _gave_transposed(symbol: str, *steps: str) -> Callable[[Data, Kind], Iterable[Mistake]]:
    """Every one of ``steps`` (``symbol``'s) written transposed (the computation right)."""
    fields = {lang: {"sym": symbol} for lang in LANGS}
    return lambda d, kind: [kind.mistake(written=dict.fromkeys(steps, lambda v: v.T),
                                         fields=fields)]  # fmt: skip


# --- the catalogues -----------------------------------------------------------------------------

GQA_KINDS: Final[tuple[Kind, ...]] = (
    Kind("gqa_interleaved", {
        "en": "the K/V heads repeated in the wrong order: query heads 1 to {h} read K/V heads "
        "{wrong} (i mod g, in turn: the order of K.repeat) instead of {right} (each K/V head "
        "shared by {r} consecutive query heads)",
        "pt": "as cabeças K/V repetidas na ordem errada: as cabeças de consulta 1 a {h} leram "
        "as cabeças K/V {wrong} (i mod g, alternadas: a ordem de K.repeat) em vez de {right} "
        "(cada cabeça K/V compartilhada por {r} cabeças de consulta consecutivas)",
    }, _interleaved),
    Kind("gqa_one_kv", {
        "en": "every query head read K/V head 1, as in multi-query attention, instead of its "
        "group's: K/V heads {right} for query heads 1 to {h}",
        "pt": "toda cabeça de consulta leu a cabeça K/V 1, como na atenção multi-consulta, em "
        "vez da do seu grupo: cabeças K/V {right} para as cabeças de consulta 1 a {h}",
    }, _one_kv),
)  # fmt: skip

WINDOW_KINDS: Final[tuple[Kind, ...]] = (
    Kind("window_plus_one", {
        "en": "the window one key too wide: each token saw {keys} ({which}) instead of w = {w}",
        "pt": "a janela uma chave larga demais: cada token viu {keys} ({which}) em vez de "
        "w = {w}",
    }, _width(+1)),
    Kind("window_minus_one", {
        "en": "the window one key too narrow: each token saw {keys} ({which}) instead of "
        "w = {w}",
        "pt": "a janela uma chave estreita demais: cada token viu {keys} ({which}) em vez de "
        "w = {w}",
    }, _width(-1)),
    Kind("window_causal", {
        "en": "no window: the causal mask, every earlier token seen, instead of the last "
        "w = {w} keys",
        "pt": "sem a janela: a máscara causal, todos os tokens anteriores vistos, em vez das "
        "últimas w = {w} chaves",
    }, _window_causal),
    Kind("window_ahead", {
        "en": "the window on the wrong side of the diagonal: each token saw itself and {which}",
        "pt": "a janela do lado errado da diagonal: cada token viu a si mesmo e {which}",
    }, _window_ahead),
)  # fmt: skip

ROPE_KINDS: Final[tuple[Kind, ...]] = (
    Kind("rope_wrong_pair", {
        "en": "RoPE with the angle of the wrong pair: pair p turned by the angle of pair "
        "{last} − p (the columns of the cos/sin table in the reverse order) instead of its "
        "own m θ_p",
        "pt": "RoPE com o ângulo do par errado: o par p girou pelo ângulo do par {last} − p "
        "(as colunas da tabela de cos/sen na ordem inversa) em vez do seu m θ_p",
    }, _rope_only(lambda x, c, s: rotate(x, _flip(c), _flip(s)), pairs=2)),
    Kind("rope_half_pairs", {
        "en": "RoPE on the wrong pairs of coordinates: (x_p, x_p+d/2), Hugging Face's "
        "rotate_half layout, instead of RoFormer's (x_2p, x_2p+1)",
        "pt": "RoPE nos pares de coordenadas errados: (x_p, x_p+d/2), o rotate_half do "
        "Hugging Face, em vez dos pares do RoFormer (x_2p, x_2p+1)",
    }, _rope_only(lambda x, c, s: rotate(x, c, s, halves=True), pairs=2)),
    Kind("rope_wrong_sign", {
        "en": "RoPE turned the wrong way, by −m θ: x'_2p = x_2p cos + x_2p+1 sin and "
        "x'_2p+1 = −x_2p sin + x_2p+1 cos (x R_m instead of x R_mᵀ)",
        "pt": "RoPE girado no sentido errado, por −m θ: x'_2p = x_2p cos + x_2p+1 sen e "
        "x'_2p+1 = −x_2p sen + x_2p+1 cos (x R_m em vez de x R_mᵀ)",
    }, _rope_only(lambda x, c, s: rotate(x, c, _neg(s)))),
    Kind("rope_on_V", {
        "en": "RoPE applied to V too: the values rotated like the keys (RoPE turns only the "
        "queries and the keys)",
        "pt": "RoPE aplicado também a V: os valores girados como as chaves (o RoPE gira só as "
        "consultas e as chaves)",
    }, _rope_on_V),
    Kind("rope_keys_not_rotated", {
        "en": "RoPE on the queries only: the keys were not rotated (K_rot = K)",
        "pt": "RoPE só nas consultas: as chaves não foram giradas (K_rot = K)",
    }, _keys_not_rotated),
)  # fmt: skip

#: The homework's mistakes rewritten for the variants' steps (K/V heads, rotated queries).
REWRITTEN: Final[tuple[Kind, ...]] = (
    Kind("K_Qt", MHA["K_Qt"].words, _K_Qt),
    Kind("transposed_W", MHA["transposed_W"].words, _transposed_weights),
    Kind("gave_Qt", MHA["gave_Qt"].words, _gave_transposed("Q", "Q", "Q_rot")),
    Kind("gave_Kt", MHA["gave_Kt"].words, _gave_transposed("K", "kv.K", "kv.K_rot", "K")),
    Kind("gave_Vt", MHA["gave_Vt"].words, _gave_transposed("V", "kv.V", "V")),
)


def _mha(*names: str) -> tuple[Kind, ...]:
    return tuple(MHA[n] for n in names)


#: The homework's mistakes that apply as they are (they read the steps by their shared names).
_MASKS: Final = ("no_mask", "mask_wrong_triangle", "mask_after_softmax",
                 "mask_added_after_softmax")  # fmt: skip
_AFTER: Final = ("no_scale", "scale", "softmax_columns", "transposed_W_O", "heads_swapped",
                 "other_heads_V", "no_W_O", "slip")  # fmt: skip

#: Per variant, its catalogue: its own mistakes first, then the homework's that apply.
CATALOGUES: Final[dict[str, tuple[Kind, ...]]] = {
    "gqa": (*GQA_KINDS, *_mha(*_MASKS), *REWRITTEN, *_mha(*_AFTER)),
    # the window's wrong triangle is window_ahead, in the window's words
    "window": (*WINDOW_KINDS, *_mha(*(m for m in _MASKS if m != "mask_wrong_triangle")),
               *REWRITTEN, *_mha(*_AFTER)),
    "rope": (*ROPE_KINDS, *_mha(*_MASKS), *REWRITTEN, *_mha(*_AFTER)),
}  # fmt: skip


@cache
def variant_chain(name: str) -> Chain:
    """The chain of a variant: its stages, its catalogue, the steps its answer holds."""
    if name not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {name!r}")
    return Chain(name, FORWARD, CATALOGUES[name], LAYOUTS[name])


__all__ = ["CATALOGUES", "GQA_KINDS", "REWRITTEN", "ROPE_KINDS", "WINDOW_KINDS",
           "variant_chain"]  # fmt: skip
