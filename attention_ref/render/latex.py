r"""LaTeX: a ``\section*`` per step, every matrix a ``bmatrix`` as seed 000 writes it."""

from __future__ import annotations

from attention_ref.render.document import Explanation, Mat, Matrix
from attention_ref.render.numbers import fmt_number, shape_text


def bmatrix(value: Matrix, precision: int) -> str:
    r"""``\begin{bmatrix} a & b \\ c & d \end{bmatrix}``, as seed 000 writes its matrices."""
    rows = [" & ".join(fmt_number(v, precision, latex=True) for v in row) for row in value]
    return "\\begin{bmatrix} " + " \\\\ ".join(rows) + " \\end{bmatrix}"


def equation(item: Mat, precision: int) -> str:
    r"""``symbol = formula = \begin{bmatrix}…\end{bmatrix}`` (no ``= formula`` when it has none)."""
    lhs = item.symbol + (f" = {item.formula}" if item.formula else "")
    return lhs + " = " + bmatrix(item.value, precision)


def latex_text(text: str) -> str:
    r"""Prose escaped for LaTeX (``_`` → ``\_``, ``√`` → ``$\sqrt{}$``, …)."""
    for a, b in (("\\", "\\textbackslash{}"), ("_", "\\_"), ("%", "\\%"), ("#", "\\#")):
        text = text.replace(a, b)
    return text.replace("&", "\\&").replace("√", "$\\sqrt{}$")


def to_latex(expl: Explanation, precision: int = 3) -> str:
    r"""A LaTeX fragment: ``\section*`` per step, display math with ``bmatrix``."""
    out = [f"\\section*{{{latex_text(expl.title)}}}", f"Source: {latex_text(expl.source)}", ""]
    for sec in expl.sections:
        out += [f"\\subsection*{{{latex_text(sec.title)}}}", ""]
        if sec.text:
            out += [latex_text(sec.text), ""]
        for item in sec.items:
            if isinstance(item, Mat):
                out += ["$$" + equation(item, precision) + "$$", ""]
                continue
            out += [
                f"\\texttt{{{latex_text(item.name)}}}: {latex_text(item.operation)}: "
                f"${shape_text(item.before)} \\to {shape_text(item.after)}$",
                "",
            ]
    return "\n".join(out)
