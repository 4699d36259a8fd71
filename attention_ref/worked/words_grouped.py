"""The words of the layout's steps for today's examples (GQA, RoPE, windows, ALiBi), per language.

`attention_ref.worked.layout` lays out any trace step by step through `GROUPED`;
each example (`attention_ref.worked.life_gqa`, ``life_rope``, ``life_window``,
``life_alibi``) adds its own steps through its table here. Each writer computes its facts once
and picks the phrase they support; a phrase has the same blanks in every language
(`tests/worked/test_words_in_each_language.py`).
"""

from __future__ import annotations

from typing import Final

#: The steps of any grouped-query trace (`attention_ref.worked.layout`).
GROUPED: Final[dict[str, dict[str, str]]] = {
    "en": {
        "inputs": "Inputs: X, the query heads' W_Q and the K/V heads' W_K, W_V",
        "shapes": "n = {n} tokens, d_model = {d_model}, h = {h} query head{hs}, g = {g} K/V "
        "head{gs}, d_k = {d_k}, d_v = {d_v}: {groups}.",
        "groups_one": "one head, with its own keys and values (h = g = 1)",
        "groups_own": "each query head has its own K/V head (g = h: multi-head attention)",
        "group": "query heads {heads} read K/V head {j}",
        "projections": "Projections: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ for the h query heads, K⁽ʲ⁾ = X W_K⁽ʲ⁾ "
        "and V⁽ʲ⁾ = X W_V⁽ʲ⁾ for the g K/V heads",
        "projections_grouped": "{h} queries per token but only {g} keys and {g} values: the K/V "
        "projections are computed once per group, not once per query head.",
        "projections_own": "Every query head has its own key and value head here (g = h).",
        "scores_own": "Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, d_k = {d_k}",
        "scores_grouped": "Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k with j = γ(i), d_k = {d_k}",
        "own_many": "Each head scores its own keys.",
        "own_one": "Each head scores the keys.",
        "own_rope_many": "Each head scores the rotated queries against its own rotated keys.",
        "own_rope_one": "Each head scores the rotated queries against the rotated keys.",
        "grouped": "Query head i scores its query and the keys of its group: K/V head γ(i).",
        "grouped_rope": "Query head i scores the rotated queries and keys: K/V head γ(i).",
        "entry": " Entry (t, u) is the match of token t's query with token u's key, divided by "
        "√{d_k}.",
        "causal": "Causal mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
        "causal_text": "M is 0 on and below the diagonal and −∞ above: a token sees itself and "
        "the tokens before it.",
        "softmax": "Softmax, row by row: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "softmax_text": "Each row is a probability distribution over the keys it may see.",
        "heads_own": "Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾",
        "heads_grouped": "Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ with j = γ(i)",
        "heads_own_text": "Row t is a weighted average of the value rows of the head's own values.",
        "heads_grouped_text": "Row t is a weighted average of the value rows of the head's group.",
        "output": "Concat and output projection: output = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O",
        "output_label": "Output",
        "concat_note": "W_O = I_{d_out}, so the output is the concat.",
    },
    "pt": {
        "inputs": "Entradas: X, as W_Q das cabeças de consulta e as W_K, W_V das cabeças K/V",
        "shapes": "n = {n} tokens, d_model = {d_model}, h = {h} cabeça{hs} de consulta, "
        "g = {g} cabeça{gs} K/V, d_k = {d_k}, d_v = {d_v}: {groups}.",
        "groups_one": "uma cabeça, com as suas próprias chaves e valores (h = g = 1)",
        "groups_own": "cada cabeça de consulta tem a sua cabeça K/V (g = h: atenção multi-cabeça)",
        "group": "as cabeças de consulta {heads} leem a cabeça K/V {j}",
        "projections": "Projeções: Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ para as h cabeças de consulta, "
        "K⁽ʲ⁾ = X W_K⁽ʲ⁾ e V⁽ʲ⁾ = X W_V⁽ʲ⁾ para as g cabeças K/V",
        "projections_grouped": "{h} consultas por token, mas só {g} chaves e {g} valores: as "
        "projeções K/V são calculadas uma vez por grupo, não uma vez por cabeça de consulta.",
        "projections_own": "Aqui cada cabeça de consulta tem a sua própria cabeça de chaves e "
        "de valores (g = h).",
        "scores_own": "Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, d_k = {d_k}",
        "scores_grouped": "Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k com j = γ(i), d_k = {d_k}",
        "own_many": "Cada cabeça compara as suas consultas com as suas próprias chaves.",
        "own_one": "Cada cabeça compara as suas consultas com as chaves.",
        "own_rope_many": "Cada cabeça compara as consultas giradas com as suas próprias chaves "
        "giradas.",
        "own_rope_one": "Cada cabeça compara as consultas giradas com as chaves giradas.",
        "grouped": "A cabeça de consulta i compara a sua consulta com as chaves do seu grupo: "
        "a cabeça K/V γ(i).",
        "grouped_rope": "A cabeça de consulta i compara as consultas e as chaves giradas: a "
        "cabeça K/V γ(i).",
        "entry": " A entrada (t, u) é o encontro da consulta do token t com a chave do token u, "
        "dividido por √{d_k}.",
        "causal": "Máscara causal: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
        "causal_text": "M é 0 na diagonal e abaixo dela e −∞ acima: um token vê a si mesmo e "
        "os tokens anteriores.",
        "softmax": "Softmax, linha a linha: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "softmax_text": "Cada linha é uma distribuição de probabilidade sobre as chaves que ela "
        "pode ver.",
        "heads_own": "Saídas das cabeças: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾",
        "heads_grouped": "Saídas das cabeças: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ com j = γ(i)",
        "heads_own_text": "A linha t é uma média ponderada das linhas de valores da própria "
        "cabeça.",
        "heads_grouped_text": "A linha t é uma média ponderada das linhas de valores do grupo "
        "da cabeça.",
        "output": "Concatenação e projeção de saída: saída = Concat(H⁽¹⁾ | … | H⁽ʰ⁾) W_O",
        "output_label": "Saída",
        "concat_note": "W_O = I_{d_out}, então a saída é a concatenação.",
    },
}

