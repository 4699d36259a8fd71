r"""FlashAttention's online softmax on "Life is awesome": tiles of 2 keys, m, ℓ and O by hand.

Seed 000's two heads (their ``Q``, ``K``, ``V``, the causal mask, ``W_O = I_4``), computed the
way FlashAttention computes them (`attention_ref.reference.online_softmax`): the keys are read
in tiles of ``b = 2`` ("Life", "is", then "awesome"), and each query row keeps a running
maximum $m$, a running sum $\ell$ and an unnormalised output $O$:

$$
m' = \max(m, \operatorname{rowmax} S_j),\quad P_j = e^{S_j - m'},\quad \alpha = e^{m - m'},
\quad \ell' = \alpha \ell + \operatorname{rowsum} P_j,\quad O' = \alpha O + P_j V_j
$$

Tile 1 ends inside the mask for the row "Life" ("is" is its future), and tile 2 is entirely
masked for the rows "Life" and "is". At the end $H = O/\ell$ is seed 000's $H^{(i)}$ (checked
with the numbers). The backward (``--backward``) recomputes each tile's weights from
$L = m + \log \ell$ instead of storing the ``n × n`` matrix.

The forward's tiles and its end are built in `attention_ref.worked.online_tiles`.
"""

from __future__ import annotations

import torch

from attention_ref import reference as ref
from attention_ref.reference import online_softmax as osm
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, said
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.gradients import check_grad_output, grad_mat
from attention_ref.worked.layout import sup
from attention_ref.worked.online_tiles import (
    TILE,
    end_section,
    online_trace,
    tile_sections,
    trace_json,
)
from attention_ref.worked.trace import L, column_names
from attention_ref.worked.words import GRADIENTS, ONLINE_SOFTMAX, listed


def explain(lang: str = "en") -> Explanation:
    """Seed 000's two heads by FlashAttention's online softmax, tiles of 2 keys, in ``lang``'s
    words (`attention_ref.worked.words.ONLINE_SOFTMAX`)."""
    say = ONLINE_SOFTMAX[lang]
    seed, trace = online_trace()
    tok = list(life.LIFE_TOKENS)
    inputs = [
        m
        for i in range(seed.h)
        for m in (
            Mat(symbol=f"Q{sup(i)}", value=L(seed.Q[i]), formula=f"X W_Q{sup(i)}", rows=tok),
            Mat(symbol=f"K{sup(i)}", value=L(seed.K[i]), formula=f"X W_K{sup(i)}", rows=tok),
            Mat(symbol=f"V{sup(i)}", value=L(seed.V[i]), formula=f"X W_V{sup(i)}", rows=tok),
        )
    ]
    end, numbers = end_section(seed, trace, lang)
    tiles = say["tile_sep"].join(
        say["tile_is"].format(
            j=j,
            keys=listed([repr(w) for w in tok[s.start : s.stop]], say["key_last"], say["key_sep"]),
        )
        for j, s in enumerate(trace.steps, start=1)
    )
    sections = [
        Section(
            title=say["inputs"].format(tile=TILE),
            text=say["inputs_text"].format(tile=TILE, tiles=tiles),
            items=inputs,
        ),
        *tile_sections(trace, lang),
        end,
    ]
    return Explanation(
        title=say["title"].format(tile=TILE),
        source=say["source"].format(h=seed.h, d_out=int(seed.output.shape[-1])),
        sections=sections,
        data={**trace_json(seed, trace), "check": numbers},
        lang=lang,
    )


