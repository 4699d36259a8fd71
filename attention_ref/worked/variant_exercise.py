r"""Exercises on today's attention: ``attnref exercise --variant gqa|window|rope``.

The same small integer problems as the homework's (`attention_ref.worked.exercise`), drawn from
the seed by ``random.Random(seed)``, with one change each:

* ``gqa``: ``h`` query heads share ``g`` K/V heads; the draw gives ``W_Q^{(i)}`` for the query
  heads, then ``W_K^{(j)}, W_V^{(j)}`` for the K/V heads (``X`` and every weight in
  :math:`\{0, 1\}`, no zero column, as the homework's), and query head :math:`i` (from 1) reads
  K/V head :math:`\lceil i / r \rceil`, :math:`r = h/g`;
* ``window``: the homework's problem of the same seed (the same numbers), with a causal
  sliding window of ``w`` keys instead of the causal mask;
* ``rope``: the homework's problem of the same seed, its queries and keys rotated by RoPE
  (RoFormer's pairs :math:`(x_{2p}, x_{2p+1})`, base 10000); the statement gives
  :math:`\theta_p`, the angles :math:`m\theta_p` and their cosines and sines, rounded as asked.

The four documents are the homework's: statement, key (in English ``explain``'s walk through
the variant's steps, `attention_ref.worked.variant_trace`; in Portuguese the statement's
questions answered), the problem as JSON (``exercise.json``: ``"variant"``, ``"tokens"``,
``"X"``, ``"heads"``, ``"kv_heads"`` for ``gqa``, ``"W_O"``, ``"causal"``, ``"window"`` or
``"rope"``; not an ``explain --input`` file, which has no variants) and the answer to fill in,
every step ``null`` in the names of the variant's ``explain`` JSON
(`attention_ref.worked.variant_steps.LAYOUTS`). ``check`` grades it with the variant's chain
(`attention_ref.worked.variant_mistakes.variant_chain`).
"""

from __future__ import annotations

import json
import random
from typing import Final

import torch

from attention_ref.render import Explanation, JSONValue, Mat, Section
from attention_ref.worked.answer import Problem, chain_template
from attention_ref.worked.exercise import (
    TEXT,
    WORDS,
    Exercise,
    ExerciseOptions,
    _binary,
    _output_weight,
    answer_notes,
)
from attention_ref.worked.trace import L, t
from attention_ref.worked.variant_steps import ROPE_BASE, VariantTrace, variant_trace


def draw_variant_problem(opt: ExerciseOptions) -> dict[str, JSONValue]:
    """A variant's numbers: the homework's draw (``window``, ``rope``: the very same numbers
    for the same seed), or with ``g`` K/V heads drawn after the ``h`` query heads (``gqa``)."""
    rng = random.Random(opt.seed)
    n, d, h, d_k = opt.tokens, opt.d_model, opt.heads, opt.d_k
    tokens = rng.sample(list(WORDS[opt.lang]), n)
    X = _binary(rng, n, d, nonzero_rows=True)
    problem: dict[str, JSONValue] = {"variant": opt.variant, "tokens": tokens, "X": X}
    if opt.variant == "gqa":
        assert opt.kv_heads is not None
        problem["heads"] = [{"W_Q": _binary(rng, d, d_k, nonzero_rows=False)} for _ in range(h)]
        problem["kv_heads"] = [
            {role: _binary(rng, d, d_k, nonzero_rows=False) for role in ("W_K", "W_V")}
            for _ in range(opt.kv_heads)
        ]
    else:
        problem["heads"] = [
            {role: _binary(rng, d, d_k, nonzero_rows=False) for role in ("W_Q", "W_K", "W_V")}
            for _ in range(h)
        ]
    if d >= 2:
        problem["W_O"] = _output_weight(rng, d)
    problem["causal"] = opt.causal
    if opt.variant == "window":
        problem["window"] = opt.window
    if opt.variant == "rope":
        problem["rope"] = {"base": ROPE_BASE, "positions": list(range(n))}
    return problem


