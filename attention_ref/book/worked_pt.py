"""The worked examples of today's attention in Portuguese: the words of each step.

The Portuguese pages show the English pages' worked examples (`attnref explain -e …`): the
same matrices, told in Portuguese (`attention_ref.book.pages.example` with ``words=``). Each
function here gives an example's words, step by step, every number computed from the same
trace and the same functions as the English words; `attention_ref.book.pages.translated`
refuses words that do not carry the English step's numbers, so a number the English example
gains or changes fails the Portuguese page's build.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from attention_ref.book.pages import Words
from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope

if TYPE_CHECKING:
    from attention_ref.reference import online_softmax as osm

#: a step: its title (as `attention_ref.book.pages.plain_heading` shortens it) and its text
Step = tuple[str, str]


def _num(v: float, spec: str) -> str:
    """``v`` formatted by ``spec``, with a decimal comma."""
    return format(v, spec).replace(".", ",")


def _list(items: list[str]) -> str:
    """``a, b e c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " e " + items[-1]


def groups_words(h: int, g: int) -> str:
    """Which query heads read which K/V head (1-based, as the steps print them)."""
    r = h // g
    if g == h == 1:
        return "uma cabeça, com as suas próprias chaves e valores (h = g = 1)"
    if g == h:
        return "cada cabeça de consulta tem a sua cabeça K/V (g = h: atenção multi-cabeça)"
    parts = []
    for j in range(g):
        heads = ", ".join(str(i + 1) for i in range(j * r, (j + 1) * r))
        parts.append(f"as cabeças de consulta {heads} leem a cabeça K/V {j + 1}")
    return "; ".join(parts)


def forward_steps(
    tr: ref_gqa.GQATrace,
    *,
    input_text: str = "",
    after_projections: tuple[Step, ...] = (),
    mask: Step | None = None,
    output_note: str = "",
) -> list[Step]:
    """The words of `attention_ref.worked.variant_trace.forward_sections`, step by step."""
    n, d_model = tr.X.shape
    h, g, d_k, d_v = tr.h, tr.g, tr.d_k, int(tr.V.shape[-1])
    rope = tr.rope_base is not None
    shapes = (
        f"n = {n} tokens, d_model = {d_model}, h = {h} cabeça{'s' * (h > 1)} de consulta, "
        f"g = {g} cabeça{'s' * (g > 1)} K/V, d_k = {d_k}, d_v = {d_v}: {groups_words(h, g)}."
    )
    inputs = ("Entradas: X, as W_Q das cabeças de consulta e as W_K, W_V das cabeças K/V",
              " ".join(x for x in (shapes, input_text) if x))  # fmt: skip
    projections = (
        "Projeções: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ para as h cabeças de consulta, K⁽ʲ⁾ = X W_K⁽ʲ⁾ e "
        "V⁽ʲ⁾ = X W_V⁽ʲ⁾ para as g cabeças K/V",
        f"{h} consultas por token, mas só {g} chaves e {g} valores: as projeções K/V são "
        "calculadas uma vez por grupo, não uma vez por cabeça de consulta."
        if g < h
        else "Aqui cada cabeça de consulta tem a sua própria cabeça de chaves e de valores "
        "(g = h).",
    )
    entry = (f"A entrada (t, u) é o encontro da consulta do token t com a chave do token u, "
             f"dividido por √{d_k}.")  # fmt: skip
    if g == h:
        whose = ("as consultas giradas com as chaves" if rope
                 else "as suas consultas com as suas próprias chaves")  # fmt: skip
        scores = (f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, d_k = {d_k}",
                  f"Cada cabeça compara {whose}. "
                  + entry)  # fmt: skip
    else:
        which = ("as consultas e as chaves giradas" if rope
                 else "a sua consulta com as chaves do seu grupo")  # fmt: skip
        scores = (
            f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k com j = γ(i), d_k = {d_k}",
            f"A cabeça de consulta i compara {which}: a cabeça K/V γ(i). " + entry,
        )
    causal = ("Máscara causal: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
              "M é 0 na diagonal e abaixo dela e −∞ acima: um token vê a si mesmo e os tokens "
              "anteriores.")  # fmt: skip
    softmax = (
        "Softmax, linha a linha: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "Cada linha é uma distribuição de probabilidade sobre as chaves que ela pode ver.",
    )
    own = g == h
    heads = ("Saídas das cabeças: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾" if own
             else "Saídas das cabeças: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ com j = γ(i)",
             "A linha t é uma média ponderada das linhas de valores "
             + ("da própria cabeça." if own else "do grupo da cabeça."))  # fmt: skip
    output = ("Concatenação e projeção de saída: saída = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O",
              output_note)  # fmt: skip
    return [inputs, projections, *after_projections, scores, mask or causal, softmax, heads,
            output]  # fmt: skip


