"""Explanations → rich tables, markdown, LaTeX (``bmatrix``, like seed 000) or JSON.

An `Explanation` is plain data (titles, prose, labelled matrices as lists of floats,
shape transforms) so this module needs neither torch nor the reference: it only formats.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Format = Literal["rich", "markdown", "latex", "json"]  # the CLI's; the book uses to_book
FORMATS: tuple[str, ...] = ("rich", "markdown", "latex", "json")


@dataclass(frozen=True)
class Mat:
    """A labelled matrix (a vector is one row): ``name = formula = value``."""

    name: str
    latex: str
    value: list[list[float]]
    formula: str = ""
    formula_latex: str = ""
    rows: Sequence[str] | None = None
    cols: Sequence[str] | None = None


@dataclass(frozen=True)
class Shape:
    """One reshape/transpose/matmul step: ``name: before -> after`` with the operation."""

    name: str
    operation: str
    before: tuple[int, ...]
    after: tuple[int, ...]


@dataclass(frozen=True)
class Section:
    """A titled step: prose first, then matrices and shape transforms in order."""

    title: str
    text: str = ""
    items: list[Mat | Shape] = field(default_factory=list)


@dataclass(frozen=True)
class Explanation:
    """A whole worked example; ``data`` is the JSON payload of ``--format json``."""

    title: str
    source: str
    sections: list[Section]
    data: dict[str, Any]
    precision: int = 3  # decimals shown unless --precision says otherwise


# --- numbers --------------------------------------------------------------------------------


def fmt_number(v: float, precision: int, *, latex: bool = False) -> str:
    """A number with ``precision`` decimals; ``-inf`` as ``-∞`` (``-\\infty`` in LaTeX)."""
    if math.isinf(v):
        sign = "-" if v < 0 else ""
        return f"{sign}\\infty" if latex else f"{sign}∞"
    text = f"{v:.{precision}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]  # no "-0.000"
    return text


def jsonable(obj: Any, precision: int | None = None) -> Any:
    """Floats (optionally rounded) with infinities as the strings ``"-inf"``/``"inf"``."""
    if isinstance(obj, float):
        if math.isinf(obj):
            return "-inf" if obj < 0 else "inf"
        return round(obj, precision) if precision is not None else obj
    if isinstance(obj, dict):
        return {k: jsonable(v, precision) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v, precision) for v in obj]
    return obj


def _shape(t: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in t) + ")"


def _shape_bullet(item: Shape) -> str:
    """A markdown bullet: ``name``: operation: ``(before) -> (after)``."""
    return f"- `{item.name}`: {item.operation}: `{_shape(item.before)} -> {_shape(item.after)}`"


# --- markdown -------------------------------------------------------------------------------


def _markdown_sections(
    expl: Explanation, heading: str, matrix: Callable[[Mat], list[str]]
) -> list[str]:
    """The steps as markdown lines: title, prose, then each item (shapes as bullets)."""
    out: list[str] = []
    for sec in expl.sections:
        out += [f"{heading} {sec.title}", ""]
        if sec.text:
            out += [sec.text, ""]
        for item in sec.items:
            out += [_shape_bullet(item), ""] if isinstance(item, Shape) else matrix(item)
    return out


def to_markdown(expl: Explanation, precision: int = 3) -> str:
    """GitHub-flavoured markdown: one table per matrix, row labels in the first column."""

    def table(item: Mat) -> list[str]:
        head = f"**{item.name}**" + (f" = `{item.formula}`" if item.formula else "")
        ncols = len(item.value[0]) if item.value else 0
        cols = list(item.cols) if item.cols else [str(j + 1) for j in range(ncols)]
        out = [head, "", "| | " + " | ".join(cols) + " |", "|---" * (ncols + 1) + "|"]
        for i, row in enumerate(item.value):
            label = item.rows[i] if item.rows else str(i + 1)
            cells = " | ".join(fmt_number(v, precision) for v in row)
            out.append(f"| {label} | {cells} |")
        return [*out, ""]

    head = [f"# {expl.title}", "", f"*Source: {expl.source}*", ""]
    return "\n".join(head + _markdown_sections(expl, "##", table))


# --- LaTeX ----------------------------------------------------------------------------------


def bmatrix(value: list[list[float]], precision: int) -> str:
    r"""``\begin{bmatrix} a & b \\ c & d \end{bmatrix}``, as seed 000 writes its matrices."""
    rows = [" & ".join(fmt_number(v, precision, latex=True) for v in row) for row in value]
    return "\\begin{bmatrix} " + " \\\\ ".join(rows) + " \\end{bmatrix}"


def _latex_text(text: str) -> str:
    for a, b in (("\\", "\\textbackslash{}"), ("_", "\\_"), ("%", "\\%"), ("#", "\\#")):
        text = text.replace(a, b)
    return text.replace("&", "\\&").replace("√", "$\\sqrt{}$")


def to_latex(expl: Explanation, precision: int = 3) -> str:
    """A LaTeX fragment: ``\\section*`` per step, display math with ``bmatrix``."""
    out = [f"\\section*{{{_latex_text(expl.title)}}}", f"Source: {_latex_text(expl.source)}", ""]
    for sec in expl.sections:
        out += [f"\\subsection*{{{_latex_text(sec.title)}}}", ""]
        if sec.text:
            out += [_latex_text(sec.text), ""]
        for item in sec.items:
            if isinstance(item, Shape):
                op = _latex_text(item.operation)
                out += [
                    f"\\texttt{{{_latex_text(item.name)}}}: {op}: "
                    f"${_shape(item.before)} \\to {_shape(item.after)}$",
                    "",
                ]
                continue
            lhs = item.latex + (f" = {item.formula_latex}" if item.formula_latex else "")
            out += ["$$" + lhs + " = " + bmatrix(item.value, precision) + "$$", ""]
    return "\n".join(out)


# --- the book (mkdocs: markdown prose, KaTeX display math) ----------------------------------


def to_book(expl: Explanation, precision: int = 3, *, heading: int = 2) -> str:
    """Markdown for the mkdocs book: prose as markdown, every matrix as display math.

    ``heading`` is the level of each step's title (the page has its own ``#`` title). Math is
    written ``$$ … $$`` for ``pymdownx.arithmatex`` and typeset by KaTeX in the browser.
    """

    def display(item: Mat) -> list[str]:
        lhs = item.latex + (f" = {item.formula_latex}" if item.formula_latex else "")
        return ["$$", lhs + " = " + bmatrix(item.value, precision), "$$", ""]

    head = [f"*Source: {expl.source}*", ""]
    return "\n".join(head + _markdown_sections(expl, "#" * heading, display))


# --- JSON -----------------------------------------------------------------------------------


def to_json(expl: Explanation, precision: int | None = None) -> str:
    """The example's data as JSON; masked scores are the string ``"-inf"``."""
    return json.dumps(jsonable(expl.data, precision), ensure_ascii=False, indent=2)


