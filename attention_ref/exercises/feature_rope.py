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
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.exercises.reproduce import Instances
from attention_ref.exercises.words import TEXT, plural
from attention_ref.reference.spec import ROPE_BASE
from attention_ref.render import Mat, Section
from attention_ref.worked.layout import sup
from attention_ref.worked.trace import L


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


#: Its words, per language: what it writes over the homework's (the first feature's win),
#: and its own pieces.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Exercise {seed}: rotary position embeddings (RoPE) by hand",
        "along": "RoPE",
        "data_more": " Rotary position embeddings (RoPE, RoFormer) on the queries and the keys, "
        "not the values: the token at position m (the first m = 0) has each pair of coordinates "
        "(x_2p, x_2p+1), {pairs}, turned by the angle m θ_p, θ_p = 10000^(−2p/d_k): x'_2p = "
        "x_2p cos mθ_p − x_2p+1 sin mθ_p and x'_2p+1 = x_2p sin mθ_p + x_2p+1 cos mθ_p. The "
        "table gives θ_p, m θ_p and their cosines and sines, rounded to {decimals} places: use "
        "them as they are (or more exact ones).",
        "q_rot": "rotations",
        "q_rot_text": "Rotate every row of Q⁽ⁱ⁾{q_each} and {k_of}K{kv}{kv_each} by the angles "
        "of its position: Q_rot⁽ⁱ⁾ and K_rot{kv} (the first token's row does not turn). V is "
        "not rotated.",
        "q": "Q_rot",
        "k": "K_rot",
        "compares": "compares",
        "q_word": "rotated query",
        "against": "with",
        "k_word": "rotated key",
        "depends": "it depends on the positions only through t − u. ",
        "q5_more": " The scores read Q_rot and K_rot: the gradient goes back through RoPE's "
        "rotation to reach W_Q.",
        "dq": "∂Q⁽ⁱ⁾ = ∂Q_rot⁽ⁱ⁾ turned back through RoPE (below), with ∂Q_rot⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ "
        "K_rot / √d_k",
        "key_q5_more": " The rotation of row m is orthogonal (q'_m = q_m R_mᵀ), so ∂q_m = ∂q'_m "
        "R_m: each pair of ∂Q_rot⁽ⁱ⁾ turned back by −mθ_p gives ∂Q⁽ⁱ⁾, and ∂K comes from ∂K_rot "
        "= ∂S̃⁽ⁱ⁾ᵀ Q_rot⁽ⁱ⁾ / √d_k the same way.",
        "table": "RoPE's angles",
        "pair": "pair {p}",
        "sin": "sin",
        "row": "{token} (m = {m})",
        "key_rot": "d_k = {d_k}: {pairs} pair{s} of coordinates, θ_p = 10000^(−2p/d_k). Each "
        "row m of Q and K turns by its own angles (the first token, m = 0, does not turn); V "
        "does not turn. A rotation keeps lengths: every row keeps its norm.",
        "names_kv_note": "head i's key, value and rotated key, as attnref explain names them",
    },
    "pt": {
        "title": "Exercício {seed}: embeddings de posição rotativos (RoPE) à mão",
        "along": "RoPE",
        "data_more": " Embeddings de posição rotativos (RoPE, RoFormer) nas consultas e nas "
        "chaves, não nos valores: o token na posição m (o primeiro tem m = 0) tem cada par de "
        "coordenadas (x_2p, x_2p+1), {pairs}, girado pelo ângulo m θ_p, θ_p = 10000^(−2p/d_k): "
        "x'_2p = x_2p cos mθ_p − x_2p+1 sen mθ_p e x'_2p+1 = x_2p sen mθ_p + x_2p+1 cos mθ_p. A "
        "tabela dá θ_p, m θ_p e os seus cossenos e senos, arredondados com {decimals} casas: "
        "use-os como estão (ou valores mais exatos).",
        "q_rot": "rotações",
        "q_rot_text": "Gire cada linha de Q⁽ⁱ⁾{q_each} e de K{kv}{kv_each} pelos ângulos da sua "
        "posição: Q_rot⁽ⁱ⁾ e K_rot{kv} (a linha do primeiro token não gira). V não é girado.",
        "q": "Q_rot",
        "k": "K_rot",
        "compares": "compara",
        "q_word": "consulta girada",
        "against": "com",
        "k_word": "chave girada",
        "depends": "ela só depende das posições pela diferença t − u. ",
        "q5_more": " Os scores leem Q_rot e K_rot: o gradiente volta pela rotação do RoPE para "
        "chegar a W_Q.",
        "dq": "∂Q⁽ⁱ⁾ = ∂Q_rot⁽ⁱ⁾ girado de volta pelo RoPE (abaixo), com ∂Q_rot⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ "
        "K_rot / √d_k",
        "key_q5_more": " A rotação da linha m é ortogonal (q'_m = q_m R_mᵀ), logo ∂q_m = ∂q'_m "
        "R_m: cada par de ∂Q_rot⁽ⁱ⁾ girado de volta por −mθ_p dá ∂Q⁽ⁱ⁾, e ∂K vem de ∂K_rot = "
        "∂S̃⁽ⁱ⁾ᵀ Q_rot⁽ⁱ⁾ / √d_k do mesmo jeito.",
        "table": "Os ângulos do RoPE",
        "pair": "par {p}",
        "sin": "sen",
        "row": "{token} (m = {m})",
        "key_rot": "d_k = {d_k}: {pairs} par{es} de coordenadas, θ_p = 10000^(−2p/d_k). Cada "
        "linha m de Q e de K gira pelos seus próprios ângulos (o primeiro token, m = 0, não "
        "gira); V não gira. Uma rotação preserva comprimentos: cada linha mantém a sua norma.",
        "names_kv_note": "a chave, o valor e a chave girada da cabeça i, com os nomes de attnref "
        "explain",
    },
}  # fmt: skip


