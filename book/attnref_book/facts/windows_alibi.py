"""The facts of the sliding windows and ALiBi page (``docs/windows-alibi.md``,
``docs/windows-alibi.pt.md``), computed once and said in each language.

Each function is one code block of the page and returns what it prints: the window's mask and
ALiBi's biases, the checks against PyTorch's kernel, and the two worked examples (a window of 2,
ALiBi) on "Life is awesome".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from attention_ref.render import DECIMAL_MARK, said
from attnref_book.pages import Words, check, example
from attnref_book.worked_pt import alibi_words, window_words

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "query": "query",
        "key": "key",
        "mask": "M_win, w = {w}",
        "head": "ALiBi, head {i} of {h}",
        "masks": "Left: the sliding-window mask for n = {n} tokens and w = {w} (grey: −∞). Middle "
        "and right: what ALiBi adds to heads 1 and {h} of {h}, slopes {first} and {last}: "
        "−m·(t − u) below the diagonal, −∞ above.",
        "window_label": "a sliding window equals SDPA's boolean attn_mask",
        "window_detail": "n = {n}, w = {w}, {h} heads: largest difference {gap}.",
        "alibi_label": "ALiBi equals SDPA's float attn_mask",
        "alibi_detail": "one bias matrix per head: largest difference {gap}.",
        "causal_label": "a window as wide as the sequence is the causal mask",
        "causal_detail": "w = {n} and w = {wider} on n = {n} tokens give causal_mask({n}) exactly.",
        "slopes_label": "ALiBi's slopes for 8 heads are 1/2, 1/4, …, 1/256",
        "list": ", ",
        "zero": "The weights of the two heads with the window: the cell ('awesome', 'Life') is "
        "exactly 0 in {heads} {which}.",
        "in_one_head": "head",
        "in_heads": "heads",
        "and": " and ",
    },
    "pt": {
        "query": "consulta",
        "key": "chave",
        "mask": "M_jan, w = {w}",
        "head": "ALiBi, cabeça {i} de {h}",
        "masks": "À esquerda: a máscara da janela deslizante para n = {n} tokens e w = {w} "
        "(cinza: −∞). No meio e à direita: o que a ALiBi soma às cabeças 1 e {h} de {h}, "
        "inclinações {first} e {last}: −m·(t − u) abaixo da diagonal, −∞ acima.",
        "window_label": "uma janela deslizante é igual à attn_mask booleana do SDPA",
        "window_detail": "n = {n}, w = {w}, {h} cabeças: maior diferença {gap}.",
        "alibi_label": "a ALiBi é igual à attn_mask de ponto flutuante do SDPA",
        "alibi_detail": "uma matriz de vieses por cabeça: maior diferença {gap}.",
        "causal_label": "uma janela do tamanho da sequência é a máscara causal",
        "causal_detail": "w = {n} e w = {wider} com n = {n} tokens dão exatamente "
        "causal_mask({n}).",
        "slopes_label": "as inclinações da ALiBi para 8 cabeças são 1/2, 1/4, …, 1/256",
        "list": "; ",
        "zero": "Os pesos das duas cabeças com a janela: a célula ('awesome', 'Life') é "
        "exatamente 0 {heads} {which}.",
        "in_one_head": "na cabeça",
        "in_heads": "nas cabeças",
        "and": " e ",
    },
}

#: the worked examples' words in each language: None keeps the example's own (English) words
WINDOW_WORDS: Final[dict[str, Callable[[], Words | None]]] = {
    "en": lambda: None,
    "pt": window_words,
}
ALIBI_WORDS: Final[dict[str, Callable[[], Words | None]]] = {
    "en": lambda: None,
    "pt": alibi_words,
}


def masks(lang: str) -> str:
    """The figure of the sliding-window mask (\\(0\\) where \\(0 \\le t - u < w\\), \\(-\\infty\\)
    elsewhere) for 6 tokens and \\(w = 3\\), and of what ALiBi adds to the first and last of 4
    heads, \\(-m_i (t - u)\\) with \\(m_i = 2^{-8i/h}\\), on top of the causal mask."""
    from attention_ref.reference import windows
    from attention_ref.render.svg import heatmap
    from attnref_book.figures import figure

    words = WORDS[lang]
    n, w, h = 6, 3, 4
    labels = [str(t + 1) for t in range(n)]
    axes = {"row_title": words["query"], "col_title": words["key"], "decimal": DECIMAL_MARK[lang]}
    win = heatmap(
        windows.sliding_window_mask(n, w).tolist(),
        labels,
        labels,
        title=words["mask"].format(w=w),
        precision=0,
        **axes,
    )
    slopes = windows.alibi_slopes(h)
    alibi = windows.alibi_mask(slopes, n)
    panels = [win] + [
        heatmap(
            alibi[i].tolist(),
            labels,
            labels,
            title=words["head"].format(i=i + 1, h=h),
            precision=2,
            **axes,
        )
        for i in (0, h - 1)
    ]
    caption = words["masks"].format(
        n=n,
        w=w,
        h=h,
        first=said(float(slopes[0]), "g", lang),
        last=said(float(slopes[-1]), "g", lang),
    )
    return figure(panels, caption)


def sdpa_checks(lang: str) -> str:
    """The checks against PyTorch's SDPA (random problem, float64, seed 0): the window as a
    boolean ``attn_mask``, ALiBi as a float ``attn_mask`` of one matrix per head; a window as
    wide as the sequence is the causal mask; ALiBi's slopes for 8 heads are \\(2^{-1}, \\dots,
    2^{-8}\\)."""
    import torch
    import torch.nn.functional as F

    from attention_ref import reference as ref
    from attention_ref.reference import windows

    words = WORDS[lang]
    gen = torch.Generator().manual_seed(0)
    n, d_model, h, d_k, w = 7, 6, 4, 3, 3
    X = torch.randn(2, n, d_model, generator=gen, dtype=torch.float64)
    W = [torch.randn(h, d_model, d_k, generator=gen, dtype=torch.float64) for _ in range(3)]
    Q, K, V = (ref.project_heads(X, Wr) for Wr in W)

    mine = ref.masked_multihead_attention(X, *W, M=windows.sliding_window_mask(n, w)).output
    allowed = windows.window_allowed(n, w)
    theirs = ref.merge_heads(F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed))
    window_gap = float((mine - theirs).abs().max())
    M = windows.alibi_mask(windows.alibi_slopes(h), n)
    mine = ref.masked_multihead_attention(X, *W, M=M).output
    theirs = ref.merge_heads(F.scaled_dot_product_attention(Q, K, V, attn_mask=M))
    alibi_gap = float((mine - theirs).abs().max())
    same = all(
        torch.equal(windows.sliding_window_mask(n, v), ref.causal_mask(n)) for v in (n, n + 3)
    )
    eight = windows.alibi_slopes(8).tolist()
    out = [
        check(
            words["window_label"],
            window_gap < 1e-10,
            words["window_detail"].format(n=n, w=w, h=h, gap=said(window_gap, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["alibi_label"],
            alibi_gap < 1e-10,
            words["alibi_detail"].format(gap=said(alibi_gap, ".1e", lang)),
            lang=lang,
        ),
        "",
        check(
            words["causal_label"],
            same,
            words["causal_detail"].format(n=n, wider=n + 3),
            lang=lang,
        ),
        "",
        check(
            words["slopes_label"],
            eight == [2.0**-k for k in range(1, 9)],
            "m = " + words["list"].join(said(v, "g", lang) for v in eight) + ".",
            lang=lang,
        ),
    ]
    return "\n".join(out)


def window_example(lang: str) -> str:
    """The worked example ``attnref explain --example window``: the homework's two heads with
    the window \\(w = 2\\) instead of the causal mask, and the heatmaps of their weights after
    the softmax step, where "awesome" no longer sees "Life"."""
    from attention_ref.worked.life_window import window_trace
    from attnref_book.figures import attention_heatmaps, figure

    words = WORDS[lang]
    tr = window_trace()
    zero = [i + 1 for i in range(tr.h) if float(tr.A[i, 2, 0]) == 0.0]
    heads = words["in_heads"] if len(zero) > 1 else words["in_one_head"]
    caption = words["zero"].format(heads=heads, which=words["and"].join(map(str, zero)))
    heat = figure(attention_heatmaps(tr, precision=3, lang=lang), caption)
    return example("window", heading=3, after={"Softmax": heat}, words=WINDOW_WORDS[lang]())


def alibi_example(lang: str) -> str:
    """The worked example ``attnref explain --example alibi``: the homework's two heads with
    ALiBi's biases (slopes \\(2^{-4}\\) and \\(2^{-8}\\)), in the page's language."""
    return example("alibi", heading=3, words=ALIBI_WORDS[lang]())
