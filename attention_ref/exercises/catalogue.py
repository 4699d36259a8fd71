r"""The one catalogue of mistakes ``attnref check`` can name, and the generator avoids hiding.

Each entry (`attention_ref.exercises.mistakes.Kind`) is a name, its words in English and
Portuguese, and how to reproduce it (`attention_ref.exercises.reproduce`). The homework's are
here (`HOMEWORK_KINDS`); each feature's are its own
(`attention_ref.exercises.features.Feature.kinds`, in its module: ``feature_gqa``,
``feature_window``, ``feature_rope``), tried first, and a feature may drop a homework's entry
that its own say better (`Feature.drops`). `catalogue_of`
gives each problem's view, in its order; `CATALOGUE` is the homework's, `CATALOGUES` the
presets'.

`mistakes_for` keeps the mistakes that change something on a problem (the grader's
candidates); `hidden` lists those that change no asked step (the generator draws again).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Final

from attention_ref.exercises import reproduce as r
from attention_ref.exercises.backward import carried_back
from attention_ref.exercises.chain import Data, Iv, Key, Stage, run_chain
from attention_ref.exercises.feature_table import TABLE, active
from attention_ref.exercises.features import PRESETS, Features
from attention_ref.exercises.mistakes import (
    LANGS,
    Kind,
    Mistake,
    Style,
    changes_something,
    num,
    one,
    single_token,
    sup,
)

#: The homework's mistakes, in the order the grader tries them, after a problem's features'
#: own (`attention_ref.exercises.features.Feature.kinds`).
HOMEWORK_KINDS: Final[tuple[Kind, ...]] = (
    Kind("no_mask", {
        "en": "no causal mask: S̃ = S, so each token also sees the tokens after it",
        "pt": "sem a máscara causal: S̃ = S, e cada token vê também os tokens depois dele",
    }, r.masked_only(S_masked=lambda d, e, i: e["S", i]), blind=single_token),
    Kind("mask_wrong_triangle", {
        "en": "the mask on the wrong triangle: −∞ below the diagonal instead of above",
        "pt": "a máscara no triângulo errado: −∞ abaixo da diagonal em vez de acima",
    }, r.masked_only(S_masked=r.wrong_triangle), blind=single_token),
    Kind("mask_after_softmax", {
        "en": "the mask applied after the softmax (masked weights set to 0, so rows no longer "
        "sum to 1)",
        "pt": "a máscara aplicada depois da softmax (pesos mascarados zerados, e as linhas não "
        "somam mais 1)",
    }, r.after_softmax(zero=True), blind=single_token),
    Kind("mask_added_after_softmax", {
        "en": "the mask added after the softmax (A = softmax(S) + M)",
        "pt": "a máscara somada depois da softmax (A = softmax(S) + M)",
    }, r.after_softmax(zero=False), blind=single_token),
    Kind("no_scale", {
        "en": "no scaling: S = Q Kᵀ was not divided by √d_k = {right}",
        "pt": "sem escala: S = Q Kᵀ não foi dividido por √d_k = {right}",
    }, carried_back(lambda d, kind: one(kind, stages={"S": lambda d, e, i: e["scores", i]},
                                          fields=r.right_scale(d))),
        blind=lambda d: d.trace.d_k == 1),
    Kind("scale", {
        "en": "the scores were divided by {names} = {value} instead of √d_k = {right}",
        "pt": "os scores foram divididos por {names} = {value} em vez de √d_k = {right}",
    }, r.scales),
    Kind("softmax_columns", {
        "en": "softmax over the columns instead of the rows (each column of A sums to 1, not "
        "each row)",
        "pt": "softmax pelas colunas em vez das linhas (cada coluna de A soma 1, não cada linha)",
    }, carried_back(lambda d, kind: one(kind, stages={"A": lambda d, e, i: e["S_masked", i].T
                                                        .softmax_rows().T})), blind=single_token),
    Kind("K_Qt", {
        "en": "K Qᵀ instead of Q Kᵀ (the scores transposed)",
        "pt": "K Qᵀ em vez de Q Kᵀ (os scores transpostos)",
    }, carried_back(r.k_qt), blind=single_token),
    Kind("transposed_W", {
        "en": "a transposed weight: X {sym}ᵀ instead of X {sym}",
        "pt": "um peso transposto: X {sym}ᵀ em vez de X {sym}",
    }, r.transposed_weights, blind=lambda d: d.trace.d_model == 1),
    Kind("transposed_W_O", {
        "en": "a transposed weight: Concat W_Oᵀ instead of Concat W_O",
        "pt": "um peso transposto: Concat W_Oᵀ em vez de Concat W_O",
    }, carried_back(r.transposed_w_o), blind=lambda d: d.trace.d_model == 1),
    *(Kind(f"gave_{role}t", {
        "en": "you gave {sym}ᵀ, the transpose of {sym}, instead of {sym}",
        "pt": "você deu {sym}ᵀ, a transposta de {sym}, em vez de {sym}",
    }, r.gave_transposed(role, *steps), blind=lambda d: single_token(d) and d.trace.d_k == 1)
      for role, steps in (("Q", ("Q", "Q_rot")), ("K", ("kv.K", "kv.K_rot", "K")),
                          ("V", ("kv.V", "V")))),
    Kind("gave_dW_Ot", {
        "en": "you gave (∂W_O)ᵀ, the transpose of ∂W_O, instead of ∂W_O",
        "pt": "você deu (∂W_O)ᵀ, a transposta de ∂W_O, em vez de ∂W_O",
    }, r.gave_transposed("∂W_O", "grad.W_O"), blind=lambda d: d.trace.d_model == 1,
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
    }, r.heads_relabelled, given=r.HEAD_STAGES, read=r.relabelled_read),
    Kind("one_hot_A", {
        "en": "A one-hot: 1 at each row's largest score and 0 elsewhere (the argmax, hard "
        "attention) instead of the softmax",
        "pt": "A one-hot: 1 no maior score de cada linha e 0 nas demais (o argmax, atenção "
        "rígida) em vez da softmax",
    }, lambda d, kind: one(kind, stages={"A": lambda d, e, i: r.one_hot(e["S_masked", i])}),
        blind=single_token),
    Kind("gave_At", {
        "en": "you gave Aᵀ, the transpose of A, instead of A",
        "pt": "você deu Aᵀ, a transposta de A, em vez de A",
    }, lambda d, kind: one(kind, written={"A": lambda v: v.T}), blind=single_token),
    Kind("At_V", {
        "en": "H = Aᵀ V instead of A V (the weights transposed: each column of A weighted "
        "the values)",
        "pt": "H = Aᵀ V em vez de A V (os pesos transpostos: cada coluna de A ponderou os "
        "valores)",
    }, carried_back(lambda d, kind: one(kind, stages={"H": lambda d, e, i: e["A", i].T
                                                        @ e["V", i]})), blind=single_token),
    Kind("slip", {
        "en": "an arithmetic slip in one entry: {step} at [{row}, {col}] is {yours} where "
        "{right} is right",
        "pt": "um erro de conta em uma entrada: {step} em [{row}, {col}] vale {yours} onde o "
        "certo é {right}",
    }, r.slip),
)  # fmt: skip


#: Every entry of every problem: the features' own, in `FEATURES`' order, then the homework's.
ENTRIES: Final[tuple[Kind, ...]] = (
    *(k for feat in TABLE.values() for k in feat.kinds),
    *HOMEWORK_KINDS,
)


@functools.cache
def catalogue_of(f: Features, backward: bool | None = None) -> tuple[Kind, ...]:
    """The entries that apply to a problem of features ``f``, in the grader's order; those of
    the gradients alone where it has a backward (``None``: the homework's attention has one,
    always: an answer may give its gradients; a problem with features, when asked)."""
    backward = not f.any if backward is None else backward
    on = active(f)
    dropped = {name for feat in on for name in feat.drops}
    entries = (*(k for feat in on for k in feat.kinds), *HOMEWORK_KINDS)
    return tuple(k for k in entries if k.name not in dropped and (backward or not k.backward_only))


#: The presets' catalogues (``mha``, ``gqa``, ``window``, ``rope``): views of `catalogue_of`.
CATALOGUES: Final[dict[str, tuple[Kind, ...]]] = {
    name: catalogue_of(p.features) for name, p in sorted(PRESETS.items())
}
#: The homework's catalogue: the entries that apply to masked multi-head attention.
CATALOGUE: Final = catalogue_of(Features())


def mistakes_for(
    d: Data,
    stages: Sequence[Stage] | None = None,
    decimals: int = 3,
    catalogue: Sequence[Kind] = CATALOGUE,
) -> list[Mistake]:
    """The catalogue's mistakes that exist for this problem and change something on it
    (``stages``: the problem's forward by default)."""
    stages = d.forward if stages is None else stages
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
    "HOMEWORK_KINDS",
    "LANGS",
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
