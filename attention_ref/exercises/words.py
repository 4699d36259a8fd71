r"""The words of an exercise's statement and key, in English and Portuguese: one table for
the homework's attention and today's (`TEXT`), which `attention_ref.exercises.statement` and
`attention_ref.exercises.key` fill in.
"""

from __future__ import annotations

from typing import Final

from attention_ref.render import DECIMAL_MARK

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
        "q3": "mask and softmax",
        "q3_text": "Compute S̃⁽ⁱ⁾ = S⁽ⁱ⁾{plus_b} + M, with M = 0 on and below the diagonal and "
        "−∞ above, and A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), row by row.",
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
        "names_kv": '"kv_heads": [{{{steps}}}, …] ({note}), ',
        "names_heads": '"heads": [{{{steps}}}, …]{note}, "concat", "output"{grads}',
        "hidden": "On this problem these mistakes give the right numbers, so the check cannot "
        "tell them apart from the right answer: {mistakes}.",
        "grads": ', "grads": {"W_O", "X", "heads": [{"A", "S_masked", "W_Q"}]}',
        "masked": 'Write a masked entry (−∞) as the string "{first}" (check also reads {also}); '
        "null leaves a whole step out, and a large number such as -1e9 is not −∞.",
        "and": "and",
        "key_title": "Solution key of exercise {seed}",
        "q2_text": '{lead} the scores {q}⁽ⁱ⁾ {k}{kv}ᵀ ("scores") and S⁽ⁱ⁾ = {q}⁽ⁱ⁾ {k}{kv}ᵀ / '
        '√d_k, the scores divided by √d_k ("S").',
        "key_scores": "Entry (t, u) of the scores {q}⁽ⁱ⁾ {k}{kv}ᵀ {compares} the {q_word} of "
        "token t{in_head} {against} the {k_word} of token u{in_group}; {depends}S⁽ⁱ⁾ divides "
        "them by √{d_k}.",
        # the slots the features fill (`SLOTS`), and the steps' words they replace
        "lead": "Compute", "q": "Q", "k": "K", "kv": "⁽ⁱ⁾", "q_each": "", "k_of": "",
        "kv_each": "", "compares": "is", "q_word": "query", "against": "against",
        "k_word": "key", "in_head": "", "in_group": "", "depends": "", "plus_b": "",
        "data_mask": " {mask}", "names_m": "", "names_kv_note": "", "names_heads_note": "",
        "mask_symbol": "M",
        "with": " with {features}", "with_and": " and ",
        "key_q1": "Each head projects every token with its own matrices; with X and the "
        "weights in {{0, 1}}, the projections are integers.",
        "key_mask": "M is 0 on and below the diagonal and −∞ above: token t sees itself and the "
        "tokens before it, never those after it (u > t). As e^(−∞) = 0, each row of A⁽ⁱ⁾ is a "
        "distribution over the visible tokens, and the first row is (1, 0, …, 0).",
        "key_nomask": "Without a mask, S̃⁽ⁱ⁾ = S⁽ⁱ⁾: each row of A⁽ⁱ⁾ is a distribution over "
        "every token.",
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
        "dq": "∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K{kv} / √d_k",
        "output": "Output",
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
        "q3": "máscara e softmax",
        "q3_text": "Calcule S̃⁽ⁱ⁾ = S⁽ⁱ⁾{plus_b} + M, com M = 0 na diagonal e abaixo dela e −∞ "
        "acima, e A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), linha a linha.",
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
        "names_kv": '"kv_heads": [{{{steps}}}, …] ({note}), ',
        "names_heads": '"heads": [{{{steps}}}, …]{note}, "concat", "output"{grads}',
        "hidden": "Neste problema estes erros dão os números certos, e o check não consegue "
        "distingui-los da resposta certa: {mistakes}.",
        "grads": ', "grads": {"W_O", "X", "heads": [{"A", "S_masked", "W_Q"}]}',
        "masked": 'Escreva uma entrada mascarada (−∞) como o texto "{first}" (o check também lê '
        "{also}); null deixa um passo inteiro de fora, e um número grande como -1e9 não é −∞.",
        "comma": "No arquivo de resposta, os números levam ponto decimal e vão sem aspas "
        '(`0.670`, não `"0,670"`): em JSON a vírgula separa as entradas.',
        "and": "e",
        "key_title": "Gabarito do exercício {seed}",
        "q2_text": '{lead} os scores {q}⁽ⁱ⁾ {k}{kv}ᵀ ("scores") e S⁽ⁱ⁾ = {q}⁽ⁱ⁾ {k}{kv}ᵀ / '
        '√d_k, os scores divididos por √d_k ("S").',
        "key_scores": "A entrada (t, u) dos scores {q}⁽ⁱ⁾ {k}{kv}ᵀ {compares} a {q_word} do "
        "token t{in_head} {against} a {k_word} do token u{in_group}; {depends}S⁽ⁱ⁾ os divide "
        "por √{d_k}.",
        "lead": "Calcule", "q": "Q", "k": "K", "kv": "⁽ⁱ⁾", "q_each": "", "k_of": "",
        "kv_each": "", "compares": "é", "q_word": "consulta", "against": "contra",
        "k_word": "chave", "in_head": "", "in_group": "", "depends": "", "plus_b": "",
        "data_mask": " {mask}", "names_m": "", "names_kv_note": "", "names_heads_note": "",
        "mask_symbol": "M",
        "with": ", com {features}", "with_and": " e ",
        "key_q1": "Cada cabeça projeta todos os tokens com as suas próprias matrizes; com X e "
        "os pesos em {{0, 1}}, as projeções são inteiras.",
        "key_mask": "M vale 0 na diagonal e abaixo dela e −∞ acima: o token t vê a si mesmo e os "
        "tokens anteriores, nunca os posteriores (u > t). Como e^(−∞) = 0, cada linha de A⁽ⁱ⁾ "
        "é uma distribuição sobre os tokens visíveis, e a primeira linha é (1; 0; …; 0).",
        "key_nomask": "Sem máscara, S̃⁽ⁱ⁾ = S⁽ⁱ⁾: cada linha de A⁽ⁱ⁾ é uma distribuição sobre "
        "todos os tokens.",
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
        "dq": "∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K{kv} / √d_k",
        "output": "Saída",
        "row_by_row": "linha a linha",
    },
}  # fmt: skip
#: The words a feature fills in the homework's sentences (`TEXT`'s defaults: the homework's):
#: ``{q}``, ``{k}`` the queries and keys the scores read, ``{kv}`` the head of K and V, the
#: phrases that say which heads, and how the key says what a score compares.
SLOTS: Final = ("lead", "q", "k", "kv", "q_each", "k_of", "kv_each", "compares", "q_word",
                "against", "k_word", "in_head", "in_group", "depends", "plus_b")  # fmt: skip


def plural(k: int) -> dict[str, str]:
    """The plural endings after a count ``k``, for the words to pick from: ``s`` (``keys``,
    ``chaves``) and ``es`` (Portuguese ``anteriores``)."""
    return {"s": "s" * (k != 1), "es": "es" * (k != 1)}


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


__all__ = ["SLOTS", "TEXT", "decimals_words", "plural"]
