r"""ALiBi as an exercise's feature (``alibi``): each head adds to its scores a penalty that grows
with the distance back to the key, one slope per head (Press, Smith and Lewis, 2022):

.. math::
    B^{(i)}_{tu} = -m_i\,(t - u),\qquad m_i = 2^{-8i/h},\qquad
    \tilde S^{(i)} = S^{(i)} + B^{(i)} + M

(the paper's rule where :math:`h` is not a power of 2:
`attention_ref.reference.spec.alibi_slopes`, the reference's too). The answer writes ``B``
per query head, a full :math:`n \times n` matrix (positive above the diagonal, where the
causal mask hides it); the bias is a constant, so the backward is the homework's
(:math:`\partial S = \partial \tilde S`).

Its mistakes: no bias (``alibi_no_bias``), the wrong sign (``alibi_wrong_sign``), the slopes in
the reverse order of the heads (``alibi_slopes_reversed``), the distance counted from the first
token, :math:`-m_i u` (``alibi_from_start``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

import numpy as np

from attention_ref.exercises.chain import Data, Iv, Stage, StageFn
from attention_ref.exercises.features import Feature, OptionError
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.mistakes import Kind, Mistake, one, single_token
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.reference.spec import alibi_slopes
from attention_ref.render import Mat, said
from attention_ref.worked.layout import sup
from attention_ref.worked.trace import L


def distances(n: int) -> Array:
    r""":math:`t - u`, ``(n, n)``: how far key ``u`` is behind query ``t`` (negative: ahead)."""
    return np.arange(n, dtype=np.float64)[:, None] - np.arange(n, dtype=np.float64)[None, :]


def alibi_bias(n: int, h: int) -> Array:
    r"""Every head's bias :math:`B^{(i)}_{tu} = -m_i (t - u)`, ``(h, n, n)``
    (`attention_ref.reference.windows.alibi_bias`, in numpy)."""
    return -np.array(alibi_slopes(h))[:, None, None] * distances(n)


#: Its stage: each head's bias, a step of its own before S̃ (the statement asks to write it).
STAGES: Final[tuple[tuple[str, Stage], ...]] = (
    ("S_masked", Stage("B", True, lambda d, e, i: Iv.point(d.trace.bias[i]))),
)

# --- its mistakes: no bias, the wrong sign, the slopes reversed, the distance from the start ----


def _on(d: Data) -> bool:
    """Whether the problem's scores are biased (a mistake of ALiBi needs them)."""
    return d.trace.bias is not None


def _bias_by(fn: Callable[[Data, int], Array]) -> dict[str, StageFn]:
    """Head ``i``'s bias computed as ``fn(d, i)`` instead."""
    return {"B": lambda d, e, i: Iv.point(fn(d, i or 0))}


def _slope(d: Data, i: int) -> float:
    return alibi_slopes(d.trace.h)[i]


def _positions(n: int) -> Array:
    """Each key's position :math:`u` from the first token, ``(n, n)``: the same on every row."""
    return np.broadcast_to(np.arange(n, dtype=np.float64), (n, n))


