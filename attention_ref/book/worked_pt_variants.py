"""The worked examples of today's attention in Portuguese: GQA, RoPE, windows and ALiBi.

The words of the examples that change the heads or the scores (`gqa_words`, `rope_words`,
`window_words`, `alibi_words`), and what every example's words share: `Step`, the numbers with
a decimal comma, `groups_words` and `forward_steps` (the forward of a grouped-query trace, step
by step). `attention_ref.book.worked_pt` gives the others and the rules they all follow: every
number computed from the same trace as the English words.
"""

from __future__ import annotations

from attention_ref.book.pages import Words
from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope

#: a step: its title (as `attention_ref.book.pages.plain_heading` shortens it) and its text
Step = tuple[str, str]


def num_pt(v: float, spec: str) -> str:
    """``v`` formatted by ``spec``, with a decimal comma."""
    return format(v, spec).replace(".", ",")


def listed_pt(items: list[str]) -> str:
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
    """The words of `attention_ref.worked.grouped_layout.forward_sections`, step by step."""
    n, d_model = tr.X.shape
    h, g, d_k, d_v = tr.h, tr.g, tr.d_k, int(tr.V.shape[-1])
    rope = tr.rope_base is not None
    shapes = (
        f"n = {n} tokens, d_model = {d_model}, h = {h} cabeça{'s' * (h > 1)} de consulta, "
        f"g = {g} cabeça{'s' * (g > 1)} K/V, d_k = {d_k}, d_v = {d_v}: {groups_words(h, g)}."
    )
    inputs = (
        "Entradas: X, as W_Q das cabeças de consulta e as W_K, W_V das cabeças K/V",
        " ".join(x for x in (shapes, input_text) if x),
    )
    projections = (
        "Projeções: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ para as h cabeças de consulta, K⁽ʲ⁾ = X W_K⁽ʲ⁾ e "
        "V⁽ʲ⁾ = X W_V⁽ʲ⁾ para as g cabeças K/V",
        f"{h} consultas por token, mas só {g} chaves e {g} valores: as projeções K/V são "
        "calculadas uma vez por grupo, não uma vez por cabeça de consulta."
        if g < h
        else "Aqui cada cabeça de consulta tem a sua própria cabeça de chaves e de valores "
        "(g = h).",
    )
    entry = (
        f"A entrada (t, u) é o encontro da consulta do token t com a chave do token u, "
        f"dividido por √{d_k}."
    )
    if g == h:
        whose = (
            "as consultas giradas com as chaves"
            if rope
            else "as suas consultas com as suas próprias chaves"
        )
        scores = (
            f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, d_k = {d_k}",
            f"Cada cabeça compara {whose}. " + entry,
        )
    else:
        which = (
            "as consultas e as chaves giradas"
            if rope
            else "a sua consulta com as chaves do seu grupo"
        )
        scores = (
            f"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k com j = γ(i), d_k = {d_k}",
            f"A cabeça de consulta i compara {which}: a cabeça K/V γ(i). " + entry,
        )
    causal = (
        "Máscara causal: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
        "M é 0 na diagonal e abaixo dela e −∞ acima: um token vê a si mesmo e os tokens "
        "anteriores.",
    )
    softmax = (
        "Softmax, linha a linha: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "Cada linha é uma distribuição de probabilidade sobre as chaves que ela pode ver.",
    )
    own = g == h
    heads = (
        "Saídas das cabeças: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾"
        if own
        else "Saídas das cabeças: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ com j = γ(i)",
        "A linha t é uma média ponderada das linhas de valores "
        + ("da própria cabeça." if own else "do grupo da cabeça."),
    )
    output = ("Concatenação e projeção de saída: saída = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O", output_note)
    return [inputs, projections, *after_projections, scores, mask or causal, softmax, heads, output]


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
        f"{num_pt(cache['mha'] / cache['gqa'], 'g')} vezes menos que a MHA. W_K e W_V têm "
        f"{kv['gqa']} pesos, contra {kv['mha']} (MHA) e {kv['mqa']} (MQA); W_Q e W_O não mudam."
    )
    heads = same_as_seed_000(tr)
    if heads:
        text += (
            f" As cabeças de consulta {listed_pt([str(i) for i in heads])} dão exatamente as "
            "saídas das cabeças da seed 000: as mesmas matrizes de consulta, chave e valor."
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
    theta_text = "; ".join(f"θ_{i} = {num_pt(v, 'g')}" for i, v in enumerate(theta))
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
        f"cada linha mantém a sua norma (maior mudança {num_pt(rotation_norm_gap(tr), '.1e')}).",
    )
    s0 = float(tr.QKt[0, SHIFT_QUERY, SHIFT_KEY])
    s_shift = shifted_score(tr, SHIFT)
    gap = abs(s0 - s_shift)
    q, k = tok[SHIFT_QUERY], tok[SHIFT_KEY]
    changes = (
        f"Sem o RoPE a cabeça calcula os scores Q Kᵀ acima. Com ele, o score de '{q}' (m = "
        f"{SHIFT_QUERY}) contra '{k}' (n = {SHIFT_KEY}) é {num_pt(s0, '.6f')}; os mesmos dois "
        f"tokens levados às posições {SHIFT_QUERY + SHIFT} e {SHIFT_KEY + SHIFT} dão "
        f"{num_pt(s_shift, '.6f')} (diferença {num_pt(gap, '.1e')}): "
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
        return listed_pt([f"'{tok[r]}'" for r in rows])

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
    mask = (
        f"Máscara de janela deslizante, w = {w}: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win",
        f"M_win é 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e {w - 1} "
        f"token{'' if w == 2 else 's'} anterior{'' if w == 2 else 'es'}) e −∞ nas demais "
        "posições: o futuro, como na máscara causal, e as chaves antigas demais.",
    )
    d_out = int(tr.output.shape[-1])
    steps = forward_steps(
        tr, mask=mask, output_note=f"W_O = I_{d_out}, então a saída é a concatenação."
    )
    return Words(
        lang="pt",
        source=f"os números da seed 000 (h = {tr.h}, W_O = I_{d_out}) com uma janela deslizante "
        f"de {w} chaves",
        steps=[
            *steps,
            (f"Contra a máscara causal: que linhas a janela de {w} muda", " ".join(parts)),
        ],
    )


def alibi_words() -> Words:
    """`attnref explain -e alibi` in Portuguese."""
    from attention_ref.worked.life_alibi import alibi_trace, weight_shift

    tr = alibi_trace()
    tok = list(tr.tokens)
    _, data = weight_shift(tr)
    slopes, gaps, near = data["slopes"], data["largest_weight_change"], data["self_change"]
    assert isinstance(slopes, list) and isinstance(gaps, list) and isinstance(near, list)
    last = tok[-1]
    slope_text = "; ".join(f"m_{i + 1} = {num_pt(s, 'g')}" for i, s in enumerate(slopes))
    mask = (
        "ALiBi: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + B⁽ⁱ⁾ + M, com B⁽ⁱ⁾_tu = −m_i (t − u)",
        f"A cabeça i subtrai de cada score a sua inclinação vezes a distância: {slope_text} "
        f"(m_i = 2^(−8i/h), h = {tr.h}). Na diagonal o viés é 0; o futuro é −∞, como na "
        "máscara causal. Nenhum embedding de posição é somado a X.",
    )
    parts = [
        f"cabeça {i + 1} (m = {num_pt(slopes[i], 'g')}): maior mudança de um peso "
        f"{num_pt(gaps[i], '.4f')}, o peso de '{last}' em si mesmo "
        f"{'+' if near[i] >= 0 else '−'}{num_pt(abs(near[i]), '.4f')}"
        for i in range(tr.h)
    ]
    text = (
        "Em relação aos pesos da seed 000 (os mesmos scores, sem viés): " + "; ".join(parts) + "."
    )
    steeper = max(range(tr.h), key=lambda i: gaps[i])
    if slopes[steeper] == max(slopes) and gaps[steeper] > min(gaps):
        text += f" A inclinação mais íngreme move mais os pesos (cabeça {steeper + 1})."
    if all(v > 0 for v in near):
        text += (
            f" Em todas as cabeças '{last}' dá mais peso a si mesmo, o token mais próximo: o "
            "viés é a única informação de posição que a ALiBi dá."
        )
    d_out = int(tr.output.shape[-1])
    steps = forward_steps(
        tr, mask=mask, output_note=f"W_O = I_{d_out}, então a saída é a concatenação."
    )
    return Words(
        lang="pt",
        source=f"os números da seed 000 (h = {tr.h}, causal, W_O = I_{d_out}) com as "
        "inclinações da ALiBi 2^(−8i/h)",
        steps=[*steps, ("O que a ALiBi muda: os pesos", text)],
    )
