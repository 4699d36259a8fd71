r"""The one catalogue of mistakes ``attnref check`` can name, and the generator avoids hiding.

Each entry (`attention_ref.exercises.mistakes.Kind`) is a name, its words in English and
Portuguese, how to reproduce it (`attention_ref.exercises.reproduce`) and the problems it
applies to, by their features (`attention_ref.exercises.features`: ``g < h``, a window, RoPE;
none is the homework's masked multi-head attention). `catalogue_of` gives each problem's view
of the one table, in its order; `CATALOGUE` is the homework's, `CATALOGUES` the presets'.

**Grouped-query attention** (``gqa``): query head :math:`i` (0-based) reads K/V head
:math:`\gamma(i) = \lfloor i / r \rfloor`, :math:`r = h/g`: consecutive query heads share one
(``repeat_interleave``, PyTorch's ``enable_gqa``, Llama's ``repeat_kv``). Students repeat the
K/V heads the other way, in turn, :math:`i \bmod g` (``K.repeat``'s order 1, 2, 1, 2:
``gqa_interleaved``), or give every query head the first K/V head (``gqa_one_kv``).

**Sliding window** of :math:`w` keys (``window``): the width off by one, :math:`w + 1` keys
(FlashAttention's ``window_size`` counts the keys *before* the query: ``window_plus_one``) or
:math:`w - 1` (``window_minus_one``); the causal mask (``window_causal``); the band on the
other side of the diagonal (``window_ahead``).

**RoPE** (``rope``): the angle of the wrong pair (``rope_wrong_pair``), Hugging Face's
``rotate_half`` pairs :math:`(x_p, x_{p+d/2})` (``rope_half_pairs``), the wrong sign
(``rope_wrong_sign``), V rotated too (``rope_on_V``), the keys or the queries not rotated, the
positions counted from 1. The pairs' two mistakes need two pairs or more (:math:`d_k \ge 4`).

`mistakes_for` keeps the mistakes that change something on a problem (the grader's
candidates); `hidden` lists those that change no asked step (the generator draws again).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Final

from attention_ref.exercises import reproduce as r
from attention_ref.exercises import reproduce_today as rt
from attention_ref.exercises.backward import (
    NOT_TURNED_BACK,
    carried_back,
    turned_back_by,
    turned_back_right,
)
from attention_ref.exercises.chain import FORWARD, Data, Iv, Key, Stage, rotate, run_chain
from attention_ref.exercises.features import PRESETS, Features
from attention_ref.exercises.mistakes import (
    LANGS,
    Kind,
    Mistake,
    Style,
    changes_something,
    num,
    one,
    sup,
)


#: Which problems an entry applies to, by their features (`Kind.applies`).
def _every(f: Features) -> bool:
    return True


def _grouped(f: Features) -> bool:
    return f.grouped


def _windowed(f: Features) -> bool:
    return f.windowed


def _rotary(f: Features) -> bool:
    return f.rotary


def _unwindowed(f: Features) -> bool:
    """No window: its wrong side is `window_ahead`, not the mask's wrong triangle."""
    return not f.windowed


def _ungrouped(f: Features) -> bool:
    """``g = h``: with shared K/V heads, a query head's relabelled K and V are its group's
    read another way (`gqa_interleaved`)."""
    return not f.grouped


def _single_token(d: Data) -> bool:
    """One token: every score, mask and softmax mistake gives the same 1 × 1 numbers."""
    return int(d.trace.X.shape[0]) == 1


GQA_KINDS: Final[tuple[Kind, ...]] = (
    Kind("gqa_interleaved", {
        "en": "the K/V heads repeated in the wrong order: query heads 1 to {h} read K/V heads "
        "{wrong} (i mod g, in turn: the order of K.repeat) instead of {right} (each K/V head "
        "shared by {r} consecutive query heads)",
        "pt": "as cabeças K/V repetidas na ordem errada: as cabeças de consulta 1 a {h} leram "
        "as cabeças K/V {wrong} (i mod g, alternadas: a ordem de K.repeat) em vez de {right} "
        "(cada cabeça K/V compartilhada por {r} cabeças de consulta consecutivas)",
    }, rt.interleaved, _grouped),
    Kind("gqa_one_kv", {
        "en": "every query head read K/V head 1, as in multi-query attention, instead of its "
        "group's: K/V heads {right} for query heads 1 to {h}",
        "pt": "toda cabeça de consulta leu a cabeça K/V 1, como na atenção multi-consulta, em "
        "vez da do seu grupo: cabeças K/V {right} para as cabeças de consulta 1 a {h}",
    }, rt.one_kv, _grouped),
)  # fmt: skip

