"""The words of the worked examples of today's attention, one table per example and language.

Each example's writer (``explain(lang)``) computes its facts once (numbers, and the verdicts
they support) and says them through its table here, in English and in Portuguese: a number or
a verdict cannot differ between the languages because one function computes both. The
Portuguese book reads those writers (`attnref_book.worked_pt`).
"""

from __future__ import annotations

from typing import Final

#: The steps of a single-sequence trace as seed 000 develops them
#: (`attention_ref.worked.layout.trace_sections`), per language: the shapes, the biases, the mask
#: and the output projection are the facts it computes once.
TRACE: Final[dict[str, dict[str, str]]] = {
    "en": {
        "inputs": "Inputs: X and the weights of each head",
        "shapes": "n = {n} tokens, d_model = {d_model}, h = {h} heads, d_k = {d_k}, d_v = {d_v}",
        "d_out": ", d_out = {d_out}",
        "inputs_text": "{shapes}. Row convention: a token is a row of X and Q = X W_Q.",
        "projections": "Projections: {formulas}",
        "proj_text": "Each head projects every token with its own matrices.",
        "proj_bias": "Each head projects every token with its own matrices, then adds its bias "
        "({biases}) to every row.",
        "scores": "Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, with d_k = {d_k}",
        "scores_text": "Entry (i, j) is q_i · k_j, the match of token i's query with token j's "
        "key, divided by √{d_k}.",
        "mask": "Causal mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
        "mask_text": "M is 0 on and below the diagonal and −∞ above: token t sees itself and the "
        "tokens before it, never the future (j > t).",
        "no_mask": "No mask",
        "no_mask_text": "causal = false: every token sees every token (S̃ = S).",
        "softmax": "Softmax, row by row: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "softmax_text": "Each row is a probability distribution over the visible tokens; e^(−∞) "
        "= 0, so with the mask the first row is (1, 0, …, 0).",
        "heads": "Head outputs: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾",
        "heads_text": "Row t is a weighted average of the value rows.",
        "concat": "Concat, no output projection: MultiHead = {heads}",
        "concat_text": "No W_O was given, so there is no output projection: the output is the "
        "heads side by side, h·d_v = {h} × {d_v} = {d_out} columns (as in rasbt's "
        "MultiHeadAttentionWrapper).",
        "output": "Concat and output projection: MultiHead = {heads} W_O{bias}",
        "output_text": "The heads side by side, then one linear map W_O {where}.",
        "output_bias": "The heads side by side, then one linear map W_O {where}, plus the bias "
        "b_O on every row.",
        "to_d_model": "back to d_model",
        "to_d_out": "to d_out = {d_out}",
        "output_label": "Output",
    },
    "pt": {
        "inputs": "Entradas: X e os pesos de cada cabeça",
        "shapes": "n = {n} tokens, d_model = {d_model}, h = {h} cabeças, d_k = {d_k}, d_v = {d_v}",
        "d_out": ", d_out = {d_out}",
        "inputs_text": "{shapes}. Convenção de linhas: cada token é uma linha de X e Q = X W_Q.",
        "projections": "Projeções: {formulas}",
        "proj_text": "Cada cabeça projeta todos os tokens com as suas próprias matrizes.",
        "proj_bias": "Cada cabeça projeta todos os tokens com as suas próprias matrizes, depois "
        "soma o seu viés ({biases}) a cada linha.",
        "scores": "Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, com d_k = {d_k}",
        "scores_text": "A entrada (i, j) é q_i · k_j, o quanto a consulta do token i casa com a "
        "chave do token j, dividido por √{d_k}.",
        "mask": "Máscara causal: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M",
        "mask_text": "M vale 0 na diagonal e abaixo dela e −∞ acima: o token t vê a si mesmo e "
        "os tokens anteriores, nunca o futuro (j > t).",
        "no_mask": "Sem máscara",
        "no_mask_text": "causal = false: cada token vê todos os tokens (S̃ = S).",
        "softmax": "Softmax por linha: A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾)",
        "softmax_text": "Cada linha é uma distribuição de probabilidade sobre os tokens visíveis; "
        "e^(−∞) = 0, então com a máscara a primeira linha é (1; 0; …; 0).",
        "heads": "Saída de cada cabeça: H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾",
        "heads_text": "A linha t é uma média ponderada das linhas de V.",
        "concat": "Concatenação, sem projeção de saída: MultiHead = {heads}",
        "concat_text": "Não há W_O, então não há projeção de saída: a saída são as cabeças lado "
        "a lado, h·d_v = {h} × {d_v} = {d_out} colunas (como no MultiHeadAttentionWrapper de "
        "rasbt).",
        "output": "Concatenação e projeção de saída: MultiHead = {heads} W_O{bias}",
        "output_text": "As cabeças lado a lado, depois uma única matriz W_O {where}.",
        "output_bias": "As cabeças lado a lado, depois uma única matriz W_O {where}, mais o viés "
        "b_O em cada linha.",
        "to_d_model": "de volta para d_model",
        "to_d_out": "para d_out = {d_out}",
        "output_label": "Saída",
    },
}

