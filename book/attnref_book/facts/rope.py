"""The facts of the RoPE page (``docs/rope.md``, ``docs/rope.pt.md``), computed once and said in
each language.

Each function is one code block of the page and returns what it prints: a pair of coordinates
turned at successive positions, the score that depends on \\(m - n\\) only, the checks of the
three formulations, the lengths, the backward and a whole layer, and the worked example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from attention_ref.render import DECIMAL_MARK, said
from attnref_book.pages import Words, check, example
from attnref_book.worked_pt import rope_words

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "pair": "pair {i}: θ = {theta} rad per position",
        "turns": "The vector (1, 0) in pairs 0 and 1 of a head of width {d}, rotated by RoPE at "
        "positions 0 to 5: pair 0 turns {t0} rad per position, pair 1 {t1} rad, {ratio} times "
        "slower.",
        "query": "query at m",
        "key": "key at n",
        "scores": "The score of one query and one key for every pair of positions: each "
        "diagonal (the same m − n) holds one number.",
        "relative_label": "the score depends only on m − n",
        "relative_detail": "largest spread along a diagonal: {spread}.",
        "added_label": "added position vectors would not keep it",
        "added_detail": "with a random vector added at each position instead, the scores along "
        "a diagonal spread by up to {other}.",
        "agree_label": "pairs, matrices and complex numbers agree",
        "gap": "largest difference {gap}.",
        "norms_label": "lengths are kept",
        "norms_detail": "largest change of a row's norm {norms}.",
        "backward_label": "the backward (the rotation's transpose) equals autograd",
        "layer_label": "a layer with RoPE equals PyTorch's kernel on the rotated Q, K",
        "layer_detail": "2 heads of width 4, causal: largest difference {gap}.",
    },
    "pt": {
        "pair": "par {i}: θ = {theta} rad por posição",
        "turns": "O vetor (1; 0) nos pares 0 e 1 de uma cabeça de largura {d}, girado pelo RoPE "
        "nas posições 0 a 5: o par 0 gira {t0} rad por posição, o par 1 {t1} rad, {ratio} "
        "vezes mais devagar.",
        "query": "consulta em m",
        "key": "chave em n",
        "scores": "O score de uma consulta e uma chave para cada par de posições: cada diagonal "
        "(o mesmo m − n) tem um só número.",
        "relative_label": "o score só depende de m − n",
        "relative_detail": "maior variação ao longo de uma diagonal: {spread}.",
        "added_label": "vetores de posição somados não a preservariam",
        "added_detail": "com um vetor aleatório somado em cada posição, os scores ao longo de "
        "uma diagonal variam até {other}.",
        "agree_label": "pares, matrizes e números complexos concordam",
        "gap": "maior diferença {gap}.",
        "norms_label": "os comprimentos se preservam",
        "norms_detail": "maior mudança da norma de uma linha {norms}.",
        "backward_label": "a retropropagação (a transposta da rotação) é igual ao autograd",
        "layer_label": "uma camada com RoPE é igual ao kernel do PyTorch nos Q, K girados",
        "layer_detail": "2 cabeças de largura 4, causal: maior diferença {gap}.",
    },
}

#: the worked example's words in each language: None keeps the example's own (English) words
EXAMPLE_WORDS: Final[dict[str, Callable[[], Words | None]]] = {
    "en": lambda: None,
    "pt": rope_words,
}


def turned_pairs(lang: str) -> str:
    """The figure of the vector (1, 0) in pairs 0 and 1 of a head of width 8, turned by RoPE at
    positions 0 to 5: pair \\(i\\) turns by \\(m\\theta_i\\), \\(\\theta_i =
    \\text{base}^{-2i/d}\\), so pair 1 turns \\(\\theta_0 / \\theta_1\\) times slower."""
    import torch

    from attention_ref.reference import rope
    from attention_ref.render.svg import arrows
    from attnref_book.figures import figure

    words = WORDS[lang]
    d, positions = 8, range(6)
    theta = rope.rope_frequencies(d)
    x = torch.tensor([[1.0, 0.0] * (d // 2)] * len(positions), dtype=torch.float64)
    turned = rope.apply_rope(x, torch.tensor([float(m) for m in positions]))
    panels = [
        arrows(
            [(float(r[2 * i]), float(r[2 * i + 1])) for r in turned],
            [f"m = {m}" for m in positions],
            title=words["pair"].format(i=i, theta=said(float(theta[i]), "g", lang)),
            colour=i,
            decimal=DECIMAL_MARK[lang],
        )
        for i in (0, 1)
    ]
    t0, t1 = float(theta[0]), float(theta[1])
    caption = words["turns"].format(
        d=d, t0=said(t0, "g", lang), t1=said(t1, "g", lang), ratio=said(t0 / t1, "g", lang)
    )
    return figure(panels, caption)


def relative_scores(lang: str) -> str:
    """The score of one query and one key (seed 0, width 8) placed at every pair of positions
    \\(m, n\\) from 0 to 5, \\((R_m q) \\cdot (R_n k) = q \\cdot (R_{n-m} k)\\): one number per
    diagonal, checked; and a random position vector added instead, which breaks it."""
    import torch

    from attention_ref.reference import rope
    from attention_ref.render.svg import heatmap
    from attnref_book.figures import figure

    words = WORDS[lang]
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 8, generator=gen, dtype=torch.float64)
    n = 6
    pos = torch.arange(n, dtype=torch.float64)
    Q = rope.apply_rope(q.expand(n, 8), pos)  # the same q at positions 0 .. 5
    K = rope.apply_rope(k.expand(n, 8), pos)
    S = Q @ K.T  # S[m, n] = (R_m q) · (R_n k)
    labels = [str(m) for m in range(n)]
    heat = heatmap(
        S.tolist(),
        labels,
        labels,
        title="(R_m q) · (R_n k)",
        precision=2,
        decimal=DECIMAL_MARK[lang],
        row_title=words["query"],
        col_title=words["key"],
    )
    spread = max(float(S.diagonal(o).max() - S.diagonal(o).min()) for o in range(-n + 1, n))
    p = torch.randn(n, 8, generator=gen, dtype=torch.float64)  # a vector per position, added
    added = (q + p) @ (k + p).T  # added[m, n] = (q + p_m) · (k + p_n)
    other = max(float(added.diagonal(o).max() - added.diagonal(o).min()) for o in range(-n + 1, n))
    out = [
        figure(heat, words["scores"]),
        check(
            words["relative_label"],
            spread < 1e-12,
            words["relative_detail"].format(spread=said(spread, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["added_label"],
            other > 1e-3,
            words["added_detail"].format(other=said(other, ".2f", lang)),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def rope_checks(lang: str) -> str:
    """The checks of RoPE (float64, seed 1): pairs, block-diagonal matrices and complex numbers
    give the same rotation; lengths are kept; the backward, \\(\\partial x_m = \\partial x'_m
    R_m\\), equals autograd; and a causal layer with RoPE equals PyTorch's SDPA on the rotated
    \\(Q\\) and \\(K\\)."""
    import torch
    import torch.nn.functional as F

    from attention_ref import reference as ref
    from attention_ref.reference import rope

    words = WORDS[lang]
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 7, 6, generator=gen, dtype=torch.float64)
    pairs, mats, cplx = rope.apply_rope(x), rope.rope_by_matrices(x), rope.rope_by_complex(x)
    agree = max(float((pairs - mats).abs().max()), float((pairs - cplx).abs().max()))
    norms = float((pairs.norm(dim=-1) - x.norm(dim=-1)).abs().max())
    leaf = x.clone().requires_grad_()
    G = torch.randn(x.shape, generator=gen, dtype=torch.float64)
    (rope.apply_rope(leaf) * G).sum().backward()
    backward = float((rope.rope_backward(G) - leaf.grad).abs().max())
    X = torch.randn(5, 8, generator=gen, dtype=torch.float64)
    W = [torch.randn(2, 8, 4, generator=gen, dtype=torch.float64) for _ in range(3)]
    tr = ref.masked_multihead_attention(X, *W, rope_base=10000.0)
    H = F.scaled_dot_product_attention(
        rope.apply_rope(tr.Q), rope.apply_rope(tr.K), tr.V, is_causal=True
    )
    layer = float((ref.merge_heads(H) - tr.output).abs().max())
    out = [
        check(
            words["agree_label"],
            agree < 1e-12,
            words["gap"].format(gap=said(agree, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["norms_label"],
            norms < 1e-12,
            words["norms_detail"].format(norms=said(norms, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["backward_label"],
            backward < 1e-12,
            words["gap"].format(gap=said(backward, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["layer_label"],
            layer < 1e-10,
            words["layer_detail"].format(gap=said(layer, ".1e", lang)),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def worked_example(lang: str) -> str:
    """The worked example ``attnref explain --example rope``: seed 000's two heads side by side
    as one head of width 4, turned at positions 0, 1, 2, in the page's language."""
    return example("rope", heading=3, words=EXAMPLE_WORDS[lang]())
