"""The SVG writer: valid XML, the labels and values it was given, sizes that follow the data."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from attention_ref.render import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(text: str) -> ET.Element:
    root = ET.fromstring(text)  # raises on malformed XML
    assert root.tag == f"{NS}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{NS}text")]


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{NS}g") if g.get("class") == cls]


def size(root: ET.Element) -> tuple[float, float]:
    w, h = float(root.get("width", "0")), float(root.get("height", "0"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    return w, h


A = [[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.125, 0.5, 0.375]]
TOKENS = ["Life", "is", "awesome"]


def test_heatmap_is_svg_with_every_label_and_value():
    root = parse(svg.heatmap(A, TOKENS, TOKENS, title="A, head 1", precision=3))
    shown = texts(root)
    for tok in TOKENS:
        assert shown.count(tok) == 2  # once as a query (row), once as a key (column)
    for row in A:
        for v in row:
            assert f"{v:.3f}" in shown
    assert "A, head 1" in shown
    assert "query ↓" in shown and "key →" in shown
    assert len(groups(root, "cell")) == 9
    tips = [g.find(f"{NS}title").text for g in groups(root, "cell")]  # type: ignore[union-attr]
    assert "is → Life: 0.250" in tips


def test_heatmap_colour_runs_from_light_to_dark_with_the_value():
    root = parse(svg.heatmap(A, TOKENS, TOKENS))
    fills = {
        g.find(f"{NS}text").text: g.find(f"{NS}rect").get("fill")  # type: ignore[union-attr]
        for g in groups(root, "cell")
    }
    assert fills["1.00"] == "#{:02x}{:02x}{:02x}".format(*svg.HIGH)
    assert fills["0.00"] == "#{:02x}{:02x}{:02x}".format(*svg.LOW)
    assert fills["0.50"] not in (fills["1.00"], fills["0.00"])


def test_heatmap_size_follows_the_data():
    w3, h3 = size(parse(svg.heatmap(A, TOKENS, TOKENS)))
    wide = [[*row, 0.0, 0.0] for row in A]
    cols = [*TOKENS, "x", "y"]
    w5, h5 = size(parse(svg.heatmap(wide, TOKENS, cols)))
    assert w5 > w3 and h5 == h3
    tall = [*A, [0.1, 0.2, 0.7]]
    _, h4 = size(parse(svg.heatmap(tall, [*TOKENS, "more"], TOKENS)))
    assert h4 > h3
    # a long key label widens its column instead of being cut
    wl, _ = size(parse(svg.heatmap(A, TOKENS, ["a", "b", "a-much-longer-key-label"])))
    assert wl > w3


def test_heatmap_masked_cells_and_decimal_comma():
    M = [[0.0, -math.inf], [0.0, 0.0]]
    root = parse(svg.heatmap(M, ["1", "2"], ["1", "2"], precision=0))
    cells = groups(root, "cell")
    masked = [g for g in cells if g.find(f"{NS}text").text == "\u2212∞"]  # type: ignore[union-attr]
    assert len(masked) == 1
    assert masked[0].find(f"{NS}rect").get("fill") == svg.MASKED_FILL  # type: ignore[union-attr]
    pt = texts(parse(svg.heatmap([[0.5, -0.25]], ["a"], ["b", "c"], decimal=",")))
    assert "0,50" in pt and "\u22120,25" in pt and "0.50" not in pt


def test_heatmap_rejects_labels_that_do_not_fit():
    with pytest.raises(ValueError, match="3 row labels"):
        svg.heatmap(A, TOKENS[:2], TOKENS)


def test_number():
    assert svg.number(-math.inf, 3) == "\u2212∞"
    assert svg.number(-0.0001, 2) == "0.00"
    assert svg.number(-1.5, 1, ",") == "\u22121,5"


def test_tensor_cells_keep_their_colours():
    a = svg.Cell(text="1", colour=0, tone=0)
    b = svg.Cell(text="2", colour=1, tone=0)
    c = svg.Cell(text="3", colour=0, tone=1)
    root = parse(
        svg.tensor(
            [
                svg.Block(label="token 1", rows=[[a, b]], row_labels=["x"]),
                svg.Block(label="token 2", rows=[[c], [a]]),
            ],
            title="Q (1, 2, 2)",
        )
    )
    shown = texts(root)
    assert {"Q (1, 2, 2)", "token 1", "token 2", "x", "1", "2", "3"} <= set(shown)
    cells = groups(root, "cell")
    assert len(cells) == 4
    fill = {}
    for g in cells:
        fill.setdefault(g.find(f"{NS}text").text, set()).add(g.find(f"{NS}rect").get("fill"))  # type: ignore[union-attr]
    assert len(fill["1"]) == 1  # the same cell has the same colour wherever it is drawn
    assert fill["1"] != fill["2"] and fill["1"] != fill["3"]


def test_tensor_width_follows_the_blocks():
    cell = svg.Cell(text="1", colour=0)
    one = size(parse(svg.tensor([svg.Block(label="b", rows=[[cell] * 6])], title="t")))
    two = size(parse(svg.tensor([svg.Block(label="b", rows=[[cell] * 12])], title="t")))
    assert two[0] > one[0]


def test_flow_boxes_and_arrows():
    stages = [
        [svg.Box(title="X", detail="(3, 4)")],
        [
            svg.Box(title="head 1", detail="(3, 2)", colour=0),
            svg.Box(title="head 2", detail="(3, 2)", colour=1),
        ],
        [
            svg.Box(title="A 1", detail="(3, 3)", colour=0),
            svg.Box(title="A 2", detail="(3, 3)", colour=1),
        ],
        [svg.Box(title="Concat", detail="(3, 4)")],
    ]
    root = parse(svg.flow(stages, title="flow"))
    shown = texts(root)
    for stage in stages:
        for b in stage:
            assert b.title in shown and b.detail in shown
    assert len(groups(root, "box")) == 6
    # fan out (1 -> 2), one to one (2 -> 2), join (2 -> 1)
    assert len(list(root.iter(f"{NS}line"))) == 2 + 2 + 2
    marker = root.find(f".//{NS}marker")
    assert marker is not None
    assert all(ln.get("marker-end") == f"url(#{marker.get('id')})" for ln in root.iter(f"{NS}line"))
    w1, h1 = size(root)
    w2, h2 = size(parse(svg.flow([*stages, [svg.Box(title="W_O")]], title="flow")))
    assert h2 > h1 and w2 == w1
    with pytest.raises(ValueError):
        svg.flow([], title="empty")


def test_blocks_are_drawn_to_scale():
    unit = 5.0
    rows = [
        svg.RectRow(
            label=f"h = {h}",
            note=f"{h} heads",
            rects=[svg.Rect(label=f"Q{i}", rows=8, cols=8 // h, colour=i) for i in range(h)],
        )
        for h in (1, 2, 4)
    ]
    root = parse(svg.blocks(rows, title="weights", unit=unit))
    shown = texts(root)
    assert {"h = 1", "h = 2", "h = 4", "1 heads", "Q0", "Q3", "weights"} <= set(shown)
    rects = [g.find(f"{NS}rect") for g in groups(root, "block")]
    assert len(rects) == 1 + 2 + 4
    areas: dict[str, float] = {}
    for r, spec in zip(rects, [q for row in rows for q in row.rects], strict=True):
        w, h = float(r.get("width", 0)), float(r.get("height", 0))  # type: ignore[union-attr]
        assert (w, h) == (spec.cols * unit, spec.rows * unit)
        y = r.get("y")  # type: ignore[union-attr]
        areas[y] = areas.get(y, 0.0) + w * h  # one configuration per y
    assert len(areas) == 3 and len(set(areas.values())) == 1  # equal counts, equal areas
