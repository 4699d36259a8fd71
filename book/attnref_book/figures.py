"""The book's figures: numbers computed by the reference, drawn by `attention_ref.render.svg`
(and matplotlib for the validation curves), wrapped for a page by `figure`.

Every figure is computed when the site is built; its words follow the page's language.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attention_ref.render import DECIMAL_MARK
from attnref_book.pages import thousands

if TYPE_CHECKING:
    from torch import Tensor

    from attention_ref.reference import AttentionTrace


def figure(svg_or_svgs: str | Sequence[str], caption: str) -> str:
    """Raw HTML for the page: the SVG(s) in a ``<figure>`` (side by side, wrapping on narrow
    screens) with a caption that says what the figure shows."""
    svgs = [svg_or_svgs] if isinstance(svg_or_svgs, str) else list(svg_or_svgs)
    inner = "\n".join(f'<div class="attn-panel">{s}</div>' for s in svgs)
    return (
        f'\n<figure class="attn-figure">\n<div class="attn-panels">\n{inner}\n</div>\n'
        f"<figcaption>{html.escape(caption)}</figcaption>\n</figure>\n"
    )


def _labels(trace: AttentionTrace) -> list[str]:
    n = int(trace.X.shape[-2])
    return list(trace.tokens) if len(trace.tokens) == n else [str(i + 1) for i in range(n)]


def attention_heatmaps(
    trace: AttentionTrace, *, precision: int = 2, lang: str = "en", batch: int = 0
) -> list[str]:
    """One heatmap of ``A`` per head (rows: queries, columns: keys, the tokens as labels)."""
    from attention_ref.render.svg import heatmap

    A = trace.A if trace.A.dim() == 3 else trace.A[batch]  # (h, n, n)
    tokens = _labels(trace)
    words = {"en": ("head", "query", "key"), "pt": ("cabeça", "consulta", "chave")}[lang]
    return [
        heatmap(
            A[i].tolist(),
            tokens,
            tokens,
            title=f"A, {words[0]} {i + 1}" if A.shape[0] > 1 else "A",
            precision=precision,
            decimal=DECIMAL_MARK[lang],
            row_title=words[1],
            col_title=words[2],
        )
        for i in range(A.shape[0])
    ]


def mask_figure(n: int, tokens: Sequence[str] = (), *, lang: str = "en") -> str:
    """The causal mask ``M`` of `attention_ref.reference.causal_mask`: 0 on and below the
    diagonal, −∞ above."""
    from attention_ref import reference as ref
    from attention_ref.render.svg import heatmap

    labels = list(tokens) if tokens else [str(i + 1) for i in range(n)]
    words = {"en": ("query", "key"), "pt": ("consulta", "chave")}[lang]
    return heatmap(
        ref.causal_mask(n).tolist(),
        labels,
        labels,
        title="M",
        precision=0,
        row_title=words[0],
        col_title=words[1],
    )


def _shape(t: Tensor | tuple[int, ...]) -> str:
    dims = tuple(t) if isinstance(t, tuple) else tuple(t.shape)
    return "(" + ", ".join(str(d) for d in dims) + ")"


#: the words of the data-flow figure, per language of the book
FLOW_WORDS = {
    "en": {
        "title": "Masked multi-head attention",
        "unmasked": "Multi-head attention",
        "scores": "scores",
        "mask": "+ M (causal mask)",
        "no_mask": "no mask",
        "softmax": "A = softmax by row",
        "concat": "Concat of {h} heads",
        "output": "output",
    },
    "pt": {
        "title": "Atenção multi-cabeça com máscara",
        "unmasked": "Atenção multi-cabeça",
        "scores": "scores",
        "mask": "+ M (máscara causal)",
        "no_mask": "sem máscara",
        "softmax": "A = softmax por linha",
        "concat": "Concat das {h} cabeças",
        "output": "saída",
    },
}


def flow_figure(trace: AttentionTrace, lang: str = "en") -> str:
    """The data flow of one (masked) multi-head attention, each step with the shape it has in
    ``trace`` (read from the tensors, not typed); one column per head."""
    from attention_ref.render.svg import Box, flow

    w = FLOW_WORDS[lang]
    h = trace.h
    H0 = trace.head(0)
    masked = trace.M is not None
    per_head = [
        ("Q, K, V = X W", f"{_shape(H0['Q'])}, {_shape(H0['K'])}, {_shape(H0['V'])}"),
        (f"{w['scores']} Q Kᵀ / √d_k", _shape(H0["S"])),
        (w["mask"] if masked else w["no_mask"], _shape(H0["S_masked"])),
        (w["softmax"], _shape(H0["A"])),
        ("H = A V", _shape(H0["H"])),
    ]
    stages: list[list[Box]] = [[Box(title="X", detail=_shape(trace.X))]]
    for name, shape in per_head:
        stages.append(
            [
                Box(title=name if h == 1 else f"{name} [{i + 1}]", detail=shape, colour=i)
                for i in range(h)
            ]
        )
    stages.append([Box(title=w["concat"].format(h=h), detail=_shape(trace.concat))])
    if trace.W_O is not None:
        stages.append(
            [
                Box(
                    title=f"· W_O {_shape(trace.W_O)}",
                    detail=f"{w['output']} {_shape(trace.output)}",
                )
            ]
        )
    title = w["title"] if masked else w["unmasked"]
    return flow(stages, title=f"{title}, h = {h}, d_k = {trace.d_k}")


#: the words of seed 002's split/merge figure, per language of the book
SPLIT_WORDS = {
    "en": {
        "features": "tokens × features",
        "head": "head",
        "reshape": "reshape",
        "swap": "swap",
        "back": "swap back, reshape",
    },
    "pt": {
        "features": "tokens × dimensões",
        "head": "cabeça",
        "reshape": "reshape",
        "swap": "troca de eixos",
        "back": "destroca, reshape",
    },
}


def split_merge_figure(lang: str = "en") -> list[str]:
    """Seed 002's split into heads and back, on its numbers: ``Q`` ``(1, 4, 6)`` → reshape
    ``(1, 4, 3, 2)`` → swap ``(1, 3, 4, 2)`` → `merge_heads` ``(1, 4, 6)``.

    Each entry keeps its colour (its head) and its tone (its token) in every shape. The
    entries are whole numbers, so only the words change with ``lang``.
    """
    from attention_ref import reference as ref
    from attention_ref.render.svg import Block, Cell, tensor
    from attention_ref.worked.i_want_pizza import PIZZA_TOKENS, pizza_numbers

    r = pizza_numbers()
    tok = list(PIZZA_TOKENS)
    Q, Qr, Qs = r.Q[0], r.Q_reshaped[0], r.Q_swapped[0]  # (T, d), (T, h, d_k), (h, T, d_k)
    h, d_k = int(Qs.shape[0]), int(Qs.shape[-1])
    merged = ref.merge_heads(r.Q_swapped)[0]  # (1, 3, 4, 2) -> (1, 4, 6) -> (4, 6)
    w = SPLIT_WORDS[lang]

    def num(v: float) -> str:
        return f"{v:g}"

    def flat(M: Tensor, label: str) -> Block:  # (T, h*d_k): head of column j is j // d_k
        cells = [
            [Cell(text=num(v), colour=j // d_k, tone=t) for j, v in enumerate(row)]
            for t, row in enumerate(M.tolist())
        ]
        return Block(label=label, rows=cells, row_labels=tok)

    by_token = [
        Block(
            label=tok[t],
            row_labels=[f"{w['head']} {k + 1}" for k in range(h)],
            rows=[
                [Cell(text=num(v), colour=k, tone=t) for v in piece]
                for k, piece in enumerate(Qr[t].tolist())
            ],
        )
        for t in range(Qr.shape[0])
    ]
    by_head = [
        Block(
            label=f"{w['head']} {k + 1}",
            row_labels=tok if k == 0 else (),
            rows=[
                [Cell(text=num(v), colour=k, tone=t) for v in piece]
                for t, piece in enumerate(Qs[k].tolist())
            ],
        )
        for k in range(h)
    ]
    return [
        tensor([flat(Q, w["features"])], title=f"Q {_shape(r.Q)}"),
        tensor(by_token, title=f"{w['reshape']} {_shape(r.Q_reshaped)}"),
        tensor(by_head, title=f"{w['swap']} {_shape(r.Q_swapped)}"),
        tensor(
            [flat(merged, w["features"])],
            title=f"{w['back']} {_shape(merged.unsqueeze(0))}",
        ),
    ]


#: the words of seed 003's weight-blocks figure, per language of the book
BLOCK_WORDS = {
    "en": {"title": "The weights of one attention layer", "weights": "weights"},
    "pt": {"title": "Os pesos de uma camada de atenção", "weights": "pesos"},
}


def weight_blocks_figure(
    d_model: int = 8, heads: Sequence[int] = (1, 2, 4), lang: str = "en"
) -> str:
    """Seed 003's picture: the weights of one attention layer for each ``h``, drawn to scale
    from `attention_ref.reference.params.attention_params` (no biases): ``h`` blocks of
    ``W_Q^(i), W_K^(i), W_V^(i)`` (``d_model × d_k`` each) and ``W_O`` (``h·d_k × d_model``)."""
    from attention_ref.reference.params import attention_params
    from attention_ref.render.svg import Rect, RectRow, blocks

    w = BLOCK_WORDS[lang]
    rows = []
    for h in heads:
        p = attention_params(d_model, h, bias=False)
        shapes = p.shapes()
        rects = []
        for i in range(h):
            for name in ("Q", "K", "V"):
                r, c = shapes[f"W_{name}^(i)"]
                rects.append(
                    Rect(
                        label=f"{name}{i + 1}",
                        rows=r,
                        cols=c,
                        colour=i,
                        tip=f"W_{name}^({i + 1}): {r} × {c}",
                    )
                )
        r, c = shapes["W_O"]
        rects.append(Rect(label="W_O", rows=r, cols=c, colour=6, tip=f"W_O: {r} × {c}"))
        rows.append(
            RectRow(
                label=f"h = {h}",
                rects=rects,
                note=f"d_k = {p.d_k}: {thousands(p.total, lang)} {w['weights']}",
            )
        )
    return blocks(rows, title=f"{w['title']}, d_model = {d_model}")


#: the words of the validation-curves figure, per language of the book
CURVE_WORDS = {
    "en": {
        "title": "Validation loss of each arm",
        "x": "step",
        "y": "cross-entropy (nats per character)",
        "bigram": "bigram baseline",
        "arms": {
            "multihead": "with attention (Q02)",
            "none": "without attention (Q03)",
            "uniform": "uniform attention",
        },
    },
    "pt": {
        "title": "Perda de validação de cada braço",
        "x": "passo",
        "y": "entropia cruzada (nats por caractere)",
        "bigram": "linha de base do bigrama",
        "arms": {
            "multihead": "com atenção (Q02)",
            "none": "sem atenção (Q03)",
            "uniform": "atenção uniforme",
        },
    },
}


def validation_curves_figure(doc: Mapping[str, Any], lang: str = "en") -> str:
    """The validation loss of each arm of a recorded comparison (``comparison.json``: its
    ``curves`` and ``baselines``), the bigram baseline dashed; an SVG whose words are text
    (not paths) in ``lang``, numbers with its decimal mark and thousands separator."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from attention_ref.experiments.plots import COLORS

    w = CURVE_WORDS[lang]
    bigram = float(doc["baselines"]["bigram"])
    # svg.fonttype none: text stays <text>; a fixed hashsalt and no date: the same SVG each build
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "attnref"}):
        fig, ax = plt.subplots(figsize=(7.0, 4.0), dpi=100)
        for i, (arm, series) in enumerate(doc["curves"].items()):
            points = sorted(series.get("val_loss", []))
            ax.plot(
                [s for s, _ in points],
                [v for _, v in points],
                marker="o",
                markersize=3.5,
                linewidth=1.8,
                color=COLORS.get(arm, f"C{i}"),
                label=w["arms"].get(arm, arm),
            )
        number = f"{bigram:.3f}".replace(".", DECIMAL_MARK[lang])
        ax.axhline(
            bigram, color="black", linestyle="--", linewidth=1, label=f"{w['bigram']} {number}"
        )
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: thousands(int(v), lang)))
        ax.yaxis.set_major_formatter(
            FuncFormatter(lambda v, _: f"{v:.1f}".replace(".", DECIMAL_MARK[lang]))
        )
        ax.set_xlabel(w["x"])
        ax.set_ylabel(w["y"])
        ax.set_title(w["title"])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
        fig.tight_layout()
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    svg = out.getvalue()
    return svg[svg.index("<svg") :]  # inline: no XML declaration or DOCTYPE
