"""Figures of the experiments (matplotlib, headless ``Agg`` backend): loss curves, attention maps.

Pure functions from numbers to ``Figure``; `attention_ref.experiments.runs` and
`attention_ref.experiments.ablation` log them to MLflow and
the book reuses them. Nothing here trains or reads MLflow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

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
                color=color, alpha=0.45, linewidth=1, label=f"{label}: train (batch, smoothed)",
            )  # fmt: skip
        val = sorted(series.get("val_loss", []))
        if val:
            ax.plot(
                [s for s, _ in val], [v for _, v in val],
                color=color, marker="o", markersize=3.5, linewidth=1.8,
                label=f"{label}: validation",
            )  # fmt: skip
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


def attention_heatmap(weights: Sequence[Sequence[float]], chars: str, *, title: str) -> Figure:
    """One head's ``A`` (T × T): row i = the query at character i, column j = the key it reads.

    The causal mask shows as the upper triangle of zeros (drawn in the colour of 0, not left
    empty); each row sums to 1.
    """
    T = len(chars)
    size = max(4.0, min(12.0, 0.16 * T + 1.5))
    fig, ax = plt.subplots(figsize=(size, size), dpi=110)
    im = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0)
    labels = [char_label(c) for c in chars]
    ax.set_xticks(range(T), labels, fontsize=7, family="monospace")
    ax.set_yticks(range(T), labels, fontsize=7, family="monospace")
    ax.set_xlabel("key position j (the character looked at)")
    ax.set_ylabel("query position i (the character predicting the next)")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    return fig


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as PNG and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
