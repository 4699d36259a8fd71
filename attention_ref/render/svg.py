"""Figures as inline SVG text: heatmaps, tensors as coloured cells, a flow of boxes, weight blocks.

A small writer in pure Python (no torch, no matplotlib, nothing else of attnref): every
function receives plain lists of floats and strings, already computed elsewhere, and returns one
``<svg>`` element as a string, ready to be placed inline in an HTML page. Sizes follow the data
(a cell per entry, a box per step, a rectangle per weight matrix drawn with an area
proportional to its number of weights); nothing here computes a value that is printed.

Every element that stands for a number carries a ``<title>`` (a tooltip in the browser) and
the ``<svg>`` has a ``role="img"`` and an ``aria-label``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

from attention_ref.render.svg_cells import (
    CHAR_WIDTH,
    FONT,
    HIGH,
    LOW,
    MASKED_FILL,
    MINUS,
    PALETTE,
    Block,
    Cell,
    heatmap,
    number,
    svg_element,
    svg_text,
    tensor,
    text_width,
    tint,
)

__all__ = [
    "CHAR_WIDTH",
    "FONT",
    "HIGH",
    "LOW",
    "MASKED_FILL",
    "MINUS",
    "PALETTE",
    "Block",
    "Box",
    "Cell",
    "Rect",
    "RectRow",
    "arrows",
    "blocks",
    "flow",
    "groups",
    "heatmap",
    "number",
    "tensor",
    "text_width",
]


@dataclass(frozen=True, kw_only=True)
class Box:
    """A step of a flow diagram: a ``title`` (what is computed) and a ``detail`` (its shape);
    ``colour`` indexes `PALETTE` (``None``: grey, a step shared by all heads)."""

    title: str
    detail: str = ""
    colour: int | None = None


def flow(stages: Sequence[Sequence[Box]], *, title: str, box_w: float = 150.0) -> str:
    """Steps from top to bottom; the boxes of one stage side by side (one per head).

    Arrows join consecutive stages: box to box when both have as many boxes, every box to
    every box otherwise (one input fanning out to the heads, the heads joining the concat).
    """
    if not stages or any(not s for s in stages):
        raise ValueError("a flow needs at least one stage, and every stage a box")
    box_h, vgap, hgap = 44.0, 26.0, 14.0
    size = 12.0
    widest = max(
        max(text_width(b.title, size), text_width(b.detail, 11)) for s in stages for b in s
    )
    box_w = max(box_w, widest + 16)
    ncols = max(len(s) for s in stages)
    width = ncols * box_w + (ncols - 1) * hgap + 16
    width = max(width, text_width(title, 14) + 12)
    top = 28.0
    centres: list[list[tuple[float, float]]] = []
    body = [svg_text(width / 2, 11, title, size=14, weight="bold")]
    arrow = f"attn-arrow-{zlib.crc32(title.encode()):08x}"  # one id per diagram on a page
    body.append(
        f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>'
    )
    for k, stage in enumerate(stages):
        y = top + k * (box_h + vgap)
        row_w = len(stage) * box_w + (len(stage) - 1) * hgap
        x0 = (width - row_w) / 2
        row: list[tuple[float, float]] = []
        for i, b in enumerate(stage):
            x = x0 + i * (box_w + hgap)
            colour = "#888888" if b.colour is None else PALETTE[b.colour % len(PALETTE)]
            body.append(
                f'<g class="box"><rect x="{x:.1f}" y="{y:.1f}" width="{box_w:g}" '
                f'height="{box_h:g}" rx="6" fill="{tint(colour, 0.8)}" stroke="{colour}" '
                f'stroke-width="1.5"/>'
                + svg_text(x + box_w / 2, y + 15, b.title, size=size, weight="bold")
                + svg_text(x + box_w / 2, y + 31, b.detail, size=11, fill="#333")
                + "</g>"
            )
            row.append((x + box_w / 2, y))
        centres.append(row)
    for k in range(1, len(centres)):
        prev, cur = centres[k - 1], centres[k]
        pairs = (
            list(zip(prev, cur, strict=True))
            if len(prev) == len(cur)
            else [(p, c) for p in prev for c in cur]
        )
        for (x1, y1), (x2, y2) in pairs:
            body.append(
                f'<line x1="{x1:.1f}" y1="{y1 + box_h:.1f}" x2="{x2:.1f}" y2="{y2 - 2:.1f}" '
                f'stroke="#555" stroke-width="1.3" marker-end="url(#{arrow})"/>'
            )
    height = top + len(stages) * (box_h + vgap) - vgap + 8
    return svg_element(width, height, title, body)


@dataclass(frozen=True, kw_only=True)
class Rect:
    """A weight matrix drawn as a rectangle of ``rows`` × ``cols`` units (area = its number of
    weights), labelled ``label`` under it; ``colour`` indexes `PALETTE`."""

    label: str
    rows: int
    cols: int
    colour: int
    tip: str = ""


@dataclass(frozen=True, kw_only=True)
class RectRow:
    """One configuration (e.g. one number of heads): its ``label``, its rectangles left to right,
    and a ``note`` printed at the right end."""

    label: str
    rects: Sequence[Rect]
    note: str = ""


def blocks(rows: Sequence[RectRow], *, title: str, unit: float = 8.0) -> str:
    """Configurations one under the other, each a row of rectangles drawn to scale.

    One unit of a matrix's shape is ``unit`` px, so equal numbers of weights take equal areas
    and rows of equal total area are equally long when their rectangles are equally tall.
    """
    size = 12.0
    label_w = max((text_width(r.label, size) for r in rows), default=0.0) + 12
    gap = 0.0  # rectangles touch: equal areas give equally long rows
    top = 30.0
    body: list[str] = []
    y = top
    right = 0.0
    for r in rows:
        tall = max((q.rows for q in r.rects), default=0) * unit
        body.append(svg_text(6, y + tall / 2, r.label, size=size, anchor="start", weight="bold"))
        x = label_w
        for q in r.rects:
            w, h = q.cols * unit, q.rows * unit
            colour = PALETTE[q.colour % len(PALETTE)]
            tip = q.tip or f"{q.label}: {q.rows} × {q.cols}"
            body.append(
                f'<g class="block"><title>{escape(tip)}</title>'
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:g}" height="{h:g}" '
                f'fill="{tint(colour, 0.45)}" stroke="#fff" stroke-width="1.5"/>'
                + svg_text(x + w / 2, y + tall + 9, q.label, size=9 if w < 24 else 11)
                + "</g>"
            )
            x += w + gap
        if r.note:
            body.append(svg_text(x + 8, y + tall / 2, r.note, size=size, anchor="start"))
            x += 8 + text_width(r.note, size)
        right = max(right, x)
        y += tall + 34
    width = max(right + 8, text_width(title, 14) + 12)
    body.insert(0, svg_text(width / 2, 11, title, size=14, weight="bold"))
    return svg_element(width, y - 34 + 24, title, body)


def groups(
    top: Sequence[Box],
    bottom: Sequence[Box],
    links: Sequence[tuple[int, int]],
    *,
    title: str,
    box_w: float = 92.0,
) -> str:
    """Two rows of boxes and a line for each ``(i, j)`` of ``links``: top box ``i`` reads bottom
    box ``j`` (the query heads of grouped-query attention and the K/V head each one reads).

    The boxes of each row are spread over the same width, so a bottom box sits under the
    middle of the top boxes that share it when the groups are equal.
    """
    if not top or not bottom:
        raise ValueError("both rows of a groups figure need at least one box")
    for i, j in links:
        if not (0 <= i < len(top) and 0 <= j < len(bottom)):
            raise ValueError(f"link {(i, j)} joins no boxes of {len(top)} and {len(bottom)}")
    size, box_h, gap, hgap = 12.0, 44.0, 56.0, 10.0
    widest = max(max(text_width(b.title, size), text_width(b.detail, 11)) for b in (*top, *bottom))
    box_w = max(box_w, widest + 16)
    span = len(top) * box_w + (len(top) - 1) * hgap
    width = max(span + 16, text_width(title, 14) + 12)
    x0 = (width - span) / 2
    y_top, y_bottom = 28.0, 28.0 + box_h + gap
    body = [svg_text(width / 2, 11, title, size=14, weight="bold")]

    def row(boxes: Sequence[Box], y: float) -> list[float]:
        step = span / len(boxes)  # each box centred in its share of the row
        centres = []
        for k, b in enumerate(boxes):
            cx = x0 + (k + 0.5) * step
            colour = "#888888" if b.colour is None else PALETTE[b.colour % len(PALETTE)]
            body.append(
                f'<g class="box"><title>{escape(b.title)}</title><rect x="{cx - box_w / 2:.1f}" '
                f'y="{y:.1f}" width="{box_w:g}" height="{box_h:g}" rx="6" '
                f'fill="{tint(colour, 0.8)}" stroke="{colour}" stroke-width="1.5"/>'
                + svg_text(cx, y + 15, b.title, size=size, weight="bold")
                + svg_text(cx, y + 31, b.detail, size=11, fill="#333")
                + "</g>"
            )
            centres.append(cx)
        return centres

    xs_top, xs_bottom = row(top, y_top), row(bottom, y_bottom)
    for i, j in links:
        colour = PALETTE[(bottom[j].colour or 0) % len(PALETTE)]
        body.append(
            f'<line class="link" x1="{xs_top[i]:.1f}" y1="{y_top + box_h:.1f}" '
            f'x2="{xs_bottom[j]:.1f}" y2="{y_bottom:.1f}" stroke="{colour}" stroke-width="2"/>'
        )
    return svg_element(width, y_bottom + box_h + 8, title, body)


def arrows(
    vectors: Sequence[tuple[float, float]],
    labels: Sequence[str],
    *,
    title: str,
    size: float = 220.0,
    colour: int = 0,
    decimal: str = ".",
) -> str:
    """2-D vectors drawn from a common origin inside the circle of the longest one (a pair of
    coordinates turned by RoPE at successive positions), each arrow labelled at its tip.

    Tones run from dark (the first vector) to light (the last), so the order of the turns reads
    from the picture; a label that would overlap one already drawn is left out (its arrow keeps
    its tooltip); every arrow has a ``<title>`` with its label and coordinates, written with
    ``decimal`` as the decimal mark.
    """
    if len(vectors) != len(labels) or not vectors:
        raise ValueError(f"{len(vectors)} vectors need as many labels, got {len(labels)}")
    radius = max(math.hypot(x, y) for x, y in vectors) or 1.0
    pad, top = 34.0, 26.0
    width = max(size + 2 * pad, text_width(title, 14) + 12)
    cx, cy = width / 2, top + pad + size / 2
    r_px = size / 2
    base = PALETTE[colour % len(PALETTE)]
    marker = f"attn-arrowhead-{zlib.crc32(title.encode()):08x}"
    body = [
        svg_text(width / 2, 11, title, size=14, weight="bold"),
        f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker></defs>',
        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r_px:.1f}" fill="none" stroke="#bbb" '
        'stroke-dasharray="4 3"/>',
        f'<line x1="{cx - r_px - 8:.1f}" y1="{cy:.1f}" x2="{cx + r_px + 8:.1f}" y2="{cy:.1f}" '
        'stroke="#ddd"/>',
        f'<line x1="{cx:.1f}" y1="{cy - r_px - 8:.1f}" x2="{cx:.1f}" y2="{cy + r_px + 8:.1f}" '
        'stroke="#ddd"/>',
    ]
    n = len(vectors)
    placed: list[tuple[float, float]] = []  # labels drawn so far: a crowded one is left out
    for k, ((x, y), label) in enumerate(zip(vectors, labels, strict=True)):
        tone = tint(base, 0.7 * k / max(n - 1, 1))
        ex, ey = cx + x / radius * r_px, cy - y / radius * r_px  # y grows upwards in the plot
        lx = cx + x / radius * (r_px + 18)
        ly = cy - y / radius * (r_px + 18)
        tip = f"{label}: ({number(x, 3, decimal)}; {number(y, 3, decimal)})"
        room = all(math.hypot(lx - px, ly - py) >= 16 for px, py in placed)
        if room:
            placed.append((lx, ly))
        body.append(
            f'<g class="arrow"><title>{escape(tip)}</title>'
            f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" stroke="{tone}" '
            f'stroke-width="2.2" marker-end="url(#{marker})"/>'
            + (svg_text(lx, ly, label, size=11, fill="#222") if room else "")
            + "</g>"
        )
    return svg_element(width, cy + r_px + pad, title, body)
