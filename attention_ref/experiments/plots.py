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
    """Bias-corrected exponential moving average, ``β = 1 - 1/window``: noisy batch losses.

    ``m_t = β m_{t-1} + (1-β) v_t``, shown as ``m_t / (1 - β^{t+1})`` so the start is not
    pulled towards 0 (no kink where a plain moving average's window fills up).
    """
    beta = 1.0 - 1.0 / max(1, window)
    out, m = [], 0.0
    for t, v in enumerate(values):
        m = beta * m + (1.0 - beta) * v
        out.append(m / (1.0 - beta ** (t + 1)) if beta > 0 else v)
    return out


def loss_curves(
    curves: Mapping[str, Mapping[str, Curve]],
    *,
    title: str = "Loss (cross-entropy, nats per character)",
    floor: float | None = None,
    floor_label: str = "bigram floor",
    smooth_window: int = 50,
) -> Figure:
    """Training (smoothed batch loss, thin) and validation (fixed batches, dots) curves.

    ``curves`` maps a label (``"multihead"``, ``"none"``, …) to ``{"train_loss": [(step, v)],
    "val_loss": [(step, v)]}``; several labels overlay (the ablation). ``floor`` draws a
    horizontal line (the bigram floor of Q03).
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

    The causal mask shows as the empty upper triangle; each row sums to 1.
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