#: The seed document's example (`attention_ref.worked.life_is_awesome.explain`) and its three
#: notation slips (`notation_notes`), per language: the shapes, whether the example projects X,
#: the output's shape and one head's are the facts it computes once.
LIFE: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Masked multi-head attention: "Life is awesome"',
        "source": "seed 000, MAE5911 homework, Questão 01 (d_model = {d}, h = {h}, causal mask, "
        "W_O = I_{d})",
        "wo_note": "W_O = I_{d} in the document, so the output is the concat.",
        "notation": "Where the document's notation says something other than its numbers",
        "projects": "Q^(i) = X W_Q^(i) in every head",
        "not_projects": "Q^(i) ≠ X W_Q^(i)",
        "multihead": "The document writes MultiHead(Q, K, V) = Concat(Attention(QW_1^Q, KW_1^K, "
        "VW_1^V), …) W^O, but its example projects X: {projects}. In self-attention the Q, K "
        "and V that go in are all X: MultiHead(X) = Concat(head_1, …, head_h) W_O with head_i = "
        "Attention(X W_Q^(i), X W_K^(i), X W_V^(i)).",
        "label": "It labels the final result Attention(Q, K, V); it is MultiHead(X) = "
        "Concat(H^(1)|H^(2)) W_O, of shape {shape}; one head's Attention(·) is {head_shape}.",
        "stray": '"Concat(H^(1)|H^(2))W_O ∈ H ∈ ℝ^{{3×4}}": the "∈ H" is stray; the output is in '
        "ℝ^{{{n}×{d}}}.",
    },
    "pt": {
        "title": 'Atenção multi-cabeça com máscara: "Life is awesome"',
        "source": "seed 000, lista MAE5911, Questão 01 (d_model = {d}, h = {h}, máscara causal, "
        "W_O = I_{d})",
        "wo_note": "W_O = I_{d} na lista, então a saída é a concatenação.",
        "notation": "Onde a notação da lista diz algo diferente dos seus números",
        "projects": "Q^(i) = X W_Q^(i) em cada cabeça",
        "not_projects": "Q^(i) ≠ X W_Q^(i)",
        "multihead": "A lista escreve MultiHead(Q, K, V) = Concat(Attention(QW_1^Q, KW_1^K, "
        "VW_1^V), …) W^O, mas o exemplo projeta X: {projects}. Na autoatenção Q, K e V de "
        "entrada são todos X: MultiHead(X) = Concat(head_1, …, head_h) W_O, com head_i = "
        "Attention(X W_Q^(i), X W_K^(i), X W_V^(i)).",
        "label": "O resultado final é rotulado Attention(Q, K, V), mas é MultiHead(X) = "
        "Concat(H^(1)|H^(2)) W_O, de forma {shape}; a saída de uma única cabeça, Attention(·), "
        "tem forma {head_shape}.",
        "stray": '"Concat(H^(1)|H^(2))W_O ∈ H ∈ ℝ^{{3×4}}": o "∈ H" está sobrando; a saída '
        "pertence a ℝ^{{{n}×{d}}}.",
    },
}