WINDOW_KINDS: Final[tuple[Kind, ...]] = (
    Kind("window_plus_one", {
        "en": "the window one key too wide: each token saw {keys} ({which}) instead of w = {w}",
        "pt": "a janela uma chave larga demais: cada token viu {keys} ({which}) em vez de "
        "w = {w}",
    }, rt.width(+1), _windowed),
    Kind("window_minus_one", {
        "en": "the window one key too narrow: each token saw {keys} ({which}) instead of "
        "w = {w}",
        "pt": "a janela uma chave estreita demais: cada token viu {keys} ({which}) em vez de "
        "w = {w}",
    }, rt.width(-1), _windowed),
    Kind("window_causal", {
        "en": "no window: the causal mask, every earlier token seen, instead of the last "
        "w = {w} keys",
        "pt": "sem a janela: a máscara causal, todos os tokens anteriores vistos, em vez das "
        "últimas w = {w} chaves",
    }, rt.window_causal, _windowed),
    Kind("window_ahead", {
        "en": "the window on the wrong side of the diagonal: each token saw itself and {which}",
        "pt": "a janela do lado errado da diagonal: cada token viu a si mesmo e {which}",
    }, rt.window_ahead, _windowed),
)  # fmt: skip

ROPE_KINDS: Final[tuple[Kind, ...]] = (
    Kind("rope_wrong_pair", {
        "en": "RoPE with the angle of the wrong pair: pair p turned by the angle of pair "
        "{last} − p (the columns of the cos/sin table in the reverse order) instead of its "
        "own m θ_p",
        "pt": "RoPE com o ângulo do par errado: o par p girou pelo ângulo do par {last} − p "
        "(as colunas da tabela de cos/sen na ordem inversa) em vez do seu m θ_p",
    }, rt.rope_only(lambda x, c, s: rotate(x, rt.flip(c), rt.flip(s)), pairs=2), _rotary,
        _single_token),
    Kind("rope_half_pairs", {
        "en": "RoPE on the wrong pairs of coordinates: (x_p, x_p+d/2), Hugging Face's "
        "rotate_half layout, instead of RoFormer's (x_2p, x_2p+1)",
        "pt": "RoPE nos pares de coordenadas errados: (x_p, x_p+d/2), o rotate_half do "
        "Hugging Face, em vez dos pares do RoFormer (x_2p, x_2p+1)",
    }, rt.rope_only(lambda x, c, s: rotate(x, c, s, halves=True), pairs=2), _rotary,
        _single_token),
    Kind("rope_wrong_sign", {
        "en": "RoPE turned the wrong way, by −m θ: x'_2p = x_2p cos + x_2p+1 sin and "
        "x'_2p+1 = −x_2p sin + x_2p+1 cos (x R_m instead of x R_mᵀ)",
        "pt": "RoPE girado no sentido errado, por −m θ: x'_2p = x_2p cos + x_2p+1 sen e "
        "x'_2p+1 = −x_2p sen + x_2p+1 cos (x R_m em vez de x R_mᵀ)",
    }, rt.rope_only(lambda x, c, s: rotate(x, c, rt.neg(s))), _rotary, _single_token),
    Kind("rope_on_V", {
        "en": "RoPE applied to V too: the values rotated like the keys (RoPE turns only the "
        "queries and the keys)",
        "pt": "RoPE aplicado também a V: os valores girados como as chaves (o RoPE gira só as "
        "consultas e as chaves)",
    }, rt.rope_on_v, _rotary, _single_token),
    Kind("rope_keys_not_rotated", {
        "en": "RoPE on the queries only: the keys were not rotated (K_rot = K)",
        "pt": "RoPE só nas consultas: as chaves não foram giradas (K_rot = K)",
    }, rt.rope_stages(
        turned_back_by(rt.TURN_BACK, None), **{"kv.K_rot": lambda d, e, i: e["kv.K", i]}
    ), _rotary, _single_token),
    Kind("rope_queries_not_rotated", {
        "en": "RoPE on the keys only: the queries were not rotated (Q_rot = Q)",
        "pt": "RoPE só nas chaves: as consultas não foram giradas (Q_rot = Q)",
    }, rt.rope_stages(turned_back_by(None, rt.TURN_BACK), Q_rot=lambda d, e, i: e["Q", i]),
        _rotary, _single_token),
    Kind("rope_positions_from_1", {
        "en": "RoPE with the positions counted from 1: the token at position m turned by "
        "(m + 1) θ_p instead of m θ_p (the first token, m = 0, does not turn)",
        "pt": "RoPE com as posições contadas a partir de 1: o token na posição m girou por "
        "(m + 1) θ_p em vez de m θ_p (o primeiro token, m = 0, não gira)",
    }, rt.rope_stages(turned_back_right(), **rt.POSITIONS_FROM_ONE), _rotary),
    Kind("rope_grad_not_turned_back", {
        "en": "the gradient not turned back through RoPE: ∂Q = ∂Q_rot and ∂K = ∂K_rot, where "
        "each pair of row m turns back by −mθ_p",
        "pt": "o gradiente não voltou pela rotação do RoPE: ∂Q = ∂Q_rot e ∂K = ∂K_rot, quando "
        "cada par da linha m gira de volta por −mθ_p",
    }, lambda d, kind: one(kind, stages=NOT_TURNED_BACK, backward=True), _rotary,
        _single_token, backward_only=True),
)  # fmt: skip