#: `attention_ref.worked.life_gqa`: 4 query heads, 2 K/V heads.
GQA: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Grouped-query attention: "Life is awesome", {h} query heads, {g} K/V heads',
        "source": "seed 000's X and weights, regrouped (h = {h}, g = {g}, causal mask, "
        "W_O = I_{d_out})",
        "input_text": "The K/V heads are seed 000's heads 1 and 2; the query heads are seed "
        "000's W_Q⁽¹⁾, W_Q⁽²⁾ for each group.",
        "output_note": "W_O = I_{d_out}, so the output is the concat of the four heads.",
        "saves": "What the grouping saves",
        "saves_text": "Per token, this layer's KV cache keeps 2·g·d_k = {gqa} numbers (g = {g} "
        "keys and values of width {d_k}); multi-head attention with h = {h} K/V heads would "
        "keep {mha}, multi-query attention {mqa}: GQA keeps {ratio} times fewer than MHA. W_K "
        "and W_V hold {kv_gqa} weights, against {kv_mha} (MHA) and {kv_mqa} (MQA); W_Q and W_O "
        "do not change.",
        "same_heads": " Query heads {heads} give seed 000's head outputs exactly: the same "
        "query, key and value matrices.",
        "and": " and ",
    },
    "pt": {
        "title": 'Atenção com consultas agrupadas: "Life is awesome", {h} cabeças de consulta, '
        "{g} cabeças K/V",
        "source": "X e pesos da seed 000, reagrupados (h = {h}, g = {g}, máscara causal, "
        "W_O = I_{d_out})",
        "input_text": "As cabeças K/V são as cabeças 1 e 2 da seed 000; as cabeças de consulta "
        "são as W_Q⁽¹⁾, W_Q⁽²⁾ da seed 000 em cada grupo.",
        "output_note": "W_O = I_{d_out}, então a saída é a concatenação das cabeças, todas elas.",
        "saves": "O que o agrupamento economiza",
        "saves_text": "Por token, o cache KV desta camada guarda 2·g·d_k = {gqa} números "
        "(g = {g} chaves e valores de largura {d_k}); a atenção multi-cabeça, com h = {h} "
        "cabeças K/V, guardaria {mha}, a multi-consulta {mqa}: a GQA guarda {ratio} vezes menos "
        "que a MHA. W_K e W_V têm {kv_gqa} pesos, contra {kv_mha} (MHA) e {kv_mqa} (MQA); W_Q e "
        "W_O não mudam.",
        "same_heads": " As cabeças de consulta {heads} dão exatamente as saídas das cabeças da "
        "seed 000: as mesmas matrizes de consulta, chave e valor.",
        "and": " e ",
    },
}

