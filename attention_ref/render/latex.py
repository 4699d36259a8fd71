r"""LaTeX for pdflatex: a ``\section*`` per step, every matrix a ``bmatrix`` as seed 000 writes it.

The fragment (`to_latex`) is ASCII except for Cyrillic letters (U+0400–U+045F, the tokens of
seed 002), which `PREAMBLE` declares with ``\usepackage[T2A]{fontenc}``; it needs amsmath
(``bmatrix``, ``\text``, ``\operatorname``) and amssymb (``\mathbb{R}``), nothing else, and
graphicx with ``fit_width`` (every matrix in a ``\resizebox``, asked for: without it a
teacher pastes ``\[ … \]`` as it is). ``standalone=True`` wraps it in `PREAMBLE` and
``\begin{document}…\end{document}``. Prose arrives as Unicode text (``Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾``,
``√d_k``, ``−∞``) and `latex_text` writes its formulas as math (``$Q^{(i)} = X W_Q^{(i)}$``,
``$d_{\text{model}} = 4$``, ``$\sqrt{d_k}$``, ``$-\infty$``) and its names of code as
``\texttt``; a character it has no LaTeX for is a ``ValueError``, never a document pdflatex
rejects.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from attention_ref.render.document import Explanation, Mat, Matrix
from attention_ref.render.latex_math import (
    ACCENTS,
    COMBINING_TILDE,
    ESCAPES,
    RADICAND,
    SUBSCRIPTS,
    SUPERSCRIPTS,
    TEXT_SYMBOLS,
    math_name,
    merge_math,
    prose_pieces,
)
from attention_ref.render.numbers import matrix_cells, shape_text

#: The standalone document's preamble: what the fragment needs, nothing more. Debian ships
#: it in texlive-latex-base (article, amsmath, inputenc; amssymb comes with its dependency
#: texlive-base) and texlive-lang-cyrillic (T2A).
PREAMBLE: Final = r"""\documentclass{article}
\usepackage[T2A]{fontenc} % T2A: Cyrillic letters, and every ASCII character, in text
\usepackage[utf8]{inputenc}
\usepackage{amsmath} % bmatrix, \text, \operatorname
\usepackage{amssymb} % \mathbb{R}
\usepackage{graphicx} % \resizebox (--fit-width): a matrix wider than the line is shrunk to fit
\sloppy % a long name (torch.manual_seed(789)) moves to the next line, never past the margin
"""

#: Letters the preamble declares (with T2A and utf8): the Cyrillic block U+0400–U+045F.
CYRILLIC: Final = frozenset(chr(c) for c in range(0x0400, 0x0460))

#: bmatrix holds this many columns unless the counter MaxMatrixCols says more (amsmath).
MAX_MATRIX_COLS: Final = 10


def _unsupported(char: str, text: str) -> ValueError:
    return ValueError(
        f"--format latex cannot typeset {char!r} (U+{ord(char):04X}) in {text!r}; "
        "the other formats can"
    )


def latex_text(text: str) -> str:
    r"""Prose (Unicode) as LaTeX text that pdflatex compiles with `PREAMBLE`, its symbols as math.

    A formula of the prose is typeset as one formula (`prose_pieces` finds them): ``Q = X W_Q``
    → ``$Q = X W_Q$``, ``d_model = 4`` → ``$d_{\text{model}} = 4$``, ``q_i · k_j`` →
    ``$q_i \cdot k_j$``, ``Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾`` → ``$Q^{(i)} = X W_Q^{(i)}$``; a name of code
    (``attn_weights``, ``torch.manual_seed``, a ```code``` span) is ``\texttt``; the rest is
    text, written by `_text`.
    """
    text = unicodedata.normalize("NFC", text)
    out: list[str] = []
    for kind, piece in prose_pieces(text):
        if kind == "math":
            out.append(f"${piece}$")
        elif kind == "code":
            out.append("\\texttt{" + _text(piece, out) + "}")
        else:
            out.append(_text(piece, out))
    return merge_math(out)


def _text(text: str, before: list[str]) -> str:
    r"""Text (no formula) as LaTeX: TeX's special characters escaped (``_`` → ``\_``, ``%`` →
    ``\%``, ``<`` → ``\textless{}``); symbols become math (``−∞`` → ``$-$$\infty$``, ``·`` →
    ``$\cdot$``, ``α`` → ``$\alpha$``); a run of superscripts becomes one (``⁽ⁱ⁾ᵀ`` →
    ``$^{(i)\top }$``); ``√x`` takes what follows as its radicand (``√d_k`` →
    ``$\sqrt{d_k}$``, a bare ``√`` → ``$\surd$``: never an empty ``\sqrt{}``); ``S̃`` →
    ``$\tilde{S}$``; accented Latin letters become accent commands (``ã`` → ``\~{a}``);
    straight double quotes become ````` `` `````/``''`` (``before``: what precedes, for the
    opening one); ``--`` stays two hyphens. Cyrillic letters stay as they are. ``ValueError``
    for any other character outside ASCII.
    """
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if i + 1 < len(text) and text[i + 1] == COMBINING_TILDE and c.isascii() and c.isalpha():
            out.append(f"$\\tilde{{{c}}}$")  # S̃: no precomposed character, a math tilde
            i += 2
            continue
        for table, mark in ((SUPERSCRIPTS, "^"), (SUBSCRIPTS, "_")):
            if c in table:
                j = i
                while j < len(text) and text[j] in table:
                    j += 1
                out.append(f"${mark}{{" + "".join(table[s] for s in text[i:j]) + "}$")
                i = j
                break
        else:
            i += 1
            if c == "√":
                m = RADICAND.match(text, i)
                if m:
                    out.append(f"$\\sqrt{{{math_name(m[0])}}}$")
                    i = m.end()
                else:
                    out.append("$\\surd$")
            elif c == '"':
                last = (out or before or [""])[-1][-1:]
                out.append("``" if last in ("", " ", "\n", "(", "[", "{") else "''")
            elif c == "-" and text[i : i + 1] == "-":
                out.append("-{}")  # "--" would print an en dash
            elif c in ESCAPES:
                out.append(ESCAPES[c])
            elif c == "\t":
                out.append(" ")
            elif (c.isascii() and (c.isprintable() or c == "\n")) or c in CYRILLIC:
                out.append(c)  # Cyrillic: declared by the preamble (T2A)
            elif c in TEXT_SYMBOLS:
                out.append(TEXT_SYMBOLS[c])
            else:
                out.append(_accented(c, text))
    return "".join(out)


def _accented(c: str, text: str) -> str:
    """``ã`` → ``\\~{a}``, ``í`` → ``\\'{\\i}``: a Latin letter with one accent;
    ``ValueError`` otherwise."""
    base, *marks = unicodedata.normalize("NFD", c)
    if base.isascii() and base.isalpha() and len(marks) == 1 and marks[0] in ACCENTS:
        # a dotless i/j under an accent (``\'{\i}``), as LaTeX writes í
        letter = {"i": "\\i", "j": "\\j"}.get(base, base)
        return f"\\{ACCENTS[marks[0]]}{{{letter}}}"
    raise _unsupported(c, text)


def math_label(label: str) -> str:
    r"""A label (LaTeX) made safe for pdflatex's math mode.

    A subscript that is a word is text (``W_{query}`` → ``W_{\text{query}}``), and so is any
    run of characters outside ASCII (``q_{Пиццу}`` → ``q_{\text{Пиццу}}``): math fonts have
    no Cyrillic. KaTeX typesets both forms the same way.
    """
    label = re.sub(r"_\{([A-Za-z]{2,})\}", r"_{\\text{\1}}", label)
    return re.sub(r"[^\x00-\x7f]+", lambda m: "\\text{" + latex_text(m[0]) + "}", label)


def tex_escape(s: str) -> str:
    """``s`` inside ``\\text{…}``: TeX's special characters escaped."""
    special = {
        "\\": r"\textbackslash{}",
        "{": r"\{",
        "}": r"\}",
        "_": r"\_",
        "#": r"\#",
        "%": r"\%",
        "&": r"\&",
        "$": r"\$",
        "^": r"\^{}",
        "~": r"\~{}",
    }
    return "".join(special.get(c, c) for c in s)


