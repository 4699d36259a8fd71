"""The facts of the multi-head page (``docs/multi-head.md``, ``docs/multi-head.pt.md``), computed
once and said in each language.

Each function is one code block of the page and returns what it prints: the data-flow figure of
the worked example, the checks that per-head matrices and one split projection are the same
computation and that every head reads the whole input, seed 002's split into heads shape by
shape, and seed 003's parameter counts (equal for every number of heads).
"""

from __future__ import annotations

from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.reference.params import attention_params, model_params
from attention_ref.render import said, thousands
from attention_ref.worked.i_want_pizza import (
    PIZZA_BATCH,
    PIZZA_D_MODEL,
    PIZZA_SEQ_LEN,
    pizza_numbers,
)
from attention_ref.worked.life_is_awesome import life_trace
from attention_ref.worked.registry import explain_example
from attention_ref.worked.roberta_heads import (
    DOC_ROBERTA_HEADS,
    DOC_ROBERTA_PARAMS,
    ROBERTA_PRESETS,
    preset_table,
)
from attention_ref.worked.words_documents import PIZZA
from attnref_book.figures import (
    attention_heatmaps,
    figure,
    flow_figure,
    split_merge_figure,
    weight_blocks_figure,
)
from attnref_book.pages import check, table, told

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "flow": "One masked multi-head attention on the worked example ({n} tokens, "
        "d_model = {d_model}, h = {h}): every head reads the whole X; each step with the shape "
        "of its result.",
        "fused_label": "seed 003's view ≡ seeds 001/002's view",
        "fused_detail": "n = {n}, d_model = {d}, h = {h}, random weights: largest difference "
        "{diff} (the test suite checks this for random shapes with hypothesis).",
        "whole_label": "each head reads every input column",
        "whole_detail": "d_model = {d}, h = {h}: changing any one of the {d} columns of X "
        "changes the queries of all {h} heads; each W_Q^(i) is ({rows}, {cols}).",
        "split_caption": "Seed 002's Q as cells: one colour per head, one shade per token. "
        "Reshape cuts each token's row into heads; swap groups the pieces by head; swapping "
        "back, then reshaping, gives the first picture again.",
        "heat_caption": "The attention weights A of each head (no mask in this example): one row "
        "per query token, one column per key token; darker cells are larger weights.",
        "merge_label": "swapping back, then reshaping, gives Q back",
        "merge_detail": "transpose(1, 2), then reshape{shape}, gives exactly the Q from before "
        "the split, and so does merge_heads.",
        "per_head": "per head (W_Q, W_K, W_V)",
        "layer": "attention layer",
        "q02_model": "Q02 model",
        "equal_label": "equal for every h of the table",
        "equal_detail": "more heads means narrower heads, not more weights (`attnref params`).",
        "blocks_caption": "Seed 003's picture, drawn to scale for d_model = {d_model} (no "
        "biases): for each h, the matrices W_Q, W_K, W_V of every head (one colour per head) "
        "and W_O. The blocks get narrower as h grows; the total area does not change.",
        "areas_label": "the figure's total areas are equal",
        "areas_detail": "{total} weights for h = {heads}.",
        "roberta_intro": "Seed 003 prints {params} parameters for "
        "`RobertaForMaskedLM(RobertaConfig(num_attention_heads=h))` with {a} and with {b} "
        "heads. Counted from the shapes (`attnref params --preset seed-003 --heads {a},{b}`; "
        "the decoder's weight is tied to the word embeddings and counted once, there is no "
        "pooler):\n",
        "preset": "preset",
        "roberta_label": "seed 003's {params}, for {a} and for {b} heads",
        "roberta_detail": "{params} is what RobertaConfig()'s defaults of the time build: the "
        "defaults RobertaConfig inherited from BertConfig (vocab {vocab}, {positions} "
        "positions, {types} token types). roberta-base's published configuration gives "
        "{base}, also the same for every h.",
    },
    "pt": {
        "flow": "Uma atenção multi-cabeça com máscara no exemplo resolvido ({n} tokens, "
        "d_model = {d_model}, h = {h}): cada cabeça lê o X inteiro; cada passo com a forma do "
        "seu resultado.",
        "fused_label": "a visão do seed 003 ≡ a visão dos seeds 001/002",
        "fused_detail": "n = {n}, d_model = {d}, h = {h}, pesos aleatórios: maior diferença "
        "{diff} (os testes conferem isto para formas aleatórias com hypothesis).",
        "whole_label": "cada cabeça lê todas as colunas da entrada",
        "whole_detail": "d_model = {d}, h = {h}: mudar qualquer uma das {d} colunas de X muda "
        "as consultas das {h} cabeças; cada W_Q^(i) é {rows} × {cols}.",
        "split_caption": "O Q do seed 002 como células: uma cor por cabeça, um tom por token. O "
        "reshape corta a linha de cada token em cabeças; a troca de eixos agrupa os pedaços por "
        "cabeça; destrocar e depois fazer o reshape devolve a primeira figura.",
        "heat_caption": "Os pesos de atenção A de cada cabeça (sem máscara neste exemplo): uma "
        "linha por token de consulta, uma coluna por token de chave; quanto mais escura a "
        "célula, maior o peso.",
        "merge_label": "destrocar e depois fazer o reshape devolve Q",
        "merge_detail": "transpose(1, 2) e depois reshape{shape} dão exatamente o Q de antes da "
        "divisão, e merge_heads também.",
        "per_head": "por cabeça (W_Q, W_K, W_V)",
        "layer": "camada de atenção",
        "q02_model": "modelo da Q02",
        "equal_label": "igual para todo h da tabela",
        "equal_detail": "mais cabeças significa cabeças mais estreitas, não mais pesos "
        "(`attnref params`).",
        "blocks_caption": "A figura do seed 003, em escala, para d_model = {d_model} (sem "
        "vieses): para cada h, as matrizes W_Q, W_K, W_V de cada cabeça (uma cor por cabeça) e "
        "W_O. Os blocos ficam mais estreitos quando h cresce; a área total não muda.",
        "areas_label": "as áreas totais da figura são iguais",
        "areas_detail": "{total} pesos para h = {heads}.",
        "roberta_intro": "O seed 003 imprime {params} parâmetros para "
        "`RobertaForMaskedLM(RobertaConfig(num_attention_heads=h))` com {a} e com {b} "
        "cabeças. Contados a partir das formas (`attnref params --preset seed-003 --heads "
        "{a},{b}`; o peso do decodificador é amarrado aos embeddings das palavras e contado "
        "uma vez, não há pooler):\n",
        "preset": "configuração",
        "roberta_label": "os {params} do seed 003, com {a} e com {b} cabeças",
        "roberta_detail": "{params} é o que os padrões de RobertaConfig() da época constroem "
        "(herdados de BertConfig: vocabulário de {vocab}, {positions} posições, {types} tipos "
        "de token). A configuração publicada do roberta-base dá {base}, também a mesma para "
        "todo h.",
    },
}