#: Every mistake of every problem, in the order the grader tries them (a problem's own first).
ENTRIES: Final[tuple[Kind, ...]] = (
    *GQA_KINDS,
    *WINDOW_KINDS,
    *ROPE_KINDS,
    Kind("no_mask", {
        "en": "no causal mask: S̃ = S, so each token also sees the tokens after it",
        "pt": "sem a máscara causal: S̃ = S, e cada token vê também os tokens depois dele",
    }, r.masked_only(S_masked=lambda d, e, i: e["S", i]), _every, _single_token),
    Kind("mask_wrong_triangle", {
        "en": "the mask on the wrong triangle: −∞ below the diagonal instead of above",
        "pt": "a máscara no triângulo errado: −∞ abaixo da diagonal em vez de acima",
    }, r.masked_only(S_masked=r.wrong_triangle), _unwindowed,
        _single_token),  # the window's wrong side is window_ahead
    Kind("mask_after_softmax", {
        "en": "the mask applied after the softmax (masked weights set to 0, so rows no longer "
        "sum to 1)",
        "pt": "a máscara aplicada depois da softmax (pesos mascarados zerados, e as linhas não "
        "somam mais 1)",
    }, r.after_softmax(zero=True), _every, _single_token),
    Kind("mask_added_after_softmax", {
        "en": "the mask added after the softmax (A = softmax(S) + M)",
        "pt": "a máscara somada depois da softmax (A = softmax(S) + M)",
    }, r.after_softmax(zero=False), _every, _single_token),
    Kind("no_scale", {
        "en": "no scaling: S = Q Kᵀ was not divided by √d_k = {right}",
        "pt": "sem escala: S = Q Kᵀ não foi dividido por √d_k = {right}",
    }, carried_back(lambda d, kind: one(kind, stages={"S": lambda d, e, i: e["scores", i]},
                                          fields=r.right_scale(d))),
        _every, lambda d: d.trace.d_k == 1),
    Kind("scale", {
        "en": "the scores were divided by {names} = {value} instead of √d_k = {right}",
        "pt": "os scores foram divididos por {names} = {value} em vez de √d_k = {right}",
    }, r.scales),
    Kind("softmax_columns", {
        "en": "softmax over the columns instead of the rows (each column of A sums to 1, not "
        "each row)",
        "pt": "softmax pelas colunas em vez das linhas (cada coluna de A soma 1, não cada linha)",
    }, carried_back(lambda d, kind: one(kind, stages={"A": lambda d, e, i: e["S_masked", i].T
                                                        .softmax_rows().T})), _every,
        _single_token),
    Kind("K_Qt", {
        "en": "K Qᵀ instead of Q Kᵀ (the scores transposed)",
        "pt": "K Qᵀ em vez de Q Kᵀ (os scores transpostos)",
    }, carried_back(r.k_qt), _every, _single_token),
    Kind("transposed_W", {
        "en": "a transposed weight: X {sym}ᵀ instead of X {sym}",
        "pt": "um peso transposto: X {sym}ᵀ em vez de X {sym}",
    }, r.transposed_weights, _every, lambda d: d.trace.d_model == 1),
    Kind("transposed_W_O", {
        "en": "a transposed weight: Concat W_Oᵀ instead of Concat W_O",
        "pt": "um peso transposto: Concat W_Oᵀ em vez de Concat W_O",
    }, carried_back(r.transposed_w_o), _every, lambda d: d.trace.d_model == 1),
    *(Kind(f"gave_{role}t", {
        "en": "you gave {sym}ᵀ, the transpose of {sym}, instead of {sym}",
        "pt": "você deu {sym}ᵀ, a transposta de {sym}, em vez de {sym}",
    }, r.gave_transposed(role, *steps), _every,
        lambda d: _single_token(d) and d.trace.d_k == 1)
      for role, steps in (("Q", ("Q", "Q_rot")), ("K", ("kv.K", "kv.K_rot", "K")),
                          ("V", ("kv.V", "V")))),
    Kind("gave_dW_Ot", {
        "en": "you gave (∂W_O)ᵀ, the transpose of ∂W_O, instead of ∂W_O",
        "pt": "você deu (∂W_O)ᵀ, a transposta de ∂W_O, em vez de ∂W_O",
    }, r.gave_transposed("∂W_O", "grad.W_O"), _every, lambda d: d.trace.d_model == 1,
        backward_only=True),
    Kind("heads_swapped", {
        "en": "the heads in the wrong order in the concat: [{order}]",
        "pt": "as cabeças na ordem errada na concatenação: [{order}]",
    }, r.heads_swapped, read=r.swapped_read),
    Kind("other_heads_V", {
        "en": "each head used the other head's V: H⁽¹⁾ = A⁽¹⁾ V⁽²⁾ and H⁽²⁾ = A⁽²⁾ V⁽¹⁾",
        "pt": "cada cabeça usou o V da outra: H⁽¹⁾ = A⁽¹⁾ V⁽²⁾ e H⁽²⁾ = A⁽²⁾ V⁽¹⁾",
    }, r.other_heads_v),
    Kind("no_W_O", {
        "en": "W_O forgotten: the output given is the concat",
        "pt": "W_O esquecida: a saída dada é a concatenação",
    }, r.no_w_o),
    # on the concat and the output alone, it is heads_swapped; in grouped-query attention,
    # a query head's K and V relabelled are its group's read another way (gqa_interleaved)
    Kind("heads_relabelled", {
        "en": "the heads in another order in your answer: its list of heads and the concat "
        "hold [{order}]",
        "pt": "as cabeças em outra ordem na sua resposta: a lista de cabeças e a "
        "concatenação trazem [{order}]",
    }, r.heads_relabelled, _ungrouped, given=r.HEAD_STAGES, read=r.relabelled_read),
    Kind("one_hot_A", {
        "en": "A one-hot: 1 at each row's largest score and 0 elsewhere (the argmax, hard "
        "attention) instead of the softmax",
        "pt": "A one-hot: 1 no maior score de cada linha e 0 nas demais (o argmax, atenção "
        "rígida) em vez da softmax",
    }, lambda d, kind: one(kind, stages={"A": lambda d, e, i: r.one_hot(e["S_masked", i])}),
        _every, _single_token),
    Kind("gave_At", {
        "en": "you gave Aᵀ, the transpose of A, instead of A",
        "pt": "você deu Aᵀ, a transposta de A, em vez de A",
    }, lambda d, kind: one(kind, written={"A": lambda v: v.T}), _every, _single_token),
    Kind("At_V", {
        "en": "H = Aᵀ V instead of A V (the weights transposed: each column of A weighted "
        "the values)",
        "pt": "H = Aᵀ V em vez de A V (os pesos transpostos: cada coluna de A ponderou os "
        "valores)",
    }, carried_back(lambda d, kind: one(kind, stages={"H": lambda d, e, i: e["A", i].T
                                                        @ e["V", i]})), _every,
        _single_token),
    Kind("slip", {
        "en": "an arithmetic slip in one entry: {step} at [{row}, {col}] is {yours} where "
        "{right} is right",
        "pt": "um erro de conta em uma entrada: {step} em [{row}, {col}] vale {yours} onde o "
        "certo é {right}",
    }, r.slip),
)  # fmt: skip