def row_labels(rows: Sequence[str]) -> str:
    r"""``\begin{array}{r} \text{Life} \\ \text{is} \end{array}``: a label at the left of each
    row of the matrix that follows (the tokens, for a matrix whose rows are tokens)."""
    labels = r" \\ ".join(rf"\text{{{tex_escape(r)}}}" for r in rows)
    return f"\\begin{{array}}{{r}} {labels} \\end{{array}}"


def bmatrix(value: Matrix, precision: int, decimal: str = ".") -> str:
    r"""``\begin{bmatrix} a & b \\ c & d \end{bmatrix}``, as seed 000 writes its matrices.

    Entries as `matrix_cells` writes them: no decimals when every entry is a whole number;
    a decimal comma (``decimal=","``) is written ``{,}``.
    """
    cells = matrix_cells(value, precision, latex=True, decimal=decimal)
    rows = [" & ".join(row) for row in cells]
    return "\\begin{bmatrix} " + " \\\\ ".join(rows) + " \\end{bmatrix}"


def equation(item: Mat, precision: int, decimal: str = ".", labelled: bool = False) -> str:
    r"""``symbol = formula = \begin{bmatrix}…\end{bmatrix}`` (no ``= formula`` when it has none);
    ``labelled``: each row's label at its left (`row_labels`), where the matrix's rows have
    labels (the tokens)."""
    lhs = math_label(item.symbol) + (f" = {math_label(item.formula)}" if item.formula else "")
    labels = row_labels(item.rows) if labelled and item.rows else ""
    return lhs + " = " + labels + bmatrix(item.value, precision, decimal)