#: the random example of the two checks: n tokens, d_model, h heads (seed 0, float64)
RANDOM_N, RANDOM_D, RANDOM_H = 5, 12, 3
#: the d_model of the parameter table, and its numbers of heads
TABLE_D_MODEL: Final = 128
TABLE_HEADS: Final = (1, 2, 4, 8)
#: the d_model of seed 003's weight-blocks figure, and its numbers of heads
BLOCKS_D_MODEL: Final = 8
BLOCKS_HEADS: Final = (1, 2, 4)


def flow(lang: str) -> str:
    """The data-flow figure of one masked multi-head attention on the worked example ("Life is
    awesome"): every head reads the whole X, each step with the shape of its result."""
    tr = life_trace()
    caption = WORDS[lang]["flow"].format(n=len(tr.tokens), d_model=tr.d_model, h=tr.h)
    return figure(flow_figure(tr, lang=lang), caption)


def random_heads() -> tuple[Tensor, list[Tensor], Tensor]:
    """The checks' random example (seed 0): X ``(n, d)``, the per-head W_Q, W_K, W_V
    ``(h, d, d/h)`` each, and W_O ``(d, d)``."""
    g = torch.Generator().manual_seed(0)
    n, d, h = RANDOM_N, RANDOM_D, RANDOM_H
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    W = [torch.randn(h, d, d // h, generator=g, dtype=torch.float64) for _ in range(3)]
    W_O = torch.randn(d, d, generator=g, dtype=torch.float64)
    return X, W, W_O


def per_head_is_fused(lang: str) -> str:
    r"""Seed 003's per-head matrices and seeds 001/002's one split projection are the same
    computation: ``W_Q = [W_Q^{(1)} | \cdots | W_Q^{(h)}]``, so ``X W_Q``'s column block ``i``
    is head ``i``'s query; checked on random weights (largest difference below 1e-12)."""
    X, W, W_O = random_heads()
    per_head = ref.masked_multihead_attention(X, *W, W_O=W_O)
    fused = ref.masked_multihead_attention_fused(
        X, *(ref.fuse_heads(w) for w in W), W_O=W_O, h=RANDOM_H
    )
    diff = float((per_head.output - fused.output).abs().max())
    w = WORDS[lang]
    detail = w["fused_detail"].format(
        n=RANDOM_N, d=RANDOM_D, h=RANDOM_H, diff=said(diff, ".1e", lang)
    )
    return check(w["fused_label"], diff < 1e-12, detail, lang=lang)


def whole_input(lang: str) -> str:
    """Every head sees the whole input, only the projections are split: adding 1 to any one
    column of X changes the queries ``Q^{(i)} = X W_Q^{(i)}`` of every head."""
    X, W, _ = random_heads()
    d, h = RANDOM_D, RANDOM_H
    eye = torch.eye(d, dtype=torch.float64)
    base = ref.masked_multihead_attention(X, *W, W_O=eye)
    changed = []
    for col in range(d):
        X2 = X.clone()
        X2[:, col] += 1.0
        tr = ref.masked_multihead_attention(X2, *W, W_O=eye)
        changed.append([not torch.equal(tr.Q[i], base.Q[i]) for i in range(h)])
    rows, cols = W[0][0].shape
    w = WORDS[lang]
    detail = w["whole_detail"].format(d=d, h=h, rows=rows, cols=cols)
    return check(w["whole_label"], all(all(c) for c in changed), detail, lang=lang)


def split_shapes(lang: str) -> str:
    """Seed 002's "Я хочу пиццу <eos>" shape by shape (`attention_ref.worked.i_want_pizza`):
    ``(B, T, d) -> (B, T, h, d_k)`` by reshape, then ``(B, h, T, d_k)`` by swap; attention in
    every head; the concat is the inverse, swap back and then reshape, checked to give Q back
    (as `attention_ref.reference.merge_heads` does). With the split figure and each head's
    attention weights."""
    r = pizza_numbers()
    w, steps = WORDS[lang], PIZZA[lang]
    B, T, d = PIZZA_BATCH, PIZZA_SEQ_LEN, PIZZA_D_MODEL
    restored = torch.equal(r.Q_swapped.transpose(1, 2).reshape(B, T, d), r.Q)
    merged = torch.equal(ref.merge_heads(r.Q_swapped), r.Q)
    after = {
        steps["split"]: figure(split_merge_figure(lang=lang), w["split_caption"]),
        steps["at_once"]: figure(
            attention_heatmaps(r.trace, precision=2, lang=lang), w["heat_caption"]
        ),
        steps["concat"]: check(
            w["merge_label"],
            restored and merged,
            w["merge_detail"].format(shape=(B, T, d)),
            lang=lang,
        ),
    }
    expl = explain_example("i-want-pizza", lang)
    return told(expl, expl.precision, 3, after)


def params_by_heads(lang: str) -> str:
    r"""One attention layer and the Q02 model, for several ``h``: ``3 \cdot h \cdot d_{model}
    \cdot \tfrac{d_{model}}{h} + h\,\tfrac{d_{model}}{h} \cdot d_{model} = 4\, d_{model}^2``
    (plus biases) for every ``h`` that divides ``d_model``; checked equal across the table."""
    w = WORDS[lang]
    rows: list[list[object]] = []
    totals = set()
    for h in TABLE_HEADS:
        p = attention_params(TABLE_D_MODEL, h)
        m = model_params(n_embd=TABLE_D_MODEL, n_head=h)
        totals.add((p.total, m))
        rows.append(
            [h, p.d_k, thousands(p.per_head, lang), thousands(p.total, lang), thousands(m, lang)]
        )
    header = ["h", "d_k", w["per_head"], w["layer"], w["q02_model"]]
    out = [table(header, rows), ""]
    out.append(check(w["equal_label"], len(totals) == 1, w["equal_detail"], lang=lang))
    return "\n".join(out)


def weight_blocks(lang: str) -> str:
    """Seed 003's picture to scale (no biases): each head's W_Q, W_K, W_V and W_O for several
    ``h``; the blocks narrow as ``h`` grows, the total area ``4 d_model^2`` does not change
    (checked)."""
    w = WORDS[lang]
    caption = w["blocks_caption"].format(d_model=BLOCKS_D_MODEL)
    out = [figure(weight_blocks_figure(BLOCKS_D_MODEL, BLOCKS_HEADS, lang=lang), caption)]
    totals = {attention_params(BLOCKS_D_MODEL, h, bias=False).total for h in BLOCKS_HEADS}
    detail = w["areas_detail"].format(
        total=thousands(next(iter(totals)), lang), heads=", ".join(str(h) for h in BLOCKS_HEADS)
    )
    out.append(check(w["areas_label"], len(totals) == 1, detail, lang=lang))
    return "\n".join(out)


def roberta(lang: str) -> str:
    """Seed 003's number: ``RobertaForMaskedLM`` counted from its shapes with 4 and with 12
    heads, for the configuration seed 003 ran (`RobertaConfig`'s defaults of the time, BERT's
    sizes) and roberta-base's published one; checked: the document's 109,514,298 for both
    head counts, and roberta-base's count also the same for every ``h``."""
    w = WORDS[lang]
    a, b = DOC_ROBERTA_HEADS
    params = thousands(DOC_ROBERTA_PARAMS, lang)
    out = [w["roberta_intro"].format(params=params, a=a, b=b)]
    rows: list[list[object]] = []
    for name in ROBERTA_PRESETS:
        for r in preset_table(name, list(DOC_ROBERTA_HEADS)).data["rows"]:
            rows.append(
                [
                    name,
                    r["h"],
                    r["d_k"],
                    thousands(r["attention layer"], lang),
                    thousands(r["model"], lang),
                ]
            )
    header = [w["preset"], "h", "d_k", w["layer"], "RobertaForMaskedLM"]
    out += [table(header, rows), ""]
    seed = preset_table("seed-003", list(DOC_ROBERTA_HEADS))
    base = preset_table("roberta-base", list(DOC_ROBERTA_HEADS))
    cfg = ROBERTA_PRESETS["seed-003"][1]
    detail = w["roberta_detail"].format(
        params=params,
        vocab=thousands(cfg.vocab_size, lang),
        positions=cfg.max_positions,
        types=cfg.type_vocab_size,
        base=thousands(base.rows[0][-1], lang),
    )
    ok = bool(seed.data["seed_003"] and seed.data["equal"] and base.data["equal"])
    out.append(check(w["roberta_label"].format(params=params, a=a, b=b), ok, detail, lang=lang))
    return "\n".join(out)