#: `attention_ref.worked.life_rope`: one head of width 4, RoFormer's rotation.
ROPE: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Rotary position embeddings (RoPE): "Life is awesome"',
        "source": "seed 000's X and weights as one head of width {d}; RoFormer's RoPE, base "
        "{base}, pairs (2i, 2i+1)",
        "input_text": "One head of width {d}: seed 000's two heads side by side (W_Q = "
        "[W_Q⁽¹⁾ | W_Q⁽²⁾], and W_K, W_V alike).",
        "output_note": "W_O = I_{d}, so the output is the head's output.",
        "angles": "RoPE's angles: θ_i = base^(−2i/d_k), and m θ_i for the token at position m",
        "angles_text": "d_k = {d}: {pairs_n} pairs of coordinates {pairs}; base {base}, so "
        "{theta} radian per position. The positions are {positions}.",
        "theta_sep": ", ",
        "rotate": "Rotate each pair: x'_2i = x_2i cos mθ_i − x_2i+1 sin mθ_i, "
        "x'_2i+1 = x_2i sin mθ_i + x_2i+1 cos mθ_i",
        "rotate_text": "The queries and keys are rotated; the values are not. Row m turns by its "
        "own angles, so '{first}' (m = {m}) is unchanged. A rotation keeps lengths: every row "
        "has its norm (largest change {gap}).",
        "changes": "What RoPE changes: the scores, which now depend on m − n",
        "plain_label": "Q Kᵀ without RoPE",
        "changes_text": "Without RoPE the head's Q Kᵀ is the matrix below. With it, the entry "
        "of Q_rot K_rotᵀ (before the division by √d_k) for '{q}' (m = {m}) against '{k}' "
        "(n = {n}) is {score}; the same two tokens moved to positions {m_moved} and {n_moved} "
        "give {moved} (difference {gap}): ",
        "changes_same": "it depends on the distance m − n only.",
        "changes_differ": "NOT the same entry.",
    },
    "pt": {
        "title": 'Embeddings de posição rotativos (RoPE): "Life is awesome"',
        "source": "X e pesos da seed 000 como uma cabeça de largura {d}; o RoPE do RoFormer, "
        "base {base}, pares (2i, 2i+1)",
        "input_text": "Uma cabeça de largura {d}: as duas cabeças da seed 000 lado a lado "
        "(W_Q = [W_Q⁽¹⁾ | W_Q⁽²⁾], e W_K, W_V do mesmo modo).",
        "output_note": "W_O = I_{d}, então a saída é a saída da cabeça.",
        "angles": "Os ângulos do RoPE: θ_i = base^(−2i/d_k), e m θ_i para o token na posição m",
        "angles_text": "d_k = {d}: {pairs_n} pares de coordenadas {pairs}; base {base}, então "
        "{theta} radiano por posição. As posições são {positions}.",
        "theta_sep": "; ",
        "rotate": "Girar cada par: x'_2i = x_2i cos mθ_i − x_2i+1 sin mθ_i, "
        "x'_2i+1 = x_2i sin mθ_i + x_2i+1 cos mθ_i",
        "rotate_text": "As consultas e as chaves giram; os valores não. A linha m gira pelos "
        "seus próprios ângulos, então '{first}' (m = {m}) não muda. Uma rotação preserva "
        "comprimentos: cada linha mantém a sua norma (maior mudança {gap}).",
        "changes": "O que o RoPE muda: os scores, que agora dependem de m − n",
        "plain_label": "Q Kᵀ sem RoPE",
        "changes_text": "Sem o RoPE, o Q Kᵀ da cabeça é a matriz abaixo. Com ele, a entrada de "
        "Q_rot K_rotᵀ (antes da divisão por √d_k) para '{q}' (m = {m}) contra '{k}' (n = {n}) é "
        "{score}; os mesmos dois tokens levados às posições {m_moved} e {n_moved} dão {moved} "
        "(diferença {gap}): ",
        "changes_same": "ela só depende da distância m − n.",
        "changes_differ": "NÃO é a mesma entrada.",
    },
}