@functools.cache
def catalogue_of(f: Features, backward: bool | None = None) -> tuple[Kind, ...]:
    """The entries that apply to a problem of features ``f``, in the grader's order; those of
    the gradients alone where it has a backward (``None``: the homework's attention has one,
    always: an answer may give its gradients; a problem with features, when asked)."""
    backward = not f.any if backward is None else backward
    return tuple(k for k in ENTRIES if k.applies(f) and (backward or not k.backward_only))


#: The presets' catalogues (``mha``, ``gqa``, ``window``, ``rope``): views of `catalogue_of`.
CATALOGUES: Final[dict[str, tuple[Kind, ...]]] = {
    name: catalogue_of(p.features) for name, p in sorted(PRESETS.items())
}
#: The homework's catalogue: the entries that apply to masked multi-head attention.
CATALOGUE: Final = catalogue_of(Features())


def mistakes_for(
    d: Data,
    stages: Sequence[Stage] = FORWARD,
    decimals: int = 3,
    catalogue: Sequence[Kind] = CATALOGUE,
) -> list[Mistake]:
    """The catalogue's mistakes that exist for this problem and change something on it."""
    right = run_chain(d, stages, decimals=decimals, asked=decimals)
    exact = run_chain(d, stages, decimals=None, asked=decimals)
    back = _has_backward(stages)
    return [
        m
        for kind in catalogue
        for m in kind.instances(d, kind)
        if (back or not m.backward) and changes_something(d, m, stages, decimals, right, exact)
    ]


