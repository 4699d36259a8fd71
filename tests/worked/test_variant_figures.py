"""The figures of the variant pages (attention_ref.render.svg: groups, arrows, a heatmap's tile
breaks) draw what the reference computes, and refuse what they cannot draw."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
import torch

from attention_ref.reference import rope
from attention_ref.reference.gqa import kv_group
from attention_ref.render.svg import Box, arrows, groups, heatmap

SVG = "{http://www.w3.org/2000/svg}"


def _lines(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [e for e in root.iter(f"{SVG}line") if e.get("class") == cls]


@pytest.mark.parametrize(("h", "g"), [(4, 4), (4, 2), (4, 1), (6, 3)])
def test_groups_draw_one_link_per_query_head_to_its_kv_head(h, g):
    top = [Box(title=f"Q{i + 1}") for i in range(h)]
    bottom = [Box(title=f"K/V {j + 1}", colour=j) for j in range(g)]
    svg = groups(top, bottom, [(i, kv_group(i, h, g)) for i in range(h)], title="t")
    links = _lines(svg, "link")
    assert len(links) == h
    # the links of K/V head j all end at the same point, and different heads at different ones
    ends = {(round(float(e.get("x2")), 1)) for e in links}
    assert len(ends) == g


def test_groups_refuse_a_link_to_no_box():
    with pytest.raises(ValueError, match="joins no boxes"):
        groups([Box(title="Q1")], [Box(title="K/V 1")], [(0, 1)], title="t")


def test_arrows_turn_by_ropes_angle():
    """The arrows of pair 0 at positions 0..3 point at angles 0, 1, 2, 3 rad (y up)."""
    x = torch.tensor([[1.0, 0.0]] * 4, dtype=torch.float64)
    turned = rope.apply_rope(x)
    svg = arrows(
        [(float(a), float(b)) for a, b in turned],
        [f"m = {m}" for m in range(4)],
        title="pair 0",
        decimal=",",
    )
    root = ET.fromstring(svg)
    lines = [g.find(f"{SVG}line") for g in root.iter(f"{SVG}g") if g.get("class") == "arrow"]
    for m, line in enumerate(lines):
        dx = float(line.get("x2")) - float(line.get("x1"))
        dy = float(line.get("y1")) - float(line.get("y2"))
        assert math.isclose(math.atan2(dy, dx) % (2 * math.pi), m % (2 * math.pi), abs_tol=0.01)
    tips = [t.text for t in root.iter(f"{SVG}title")]
    assert any("0,540" in (t or "") for t in tips)  # cos 1, with the decimal comma asked for
    with pytest.raises(ValueError, match="labels"):
        arrows([(1.0, 0.0)], [], title="t")


def test_heatmap_tile_breaks_sit_between_columns():
    svg = heatmap([[1.0, 2.0, 3.0]], ["q"], ["a", "b", "c"], col_breaks=[2])
    assert len(_lines(svg, "break")) == 1
    assert _lines(heatmap([[1.0, 2.0]], ["q"], ["a", "b"]), "break") == []  # none asked
    with pytest.raises(ValueError, match="column break"):
        heatmap([[1.0, 2.0]], ["q"], ["a", "b"], col_breaks=[2])


def test_crowded_arrow_labels_are_left_out_but_every_arrow_keeps_its_tooltip():
    close = [(math.cos(0.1 * m), math.sin(0.1 * m)) for m in range(6)]
    root = ET.fromstring(arrows(close, [f"m = {m}" for m in range(6)], title="pair 1"))
    shown = [t.text for t in root.iter(f"{SVG}text") if (t.text or "").startswith("m = ")]
    tips = [t.text for t in root.iter(f"{SVG}title") if (t.text or "").startswith("m = ")]
    assert len(tips) == 6 and 1 < len(shown) < 6 and shown[0] == "m = 0"
    apart = [(math.cos(m), math.sin(m)) for m in range(6)]  # one radian apart: room for all
    root = ET.fromstring(arrows(apart, [f"m = {m}" for m in range(6)], title="pair 0"))
    assert len([t for t in root.iter(f"{SVG}text") if (t.text or "").startswith("m = ")]) == 6
