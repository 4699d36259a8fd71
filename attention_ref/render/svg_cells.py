"""Matrices and tensors as coloured cells, and the SVG pieces every figure is drawn with.

The first half of `attention_ref.render.svg`'s writer (pure Python, plain lists in, one
``<svg>`` string out): the palette and the heatmap's scale, `number` (a value as a cell prints
it), the ``<svg>`` and ``<text>`` elements, `heatmap` (a matrix as coloured cells with its
values) and `tensor` (a tensor's slices side by side, coloured by head and token). Every
element that stands for a number carries a ``<title>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from xml.sax.saxutils import escape, quoteattr

#: Colours for categories (heads, tokens): Okabe-Ito, readable by colour-blind readers.
PALETTE: Final = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
#: The heatmap's scale runs from LOW (smallest value) to HIGH (largest value).
LOW: Final = (247, 251, 255)
HIGH: Final = (8, 48, 107)
#: Fill of a cell whose value is not finite (a masked −∞ score).
MASKED_FILL: Final = "#6b6b6b"
FONT: Final = 'font-family="sans-serif"'
#: Average width of a character, as a fraction of the font size (for label columns).
CHAR_WIDTH: Final = 0.6
MINUS: Final = "\u2212"


def text_width(text: str, size: float) -> float:
    """The width a label of ``size`` px will roughly take."""
    return len(text) * size * CHAR_WIDTH


def number(v: float, precision: int, decimal: str = ".") -> str:
    """A value as a cell prints it: ``−∞``/``∞`` when infinite, a true minus sign, and
    ``decimal`` as the decimal mark (``","`` on the Portuguese pages)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return f"{MINUS}∞" if v < 0 else "∞"
    s = f"{v:.{precision}f}"
    if s.startswith("-") and float(s) == 0.0:
        s = s[1:]  # no "-0.00"
    return s.replace("-", MINUS).replace(".", decimal)


