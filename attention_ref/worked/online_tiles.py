r"""The online softmax of "Life is awesome", tile by tile: the sections of its forward.

`attention_ref.worked.life_online_softmax` explains seed 000's two heads computed the way
FlashAttention computes them; this module builds its pieces: the trace (`online_trace`, keys in
tiles of `TILE`), one section per tile with the running $m$, $\ell$ and $O$ (`tile_sections`),
the end $H = O/\ell$, $L = m + \log \ell$ compared with seed 000 (`end_section`), and the
trace as JSON (`trace_json`).
"""

from __future__ import annotations

import math
from typing import Final

import torch

from attention_ref import reference as ref
from attention_ref.reference import online_softmax as osm
from attention_ref.render import JSONValue, Mat, Section, said
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.layout import sup
from attention_ref.worked.trace import L, column_names
from attention_ref.worked.words import ONLINE_SOFTMAX

#: keys per tile
TILE: Final = 2


def online_trace() -> tuple[ref.AttentionTrace, osm.OnlineSoftmaxTrace]:
    """Seed 000's trace and the online softmax of its two heads at once (``(2, 3, ·)``)."""
    seed = life.life_trace()
    assert seed.M is not None
    return seed, osm.online_softmax_attention(seed.Q, seed.K, seed.V, seed.M, tile=TILE)


def _tile_words(step: osm.TileStep, prev_m: torch.Tensor, tok: list[str], lang: str) -> str:
    """What the numbers of one tile show, row by row (computed, not typed), in ``lang``."""
    say = ONLINE_SOFTMAX[lang]
    S = step.S_j  # (h, n, b)
    words = []
    for r, name in enumerate(tok):
        masked = torch.isneginf(S[:, r, :])  # (h, b)
        if bool(masked.all()):
            words.append(say["unseen"].format(name=name))
        elif bool(masked.any()):
            words.append(say["inside"].format(name=name))
        grew = [
            i
            for i in range(S.shape[0])
            if math.isfinite(float(prev_m[i, r, 0]))
            and float(step.m[i, r, 0]) > float(prev_m[i, r, 0])
        ]
        for i in grew:
            numbers = {
                "before": float(prev_m[i, r, 0]),
                "after": float(step.m[i, r, 0]),
                "alpha": float(step.alpha[i, r, 0]),
            }
            words.append(
                say["grows"].format(
                    head=i + 1, name=name, **{k: said(v, ".3f", lang) for k, v in numbers.items()}
                )
            )
    return " ".join(words)


def tile_sections(trace: osm.OnlineSoftmaxTrace, lang: str = "en") -> list[Section]:
    """One section per tile: its scores and the running m, ℓ, O of every head, in ``lang``."""
    say = ONLINE_SOFTMAX[lang]
    tok = list(life.LIFE_TOKENS)
    h = int(trace.Q.shape[0])
    sections = []
    prev_m = torch.full_like(trace.m, -math.inf)
    for j, step in enumerate(trace.steps, start=1):
        keys = tok[step.start : step.stop]
        items: list[Mat] = []
        for i in range(h):
            s = sup(i)
            items += [
                Mat(
                    symbol=f"S_{j}{s}",
                    value=L(step.S_j[i]),
                    rows=tok,
                    cols=keys,
                    formula=f"\\frac{{Q{s} K_{j}^{{({i + 1})\\top}}}}{{\\sqrt{{2}}}} + M_{j}",
                ),
                Mat(
                    symbol=f"m{s}",
                    value=L(step.m[i]),
                    rows=tok,
                    cols=["m"],
                    formula=f"\\operatorname{{max}}(m{s}, \\operatorname{{rowmax}} S_{j}{s})",
                ),
                Mat(
                    symbol=f"P_{j}{s}",
                    value=L(step.P_j[i]),
                    rows=tok,
                    cols=keys,
                    formula=f"e^{{S_{j}{s} - m{s}}}",
                ),
                Mat(
                    symbol=f"\\alpha{s}",
                    value=L(step.alpha[i]),
                    rows=tok,
                    cols=["α"],
                    formula="e^{m_{\\text{old}} - m}",
                ),
                Mat(
                    symbol=f"\\ell{s}",
                    value=L(step.ell[i]),
                    rows=tok,
                    cols=["ℓ"],
                    formula=f"\\alpha{s} \\ell_{{\\text{{old}}}} + "
                    f"\\operatorname{{rowsum}} P_{j}{s}",
                ),
                Mat(
                    symbol=f"O{s}",
                    value=L(step.O[i]),
                    rows=tok,
                    formula=f"\\alpha{s} O_{{\\text{{old}}}} + P_{j}{s} V_{j}{s}",
                ),
                Mat(
                    symbol=f"O{s} / \\ell{s}",
                    value=L(step.partial[i]),
                    rows=tok,
                    formula="\\text{" + say["so_far"] + "}",
                    formula_text=say["so_far"],
                ),
            ]
        text = (say["before"] if j == 1 else "") + _tile_words(step, prev_m, tok, lang)
        sections.append(
            Section(title=say["tile"].format(j=j, keys=", ".join(keys)), text=text, items=items)
        )
        prev_m = step.m
    return sections


