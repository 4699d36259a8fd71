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

import math
from typing import TYPE_CHECKING

import torch

from attention_ref.book.pages import Words
from attention_ref.book.worked_pt_variants import (
    Step,
    alibi_words,
    forward_steps,
    gqa_words,
    groups_words,
    listed_pt,
    num_pt,
    rope_words,
    window_words,
)

if TYPE_CHECKING:
    from attention_ref import reference as ref
    from attention_ref.reference import online_softmax as osm

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
]


def kv_cache_words() -> Words:
    """`attnref explain -e kv-cache` in Portuguese."""
    from attention_ref.worked import life_is_awesome as life
    from attention_ref.worked.life_kv_cache import PROMPT, check_section, decode

    _, step = decode()
    tok = list(life.LIFE_TOKENS)
    prompt, new = tok[:PROMPT], tok[PROMPT]
    h, d_out = int(step.q.shape[-3]), int(step.output.shape[-1])
    _, data = check_section(step)
    row_gap, all_gap = data["row_difference"], data["all_rows_difference"]
    doc_gap, per_token = data["document_difference"], data["cache_numbers_per_token"]
    assert isinstance(row_gap, float) and isinstance(all_gap, float)
    assert isinstance(doc_gap, float) and isinstance(per_token, int)
    n = len(tok)
    words = []
    if row_gap < 1e-12:
        words.append(
            f"y_t é igual à linha t = {PROMPT} da saída da seed 000 (posições contadas a partir "
            f"de 0: a sua última linha; maior diferença {num_pt(row_gap, '.1e')}; a lista a "
            f"imprime com 3 casas decimais, com diferença de até {num_pt(doc_gap, '.1e')})."
        )
    else:
        words.append(
            f"y_t NÃO é a linha t = {PROMPT} da saída da seed 000 ({num_pt(row_gap, '.1e')})."
        )
    if all_gap < 1e-12:
        words.append(
            f"Decodificar os {n} tokens um de cada vez a partir de um cache vazio dá cada linha "
            f"da passada causal completa (maior diferença {num_pt(all_gap, '.1e')})."
        )
    length = step.cache.length
    words.append(
        f"O cache guarda 2 · h · d_k = {per_token} números por token nesta camada: os {length} "
        f"tokens ocupam {per_token * length}."
    )
    steps = [
        (
            f'Preenchimento: o cache do prompt "{" ".join(prompt)}"',
            f"As chaves e os valores do prompt, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ e V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ para os seus "
            f"{PROMPT} tokens, um bloco por cabeça: é isto que o cache guarda.",
        ),
        (
            f'Decodificar "{new}" (t = {step.position}): só o token novo é projetado',
            "q_t = x_t W_Q⁽ⁱ⁾, k_t = x_t W_K⁽ⁱ⁾, v_t = x_t W_V⁽ⁱ⁾: uma linha de cada, por cabeça. "
            "O prompt não é projetado de novo.",
        ),
        (
            "Anexar: K⁽ⁱ⁾ ← [K⁽ⁱ⁾; k_t⁽ⁱ⁾], V⁽ⁱ⁾ ← [V⁽ⁱ⁾; v_t⁽ⁱ⁾]",
            f"A chave e o valor novos vão para baixo dos guardados: agora o cache tem {length} "
            "tokens.",
        ),
        (
            "Uma linha de atenção: s_t = q_t Kᵀ / √d_k, a_t = softmax(s_t), h_t = a_t V",
            "Sem máscara: cada chave do cache está no passado do token novo (ou é o próprio "
            "token), que é o que a máscara causal permitia na sua linha.",
        ),
        (
            "Concatenação e projeção de saída: y_t = Concat(h_t⁽¹⁾ | … | h_t⁽ʰ⁾) W_O",
            f"W_O = I_{d_out}, então y_t é a concatenação.",
        ),
        ("Verificação: os mesmos números da passada causal completa", " ".join(words)),
    ]
    return Words(
        lang="pt",
        source=f"os números da seed 000 (h = {h}, W_O = I_{d_out}), gerados um token de cada vez",
        steps=steps,
    )