#: the sliding window's mask as each language names it, in TeX (``jan``ela in Portuguese): the
#: worked example and the exercises' statements and keys write this one
WINDOW_SYMBOL: Final[dict[str, str]] = {"en": "M_{\\text{win}}", "pt": "M_{\\text{jan}}"}

#: `attention_ref.worked.life_window`: seed 000 with a sliding window of w keys.
SLIDING_WINDOW: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Sliding-window attention (w = {w}): "Life is awesome"',
        "source": "seed 000's numbers (h = {h}, W_O = I_{d_out}) with a sliding window of {w} keys",
        "mask": "Sliding-window mask, w = {w}: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win",
        "mask_text_one": "M_win is 0 where 0 ≤ t − u < {w} (token t sees itself and the "
        "{before} before it) and −∞ elsewhere: the future, as in the causal mask, and the keys "
        "that are too old.",
        "mask_text_many": "M_win is 0 where 0 ≤ t − u < {w} (token t sees itself and the "
        "{before} before it) and −∞ elsewhere: the future, as in the causal mask, and the keys "
        "that are too old.",
        "against": "Against the causal mask: which rows the window of {w} changes",
        "causal_label": "Output of seed 000 (causal mask)",
        "same_one": "Row {rows} equals seed 000's causal output: at most {w} tokens of past, "
        "itself included, so the window hides nothing.",
        "same_many": "Rows {rows} equal seed 000's causal output: at most {w} tokens of past, "
        "itself included, so the window hides nothing.",
        "changed_one": "Row {rows} differs: its oldest key falls out of the window of {w} "
        "(every key {w} or more positions back).",
        "changed_many": "Rows {rows} differ: each row has keys that fall out of the window of "
        "{w} (every key {w} or more positions back).",
        "and": ", ",
    },
    "pt": {
        "title": 'Atenção com janela deslizante (w = {w}): "Life is awesome"',
        "source": "os números da seed 000 (h = {h}, W_O = I_{d_out}) com uma janela deslizante "
        "de {w} chaves",
        "mask": "Máscara de janela deslizante, w = {w}: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_jan",
        "mask_text_one": "M_jan é 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e {before} "
        "token anterior) e −∞ nas demais posições: o futuro, como na máscara causal, e as "
        "chaves antigas demais.",
        "mask_text_many": "M_jan é 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e {before} "
        "tokens anteriores) e −∞ nas demais posições: o futuro, como na máscara causal, e as "
        "chaves antigas demais.",
        "against": "Contra a máscara causal: que linhas a janela de {w} muda",
        "causal_label": "Saída da seed 000 (máscara causal)",
        "same_one": "A linha {rows} é igual à saída causal da seed 000: no máximo {w} tokens de "
        "passado, contando o próprio token, então a janela não esconde nada.",
        "same_many": "As linhas {rows} são iguais à saída causal da seed 000: no máximo {w} "
        "tokens de passado, contando o próprio token, então a janela não esconde nada.",
        "changed_one": "A linha {rows} muda: a sua chave mais antiga sai da janela de {w} (toda "
        "chave {w} ou mais posições atrás).",
        "changed_many": "As linhas {rows} mudam: cada uma tem chaves que saem da janela de {w} "
        "(toda chave {w} ou mais posições atrás).",
        "and": " e ",
    },
}