def _mix(t: float) -> str:
    """The heatmap colour at ``t`` in [0, 1]."""
    r, g, b = (round(lo + (hi - lo) * t) for lo, hi in zip(LOW, HIGH, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def tint(colour: str, amount: float) -> str:
    """``colour`` mixed with white: ``amount`` 0 keeps it, 1 gives white."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    r, g, b = (round(c + (255 - c) * amount) for c in (r, g, b))
    return f"#{r:02x}{g:02x}{b:02x}"


def svg_element(width: float, height: float, label: str, body: Sequence[str]) -> str:
    """The ``<svg>`` element: pixel size, a matching viewBox (it scales down on narrow screens)."""
    w, h = math.ceil(width), math.ceil(height)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="attn-svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label={quoteattr(label)} {FONT}>'
    )
    return head + f"<title>{escape(label)}</title>" + "".join(body) + "</svg>"


def svg_text(
    x: float,
    y: float,
    s: str,
    *,
    size: float = 12,
    anchor: str = "middle",
    fill: str = "#222",
    weight: str = "normal",
    extra: str = "",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}" '
        f'dominant-baseline="central" fill="{fill}" font-weight="{weight}"{extra}>'
        f"{escape(s)}</text>"
    )


def heatmap(
    values: Sequence[Sequence[float]],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    precision: int = 2,
    decimal: str = ".",
    row_title: str = "query",
    col_title: str = "key",
    cell: float = 46.0,
    col_breaks: Sequence[int] = (),
) -> str:
    """A matrix as coloured cells with its values printed, rows and columns labelled.

    The colour runs from light (the smallest finite value) to dark (the largest); a cell whose
    value is not finite (−∞ of a mask) is grey and prints ``−∞``. ``row_title`` and
    ``col_title`` name the axes (for attention: rows are queries, columns are keys).
    ``col_breaks``: a thick line before each of these columns (the tiles of keys that
    FlashAttention reads one after the other).
    """
    n = len(values)
    m = len(values[0]) if n else 0
    if len(row_labels) != n or len(col_labels) != m or any(len(r) != m for r in values):
        raise ValueError(
            f"a {n}×{m} matrix needs {n} row labels and {m} column labels, "
            f"got {len(row_labels)} and {len(col_labels)}"
        )
    finite = [v for row in values for v in row if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    size = 12.0
    left = max((text_width(s, size) for s in row_labels), default=0) + 12
    top_title = 22.0 if title else 0.0
    # a column is as wide as its widest key label, so labels stay horizontal and whole
    cell = max(cell, max((text_width(s, size) for s in col_labels), default=0) + 10)
    top = top_title + 18 + size + 8
    width = left + m * cell + 8
    width = max(width, text_width(title, 14) + 8)
    height = top + n * cell + 8
    body: list[str] = []
    if title:
        body.append(svg_text(width / 2, 11, title, size=14, weight="bold"))
    body.append(
        svg_text(left + m * cell / 2, top_title + 9, f"{col_title} →", size=11, fill="#555")
    )
    if row_title:
        body.append(
            svg_text(4, top_title + 9, f"{row_title} ↓", size=11, fill="#555", anchor="start")
        )
    for j, lab in enumerate(col_labels):
        x = left + (j + 0.5) * cell
        body.append(svg_text(x, top - size / 2 - 4, lab, size=size))
    for i, row in enumerate(values):
        y = top + i * cell
        body.append(svg_text(left - 6, y + cell / 2, row_labels[i], size=size, anchor="end"))
        for j, v in enumerate(row):
            x = left + j * cell
            shown = number(v, precision, decimal)
            if math.isfinite(v):
                t = (v - lo) / (hi - lo) if hi > lo else 0.0
                fill, ink = _mix(t), ("#fff" if t > 0.55 else "#111")
            else:
                fill, ink = MASKED_FILL, "#fff"
            tip = f"{row_labels[i]} → {col_labels[j]}: {shown}"
            body.append(
                f'<g class="cell"><title>{escape(tip)}</title>'
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:g}" height="{cell:g}" '
                f'fill="{fill}" stroke="#fff" stroke-width="1"/>'
                + svg_text(x + cell / 2, y + cell / 2, shown, size=11, fill=ink)
                + "</g>"
            )
    for j in col_breaks:
        if not 0 < j < m:
            raise ValueError(f"a column break must fall between columns 1 and {m}, got {j}")
        x = left + j * cell
        body.append(
            f'<line class="break" x1="{x:.1f}" y1="{top - 4:.1f}" x2="{x:.1f}" '
            f'y2="{top + n * cell + 4:.1f}" stroke="{PALETTE[5]}" stroke-width="3"/>'
        )
    return svg_element(width, height, title or "heatmap", body)


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One entry of a tensor picture: its printed ``text``, the ``colour`` index of its group
    (a head) and a ``tone`` index (a token: lighter tones for later tokens)."""

    text: str
    colour: int
    tone: int = 0


@dataclass(frozen=True, kw_only=True)
class Block:
    """A 2-D slice of a tensor: rows of cells, with a label per row and one for the block."""

    label: str
    rows: Sequence[Sequence[Cell]]
    row_labels: Sequence[str] = ()


def tensor(blocks: Sequence[Block], *, title: str, cell: float = 30.0, tones: int = 4) -> str:
    """A tensor as coloured cells: its slices (``blocks``) side by side, each a grid of cells.

    Colours are groups (heads) from `PALETTE`, tones are lighter shades of that colour (one
    per token, out of ``tones``): the same entry keeps its colours as it moves between shapes.
    """
    size = 12.0
    label_w = max((text_width(s, size) for b in blocks for s in b.row_labels), default=0.0)
    left_pad = label_w + 8 if label_w else 0.0
    gap = 16.0
    top = 24.0 + 20.0
    x = 6.0
    body: list[str] = []
    bottom = top
    for b in blocks:
        ncols = max((len(r) for r in b.rows), default=0)
        bw = max(ncols * cell, text_width(b.label, size))
        body.append(svg_text(x + left_pad + ncols * cell / 2, top - 10, b.label, size=size))
        for i, r in enumerate(b.rows):
            y = top + i * cell
            if b.row_labels:
                body.append(
                    svg_text(
                        x + left_pad - 6, y + cell / 2, b.row_labels[i], size=size, anchor="end"
                    )
                )
            for j, c in enumerate(r):
                base = PALETTE[c.colour % len(PALETTE)]
                fill = tint(base, 0.15 + 0.6 * (c.tone % tones) / max(tones, 1))
                cx = x + left_pad + j * cell
                body.append(
                    f'<g class="cell"><title>{escape(c.text)}</title>'
                    f'<rect x="{cx:.1f}" y="{y:.1f}" width="{cell:g}" height="{cell:g}" '
                    f'fill="{fill}" stroke="#fff" stroke-width="1.5"/>'
                    + svg_text(cx + cell / 2, y + cell / 2, c.text, size=11)
                    + "</g>"
                )
        bottom = max(bottom, top + len(b.rows) * cell)
        x += left_pad + bw + gap
    width = max(x - gap + 6, text_width(title, 14) + 12)
    body.insert(0, svg_text(width / 2, 11, title, size=14, weight="bold"))
    return svg_element(width, bottom + 8, title, body)
