"""Figures of the experiments (matplotlib, headless ``Agg`` backend): loss curves, attention maps.

Pure functions from numbers to ``Figure``; `attention_ref.experiments.runs` and
`attention_ref.experiments.ablation` log them to MLflow and
the book reuses them. Nothing here trains or reads MLflow.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.text import Text

Curve = Sequence[tuple[int, float]]  # (step, value)

#: one colour per attention mode, the same in every figure
COLORS = {"multihead": "tab:blue", "none": "tab:red", "uniform": "tab:green"}


def char_label(c: str) -> str:
    """A visible tick label for a character: space → ``·``, newline → ``\\n``."""
    return {" ": "·", "\n": "\\n", "\t": "\\t"}.get(c, c)


def smooth(values: Sequence[float], window: int) -> list[float]:
    """Centred moving average of noisy batch losses: point t is the mean of the values from
    t - k to t + k, ``k = window // 2``, the window narrowed symmetrically near both ends.

    Centred, so it is plotted at the step it describes: a trailing average (or an exponential
    one) lags, and on a falling curve it draws the training loss above the validation loss.
    A straight line is left unchanged.
    """
    k = max(0, window // 2)
    prefix = [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
    n = len(values)
    out = []
    for t in range(n):
        r = min(k, t, n - 1 - t)  # symmetric: as many values after t as before
        out.append((prefix[t + r + 1] - prefix[t - r]) / (2 * r + 1))
    return out


def loss_curves(
    curves: Mapping[str, Mapping[str, Curve]],
    *,
    title: str = "Loss (cross-entropy, nats per character)",
    floor: float | None = None,
    floor_label: str = "bigram baseline",
    smooth_window: int = 50,
) -> Figure:
    """Training (smoothed batch loss, thin) and validation (fixed batches, dots) curves.

    ``curves`` maps a label (``"multihead"``, ``"none"``, …) to ``{"train_loss": [(step, v)],
    "val_loss": [(step, v)]}``; several labels overlay (the ablation). ``floor`` draws a
    horizontal line (the bigram baseline of Q03: `attention_ref.lm.data.bigram_val_loss`).
    """
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    for i, (label, series) in enumerate(curves.items()):
        color = COLORS.get(label, f"C{i}")
        train = sorted(series.get("train_loss", []))
        if train:
            ax.plot(
                [s for s, _ in train],
                smooth([v for _, v in train], smooth_window),
                color=color,
                alpha=0.45,
                linewidth=1,
                label=f"{label}: train (batch, smoothed)",
            )
        val = sorted(series.get("val_loss", []))
        if val:
            ax.plot(
                [s for s, _ in val],
                [v for _, v in val],
                color=color,
                marker="o",
                markersize=3.5,
                linewidth=1.8,
                label=f"{label}: validation",
            )
    if floor is not None:
        ax.axhline(
            floor, color="black", linestyle="--", linewidth=1, label=f"{floor_label} {floor:.3f}"
        )
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


#: The width in pixels at which MLflow's artifact view shows an image (its preview pane on a
#: laptop screen): every text of a heat map is sized to be read there.
UI_WIDTH_PX = 800
#: The smallest text, in pixels at `UI_WIDTH_PX`, that a heat map writes.
READABLE_PX = 9.0
#: The heat map's figure: inches (square) and dots per inch (1050 px wide).
HEATMAP_INCHES, HEATMAP_DPI = 7.0, 150


def ui_pixels(points: float, fig_inches: float) -> float:
    """Height in pixels of a ``points``-pt text once the figure (``fig_inches`` wide) is shown
    `UI_WIDTH_PX` wide: ``points / 72 · UI_WIDTH_PX / fig_inches``."""
    return points / 72 * UI_WIDTH_PX / fig_inches


def readable_points(fig_inches: float) -> float:
    """The smallest font size (pt) that `ui_pixels` shows at `READABLE_PX` or more."""
    return READABLE_PX * 72 * fig_inches / UI_WIDTH_PX


def attention_heatmap(weights: Sequence[Sequence[float]], chars: str, *, title: str) -> Figure:
    """One head's ``A`` (T × T): row i = the query at character i, column j = the key it reads.

    The causal mask shows as the upper triangle of zeros (drawn in the colour of 0, not left
    empty); each row sums to 1. Every text is readable at MLflow's size (`READABLE_PX` at
    `UI_WIDTH_PX`); a character's tick label is as large as its cell allows, never smaller than
    readable, and when readable labels would overlap, every k-th character is labelled (the
    smallest k whose labels, as drawn, do not overlap).
    """
    T = len(chars)
    size = HEATMAP_INCHES
    fig, ax = plt.subplots(figsize=(size, size), dpi=HEATMAP_DPI)
    im = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0)
    text = max(readable_points(size), 11.0)
    ax.set_xlabel("key position j (the character looked at)", fontsize=text)
    ax.set_ylabel("query position i (the character predicting the next)", fontsize=text)
    ax.set_title(title, fontsize=text + 1)
    bar = fig.colorbar(im, ax=ax, location="bottom", fraction=0.04, pad=0.08)
    bar.ax.tick_params(labelsize=text)
    labels = [char_label(c) for c in chars]
    cell = 0.8 * size * 72 / max(T, 1)  # pt per character: the map is ~4/5 of the width
    tick = min(11.0, max(readable_points(size), 0.85 * cell))
    for every in range(1, T + 1):
        shown = list(range(0, T, every))
        ax.set_xticks(shown, [labels[i] for i in shown], fontsize=tick, family="monospace")
        ax.set_yticks(shown, [labels[i] for i in shown], fontsize=tick, family="monospace")
        fig.tight_layout()
        fig.canvas.draw()
        if not (tick_overlaps(ax.get_xticklabels()) or tick_overlaps(ax.get_yticklabels())):
            break
    return fig


def tick_overlaps(labels: Sequence[Text]) -> int:
    """How many pairs of (non-empty) tick labels, as drawn, have intersecting boxes."""
    boxes = [t.get_window_extent() for t in labels if t.get_text()]
    return sum(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as PNG and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