#: `attention_ref.worked.life_alibi`: seed 000 with ALiBi's biases.
ALIBI: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'ALiBi, attention with linear biases: "Life is awesome"',
        "source": "seed 000's numbers (h = {h}, causal, W_O = I_{d_out}) with ALiBi's slopes "
        "2^(−8i/h)",
        "mask": "ALiBi: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + B⁽ⁱ⁾ + M, with B⁽ⁱ⁾_tu = −m_i (t − u)",
        "mask_text": "Head i subtracts its slope times the distance from every score: {slopes} "
        "(m_i = 2^(−8i/h), h = {h}). On the diagonal the bias is 0; the future is −∞ as in the "
        "causal mask. No position embedding is added to X.",
        "slope_sep": ", ",
        "changes": "What ALiBi changes: the weights",
        "head": "head {head} (m = {slope}): largest change of a weight {gap}, '{last}' on "
        "itself {sign}{near}",
        "against": "Against seed 000's weights (the same scores, no bias): {heads}.",
        "steeper": " The steeper slope moves the weights more (head {head}).",
        "nearest": " In every head '{last}' gives more weight to itself, the nearest token: the "
        "bias is the only position information ALiBi gives.",
    },
    "pt": {
        "title": 'ALiBi, atenção com vieses lineares: "Life is awesome"',
        "source": "os números da seed 000 (h = {h}, causal, W_O = I_{d_out}) com as "
        "inclinações da ALiBi 2^(−8i/h)",
        "mask": "ALiBi: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + B⁽ⁱ⁾ + M, com B⁽ⁱ⁾_tu = −m_i (t − u)",
        "mask_text": "A cabeça i subtrai de cada score a sua inclinação vezes a distância: "
        "{slopes} (m_i = 2^(−8i/h), h = {h}). Na diagonal o viés é 0; o futuro é −∞, como na "
        "máscara causal. Nenhum embedding de posição é somado a X.",
        "slope_sep": "; ",
        "changes": "O que a ALiBi muda: os pesos",
        "head": "cabeça {head} (m = {slope}): maior mudança de um peso {gap}, o peso de "
        "'{last}' em si mesmo {sign}{near}",
        "against": "Em relação aos pesos da seed 000 (os mesmos scores, sem viés): {heads}.",
        "steeper": " A inclinação mais íngreme move mais os pesos (cabeça {head}).",
        "nearest": " Em todas as cabeças '{last}' dá mais peso a si mesmo, o token mais "
        "próximo: o viés é a única informação de posição que a ALiBi dá.",
    },
}


