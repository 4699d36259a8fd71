"""The heat maps MLflow shows: every text readable at the UI's size, tick labels that do not
overlap; the same checks fail on the figure as it was drawn before (10.6 in wide, 7-pt ticks)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from attention_ref.experiments import plots
from attention_ref.experiments.runs import HEATMAP_LINE


def causal_uniform(T: int) -> list[list[float]]:
    return [[1 / (i + 1) if j <= i else 0.0 for j in range(T)] for i in range(T)]


def texts(fig: Figure) -> list:
    """Every visible text of the figure: tick labels, axis labels, title, colour bar."""
    fig.canvas.draw()
    out = []
    for ax in fig.axes:
        out += [t for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
        out += [t for t in (ax.xaxis.label, ax.yaxis.label, ax.title) if t.get_text()]
    return out


def smallest_ui_px(fig: Figure) -> float:
    inches = fig.get_size_inches()[0]
    return min(plots.ui_pixels(t.get_fontsize(), inches) for t in texts(fig))


overlaps = plots.tick_overlaps


@pytest.mark.parametrize("T", [3, 12, len(HEATMAP_LINE), 128])
def test_every_text_is_readable_at_the_ui_size_and_ticks_do_not_overlap(T):
    line = (HEATMAP_LINE * 3)[:T]
    fig = plots.attention_heatmap(causal_uniform(T), line, title="layer 1, head 1")
    try:
        assert smallest_ui_px(fig) >= plots.READABLE_PX
        ax = fig.axes[0]
        assert overlaps([t for t in ax.get_xticklabels() if t.get_text()]) == 0
        assert overlaps([t for t in ax.get_yticklabels() if t.get_text()]) == 0
        shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        if len(HEATMAP_LINE) >= T:
            assert len(shown) == T  # the recorded line: every character labelled
        else:
            assert 1 < len(shown) < T
    finally:
        plt.close(fig)


def test_the_checks_fail_on_the_old_figure():
    """The figure as it was: 0.16 T + 1.5 inches (10.6 for the recorded line), 7-pt ticks."""
    T = len(HEATMAP_LINE)
    size = 0.16 * T + 1.5
    fig, ax = plt.subplots(figsize=(size, size), dpi=110)
    ax.imshow(causal_uniform(T))
    labels = [plots.char_label(c) for c in HEATMAP_LINE]
    ax.set_xticks(range(T), labels, fontsize=7)
    ax.set_yticks(range(T), labels, fontsize=7)
    ax.set_xlabel("key")
    try:
        assert smallest_ui_px(fig) < plots.READABLE_PX
    finally:
        plt.close(fig)


def test_crowded_ticks_are_seen_as_overlapping():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(40), ["W"] * 40, fontsize=12)
    try:
        fig.canvas.draw()
        assert overlaps(ax.get_xticklabels()) > 0
    finally:
        plt.close(fig)
