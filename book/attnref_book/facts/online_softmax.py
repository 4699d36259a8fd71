"""The facts of the online softmax page (``docs/online-softmax.md``,
``docs/online-softmax.pt.md``), computed once and said in each language.

Each function is one code block of the page and returns what it prints: the scores read in
tiles, the checks of the online softmax and its backward, what the forward keeps for the
backward, and the worked example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from attention_ref.render import DECIMAL_MARK, said, thousands
from attnref_book.pages import Words, check, example, table
from attnref_book.worked_pt import online_softmax_words

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "S + M, tiles of {b} keys",
        "query": "query",
        "key": "key",
        "tiles": "The scores of {n} queries with a sliding window of {w}, read in tiles of {b} "
        "keys (orange lines). Grey is −∞. Rows that see nothing of a tile: {unseen}.",
        "tile": "tile {j}: {rows}",
        "none": "none",
        "online_label": "the online softmax equals the softmax for every tile size",
        "online_detail": "tiles of 1 to {last} keys, {masks} masks: largest difference {gap}; "
        "{fully} (row, tile) pairs had every key of the tile masked.",
        "sdpa_label": "equal to PyTorch's kernel",
        "sdpa_detail": "largest difference {gap}.",
        "backward_label": "the backward by recomputation equals autograd",
        "backward_detail": "∂Q, ∂K, ∂V with tiles of 3: largest difference {gap}.",
        "weights": "weights A (n × n)",
        "fewer": "times fewer",
    },
    "pt": {
        "title": "S + M, blocos de {b} chaves",
        "query": "consulta",
        "key": "chave",
        "tiles": "Os scores de {n} consultas com uma janela deslizante de {w}, lidos em blocos "
        "de {b} chaves (linhas laranja). Cinza é −∞. Linhas que não veem nada de um bloco: "
        "{unseen}.",
        "tile": "bloco {j}: {rows}",
        "none": "nenhuma",
        "online_label": "a softmax online é igual à softmax para todo tamanho de bloco",
        "online_detail": "blocos de 1 a {last} chaves, {masks} máscaras: maior diferença {gap}; "
        "{fully} pares (linha, bloco) tinham todas as chaves do bloco mascaradas.",
        "sdpa_label": "igual ao kernel do PyTorch",
        "sdpa_detail": "maior diferença {gap}.",
        "backward_label": "a retropropagação por recálculo é igual ao autograd",
        "backward_detail": "∂Q, ∂K, ∂V com blocos de 3: maior diferença {gap}.",
        "weights": "pesos A (n × n)",
        "fewer": "vezes menos",
    },
}

#: the worked example's words in each language: None keeps the example's own (English) words
EXAMPLE_WORDS: Final[dict[str, Callable[[], Words | None]]] = {
    "en": lambda: None,
    "pt": online_softmax_words,
}

#: the sequence lengths of the table of what the forward keeps
LENGTHS: Final = (512, 8192, 131072)


def tiled_scores(lang: str) -> str:
    """The figure of the scores \\(S + M\\) of 6 queries with a sliding window of 2 (seed 0),
    read in tiles of 2 keys, \\(S_j = Q K_j^\\top / \\sqrt{d_k} + M_j\\), and the rows that see
    nothing of each tile (every score \\(-\\infty\\): the tile adds nothing to them)."""
    import torch

    from attention_ref.reference import online_softmax as osm
    from attention_ref.reference import windows
    from attention_ref.render.svg import heatmap
    from attnref_book.figures import figure

    words = WORDS[lang]
    gen = torch.Generator().manual_seed(0)
    n, d, b, w = 6, 4, 2, 2
    Q, K, V = (torch.randn(n, d, generator=gen, dtype=torch.float64) for _ in range(3))
    M = windows.sliding_window_mask(n, w)
    trace = osm.online_softmax_attention(Q, K, V, M, tile=b)
    S = torch.cat([step.S_j for step in trace.steps], dim=-1)
    labels = [str(t + 1) for t in range(n)]
    unseen = [
        [t + 1 for t in range(n) if bool(torch.isneginf(step.S_j[t]).all())] for step in trace.steps
    ]
    heat = heatmap(
        S.tolist(),
        labels,
        labels,
        title=words["title"].format(b=b),
        precision=2,
        decimal=DECIMAL_MARK[lang],
        row_title=words["query"],
        col_title=words["key"],
        col_breaks=[s.start for s in trace.steps[1:]],
    )
    tiles = "; ".join(
        words["tile"].format(j=j + 1, rows=", ".join(map(str, rows)) or words["none"])
        for j, rows in enumerate(unseen)
    )
    return figure(heat, words["tiles"].format(n=n, w=w, b=b, unseen=tiles))


def online_checks(lang: str) -> str:
    """The checks of the online softmax (two random problems, float64, seed 1): for every tile
    size from 1 to \\(n + 1\\), causal and with a window of 2, \\(H = O / \\ell\\) equals
    \\(\\operatorname{softmax}(S) V\\) (counting the (row, tile) pairs fully masked); tiles of 3
    equal PyTorch's SDPA; and the backward by recomputation, \\(P_j = e^{S_j - L}\\), equals
    autograd."""
    import torch
    import torch.nn.functional as F

    from attention_ref import reference as ref
    from attention_ref.reference import online_softmax as osm
    from attention_ref.reference import windows

    words = WORDS[lang]
    gen = torch.Generator().manual_seed(1)
    n, d = 7, 3
    Q, K, V = (torch.randn(2, n, d, generator=gen, dtype=torch.float64) * 3 for _ in range(3))
    masks = [ref.causal_mask(n), windows.sliding_window_mask(n, 2)]
    worst, fully = 0.0, 0
    for M in masks:
        A = ref.softmax_rows(ref.scale(ref.scores(Q, K), d) + M)
        for b in range(1, n + 2):
            trace = osm.online_softmax_attention(Q, K, V, M, tile=b)
            worst = max(worst, float((trace.H - A @ V).abs().max()))
            fully += sum(int(torch.isneginf(s.S_j).all(dim=-1).sum()) for s in trace.steps)
    M = masks[1]  # the window of 2
    sdpa_gap = float(
        (
            osm.online_softmax_attention(Q, K, V, M, tile=3).H
            - F.scaled_dot_product_attention(Q, K, V, attn_mask=M)
        )
        .abs()
        .max()
    )
    leaves = [x.clone().requires_grad_() for x in (Q, K, V)]
    H = ref.softmax_rows(ref.scale(ref.scores(leaves[0], leaves[1]), d) + M) @ leaves[2]
    dH = torch.randn(H.shape, generator=gen, dtype=torch.float64)
    (H * dH).sum().backward()
    grads = osm.online_softmax_backward(osm.online_softmax_attention(Q, K, V, M, tile=3), dH)
    backward_gap = max(
        float((mine - leaf.grad).abs().max())
        for mine, leaf in zip((grads.Q, grads.K, grads.V), leaves, strict=True)
    )
    out = [
        check(
            words["online_label"],
            worst < 1e-12,
            words["online_detail"].format(
                last=n + 1,
                masks=len(masks),
                gap=said(worst, ".1e", lang),
                fully=thousands(fully, lang),
            ),
            lang=lang,
        ),
        "",
        check(
            words["sdpa_label"],
            sdpa_gap < 1e-10,
            words["sdpa_detail"].format(gap=said(sdpa_gap, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["backward_label"],
            backward_gap < 1e-12,
            words["backward_detail"].format(gap=said(backward_gap, ".1e", lang)),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def kept_for_backward(lang: str) -> str:
    """The table of what the forward keeps for the backward, per head and per sequence of
    \\(n\\) tokens: \\(L = m + \\log \\ell\\), \\(n\\) numbers, instead of the \\(n \\times n\\)
    weights, \\(n\\) times fewer."""
    words = WORDS[lang]
    rows = [[thousands(v, lang) for v in (n, n * n, n, n * n // n)] for n in LENGTHS]
    return table(["n", words["weights"], "L (n)", words["fewer"]], rows)


def worked_example(lang: str) -> str:
    """The worked example ``attnref explain --example online-softmax``: "Life is awesome" read
    in tiles of 2 keys by the homework's two causal heads, in the page's language."""
    return example("online-softmax", heading=3, words=EXAMPLE_WORDS[lang]())