def _has_backward(stages: Sequence[Stage]) -> bool:
    return any(s.name.startswith("grad.") for s in stages)


def _runs(m: Mistake, stages: Sequence[Stage]) -> bool:
    """Whether the mistake changes a stage of ``stages`` (∂W_O written only with the backward)."""
    names = {s.name for s in stages}
    return m.adjust is not None or bool(names & {*m.stages, *m.written})


def mistake_id(m: Mistake) -> str:
    """One mistake of a problem's shape, the same on every draw: its name and English words."""
    return f"{m.name}: {m.words['en']}"


def hidden(
    d: Data,
    stages: Sequence[Stage],
    decimals: int,
    keys: Iterable[Key],
    catalogue: Sequence[Kind],
    *,
    skip: frozenset[str] = frozenset(),
    watch: frozenset[str] = frozenset(),
    first: bool = False,
) -> tuple[list[Mistake], list[Mistake]]:
    """The mistakes of ``catalogue`` this problem hides: each reproduced, written to
    ``decimals`` places, changes none of the asked ``keys`` by more than the grading
    tolerance. Returns those the shape could show (the generator draws again) and those it
    cannot (`Kind.blind`, or `mistake_id` in ``skip``: the statement says so). The mistakes
    in ``watch`` are tried first; with ``first``, the search stops at the first hidden one
    beyond them."""
    right = run_chain(d, stages, decimals=decimals, asked=decimals)
    exact = run_chain(d, stages, decimals=None, asked=decimals)
    asked = list(keys)
    drawn: list[Mistake] = []
    blind: list[Mistake] = []
    tried: list[Mistake] = []
    for kind in catalogue:
        for m in kind.instances(d, kind):
            if m.rank or not _runs(m, stages) or (m.backward and not _has_backward(stages)):
                continue
            (blind if kind.blind(d) or mistake_id(m) in skip else tried).append(m)
    tried.sort(key=lambda m: mistake_id(m) not in watch)  # stable: the catalogue's order
    for m in tried:
        if not changes_something(d, m, stages, decimals, right, exact, keys=asked):
            drawn.append(m)
            if first and mistake_id(m) not in watch:
                break
    return drawn, blind


def mistake_words(name: str, lang: str = "en") -> str:
    """A catalogue entry in a few words: its words up to their colon, fields as "…"; all its
    words where another entry's would read the same (``transposed_W`` and ``transposed_W_O``
    are both "a transposed weight")."""
    import re

    kinds = {k.name: k for k in CATALOGUE}
    for catalogue in CATALOGUES.values():
        kinds |= {k.name: k for k in catalogue if k.name not in kinds}
    if name not in kinds:
        return name

    def head(words: str) -> str:
        return words.split(":")[0] if ":" in words.split("{")[0] else words

    words = kinds[name].words[lang]
    short = head(words)
    if any(head(k.words[lang]) == short for n, k in kinds.items() if n != name):
        short = words
    if m := re.fullmatch(r"gave_(\w+?)t", name):  # gave_Qt: "you gave Qᵀ, …"
        short = short.replace("{sym}", m.group(1))
    return re.sub(r"\{\w+\}", "…", short)


__all__ = [
    "CATALOGUE",
    "CATALOGUES",
    "ENTRIES",
    "GQA_KINDS",
    "LANGS",
    "ROPE_KINDS",
    "WINDOW_KINDS",
    "Iv",
    "Kind",
    "Mistake",
    "Style",
    "catalogue_of",
    "hidden",
    "mistake_id",
    "mistake_words",
    "mistakes_for",
    "num",
    "sup",
]
