"""The writers: the same document in every format, numbers formatted one way."""

from __future__ import annotations

import dataclasses
import json

import pytest

from attention_ref.render import (
    FORMATS,
    TABLE_FORMATS,
    Explanation,
    Mat,
    Section,
    Shape,
    Table,
    fmt_number,
    jsonable,
    render,
    render_table,
    to_book,
)

EXPL = Explanation(
    title="T",
    source="S",
    sections=[
        Section(
            title="Step",
            text="Prose_with % and √2.",
            items=[
                Mat(
                    symbol="\\tilde S^{(1)}",
                    value=[[1.0, float("-inf")], [0.5, -0.0001]],
                    formula="S^{(1)} + M",
                    rows=["a", "b"],
                    cols=["a", "b"],
                ),
                Shape(
                    name="Q", operation="transpose(1, 2)", before=(1, 4, 3, 2), after=(1, 3, 4, 2)
                ),
            ],
        )
    ],
    data={"M": [[0.0, float("-inf")]], "x": 0.123456},
)

TABLE = Table(
    title="Counts (d_model = 4)",
    context="d_model = 4",
    columns=("h", "total"),
    rows=[(1, 1234), (2, 1234)],
    claim="counts equal for every h",
    data={"rows": [{"h": 1, "total": 1234}], "equal": True},
    plain_columns=frozenset({"h"}),
)


def test_numbers():
    assert fmt_number(-0.0001, 3) == "0.000"
    assert fmt_number(float("-inf"), 3) == "-∞"
    assert fmt_number(float("-inf"), 3, latex=True) == "-\\infty"
    assert fmt_number(2 / 3, 2) == "0.67"
    assert jsonable({"a": [float("-inf"), float("inf"), 0.123456]}, 2) == {
        "a": ["-inf", "inf", 0.12]
    }
    assert jsonable(["s", 1, True, None]) == ["s", 1, True, None]


def test_markdown_prints_the_unicode_labels():
    out = render(EXPL, "markdown", None)
    assert "**S̃^(1)** = `S^(1) + M`" in out
    assert "| a | 1.000 | -∞ |" in out and "| b | 0.500 | 0.000 |" in out
    assert "- `Q`: transpose(1, 2): `(1, 4, 3, 2) -> (1, 3, 4, 2)`" in out


def test_latex_and_book_print_the_latex_labels():
    out = render(EXPL, "latex", 2)
    assert "\\[ \\tilde S^{(1)} = S^{(1)} + M = \\begin{bmatrix} 1.00 & -\\infty" in out
    assert "\\resizebox" not in out  # only when asked: fit_width
    fitted = render(EXPL, "latex", 2, fit_width=True)
    assert "$\\displaystyle \\tilde S^{(1)} = S^{(1)} + M = \\begin{bmatrix} 1.00" in fitted
    assert "\\texttt{Prose\\_with} \\% and $\\sqrt{2}$." in out
    book = to_book(EXPL, 3, heading=3, labelled=True)
    assert "\\begin{array}" not in to_book(EXPL, 3, heading=3)  # labels only where asked
    # the book labels each row at its left where asked, as the markdown's first column does
    labels = "\\begin{array}{r} \\text{a} \\\\ \\text{b} \\end{array}"
    assert (
        "### Step" in book
        and f"\\tilde S^{{(1)}} = S^{{(1)}} + M = {labels}\\begin{{bmatrix}}" in book
    )


def test_json_is_the_data():
    assert json.loads(render(EXPL, "json", None)) == {"M": [[0.0, "-inf"]], "x": 0.123456}
    assert json.loads(render(EXPL, "json", 2))["x"] == 0.12


def test_rich_lays_out_every_item():
    from rich.console import Console

    console = Console(width=120, record=True)
    for part in render(EXPL, "rich", None):
        console.print(part)
    text = console.export_text()
    assert "S̃^(1) = S^(1) + M" in text and "-∞" in text
    assert "(1, 4, 3, 2) → (1, 3, 4, 2)" in text


