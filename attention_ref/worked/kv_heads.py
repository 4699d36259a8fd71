r"""``attnref params --kv-heads``: MHA, GQA and MQA side by side, weights and KV-cache bytes.

For ``h`` query heads of width ``d_k`` and ``g`` K/V heads (`attention_ref.reference.params`):

$$
\text{weights} = \underbrace{d_{model} \cdot h d_k}_{W_Q} + \underbrace{2\, d_{model} \cdot
g d_k}_{W_K, W_V} + \underbrace{h d_k \cdot d_{model}}_{W_O},\qquad
\text{KV bytes per token} = 2 \cdot L \cdot g \cdot d_k \cdot b
$$

`kv_table` lays out the three rows (MHA: ``g = h``; the given ``g``; MQA: ``g = 1``) and the
sentence their numbers support (`kv_claims`: how many times fewer bytes the cache keeps, how
many fewer weights, and whether one sequence's cache outweighs the attention weights).

`KV_PRESETS` holds a public GQA model's published configuration: Llama 3 8B, ``d_model =
4096``, 32 query heads of width 128, 8 K/V heads, 32 layers, 8,192 positions, bfloat16, no
attention biases, as published in its ``config.json`` on the Hugging Face Hub
(``meta-llama/Meta-Llama-3-8B``: ``hidden_size``, ``num_attention_heads``,
``num_key_value_heads``, ``num_hidden_layers``, ``max_position_embeddings``, ``torch_dtype``,
``attention_bias``) and in Table 3 of *The Llama 3 Herd of Models* (arXiv:2407.21783).

Nothing here imports torch: ``attnref params`` answers without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from attention_ref.reference.params import (
    GQAParams,
    KVCacheParams,
    dtype_bytes,
    gqa_params,
    kv_cache_params,
)
from attention_ref.render import JSONValue, Table, said, thousands


@dataclass(frozen=True, kw_only=True)
class KVPreset:
    """A model's published attention sizes (``attnref params --preset NAME``)."""

    description: str
    d_model: int
    h: int
    g: int
    d_k: int
    layers: int
    context: int
    dtype: str
    bias: bool


#: ``--preset`` name -> a GQA model's published configuration (module docstring: where from)
KV_PRESETS: Final[dict[str, KVPreset]] = {
    "llama-3-8b": KVPreset(
        description="Llama 3 8B, its published configuration (config.json of "
        "meta-llama/Meta-Llama-3-8B; Llama 3 paper, Table 3)",
        d_model=4096,
        h=32,
        g=8,
        d_k=128,
        layers=32,
        context=8192,
        dtype="bfloat16",
        bias=False,
    ),
}

COLUMNS: Final = (
    "attention",
    "g",
    "W_K, W_V",
    "weights per layer",
    "KV cache per token",
    "KV cache, one sequence",
)
#: the numbers of each row in ``--format json``, exact (the table prints bytes in KiB, MiB…)
DATA_COLUMNS: Final = (
    "attention",
    "h",
    "g",
    "d_k",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "weights per layer",
    "KV bytes per token",
    "KV bytes per sequence",
)


UNITS: Final = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")


def human_bytes(n: int, lang: str = "en") -> str:
    """``n`` bytes in binary units: ``512 bytes``, ``128 KiB``, ``2.5 GiB`` (3 significant
    digits), with ``lang``'s decimal mark and thousands separator."""
    value, unit = float(n), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{thousands(n, lang)} bytes"
    return f"{said(value, '.3g', lang)} {UNITS[unit]}"


def kv_rows(d_model: int, h: int, g: int, *, d_k: int | None, bias: bool) -> list[GQAParams]:
    """MHA (``g = h``), then ``g`` when it is strictly between, then MQA (``g = 1``)."""
    given = gqa_params(d_model, h, g, d_k=d_k, bias=bias)  # validates g against h first
    gs = [h] + ([g] if 1 < g < h else []) + ([1] if h > 1 else [])
    return [given if x == g else gqa_params(d_model, h, x, d_k=given.d_k, bias=bias) for x in gs]