# --- its numbers in the statement and the key ---------------------------------------------------


def angle_mats(tr: ProblemTrace, lang: str) -> list[Mat]:
    r"""RoPE's table: :math:`\theta_p`, :math:`m\theta_p`, their cosines and sines."""
    w = WORDS[lang]
    pairs = [w["pair"].format(p=p) for p in range(tr.d_k // 2)]
    rows = [w["row"].format(token=tok, m=m) for m, tok in enumerate(tr.tokens)]
    sin, turns = w["sin"], (np.cos(tr.angles), np.sin(tr.angles))
    return [
        Mat(symbol="\\theta", text="θ_p", value=L(tr.theta), cols=pairs),
        Mat(symbol="m \\theta_p", text="m θ_p", value=L(tr.angles), rows=rows, cols=pairs),
        *(
            Mat(symbol=f"{sym} m\\theta_p", text=f"{t} mθ_p", value=L(v), rows=rows, cols=pairs)
            for sym, t, v in zip(
                ("\\cos", f"\\operatorname{{{sin}}}"), ("cos", sin), turns, strict=True
            )
        ),
    ]


def rotated_mats(tr: ProblemTrace, ref: Any, lang: str) -> list[Mat]:
    """``Q_rot`` per query head, ``K_rot`` per K/V head."""
    tok, rows = list(tr.tokens), TEXT[lang]["row_by_row"]
    return [
        Mat(
            symbol=f"{x}_{{\\text{{rot}}}}{sup(i)}",
            value=L(rot[i]),
            rows=tok,
            formula=f"{x}{sup(i)} R_m^\\top",
            formula_text=f"{x}^({i + 1}) R_mᵀ, {rows}",
        )
        for x, heads, rot in (("Q", tr.h, ref.Q_rot), ("K", tr.g, ref.K_rot))
        for i in range(heads)
    ]


class Rotary(Feature):
    """``rope`` (module docstring)."""

    name = "rope"
    separate_kv = True  # the rotated key K_rot is the K/V head's
    query_steps = ("Q_rot",)
    kv_steps = ("K_rot",)
    stages = STAGES
    kinds = ROPE_KINDS
    words = WORDS
    questions = (("q2", "q_rot"),)  # the rotations, before the scores read them
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

    def fields(self, opt: Any, lang: str) -> dict[str, object]:
        d_k = opt.d_k
        return {"pairs": f"p = 0 … {d_k // 2 - 1}" if d_k > 2 else "p = 0"}

    def data_sections(self, tr: Any, lang: str) -> list[Any]:
        return [Section(title=WORDS[lang]["table"], items=angle_mats(tr, lang))]

    def key_answer(self, name: str, tr: Any, numbers: Any, lang: str) -> tuple[str, list[Any]]:
        pairs = tr.d_k // 2
        text = WORDS[lang]["key_rot"].format(d_k=tr.d_k, pairs=pairs, **plural(pairs))
        return text, rotated_mats(tr, numbers, lang)

    def problem_json(self, opt: Any) -> dict[str, Any]:
        return {"rope": {"base": ROPE_BASE, "positions": list(range(opt.tokens))}}

    def trace_fields(self, n: int, h: int, value: object) -> dict[str, Any]:
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