def problem_trace(opt: ExerciseOptions, problem: dict[str, JSONValue]) -> VariantTrace:
    """The reference computation of a drawn problem."""
    heads: list[dict[str, list[list[float]]]] = problem["heads"]  # type: ignore[assignment]
    kv: list[dict[str, list[list[float]]]] = problem.get("kv_heads", heads)  # type: ignore[assignment]
    W_O = t(problem["W_O"]) if "W_O" in problem else None  # type: ignore[arg-type]
    return variant_trace(
        opt.variant, t(problem["X"]), t([hd["W_Q"] for hd in heads]),  # type: ignore[arg-type]
        t([hd["W_K"] for hd in kv]), t([hd["W_V"] for hd in kv]), W_O, causal=opt.causal,
        window=opt.window, tokens=tuple(str(x) for x in problem["tokens"]),  # type: ignore[union-attr]
    )  # fmt: skip


def source(opt: ExerciseOptions) -> str:
    """The command that draws the exercise, without ``attnref``."""
    causal = "--causal" if opt.causal else "--no-causal"
    return (f"exercise --seed {opt.seed} --tokens {opt.tokens} --d-model {opt.d_model} "
            f"--heads {opt.heads} {causal}{opt.flags}")  # fmt: skip


def variant_problem(opt: ExerciseOptions) -> Problem:
    """What ``check`` grades an answer to this exercise against (its chain and catalogue)."""
    from attention_ref.worked.variant_mistakes import variant_chain

    tr = problem_trace(opt, draw_variant_problem(opt))
    return Problem(tr, {"exercise": opt.to_json()}, source(opt), opt.lang, opt.decimals,
                   variant_chain(opt.variant))  # fmt: skip


# --- the words ---------------------------------------------------------------------------------

