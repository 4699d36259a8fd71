"""Whole numbers print as the homework writes them (``1``, ``0``), in every format; a matrix
with any fraction keeps the precision for every entry."""

from __future__ import annotations

import json

import pytest

from attention_ref.render import (
    Explanation,
    Mat,
    Section,
    is_integral,
    jsonable,
    matrix_cells,
    render,
)
from attention_ref.render.latex import bmatrix
from attention_ref.render.terminal import matrix_table
from attention_ref.worked import life_is_awesome as ex
from attention_ref.worked.registry import explain_example

INF = float("inf")


@pytest.fixture(scope="module")
def life() -> Explanation:
    return explain_example("life-is-awesome")


def mats(expl: Explanation) -> dict[str, Mat]:
    """The explanation's matrices by symbol (the first of each name)."""
    out: dict[str, Mat] = {}
    for sec in expl.sections:
        for item in sec.items:
            if isinstance(item, Mat):
                out.setdefault(item.symbol, item)
    return out


def homework_inputs() -> dict[str, list[list[int]]]:
    """X and every W of the homework, as its data module holds them (ints)."""
    out = {"X": ex.LIFE_X, "W_O": ex.LIFE_W_O}
    for i in range(2):
        out[f"W_Q^{{({i + 1})}}"] = ex.LIFE_W_Q[i]
        out[f"W_K^{{({i + 1})}}"] = ex.LIFE_W_K[i]
        out[f"W_V^{{({i + 1})}}"] = ex.LIFE_W_V[i]
    return out


def test_is_integral():
    assert is_integral([[1.0, 0.0], [-3.0, 2.0]])
    assert is_integral([[0.0, -INF], [0.0, 0.0]])  # the mask M
    assert is_integral([])
    assert not is_integral([[1.0, 0.5]])
    assert not is_integral([[1.0, 0.0], [0.0, 1.0 + 1e-12]])
    assert not is_integral([[2.0**60]])  # beyond 2**53 a float says nothing about decimals


def test_cells_are_decided_per_matrix():
    assert matrix_cells([[1.0, 0.0], [-0.0, 13.0]], 3) == [["1", "0"], ["0", "13"]]
    assert matrix_cells([[0.0, -INF]], 3, latex=True) == [["0", "-\\infty"]]
    # one fraction anywhere: every entry keeps the precision, the whole numbers included
    assert matrix_cells([[1.0, 0.0], [0.67, 0.33]], 3) == [["1.000", "0.000"], ["0.670", "0.330"]]
    assert matrix_cells([[2.0**60]], 1) == [[f"{2.0**60:.1f}"]]


def test_homework_inputs_print_as_integers_in_markdown_and_latex(life):
    shown = mats(life)
    markdown = render(life, "markdown", None)
    latex = render(life, "latex", None)
    book_latex = render(life, "latex", 5)  # a precision asked for changes nothing here
    for symbol, value in homework_inputs().items():
        assert shown[symbol].value == [[float(v) for v in row] for row in value], symbol
        rows = " \\\\ ".join(" & ".join(str(v) for v in row) for row in value)
        assert f"{symbol} = \\begin{{bmatrix}} {rows} \\end{{bmatrix}}" in latex, symbol
        assert f"{symbol} = \\begin{{bmatrix}} {rows} \\end{{bmatrix}}" in book_latex, symbol
    for token, row in zip(ex.LIFE_TOKENS, ex.LIFE_X, strict=True):
        assert f"| {token} | " + " | ".join(str(v) for v in row) + " |" in markdown
    assert ".000 |" in markdown and "1.000 &" in latex  # A, H, the output: not integers


def test_homework_inputs_print_as_integers_in_the_terminal(life):
    from rich.console import Console

    shown = mats(life)
    for symbol, value in homework_inputs().items():
        console = Console(width=200, record=True)
        console.print(matrix_table(shown[symbol], life.precision))
        lines = console.export_text().splitlines()
        body = lines[next(i for i, line in enumerate(lines) if "─" in line) + 1 :]
        rows = [line.split()[1:] for line in body if line.strip()]  # after the row label
        assert rows == [[str(v) for v in row] for row in value], symbol


def test_other_matrices_keep_the_precision(life):
    from rich.console import Console

    A = mats(life)["A^{(1)}"]
    assert not is_integral(A.value)
    first = A.value[0]  # (1, 0, 0): whole numbers, in a matrix that is not
    assert [float(v) for v in first] == [1.0, 0.0, 0.0]
    console = Console(width=200, record=True)
    console.print(matrix_table(A, 3))
    text = console.export_text()
    assert "1.000" in text and "0.000" in text and "0.670" in text
    assert bmatrix(A.value, 3).startswith("\\begin{bmatrix} 1.000 & 0.000 & 0.000 \\\\ 0.670")
    assert "| Life | 1.000 | 0.000 | 0.000 |" in render(life, "markdown", None)


def test_json_keeps_numbers_as_numbers(life):
    doc = json.loads(render(life, "json", None))
    assert doc["X"] == ex.LIFE_X
    assert all(type(v) is int for row in doc["X"] for v in row)
    assert all(type(v) is int for row in doc["heads"][0]["Q"] for v in row)
    assert doc["M"][0] == [0, "-inf", "-inf"] and type(doc["M"][0][0]) is int
    assert all(type(v) is float for row in doc["heads"][0]["A"] for v in row)
    assert doc["heads"][0]["A"][0][0] == 1.0  # a whole number in a matrix that is not
    rounded = json.loads(render(life, "json", 2))
    assert rounded["heads"][0]["A"][1][0] == 0.67 and rounded["X"] == ex.LIFE_X


def test_jsonable_decides_per_array():
    assert jsonable({"a": [[1.0, 0.0]], "b": [[1.0, 0.5]], "s": 2.0}) == {
        "a": [[1, 0]],
        "b": [[1.0, 0.5]],
        "s": 2.0,  # a scalar is left as it is
    }
    out = jsonable({"a": [[1.0, 0.0]], "b": [1.0, "x"]})
    assert type(out["a"][0][0]) is int and type(out["b"][0]) is float
    assert jsonable([[2.0**60]]) == [[2.0**60]]
    assert jsonable([True, 1.0]) == [True, 1.0]  # booleans are not numbers here


def test_every_writer_of_a_made_up_document():
    expl = Explanation(
        title="T",
        source="S",
        sections=[
            Section(
                title="s",
                items=[
                    Mat(symbol="P", value=[[2.0, -1.0]]),
                    Mat(symbol="R", value=[[2.0, -1.5]]),
                ],
            )
        ],
        data={"P": [[2.0, -1.0]], "R": [[2.0, -1.5]]},
    )
    assert "| 1 | 2 | -1 |" in render(expl, "markdown", 3)
    assert "| 1 | 2.000 | -1.500 |" in render(expl, "markdown", 3)
    latex = render(expl, "latex", 1)
    assert "P = \\begin{bmatrix} 2 & -1 \\end{bmatrix}" in latex
    assert "R = \\begin{bmatrix} 2.0 & -1.5 \\end{bmatrix}" in latex
    assert json.loads(render(expl, "json", None)) == {"P": [[2, -1]], "R": [[2.0, -1.5]]}
