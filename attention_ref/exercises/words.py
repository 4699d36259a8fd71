r"""The words of an exercise's statement and key, in English and Portuguese: one table for
the homework's attention and today's (`TEXT`), which `attention_ref.exercises.statement` and
`attention_ref.exercises.key` fill in.
"""

from __future__ import annotations

from typing import Final

from attention_ref.render import DECIMAL_MARK
from attention_ref.worked.words_grouped import WINDOW_SYMBOL

#: The words of the statement and the key, per language.
TEXT: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Exercise {seed}: masked multi-head attention{with} by hand",
        "title_plain": "Exercise {seed}: multi-head attention{with} by hand",
        "source": "attnref exercise --seed {seed} --tokens {n} --d-model {d} --heads {h} {causal}",
        "data": "Data",
        "data_lead": "Tokens ({tokens}); each token is a row of X (d_model = {d}).",
        "data_heads": " h = {h} {heads}, d_k = d_v = d_model / h = {d_k}. Row convention: "
        "Q = X W_Q.",
        "mask": "Causal mask: token t sees itself and the tokens before it.",
        "nomask": "No mask: every token sees every token.",
        "wo": "The output projection W_O is given below.",
        "nowo": "There is no output projection: the output is the concat.",
        "question": "Question {k}: {title}",
        "q1": "projections",
        "q1_text": "For each head i compute Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ and V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ "
        "(integers).",
        "q2": "scores and S = scores / √d_k",
        "q2_text": 'Compute the scores Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ ("scores") and S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, the '
        'scores divided by √d_k ("S").',
        "q3": "mask and softmax",
        "q3_text": "Compute S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M, with M = 0 on and below the diagonal and −∞ above, "
        "and A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), row by row.",
        "q3_nomask": "Compute A⁽ⁱ⁾ = softmax(S⁽ⁱ⁾), row by row.",
        "q4": "head outputs and output",
        "q4_text": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾, the concat [H⁽¹⁾ | … | H⁽ʰ⁾] and the output "
        "Concat · W_O.",
        "q4_nowo": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾ and the output, the concat [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q5": "gradients",
        "q5_text": "Let L = Σ output, the sum of every entry of the output. Compute ∂L/∂W_O, "
        "∂L/∂A⁽¹⁾, ∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ and ∂L/∂X.",
        "q5_nowo": "Let L = Σ output, the sum of every entry of the output. Compute ∂L/∂A⁽¹⁾, "
        "∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ and ∂L/∂X.",
        "how": "How to answer",
        "how_text": "Give decimals to {places}; trailing zeros may be dropped ({zeros}), but "
        "a matrix rounded to fewer places is not right. Write the steps you computed into "
        "`{answer}` (attnref exercise --out writes it, every step null until you fill it in) "
        "in the names of attnref explain --format json: {names}; it names this exercise, "
        '"exercise": {options}. Then run `attnref check {answer}`.',
        "place": "1 place", "places": "{p} places", "for": "{short} for {full}", "for_sep": ", ",
        "names_m": '"M" (M_win), ',
        "names_kv": '"kv_heads": [{{{steps}}}, …] ({note}), ',
        "names_kv_gqa": "one per K/V head",
        "names_kv_rope": "head i's key, value and rotated key, as attnref explain names them",
        "names_heads": '"heads": [{{{steps}}}, …]{note}, "concat", "output"{grads}',
        "names_heads_gqa": ' (one per query head; "K" and "V" there, if you write them, are the '
        "key and value that head reads)",
        "hidden": "On this problem these mistakes give the right numbers, so the check cannot "
        "tell them apart from the right answer: {mistakes}.",
        "grads": ', "grads": {"W_O", "X", "heads": [{"A", "S_masked", "W_Q"}]}',
        "masked": 'Write a masked entry (−∞) as the string "{first}" (check also reads {also}); '
        "null leaves a whole step out, and a large number such as -1e9 is not −∞.",
        "and": "and",
        "key_title": "Solution key of exercise {seed}",
        "title_gqa": "Exercise {seed}: grouped-query attention{with} by hand",
        "title_mqa": "Exercise {seed}: multi-query attention{with} by hand",
        "title_window": "Exercise {seed}: sliding-window attention{with} by hand",
        "title_rope": "Exercise {seed}: rotary position embeddings (RoPE) by hand",
        "with": " with {features}", "with_and": " and ",
        "with_window": "a sliding window", "with_rope": "RoPE",
        "data_gqa": " Grouped-query "
        "attention: h = {h} query heads share g = {g} K/V head{s}{mqa}, d_k = d_v = d_model / "
        "h = {d_k}. The query heads are grouped in order, r = h / g = {r} per K/V head: query "
        "heads 1 … r read K/V head 1, query heads r + 1 … 2r read K/V head 2, and so on (the "
        "order of PyTorch's repeat_interleave and enable_gqa). Row convention: Q = X W_Q.",
        "mqa": " (one K/V head for all: multi-query attention)",
        "data_window": " Sliding window of "
        "w = {w} keys: token t sees itself and the {before} token{bs} before it, and no token "
        "after it: M_win(t, u) = 0 where 0 ≤ t − u < w, −∞ elsewhere.",
        "data_rope": " Rotary position "
        "embeddings (RoPE, RoFormer) on the queries and the keys, not the values: the token at "
        "position m (the first m = 0) has each pair of coordinates (x_2p, x_2p+1), {pairs}, "
        "turned by the angle m θ_p, θ_p = 10000^(−2p/d_k): x'_2p = x_2p cos mθ_p − "
        "x_2p+1 sin mθ_p and x'_2p+1 = x_2p sin mθ_p + x_2p+1 cos mθ_p. The table gives θ_p, "
        "m θ_p and their cosines and sines, rounded to {decimals} places: use them as they are "
        "(or more exact ones).",
        "q1_gqa": "Compute Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ for the h = {h} query heads, and K⁽ʲ⁾ = X W_K⁽ʲ⁾ "
        "and V⁽ʲ⁾ = X W_V⁽ʲ⁾ for the g = {g} K/V head{s} (integers).",
        "q2_gqa": "For each query head i, with j the K/V head of its group, compute the scores "
        'Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ ("scores") and S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k, the scores divided by √d_k ("S").',
        "q4_gqa": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j the K/V head of query head i's group), the "
        "concat [H⁽¹⁾ | … | H⁽ʰ⁾] and the output Concat · W_O.",
        "q4_gqa_nowo": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j the K/V head of query head i's group) and "
        "the output, the concat [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q3_window": "window mask and softmax",
        "q3_window_text": "Write M_win ({n}×{n}), then compute S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win and "
        "A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), row by row.",
        "q_rot": "rotations",
        "q_rot_text": "Rotate every row of Q⁽ⁱ⁾ and K⁽ⁱ⁾ by the angles of its position: "
        "Q_rot⁽ⁱ⁾ and K_rot⁽ⁱ⁾ (the first token's row does not turn). V is not rotated.",
        "q_rot_gqa": "Rotate every row of Q⁽ⁱ⁾ (each query head i) and of K⁽ʲ⁾ (each K/V head "
        "j) by the angles of its position: Q_rot⁽ⁱ⁾ and K_rot⁽ʲ⁾ (the first token's row does "
        "not turn). V is not rotated.",
        "q_rot_scores_text": 'Compute the scores Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ ("scores") and S⁽ⁱ⁾ = '
        'Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ / √d_k, the scores divided by √d_k ("S").',
        "q_rot_scores_gqa": "For each query head i, with j the K/V head of its group, compute "
        'the scores Q_rot⁽ⁱ⁾ K_rot⁽ʲ⁾ᵀ ("scores") and S⁽ⁱ⁾ = Q_rot⁽ⁱ⁾ K_rot⁽ʲ⁾ᵀ / √d_k, the '
        'scores divided by √d_k ("S").',
        "table": "RoPE's angles",
        "pair": "pair {p}", "sin": "sin",
        "row": "{token} (m = {m})",
        "key_q1": "Each head projects every token with its own matrices; with X and the "
        "weights in {0, 1}, the projections are integers.",
        "key_q1_gqa": "The K/V heads are computed once each; each serves r = {r} consecutive "
        "query heads. With X and the weights in {{0, 1}}, the projections are integers.",
        "key_rope_text": "d_k = {d_k}: {pairs} pair{s} of coordinates, θ_p = 10000^(−2p/d_k). "
        "Each row m of Q and K turns by its own angles (the first token, m = 0, does not "
        "turn); V does not turn. A rotation keeps lengths: every row keeps its norm.",
        "key_scores": "Entry (t, u) of the scores Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ is the query of token t against "
        "the key of token u; S⁽ⁱ⁾ divides them by √{d_k}.",
        "key_scores_gqa": "Entry (t, u) of the scores Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ is the query of token t in "
        "head i against the key of token u in K/V head j of its group; S⁽ⁱ⁾ divides them by "
        "√{d_k}.",
        "key_scores_rope": "Entry (t, u) of the scores Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ compares the rotated "
        "query of token t with the rotated key of token u; it depends on the positions only "
        "through t − u. S⁽ⁱ⁾ divides them by √{d_k}.",
        "key_scores_rope_gqa": "Entry (t, u) of the scores Q_rot⁽ⁱ⁾ K_rot⁽ʲ⁾ᵀ compares the "
        "rotated query of token t in head i with the rotated key of token u in K/V head j of "
        "its group; it depends on the positions only through t − u. S⁽ⁱ⁾ divides them by "
        "√{d_k}.",
        "key_mask": "M is 0 on and below the diagonal and −∞ above: token t sees itself and the "
        "tokens before it, never those after it (u > t). As e^(−∞) = 0, each row of A⁽ⁱ⁾ is a "
        "distribution over the visible tokens, and the first row is (1, 0, …, 0).",
        "key_nomask": "Without a mask, S̃⁽ⁱ⁾ = S⁽ⁱ⁾: each row of A⁽ⁱ⁾ is a distribution over "
        "every token.",
        "key_window": "M_win is 0 where 0 ≤ t − u < {w} (token t sees itself and the {before} "
        "before it) and −∞ elsewhere: the future, as in the causal mask, and the keys that are "
        "too old. Each row of A⁽ⁱ⁾ is a distribution over the keys of the window.",
        "key_out": "Row t of H⁽ⁱ⁾ is the average of the rows of the V its head reads, weighted "
        "by row t of A⁽ⁱ⁾; the heads side by side make the concat{wo}.",
        "key_out_wo": ", and W_O projects it onto the output",
        "key_out_nowo": ", which is the output (there is no W_O)",
        "key_q5": "L = Σ output, so G = ∂L/∂output is all ones. Each ∂Z below is ∂L/∂Z, a "
        "matrix of Z's shape: ∂W_O = Concatᵀ G, ∂H⁽ⁱ⁾ is head i's block of G W_Oᵀ, "
        "∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V{kv}ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾)) (zero on the "
        "masked entries), {dq}, ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾; ∂X adds the paths "
        "of the query, the key and the value.",
        "key_q5_nowo": "L = Σ output, so G = ∂L/∂output is all ones; without W_O, G is the "
        "gradient of the concat. Each ∂Z below is ∂L/∂Z, a matrix of Z's shape: ∂H⁽ⁱ⁾ is head "
        "i's block of G, ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V{kv}ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾)) "
        "(zero on the masked entries), {dq}, ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾; ∂X "
        "adds the paths of the query, the key and the value.",
        "key_q5_kv": "Each K/V head adds the gradients that reach it through each query head of "
        "its group: ∂K⁽ʲ⁾ = Σ ∂K⁽ⁱ⁾, ∂V⁽ʲ⁾ = Σ ∂V⁽ⁱ⁾, and ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾.",
        "q5_rope": "The scores read Q_rot and K_rot: the gradient goes back through RoPE's "
        "rotation to reach W_Q.",
        "dq": "∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K{kv} / √d_k",
        "dq_rope": "∂Q⁽ⁱ⁾ = ∂Q_rot⁽ⁱ⁾ turned back through RoPE (below), with ∂Q_rot⁽ⁱ⁾ = "
        "∂S̃⁽ⁱ⁾ K_rot / √d_k",
        "key_q5_rope": "The rotation of row m is orthogonal (q'_m = q_m R_mᵀ), so ∂q_m = ∂q'_m "
        "R_m: each pair of ∂Q_rot⁽ⁱ⁾ turned back by −mθ_p gives ∂Q⁽ⁱ⁾, and ∂K comes from "
        "∂K_rot = ∂S̃⁽ⁱ⁾ᵀ Q_rot⁽ⁱ⁾ / √d_k the same way.",
        "output": "Output",
        "window_symbol": WINDOW_SYMBOL["en"],
        "row_by_row": "row by row",
    },
    "pt": {
        "title": "Exercício {seed}: atenção multi-cabeça mascarada{with} à mão",
        "title_plain": "Exercício {seed}: atenção multi-cabeça{with} à mão",
        "source": "attnref exercise --seed {seed} --tokens {n} --d-model {d} --heads {h} {causal} "
        "--lang pt",
        "data": "Dados",
        "data_lead": "Tokens ({tokens}); cada token é uma linha de X (d_model = {d}).",
        "data_heads": " h = {h} {heads}, d_k = d_v = d_model / h = {d_k}. Convenção de linhas: "
        "Q = X W_Q.",
        "mask": "Máscara causal: o token t vê a si mesmo e os tokens anteriores.",
        "nomask": "Sem máscara: todo token vê todos os tokens.",
        "wo": "A projeção de saída W_O está abaixo.",
        "nowo": "Não há projeção de saída: a saída é a concatenação.",
        "question": "Questão {k}: {title}",
        "q1": "projeções",
        "q1_text": "Para cada cabeça i, calcule Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ e "
        "V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ (inteiros).",
        "q2": "scores e S = scores / √d_k",
        "q2_text": 'Calcule os scores Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ ("scores") e S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, os '
        'scores divididos por √d_k ("S").',
        "q3": "máscara e softmax",
        "q3_text": "Calcule S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M, com M = 0 na diagonal e abaixo dela e −∞ acima, "
        "e A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), linha a linha.",
        "q3_nomask": "Calcule A⁽ⁱ⁾ = softmax(S⁽ⁱ⁾), linha a linha.",
        "q4": "saídas das cabeças e saída final",
        "q4_text": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾] e a saída "
        "Concat · W_O.",
        "q4_nowo": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾ e a saída, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q5": "gradientes",
        "q5_text": "Seja L = Σ saída, a soma de todas as entradas da saída. Calcule ∂L/∂W_O, "
        "∂L/∂A⁽¹⁾, ∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ e ∂L/∂X.",
        "q5_nowo": "Seja L = Σ saída, a soma de todas as entradas da saída. Calcule ∂L/∂A⁽¹⁾, "
        "∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ e ∂L/∂X.",
        "how": "Como responder",
        "how_text": "Dê {places}; zeros à direita podem ser omitidos ({zeros}), mas uma "
        "matriz arredondada com menos casas não está certa. Escreva os passos calculados em "
        "`{answer}` (attnref exercise --out o escreve, cada passo null até você preenchê-lo) "
        'com os nomes de attnref explain --format json: {names}; ele nomeia este exercício, '
        '"exercise": {options}. Depois rode `attnref check {answer}`.',
        "place": "1 casa decimal", "places": "{p} casas decimais", "for": "{short} para {full}",
        "for_sep": "; ",
        "names_m": '"M" (M_jan), ',
        "names_kv": '"kv_heads": [{{{steps}}}, …] ({note}), ',
        "names_kv_gqa": "uma por cabeça K/V",
        "names_kv_rope": "a chave, o valor e a chave girada da cabeça i, com os nomes de attnref "
        "explain",
        "names_heads": '"heads": [{{{steps}}}, …]{note}, "concat", "output"{grads}',
        "names_heads_gqa": ' (uma por cabeça de consulta; "K" e "V" ali, se você os escrever, '
        "são a chave e o valor que essa cabeça lê)",
        "hidden": "Neste problema estes erros dão os números certos, e o check não consegue "
        "distingui-los da resposta certa: {mistakes}.",
        "grads": ', "grads": {"W_O", "X", "heads": [{"A", "S_masked", "W_Q"}]}',
        "masked": 'Escreva uma entrada mascarada (−∞) como o texto "{first}" (o check também lê '
        "{also}); null deixa um passo inteiro de fora, e um número grande como -1e9 não é −∞.",
        "comma": "No arquivo de resposta, os números levam ponto decimal e vão sem aspas "
        '(`0.670`, não `"0,670"`): em JSON a vírgula separa as entradas.',
        "and": "e",
        "key_title": "Gabarito do exercício {seed}",
        "title_gqa": "Exercício {seed}: atenção com consultas agrupadas (GQA){with} à mão",
        "title_mqa": "Exercício {seed}: atenção multi-consulta (MQA){with} à mão",
        "title_window": "Exercício {seed}: atenção com janela deslizante{with} à mão",
        "title_rope": "Exercício {seed}: embeddings de posição rotativos (RoPE) à mão",
        "with": ", com {features}", "with_and": " e ",
        "with_window": "janela deslizante", "with_rope": "RoPE",
        "data_gqa": " Atenção "
        "com consultas agrupadas: h = {h} cabeças de consulta compartilham g = {g} cabeça{s} "
        "K/V{mqa}, d_k = d_v = d_model / h = {d_k}. As cabeças de consulta se agrupam em ordem, "
        "r = h / g = {r} por cabeça K/V: as cabeças de consulta 1 … r leem a cabeça K/V 1, as "
        "cabeças de consulta r + 1 … 2r leem a cabeça K/V 2, e assim por diante (a ordem do "
        "repeat_interleave e do enable_gqa do PyTorch). "
        "Convenção de linhas: Q = X W_Q.",
        "mqa": " (uma cabeça K/V para todas: atenção multi-consulta)",
        "data_window": " Janela "
        "deslizante de w = {w} chaves: o token t vê a si mesmo e o{bs} {before} token{bs} "
        "anterior{bes}, e nenhum token depois dele: M_jan(t, u) = 0 onde 0 ≤ t − u < w, −∞ nas "
        "demais entradas.",
        "data_rope": " Embeddings "
        "de posição rotativos (RoPE, RoFormer) nas consultas e nas chaves, não nos valores: o "
        "token na posição m (o primeiro tem m = 0) tem cada par de coordenadas (x_2p, x_2p+1), "
        "{pairs}, girado pelo ângulo m θ_p, θ_p = 10000^(−2p/d_k): x'_2p = x_2p cos mθ_p "
        "− x_2p+1 sen mθ_p e x'_2p+1 = x_2p sen mθ_p + x_2p+1 cos mθ_p. A tabela dá θ_p, m θ_p "
        "e os seus cossenos e senos, arredondados com {decimals} casas: use-os como estão (ou "
        "valores mais exatos).",
        "q1_gqa": "Calcule Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ para as h = {h} cabeças de consulta, e K⁽ʲ⁾ = "
        "X W_K⁽ʲ⁾ e V⁽ʲ⁾ = X W_V⁽ʲ⁾ para a{s} g = {g} cabeça{s} K/V (inteiros).",
        "q2_gqa": "Para cada cabeça de consulta i, com j a cabeça K/V do seu grupo, calcule "
        'os scores Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ ("scores") e S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k, os scores divididos por '
        '√d_k ("S").',
        "q4_gqa": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j a cabeça K/V do grupo da cabeça de consulta i), "
        "a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾] e a saída Concat · W_O.",
        "q4_gqa_nowo": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j a cabeça K/V do grupo da cabeça de consulta "
        "i) e a saída, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q3_window": "máscara da janela e softmax",
        "q3_window_text": "Escreva M_jan ({n}×{n}) e calcule S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_jan e "
        "A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), linha a linha.",
        "q_rot": "rotações",
        "q_rot_text": "Gire cada linha de Q⁽ⁱ⁾ e de K⁽ⁱ⁾ pelos ângulos da sua posição: "
        "Q_rot⁽ⁱ⁾ e K_rot⁽ⁱ⁾ (a linha do primeiro token não gira). V não é girado.",
        "q_rot_gqa": "Gire cada linha de Q⁽ⁱ⁾ (cada cabeça de consulta i) e de K⁽ʲ⁾ (cada "
        "cabeça K/V j) pelos ângulos da sua posição: Q_rot⁽ⁱ⁾ e K_rot⁽ʲ⁾ (a linha do primeiro "
        "token não gira). V não é girado.",
        "q_rot_scores_text": 'Calcule os scores Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ ("scores") e S⁽ⁱ⁾ = '
        'Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ / √d_k, os scores divididos por √d_k ("S").',
        "q_rot_scores_gqa": "Para cada cabeça de consulta i, com j a cabeça K/V do seu grupo, "
        'calcule os scores Q_rot⁽ⁱ⁾ K_rot⁽ʲ⁾ᵀ ("scores") e S⁽ⁱ⁾ = Q_rot⁽ⁱ⁾ K_rot⁽ʲ⁾ᵀ / √d_k, '
        'os scores divididos por √d_k ("S").',
        "table": "Os ângulos do RoPE",
        "pair": "par {p}", "sin": "sen",
        "row": "{token} (m = {m})",
        "key_q1": "Cada cabeça projeta todos os tokens com as suas próprias matrizes; com X e "
        "os pesos em {0, 1}, as projeções são inteiras.",
        "key_q1_gqa": "As cabeças K/V são calculadas uma vez cada; cada uma serve r = {r} "
        "cabeças de consulta consecutivas. Com X e os pesos em {{0, 1}}, as projeções são "
        "inteiras.",
        "key_rope_text": "d_k = {d_k}: {pairs} par{es} de coordenadas, θ_p = 10000^(−2p/d_k). "
        "Cada linha m de Q e de K gira pelos seus próprios ângulos (o primeiro token, m = 0, "
        "não gira); V não gira. Uma rotação preserva comprimentos: cada linha mantém a sua "
        "norma.",
        "key_scores": "A entrada (t, u) dos scores Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ é a consulta do token t contra a "
        "chave do token u; S⁽ⁱ⁾ os divide por √{d_k}.",
        "key_scores_gqa": "A entrada (t, u) dos scores Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ é a consulta do token t na "
        "cabeça i contra a chave do token u na cabeça K/V j do seu grupo; S⁽ⁱ⁾ os divide por "
        "√{d_k}.",
        "key_scores_rope": "A entrada (t, u) dos scores Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ compara a consulta "
        "girada do token t com a chave girada do token u; ela só depende das posições pela "
        "diferença t − u. S⁽ⁱ⁾ os divide por √{d_k}.",
        "key_scores_rope_gqa": "A entrada (t, u) dos scores Q_rot⁽ⁱ⁾ K_rot⁽ʲ⁾ᵀ compara a "
        "consulta girada do token t na cabeça i com a chave girada do token u na cabeça K/V j "
        "do seu grupo; ela só depende das posições pela diferença t − u. S⁽ⁱ⁾ os divide por "
        "√{d_k}.",
        "key_mask": "M vale 0 na diagonal e abaixo dela e −∞ acima: o token t vê a si mesmo e os "
        "tokens anteriores, nunca os posteriores (u > t). Como e^(−∞) = 0, cada linha de A⁽ⁱ⁾ "
        "é uma distribuição sobre os tokens visíveis, e a primeira linha é (1; 0; …; 0).",
        "key_nomask": "Sem máscara, S̃⁽ⁱ⁾ = S⁽ⁱ⁾: cada linha de A⁽ⁱ⁾ é uma distribuição sobre "
        "todos os tokens.",
        "key_window": "M_jan vale 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e o{s} "
        "{before} anterior{es}) e −∞ nas demais entradas: o futuro, como na máscara causal, e "
        "as chaves antigas demais. Cada linha de A⁽ⁱ⁾ é uma distribuição sobre as chaves da "
        "janela.",
        "key_out": "A linha t de H⁽ⁱ⁾ é a média das linhas do V que a cabeça lê, ponderada pela "
        "linha t de A⁽ⁱ⁾; as cabeças lado a lado formam a concatenação{wo}.",
        "key_out_wo": ", e W_O a projeta na saída",
        "key_out_nowo": ", que é a saída (não há W_O)",
        "key_q5": "L = Σ saída, logo G = ∂L/∂saída é toda de uns. Cada ∂Z abaixo é ∂L/∂Z, uma "
        "matriz do formato de Z: ∂W_O = Concatᵀ G, ∂H⁽ⁱ⁾ é o bloco da cabeça i em G W_Oᵀ, "
        "∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V{kv}ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾)) (zero nas "
        "entradas mascaradas), {dq}, ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾; ∂X soma os "
        "caminhos da consulta, da chave e do valor.",
        "key_q5_nowo": "L = Σ saída, logo G = ∂L/∂saída é toda de uns; sem W_O, G é o gradiente "
        "da concatenação. Cada ∂Z abaixo é ∂L/∂Z, uma matriz do formato de Z: ∂H⁽ⁱ⁾ é o bloco "
        "da cabeça i em G, ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V{kv}ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − "
        "rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾)) (zero nas entradas mascaradas), {dq}, "
        "∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾; ∂X soma os caminhos da consulta, da chave e do valor.",
        "key_q5_kv": "Cada cabeça K/V soma os gradientes que chegam por cada cabeça de consulta "
        "do seu grupo: ∂K⁽ʲ⁾ = Σ ∂K⁽ⁱ⁾, ∂V⁽ʲ⁾ = Σ ∂V⁽ⁱ⁾, e ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾.",
        "q5_rope": "Os scores leem Q_rot e K_rot: o gradiente volta pela rotação do RoPE para "
        "chegar a W_Q.",
        "dq": "∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K{kv} / √d_k",
        "dq_rope": "∂Q⁽ⁱ⁾ = ∂Q_rot⁽ⁱ⁾ girado de volta pelo RoPE (abaixo), com ∂Q_rot⁽ⁱ⁾ = "
        "∂S̃⁽ⁱ⁾ K_rot / √d_k",
        "key_q5_rope": "A rotação da linha m é ortogonal (q'_m = q_m R_mᵀ), logo ∂q_m = ∂q'_m "
        "R_m: cada par de ∂Q_rot⁽ⁱ⁾ girado de volta por −mθ_p dá ∂Q⁽ⁱ⁾, e ∂K vem de "
        "∂K_rot = ∂S̃⁽ⁱ⁾ᵀ Q_rot⁽ⁱ⁾ / √d_k do mesmo jeito.",
        "output": "Saída",
        "window_symbol": WINDOW_SYMBOL["pt"],
        "row_by_row": "linha a linha",
    },
}  # fmt: skip


def decimals_words(p: int, lang: str) -> dict[str, str]:
    """How many places, and the zeros that may be dropped at ``p`` places, in words:
    ``3 places`` and ``0.67 for 0.670, 2 for 2.000``."""
    w = TEXT[lang]
    places = w["place"] if p == 1 else w["places"].format(p=p)
    mark = DECIMAL_MARK[lang]
    pairs = [("2", f"2{mark}" + "0" * p)]
    if p >= 2:
        full = f"0{mark}" + "6" * (p - 2) + "70"
        pairs.insert(0, (full[:-1], full))
    zeros = w["for_sep"].join(w["for"].format(short=s, full=f) for s, f in pairs)
    return {"places": places, "zeros": zeros}


__all__ = ["TEXT", "decimals_words"]
