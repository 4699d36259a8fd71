r"""How the mistakes of today's attention are reproduced: the changes to the chain for the K/V
groups (read in the wrong order, one K/V head for all), the sliding window (one key too wide or
too narrow, the causal mask instead, the wrong side of the diagonal) and RoPE (the wrong pair,
the wrong pairs of coordinates, the wrong sign, the positions from 1, what it turns).

The homework's mistakes are `attention_ref.exercises.reproduce`'s; both give the `Mistake`
objects that exist on the problem's shape, and
`attention_ref.exercises.mistakes.changes_something` says whether one shows on its numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Final

import numpy as np
from numpy.typing import NDArray

from attention_ref.exercises.backward import TurnBack, turned_back_by
from attention_ref.exercises.chain import Data, Env, Iv, StageFn, key_name, project, rotate
from attention_ref.exercises.mistakes import LANGS, Kind, Mistake, one
from attention_ref.exercises.problem import window_mask
from attention_ref.exercises.reproduce import Instances

# --- grouped-query attention ---------------------------------------------------------------------


def _heads_list(heads: Iterable[int]) -> str:
    return ", ".join(str(j + 1) for j in heads)


def _reads(pick: Callable[[int], int]) -> dict[str, StageFn]:
    """Every query head ``i`` reads K/V head ``pick(i)`` (its K and its V)."""
    return {
        "K": lambda d, e, i: e[key_name(d), pick(i or 0)],
        "V": lambda d, e, i: e["kv.V", pick(i or 0)],
    }


def _group_fields(d: Data, wrong: list[int]) -> dict[str, dict[str, object]]:
    h, g = d.trace.h, d.g
    right = [d.group(i) for i in range(h)]
    return {
        lang: {
            "h": h,
            "g": g,
            "r": h // g,
            "wrong": _heads_list(wrong),
            "right": _heads_list(right),
        }
        for lang in LANGS
    }


def interleaved(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Query head ``i`` reads K/V head ``i mod g`` (needs ``1 < g < h``)."""
    g = d.g
    if not 1 < g < d.trace.h:
        return []
    wrong = [i % g for i in range(d.trace.h)]
    return one(kind, stages=_reads(lambda i: i % g), fields=_group_fields(d, wrong))