#: `kv_claims`'s sentence in each language: the same numbers, said in each
KV_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "mha": "g = h = {g}: this is multi-head attention, {per_token} of KV cache per token",
        "fewer": "{name} caches {ratio} times fewer bytes per token than MHA ({mine_token} "
        "against {mha_token}; {mine_sequence} against {mha_sequence} for {context} tokens), "
        "with {fewer} fewer weights per attention layer ({mine_weights} against {mha_weights})",
        "larger": "larger than",
        "smaller": "smaller than",
        "same": "as large as",
        "cache": "at {context} tokens one sequence's KV cache ({cache}) is {relation} the "
        "attention weights of the {layers} layers ({weights}, {dtype})",
        "percent": "{value}%",
        "shape": "d_model = {d_model}, h = {h}, g = {g}, d_k = {d_k}, {layers} layers, "
        "{context} tokens, {dtype}",
    },
    "pt": {
        "mha": "g = h = {g}: esta é a atenção multi-cabeça, {per_token} de cache KV por token",
        "fewer": "a {name} guarda {ratio} vezes menos bytes por token que a MHA ({mine_token} "
        "contra {mha_token}; {mine_sequence} contra {mha_sequence} para {context} tokens), com "
        "{fewer} menos pesos por camada de atenção ({mine_weights} contra {mha_weights})",
        "larger": "maior que",
        "smaller": "menor que",
        "same": "do mesmo tamanho que",
        "cache": "com {context} tokens o cache KV de uma sequência ({cache}) é {relation} os "
        "pesos de atenção das {layers} camadas ({weights}, {dtype})",
        "percent": "{value} %",
        "shape": "d_model = {d_model}, h = {h}, g = {g}, d_k = {d_k}, {layers} camadas, "
        "{context} tokens, {dtype}",
    },
}


def kv_claims(
    caches: list[KVCacheParams], g: int, lang: str = "en"
) -> tuple[str, dict[str, JSONValue]]:
    """The sentence the numbers support, in ``lang`` (`KV_WORDS`), and its numbers.

    Against MHA (the first row): how many times fewer bytes per token ``g`` K/V heads keep and
    how many fewer weights the layer has; then whether one sequence's cache at the context is
    larger or smaller than the attention weights of all layers (in the same dtype).
    """
    say = KV_WORDS[lang]
    mha = caches[0]
    mine = next(c for c in caches if c.layer.g == g)
    ratio = mha.bytes_per_token / mine.bytes_per_token  # = h / g
    fewer = 1 - mine.layer.total / mha.layer.total
    context = thousands(mine.context, lang)
    if mine.layer.g == mha.layer.g:
        first = say["mha"].format(g=g, per_token=human_bytes(mha.bytes_per_token, lang))
    else:
        first = say["fewer"].format(
            name=f"{mine.layer.kind} (g = {g})",
            ratio=said(ratio, "g", lang),
            mine_token=human_bytes(mine.bytes_per_token, lang),
            mha_token=human_bytes(mha.bytes_per_token, lang),
            mine_sequence=human_bytes(mine.bytes_per_sequence, lang),
            mha_sequence=human_bytes(mha.bytes_per_sequence, lang),
            context=context,
            fewer=say["percent"].format(value=said(100 * fewer, ".1f", lang)),
            mine_weights=thousands(mine.layer.total, lang),
            mha_weights=thousands(mha.layer.total, lang),
        )
    cache, weights = mine.bytes_per_sequence, mine.weight_bytes
    relation = say["larger" if cache > weights else "smaller" if cache < weights else "same"]
    second = say["cache"].format(
        context=context,
        cache=human_bytes(cache, lang),
        relation=relation,
        layers=mine.layers,
        weights=human_bytes(weights, lang),
        dtype=mine.dtype,
    )
    data: dict[str, JSONValue] = {
        "cache_ratio_vs_mha": ratio,
        "fewer_weights_vs_mha": fewer,
        "cache_bytes_per_sequence": cache,
        "attention_weight_bytes": weights,
        "cache_larger_than_weights": cache > weights,
    }
    return f"{first}; {second}", data


