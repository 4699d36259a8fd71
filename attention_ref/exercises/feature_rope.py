r"""Rotary position embeddings as an exercise's feature (``rope``): the queries and the keys
turned by their positions, each pair :math:`(2p, 2p+1)` of row :math:`m` by
:math:`m\theta_p`, :math:`\theta_p = 10000^{-2p/d_k}` (RoFormer's pairs,
`attention_ref.reference.rope`). The answer writes ``Q_rot`` per query head and ``K_rot`` per
K/V head; :math:`d_k` must be even.

Its mistakes: the angle of the wrong pair (``rope_wrong_pair``), Hugging Face's
``rotate_half`` pairs :math:`(x_p, x_{p+d/2})` (``rope_half_pairs``), the wrong sign
(``rope_wrong_sign``), V rotated too (``rope_on_V``), the keys or the queries not rotated, the
positions counted from 1. The pairs' two mistakes need two pairs or more (:math:`d_k \ge 4`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Final

import numpy as np

from attention_ref.exercises.backward import queries_read
from attention_ref.exercises.chain import Data, Env, Iv, Stage, StageFn, kv_count, project, rotate
from attention_ref.exercises.features import Feature, OptionError
from attention_ref.exercises.mistakes import LANGS, Kind, Mistake, one, single_token
from attention_ref.exercises.reproduce import Instances
from attention_ref.reference.spec import ROPE_BASE


def _turn(source: str) -> StageFn:
    """``source`` rotated by RoPE, with the cosines and sines carried."""
    return lambda d, e, i: rotate(e[source, i], e["cos", None], e["sin", None])


def turn_back(e: Env, dx_rot: Iv) -> Iv:
    """∂x = ∂x_rot R_m: each pair of row m turned back by −mθ_p, the rotation's transpose (it
    is orthogonal), with the cosines and sines carried."""
    sin = e["sin", None]
    return rotate(dx_rot, e["cos", None], Iv(-sin.hi, -sin.lo))


#: RoPE's stages, each before the homework's it names: the statement's table of cosines and
#: sines first (a mistake may rotate what comes after it: V), then Q and K rotated.
STAGES: Final[tuple[tuple[str, Stage], ...]] = (
    ("Q", Stage("cos", False, lambda d, e, i: Iv.point(np.cos(d.trace.angles)))),
    ("Q", Stage("sin", False, lambda d, e, i: Iv.point(np.sin(d.trace.angles)))),
    ("K", Stage("Q_rot", True, _turn("Q"))),
    ("K", Stage("kv.K_rot", True, _turn("kv.K"), count=kv_count)),
)


def _on(d: Data) -> bool:
    """Whether the problem's Q and K are rotated (a mistake of RoPE needs them)."""
    return d.trace.rope_base is not None


# --- its mistakes: the wrong pair, pairs or sign, V rotated, what is not turned, from 1 ---------


#: ∂Q and ∂K of a student who stops at the rotated ones: ∂Q = ∂Q_rot, ∂K = ∂K_rot (RoPE's
#: rotation not turned back).
NOT_TURNED_BACK: Final[dict[str, StageFn]] = {
    "grad.Q": lambda d, e, i: e["grad.S", i] @ e["K", i] / math.sqrt(d.trace.d_k),
    "grad.K": lambda d, e, i: e["grad.S", i].T @ queries_read(d, e, i) / math.sqrt(d.trace.d_k),
}


#: How a student turns a gradient back through a rotation: ``(∂x_rot, cos, sin) → ∂x``.
TurnBack = Callable[[Iv, Iv, Iv], Iv]


