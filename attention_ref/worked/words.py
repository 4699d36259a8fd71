"""The words of the worked examples of today's attention, one table per example and language.

Each example's writer (``explain(lang)``) computes its facts once (numbers, and the verdicts
they support) and says them through its table here, in English and in Portuguese: a number or
a verdict cannot differ between the languages because one function computes both. The
Portuguese book reads those writers (`attention_ref.book.worked_pt`).
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
        "notation": "Where the document's notation says something else than its numbers",
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
        "notation": "Onde a notação da lista diz outra coisa que os seus números",
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

#: Seeds 001/004's dot-product attention by hand (`attention_ref.worked.hello_shiny_sun`), per
#: language (seed 001 is Portuguese: its words are the document's own): whether the document's
#: vector is the sum of its products, the exact vector rounded, and which tokens' products no
#: single weight gives are the facts `document_note` computes once.
HELLO: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Dot-product attention by hand: "Hello shiny sun!"',
        "source": 'seeds 001 (Portuguese) and 004 (English/Korean): context vector of "shiny"',
        "embeddings": "Embeddings",
        "embeddings_text": "Three tokens, 3-dimensional embeddings; the query is the embedding "
        'of "shiny" itself (no trainable weights yet).',
        "step1": "Step 1, attention scores: ω_j = x_shiny · x_j",
        "step2": "Step 2, attention weights: α = softmax(ω)",
        "step2_text": "The document names the exponentials and their sum but its figures for "
        "them are missing; here they are. The weights sum to 1.",
        "step3": "Step 3, context vector: z = Σ_j α_j x_j",
        "weighted": "weighted embeddings (exact)",
        "context": "Σ_j α_j x_j (exact)",
        "beside": "The document's numbers beside the exact ones",
        "doc_weighted": "document: α_j x_j",
        "implied": "document's α_j x_j / x_j",
        "doc_z": "document: z",
        "exact_z": "exact: z",
        "difference": "document − exact",
        "sep": ", ",
        "sum_is": "The document's vector [{doc}] is the sum of its printed weighted embeddings "
        "α_j x_j.",
        "sum_is_not": "The document's vector [{doc}] is NOT the sum of its printed weighted "
        "embeddings α_j x_j.",
        "rounded": "It is the exact vector, rounded to {p} decimals.",
        "not_rounded": "It is not the exact vector rounded to {p} decimals ([{exact}]; they differ "
        "by up to {diff}).",
        "one_weight": "Each token's printed products agree with one weight, so they are products "
        "of rounded weights.",
        "interval": "{prod} = α·{x} needs α in [{lo}, {hi}]",
        "for_token": "for {token}, {first} and {second}",
        "and": " and ",
        "slips": "Nor is it made of rounded weights: a product printed to {p} decimals, p = α·x, "
        "pins α to [(p − {half})/x, (p + {half})/x]. {per_token}. These intervals do not "
        "overlap, so no weight, rounded or not, gives both products of {names}: they are "
        "arithmetic slips, not rounding.",
    },
    "pt": {
        "title": 'Atenção por produto escalar à mão: "Hello shiny sun!"',
        "source": 'seeds 001 (português) e 004 (inglês/coreano): vetor de contexto de "shiny"',
        "embeddings": "Embeddings dos tokens",
        "embeddings_text": "Três tokens, embeddings de 3 dimensões; a consulta é o próprio "
        'embedding de "shiny" (ainda sem pesos treináveis).',
        "step1": "Passo 1, pontuações de atenção: ω_j = x_shiny · x_j",
        "step2": "Passo 2, pesos de atenção: α = softmax(ω)",
        "step2_text": "O documento cita as exponenciais e a sua soma, mas os seus valores "
        "faltam; ei-los aqui. Os pesos somam 1.",
        "step3": "Passo 3, vetor de contexto: z = Σ_j α_j x_j",
        "weighted": "embeddings ponderados (exatos)",
        "context": "Σ_j α_j x_j (exato)",
        "beside": "Os números do documento ao lado dos exatos",
        "doc_weighted": "documento: α_j x_j",
        "implied": "α_j x_j do documento / x_j",
        "doc_z": "documento: z",
        "exact_z": "exato: z",
        "difference": "documento − exato",
        "sep": "; ",
        "sum_is": "O vetor do documento [{doc}] é a soma dos embeddings ponderados α_j x_j que "
        "ele imprime.",
        "sum_is_not": "O vetor do documento [{doc}] NÃO é a soma dos embeddings ponderados "
        "α_j x_j que ele imprime.",
        "rounded": "É o vetor exato, arredondado a {p} casas decimais.",
        "not_rounded": "Não é o vetor exato arredondado a {p} casas decimais ([{exact}]; "
        "diferem em até {diff}).",
        "one_weight": "Os produtos impressos de cada token concordam com um único peso: são "
        "produtos de pesos arredondados.",
        "interval": "{prod} = α·{x} exige α em [{lo}; {hi}]",
        "for_token": "para {token}, {first} e {second}",
        "and": " e ",
        "slips": "Nem é feito de pesos arredondados: um produto impresso com {p} casas "
        "decimais, p = α·x, prende α a [(p − {half})/x; (p + {half})/x]. {per_token}. Esses "
        "intervalos não se sobrepõem, então nenhum peso, arredondado ou não, dá os dois "
        "produtos de {names}: são erros de conta, não de arredondamento.",
    },
}

#: Seed 001's code on "Your journey starts with one step" (`attention_ref.worked.
#: your_journey_starts` and its mask line, `attention_ref.worked.journey_mask`), per language;
#: the document's sentences are quoted in its own language (seed 001 is Portuguese, seed 004 its
#: English). The seeds, layer order, bounds, shapes and what the mask line gives are the facts
#: computed once; the code's names (queries, attn_weights, …) are the same in every language.
JOURNEY: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Trainable weights, causal and multi-head attention: "Your journey starts with '
        'one step"',
        "source": "seed 001, code from rasbt's LLMs-from-scratch ch03",
        "book": "rasbt's ch03 notebook prints",
        "inputs": "Inputs",
        "inputs_text": "Six tokens, 3-dimensional embeddings (the code's `inputs`).",
        "draw": "Weights are drawn exactly as the document's code draws them: "
        "torch.manual_seed({seed}), then nn.Linear layers created in the order {order} "
        "(PyTorch's default init, Kaiming-uniform: U(−1/√fan_in, 1/√fan_in), fan_in = the "
        "layer's input width; {bounds}); in the row convention W = linear.weight.T.",
        "bound": "{names}: fan_in = {f}, bound 1/√{f} ≈ {bound}",
        "out_proj": "out_proj (with bias)",
        "inside": "inside",
        "outside": "OUTSIDE",
        "beyond": "beyond",
        "within": "within",
        "b_o": "The largest |b_O| = {big} is {inside} ±1/√{d_out} ≈ {wide} and {beyond} "
        "±1/√{d_in} ≈ {narrow}: out_proj's bound comes from its own fan-in, {d_out}.",
        "self": "Self-attention with trainable weights (SelfAttention_v2)",
        "self_text": " No mask. queries = X W_query, keys = X W_key, values = X W_value; "
        "attn_weights = softmax(queries keysᵀ / √d_k); context_vec = attn_weights values.",
        "says": "What seed 001 says about the weights, and what its code does",
        "query": 'Seed 001 (004 in English) says "The query is the data to use like before, '
        'while the keys and values matrices are just random-trainable matrices." Its own code '
        "makes all three trainable (W_query, W_key and W_value are nn.Linear weights, "
        "requires_grad = {trainable}), and queries = X W_query is {shape}, ",
        "is_data": "the data itself.",
        "not_data": "not the data X {x_shape}.",
        "per_token": ' It also says "Each token will have its own query, key and value matrix": '
        "each token has a vector, its row of queries, keys, values (shape ({d},)); the matrices "
        "W_query, W_key, W_value {w_shape} are shared by every token.",
        "causal": "Causal attention (CausalAttention, dropout 0)",
        "causal_text": " Scores above the diagonal are set to −∞ before the softmax, so each "
        "token averages only itself and its predecessors. The code stacks the input twice: "
        "batch (2, 6, 3) → context_vecs (2, 6, 2), both copies identical. Dropout on the "
        "weights (seed 001) is a training-time step; here p = 0.",
        "masked_scores": "masked attn_scores",
        "masked_formula": "softmax(masked scores)",
        "multihead": "Multi-head attention (MultiHeadAttention, d_out = 2, num_heads = 2)",
        "multihead_text": " head_dim = d_out / num_heads = 1: the fused projections are split "
        "into 2 heads of width 1 by view + transpose, each head attends causally, the heads "
        "are merged back and out_proj (W_O and its bias b_O) mixes them.",
        "causal_op": "causal attention",
        "head": "A (head {i})",
        "mask_title": "Seed 001's mask line, run as written",
        "mask_no_nan": "Seed 001 builds the mask as `{code}`; run here, it has no NaN entry.",
        "mask_all_lower": "every entry on and below the diagonal",
        "mask_some": "entries",
        "mask_nan": "Seed 001 builds the mask as `{code}`. Run as written (n = {n}), 0 · (−∞) is "
        "NaN, so the mask has NaN in {nan_mask} of its {entries} entries ({where}, where it "
        "should be 0), and softmax(S + mask) is NaN in {nan_weights} of {entries}",
        "mask_all_nan": ": every weight is NaN, so is every output.",
        "mask_weights": " weights.",
        "mask_meant": " The mask meant has 0 where a token may look: `{fix}` (or "
        "`torch.full((n, n), float('-inf')).triu(1)`) gives 0 on and below the diagonal, −∞ "
        "above, and weights whose rows sum to 1 (largest |row sum − 1| {error}).",
        "meant_label": "the mask meant",
    },
    "pt": {
        "title": 'Pesos treináveis, atenção causal e multi-cabeça: "Your journey starts with '
        'one step"',
        "source": "seed 001, código do cap. 3 de LLMs-from-scratch, de rasbt",
        "book": "o notebook do cap. 3 de rasbt imprime",
        "inputs": "Entradas",
        "inputs_text": "Seis tokens, embeddings de 3 dimensões (os `inputs` do código).",
        "draw": "Os pesos são sorteados exatamente como o código do documento os sorteia: "
        "torch.manual_seed({seed}), e então camadas nn.Linear criadas na ordem {order} "
        "(a inicialização padrão do PyTorch, Kaiming uniforme: U(−1/√fan_in, 1/√fan_in), "
        "fan_in = a largura de entrada da camada; {bounds}); na convenção de linhas, "
        "W = linear.weight.T.",
        "bound": "{names}: fan_in = {f}, limite 1/√{f} ≈ {bound}",
        "out_proj": "out_proj (com viés)",
        "inside": "está dentro de",
        "outside": "está FORA de",
        "beyond": "além de",
        "within": "dentro de",
        "b_o": "O maior |b_O| = {big} {inside} ±1/√{d_out} ≈ {wide} e {beyond} "
        "±1/√{d_in} ≈ {narrow}: o limite de out_proj vem do seu próprio fan-in, {d_out}.",
        "self": "Autoatenção com pesos treináveis (SelfAttention_v2)",
        "self_text": " Sem máscara. queries = X W_query, keys = X W_key, values = X W_value; "
        "attn_weights = softmax(queries keysᵀ / √d_k); context_vec = attn_weights values.",
        "says": "O que a seed 001 diz dos pesos, e o que o seu código faz",
        "query": 'A seed 001 diz: "A consulta é os dados a serem usados como antes, enquanto '
        'as matrizes de chaves e valores são apenas matrizes aleatórias e treináveis." O seu '
        "próprio código torna as três treináveis (W_query, W_key e W_value são pesos de "
        "nn.Linear, requires_grad = {trainable}), e queries = X W_query tem forma {shape}, ",
        "is_data": "os próprios dados.",
        "not_data": "não os dados X {x_shape}.",
        "per_token": ' Ela diz também "Cada token terá sua própria matriz de consulta, chave e '
        'valor": cada token tem um vetor, a sua linha de queries, keys, values (forma ({d},)); '
        "as matrizes W_query, W_key, W_value {w_shape} são as mesmas para todos os tokens.",
        "causal": "Atenção causal (CausalAttention, dropout 0)",
        "causal_text": " Os scores acima da diagonal viram −∞ antes do softmax, então cada "
        "token faz a média só de si e dos anteriores. O código empilha a entrada duas vezes: "
        "batch (2, 6, 3) → context_vecs (2, 6, 2), as duas cópias iguais. O dropout nos pesos "
        "(seed 001) é um passo do treino; aqui p = 0.",
        "masked_scores": "attn_scores mascarados",
        "masked_formula": "softmax(scores mascarados)",
        "multihead": "Atenção multi-cabeça (MultiHeadAttention, d_out = 2, num_heads = 2)",
        "multihead_text": " head_dim = d_out / num_heads = 1: as projeções fundidas são "
        "divididas em 2 cabeças de largura 1 por view + transpose, cada cabeça atende "
        "causalmente, as cabeças são juntadas de novo e out_proj (W_O e o seu viés b_O) as "
        "mistura.",
        "causal_op": "atenção causal",
        "head": "A (cabeça {i})",
        "mask_title": "A linha da máscara da seed 001, executada como está escrita",
        "mask_no_nan": "A seed 001 constrói a máscara como `{code}`; executada aqui, ela não "
        "tem nenhuma entrada NaN.",
        "mask_all_lower": "todas as entradas na diagonal e abaixo dela",
        "mask_some": "entradas",
        "mask_nan": "A seed 001 constrói a máscara como `{code}`. Executada como está escrita "
        "(n = {n}), 0 · (−∞) é NaN, então a máscara tem NaN em {nan_mask} das suas {entries} "
        "entradas ({where}, onde deveria ser 0), e softmax(S + mask) é NaN em {nan_weights} "
        "de {entries}",
        "mask_all_nan": ": todo peso é NaN, e toda saída também.",
        "mask_weights": " pesos.",
        "mask_meant": " A máscara pretendida tem 0 onde um token pode olhar: `{fix}` (ou "
        "`torch.full((n, n), float('-inf')).triu(1)`) dá 0 na diagonal e abaixo dela, −∞ "
        "acima, e pesos cujas linhas somam 1 (maior |soma da linha − 1| {error}).",
        "meant_label": "a máscara pretendida",
    },
}

#: Seed 002's split into heads, shape by shape (`attention_ref.worked.i_want_pizza`), per
#: language: the shapes, the token's pieces and where "first reshape, then swap" sends them, and
#: whether swap-then-reshape restores Q are the facts `reshape_first_note` computes once.
PIZZA: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": 'Splitting into heads, shape by shape: "Я хочу пиццу <eos>"',
        "source": "seed 002 (Russian): batch 1, seq_len 4, embedding 6, 3 heads",
        "head": "head {k}",
        "input": "Input and weights",
        "input_text": "batch_size = {B}, seq_len = {T}, embedding_dim = {d}, heads = {h}. The "
        'document numbers the entries of Q row by row ("Пиццу" = [13..18]); to get exactly '
        "those numbers this example takes X with rows 1..6, 7..12, 13..18, 19..24 and "
        "W_q = W_k = W_v = W_o = I_6, so Q = K = V = X. As in the document, no mask.",
        "embeddings": "token embeddings",
        "qkv": "X W_q, X W_k, X W_v with W (6, 6)",
        "split": "Split into heads: reshape, then swap",
        "split_text": "head_dim = embedding_dim / heads = {d_k}. Reshape cuts each token's "
        "vector into {h} pieces of {d_k}; swap moves the head axis before the tokens so every "
        "head is a ({T}, {d_k}) matrix.",
        "reshaped": 'Q reshaped[0, {i}] ("{token}")',
        "at_once": "Attention in every head at once",
        "at_once_text": "softmax(Q Kᵀ / √head_dim) V per head. These integer embeddings give "
        "large scores, so the weights are almost one-hot (the largest weight of each row is at "
        "least {least}): the walkthrough is about shapes.",
        "outputs": "head outputs",
        "concat": "Concat: the inverse operations",
        "concat_text": "Swap back, then reshape: each token's three head outputs become one "
        "vector of 6. ",
        "final": "final output",
        "reshape_first": "reshape first[0]",
        "reshape_first_formula": "the split Q reshaped to (B, T, heads, head_dim) first",
        "holds": "head {k} of `{token}`",
        "scrambled": "tokens and heads are scrambled",
        "come_back": "the tokens happen to come back",
        "exactly": "exactly",
        "not": "NOT",
        "note": 'The document\'s text says to undo the split "first reshape, then swap". '
        "Reshaping {shape} first reads the numbers head by head: the row of `{token}` becomes "
        "{row}, that is {holds}, instead of its own {own}: {verdict}, and the swap that follows "
        "cannot sort them back (it only moves whole axes). Swap first, then reshape (the order "
        "of the document's own shape list) gives Q back: {restored}. Its list also writes "
        "(batch_size, text, seq_len, head_dim) for the head outputs; the axis is heads: "
        "{heads_shape}.",
    },
    "pt": {
        "title": 'Divisão em cabeças, forma por forma: "Я хочу пиццу <eos>"',
        "source": "seed 002 (russo): batch 1, seq_len 4, embedding 6, 3 cabeças",
        "head": "cabeça {k}",
        "input": "Entrada e pesos",
        "input_text": "batch_size = {B}, seq_len = {T}, embedding_dim = {d}, heads = {h}. O "
        'documento numera as entradas de Q linha por linha ("Пиццу" = [13..18]); para obter '
        "exatamente esses números, este exemplo toma X com linhas 1..6, 7..12, 13..18, 19..24 "
        "e W_q = W_k = W_v = W_o = I_6, então Q = K = V = X. Como no documento, sem máscara.",
        "embeddings": "embeddings dos tokens",
        "qkv": "X W_q, X W_k, X W_v com W (6, 6)",
        "split": "Divisão em cabeças: reshape, depois swap",
        "split_text": "head_dim = embedding_dim / heads = {d_k}. O reshape corta o vetor de cada "
        "token em {h} pedaços de {d_k}; o swap põe o eixo das cabeças antes dos tokens, e cada "
        "cabeça vira uma matriz ({T}, {d_k}).",
        "reshaped": 'Q após reshape[0, {i}] ("{token}")',
        "at_once": "A atenção em todas as cabeças de uma vez",
        "at_once_text": "softmax(Q Kᵀ / √head_dim) V por cabeça. Estes embeddings inteiros dão "
        "scores grandes, então os pesos são quase one-hot (o maior peso de cada linha é pelo "
        "menos {least}): o percurso é sobre as formas.",
        "outputs": "saídas das cabeças",
        "concat": "Concatenação: as operações inversas",
        "concat_text": "Swap de volta, depois reshape: as três saídas de cabeça de cada token "
        "viram um vetor de 6. ",
        "final": "saída final",
        "reshape_first": "reshape primeiro[0]",
        "reshape_first_formula": "o Q dividido, com reshape para (B, T, heads, head_dim) primeiro",
        "holds": "a cabeça {k} de `{token}`",
        "scrambled": "tokens e cabeças ficam embaralhados",
        "come_back": "os tokens voltam por acaso",
        "exactly": "exatamente",
        "not": "NÃO",
        "note": 'O texto do documento diz para desfazer a divisão "primeiro reshape, depois '
        'swap". Fazer o reshape de {shape} primeiro lê os números cabeça por cabeça: a linha '
        "de `{token}` vira {row}, isto é, {holds}, em vez da sua própria {own}: {verdict}, e o "
        "swap seguinte não consegue reordená-los (ele só move eixos inteiros). Swap primeiro, "
        "depois reshape (a ordem da própria lista de formas do documento) devolve Q: "
        "{restored}. A lista também escreve (batch_size, text, seq_len, head_dim) para as "
        "saídas das cabeças; o eixo é o das cabeças: {heads_shape}.",
    },
}

#: A user's own numbers (`attention_ref.worked.your_input.explain_input`), per language: whether
#: a mask was applied, the weights' form, the number of heads, whether there is a W_O and any
#: bias are the facts it reads once from the file.
INPUT: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title_causal": "Masked multi-head attention: your input",
        "title_plain": "Multi-head attention: your input",
        "source": "--input file ({view}, {extras})",
        "fused": "fused matrices split into heads",
        "per_head": "per-head matrices",
        "no_wo": "no W_O",
        "biases": "with biases",
    },
    "pt": {
        "title_causal": "Atenção multi-cabeça com máscara: os seus números",
        "title_plain": "Atenção multi-cabeça: os seus números",
        "source": "arquivo --input ({view}, {extras})",
        "fused": "matrizes fundidas, divididas em cabeças",
        "per_head": "matrizes por cabeça",
        "no_wo": "sem W_O",
        "biases": "com vieses",
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
        "inputs_text": "The keys and values are read {tile} at a time: {tiles}. The n × n "
        "matrix of scores is never formed: each tile's scores S_j are used and dropped. M_j is "
        "the causal mask's columns of tile j.",
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
        "inputs_text": "As chaves e os valores são lidos {tile} de cada vez: {tiles}. A matriz "
        "n × n de scores nunca é formada: os scores S_j de cada bloco são usados e descartados. "
        "M_j são as colunas do bloco j da máscara causal.",
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