def gqa_words() -> Words:
    """`attnref explain -e gqa` in Portuguese."""
    from attention_ref.worked.life_gqa import gqa_trace, same_as_seed_000, savings

    tr = gqa_trace()
    _, sizes = savings(tr)
    cache = {k: sizes[f"cache_{k}"] for k in ("mha", "gqa", "mqa")}
    kv = {k: sizes[f"kv_weights_{k}"] for k in ("mha", "gqa", "mqa")}
    text = (
        f"Por token, o cache KV desta camada guarda 2·g·d_k = {cache['gqa']} números (g = "
        f"{tr.g} chaves e valores de largura {tr.d_k}); a atenção multi-cabeça, com h = {tr.h} "
        f"cabeças K/V, guardaria {cache['mha']}, a multi-consulta {cache['mqa']}: a GQA guarda "
        f"{_num(cache['mha'] / cache['gqa'], 'g')} vezes menos que a MHA. W_K e W_V têm "
        f"{kv['gqa']} pesos, contra {kv['mha']} (MHA) e {kv['mqa']} (MQA); W_Q e W_O não mudam."
    )
    heads = same_as_seed_000(tr)
    if heads:
        text += (
            f" As cabeças de consulta {_list([str(i) for i in heads])} dão exatamente as saídas "
            "das cabeças da seed 000: as mesmas matrizes de consulta, chave e valor."
        )
    steps = forward_steps(
        tr,
        input_text="As cabeças K/V são as cabeças 1 e 2 da seed 000; as cabeças de consulta "
        "são as W_Q⁽¹⁾, W_Q⁽²⁾ da seed 000 em cada grupo.",
        output_note=f"W_O = I_{tr.h * tr.d_k}, então a saída é a concatenação das cabeças, "
        "todas elas.",
    )
    d_out = tr.h * tr.d_k
    return Words(
        lang="pt",
        source=f"X e pesos da seed 000, reagrupados (h = {tr.h}, g = {tr.g}, máscara causal, "
        f"W_O = I_{d_out})",
        steps=[*steps, ("O que o agrupamento economiza", text)],
    )