#: The backward of any grouped trace (`attention_ref.worked.grouped_backward`), per language:
#: whether every group has one head, the heads per K/V head and the weights' counts are the
#: facts it computes once.
GROUPED_BACKWARD: Final[dict[str, dict[str, str]]] = {
    "en": {
        "upstream": "Backward pass: the upstream gradient G = ∂L/∂output",
        "projection": "Output projection: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
        "projection_text": "A matrix product's gradient is a product with the other factor "
        "transposed.",
        "heads": "Through each query head: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ʲ⁾ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − "
        "rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))",
        "heads_text": "The same steps as in multi-head attention, once per query head; masked "
        "entries have A = 0, so their gradient is exactly 0.",
        "shares": "Queries, and each query head's share of its keys and values",
        "shares_text": "Subscript [i] marks what query head i sends back to the K/V head it "
        "reads: ∂K⁽ʲ⁾[i] = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k and ∂V⁽ʲ⁾[i] = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾.",
        "collect": "The K/V heads collect their group: ∂K⁽ʲ⁾ = Σ over i with γ(i) = j of ∂K⁽ʲ⁾[i]",
        "collect_text": "The backward of repeating a K/V head for r = h/g query heads is the sum "
        "of their gradients (sum_kv_groups). ",
        "collect_own": "With g = h every group has one head: nothing is added.",
        "collect_grouped": "Here each K/V head serves {r} query heads.",
        "rope": "Through RoPE: the rotation's transpose, ∂Q = ∂Q_rot R, ∂K = ∂K_rot R",
        "rope_text": "Row m was rotated by x R_mᵀ; its gradient is rotated back by R_m, the "
        "rotation by −m θ_i (rope_backward).",
        "weights": "Weights and input: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾, "
        "∂W_V⁽ʲ⁾ = Xᵀ ∂V⁽ʲ⁾, ∂X",
        "weights_text": "{q}, {k} and {v}; X collects every path.",
        "q_one": "{n} query weight",
        "q_many": "{n} query weights",
        "k_one": "{n} key weight",
        "k_many": "{n} key weights",
        "v_one": "{n} value weight",
        "v_many": "{n} value weights",
    },
    "pt": {
        "upstream": "Retropropagação: o gradiente que chega, G = ∂L/∂saída",
        "projection": "Projeção de saída: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
        "projection_text": "O gradiente de um produto de matrizes é um produto com o outro "
        "fator transposto.",
        "heads": "Através de cada cabeça de consulta: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ʲ⁾ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ "
        "(∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))",
        "heads_text": "Os mesmos passos da atenção multi-cabeça, uma vez por cabeça de consulta; "
        "as entradas mascaradas têm A = 0, então o seu gradiente é exatamente 0.",
        "shares": "As consultas, e a parte de cada cabeça de consulta nas suas chaves e valores",
        "shares_text": "O índice [i] marca o que a cabeça de consulta i devolve à cabeça K/V "
        "que ela lê: ∂K⁽ʲ⁾[i] = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k e ∂V⁽ʲ⁾[i] = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾.",
        "collect": "As cabeças K/V recolhem o seu grupo: ∂K⁽ʲ⁾ = Σ sobre i com γ(i) = j de "
        "∂K⁽ʲ⁾[i]",
        "collect_text": "A retropropagação de repetir uma cabeça K/V para r = h/g cabeças de "
        "consulta é a soma dos seus gradientes (sum_kv_groups). ",
        "collect_own": "Com g = h cada grupo tem uma cabeça: nada é somado.",
        "collect_grouped": "Aqui cada cabeça K/V serve {r} cabeças de consulta.",
        "rope": "Através do RoPE: a transposta da rotação, ∂Q = ∂Q_rot R, ∂K = ∂K_rot R",
        "rope_text": "A linha m foi girada por x R_mᵀ; o seu gradiente é girado de volta por "
        "R_m, a rotação por −m θ_i (rope_backward).",
        "weights": "Pesos e entrada: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾, "
        "∂W_V⁽ʲ⁾ = Xᵀ ∂V⁽ʲ⁾, ∂X",
        "weights_text": "{q}, {k} e {v}; X recolhe todos os caminhos.",
        "q_one": "{n} peso de consulta",
        "q_many": "{n} pesos de consulta",
        "k_one": "{n} peso de chave",
        "k_many": "{n} pesos de chave",
        "v_one": "{n} peso de valor",
        "v_many": "{n} pesos de valor",
    },
}