#: An estimate of a display's width, in points of pdflatex's 10 pt math (`display`): a
#: character of the label and one of the matrix's widest entries with its column's spacing.
LABEL_PT: Final = 7
CELL_PT: Final = 6
#: The estimate over which a display goes on two lines: article's line is 345 pt wide; the
#: estimate is rough, so it splits early (a split display that would have fitted is harmless).
SPLIT_PT: Final = 330


def display(item: Mat, precision: int, decimal: str = ".") -> str:
    r"""``\[ symbol = formula = \begin{bmatrix}…\end{bmatrix} \]``, without a ``\resizebox``
    (what a teacher pastes); when it would be wider than article's line (`SPLIT_PT`), the
    matrix goes under the formula: ``\begin{aligned} symbol &= formula \\ &= …``."""
    matrix = bmatrix(item.value, precision, decimal)
    if not item.formula:
        return f"\\[ {math_label(item.symbol)} = {matrix} \\]"
    label = math_label(item.symbol) + " = " + math_label(item.formula)
    shown = re.sub(r"\\(?:operatorname|text|mathrm)\{([^}]*)\}", r"\1", label)
    shown = re.sub(r"[{}^_ \\]", "", re.sub(r"\\[A-Za-z]+", "x", shown))
    cells = matrix_cells(item.value, precision, latex=True, decimal=decimal)
    widest = sum(max(len(c) for c in column) + 2 for column in zip(*cells, strict=True))
    if LABEL_PT * len(shown) + CELL_PT * widest <= SPLIT_PT:
        return f"\\[ {label} = {matrix} \\]"
    return (
        f"\\[ \\begin{{aligned}} {math_label(item.symbol)} &= {math_label(item.formula)} "
        f"\\\\ &= {matrix} \\end{{aligned}} \\]"
    )


def fit(formula: str) -> str:
    r"""Display math that never runs past the margin: ``\resizebox`` shrinks it to the line's
    width when it is wider, and leaves it at its natural size otherwise (graphicx's ``\width``
    is the box's natural width inside the size argument)."""
    return (
        "\\[\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{$\\displaystyle "
        + formula
        + "$}\\]"
    )


def item_name(name: str) -> str:
    r"""A shape step's name: a formula as math (``X W_query`` → ``$X W_{\text{query}}$``), any
    other name as code (``context_vecs`` → ``\texttt{context\_vecs}``)."""
    if any(kind == "math" for kind, _ in prose_pieces(unicodedata.normalize("NFC", name))):
        return latex_text(name)
    return "\\texttt{" + _text(unicodedata.normalize("NFC", name), []) + "}"


def to_latex(
    expl: Explanation, precision: int = 3, *, standalone: bool = False, fit_width: bool = False
) -> str:
    r"""A LaTeX fragment: ``\section*`` per step, display math with ``bmatrix``.

    It opens with a comment naming the packages it needs. ``standalone``: the whole document,
    `PREAMBLE` included, for ``pdflatex``. ``fit_width``: each matrix in a ``\resizebox``
    (`fit`) that shrinks it to the line when it is wider; without it, ``\[ … \]`` as a
    teacher pastes it.
    """
    body = [
        f"\\section*{{{latex_text(expl.title)}}}",
        f"{expl.source_word}: {latex_text(expl.source)}",
        "",
    ]
    for sec in expl.sections:
        body += [f"\\subsection*{{{latex_text(sec.title)}}}", ""]
        if sec.text:
            body += [latex_text(sec.text), ""]
        for item in sec.items:
            if isinstance(item, Mat):
                ncols = max((len(row) for row in item.value), default=0)
                if ncols > MAX_MATRIX_COLS:
                    body.append(f"\\setcounter{{MaxMatrixCols}}{{{ncols}}}")
                if fit_width:
                    body += [fit(equation(item, precision, expl.decimal)), ""]
                else:
                    body += [display(item, precision, expl.decimal), ""]
                continue
            body += [
                f"{item_name(item.name)}: {latex_text(item.operation)}: "
                f"${shape_text(item.before)} \\to {shape_text(item.after)}$",
                "",
            ]
    fragment = "\n".join(body)
    if standalone:
        return PREAMBLE + "\\begin{document}\n\n" + fragment + "\n\\end{document}\n"
    needs = "\\usepackage{amsmath,amssymb" + (",graphicx}" if fit_width else "}")
    if any(c in CYRILLIC for c in fragment):
        needs += " and \\usepackage[T2A]{fontenc} (Cyrillic)"
    return f"% attnref: pdflatex needs {needs}; --standalone prints a whole document\n{fragment}"