def rope_words() -> Words:
    """`attnref explain -e rope` in Portuguese."""
    from attention_ref.worked.life_rope import (
        ROPE_BASE,
        SHIFT,
        SHIFT_KEY,
        SHIFT_QUERY,
        rope_trace,
        rotation_norm_gap,
        shifted_score,
    )

    tr = rope_trace()
    tok = list(tr.tokens)
    d = tr.d_k
    theta = ref_rope.rope_frequencies(d, ROPE_BASE).tolist()
    theta_text = "; ".join(f"θ_{i} = {_num(v, 'g')}" for i, v in enumerate(theta))
    pairs = ", ".join(f"(x_{2 * i}, x_{2 * i + 1})" for i in range(d // 2))
    positions = ", ".join(str(int(m)) for m in tr.positions.tolist())
    angles = (
        "Os ângulos do RoPE: θ_i = base^(−2i/d_k), e m θ_i para o token na posição m",
        f"d_k = {d}: {d // 2} pares de coordenadas {pairs}; base {ROPE_BASE:g}, então "
        f"{theta_text} radiano por posição. As posições são {positions}.",
    )
    first = int(tr.positions[0])
    rotate = (
        "Girar cada par: x'_2i = x_2i cos mθ_i − x_2i+1 sin mθ_i, "
        "x'_2i+1 = x_2i sin mθ_i + x_2i+1 cos mθ_i",
        "As consultas e as chaves giram; os valores não. A linha m gira pelos seus próprios "
        f"ângulos, então '{tok[0]}' (m = {first}) não muda. Uma rotação preserva comprimentos: "
        f"cada linha mantém a sua norma (maior mudança {_num(rotation_norm_gap(tr), '.1e')}).",
    )
    s0 = float(tr.QKt[0, SHIFT_QUERY, SHIFT_KEY])
    s_shift = shifted_score(tr, SHIFT)
    gap = abs(s0 - s_shift)
    q, k = tok[SHIFT_QUERY], tok[SHIFT_KEY]
    changes = (
        f"Sem o RoPE a cabeça calcula os scores Q Kᵀ acima. Com ele, o score de '{q}' (m = "
        f"{SHIFT_QUERY}) contra '{k}' (n = {SHIFT_KEY}) é {_num(s0, '.6f')}; os mesmos dois "
        f"tokens levados às posições {SHIFT_QUERY + SHIFT} e {SHIFT_KEY + SHIFT} dão "
        f"{_num(s_shift, '.6f')} (diferença {_num(gap, '.1e')}): "
        + ("o score só depende da distância m − n." if gap < 1e-9 else "NÃO é o mesmo score.")
    )
    steps = forward_steps(
        tr,
        input_text=f"Uma cabeça de largura {d}: as duas cabeças da seed 000 lado a lado "
        "(W_Q = [W_Q⁽¹⁾ | W_Q⁽²⁾], e W_K, W_V do mesmo modo).",
        after_projections=(angles, rotate),
        output_note=f"W_O = I_{d}, então a saída é a saída da cabeça.",
    )
    return Words(
        lang="pt",
        source=f"X e pesos da seed 000 como uma cabeça de largura {d}; o RoPE do RoFormer, "
        f"base {ROPE_BASE:g}, pares (2i, 2i+1)",
        steps=[*steps, ("O que o RoPE muda: os scores, que agora dependem de m − n", changes)],
    )


def window_words() -> Words:
    """`attnref explain -e sliding-window` in Portuguese."""
    from attention_ref.worked.life_window import WINDOW, changed_rows, window_trace

    w = WINDOW
    tr = window_trace(w)
    tok = list(tr.tokens)
    same, changed = changed_rows(tr)

    def names(rows: list[int]) -> str:
        return _list([f"'{tok[r]}'" for r in rows])

    parts = []
    if same:
        one = len(same) == 1
        parts.append(
            f"A{'' if one else 's'} linha{'' if one else 's'} {names(same)} "
            f"{'é igual' if one else 'são iguais'} à saída causal da seed 000: no máximo {w} "
            "tokens de passado, contando o próprio token, então a janela não esconde nada."
        )
    if changed:
        one = len(changed) == 1
        parts.append(
            f"A{'' if one else 's'} linha{'' if one else 's'} {names(changed)} "
            f"{'muda' if one else 'mudam'}: "
            f"{'a sua chave mais antiga sai' if one else 'cada uma tem chaves que saem'} da "
            f"janela de {w} (toda chave {w} ou mais posições atrás)."
        )
    mask = (f"Máscara de janela deslizante, w = {w}: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win",
            f"M_win é 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e {w - 1} "
            f"token{'' if w == 2 else 's'} anterior{'' if w == 2 else 'es'}) e −∞ nas demais "
            "posições: o futuro, como na máscara causal, e as chaves antigas demais.")  # fmt: skip
    d_out = int(tr.output.shape[-1])
    steps = forward_steps(tr, mask=mask, output_note=f"W_O = I_{d_out}, então a saída é a "
                          "concatenação.")  # fmt: skip
    return Words(
        lang="pt",
        source=f"os números da seed 000 (h = {tr.h}, W_O = I_{d_out}) com uma janela deslizante "
        f"de {w} chaves",
        steps=[*steps, (f"Contra a máscara causal: que linhas a janela de {w} muda",
                        " ".join(parts))],
    )  # fmt: skip


def alibi_words() -> Words:
    """`attnref explain -e alibi` in Portuguese."""
    from attention_ref.worked.life_alibi import alibi_trace, weight_shift

    tr = alibi_trace()
    tok = list(tr.tokens)
    _, data = weight_shift(tr)
    slopes, gaps, near = data["slopes"], data["largest_weight_change"], data["self_change"]
    assert isinstance(slopes, list) and isinstance(gaps, list) and isinstance(near, list)
    last = tok[-1]
    slope_text = "; ".join(f"m_{i + 1} = {_num(s, 'g')}" for i, s in enumerate(slopes))
    mask = ("ALiBi: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + B⁽ⁱ⁾ + M, com B⁽ⁱ⁾_tu = −m_i (t − u)",
            f"A cabeça i subtrai de cada score a sua inclinação vezes a distância: {slope_text} "
            f"(m_i = 2^(−8i/h), h = {tr.h}). Na diagonal o viés é 0; o futuro é −∞, como na "
            "máscara causal. Nenhum embedding de posição é somado a X.")  # fmt: skip
    parts = [
        f"cabeça {i + 1} (m = {_num(slopes[i], 'g')}): maior mudança de um peso "
        f"{_num(gaps[i], '.4f')}, o peso de '{last}' em si mesmo "
        f"{'+' if near[i] >= 0 else '−'}{_num(abs(near[i]), '.4f')}"
        for i in range(tr.h)
    ]
    text = ("Em relação aos pesos da seed 000 (os mesmos scores, sem viés): " + "; ".join(parts)
            + ".")  # fmt: skip
    steeper = max(range(tr.h), key=lambda i: gaps[i])
    if slopes[steeper] == max(slopes) and gaps[steeper] > min(gaps):
        text += f" A inclinação mais íngreme move mais os pesos (cabeça {steeper + 1})."
    if all(v > 0 for v in near):
        text += (
            f" Em todas as cabeças '{last}' dá mais peso a si mesmo, o token mais próximo: o "
            "viés é a única informação de posição que a ALiBi dá."
        )
    d_out = int(tr.output.shape[-1])
    steps = forward_steps(tr, mask=mask, output_note=f"W_O = I_{d_out}, então a saída é a "
                          "concatenação.")  # fmt: skip
    return Words(
        lang="pt",
        source=f"os números da seed 000 (h = {tr.h}, causal, W_O = I_{d_out}) com as "
        "inclinações da ALiBi 2^(−8i/h)",
        steps=[*steps, ("O que a ALiBi muda: os pesos", text)],
    )


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
            f"de 0: a sua última linha; maior diferença {_num(row_gap, '.1e')}; a lista a "
            f"imprime com 3 casas decimais, com diferença de até {_num(doc_gap, '.1e')})."
        )
    else:
        words.append(f"y_t NÃO é a linha t = {PROMPT} da saída da seed 000 "
                     f"({_num(row_gap, '.1e')}).")  # fmt: skip
    if all_gap < 1e-12:
        words.append(
            f"Decodificar os {n} tokens um de cada vez a partir de um cache vazio dá cada linha "
            f"da passada causal completa (maior diferença {_num(all_gap, '.1e')})."
        )
    length = step.cache.length
    words.append(
        f"O cache guarda 2 · h · d_k = {per_token} números por token nesta camada: os {length} "
        f"tokens ocupam {per_token * length}."
    )
    steps = [
        (f'Preenchimento: o cache do prompt "{" ".join(prompt)}"',
         f"As chaves e os valores do prompt, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ e V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ para os seus "
         f"{PROMPT} tokens, um bloco por cabeça: é isto que o cache guarda."),
        (f'Decodificar "{new}" (t = {step.position}): só o token novo é projetado',
         "q_t = x_t W_Q⁽ⁱ⁾, k_t = x_t W_K⁽ⁱ⁾, v_t = x_t W_V⁽ⁱ⁾: uma linha de cada, por cabeça. "
         "O prompt não é projetado de novo."),
        ("Anexar: K⁽ⁱ⁾ ← [K⁽ⁱ⁾; k_t⁽ⁱ⁾], V⁽ⁱ⁾ ← [V⁽ⁱ⁾; v_t⁽ⁱ⁾]",
         f"A chave e o valor novos vão para baixo dos guardados: agora o cache tem {length} "
         "tokens."),
        ("Uma linha de atenção: s_t = q_t Kᵀ / √d_k, a_t = softmax(s_t), h_t = a_t V",
         "Sem máscara: cada chave do cache está no passado do token novo (ou é o próprio "
         "token), que é o que a máscara causal permitia na sua linha."),
        ("Concatenação e projeção de saída: y_t = Concat(h_t⁽¹⁾ | … | h_t⁽ʰ⁾) W_O",
         f"W_O = I_{d_out}, então y_t é a concatenação."),
        ("Verificação: os mesmos números da passada causal completa", " ".join(words)),
    ]  # fmt: skip
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
                    f"Cabeça {i + 1}, '{name}': o máximo cresce de {_num(before, '.3f')} para "
                    f"{_num(after, '.3f')}, então α = e^(m − m') = "
                    f"{_num(float(step.alpha[i, r, 0]), '.3f')} encolhe o que foi somado antes."
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
        f"o bloco {j} é {_list([repr(w) for w in keys])}" for j, keys in enumerate(tiles, 1)
    ).replace('"', "'")
    steps: list[Step] = [
        (f"Entradas: Q⁽ⁱ⁾, K⁽ⁱ⁾, V⁽ⁱ⁾ da seed 000, lidas em blocos de {TILE} chaves",
         f"As chaves e os valores são lidos {TILE} de cada vez: {listed}. A matriz n × n de "
         "scores nunca é formada: os scores S_j de cada bloco são usados e descartados. M_j são "
         "as colunas do bloco j da máscara causal."),
    ]  # fmt: skip
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
        f"seed 000 (maior diferença {_num(gap, '.1e')}), então a saída é a da lista."
        if gap < 1e-12
        else f"H⁽ⁱ⁾ NÃO é a da seed 000 (maior diferença {_num(gap, '.1e')})."
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
        math={r"\text{the output over the keys read so far}":
              r"\text{a saída sobre as chaves lidas até aqui}"},
    )  # fmt: skip