def end_section(
    seed: ref.AttentionTrace, trace: osm.OnlineSoftmaxTrace, lang: str = "en"
) -> tuple[Section, dict[str, JSONValue]]:
    """``H = O / ℓ``, ``L = m + log ℓ``, and the comparison with seed 000, in ``lang``."""
    say = ONLINE_SOFTMAX[lang]
    tok = list(life.LIFE_TOKENS)
    h = int(trace.Q.shape[0])
    gap = float((trace.H - seed.H).abs().max())
    items: list[Mat] = []
    for i in range(h):
        s = sup(i)
        items += [
            Mat(symbol=f"H{s}", value=L(trace.H[i]), rows=tok, formula=f"O{s} / \\ell{s}"),
            Mat(
                symbol=f"L{s}",
                value=L(trace.L[i]),
                rows=tok,
                cols=["L"],
                formula=f"m{s} + \\operatorname{{log}} \\ell{s}",
            ),
        ]
    concat = ref.merge_heads(trace.H)  # (h, n, d_v) -> (n, h*d_v)
    output = concat @ seed.W_O if seed.W_O is not None else concat
    items.append(
        Mat(
            symbol="\\operatorname{out}",
            text=say["output_label"],
            value=L(output),
            rows=tok,
            formula="\\operatorname{Concat}(H^{(1)} \\mid H^{(2)}) W_O",
            cols=column_names("y", int(output.shape[-1])),
        )
    )
    same = gap < 1e-12
    verdict = say["end_same" if same else "end_differs"].format(gap=said(gap, ".1e", lang))
    text = verdict + say["end_keeps"]
    return Section(title=say["end"], text=text, items=items), {"difference": gap, "equal": same}


def trace_json(seed: ref.AttentionTrace, trace: osm.OnlineSoftmaxTrace) -> dict[str, JSONValue]:
    """``{"tokens", "tile", "heads": [{"Q", "K", "V", "tiles": [{"keys", "S", "m", "P",
    "alpha", "l", "O", "partial"}], "H", "L"}], "concat", "W_O", "output"}``."""
    heads: list[JSONValue] = []
    for i in range(int(trace.Q.shape[0])):
        tiles: list[JSONValue] = [
            {
                "keys": [step.start, step.stop],
                "S": L(step.S_j[i]),
                "m": L(step.m[i]),
                "P": L(step.P_j[i]),
                "alpha": L(step.alpha[i]),
                "l": L(step.ell[i]),
                "O": L(step.O[i]),
                "partial": L(step.partial[i]),
            }
            for step in trace.steps
        ]
        heads.append(
            {
                "Q": L(trace.Q[i]),
                "K": L(trace.K[i]),
                "V": L(trace.V[i]),
                "tiles": tiles,
                "H": L(trace.H[i]),
                "L": L(trace.L[i]),
            }
        )
    concat = ref.merge_heads(trace.H)
    return {
        "tokens": list(life.LIFE_TOKENS),
        "tile": TILE,
        "heads": heads,
        "concat": L(concat),
        "W_O": L(seed.W_O) if seed.W_O is not None else None,
        "output": L(concat @ seed.W_O if seed.W_O is not None else concat),
    }
