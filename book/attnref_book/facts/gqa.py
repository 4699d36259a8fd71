"""The facts of the grouped-query attention page (``docs/gqa.md``, ``docs/gqa.pt.md``), computed
once and said in each language.

Each function is one code block of the page and returns what it prints: which K/V head each
query head reads, the checks against PyTorch's ``enable_gqa`` kernel and against autograd, what
GQA saves at Llama 3 8B's sizes, the worked example (`attnref explain --example gqa`), and what
``attnref train --kv-heads`` saves in the Q02 model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from attention_ref.render import said, thousands
from attnref_book.pages import check, table

if TYPE_CHECKING:
    from torch import Tensor

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "caption": "Which K/V head each of {h} query heads reads, γ(i) = ⌈i·g/h⌉: every head "
        "its own (MHA), groups of consecutive heads (GQA), all heads one (MQA).",
        "gqa_label": "equal to PyTorch's enable_gqa kernel",
        "gqa_detail": "h = {h} query heads, g = {g} K/V heads, causal: largest difference {gap}.",
        "mha_label": "g = h is multi-head attention",
        "mha_detail": "g = h = {h}: largest difference from the kernel without enable_gqa {gap}.",
        "mqa_label": "g = 1 is multi-query attention",
        "mqa_detail": "one K/V head read by all {h} query heads: largest difference {gap}.",
        "backward_label": "the backward equals autograd",
        "backward_detail": "∂X, ∂W_K, ∂W_V: largest difference {gap}.",
        "sum_label": "a K/V head's gradient is the sum over its group",
        "sum_detail": "∂K⁽¹⁾ = ∂K_rep⁽¹⁾ + ∂K_rep⁽²⁾ and ∂K⁽²⁾ = ∂K_rep⁽³⁾ + ∂K_rep⁽⁴⁾ "
        "(largest difference {gap}).",
        "attention": "attention",
        "per_layer": "weights per layer",
        "per_token": "KV cache per token",
        "sequence": "KV cache, one sequence ({context} tokens)",
        "heat": "The weights A of the {h} query heads ({groups}); one row per query token, "
        "one column per key token.",
        "option": "option",
        "kv_heads": "K/V heads",
        "parameters": "parameters",
        "change": "change",
        "cache": "KV cache, bytes per character (fp32)",
        "multi_head": "multi-head (Q02, the default)",
        "multi_query": "multi-query",
        "zero": "+0",
        "plus": "+",
        "minus": "-",
        "percent": "%",
        "saved": "\nOne K/V head instead of {n_head} takes out {saved} of the {base} parameters "
        "({share}). Of the {left} left, {attention} are still attention (W_Q, the one K/V "
        "head's W_K and W_V, W_O, with their biases); the rest are the embeddings "
        "({embeddings}), the MLPs ({mlp}), the LayerNorms ({norms}) and the output head "
        "({head}). It divides the KV cache by {ratio}. The cache is what GQA is for: with a "
        "context of {block} characters and {layers} layers it is small here, and large in a "
        "model with a long context and many layers (the Llama 3 8B table above).",
    },
    "pt": {
        "caption": "Qual cabeça K/V cada uma das {h} cabeças de consulta lê, γ(i) = ⌈i·g/h⌉: "
        "cada cabeça a sua (MHA), grupos de cabeças consecutivas (GQA), todas a mesma (MQA).",
        "gqa_label": "igual ao kernel enable_gqa do PyTorch",
        "gqa_detail": "h = {h} cabeças de consulta, g = {g} cabeças K/V, causal: maior "
        "diferença {gap}.",
        "mha_label": "g = h é a atenção multi-cabeça",
        "mha_detail": "g = h = {h}: maior diferença para o kernel sem enable_gqa {gap}.",
        "mqa_label": "g = 1 é a atenção multi-consulta",
        "mqa_detail": "uma cabeça K/V lida pelas {h} cabeças de consulta: maior diferença {gap}.",
        "backward_label": "a retropropagação é igual ao autograd",
        "backward_detail": "∂X, ∂W_K, ∂W_V: maior diferença {gap}.",
        "sum_label": "o gradiente de uma cabeça K/V é a soma do seu grupo",
        "sum_detail": "∂K⁽¹⁾ = ∂K_rep⁽¹⁾ + ∂K_rep⁽²⁾ e ∂K⁽²⁾ = ∂K_rep⁽³⁾ + ∂K_rep⁽⁴⁾ "
        "(maior diferença {gap}).",
        "attention": "atenção",
        "per_layer": "pesos por camada",
        "per_token": "cache KV por token",
        "sequence": "cache KV de uma sequência ({context} tokens)",
        "heat": "Os pesos A das {h} cabeças de consulta ({groups}); uma linha por token de "
        "consulta, uma coluna por token de chave.",
        "option": "opção",
        "kv_heads": "cabeças K/V",
        "parameters": "parâmetros",
        "change": "diferença",
        "cache": "cache KV, bytes por caractere (fp32)",
        "multi_head": "multi-cabeça (Q02, o padrão)",
        "multi_query": "multi-consulta",
        "zero": "0",
        "plus": "+",
        "minus": "−",
        "percent": " %",
        "saved": "\nUma cabeça K/V em vez de {n_head} tira {saved} dos {base} parâmetros "
        "({share}). Dos {left} que ficam, {attention} ainda são de atenção (W_Q, W_K e W_V da "
        "única cabeça K/V, W_O, com os seus vieses); o resto são os embeddings ({embeddings}), "
        "as MLPs ({mlp}), as LayerNorms ({norms}) e a cabeça de saída ({head}). O cache KV "
        "fica {ratio} vezes menor. O cache é a razão da GQA: com um contexto de {block} "
        "caracteres e {layers} camadas ele é pequeno aqui, e grande num modelo de contexto "
        "longo e muitas camadas (a tabela do Llama 3 8B acima).",
    },
}


def kv_groups_figure(lang: str) -> str:
    """Which K/V head each of ``h = 4`` query heads reads, for ``g = h`` (MHA), ``g = 2``
    (GQA) and ``g = 1`` (MQA): :math:`\\gamma(i) = \\lceil i g / h \\rceil`."""
    from attention_ref.reference.gqa import kv_group
    from attention_ref.render.svg import Box, groups
    from attnref_book.figures import figure

    h = 4
    panels = []
    for g, name in ((h, "MHA"), (2, "GQA"), (1, "MQA")):
        top = [Box(title=f"Q{i + 1}", colour=kv_group(i, h, g)) for i in range(h)]
        bottom = [Box(title=f"K/V {j + 1}", colour=j) for j in range(g)]
        links = [(i, kv_group(i, h, g)) for i in range(h)]
        panels.append(groups(top, bottom, links, title=f"{name}: h = {h}, g = {g}"))
    return figure(panels, WORDS[lang]["caption"].format(h=h))


def kernel_checks(lang: str) -> str:
    """Random float64 problems (seed 0): GQA against PyTorch's
    ``scaled_dot_product_attention(..., enable_gqa=True)``, ``g = h`` against the kernel
    without ``enable_gqa`` (multi-head attention), and ``g = 1`` against ``h`` copies of the one
    K/V head (multi-query attention)."""
    import torch
    import torch.nn.functional as F

    from attention_ref import reference as ref

    say = WORDS[lang]
    gen = torch.Generator().manual_seed(0)
    B, n, d_model, h, g, d_k = 2, 6, 8, 4, 2, 3

    def r(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    def gap_of(a: Tensor, b: Tensor) -> tuple[float, str]:
        gap = float((a - b).abs().max())
        return gap, said(gap, ".1e", lang)

    out = []
    X, W_Q = r(B, n, d_model), r(h, d_model, d_k)
    W_K, W_V, W_O = r(g, d_model, d_k), r(g, d_model, d_k), r(h * d_k, d_model)
    tr = ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O)
    H = F.scaled_dot_product_attention(tr.Q, tr.K, tr.V, is_causal=True, enable_gqa=True)
    gap, text = gap_of(ref.merge_heads(H) @ W_O, tr.output)
    detail = say["gqa_detail"].format(h=h, g=g, gap=text)
    out += [check(say["gqa_label"], gap < 1e-10, detail, lang=lang), ""]
    W_Kh, W_Vh = r(h, d_model, d_k), r(h, d_model, d_k)
    mha = ref.masked_multihead_attention(X, W_Q, W_Kh, W_Vh, W_O)
    H = F.scaled_dot_product_attention(mha.Q, mha.K, mha.V, is_causal=True)
    gap, text = gap_of(ref.merge_heads(H) @ W_O, mha.output)
    detail = say["mha_detail"].format(h=h, gap=text)
    out += [check(say["mha_label"], gap < 1e-10, detail, lang=lang), ""]
    one_K, one_V = W_K[:1], W_V[:1]
    mqa = ref.masked_multihead_attention(X, W_Q, one_K, one_V, W_O).output
    K_h, V_h = one_K.expand(h, -1, -1), one_V.expand(h, -1, -1)  # (1, ...) -> (h, ...)
    copies = ref.masked_multihead_attention(X, W_Q, K_h, V_h, W_O).output
    gap, text = gap_of(mqa, copies)
    detail = say["mqa_detail"].format(h=h, gap=text)
    out.append(check(say["mqa_label"], gap < 1e-10, detail, lang=lang))
    return "\n".join(out)


def backward_checks(lang: str) -> str:
    """The backward by hand (`attention_ref.reference.attention_backward`) against
    ``torch.autograd``, and the group sum in the numbers:
    :math:`\\partial K^{(j)} = \\sum_{i:\\ \\gamma(i) = j} \\partial K^{(i)}_{\\text{rep}}`."""
    import torch

    from attention_ref import reference as ref

    say = WORDS[lang]
    gen = torch.Generator().manual_seed(1)
    n, d_model, h, g, d_k = 5, 6, 4, 2, 2
    leaves = [
        torch.randn(*s, generator=gen, dtype=torch.float64).requires_grad_()
        for s in ((n, d_model), (h, d_model, d_k), (g, d_model, d_k), (g, d_model, d_k))
    ]
    out = ref.masked_multihead_attention(*leaves).output
    G = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    (out * G).sum().backward()
    mine = ref.attention_backward(ref.masked_multihead_attention(*(t.detach() for t in leaves)), G)
    gap = max(
        float((mine.X - leaves[0].grad).abs().max()),
        float((mine.W_K - leaves[2].grad).abs().max()),
        float((mine.W_V - leaves[3].grad).abs().max()),
    )
    pairs = float((mine.K - (mine.K_rep[0::2] + mine.K_rep[1::2])).abs().max())
    backward = say["backward_detail"].format(gap=said(gap, ".1e", lang))
    summed = say["sum_detail"].format(gap=said(pairs, ".1e", lang))
    return "\n".join(
        [
            check(say["backward_label"], gap < 1e-10, backward, lang=lang),
            "",
            check(say["sum_label"], pairs < 1e-12, summed, lang=lang),
        ]
    )


def llama_table(lang: str) -> str:
    """`attnref params --preset llama-3-8b`: one attention layer and the KV cache of MHA, GQA
    and MQA at Llama 3 8B's sizes,
    :math:`\\text{KV cache per token} = 2 \\cdot L \\cdot g \\cdot d_k` numbers."""
    from attention_ref.worked.kv_heads import KV_PRESETS, human_bytes, kv_preset_table

    say = WORDS[lang]
    p = KV_PRESETS["llama-3-8b"]
    t = kv_preset_table("llama-3-8b", lang=lang)
    rows = [
        [
            r["attention"],
            r["g"],
            f"2 × ({r['W_K']})",
            thousands(r["weights per layer"], lang),
            human_bytes(r["KV bytes per token"], lang),
            human_bytes(r["KV bytes per sequence"], lang),
        ]
        for r in t.data["rows"]
    ]
    header = [
        say["attention"],
        "g",
        "W_K, W_V",
        say["per_layer"],
        say["per_token"],
        say["sequence"].format(context=thousands(p.context, lang)),
    ]
    return "\n".join([table(header, rows), "", f"{t.context}: {t.claim}."])


def worked_gqa(lang: str) -> str:
    """The worked example `attnref explain -e gqa` (seed 000's numbers regrouped: 4 query
    heads, 2 K/V heads), its matrices with two decimals and the heads' weights ``A`` as
    heatmaps after its softmax step."""
    from attention_ref.worked.layout import groups_text
    from attention_ref.worked.life_gqa import explain, gqa_trace
    from attnref_book.figures import attention_heatmaps, figure
    from attnref_book.pages import example
    from attnref_book.worked_pt import words_of

    tr = gqa_trace()
    heat = figure(
        attention_heatmaps(tr, precision=3, lang=lang),
        WORDS[lang]["heat"].format(h=tr.h, groups=groups_text(tr.h, tr.g, lang)),
    )
    return example(
        "gqa", precision=2, heading=3, after={"Softmax": heat}, words=words_of(explain(lang))
    )


def signed(n: int, lang: str) -> str:
    """A change of a count, signed as ``lang`` writes it (``+0``/``0``, ``-``/``−``)."""
    say = WORDS[lang]
    if n == 0:
        return say["zero"]
    return say["plus" if n > 0 else "minus"] + thousands(abs(n), lang)


def model_kv_heads(lang: str) -> str:
    """What ``attnref train --kv-heads`` saves in the Q02 model, counted on the model itself:
    its parameters and its KV cache, :math:`2 \\cdot L \\cdot g \\cdot d_k \\cdot 4` bytes per
    character (K and V, every layer, fp32)."""
    from attention_ref.lm.config import ModelConfig
    from attention_ref.lm.model import CharGPT, count_parameters
    from attnref_book.claims import model_parts

    say = WORDS[lang]
    rows = []
    base = count_parameters(CharGPT(ModelConfig()))
    for g, name in ((0, say["multi_head"]), (1, say["multi_query"])):
        cfg = ModelConfig(kv_heads=g)
        n = count_parameters(CharGPT(cfg))
        cache = 2 * cfg.n_layer * cfg.n_kv_head * cfg.d_k * 4  # K and V, every layer, fp32 bytes
        rows.append(
            [
                f"`--kv-heads {g}`",
                name,
                cfg.n_kv_head,
                thousands(n, lang),
                signed(n - base, lang),
                thousands(cache, lang),
            ]
        )
    header = [say["option"], say["attention"], say["kv_heads"], say["parameters"]]
    out = [table([*header, say["change"], say["cache"]], rows)]
    mqa = ModelConfig(kv_heads=1)
    saved = base - count_parameters(CharGPT(mqa))
    left = model_parts(mqa)
    out.append(
        say["saved"].format(
            n_head=mqa.n_head,
            saved=thousands(saved, lang),
            base=thousands(base, lang),
            share=said(saved / base, ".1%", lang).replace("%", say["percent"]),
            left=thousands(sum(left.values()), lang),
            attention=thousands(left["attention"], lang),
            embeddings=thousands(left["embeddings"], lang),
            mlp=thousands(left["MLP"], lang),
            norms=thousands(left["LayerNorm"], lang),
            head=thousands(left["output head"], lang),
            ratio=mqa.n_head // mqa.n_kv_head,
            block=mqa.block_size,
            layers=mqa.n_layer,
        )
    )
    return "\n".join(out)