# --- rich -----------------------------------------------------------------------------------


def to_rich(expl: Explanation, precision: int = 3) -> list[Any]:
    """A list of rich renderables (rules, text, tables) to print one after the other."""
    from rich import box
    from rich.columns import Columns
    from rich.markup import escape
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = [Rule(f"[bold]{escape(expl.title)}"), Text(f"Source: {expl.source}", "dim")]
    for sec in expl.sections:
        parts.append(Rule(escape(sec.title), style="cyan", align="left"))
        if sec.text:
            parts.append(Text(sec.text))
        pending: list[Any] = []
        for item in sec.items:
            if isinstance(item, Shape):
                if pending:
                    parts.append(Columns(pending, padding=(0, 3)))
                    pending = []
                parts.append(
                    Text.assemble(
                        (f"{item.name}", "bold"),
                        f": {item.operation}: ",
                        (f"{_shape(item.before)} → {_shape(item.after)}", "green"),
                    )
                )
                continue
            title = item.name + (f" = {item.formula}" if item.formula else "")
            table = Table(
                title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD
            )
            ncols = len(item.value[0]) if item.value else 0
            table.add_column("", style="dim")
            for j in range(ncols):
                table.add_column(item.cols[j] if item.cols else str(j + 1), justify="right")
            for i, values in enumerate(item.value):
                label = item.rows[i] if item.rows else str(i + 1)
                table.add_row(label, *(fmt_number(v, precision) for v in values))
            pending.append(table)
        if pending:
            parts.append(Columns(pending, padding=(0, 3)))
    return parts


def render(expl: Explanation, fmt: str, precision: int | None) -> str | list[Any]:
    """Dispatch on ``fmt``: a string for markdown/latex/json, renderables for rich."""
    if fmt == "json":
        return to_json(expl, precision)
    p = expl.precision if precision is None else precision
    if fmt == "markdown":
        return to_markdown(expl, p)
    if fmt == "latex":
        return to_latex(expl, p)
    if fmt == "rich":
        return to_rich(expl, p)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