#: The KV cache's words (`attention_ref.worked.life_kv_cache`), per language: its
#: `step_sections`, `check_section` and `explain` fill them in with the facts they compute once.
KV_CACHE: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'The KV cache: "Life is" cached, "awesome" decoded in one step',
        "source": "seed 000's numbers (h = {h}, W_O = I_{d_out}), generated one token at a time",
        "prefill": 'Prefill: the cache of the prompt "{prompt}"',
        "prefill_text": "The prompt's keys and values, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ and V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ for "
        "its {n} tokens, one block per head: this is what the cache holds.",
        "decode": 'Decode "{new}" (t = {t}): only the new token is projected',
        "decode_text": "q_t = x_t W_Q⁽ⁱ⁾, k_t = x_t W_K⁽ⁱ⁾, v_t = x_t W_V⁽ⁱ⁾: one row each, per "
        "head. The prompt is not projected again.",
        "append": "Append: K⁽ⁱ⁾ ← [K⁽ⁱ⁾; k_t⁽ⁱ⁾], V⁽ⁱ⁾ ← [V⁽ⁱ⁾; v_t⁽ⁱ⁾]",
        "append_text": "The new key and value go under the cached ones: the cache now holds "
        "{length} tokens.",
        "row": "One row of attention: s_t = q_t Kᵀ / √d_k, a_t = softmax(s_t), h_t = a_t V",
        "row_text": "No mask: every cached key is in the past of the new token (or is the token "
        "itself), which is what the causal mask allowed in its row.",
        "output": "Concat and output projection: y_t = Concat(h_t⁽¹⁾ | h_t⁽²⁾) W_O",
        "output_text": "W_O = I_{d_out}, so y_t is the concat.",
        "check": "Check: the same numbers as the full causal pass",
        "full_label": "Output of the full causal pass (seed 000)",
        "bw_default_g": "L = Σ output, the sum of the entries of the output y_t, so G = ∂L/∂y_t "
        "is all ones (--grad-output FILE gives another G).",
        "bw_values": "Every cached value gets gradient: ∂V⁽ⁱ⁾ = a_tᵀ ∂h_t, and every weight of "
        "a_t is positive.",
        "bw_flat": "In head {head} the entries of ∂a_t are equal, so ∂s_t = 0 (softmax ignores a "
        "shift of its row): no gradient reaches that head's keys and query with this G.",
        "bw_keys": "In head {head} every cached key gets gradient too.",
        "bw_upstream": "Backward pass of the step: the upstream gradient G = ∂L/∂y_t",
        "bw_upstream_text": " Training does not use the cache; this shows where the gradient of "
        "one decoded row goes.",
        "bw_projection_text": "As in the full pass, with one row.",
        "bw_cache": "Through the row of attention, into the cache: ∂K⁽ⁱ⁾ = ∂s_tᵀ q_t / √d_k, "
        "∂V⁽ⁱ⁾ = a_tᵀ ∂h_t",
        "bw_weights": "Weights and input: the cached tokens' rows of ∂X",
        "bw_weights_text": "Tokens with gradient in ∂X: {tokens}: a loss on the decoded row "
        "reaches back through the cache to the tokens that filled it, as the full causal pass's "
        "backward does for its last row.",
        "row_equal": "y_t equals row t = {t} of seed 000's output (positions counted from 0: "
        "its last row; largest difference {row_gap}; the document prints it to 3 decimals, "
        "within {doc_gap}).",
        "row_differs": "y_t is NOT row t = {t} of seed 000's output ({row_gap}).",
        "all_equal": "Decoding all {n} tokens one at a time from an empty cache gives every row "
        "of the full causal pass (largest difference {all_gap}).",
        "size": "The cache keeps 2 · h · d_k = {per_token} numbers per token for this layer: "
        "the {length} tokens hold {held}.",
    },
    "pt": {
        "title": 'O cache KV: "Life is" no cache, "awesome" decodificado em um passo',
        "source": "os números da seed 000 (h = {h}, W_O = I_{d_out}), gerados um token de cada vez",
        "prefill": 'Preenchimento: o cache do prompt "{prompt}"',
        "prefill_text": "As chaves e os valores do prompt, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ e V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ "
        "para os seus {n} tokens, um bloco por cabeça: é isto que o cache guarda.",
        "decode": 'Decodificar "{new}" (t = {t}): só o token novo é projetado',
        "decode_text": "q_t = x_t W_Q⁽ⁱ⁾, k_t = x_t W_K⁽ⁱ⁾, v_t = x_t W_V⁽ⁱ⁾: uma linha de "
        "cada, por cabeça. O prompt não é projetado de novo.",
        "append": "Anexar: K⁽ⁱ⁾ ← [K⁽ⁱ⁾; k_t⁽ⁱ⁾], V⁽ⁱ⁾ ← [V⁽ⁱ⁾; v_t⁽ⁱ⁾]",
        "append_text": "A chave e o valor novos vão para baixo dos guardados: agora o cache "
        "tem {length} tokens.",
        "row": "Uma linha de atenção: s_t = q_t Kᵀ / √d_k, a_t = softmax(s_t), h_t = a_t V",
        "row_text": "Sem máscara: cada chave do cache está no passado do token novo (ou é o "
        "próprio token), que é o que a máscara causal permitia na sua linha.",
        "output": "Concatenação e projeção de saída: y_t = Concat(h_t⁽¹⁾ | … | h_t⁽ʰ⁾) W_O",
        "output_text": "W_O = I_{d_out}, então y_t é a concatenação.",
        "check": "Verificação: os mesmos números da passada causal completa",
        "full_label": "Saída da passada causal completa (seed 000)",
        "bw_default_g": "L = Σ saída, a soma das entradas da saída y_t, então G = ∂L/∂y_t é toda "
        "de uns (--grad-output ARQUIVO dá outro G).",
        "bw_values": "Todo valor guardado no cache recebe gradiente: ∂V⁽ⁱ⁾ = a_tᵀ ∂h_t, e todo "
        "peso de a_t é positivo.",
        "bw_flat": "Na cabeça {head} as entradas de ∂a_t são iguais, então ∂s_t = 0 (a softmax "
        "ignora um deslocamento da sua linha): com este G nenhum gradiente chega às chaves e à "
        "consulta dessa cabeça.",
        "bw_keys": "Na cabeça {head} toda chave do cache recebe gradiente também.",
        "bw_upstream": "Retropropagação do passo: o gradiente que chega, G = ∂L/∂y_t",
        "bw_upstream_text": " O treino não usa o cache; isto mostra para onde vai o gradiente de "
        "uma linha decodificada.",
        "bw_projection_text": "Como na passada completa, com uma linha.",
        "bw_cache": "Através da linha de atenção, para dentro do cache: ∂K⁽ⁱ⁾ = ∂s_tᵀ q_t / √d_k, "
        "∂V⁽ⁱ⁾ = a_tᵀ ∂h_t",
        "bw_weights": "Pesos e entrada: as linhas de ∂X dos tokens do cache",
        "bw_weights_text": "Tokens com gradiente em ∂X: {tokens}: uma perda na linha decodificada "
        "volta através do cache até os tokens que o preencheram, como faz a retropropagação da "
        "passada causal completa para a sua última linha.",
        "row_equal": "y_t é igual à linha t = {t} da saída da seed 000 (posições contadas a "
        "partir de 0: a sua última linha; maior diferença {row_gap}; a lista a imprime com 3 "
        "casas decimais, com diferença de até {doc_gap}).",
        "row_differs": "y_t NÃO é a linha t = {t} da saída da seed 000 ({row_gap}).",
        "all_equal": "Decodificar os {n} tokens um de cada vez a partir de um cache vazio dá "
        "cada linha da passada causal completa (maior diferença {all_gap}).",
        "size": "O cache guarda 2 · h · d_k = {per_token} números por token nesta camada: os "
        "{length} tokens ocupam {held}.",
    },
}


