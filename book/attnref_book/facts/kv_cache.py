"""The facts of the KV-cache page (``docs/kv-cache.md``, ``docs/kv-cache.pt.md``), computed once
and said in each language.

Each function is one code block of the page and returns what it prints: the key cache growing
while "Life is awesome" is decoded, the decode checks (`attnref_book.claims.decode_check`), what
the cache of Llama 3 8B's shapes costs as the context grows, and the worked example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from attention_ref.render import said, thousands
from attnref_book.claims import KV_CONTEXTS, beyond_context, decode_check
from attnref_book.pages import Words, check, example, table
from attnref_book.worked_pt import kv_cache_words

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "block": "K, heads 1 | 2",
        "after": "after '{token}' ({length} × 2 × 2)",
        "caption": 'The key cache of the homework\'s two heads while "Life is awesome" is '
        "generated: each step appends one row per head (heads side by side by colour, one tone "
        "per token); nothing already cached changes.",
        "decode_label": "decoding token by token equals the full windowed pass, row by row",
        "decode_detail": "n = {n}, h = {h}, g = {g}, RoPE, window {w}: largest difference "
        "{gap}; the cache holds {heads} K/V heads × {tokens} tokens.",
        "sdpa_label": "one step equals SDPA with the step's window mask, and is_causal=True "
        "would be wrong",
        "sdpa_detail": "the last step's query against all {tokens} cached keys, with the "
        "window's mask (its {w} newest keys): largest difference from the decoded row {gap}. "
        "With is_causal=True instead, the output of every head is the value of token 0 (the "
        "one query sees key 0 only), off the decoded row by up to {off}.",
        "shapes": "{g} K/V heads of width {d_k} (and {h} query heads), {layers} layers, "
        "{dtype}: {numbers} numbers per token.",
        "beyond": " (beyond its context)",
        "larger": "larger",
        "smaller": "smaller",
        "tokens": "tokens",
        "gqa": "GQA (Llama 3 8B's shapes)",
        "against": "GQA cache against the attention weights",
        "context": "Llama 3 8B reads {context} tokens; the longer rows are its attention shapes "
        "at contexts it does not read. The shapes come from the code's preset `{preset}` (Llama "
        "3 8B's published `config.json`, `meta-llama/Meta-Llama-3-8B`); `Llama-3.1-8B`, which "
        "has no preset here, publishes the same attention shapes and a context of 128 K: "
        "{long} tokens, its published `max_position_embeddings`, the table's last row.",
        "weights": "The attention weights of the {layers} layers take {size} in {dtype}.",
    },
    "pt": {
        "block": "K, cabeças 1 | 2",
        "after": "depois de '{token}' ({length} × 2 × 2)",
        "caption": 'O cache de chaves das duas cabeças da lista enquanto "Life is awesome" é '
        "gerado: cada passo acrescenta uma linha por cabeça (as cabeças lado a lado, uma cor "
        "cada; um tom por token); nada do que já está guardado muda.",
        "decode_label": "decodificar token a token é igual à passada completa com janela, "
        "linha a linha",
        "decode_detail": "n = {n}, h = {h}, g = {g}, RoPE, janela {w}: maior diferença {gap}; "
        "o cache guarda {heads} cabeças K/V × {tokens} tokens.",
        "sdpa_label": "um passo é igual ao SDPA com a máscara da janela do passo, e "
        "is_causal=True estaria errado",
        "sdpa_detail": "a consulta do último passo contra as {tokens} chaves do cache, com a "
        "máscara da janela (as suas {w} chaves mais novas): maior diferença para a linha "
        "decodificada {gap}. Com is_causal=True, a saída de cada cabeça é o valor do token 0 "
        "(a consulta só vê a chave 0), com diferença de até {off} para a linha decodificada.",
        "shapes": "{g} cabeças K/V de largura {d_k} (e {h} cabeças de consulta), {layers} "
        "camadas, {dtype}: {numbers} números por token.",
        "beyond": " (além do seu contexto)",
        "larger": "maior",
        "smaller": "menor",
        "tokens": "tokens",
        "gqa": "GQA (as formas do Llama 3 8B)",
        "against": "cache da GQA contra os pesos de atenção",
        "context": "O Llama 3 8B lê {context} tokens; as linhas mais longas são as suas formas "
        "de atenção em contextos que ele não lê. As formas vêm do preset `{preset}` do código "
        "(o `config.json` publicado do Llama 3 8B, `meta-llama/Meta-Llama-3-8B`); o "
        "`Llama-3.1-8B`, que não tem preset aqui, publica as mesmas formas de atenção e um "
        "contexto de 128 K: {long} tokens, o seu `max_position_embeddings` publicado, a última "
        "linha da tabela.",
        "weights": "Os pesos de atenção das {layers} camadas ocupam {size} em {dtype}.",
    },
}

#: the preset whose shapes the cost table shows (`attention_ref.worked.kv_heads.KV_PRESETS`)
PRESET: Final = "llama-3-8b"
#: Llama 3.1 8B's context, a published figure the code has no preset for:
#: ``max_position_embeddings`` in the ``config.json`` of ``meta-llama/Llama-3.1-8B`` (128 K)
LLAMA_3_1_CONTEXT: Final = 131_072

#: the worked example's words in each language: None keeps the example's own (English) words
EXAMPLE_WORDS: Final[dict[str, Callable[[], Words | None]]] = {
    "en": lambda: None,
    "pt": kv_cache_words,
}


def key_cache(lang: str) -> str:
    """The figure of the key cache of the homework's two heads while "Life is awesome" is
    decoded token by token (`attention_ref.reference.kv_cache.decode_step`): each step appends
    one row per head, \\(K^{(j)} \\leftarrow [K^{(j)}; k_t^{(j)}]\\), and leaves the rows
    already cached as they were."""
    from attention_ref.reference import kv_cache
    from attention_ref.render.svg import Block, Cell, tensor
    from attention_ref.worked import life_is_awesome as life
    from attention_ref.worked.life_kv_cache import weights
    from attention_ref.worked.trace import t
    from attnref_book.figures import figure

    words = WORDS[lang]
    X = t(life.LIFE_X)
    W_Q, W_K, W_V, W_O = weights()
    cache = kv_cache.empty_cache(2, 2, 2)
    blocks = []
    for s, token in enumerate(life.LIFE_TOKENS):
        cache = kv_cache.decode_step(X[s : s + 1], cache, W_Q, W_K, W_V, W_O).cache
        seen = list(life.LIFE_TOKENS[: s + 1])
        rows = [
            [
                Cell(text=f"{v:g}", colour=head, tone=r)
                for head in range(2)
                for v in cache.K[head, r].tolist()
            ]
            for r in range(cache.length)
        ]
        title = words["after"].format(token=token, length=cache.length)
        blocks.append(
            tensor([Block(label=words["block"], rows=rows, row_labels=seen)], title=title)
        )
    return figure(blocks, words["caption"])


def decode_checks(lang: str) -> str:
    """The two checks of the page, on `attnref_book.claims.decode_check`'s random model (GQA,
    RoPE, a sliding window; float64, seed 0): decoding token by token from an empty cache
    equals the full windowed causal pass row by row, and one step equals PyTorch's SDPA given
    the step's window mask, while ``is_causal=True`` (aligned to the top left) lets the one
    query see key 0 only."""
    words = WORDS[lang]
    c = decode_check()
    out = [
        check(
            words["decode_label"],
            c.decode_gap < 1e-12,
            words["decode_detail"].format(
                n=c.n,
                h=c.h,
                g=c.g,
                w=c.w,
                gap=said(c.decode_gap, ".1e", lang),
                heads=c.cached_heads,
                tokens=c.cached_tokens,
            ),
            lang=lang,
        ),
        "",
        check(
            words["sdpa_label"],
            c.windowed_sdpa_gap < 1e-12 and c.is_causal_off > 1e-3 and c.is_causal_sees_key_0,
            words["sdpa_detail"].format(
                tokens=c.cached_tokens,
                w=c.w,
                gap=said(c.windowed_sdpa_gap, ".1e", lang),
                off=said(c.is_causal_off, ".2f", lang),
            ),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def cache_cost(lang: str) -> str:
    """What the KV cache of Llama 3 8B's attention shapes costs per sequence as the context
    grows, \\(2 \\cdot L \\cdot g \\cdot d_k\\) numbers per token, for MHA, GQA and MQA
    (`attention_ref.worked.kv_heads.kv_preset_table`), and whether it outweighs the attention
    weights; the contexts beyond the model's own are marked, and the longest is Llama 3.1 8B's
    published context, a model with the same shapes."""
    from attention_ref.worked.kv_heads import KV_PRESETS, human_bytes, kv_preset_table

    if max(KV_CONTEXTS) != LLAMA_3_1_CONTEXT:
        raise AssertionError(f"the table's longest context is not Llama 3.1's {LLAMA_3_1_CONTEXT}")
    words = WORDS[lang]
    p = KV_PRESETS[PRESET]
    numbers = thousands(2 * p.layers * p.g * p.d_k, lang)
    out = [
        words["shapes"].format(
            g=p.g, d_k=p.d_k, h=p.h, layers=p.layers, dtype=p.dtype, numbers=numbers
        ),
        "",
    ]
    rows = []
    for context in KV_CONTEXTS:
        t = kv_preset_table(PRESET, context=context)
        per_kind = {r["attention"]: r["KV bytes per sequence"] for r in t.data["rows"]}
        beyond = words["beyond"] if beyond_context(context, PRESET) else ""
        larger = words["larger"] if t.data["cache_larger_than_weights"] else words["smaller"]
        rows.append(
            [thousands(context, lang) + beyond]
            + [human_bytes(per_kind[k], lang) for k in ("MHA", "GQA", "MQA")]
            + [larger]
        )
    out += [
        table([words["tokens"], "MHA", words["gqa"], "MQA", words["against"]], rows),
        "",
        words["context"].format(
            context=thousands(p.context, lang),
            preset=PRESET,
            long=thousands(LLAMA_3_1_CONTEXT, lang),
        ),
        "",
        words["weights"].format(
            layers=p.layers, size=human_bytes(t.data["attention_weight_bytes"], lang), dtype=p.dtype
        ),
    ]
    return "\n".join(out)


def worked_example(lang: str) -> str:
    """The worked example ``attnref explain --example kv-cache``: "Life is" cached, "awesome"
    decoded, in the page's language."""
    return example("kv-cache", heading=3, words=EXAMPLE_WORDS[lang]())