def one_kv(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Every query head reads K/V head 1 (needs ``1 < g < h``)."""
    if not 1 < d.g < d.trace.h:
        return []
    return one(kind, stages=_reads(lambda i: 0), fields=_group_fields(d, [0] * d.trace.h))


# --- the sliding window -------------------------------------------------------------------------


def _window(d: Data) -> int | None:
    return d.trace.window


def _masked_by(blocked: NDArray[np.bool_]) -> dict[str, StageFn]:
    """The window's mask ``M`` and ``S̃ = S + M`` with another band ``blocked``."""
    M = np.where(blocked, -np.inf, 0.0)
    return {
        "M": lambda d, e, i: Iv.point(M),
        "S_masked": lambda d, e, i: e["S", i].fill(blocked, float("-inf")),
    }


#: How many keys a query sees, and which, in words: the count, then which for 1, 2 and more.
SEEN_WORDS: Final = {
    "en": (
        "{keys} key{s}",
        "only itself",
        "itself and the 1 before it",
        "itself and the {before} before it",
    ),
    "pt": (
        "{keys} chave{s}",
        "só ele mesmo",
        "ele mesmo e o anterior",
        "ele mesmo e os {before} anteriores",
    ),
}


def _seen(keys: int, lang: str) -> dict[str, str]:
    """``keys`` keys in words: how many (``3 keys``) and which (``itself and the 2 before
    it``, ``only itself``)."""
    count, *which = SEEN_WORDS[lang]
    return {
        "keys": count.format(keys=keys, s="s" * (keys != 1)),
        "which": which[min(keys, 3) - 1].format(before=keys - 1),
    }


def width(delta: int) -> Instances:
    """A window of ``w + delta`` keys, when that is a window (``1 <= w + delta < n``)."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        n, w = d.n, _window(d)
        if w is None or not 1 <= w + delta < n:
            return []
        blocked = np.isinf(window_mask(n, w + delta))
        fields = {lang: {"w": w, **_seen(w + delta, lang)} for lang in LANGS}
        return one(kind, stages=_masked_by(blocked), fields=fields)

    return instances


def window_causal(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The causal mask instead of the window."""
    n, w = d.n, _window(d)
    if w is None:
        return []
    blocked = np.isinf(window_mask(n, n))  # w >= n: the causal mask
    return one(kind, stages=_masked_by(blocked), fields={lang: {"w": w} for lang in LANGS})


def window_ahead(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The band on the other side of the diagonal: token t sees t .. t + w − 1."""
    n, w = d.n, _window(d)
    if w is None:
        return []
    blocked = np.isinf(window_mask(n, w)).T
    k = w - 1
    fields = {
        "en": {
            "which": "the token after it instead of the one before it"
            if k == 1
            else f"the {k} tokens after it instead of the {k} before it"
        },
        "pt": {
            "which": "o token seguinte em vez do anterior"
            if k == 1
            else f"os {k} tokens seguintes em vez dos {k} anteriores"
        },
    }
    return one(kind, stages=_masked_by(blocked), fields=fields)


# --- RoPE ---------------------------------------------------------------------------------------


def flip(x: Iv) -> Iv:
    """The columns in the reverse order (pair p takes pair d/2 − 1 − p's angle)."""
    return Iv(np.flip(x.lo, -1), np.flip(x.hi, -1))


def neg(x: Iv) -> Iv:
    """``−x``."""
    return Iv(-x.hi, -x.lo)


Turn = Callable[[Iv, Iv, Iv], Iv]


def _turned(turn: Turn) -> dict[str, StageFn]:
    """Q and K rotated by ``turn(x, cos, sin)`` instead of RoPE's rotation."""
    return {
        "Q_rot": lambda d, e, i: turn(e["Q", i], e["cos", None], e["sin", None]),
        "kv.K_rot": lambda d, e, i: turn(e["kv.K", i], e["cos", None], e["sin", None]),
    }


def _own_back(turn: Turn) -> TurnBack:
    """The transpose of ``turn`` (each of these turns is a rotation in its own pairs): the same
    turn by the opposite angles, ``turn(∂x_rot, cos, −sin)``."""
    return lambda dx, cos, sin: turn(dx, cos, neg(sin))


#: RoPE's own turn back, by −mθ_p.
TURN_BACK: Final[TurnBack] = _own_back(rotate)


def rope_only(turn: Turn, *, pairs: int = 1) -> Instances:
    """The rotation replaced by ``turn``, when the head has at least ``pairs`` pairs; in the
    backward (a chain with one), the gradients turned back by RoPE's right rotation (the
    chain's own backward) or by the transpose of the student's (`_own_back`)."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if not d.rope or d.trace.d_k // 2 < pairs:
            return []
        last = d.trace.d_k // 2 - 1
        fields = {lang: {"last": last, "theta": f"θ_{last}"} for lang in LANGS}
        m = kind.mistake(stages=_turned(turn), fields=fields)
        back = turned_back_by(_own_back(turn), _own_back(turn))
        return [m, replace(m, stages={**m.stages, **back}, backward=True)]

    return instances


def rope_stages(back: dict[str, StageFn] | None = None, **stages: StageFn) -> Instances:
    """The stages changed, with RoPE; with ``back``, again with those backward stages (the
    gradient turned back the other way a student may: through their own rotation, or the
    right one)."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if not d.rope:
            return []
        m = kind.mistake(stages=stages)
        return [m] if back is None else [m, replace(m, stages={**stages, **back}, backward=True)]

    return instances


def rope_on_v(d: Data, kind: Kind) -> Iterable[Mistake]:
    """V rotated too: written rotated on the K/V heads, or only used rotated in H."""
    if not d.rope:
        return []

    def kv_v(d: Data, e: Env, j: int | None) -> Iv:
        return rotate(project("V")(d, e, j), e["cos", None], e["sin", None])

    def read_v(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        return rotate(e["kv.V", d.group(i)], e["cos", None], e["sin", None])

    return [kind.mistake(stages={"kv.V": kv_v}), kind.mistake(stages={"V": read_v})]


def _from_one(part: str) -> StageFn:
    """cos or sin of the angles at positions counted from 1: ``(m + 1) θ_p``."""

    def fn(d: Data, e: Env, i: int | None) -> Iv:
        angles = d.trace.angles + d.trace.theta
        return Iv.point(np.cos(angles) if part == "cos" else np.sin(angles))

    return fn


#: RoPE's positions counted from 1 (the first token turns too).
POSITIONS_FROM_ONE: Final = {"cos": _from_one("cos"), "sin": _from_one("sin")}


__all__ = [
    "POSITIONS_FROM_ONE",
    "TURN_BACK",
    "flip",
    "interleaved",
    "neg",
    "one_kv",
    "rope_on_v",
    "rope_only",
    "rope_stages",
    "width",
    "window_ahead",
    "window_causal",
]