#: The online softmax's words, per language (`attention_ref.worked.life_online_softmax.explain`
#: fills them in): the same facts, computed once, said in each. ``key_sep``/``key_last`` join
#: a tile's keys, ``tile_sep`` the tiles.
ONLINE_SOFTMAX: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'FlashAttention\'s online softmax: "Life is awesome", tiles of {tile} keys',
        "source": "seed 000's numbers (h = {h}, causal, W_O = I_{d_out}), FlashAttention-2's "
        "forward",
        "inputs": "Inputs: seed 000's Q⁽ⁱ⁾, K⁽ⁱ⁾, V⁽ⁱ⁾, read in tiles of {tile} keys",
        "inputs_text": "The keys and values are read {tile} at a time: {tiles}. FlashAttention "
        "never forms the n × n matrix of scores: each tile's scores S_j are used and dropped "
        "(this trace keeps each S_j, to show it). M_j is the causal mask's columns of tile j.",
        "tile_is": "tile {j} is {keys}",
        "tile_sep": ", ",
        "key_sep": ", ",
        "key_last": ", ",
        "tile": "Tile {j}: keys {keys}",
        "before": "Before the first tile m = −∞, ℓ = 0, O = 0 in every row. ",
        "unseen": "'{name}' sees no key of this tile (all −∞): P_j = 0, α = 1 (its maximum does "
        "not move), ℓ and O stay as they were.",
        "inside": "The tile ends inside the mask for '{name}': its masked keys give P_j = 0.",
        "grows": "Head {head}, '{name}': the maximum grows from {before} to {after}, so "
        "α = e^(m − m') = {alpha} shrinks what was summed before.",
        "so_far": "the output over the keys read so far",
        "end": "The end: H = O / ℓ, and L = m + log ℓ for the backward",
        "output_label": "Output",
        "bw_weights": "Weights and input: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ⁱ⁾ = Xᵀ ∂K⁽ⁱ⁾, ∂W_V⁽ⁱ⁾ = "
        "Xᵀ ∂V⁽ⁱ⁾, ∂X",
        "bw_d_equal": "D = rowsum(∂H ⊙ H) equals the softmax backward's rowsum(∂A ⊙ A) (largest "
        "difference {gap}), without A.",
        "bw_d_differs": "D differs from rowsum(∂A ⊙ A) by {gap}.",
        "bw_first": "Backward pass: G = ∂L/∂output, ∂H⁽ⁱ⁾, and D = rowsum(∂H ⊙ H)",
        "bw_first_text": " The forward kept H and L = m + log ℓ per row, not the weights. ",
        "bw_tile": "Backward, tile {j} (keys {keys}): P_j recomputed from L",
        "bw_tile_text": "P_j = e^(S_j − L) gives the softmax's weights of this tile again, from "
        "S_j (recomputed from Q and K_j) and L. Then ∂V_j, ∂P_j, ∂S_j, ∂K_j of the tile, and ∂Q "
        "summed over the tiles read so far.",
        "bw_a_equal": "The recomputed P_j, side by side, are the weights A⁽ⁱ⁾ of seed 000 "
        "(largest difference {gap}).",
        "bw_grads_equal": "∂Q, ∂K, ∂V and ∂X equal the ordinary backward's (largest difference "
        "{gap}).",
        "bw_not_equal": "NOT equal to the ordinary backward.",
        "end_same": "After the last tile, one division per row. H⁽ⁱ⁾ equals seed 000's head "
        "outputs (largest difference {gap}), so the output is the homework's.",
        "end_differs": "H⁽ⁱ⁾ is NOT seed 000's (largest difference {gap}).",
        "end_keeps": " L = m + log ℓ is all the backward keeps of the softmax: one number per "
        "row, instead of the n × n weights.",
    },
    "pt": {
        "title": 'A softmax online do FlashAttention: "Life is awesome", blocos de {tile} chaves',
        "source": "os números da seed 000 (h = {h}, causal, W_O = I_{d_out}), a passada direta "
        "do FlashAttention-2",
        "inputs": "Entradas: Q⁽ⁱ⁾, K⁽ⁱ⁾, V⁽ⁱ⁾ da seed 000, lidas em blocos de {tile} chaves",
        "inputs_text": "Chaves e valores são lidos {tile} de cada vez: {tiles}. O FlashAttention "
        "nunca forma a matriz n × n de scores: usa e descarta os S_j de cada bloco (este traço "
        "guarda cada S_j, para mostrá-lo). M_j são as colunas do bloco j da máscara causal.",
        "tile_is": "o bloco {j} é {keys}",
        "tile_sep": "; ",
        "key_sep": ", ",
        "key_last": " e ",
        "tile": "Bloco {j}: chaves {keys}",
        "before": "Antes do primeiro bloco m = −∞, ℓ = 0, O = 0 em cada linha. ",
        "unseen": "'{name}' não vê nenhuma chave deste bloco (todas −∞): P_j = 0, α = 1 (o seu "
        "máximo não se move), ℓ e O ficam como estavam.",
        "inside": "O bloco termina dentro da máscara para '{name}': as suas chaves mascaradas "
        "dão P_j = 0.",
        "grows": "Cabeça {head}, '{name}': o máximo cresce de {before} para {after}, então "
        "α = e^(m − m') = {alpha} encolhe o que foi somado antes.",
        "so_far": "a saída sobre as chaves lidas até aqui",
        "end": "O fim: H = O / ℓ, e L = m + log ℓ para a retropropagação",
        "output_label": "Saída",
        "bw_weights": "Pesos e entrada: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ⁱ⁾ = Xᵀ ∂K⁽ⁱ⁾, ∂W_V⁽ⁱ⁾ = "
        "Xᵀ ∂V⁽ⁱ⁾, ∂X",
        "bw_d_equal": "D = rowsum(∂H ⊙ H) é igual ao rowsum(∂A ⊙ A) da retropropagação da "
        "softmax (maior diferença {gap}), sem A.",
        "bw_d_differs": "D difere de rowsum(∂A ⊙ A) em {gap}.",
        "bw_first": "Retropropagação: G = ∂L/∂saída, ∂H⁽ⁱ⁾, e D = rowsum(∂H ⊙ H)",
        "bw_first_text": " A passada para frente guardou H e L = m + log ℓ por linha, não os "
        "pesos. ",
        "bw_tile": "Retropropagação, bloco {j} (chaves {keys}): P_j recalculado a partir de L",
        "bw_tile_text": "P_j = e^(S_j − L) dá de novo os pesos da softmax deste bloco, a partir "
        "de S_j (recalculado de Q e K_j) e de L. Depois ∂V_j, ∂P_j, ∂S_j, ∂K_j do bloco, e ∂Q "
        "somado sobre os blocos lidos até aqui.",
        "bw_a_equal": "Os P_j recalculados, lado a lado, são os pesos A⁽ⁱ⁾ da seed 000 (maior "
        "diferença {gap}).",
        "bw_grads_equal": "∂Q, ∂K, ∂V e ∂X são iguais aos da retropropagação comum (maior "
        "diferença {gap}).",
        "bw_not_equal": "NÃO é igual à retropropagação comum.",
        "end_same": "Depois do último bloco, uma divisão por linha. H⁽ⁱ⁾ é igual às saídas das "
        "cabeças da seed 000 (maior diferença {gap}), então a saída é a da lista.",
        "end_differs": "H⁽ⁱ⁾ NÃO é a da seed 000 (maior diferença {gap}).",
        "end_keeps": " L = m + log ℓ é tudo o que a retropropagação guarda da softmax: um número "
        "por linha, em vez dos n × n pesos.",
    },
}


