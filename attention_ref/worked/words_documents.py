"""The words of the other documents' examples and of a user's own numbers, per language.

Seeds 001/004's dot-product attention by hand (`HELLO`), seed 001's code (`JOURNEY`), seed 002's
split into heads (`PIZZA`) and ``--input`` files (`INPUT`): each writer computes its facts once
and says them through its table here, in English and in Portuguese (seed 001 is Portuguese: its
sentences are quoted in its own words). Seed 000's words and today's examples' are in
`attention_ref.worked.words` and `attention_ref.worked.words_grouped`.
"""

from __future__ import annotations

from typing import Final

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
        "source": "seed 001, código do ch03 de LLMs-from-scratch, de rasbt",
        "book": "o notebook ch03 de rasbt imprime",
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
        "query": 'A seed 001 (004 em inglês) diz: "A consulta é os dados a serem usados como '
        "antes, enquanto as matrizes de chaves e valores são apenas matrizes aleatórias e "
        'treináveis." O seu '
        "próprio código torna as três treináveis (W_query, W_key e W_value são pesos de "
        "nn.Linear, requires_grad = {trainable}), e queries = X W_query tem forma {shape}, ",
        "is_data": "os próprios dados.",
        "not_data": "não os dados X {x_shape}.",
        "per_token": ' Ela diz também "Cada token terá sua própria matriz de consulta, chave e '
        'valor": cada token tem um vetor, a sua linha de queries, keys, values (forma ({d},)); '
        "as matrizes W_query, W_key, W_value {w_shape} são as mesmas para todos os tokens.",
        "causal": "Atenção causal (CausalAttention, dropout 0)",
        "causal_text": " Os scores acima da diagonal viram −∞ antes da softmax, então cada "
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
