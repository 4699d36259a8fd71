"""The worked examples of today's attention in Portuguese: the words of each step.

The Portuguese pages show the English pages' worked examples (`attnref explain -e …`): the
same matrices, told in Portuguese (`attention_ref.book.pages.example` with ``words=``). Each
function here gives an example's words, step by step, every number computed from the same
trace and the same functions as the English words; `attention_ref.book.pages.translated`
refuses words that do not carry the English step's numbers, so a number the English example
gains or changes fails the Portuguese page's build.

GQA, RoPE, windows and ALiBi, and the helpers every example's words share, are in
`attention_ref.book.worked_pt_variants`; the KV cache, the online softmax and the backward
pass are here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import torch

from attention_ref.book.pages import Words
from attention_ref.book.worked_pt_variants import (
    Step,
    alibi_words,
    forward_steps,
    gqa_words,
    groups_words,
    num_pt,
    rope_words,
    window_words,
)

if TYPE_CHECKING:
    from attention_ref import reference as ref
    from attention_ref.render import Explanation

__all__ = [
    "Step",
    "alibi_words",
    "backward_words",
    "forward_steps",
    "gqa_words",
    "groups_words",
    "kv_cache_words",
    "online_softmax_words",
    "rope_words",
    "window_words",
    "words_of",
]


def words_of(expl: Explanation) -> Words:
    """An explanation written in another language (``explain(lang)``) as the `Words` of its
    steps: the English example's matrices stay, and `attention_ref.book.pages.translated`
    still checks that each step carries the English step's numbers."""
    return Words(
        lang=expl.lang, source=expl.source, steps=[(s.title, s.text) for s in expl.sections]
    )


def kv_cache_words() -> Words:
    """`attnref explain -e kv-cache` in Portuguese: the example's own writer, in its
    Portuguese words (`attention_ref.worked.words.KV_CACHE`)."""
    from attention_ref.worked.life_kv_cache import explain

    return words_of(explain("pt"))


def online_softmax_words() -> Words:
    """`attnref explain -e online-softmax` in Portuguese: the example's own writer, in its
    Portuguese words (`attention_ref.worked.words.ONLINE_SOFTMAX`), and the words inside its
    matrices' LaTeX."""
    from attention_ref.worked.life_online_softmax import explain
    from attention_ref.worked.words import ONLINE_SOFTMAX as WORDS

    so_far = {r"\text{" + WORDS["en"]["so_far"] + "}": r"\text{" + WORDS["pt"]["so_far"] + "}"}
    return replace(words_of(explain("pt")), math=so_far)


def _sup(i: int) -> str:
    """Head ``i`` (0-based) as the superscript the words write: ``⁽¹⁾`` for head 0."""
    return "⁽" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(i + 1)) + "⁾"


def backward_words(tr: ref.AttentionTrace | None = None, source: str | None = None) -> Words:
    """The backward steps of `attnref explain -e life-is-awesome --backward` (L = Σ saída) in
    Portuguese: the words of `attention_ref.worked.gradients.gradient_sections`; ``tr``: another
    trace with a ``W_O`` and the causal mask (an exercise's), ``source`` its source line."""
    from attention_ref.reference import attention_backward
    from attention_ref.worked.life_is_awesome import life_trace

    tr = life_trace() if tr is None else tr
    g = attention_backward(tr)
    n = tr.X.shape[-2]
    sums = float(g.S_masked.sum(dim=-1).abs().max())
    rows = (
        f"Cada linha de ∂S̃⁽ⁱ⁾ soma 0 (maior |soma de uma linha| {num_pt(sums, '.1e')}): a softmax "
        "ignora um deslocamento da sua linha."
        if sums < 1e-9
        else ""
    )
    rows += "".join(
        f" Na cabeça {i + 1} cada linha de ∂A{_sup(i)} tem entradas iguais, então "
        f"∂S̃{_sup(i)} = 0 (maior |entrada| "
        f"{num_pt(float(g.S_masked[..., i, :, :].abs().max()), '.1e')}): nenhum gradiente chega "
        "ao seu Q e ao seu K com este G."
        for i in range(tr.h)
        if float((g.A[..., i, :, :] - g.A[..., i, :, :1]).abs().max()) < 1e-12
    )
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
    masked = g.S_masked[..., blocked]
    zeros, total = int((masked == 0).sum()), masked.numel()
    if zeros == total:
        softmax = (
            "As entradas mascaradas têm A = 0 exatamente e a fórmula multiplica por A, então as "
            f"{total} entradas acima da diagonal são exatamente 0: nenhum gradiente chega à "
            "chave de um token futuro pelos scores. " + rows
        )
    else:
        softmax = f"{zeros} das {total} entradas acima da diagonal são exatamente 0. " + rows
    assert tr.W_O is not None and tr.M is not None  # the example's: a W_O, the causal mask
    steps: list[Step] = [
        (
            "Retropropagação: o gradiente que chega, G = ∂L/∂saída",
            "L = Σ saída, a soma de todas as entradas da saída, então G = ∂L/∂saída é toda de uns "
            "(--grad-output ARQUIVO dá outro G). Cada ∂Z abaixo é ∂L/∂Z, uma matriz do formato "
            "de Z.",
        ),
        (
            "Projeção de saída: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
            "A saída é Concat · W_O (+ b_O): um produto de matrizes, cujo gradiente é um produto "
            "pelo outro fator transposto.",
        ),
        (
            "Para dentro das cabeças e através de H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ⁱ⁾ᵀ, "
            "∂V⁽ⁱ⁾ = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾",
            "∂H⁽ⁱ⁾ é o bloco de d_v colunas da cabeça i em ∂Concat (a concatenação só moveu "
            "números). A linha j dos valores recebe o gradiente de cada token que a olha, "
            "ponderado por A.",
        ),
        ("Retropropagação da softmax: ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))", softmax),
        (
            f"Máscara e escala: ∂S⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾, ∂Q⁽ⁱ⁾ = ∂S⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k, "
            f"∂K⁽ⁱ⁾ = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k, com d_k = {tr.d_k}",
            "M é uma constante, então ∂S = ∂S̃; a escala 1/√d_k divide o gradiente como dividiu "
            "os scores. A consulta t recebe de cada chave que comparou, a chave j de cada "
            "consulta.",
        ),
        (
            "Pesos: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ⁱ⁾ = Xᵀ ∂K⁽ⁱ⁾, ∂W_V⁽ⁱ⁾ = Xᵀ ∂V⁽ⁱ⁾",
            "A linha r de ∂W é Σ_t X_tr ∂Q_t: o gradiente de cada token, ponderado pela sua "
            "entrada. Na visão fundida (seeds 001/002) ∂W_Q = [∂W_Q⁽¹⁾ | … | ∂W_Q⁽ʰ⁾], as cabeças "
            "lado a lado.",
        ),
        (
            "Entrada: ∂X = ∂X_Q + ∂X_K + ∂X_V, a soma dos seus três caminhos",
            "X entra três vezes (consultas, chaves, valores); pela regra da cadeia o seu gradiente "
            "é a soma dos gradientes pelos três caminhos.",
        ),
    ]
    d_model = int(tr.X.shape[-1])
    if source is None:
        source = (
            f"seed 000, lista de MAE5911, Questão 01 (d_model = {d_model}, h = {tr.h}, "
            f"máscara causal, W_O = I_{int(tr.W_O.shape[-1])})"
        )
    return Words(lang="pt", source=source, steps=steps)