def listed(items: list[str], last: str, sep: str = ", ") -> str:
    """``items`` joined by ``sep``, the last one by ``last`` (``"a, b and c"``): each table
    says its own (`ONLINE_SOFTMAX`'s ``key_last``, `words_grouped.GQA`'s ``and``)."""
    if len(items) == 1:
        return items[0]
    return sep.join(items[:-1]) + last + items[-1]


#: The backward pass's words (`attention_ref.worked.backward_sections.gradient_sections`), per
#: language: one section per step of the chain rule, its notes computed from the gradients.
GRADIENTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "default_g": "L = Σ output, the sum of every entry of the output, so G = ∂L/∂output is "
        "all ones (--grad-output FILE gives another G).",
        "given_g": "G is the matrix of --grad-output.",
        "with_backward": ", with its backward pass",
        "journey_where": "The backward pass of the MultiHeadAttention module ({h} heads of width "
        "{d_k}, out_proj with its bias b_O), on one copy of the input (the code's batch holds two "
        "identical copies).",
        "pizza_where": "The backward pass of the {h} heads on the one sequence of the batch (no "
        "mask); the weights are nearly one-hot, so most of ∂S̃ is close to 0.",
        "default_dz": "L = Σ z, the sum of every entry of z, so ∂z = ∂L/∂z is all ones "
        "(--grad-output FILE gives another ∂z).",
        "given_dz": "∂z is the matrix of --grad-output.",
        "hello_upstream": "Backward pass: the upstream gradient ∂z",
        "hello_softmax": "Through z = α X and the softmax: ∂α = ∂z Xᵀ, ∂ω = α ⊙ (∂α − rowsum(∂α "
        "⊙ α))",
        "hello_softmax_text": "The same formulas as for a head, with A = α, V = X and no scale.",
        "hello_input": "Input: ∂X, the sum of three paths (values, keys, the query)",
        "hello_input_text": 'X is the values, the keys and (row "shiny") the query at once: its '
        "gradient is the sum of the three.",
        "notation": "Each ∂Z below is ∂L/∂Z, a matrix of the shape of Z.",
        "upstream": "Backward pass: the upstream gradient G = ∂L/∂output",
        "projection": "Output projection: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
        "projection_bias": ", ∂b_O = column sums of G",
        "projection_text": "The output is Concat · W_O (+ b_O): a matrix product, whose "
        "gradient is a product with the other factor transposed.",
        "no_projection": "No output projection: ∂Concat = G",
        "no_projection_text": "Without W_O the output is the concat itself.",
        "heads": "Into the heads and through H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ⁱ⁾ᵀ, "
        "∂V⁽ⁱ⁾ = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾",
        "heads_text": "∂H⁽ⁱ⁾ is head i's block of d_v columns of ∂Concat (the concat only moved "
        "numbers). Value row j collects the gradient of every token that attends to it, "
        "weighted by A.",
        "softmax": "Softmax backward: ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))",
        "rows_sum_zero": "Every row of ∂S̃⁽ⁱ⁾ sums to 0 (largest |row sum| {sums}): softmax "
        "ignores a shift of its row.",
        "flat_head": " In head {head} every row of ∂A{sup} has equal entries, so ∂S̃{sup} = 0 "
        "(largest |entry| {largest}): no gradient reaches its Q and K with this G.",
        "no_mask": "No mask: every entry can carry gradient. ",
        "one_token": "One token: nothing is masked. ",
        "masked_all_zero": "Masked entries have A = 0 exactly and the formula multiplies by A, "
        "so all {total} entries above the diagonal are exactly 0: no gradient flows to a "
        "future token's key through the scores. ",
        "masked_some_zero": "{zeros} of the {total} entries above the diagonal are exactly 0. ",
        "scores": "Mask and scale: ∂S⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾, ∂Q⁽ⁱ⁾ = ∂S⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k, "
        "∂K⁽ⁱ⁾ = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k, with d_k = {d_k}",
        "scores_text": "M is a constant, so ∂S = ∂S̃; the scale 1/√d_k divides the gradient as "
        "it divided the scores. Query t collects from every key it scored, key j from every "
        "query.",
        "weights": "Weights: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ⁱ⁾ = Xᵀ ∂K⁽ⁱ⁾, ∂W_V⁽ⁱ⁾ = Xᵀ ∂V⁽ⁱ⁾",
        "weights_text": "Row r of ∂W is Σ_t X_tr ∂Q_t: each token's gradient, weighted by its "
        "input. In the fused view (seeds 001/002) ∂W_Q = [∂W_Q⁽¹⁾ | … | ∂W_Q⁽ʰ⁾], the heads "
        "side by side.",
        "weights_bias": " A bias gets the column sums of its gradient.",
        "input": "Input: ∂X = ∂X_Q + ∂X_K + ∂X_V, the sum of its three paths",
        "input_text": "X enters three times (queries, keys, values); by the chain rule its "
        "gradient is the sum of the gradients along the three paths.",
    },
    "pt": {
        "default_g": "L = Σ saída, a soma de todas as entradas da saída, então G = ∂L/∂saída é "
        "toda de uns (--grad-output ARQUIVO dá outro G).",
        "given_g": "G é a matriz de --grad-output.",
        "with_backward": ", com a sua retropropagação",
        "journey_where": "A retropropagação do módulo MultiHeadAttention ({h} cabeças de largura "
        "{d_k}, out_proj com o seu viés b_O), numa cópia da entrada (o batch do código tem duas "
        "cópias iguais).",
        "pizza_where": "A retropropagação das {h} cabeças na única sequência do batch (sem "
        "máscara); os pesos são quase one-hot, então a maior parte de ∂S̃ é quase 0.",
        "default_dz": "L = Σ z, a soma de todas as entradas de z, então ∂z = ∂L/∂z é toda de uns "
        "(--grad-output ARQUIVO dá outro ∂z).",
        "given_dz": "∂z é a matriz de --grad-output.",
        "hello_upstream": "Retropropagação: o gradiente que chega, ∂z",
        "hello_softmax": "Através de z = α X e da softmax: ∂α = ∂z Xᵀ, ∂ω = α ⊙ (∂α − rowsum(∂α "
        "⊙ α))",
        "hello_softmax_text": "As mesmas fórmulas de uma cabeça, com A = α, V = X e sem escala.",
        "hello_input": "Entrada: ∂X, a soma de três caminhos (valores, chaves, a consulta)",
        "hello_input_text": 'X é ao mesmo tempo os valores, as chaves e (linha "shiny") a '
        "consulta: o seu gradiente é a soma dos três.",
        "notation": "Cada ∂Z abaixo é ∂L/∂Z, uma matriz do formato de Z.",
        "upstream": "Retropropagação: o gradiente que chega, G = ∂L/∂saída",
        "projection": "Projeção de saída: ∂W_O = Concatᵀ G, ∂Concat = G W_Oᵀ",
        "projection_bias": ", ∂b_O = somas das colunas de G",
        "projection_text": "A saída é Concat · W_O (+ b_O): um produto de matrizes, cujo "
        "gradiente é um produto pelo outro fator transposto.",
        "no_projection": "Sem projeção de saída: ∂Concat = G",
        "no_projection_text": "Sem W_O a saída é a própria concatenação.",
        "heads": "Para dentro das cabeças e através de H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾: ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ⁱ⁾ᵀ, "
        "∂V⁽ⁱ⁾ = A⁽ⁱ⁾ᵀ ∂H⁽ⁱ⁾",
        "heads_text": "∂H⁽ⁱ⁾ é o bloco de d_v colunas da cabeça i em ∂Concat (a concatenação só "
        "moveu números). A linha j dos valores recebe o gradiente de cada token que a olha, "
        "ponderado por A.",
        "softmax": "Retropropagação da softmax: ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾))",
        "rows_sum_zero": "Cada linha de ∂S̃⁽ⁱ⁾ soma 0 (maior |soma de uma linha| {sums}): a "
        "softmax ignora um deslocamento da sua linha.",
        "flat_head": " Na cabeça {head} cada linha de ∂A{sup} tem entradas iguais, então "
        "∂S̃{sup} = 0 (maior |entrada| {largest}): nenhum gradiente chega ao seu Q e ao seu K "
        "com este G.",
        "no_mask": "Sem máscara: toda entrada pode levar gradiente. ",
        "one_token": "Um token: nada é mascarado. ",
        "masked_all_zero": "As entradas mascaradas têm A = 0 exatamente e a fórmula multiplica "
        "por A, então as {total} entradas acima da diagonal são exatamente 0: nenhum gradiente "
        "chega à chave de um token futuro pelos scores. ",
        "masked_some_zero": "{zeros} das {total} entradas acima da diagonal são exatamente 0. ",
        "scores": "Máscara e escala: ∂S⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾, ∂Q⁽ⁱ⁾ = ∂S⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k, "
        "∂K⁽ⁱ⁾ = ∂S⁽ⁱ⁾ᵀ Q⁽ⁱ⁾ / √d_k, com d_k = {d_k}",
        "scores_text": "M é uma constante, então ∂S = ∂S̃; a escala 1/√d_k divide o gradiente "
        "como dividiu os scores. A consulta t recebe de cada chave que comparou, a chave j de "
        "cada consulta.",
        "weights": "Pesos: ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾, ∂W_K⁽ⁱ⁾ = Xᵀ ∂K⁽ⁱ⁾, ∂W_V⁽ⁱ⁾ = Xᵀ ∂V⁽ⁱ⁾",
        "weights_text": "A linha r de ∂W é Σ_t X_tr ∂Q_t: o gradiente de cada token, ponderado "
        "pela sua entrada. Na visão fundida (seeds 001/002) ∂W_Q = [∂W_Q⁽¹⁾ | … | ∂W_Q⁽ʰ⁾], as "
        "cabeças lado a lado.",
        "weights_bias": " Um viés recebe as somas das colunas do seu gradiente.",
        "input": "Entrada: ∂X = ∂X_Q + ∂X_K + ∂X_V, a soma dos seus três caminhos",
        "input_text": "X entra três vezes (consultas, chaves, valores); pela regra da cadeia o "
        "seu gradiente é a soma dos gradientes pelos três caminhos.",
    },
}