def turned_back_by(q: TurnBack | None, k: TurnBack | None) -> dict[str, StageFn]:
    """∂Q and ∂K of a student who turns ∂Q_rot and ∂K_rot back their own way: ``q`` and ``k``
    map ``(∂x_rot, cos, sin)`` to ∂x (``None``: not turned back, as where that side was not
    rotated). ∂Q_rot = ∂S K_rot / √d_k and ∂K_rot = ∂Sᵀ Q_rot / √d_k as always."""

    def stage(fn: StageFn, back: TurnBack | None) -> StageFn:
        if back is None:
            return fn
        return lambda d, e, i: back(fn(d, e, i), e["cos", None], e["sin", None])

    return {
        "grad.Q": stage(NOT_TURNED_BACK["grad.Q"], q),
        "grad.K": stage(NOT_TURNED_BACK["grad.K"], k),
    }


def turned_back_right() -> dict[str, StageFn]:
    """∂Q and ∂K turned back by RoPE's right angles, :math:`-m\theta_p` from 0, whatever the
    rotation the forward used (its cos and sin at positions counted from 1, say)."""

    def back(dx: Iv, d: Data) -> Iv:
        angles = d.trace.angles
        return rotate(dx, Iv.point(np.cos(angles)), Iv.point(-np.sin(angles)))

    return {
        "grad.Q": lambda d, e, i: back(NOT_TURNED_BACK["grad.Q"](d, e, i), d),
        "grad.K": lambda d, e, i: back(NOT_TURNED_BACK["grad.K"](d, e, i), d),
    }


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
        if not _on(d) or d.trace.d_k // 2 < pairs:
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
        if not _on(d):
            return []
        m = kind.mistake(stages=stages)
        return [m] if back is None else [m, replace(m, stages={**stages, **back}, backward=True)]

    return instances


def rope_on_v(d: Data, kind: Kind) -> Iterable[Mistake]:
    """V rotated too: written rotated on the K/V heads, or only used rotated in H."""
    if not _on(d):
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


ROPE_KINDS: Final[tuple[Kind, ...]] = (
    Kind("rope_wrong_pair", {
        "en": "RoPE with the angle of the wrong pair: pair p turned by the angle of pair "
        "{last} − p (the columns of the cos/sin table in the reverse order) instead of its "
        "own m θ_p",
        "pt": "RoPE com o ângulo do par errado: o par p girou pelo ângulo do par {last} − p "
        "(as colunas da tabela de cos/sen na ordem inversa) em vez do seu m θ_p",
    }, rope_only(lambda x, c, s: rotate(x, flip(c), flip(s)), pairs=2), blind=single_token),
    Kind("rope_half_pairs", {
        "en": "RoPE on the wrong pairs of coordinates: (x_p, x_p+d/2), Hugging Face's "
        "rotate_half layout, instead of RoFormer's (x_2p, x_2p+1)",
        "pt": "RoPE nos pares de coordenadas errados: (x_p, x_p+d/2), o rotate_half do "
        "Hugging Face, em vez dos pares do RoFormer (x_2p, x_2p+1)",
    }, rope_only(lambda x, c, s: rotate(x, c, s, halves=True), pairs=2), blind=single_token),
    Kind("rope_wrong_sign", {
        "en": "RoPE turned the wrong way, by −m θ: x'_2p = x_2p cos + x_2p+1 sin and "
        "x'_2p+1 = −x_2p sin + x_2p+1 cos (x R_m instead of x R_mᵀ)",
        "pt": "RoPE girado no sentido errado, por −m θ: x'_2p = x_2p cos + x_2p+1 sen e "
        "x'_2p+1 = −x_2p sen + x_2p+1 cos (x R_m em vez de x R_mᵀ)",
    }, rope_only(lambda x, c, s: rotate(x, c, neg(s))), blind=single_token),
    Kind("rope_on_V", {
        "en": "RoPE applied to V too: the values rotated like the keys (RoPE turns only the "
        "queries and the keys)",
        "pt": "RoPE aplicado também a V: os valores girados como as chaves (o RoPE gira só as "
        "consultas e as chaves)",
    }, rope_on_v, blind=single_token),
    Kind("rope_keys_not_rotated", {
        "en": "RoPE on the queries only: the keys were not rotated (K_rot = K)",
        "pt": "RoPE só nas consultas: as chaves não foram giradas (K_rot = K)",
    }, rope_stages(
        turned_back_by(TURN_BACK, None), **{"kv.K_rot": lambda d, e, i: e["kv.K", i]}
    ), blind=single_token),
    Kind("rope_queries_not_rotated", {
        "en": "RoPE on the keys only: the queries were not rotated (Q_rot = Q)",
        "pt": "RoPE só nas chaves: as consultas não foram giradas (Q_rot = Q)",
    }, rope_stages(turned_back_by(None, TURN_BACK), Q_rot=lambda d, e, i: e["Q", i]),
        blind=single_token),
    Kind("rope_positions_from_1", {
        "en": "RoPE with the positions counted from 1: the token at position m turned by "
        "(m + 1) θ_p instead of m θ_p (the first token, m = 0, does not turn)",
        "pt": "RoPE com as posições contadas a partir de 1: o token na posição m girou por "
        "(m + 1) θ_p em vez de m θ_p (o primeiro token, m = 0, não gira)",
    }, rope_stages(turned_back_right(), **POSITIONS_FROM_ONE)),
    Kind("rope_grad_not_turned_back", {
        "en": "the gradient not turned back through RoPE: ∂Q = ∂Q_rot and ∂K = ∂K_rot, where "
        "each pair of row m turns back by −mθ_p",
        "pt": "o gradiente não voltou pela rotação do RoPE: ∂Q = ∂Q_rot e ∂K = ∂K_rot, quando "
        "cada par da linha m gira de volta por −mθ_p",
    }, lambda d, kind: one(kind, stages=NOT_TURNED_BACK, backward=True), blind=single_token,
        backward_only=True),
)  # fmt: skip