def kv_table(
    d_model: int,
    h: int,
    g: int,
    *,
    d_k: int | None = None,
    layers: int,
    context: int,
    dtype: str,
    bias: bool,
    title: str = "",
    lang: str = "en",
) -> Table:
    """MHA, GQA and MQA at these sizes: the weights of one layer and the KV cache (all layers).

    ``ValueError`` (one line) for sizes `gqa_params` or `kv_cache_params` refuse.
    """
    dtype_bytes(dtype)
    layer_rows = kv_rows(d_model, h, g, d_k=d_k, bias=bias)
    caches = [kv_cache_params(p, layers=layers, context=context, dtype=dtype) for p in layer_rows]
    rows, data_rows = [], []
    for p, c in zip(layer_rows, caches, strict=True):
        s = p.shapes()
        rows.append(
            (
                p.kind,
                p.g,
                f"2 × ({s['W_K'][0]}×{s['W_K'][1]})",
                p.total,
                human_bytes(c.bytes_per_token),
                human_bytes(c.bytes_per_sequence),
            )
        )
        shapes = [f"{s[k][0]}×{s[k][1]}" for k in ("W_Q", "W_K", "W_V", "W_O")]
        values = (
            p.kind,
            p.h,
            p.g,
            p.d_k,
            *shapes,
            p.total,
            c.bytes_per_token,
            c.bytes_per_sequence,
        )
        data_rows.append(dict(zip(DATA_COLUMNS, values, strict=True)))
    claim, numbers = kv_claims(caches, g, lang)
    biases = "biases included" if bias else "no biases"
    context_words = KV_WORDS[lang]["shape"].format(
        d_model=d_model,
        h=h,
        g=g,
        d_k=layer_rows[0].d_k,
        layers=layers,
        context=thousands(context, lang),
        dtype=dtype,
    )
    return Table(
        title=title
        or f"MHA, GQA and MQA: one attention layer ({biases}) and the KV cache of {layers} layers",
        context=context_words,
        columns=COLUMNS,
        rows=rows,
        claim=claim,
        data={
            "d_model": d_model,
            "h": h,
            "g": g,
            "d_k": layer_rows[0].d_k,
            "layers": layers,
            "context": context,
            "dtype": dtype,
            "bytes_per_number": dtype_bytes(dtype),
            "bias": bias,
            "rows": data_rows,
            **numbers,
        },
        plain_columns=frozenset({"g"}),
    )


def kv_preset_table(
    name: str, *, context: int | None = None, dtype: str | None = None, lang: str = "en"
) -> Table:
    """`kv_table` of a `KV_PRESETS` model; ``context`` and ``dtype`` may replace its own;
    its claim and context in ``lang``'s words."""
    if name not in KV_PRESETS:
        raise ValueError(f"unknown GQA preset {name!r}; choose one of: {', '.join(KV_PRESETS)}")
    p = KV_PRESETS[name]
    table = kv_table(
        p.d_model,
        p.h,
        p.g,
        d_k=p.d_k,
        layers=p.layers,
        context=p.context if context is None else context,
        dtype=p.dtype if dtype is None else dtype,
        bias=p.bias,
        title=f"{p.description}: MHA, GQA and MQA at its sizes",
        lang=lang,
    )
    return Table(
        title=table.title,
        context=f"{name} ({table.context})",
        columns=table.columns,
        rows=table.rows,
        claim=table.claim,
        data={"preset": name, "description": p.description, **table.data},
        plain_columns=table.plain_columns,
    )
