r"""A causal sliding window as an exercise's feature (``window``): the causal mask narrowed to
the last :math:`w` keys, :math:`M^{\text{win}}_{tu} = 0` where :math:`0 \le t - u < w`,
:math:`-\infty` elsewhere (`attention_ref.reference.windows.sliding_window_mask`). Its
option is ``--window`` (default 2, or 1 with two tokens); its mask is a step of the answer
(``"M"``).

Its mistakes, for a window of :math:`w` keys: the width off by one, :math:`w + 1` keys
(FlashAttention's ``window_size`` counts the keys *before* the query: ``window_plus_one``) or
:math:`w - 1` (``window_minus_one``); the causal mask (``window_causal``); the band on the
other side of the diagonal (``window_ahead``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from attention_ref.exercises.chain import Data, Iv, Stage, StageFn
from attention_ref.exercises.features import Feature, OptionError
from attention_ref.exercises.mistakes import LANGS, Kind, Mistake, one
from attention_ref.exercises.problem import window_mask
from attention_ref.exercises.reproduce import Instances
from attention_ref.exercises.words import plural
from attention_ref.worked.words_grouped import WINDOW_SYMBOL

#: The window's mask is a step of its own, before S̃: the statement asks to write it.
STAGES: Final[tuple[tuple[str, Stage], ...]] = (
    ("S_masked", Stage("M", False, lambda d, e, i: Iv.point(d.trace.M))),
)


# --- its mistakes: one key too wide or too narrow, the causal mask, the wrong side ------------


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


WINDOW_KINDS: Final[tuple[Kind, ...]] = (
    Kind("window_plus_one", {
        "en": "the window one key too wide: each token saw {keys} ({which}) instead of w = {w}",
        "pt": "a janela uma chave larga demais: cada token viu {keys} ({which}) em vez de "
        "w = {w}",
    }, width(+1)),
    Kind("window_minus_one", {
        "en": "the window one key too narrow: each token saw {keys} ({which}) instead of "
        "w = {w}",
        "pt": "a janela uma chave estreita demais: cada token viu {keys} ({which}) em vez de "
        "w = {w}",
    }, width(-1)),
    Kind("window_causal", {
        "en": "no window: the causal mask, every earlier token seen, instead of the last "
        "w = {w} keys",
        "pt": "sem a janela: a máscara causal, todos os tokens anteriores vistos, em vez das "
        "últimas w = {w} chaves",
    }, window_causal),
    Kind("window_ahead", {
        "en": "the window on the wrong side of the diagonal: each token saw itself and {which}",
        "pt": "a janela do lado errado da diagonal: cada token viu a si mesmo e {which}",
    }, window_ahead),
)  # fmt: skip


#: Its words, per language: what it writes over the homework's (the first feature's win),
#: and its own pieces.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Exercise {seed}: sliding-window attention{with} by hand",
        "along": "a sliding window",
        "data_more": " Sliding window of w = {w} keys: token t sees itself and the {before} "
        "token{bs} before it, and no token after it: M_win(t, u) = 0 where 0 ≤ t − u < w, −∞ "
        "elsewhere.",
        "data_mask": "",
        "q3": "window mask and softmax",
        "q3_text": "Write M_win ({n}×{n}), then compute S̃⁽ⁱ⁾ = S⁽ⁱ⁾{plus_b} + M_win and A⁽ⁱ⁾ = "
        "softmax(S̃⁽ⁱ⁾), row by row.",
        "names_m": '"M" (M_win), ',
        "mask_symbol": WINDOW_SYMBOL["en"],
        "key_mask": "M_win is 0 where 0 ≤ t − u < {w} (token t sees itself and the {before} "
        "before it) and −∞ elsewhere: the future, as in the causal mask, and the keys that are "
        "too old. Each row of A⁽ⁱ⁾ is a distribution over the keys of the window.",
    },
    "pt": {
        "title": "Exercício {seed}: atenção com janela deslizante{with} à mão",
        "along": "janela deslizante",
        "data_more": " Janela deslizante de w = {w} chaves: o token t vê a si mesmo e o{bs} "
        "{before} token{bs} anterior{bes}, e nenhum token depois dele: M_jan(t, u) = 0 onde 0 ≤ "
        "t − u < w, −∞ nas demais entradas.",
        "data_mask": "",
        "q3": "máscara da janela e softmax",
        "q3_text": "Escreva M_jan ({n}×{n}) e calcule S̃⁽ⁱ⁾ = S⁽ⁱ⁾{plus_b} + M_jan e A⁽ⁱ⁾ = "
        "softmax(S̃⁽ⁱ⁾), linha a linha.",
        "names_m": '"M" (M_jan), ',
        "mask_symbol": WINDOW_SYMBOL["pt"],
        "key_mask": "M_jan vale 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e o{bs} "
        "{before} anterior{bes}) e −∞ nas demais entradas: o futuro, como na máscara causal, e "
        "as chaves antigas demais. Cada linha de A⁽ⁱ⁾ é uma distribuição sobre as chaves da "
        "janela.",
    },
}  # fmt: skip


class Windowed(Feature):
    """``window`` (module docstring)."""

    name = "window"
    option = "window"
    top_steps = ("M",)
    kinds = WINDOW_KINDS
    words = WORDS
    kinds_words = {  # noqa: RUF012
        "en": "the window's width off by one, no window, the window on the wrong side",
        "pt": "a largura da janela errada por um, sem janela, a janela do lado errado",
    }
    #: the window's wrong side is window_ahead, not the causal mask's wrong triangle
    drops = frozenset({"mask_wrong_triangle"})
    stages = STAGES
    #: the window's mask, as the statement names it (``jan``ela in Portuguese)
    step_words = {"en": {"M": "M_win"}, "pt": {"M": "M_jan"}}  # noqa: RUF012

    def checked(self, opt: Any) -> object:
        if not opt.causal:
            raise OptionError(
                {
                    "en": "--variant window is a causal sliding window: leave out --no-causal",
                    "pt": "--variant window é uma janela deslizante causal: tire --no-causal",
                }
            )
        if opt.tokens < 2:
            raise OptionError(
                {
                    "en": "--variant window needs at least 2 tokens (--tokens) "
                    "for a window narrower than the causal mask",
                    "pt": "--variant "
                    "window precisa de ao menos 2 tokens (--tokens) para uma "
                    "janela mais estreita que a máscara causal",
                }
            )
        w = opt.window if opt.window is not None else min(2, opt.tokens - 1)
        if not 1 <= w < opt.tokens:
            raise OptionError(
                {
                    "en": "--window must be between 1 and n - 1 = {n1} keys (w >= n is the "
                    "causal mask: --variant mha), got {w}",
                    "pt": "--window deve estar entre 1 "
                    "e n - 1 = {n1} chaves (w >= n é a máscara causal: --variant mha), veio "
                    "{w}",
                },
                n1=opt.tokens - 1,
                w=w,
            )
        return w

    def fields(self, opt: Any, lang: str) -> dict[str, object]:
        before = opt.window - 1  # the keys a token sees before itself
        return {"w": opt.window, "before": before} | {"b" + k: v for k, v in plural(before).items()}

    def key_json(self, tr: Any, data: dict[str, Any]) -> dict[str, Any]:
        return data | {"window": tr.window}

    def problem_json(self, opt: Any) -> dict[str, Any]:
        return {"window": opt.window}

    def trace_fields(self, n: int, h: int, value: object) -> dict[str, Any]:
        if value is None:
            raise ValueError("a sliding window needs its width w")
        w = int(value)  # type: ignore[call-overload]
        return {"M": window_mask(n, w), "window": w}

    def in_trace(self, trace: Any) -> bool:
        return trace.window is not None


WINDOW = Windowed()

__all__ = [
    "STAGES",
    "WINDOW",
    "WINDOW_KINDS",
    "Windowed",
    "width",
    "window_ahead",
    "window_causal",
]