def _mistake(fn: Callable[[Data, int], Array], heads: int = 1) -> Callable[..., Iterable[Mistake]]:
    """The bias computed by ``fn``, on a problem with ALiBi and at least ``heads`` heads."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if not _on(d) or d.trace.h < heads:
            return []
        return one(kind, stages=_bias_by(fn))

    return instances


ALIBI_KINDS: Final[tuple[Kind, ...]] = (
    Kind("alibi_no_bias", {
        "en": "no ALiBi bias: S̃ = S + M, the scores not penalized by the distance",
        "pt": "sem o viés do ALiBi: S̃ = S + M, os scores sem a penalidade pela distância",
    }, _mistake(lambda d, i: np.zeros((d.n, d.n))), blind=single_token),
    Kind("alibi_wrong_sign", {
        "en": "ALiBi's bias with the wrong sign: B⁽ⁱ⁾ = +m_i (t − u), a reward for the "
        "distance instead of a penalty",
        "pt": "o viés do ALiBi com o sinal errado: B⁽ⁱ⁾ = +m_i (t − u), um prêmio pela "
        "distância em vez de uma penalidade",
    }, _mistake(lambda d, i: _slope(d, i) * distances(d.n)), blind=single_token),
    Kind("alibi_slopes_reversed", {
        "en": "ALiBi's slopes in the reverse order of the heads: head i took m_(h+1−i) "
        "instead of m_i",
        "pt": "as inclinações do ALiBi na ordem inversa das cabeças: a cabeça i usou "
        "m_(h+1−i) em vez de m_i",
    }, _mistake(lambda d, i: -_slope(d, d.trace.h - 1 - i) * distances(d.n), heads=2),
        blind=single_token),
    Kind("alibi_from_start", {
        "en": "ALiBi's distance counted from the first token: B⁽ⁱ⁾(t, u) = −m_i u instead of "
        "−m_i (t − u)",
        "pt": "a distância do ALiBi contada a partir do primeiro token: B⁽ⁱ⁾(t, u) = −m_i u "
        "em vez de −m_i (t − u)",
    }, _mistake(lambda d, i: -_slope(d, i) * _positions(d.n)), blind=single_token),
)  # fmt: skip

#: Its words, per language: what it writes over the homework's (the first feature's win),
#: and its own pieces.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Exercise {seed}: attention with linear biases (ALiBi){with} by hand",
        "along": "ALiBi",
        "data_more": " ALiBi (attention with linear biases): head i adds B⁽ⁱ⁾(t, u) = "
        "−m_i (t − u) to its scores, a penalty that grows with the distance from query t back "
        "to key u, with one slope per head, m_i = 2^(−8i/h) (the paper's rule where h is not a "
        "power of 2): {slopes}.",
        "q_bias": "biases",
        "q_bias_text": "Write B⁽ⁱ⁾ ({n}×{n}) for each head i: B⁽ⁱ⁾(t, u) = −m_i (t − u), for "
        "every t and u (above the diagonal it is positive, and the mask hides it).",
        "plus_b": " + B⁽ⁱ⁾",
        "key_bias": "Each head's bias is its slope times minus the distance: 0 on the "
        "diagonal, −m_i one token back, −2 m_i two back, …; the head with the largest slope "
        "penalizes the distance the most.",
        "slopes_sep": ", ",
    },
    "pt": {
        "title": "Exercício {seed}: atenção com vieses lineares (ALiBi){with} à mão",
        "along": "ALiBi",
        "data_more": " ALiBi (atenção com vieses lineares): a cabeça i soma B⁽ⁱ⁾(t, u) = "
        "−m_i (t − u) aos seus scores, uma penalidade que cresce com a distância da consulta t "
        "até a chave u, com uma inclinação por cabeça, m_i = 2^(−8i/h) (a regra do artigo "
        "quando h não é potência de 2): {slopes}.",
        "q_bias": "vieses",
        "q_bias_text": "Escreva B⁽ⁱ⁾ ({n}×{n}) para cada cabeça i: B⁽ⁱ⁾(t, u) = −m_i (t − u), "
        "para todo t e u (acima da diagonal ele é positivo, e a máscara o esconde).",
        "plus_b": " + B⁽ⁱ⁾",
        "key_bias": "O viés de cada cabeça é a sua inclinação vezes menos a distância: 0 na "
        "diagonal, −m_i um token atrás, −2 m_i dois atrás, …; a cabeça de maior inclinação é a "
        "que mais penaliza a distância.",
        "slopes_sep": "; ",
    },
}  # fmt: skip


class Biased(Feature):
    """``alibi`` (module docstring)."""

    name = "alibi"
    score_steps = ("B",)
    stages = STAGES
    kinds = ALIBI_KINDS
    words = WORDS
    questions = (("q3", "q_bias"),)  # the biases, before the mask and the softmax add them
    kinds_words = {  # noqa: RUF012
        "en": "ALiBi's bias left out, its sign, its slopes in the reverse order of the heads, "
        "the distance counted from the first token",
        "pt": "o viés do ALiBi esquecido, o seu sinal, as suas inclinações na ordem inversa "
        "das cabeças, a distância contada a partir do primeiro token",
    }

    def checked(self, opt: Any) -> object:
        if not opt.causal:
            raise OptionError(
                {
                    "en": "--variant alibi adds its biases to the causal mask: leave out "
                    "--no-causal",
                    "pt": "--variant alibi soma os seus vieses à máscara causal: tire --no-causal",
                }
            )
        return None

    def fields(self, opt: Any, lang: str) -> dict[str, object]:
        slopes = (
            f"m_{i} = {said(m, '.10g', lang)}" for i, m in enumerate(alibi_slopes(opt.heads), 1)
        )
        return {"slopes": WORDS[lang]["slopes_sep"].join(slopes)}

    def key_answer(self, name: str, tr: Any, numbers: Any, lang: str) -> tuple[str, list[Any]]:
        tok = list(tr.tokens)
        items = [
            Mat(symbol=f"B{sup(i)}", value=L(tr.bias[i]), rows=tok, cols=tok) for i in range(tr.h)
        ]
        return WORDS[lang]["key_bias"], items

    def key_json(self, tr: Any, data: dict[str, Any]) -> dict[str, Any]:
        """Each head's ``"B"`` after its ``"S"``, and the slopes."""
        heads = []
        for i, head in enumerate(data["heads"]):
            items = list(head.items())
            at = [k for k, _ in items].index("S") + 1
            heads.append(dict([*items[:at], ("B", L(tr.bias[i])), *items[at:]]))
        return data | {"heads": heads, "alibi": {"slopes": alibi_slopes(tr.h)}}

    def problem_json(self, opt: Any) -> dict[str, Any]:
        return {"alibi": {"slopes": alibi_slopes(opt.heads)}}

    def trace_fields(self, n: int, h: int, value: object) -> dict[str, Any]:
        return {"bias": alibi_bias(n, h), "added": ("B",)}

    def in_trace(self, trace: ProblemTrace) -> bool:
        return trace.bias is not None


ALIBI = Biased()

__all__ = ["ALIBI", "ALIBI_KINDS", "Biased", "alibi_bias", "distances"]