#: The statement's words per language (the rest is the homework's, `TEXT`).
VTEXT: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title_gqa": "Exercise {seed}: grouped-query attention by hand",
        "title_mqa": "Exercise {seed}: multi-query attention by hand",
        "title_window": "Exercise {seed}: sliding-window attention by hand",
        "title_rope": "Exercise {seed}: rotary position embeddings (RoPE) by hand",
        "data_gqa": "Tokens ({tokens}); each token is a row of X (d_model = {d}). Grouped-query "
        "attention: h = {h} query heads share g = {g} K/V head{s}{mqa}, d_k = d_v = d_model / "
        "h = {d_k}. The query heads are grouped in order, r = h / g = {r} per K/V head: query "
        "heads 1 … r read K/V head 1, query heads r + 1 … 2r read K/V head 2, and so on (the "
        "order of PyTorch's repeat_interleave and enable_gqa). Row convention: Q = X W_Q. {mask} "
        "{wo}",
        "mqa": " (one K/V head for all: multi-query attention)",
        "data_window": "Tokens ({tokens}); each token is a row of X (d_model = {d}). h = {h} "
        "head{hs}, d_k = d_v = d_model / h = {d_k}. Row convention: Q = X W_Q. Sliding window of "
        "w = {w} keys: token t sees itself and the {before} token{s} before it, and no token "
        "after it: M_win(t, u) = 0 where 0 ≤ t − u < w, −∞ elsewhere. {wo}",
        "data_rope": "Tokens ({tokens}); each token is a row of X (d_model = {d}). h = {h} "
        "head{hs}, d_k = d_v = d_model / h = {d_k}. Row convention: Q = X W_Q. Rotary position "
        "embeddings (RoPE, RoFormer) on the queries and the keys, not the values: the token at "
        "position m (the first m = 0) has each pair of coordinates (x_2p, x_2p+1), {pairs}, "
        "turned by the angle m θ_p, θ_p = 10000^(−2p/d_k): x'_2p = x_2p cos mθ_p − "
        "x_2p+1 sin mθ_p and x'_2p+1 = x_2p sin mθ_p + x_2p+1 cos mθ_p. The table gives θ_p, "
        "m θ_p and their cosines and sines, rounded to {decimals} places: use them as they are "
        "(or more exact ones). {mask} {wo}",
        "q1_gqa": "Compute Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ for the h = {h} query heads, and K⁽ʲ⁾ = X W_K⁽ʲ⁾ "
        "and V⁽ʲ⁾ = X W_V⁽ʲ⁾ for the g = {g} K/V head{s} (integers).",
        "q2_gqa": "For each query head i, with j the K/V head of its group, compute Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ "
        "and S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k.",
        "q4_gqa": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j the K/V head of query head i's group), the "
        "concat [H⁽¹⁾ | … | H⁽ʰ⁾] and the output Concat · W_O.",
        "q4_gqa_nowo": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j the K/V head of query head i's group) and "
        "the output, the concat [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q3_window": "Question 3: window mask and softmax",
        "q3_window_text": "Write M_win ({n}×{n}), then compute S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win and "
        "A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), row by row.",
        "q_rot": "Question 2: rotations",
        "q_rot_text": "Rotate every row of Q⁽ⁱ⁾ and K⁽ⁱ⁾ by the angles of its position: "
        "Q_rot⁽ⁱ⁾ and K_rot⁽ⁱ⁾ (the first token's row does not turn). V is not rotated.",
        "q_rot_scores": "Question 3: scaled scores",
        "q_rot_scores_text": "Compute Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ and S⁽ⁱ⁾ = Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ / √d_k.",
        "q_rot_mask": "Question 4: mask and softmax",
        "q_rot_out": "Question 5: head outputs and output",
        "names_gqa": '"kv_heads": [{{"K", "V"}}, …] (one per K/V head), "heads": [{{"Q", '
        '"scores", "S", "S_masked", "A", "H"}}, …] (one per query head; "K" and "V" there, if '
        'you write them, are the key and value that head reads), "concat", "output"',
        "names_window": '"heads": [{{"Q", "K", "V", "scores", "S", "S_masked", "A", "H"}}, '
        '…], "concat", "output"',
        "names_rope": '"kv_heads": [{{"K", "V", "K_rot"}}, …] (head i\'s key, value and '
        'rotated key, as attnref explain names them), "heads": [{{"Q", "Q_rot", "scores", "S", '
        '"S_masked", "A", "H"}}, …], "concat", "output"',
        "how": "Give decimals to {decimals} places; trailing zeros may be dropped (0.67 for "
        "0.670, 2 for 2.000), but a matrix rounded to fewer places is not right. Write the "
        "steps you computed into answer.json (attnref exercise --out writes it, every step "
        "null until you fill it in) in the names of attnref explain --format json: {names}; it "
        'names this exercise, "exercise": {options}. Then run attnref check answer.json.',
        "table": "RoPE's angles",
        "pair": "pair {p}",
        "row": "{token} (m = {m})",
        "key_data_gqa": "The K/V heads are computed once each; each serves r = {r} "
        "consecutive query heads.",
        "key_window_mask": "Sliding-window mask, w = {w}: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_win",
        "key_window_text": "M_win is 0 where 0 ≤ t − u < {w} (token t sees itself and the "
        "{before} before it) and −∞ elsewhere: the future, as in the causal mask, and the keys "
        "that are too old.",
        "key_nomask": "No mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾",
        "key_nomask_text": "Every token sees every token.",
        "key_rope": "RoPE: the angles m θ_p and the rotated queries and keys",
        "key_rope_text": "d_k = {d_k}: {pairs} pair{s} of coordinates, θ_p = 10000^(−2p/d_k). "
        "Each row m of Q and K turns by its own angles (the first token, m = 0, does not "
        "turn); V does not turn. A rotation keeps lengths: every row keeps its norm.",
        "output_note": "The output is Concat · W_O.",
        "output_note_nowo": "There is no W_O: the output is the concat.",
        "row_by_row": "row by row",
    },
    "pt": {
        "title_gqa": "Exercício {seed}: atenção com consultas agrupadas (GQA) à mão",
        "title_mqa": "Exercício {seed}: atenção multi-consulta (MQA) à mão",
        "title_window": "Exercício {seed}: atenção com janela deslizante à mão",
        "title_rope": "Exercício {seed}: embeddings de posição rotativos (RoPE) à mão",
        "data_gqa": "Tokens ({tokens}); cada token é uma linha de X (d_model = {d}). Atenção "
        "com consultas agrupadas: h = {h} cabeças de consulta compartilham g = {g} cabeça{s} "
        "K/V{mqa}, d_k = d_v = d_model / h = {d_k}. As cabeças de consulta se agrupam em ordem, "
        "r = h / g = {r} por cabeça K/V: as cabeças de consulta 1 … r leem a cabeça K/V 1, as "
        "cabeças de consulta r + 1 … 2r leem a cabeça K/V 2, e assim por diante (a ordem do "
        "repeat_interleave e do enable_gqa do PyTorch). "
        "Convenção de linhas: Q = X W_Q. {mask} {wo}",
        "mqa": " (uma cabeça K/V para todas: atenção multi-consulta)",
        "data_window": "Tokens ({tokens}); cada token é uma linha de X (d_model = {d}). h = {h} "
        "cabeça{hs}, d_k = d_v = d_model / h = {d_k}. Convenção de linhas: Q = X W_Q. Janela "
        "deslizante de w = {w} chaves: o token t vê a si mesmo e o{s} {before} token{s} "
        "anterior{es}, e nenhum token depois dele: M_jan(t, u) = 0 onde 0 ≤ t − u < w, −∞ nas "
        "demais entradas. {wo}",
        "data_rope": "Tokens ({tokens}); cada token é uma linha de X (d_model = {d}). h = {h} "
        "cabeça{hs}, d_k = d_v = d_model / h = {d_k}. Convenção de linhas: Q = X W_Q. Embeddings "
        "de posição rotativos (RoPE, RoFormer) nas consultas e nas chaves, não nos valores: o "
        "token na posição m (o primeiro tem m = 0) tem cada par de coordenadas (x_2p, x_2p+1), "
        "{pairs}, girado pelo ângulo m θ_p, θ_p = 10000^(−2p/d_k): x'_2p = x_2p cos mθ_p "
        "− x_2p+1 sen mθ_p e x'_2p+1 = x_2p sen mθ_p + x_2p+1 cos mθ_p. A tabela dá θ_p, m θ_p "
        "e os seus cossenos e senos, arredondados com {decimals} casas: use-os como estão (ou "
        "valores mais exatos). {mask} {wo}",
        "q1_gqa": "Calcule Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ para as h = {h} cabeças de consulta, e K⁽ʲ⁾ = "
        "X W_K⁽ʲ⁾ e V⁽ʲ⁾ = X W_V⁽ʲ⁾ para a{s} g = {g} cabeça{s} K/V (inteiros).",
        "q2_gqa": "Para cada cabeça de consulta i, com j a cabeça K/V do seu grupo, calcule "
        "Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ e S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ / √d_k.",
        "q4_gqa": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j a cabeça K/V do grupo da cabeça de consulta i), "
        "a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾] e a saída Concat · W_O.",
        "q4_gqa_nowo": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j a cabeça K/V do grupo da cabeça de consulta "
        "i) e a saída, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q3_window": "Questão 3: máscara da janela e softmax",
        "q3_window_text": "Escreva M_jan ({n}×{n}) e calcule S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M_jan e "
        "A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), linha a linha.",
        "q_rot": "Questão 2: rotações",
        "q_rot_text": "Gire cada linha de Q⁽ⁱ⁾ e de K⁽ⁱ⁾ pelos ângulos da sua posição: "
        "Q_rot⁽ⁱ⁾ e K_rot⁽ⁱ⁾ (a linha do primeiro token não gira). V não é girado.",
        "q_rot_scores": "Questão 3: scores divididos por √d_k",
        "q_rot_scores_text": "Calcule Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ e S⁽ⁱ⁾ = Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ / √d_k.",
        "q_rot_mask": "Questão 4: máscara e softmax",
        "q_rot_out": "Questão 5: saídas das cabeças e saída final",
        "names_gqa": '"kv_heads": [{{"K", "V"}}, …] (uma por cabeça K/V), "heads": [{{"Q", '
        '"scores", "S", "S_masked", "A", "H"}}, …] (uma por cabeça de consulta; "K" e "V" ali, '
        'se você os escrever, são a chave e o valor que essa cabeça lê), "concat", "output"',
        "names_window": '"heads": [{{"Q", "K", "V", "scores", "S", "S_masked", "A", "H"}}, '
        '…], "concat", "output"',
        "names_rope": '"kv_heads": [{{"K", "V", "K_rot"}}, …] (a chave, o valor e a chave '
        'girada da cabeça i, com os nomes de attnref explain), "heads": [{{"Q", "Q_rot", '
        '"scores", "S", "S_masked", "A", "H"}}, …], "concat", "output"',
        "how": "Dê {decimals} casas decimais; zeros à direita podem ser omitidos (0,67 para "
        "0,670; 2 para 2,000), mas uma matriz arredondada com menos casas não está certa. "
        "Escreva os passos calculados em answer.json (attnref exercise --out o escreve, cada "
        "passo null até você preenchê-lo) com os nomes de attnref explain --format json: "
        '{names}; ele nomeia este exercício, "exercise": {options}. Depois rode attnref check '
        "answer.json.",
        "table": "Os ângulos do RoPE",
        "pair": "par {p}",
        "row": "{token} (m = {m})",
        "key_data_gqa": "As cabeças K/V são calculadas uma vez cada; cada uma serve r = {r} "
        "cabeças de consulta consecutivas.",
        "key_rope": "RoPE: os ângulos m θ_p e as consultas e chaves giradas",
        "key_rope_text": "d_k = {d_k}: {pairs} par{es} de coordenadas, θ_p = 10000^(−2p/d_k). "
        "Cada linha m de Q e de K gira pelos seus próprios ângulos (o primeiro token, m = 0, "
        "não gira); V não gira. Uma rotação preserva comprimentos: cada linha mantém a sua "
        "norma.",
        "q_scores_gqa": "A entrada (t, u) de Q⁽ⁱ⁾ K⁽ʲ⁾ᵀ é a consulta do token t na cabeça i "
        "contra a chave do token u na cabeça K/V j do seu grupo; S⁽ⁱ⁾ a divide por √{d_k}.",
        "q_scores": "A entrada (t, u) de Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ é a consulta do token t contra a chave do "
        "token u; S⁽ⁱ⁾ a divide por √{d_k}.",
        "q_scores_rope": "A entrada (t, u) de Q_rot⁽ⁱ⁾ K_rot⁽ⁱ⁾ᵀ compara a consulta girada do "
        "token t com a chave girada do token u; ela só depende das posições pela diferença "
        "t − u. S⁽ⁱ⁾ a divide por √{d_k}.",
        "q_window": "M_jan vale 0 onde 0 ≤ t − u < {w} (o token t vê a si mesmo e o{s} {before} "
        "anterior{es}) e −∞ nas demais entradas: o futuro, como na máscara causal, e as chaves "
        "antigas demais. Cada linha de A⁽ⁱ⁾ é uma distribuição sobre as chaves da janela.",
        "q_mask": "M vale 0 na diagonal e abaixo dela e −∞ acima: cada linha de A⁽ⁱ⁾ é uma "
        "distribuição sobre os tokens visíveis.",
        "q_nomask": "Sem máscara, S̃⁽ⁱ⁾ = S⁽ⁱ⁾: cada linha de A⁽ⁱ⁾ é uma distribuição sobre "
        "todos os tokens.",
        "q_out": "A linha t de H⁽ⁱ⁾ é a média das linhas do V que a cabeça lê, ponderada pela "
        "linha t de A⁽ⁱ⁾; as cabeças lado a lado formam a concatenação{wo}.",
        "q_out_wo": ", e W_O a projeta na saída",
        "q_out_nowo": ", que é a saída (não há W_O)",
        "output": "Saída",
        "row_by_row": "linha a linha",
    },
}  # fmt: skip