class Rotary(Feature):
    """``rope`` (module docstring)."""

    name = "rope"
    separate_kv = True  # the rotated key K_rot is the K/V head's
    query_steps = ("Q_rot",)
    kv_steps = ("K_rot",)
    stages = STAGES
    kinds = ROPE_KINDS
    kinds_words = {  # noqa: RUF012
        "en": "RoPE's angle of the wrong pair, its pairs, its sign, its positions, V rotated, "
        "the keys or the queries not rotated",
        "pt": "o ângulo do par errado no RoPE, os seus pares, o seu sinal, as suas posições, "
        "V girado, as chaves ou as consultas não giradas",
    }

    def checked(self, opt: Any) -> object:
        if opt.d_k % 2:
            raise OptionError(
                {
                    "en": "--variant rope turns pairs of coordinates: d_k = d_model / h must be "
                    "even, got d_k = {d} / {h} = {d_k}",
                    "pt": "--variant rope gira pares de "
                    "coordenadas: d_k = d_model / h deve ser par, veio d_k = {d} / {h} = {d_k}",
                },
                d=opt.d_model,
                h=opt.heads,
                d_k=opt.d_k,
            )
        return None

    def problem_json(self, opt: Any) -> dict[str, Any]:
        return {"rope": {"base": ROPE_BASE, "positions": list(range(opt.tokens))}}

    def trace_fields(self, n: int, value: object) -> dict[str, Any]:
        return {
            "rope_base": ROPE_BASE,
            "reads_query": "Q_rot",
            "reads_key": "kv.K_rot",
            "turn_back": turn_back,
        }

    def in_trace(self, trace: Any) -> bool:
        return trace.rope_base is not None


ROPE = Rotary()

__all__ = [
    "NOT_TURNED_BACK",
    "POSITIONS_FROM_ONE",
    "ROPE",
    "ROPE_KINDS",
    "STAGES",
    "TURN_BACK",
    "Rotary",
    "TurnBack",
    "turn_back",
    "turned_back_by",
    "turned_back_right",
]