def _tile_words(step: osm.TileStep, prev_m: torch.Tensor, tok: list[str]) -> str:
    """`attention_ref.worked.life_online_softmax`'s words of one tile, in Portuguese."""
    S = step.S_j  # (h, n, b)
    words = []
    for r, name in enumerate(tok):
        masked = torch.isneginf(S[:, r, :])  # (h, b)
        if bool(masked.all()):
            words.append(
                f"'{name}' não vê nenhuma chave deste bloco (todas −∞): P_j = 0, α = 1 (o seu "
                "máximo não se move), ℓ e O ficam como estavam."
            )
        elif bool(masked.any()):
            words.append(
                f"O bloco termina dentro da máscara para '{name}': as suas chaves mascaradas "
                "dão P_j = 0."
            )
        for i in range(S.shape[0]):
            before, after = float(prev_m[i, r, 0]), float(step.m[i, r, 0])
            if math.isfinite(before) and after > before:
                words.append(
                    f"Cabeça {i + 1}, '{name}': o máximo cresce de {num_pt(before, '.3f')} para "
                    f"{num_pt(after, '.3f')}, então α = e^(m − m') = "
                    f"{num_pt(float(step.alpha[i, r, 0]), '.3f')} encolhe o que foi somado antes."
                )
    return " ".join(words)


def online_softmax_words() -> Words:
    """`attnref explain -e online-softmax` in Portuguese."""
    from attention_ref.worked.life_online_softmax import TILE, end_section, online_trace

    seed, trace = online_trace()
    tok = list(seed.tokens)
    h, d_out = int(trace.Q.shape[0]), int(seed.output.shape[-1])
    tiles = [tok[s.start : s.stop] for s in trace.steps]
    listed = "; ".join(
        f"o bloco {j} é {listed_pt([repr(w) for w in keys])}" for j, keys in enumerate(tiles, 1)
    ).replace('"', "'")
    steps: list[Step] = [
        (
            f"Entradas: Q⁽ⁱ⁾, K⁽ⁱ⁾, V⁽ⁱ⁾ da seed 000, lidas em blocos de {TILE} chaves",
            f"As chaves e os valores são lidos {TILE} de cada vez: {listed}. A matriz n × n de "
            "scores nunca é formada: os scores S_j de cada bloco são usados e descartados. M_j são "
            "as colunas do bloco j da máscara causal.",
        ),
    ]
    prev_m = torch.full_like(trace.m, -math.inf)
    for j, (step, keys) in enumerate(zip(trace.steps, tiles, strict=True), start=1):
        start = "Antes do primeiro bloco m = −∞, ℓ = 0, O = 0 em cada linha. " if j == 1 else ""
        steps.append(
            (f"Bloco {j}: chaves {', '.join(keys)}", start + _tile_words(step, prev_m, tok))
        )
        prev_m = step.m
    _, data = end_section(seed, trace)
    gap = data["difference"]
    assert isinstance(gap, float)
    end = (
        "Depois do último bloco, uma divisão por linha. H⁽ⁱ⁾ é igual às saídas das cabeças da "
        f"seed 000 (maior diferença {num_pt(gap, '.1e')}), então a saída é a da lista."
        if gap < 1e-12
        else f"H⁽ⁱ⁾ NÃO é a da seed 000 (maior diferença {num_pt(gap, '.1e')})."
    ) + (
        " L = m + log ℓ é tudo o que a retropropagação guarda da softmax: um número por linha, "
        "em vez dos n × n pesos."
    )
    steps.append(("O fim: H = O / ℓ, e L = m + log ℓ para a retropropagação", end))
    return Words(
        lang="pt",
        source=f"os números da seed 000 (h = {h}, causal, W_O = I_{d_out}), a passada direta do "
        "FlashAttention-2",
        steps=steps,
        math={
            r"\text{the output over the keys read so far}": (
                r"\text{a saída sobre as chaves lidas até aqui}"
            ),
        },
    )


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