def _sup(i: int) -> str:
    """Head ``i`` (0-based) as the superscript the words write: ``⁽¹⁾`` for head 0."""
    return "⁽" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(i + 1)) + "⁾"


def backward_words() -> Words:
    """The backward steps of `attnref explain -e life-is-awesome --backward` (L = Σ saída) in
    Portuguese: the words of `attention_ref.worked.gradients.gradient_sections`."""
    from attention_ref import reference as ref
    from attention_ref.worked.life_is_awesome import life_trace

    tr = life_trace()
    g = ref.attention_backward(tr)
    n = tr.X.shape[-2]
    sums = float(g.S_masked.sum(dim=-1).abs().max())
    rows = (
        f"Cada linha de ∂S̃⁽ⁱ⁾ soma 0 (maior |soma de uma linha| {_num(sums, '.1e')}): a softmax "
        "ignora um deslocamento da sua linha."
        if sums < 1e-9
        else ""
    )
    rows += "".join(
        f" Na cabeça {i + 1} cada linha de ∂A{_sup(i)} tem entradas iguais, então "
        f"∂S̃{_sup(i)} = 0 (maior |entrada| "
        f"{_num(float(g.S_masked[..., i, :, :].abs().max()), '.1e')}): nenhum gradiente chega "
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
        ("Retropropagação: o gradiente que chega, G = ∂L/∂saída",
         "L = Σ saída, a soma de todas as entradas da saída, então G = ∂L/∂saída é toda de uns "
         "(--grad-output ARQUIVO dá outro G). Cada ∂Z abaixo é ∂L/∂Z, uma matriz do formato "
         "de Z."),
        ("Projeção de saída: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
         "A saída é Concat · W_O (+ b_O): um produto de matrizes, cujo gradiente é um produto "
         "pelo outro fator transposto."),
        ("Para dentro das cabeças e através de H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ⁱ⁾ᵀ, "
         "∂V⁽ⁱ⁾ = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾",
         "∂H⁽ⁱ⁾ é o bloco de d_v colunas da cabeça i em ∂Concat (a concatenação só moveu "
         "números). A linha j dos valores recebe o gradiente de cada token que a olha, "
         "ponderado por A."),
        ("Retropropagação da softmax: ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))", softmax),
        (f"Máscara e escala: ∂S⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾, ∂Q⁽ⁱ⁾ = ∂S⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k, "
         f"∂K⁽ⁱ⁾ = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k, com d_k = {tr.d_k}",
         "M é uma constante, então ∂S = ∂S̃; a escala 1/√d_k divide o gradiente como dividiu "
         "os scores. A consulta t recebe de cada chave que comparou, a chave j de cada "
         "consulta."),
        ("Pesos: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ⁱ⁾ = Xᵀ ∂K⁽ⁱ⁾, ∂W_V⁽ⁱ⁾ = Xᵀ ∂V⁽ⁱ⁾",
         "A linha r de ∂W é Σ_t X_tr ∂Q_t: o gradiente de cada token, ponderado pela sua "
         "entrada. Na visão fundida (seeds 001/002) ∂W_Q = [∂W_Q⁽¹⁾ | … | ∂W_Q⁽ʰ⁾], as cabeças "
         "lado a lado."),
        ("Entrada: ∂X = ∂X_Q + ∂X_K + ∂X_V, a soma dos seus três caminhos",
         "X entra três vezes (consultas, chaves, valores); pela regra da cadeia o seu gradiente "
         "é a soma dos gradientes pelos três caminhos."),
    ]  # fmt: skip
    d_model = int(tr.X.shape[-1])
    return Words(
        lang="pt",
        source=f"seed 000, lista de MAE5911, Questão 01 (d_model = {d_model}, h = {tr.h}, "
        f"máscara causal, W_O = I_{int(tr.W_O.shape[-1])})",
        steps=steps,
    )