def test_table_in_each_format():
    assert render_table(TABLE, "markdown") == (
        "| h | total |\n|---|---|\n| 1 | 1234 |\n| 2 | 1234 |\n\n"
        "d_model = 4; counts equal for every h."
    )
    assert json.loads(render_table(TABLE, "json")) == TABLE.data
    from rich.console import Console

    console = Console(width=120, record=True)
    for part in render_table(TABLE, "rich"):
        console.print(part)
    text = console.export_text()
    assert "Counts" in text and "(d_model = 4)" in text and "1,234" in text
    assert "Counts equal for every h." in text


@pytest.mark.parametrize("fmt", ["pdf", "html"])
def test_unknown_formats_are_errors(fmt):
    with pytest.raises(ValueError, match="unknown format"):
        render(EXPL, fmt, None)
    with pytest.raises(ValueError, match="unknown format"):
        render_table(TABLE, fmt)
    with pytest.raises(ValueError, match="unknown format"):
        render_table(TABLE, "latex")
    assert set(TABLE_FORMATS) < set(FORMATS)


def test_the_book_shows_angle_brackets_and_the_terminal_keeps_them():
    """``<eos>`` in prose is an entity in the book (else the browser drops it as a tag), raw in
    ``--format markdown``, and untouched inside code spans."""
    from attention_ref.render import Explanation, Section, to_book, to_markdown
    from attention_ref.render.markdown import escape_html

    assert escape_html("the <eos> token, `x < y`") == "the &lt;eos&gt; token, `x < y`"
    expl = Explanation(
        title="t",
        source="s",
        sections=[Section(title="Step <eos>", text="reads <eos>")],
        data={},
    )
    book, md = to_book(expl), to_markdown(expl)
    assert "reads &lt;eos&gt;" in book and "<eos>" not in book
    assert "reads <eos>" in md


def test_a_portuguese_document_has_decimal_commas_in_every_writer_but_json():
    pt = dataclasses.replace(EXPL, lang="pt")
    assert pt.decimal == "," and EXPL.decimal == "."
    md = render(pt, "markdown", None)
    assert "*Fonte: S*" in md and "| b | 0,500 | 0,000 |" in md and "0.500" not in md
    tex = render(pt, "latex", 2)
    assert "Fonte: S" in tex and "\\begin{bmatrix} 1{,}00 & -\\infty" in tex
    assert "0{,}50" in to_book(pt, 2) and "0.50" not in to_book(pt, 2)
    from rich.console import Console

    console = Console(width=120, record=True)
    for part in render(pt, "rich", None):
        console.print(part)
    text = console.export_text()
    assert "Fonte: S" in text and "0,500" in text and "0.500" not in text
    assert json.loads(render(pt, "json", None)) == json.loads(render(EXPL, "json", None))
    assert fmt_number(-2 / 3, 2, decimal=",") == "-0,67"
    assert fmt_number(2 / 3, 2, latex=True, decimal=",") == "0{,}67"
    assert fmt_number(float("-inf"), 2, decimal=",") == "-∞"
    with pytest.raises(ValueError, match="lang must be one of"):
        dataclasses.replace(EXPL, lang="fr")


def test_the_one_markdown_table_writer_aligns_and_refuses_a_short_row():
    """`markdown_table` is every Markdown table of the package (the book's `table`, the module
    map, the three sweep reports, `table_to_markdown`): numbers right-aligned after ``left``
    columns, and a row of the wrong width refused rather than drawn off its columns."""
    from attention_ref.render import markdown_table

    assert markdown_table(["a", "b", "c"], [[1, 2, 3]]) == [
        "| a | b | c |",
        "|---|---|---|",
        "| 1 | 2 | 3 |",
    ]
    assert markdown_table(["arm", "what", "n"], [], left=2)[1] == "|---|---|---:|"
    with pytest.raises(ValueError, match="a row of 2 cells under 3 columns"):
        markdown_table(["a", "b", "c"], [[1, 2]])