def explain_backward(G: Matrix | None = None, lang: str = "en") -> Explanation:
    """The forward, then the backward by recomputation from L, tile by tile, in the words of
    ``lang`` (`attention_ref.worked.words.ONLINE_SOFTMAX`, ``GRADIENTS``)."""
    forward, say, grad_words = explain(lang), ONLINE_SOFTMAX[lang], GRADIENTS[lang]
    seed, trace = online_trace()
    tok = list(life.LIFE_TOKENS)
    G_t = check_grad_output(G, seed.output, lang)
    W_O = seed.W_O
    assert W_O is not None
    dconcat = ref.concat_grad(G_t, W_O)  # G W_Oᵀ
    dH = ref.heads_grad(dconcat, seed.h)  # (n, h*d_v) -> (h, n, d_v)
    grads = osm.online_softmax_backward(trace, dH)
    X = seed.X
    dW = {
        role: ref.weight_grad_heads(X, d)
        for role, d in (("Q", grads.Q), ("K", grads.K), ("V", grads.V))
    }
    dX = ref.input_grad(
        ref.input_grad_path(grads.Q, seed.W_Q),
        ref.input_grad_path(grads.K, seed.W_K),
        ref.input_grad_path(grads.V, seed.W_V),
    )
    plain = ref.attention_backward(seed, G_t)
    A_gap = float((torch.cat(grads.P, dim=-1) - seed.A).abs().max())
    grad_gap = max(
        float((grads.Q - plain.Q).abs().max()),
        float((grads.K - plain.K).abs().max()),
        float((grads.V - plain.V).abs().max()),
        float((dX - plain.X).abs().max()),
    )
    note = grad_words["default_g" if G is None else "given_g"]
    D_gap = float((grads.D - (plain.A * seed.A).sum(-1, keepdim=True)).abs().max())
    d_words = say["bw_d_equal" if D_gap < 1e-12 else "bw_d_differs"].format(
        gap=said(D_gap, ".1e", lang)
    )
    first = [
        grad_mat("W_O", ref.output_weight_grad(seed.concat, G_t), "\\operatorname{Concat}^\\top G")
    ]
    first += [
        m
        for i in range(seed.h)
        for m in (
            grad_mat(f"H{sup(i)}", dH[i], rows=tok),
            Mat(
                symbol=f"D{sup(i)}",
                value=L(grads.D[i]),
                rows=tok,
                cols=["D"],
                formula=f"\\operatorname{{rowsum}}(\\partial H{sup(i)} \\odot H{sup(i)})",
                formula_text=f"rowsum(∂H^({i + 1}) ⊙ H^({i + 1}))",
            ),
        )
    ]
    sections = [
        Section(
            title=say["bw_first"],
            text=f"{note} {grad_words['notation']}" + say["bw_first_text"] + d_words,
            items=[Mat(symbol="G", value=L(G_t), rows=tok, cols=column_names("y", 4)), *first],
        ),
    ]
    for j, tile in enumerate(grads.tiles, start=1):
        keys = tok[tile.start : tile.stop]
        items: list[Mat] = []
        for i in range(seed.h):
            s = sup(i)
            items += [
                Mat(
                    symbol=f"P_{j}{s}",
                    value=L(tile.P_j[i]),
                    rows=tok,
                    cols=keys,
                    formula=f"e^{{S_{j}{s} - L{s}}}",
                ),
                grad_mat(
                    f"V_{j}{s}", tile.dV_j[i], f"P_{j}^{{({i + 1})\\top}} \\partial H{s}", rows=keys
                ),
                grad_mat(
                    f"P_{j}{s}",
                    tile.dP_j[i],
                    f"\\partial H{s} V_{j}^{{({i + 1})\\top}}",
                    rows=tok,
                    cols=keys,
                ),
                grad_mat(
                    f"S_{j}{s}",
                    tile.dS_j[i],
                    f"P_{j}{s} \\odot (\\partial P_{j}{s} - D{s})",
                    rows=tok,
                    cols=keys,
                ),
                grad_mat(
                    f"K_{j}{s}",
                    tile.dK_j[i],
                    f"\\frac{{\\partial S_{j}^{{({i + 1})\\top}} Q{s}}}{{\\sqrt{{2}}}}",
                    rows=keys,
                ),
                grad_mat(
                    f"Q{s}",
                    tile.dQ[i],
                    f"\\sum_{{j'=1}}^{{{j}}} \\frac{{\\partial S_{{j'}}{s} "
                    f"K_{{j'}}{s}}}{{\\sqrt{{2}}}}",
                    rows=tok,
                ),
            ]
        sections.append(
            Section(
                title=say["bw_tile"].format(j=j, keys=", ".join(keys)),
                text=say["bw_tile_text"],
                items=items,
            )
        )
    checks = []
    if A_gap < 1e-12:
        checks.append(say["bw_a_equal"].format(gap=said(A_gap, ".1e", lang)))
    if grad_gap < 1e-12:
        checks.append(say["bw_grads_equal"].format(gap=said(grad_gap, ".1e", lang)))
    sections.append(
        Section(
            title=say["bw_weights"],
            text=" ".join(checks) or say["bw_not_equal"],
            items=[
                *[
                    grad_mat(f"W_{r}{sup(i)}", dW[r][i], f"X^\\top \\partial {r}{sup(i)}")
                    for i in range(seed.h)
                    for r in ("Q", "K", "V")
                ],
                grad_mat(
                    "X",
                    dX,
                    "\\sum_i (\\partial Q^{(i)} W_Q^{(i)\\top} + \\partial K^{(i)} "
                    "W_K^{(i)\\top} + \\partial V^{(i)} W_V^{(i)\\top})",
                    rows=tok,
                    cols=column_names("dim ", 4),
                ),
            ],
        )
    )
    heads: list[JSONValue] = []
    for i in range(seed.h):
        dA = torch.cat([tile.dP_j[i] for tile in grads.tiles], dim=-1)
        dS = torch.cat([tile.dS_j[i] for tile in grads.tiles], dim=-1)
        heads.append(
            {
                "H": L(dH[i]),
                "A": L(dA),
                "S_masked": L(dS),
                "S": L(dS),
                "Q": L(grads.Q[i]),
                "K": L(grads.K[i]),
                "V": L(grads.V[i]),
                "W_Q": L(dW["Q"][i]),
                "W_K": L(dW["K"][i]),
                "W_V": L(dW["V"][i]),
            }
        )
    grads_json: dict[str, JSONValue] = {
        "output": L(G_t),
        "W_O": L(ref.output_weight_grad(seed.concat, G_t)),
        "concat": L(dconcat),
        "X": L(dX),
        "heads": heads,
        "D": [L(d) for d in grads.D],
        "equal_to_ordinary_backward": grad_gap < 1e-12,
    }
    return Explanation(
        title=forward.title + grad_words["with_backward"],
        source=forward.source,
        sections=[*forward.sections, *sections],
        data={**forward.data, "loss": "sum" if G is None else "grad-output", "grads": grads_json},
        precision=forward.precision,
        lang=lang,
    )