def _plural(k: int, lang: str) -> dict[str, str]:
    return {"s": "s" * (k != 1), "es": "es" * (k != 1) if lang == "pt" else ""}


def _pair_names(d_k: int, lang: str) -> list[str]:
    return [VTEXT[lang]["pair"].format(p=p) for p in range(d_k // 2)]


def _rows(tr: VariantTrace, lang: str) -> list[str]:
    return [VTEXT[lang]["row"].format(token=tok, m=m)
            for m, tok in enumerate(tr.tokens)]  # fmt: skip


def angle_mats(tr: VariantTrace, lang: str) -> list[Mat]:
    r"""The statement's table: :math:`\theta_p`, :math:`m\theta_p`, their cosines and sines."""
    pairs, rows = _pair_names(tr.d_k, lang), _rows(tr, lang)
    sin = "sen" if lang == "pt" else "sin"
    return [
        Mat(symbol="\\theta", text="θ_p", value=L(tr.theta), cols=pairs),
        Mat(symbol="m \\theta_p", text="m θ_p", value=L(tr.angles), rows=rows, cols=pairs),
        Mat(symbol="\\cos m\\theta_p", text="cos mθ_p", value=L(torch.cos(tr.angles)),
            rows=rows, cols=pairs),
        Mat(symbol=f"\\operatorname{{{sin}}} m\\theta_p", text=f"{sin} mθ_p",
            value=L(torch.sin(tr.angles)), rows=rows, cols=pairs),
    ]  # fmt: skip


def _weights(tr: VariantTrace) -> list[Mat]:
    """``W_Q`` per query head, ``W_K``, ``W_V`` per K/V head (side by side when g = h)."""
    items: list[Mat] = []
    if tr.variant == "gqa":
        items += [Mat(symbol=f"W_Q^{{({i + 1})}}", value=L(tr.W_Q[i])) for i in range(tr.h)]
        for j in range(tr.g):
            items += [Mat(symbol=f"W_{r}^{{({j + 1})}}", value=L(getattr(tr, f"W_{r}")[j]))
                      for r in ("K", "V")]  # fmt: skip
        return items
    for i in range(tr.h):
        items += [Mat(symbol=f"W_{r}^{{({i + 1})}}", value=L(getattr(tr, f"W_{r}")[i]))
                  for r in ("Q", "K", "V")]  # fmt: skip
    return items


def _statement(opt: ExerciseOptions, problem: dict[str, JSONValue], tr: VariantTrace
               ) -> Explanation:  # fmt: skip
    """The statement: the data (and RoPE's table), then one section per question."""
    w, v, lang = TEXT[opt.lang], VTEXT[opt.lang], opt.lang
    tokens = list(tr.tokens)
    has_wo = "W_O" in problem
    items = [Mat(symbol="X", value=problem["X"], rows=tokens), *_weights(tr)]  # type: ignore[arg-type]
    if has_wo:
        items.append(Mat(symbol="W_O", value=problem["W_O"]))  # type: ignore[arg-type]
    g = tr.g
    fmt: dict[str, object] = {
        "seed": opt.seed, "n": opt.tokens, "d": opt.d_model, "h": opt.heads, "d_k": opt.d_k,
        "g": g, "r": opt.heads // g, "tokens": ", ".join(tokens), "decimals": opt.decimals,
        "last": opt.d_k // 2 - 1,
        "pairs": f"p = 0 … {opt.d_k // 2 - 1}" if opt.d_k > 2 else "p = 0",
        "w": opt.window, "before": (opt.window or 1) - 1,
        "mask": w["mask"] if opt.causal else w["nomask"], "wo": w["wo"] if has_wo else w["nowo"],
        "hs": "s" * (opt.heads != 1),
    }  # fmt: skip
    sections: list[Section] = []
    q3 = Section(title=w["q3"], text=w["q3_text"] if opt.causal else w["q3_nomask"])
    q4 = Section(title=w["q4"], text=w["q4_text"] if has_wo else w["q4_nowo"])
    if opt.variant == "gqa":
        fmt |= _plural(g, lang) | {"mqa": v["mqa"] if g == 1 else ""}
        title = v["title_mqa" if g == 1 else "title_gqa"]
        sections += [
            Section(title=w["data"], text=v["data_gqa"].format(**fmt), items=items),
            Section(title=w["q1"], text=v["q1_gqa"].format(**fmt)),
            Section(title=w["q2"], text=v["q2_gqa"]),
            q3,
            Section(title=w["q4"], text=v["q4_gqa" if has_wo else "q4_gqa_nowo"]),
        ]
    elif opt.variant == "window":
        fmt |= _plural(fmt["before"], lang)  # type: ignore[arg-type]
        title = v["title_window"]
        sections += [
            Section(title=w["data"], text=v["data_window"].format(**fmt), items=items),
            Section(title=w["q1"], text=w["q1_text"]),
            Section(title=w["q2"], text=w["q2_text"]),
            Section(title=v["q3_window"], text=v["q3_window_text"].format(**fmt)),
            q4,
        ]
    else:
        title = v["title_rope"]
        sections += [
            Section(title=w["data"], text=v["data_rope"].format(**fmt), items=items),
            Section(title=v["table"], items=angle_mats(tr, lang)),
            Section(title=w["q1"], text=w["q1_text"]),
            Section(title=v["q_rot"], text=v["q_rot_text"]),
            Section(title=v["q_rot_scores"], text=v["q_rot_scores_text"]),
            Section(title=v["q_rot_mask"], text=q3.text),
            Section(title=v["q_rot_out"], text=q4.text),
        ]
    how = v["how"].format(
        decimals=opt.decimals,
        names=v[f"names_{opt.variant}"].format(),
        options=json.dumps(opt.to_json(), ensure_ascii=False),
    )
    sections.append(Section(title=w["how"], text=how + answer_notes(opt)))
    return Explanation(
        title=title.format(seed=opt.seed),
        source="attnref " + source(opt) + (" --lang pt" if lang == "pt" else ""),
        sections=sections,
        data={"exercise": opt.to_json(), "problem": problem},
        lang=lang,
    )


# --- the key -------------------------------------------------------------------------------------


def _sup(i: int) -> str:
    return f"^{{({i + 1})}}"


def rotated_mats(tr: VariantTrace, lang: str) -> list[Mat]:
    """``Q_rot`` per query head, ``K_rot`` per K/V head."""
    tok, ref, rows = list(tr.tokens), tr.ref, VTEXT[lang]["row_by_row"]
    items = [Mat(symbol=f"Q_{{\\text{{rot}}}}{_sup(i)}", value=L(ref.Q_rot[i]), rows=tok,
                 formula=f"Q{_sup(i)} R_m^\\top", formula_text=f"Q^({i + 1}) R_mᵀ, {rows}")
             for i in range(tr.h)]  # fmt: skip
    items += [Mat(symbol=f"K_{{\\text{{rot}}}}{_sup(j)}", value=L(ref.K_rot[j]), rows=tok,
                  formula=f"K{_sup(j)} R_m^\\top", formula_text=f"K^({j + 1}) R_mᵀ, {rows}")
              for j in range(tr.g)]  # fmt: skip
    return items


def key_sections_en(tr: VariantTrace, opt: ExerciseOptions, has_wo: bool) -> list[Section]:
    """``explain``'s walk through the variant's steps (`attention_ref.worked.variant_trace`)."""
    from attention_ref.worked.variant_trace import forward_sections, mask_section

    v = VTEXT["en"]
    after: list[Section] = []
    mask: Section | None = None
    if tr.rope:
        pairs = tr.d_k // 2
        text = v["key_rope_text"].format(d_k=tr.d_k, pairs=pairs, s="s" * (pairs != 1))
        items = [*angle_mats(tr, "en"), *rotated_mats(tr, "en")]
        after.append(Section(title=v["key_rope"], text=text, items=items))
    if tr.variant == "window":
        w = tr.window or 1
        mask = mask_section(tr.ref, title=v["key_window_mask"].format(w=w),
                            text=v["key_window_text"].format(w=w, before=w - 1),
                            symbol="M_{\\text{win}}")  # fmt: skip
    elif tr.M is None:
        mask = Section(title=v["key_nomask"], text=v["key_nomask_text"])
    text = v["key_data_gqa"].format(r=tr.h // tr.g) if tr.variant == "gqa" else ""
    note = v["output_note" if has_wo else "output_note_nowo"]
    return forward_sections(tr.ref, input_text=text, after_projections=after, mask=mask,
                            output_note=note)  # fmt: skip


def key_sections_pt(tr: VariantTrace, opt: ExerciseOptions, statement: Explanation
                    ) -> list[Section]:  # fmt: skip
    """The statement's questions answered in Portuguese, under its own titles."""
    v = VTEXT["pt"]
    ref, tok = tr.ref, list(tr.tokens)
    rope, h, g = tr.rope, tr.h, tr.g
    titles = [s.title for s in statement.sections]
    data = Section(title=titles[0], text=statement.sections[0].text,
                   items=list(statement.sections[0].items))  # fmt: skip
    q1 = [Mat(symbol=f"Q{_sup(i)}", value=L(ref.Q[i]), formula=f"X W_Q{_sup(i)}", rows=tok)
          for i in range(h)]  # fmt: skip
    for j in range(g):
        q1 += [Mat(symbol=f"{r}{_sup(j)}", value=L(getattr(ref, r)[j]), formula=f"X W_{r}{_sup(j)}",
                   rows=tok) for r in ("K", "V")]  # fmt: skip
    sections = [data]
    if rope:
        sections.append(statement.sections[1])  # the table of angles, as given
    sections.append(Section(title=titles[len(sections)], items=q1))
    if rope:
        pairs = tr.d_k // 2
        text = v["key_rope_text"].format(d_k=tr.d_k, pairs=pairs, es="es" * (pairs != 1))
        sections.append(Section(title=titles[len(sections)], text=text,
                                items=rotated_mats(tr, "pt")))  # fmt: skip
    q_scores: list[Mat] = []
    for i in range(h):
        j = tr.group(i)
        qk = (f"Q_{{\\text{{rot}}}}{_sup(i)} K_{{\\text{{rot}}}}^{{({j + 1})\\top}}" if rope
              else f"Q{_sup(i)} K^{{({j + 1})\\top}}")  # fmt: skip
        q_scores += [
            Mat(symbol=qk, value=L(ref.QKt[i]), rows=tok, cols=tok),
            Mat(symbol=f"S{_sup(i)}", value=L(ref.S[i]), rows=tok, cols=tok,
                formula=f"\\frac{{{qk}}}{{\\sqrt{{{tr.d_k}}}}}"),
        ]  # fmt: skip
    scores_text = v["q_scores_rope" if rope else "q_scores_gqa" if tr.variant == "gqa"
                    else "q_scores"].format(d_k=tr.d_k)  # fmt: skip
    sections.append(Section(title=titles[len(sections)], text=scores_text, items=q_scores))
    q_mask: list[Mat] = []
    if tr.M is not None:
        symbol = "M_{\\text{jan}}" if tr.variant == "window" else "M"
        q_mask.append(Mat(symbol=symbol, value=L(tr.M), rows=tok, cols=tok))
        q_mask += [Mat(symbol=f"\\tilde S{_sup(i)}", value=L(ref.S_masked[i]), rows=tok,
                       cols=tok, formula=f"S{_sup(i)} + {symbol}") for i in range(h)]  # fmt: skip
    scores = "\\tilde S" if tr.M is not None else "S"
    q_mask += [Mat(symbol=f"A{_sup(i)}", value=L(ref.A[i]), rows=tok, cols=tok,
                   formula=f"\\operatorname{{softmax}}({scores}{_sup(i)})")
               for i in range(h)]  # fmt: skip
    w = tr.window or 1
    if tr.variant == "window":
        mask_text = v["q_window"].format(w=w, before=w - 1, **_plural(w - 1, "pt"))
    else:
        mask_text = v["q_mask"] if tr.M is not None else v["q_nomask"]
    sections.append(Section(title=titles[len(sections)], text=mask_text, items=q_mask))
    q_out = [Mat(symbol=f"H{_sup(i)}", value=L(ref.H[i]), rows=tok,
                 formula=f"A{_sup(i)} V{_sup(tr.group(i))}") for i in range(h)]  # fmt: skip
    concat = ("[" + " \\mid ".join(f"H{_sup(i)}" for i in range(h)) + "]" if h <= 2
              else f"[H{_sup(0)} \\mid \\dots \\mid H{_sup(h - 1)}]")  # fmt: skip
    q_out.append(Mat(symbol="\\operatorname{Concat}", value=L(ref.concat), formula=concat,
                     formula_text=None if h <= 2 else f"[H^(1) | … | H^({h})]",
                     rows=tok))  # fmt: skip
    has_wo = tr.W_O is not None
    q_out.append(Mat(symbol="\\operatorname{out}", text=v["output"], value=L(ref.output),
                     formula="\\operatorname{Concat} \\cdot W_O" if has_wo
                     else "\\operatorname{Concat}", rows=tok))  # fmt: skip
    out_text = v["q_out"].format(wo=v["q_out_wo" if has_wo else "q_out_nowo"])
    sections.append(Section(title=titles[len(sections)], text=out_text, items=q_out))
    return sections


def make_variant_exercise(opt: ExerciseOptions) -> Exercise:
    """Draw a variant's problem and write its statement, key and answer template."""
    from attention_ref.worked.variant_steps import LAYOUTS
    from attention_ref.worked.variant_trace import trace_json

    problem = draw_variant_problem(opt)
    tr = problem_trace(opt, problem)
    statement = _statement(opt, problem, tr)
    has_wo = "W_O" in problem
    sections = (key_sections_pt(tr, opt, statement) if opt.lang == "pt"
                else key_sections_en(tr, opt, has_wo))  # fmt: skip
    data: dict[str, JSONValue] = {**trace_json(tr.ref)}
    if tr.window is not None:
        data["window"] = tr.window
    key = Explanation(
        title=TEXT[opt.lang]["key_title"].format(seed=opt.seed),
        source=statement.source,
        sections=sections,
        data=data,
        precision=opt.decimals,
        lang=opt.lang,
    )
    answer = chain_template({"exercise": opt.to_json()}, LAYOUTS[opt.variant], tr.h, tr.g)
    return Exercise(options=opt, problem=problem, statement=statement, key=key, answer=answer)


__all__ = ["VTEXT", "angle_mats", "draw_variant_problem", "key_sections_en", "key_sections_pt",
           "make_variant_exercise", "problem_trace", "source", "variant_problem"]  # fmt: skip
