"""The facts of the scaled dot-product page (``docs/scaled-dot-product.md``,
``docs/scaled-dot-product.pt.md``): why the scores are divided by √d_k, measured on random
vectors (seeds 000 and 001), in each language of the book.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import torch

from attention_ref import reference as ref
from attention_ref.render import DECIMAL_MARK, said, thousands
from attention_ref.render.svg import heatmap
from attnref_book.figures import figure
from attnref_book.pages import check, prose, table

#: the head widths of the table
WIDTHS: Final = (2, 8, 32, 128, 512)
#: random pairs (q, k) per width; queries, and keys per query, for the largest softmax weight
PAIRS: Final = 20_000
QUERIES: Final = 2_000
KEYS: Final = 8
#: how far Var(q·k)/d_k and Var(q·k/√d_k) may be from 1 (the check's words say 10 %)
TOLERANCE: Final = 0.1

WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "measured": (
            "Measured now, on {pairs} random pairs per width (standard normal entries, seed "
            "{seed}), and the largest softmax weight over {keys} keys, averaged over {queries} "
            "queries:\n"
        ),
        "unscaled_max": "max softmax weight, unscaled",
        "scaled_max": "max softmax weight, scaled",
        "variance": "Var(q·k) ≈ d_k and the scaled scores have variance ≈ 1",
        "variance_detail": "within {percent} % for every width above.",
        "one_query": (
            "One query and {n_keys} random keys (seed {seed}), d_k = {d_k}, without and with "
            "the scale:\n"
        ),
        "unscaled": "unscaled",
        "scaled": "scaled",
        "heat_title": "softmax weights of one query, d_k = {d_k}",
        "key": "key",
        "caption": (
            "Each row is the softmax of one query's {n_keys} scores; the unscaled row gives its "
            "largest weight {raw:.2f}, the scaled row {scaled:.2f}."
        ),
    },
    "pt": {
        "measured": (
            "Medido agora, em {pairs} pares aleatórios por largura (entradas normais padrão, "
            "semente {seed}), e o maior peso da softmax sobre {keys} chaves, em média sobre "
            "{queries} consultas:\n"
        ),
        "unscaled_max": "maior peso da softmax, sem escala",
        "scaled_max": "maior peso da softmax, com escala",
        "variance": "Var(q·k) ≈ d_k e os scores escalados têm variância ≈ 1",
        "variance_detail": "dentro de {percent} % para cada largura acima.",
        "one_query": (
            "Uma consulta e {n_keys} chaves aleatórias (semente {seed}), d_k = {d_k}, sem e com "
            "a escala:\n"
        ),
        "unscaled": "sem escala",
        "scaled": "com escala",
        "heat_title": "pesos da softmax de uma consulta, d_k = {d_k}",
        "key": "chave",
        "caption": (
            "Cada linha é a softmax dos {n_keys} scores de uma consulta; a linha sem escala dá "
            "como maior peso {raw:.2f}, a linha com escala {scaled:.2f}."
        ),
    },
}


def variance_table(lang: str, seed: int = 0) -> str:
    """Var(q · k) = d_k and Var(q · k / √d_k) = 1 for entries of mean 0 and variance 1,
    measured for each width of `WIDTHS` on `PAIRS` random pairs, with the largest softmax
    weight over `KEYS` keys averaged over `QUERIES` queries, unscaled and scaled (the softmax
    of wide unscaled heads is nearly one-hot); and the check that both variances are within
    `TOLERANCE` of what the formula says."""
    w = WORDS[lang]
    g = torch.Generator().manual_seed(seed)
    rows: list[list[object]] = []
    ok = True
    for d_k in WIDTHS:
        q = torch.randn(PAIRS, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(PAIRS, d_k, generator=g, dtype=torch.float64)
        dots = (q * k).sum(-1)
        scaled = dots / d_k**0.5
        Q = torch.randn(QUERIES, 1, d_k, generator=g, dtype=torch.float64)
        K = torch.randn(QUERIES, KEYS, d_k, generator=g, dtype=torch.float64)
        raw = ref.softmax_rows(ref.scores(Q, K)).amax(-1).mean()
        sc = ref.softmax_rows(ref.scale(ref.scores(Q, K), d_k)).amax(-1).mean()
        rows.append(
            [
                d_k,
                said(float(dots.var()), ".2f", lang),
                said(float(scaled.var()), ".3f", lang),
                said(float(raw), ".3f", lang),
                said(float(sc), ".3f", lang),
            ]
        )
        ok &= (
            abs(float(dots.var()) / d_k - 1) < TOLERANCE
            and abs(float(scaled.var()) - 1) < TOLERANCE
        )
    measured = w["measured"].format(
        pairs=thousands(PAIRS, lang), seed=seed, keys=KEYS, queries=thousands(QUERIES, lang)
    )
    out = [
        measured,
        table(["d_k", "Var(q·k)", "Var(q·k/√d_k)", w["unscaled_max"], w["scaled_max"]], rows),
        "",
        check(
            w["variance"],
            ok,
            w["variance_detail"].format(percent=round(TOLERANCE * 100)),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def one_query(lang: str, seed: int = 1, d_k: int = 512, n_keys: int = 8) -> str:
    """The softmax weights of one query over ``n_keys`` random keys of width ``d_k``, without
    and with the scale: softmax(q Kᵀ) against softmax(q Kᵀ / √d_k), as a two-row heatmap
    whose caption gives each row's largest weight."""
    w = WORDS[lang]
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(n_keys, d_k, generator=g, dtype=torch.float64)
    raw = ref.softmax_rows(ref.scores(q, k))[0]
    scaled = ref.softmax_rows(ref.scale(ref.scores(q, k), d_k))[0]
    keys = [f"k{j + 1}" for j in range(n_keys)]
    caption = w["caption"].format(n_keys=n_keys, raw=float(raw.max()), scaled=float(scaled.max()))
    out = [
        w["one_query"].format(n_keys=n_keys, seed=seed, d_k=d_k),
        figure(
            heatmap(
                [raw.tolist(), scaled.tolist()],
                [w["unscaled"], w["scaled"]],
                keys,
                title=w["heat_title"].format(d_k=d_k),
                precision=2,
                decimal=DECIMAL_MARK[lang],
                row_title="",
                col_title=w["key"],
            ),
            prose(caption, lang),
        ),
    ]
    return "\n".join(out)
