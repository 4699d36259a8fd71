r"""LaTeX for pdflatex: a ``\section*`` per step, every matrix a ``bmatrix`` as seed 000 writes it.

The fragment (`to_latex`) is ASCII except for Cyrillic letters (U+0400–U+045F, the tokens of
seed 002), which `PREAMBLE` declares with ``\usepackage[T2A]{fontenc}``; it needs amsmath
(``bmatrix``, ``\text``, ``\operatorname``) and amssymb (``\mathbb{R}``), nothing else.
``standalone=True`` wraps it in `PREAMBLE` and ``\begin{document}…\end{document}``.
Prose arrives as Unicode text (``Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾``, ``√d_k``, ``−∞``) and `latex_text`
writes it as LaTeX (``Q$^{(i)}$ = X W\_Q$^{(i)}$``, ``$\sqrt{d_k}$``, ``$-\infty$``); a
character it has no LaTeX for is a ``ValueError``, never a document pdflatex rejects.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from attention_ref.render.document import Explanation, Mat, Matrix
from attention_ref.render.numbers import matrix_cells, shape_text
from attention_ref.render.symbols import SYMBOLS

#: The standalone document's preamble: what the fragment needs, nothing more. Debian ships
#: it in texlive-latex-base (article, amsmath, inputenc; amssymb comes with its dependency
#: texlive-base) and texlive-lang-cyrillic (T2A).
PREAMBLE: Final = r"""\documentclass{article}
\usepackage[T2A]{fontenc} % T2A: Cyrillic letters, and every ASCII character, in text
\usepackage[utf8]{inputenc}
\usepackage{amsmath} % bmatrix, \text, \operatorname
\usepackage{amssymb} % \mathbb{R}
\usepackage{graphicx} % \resizebox: a matrix wider than the line is shrunk to fit
\sloppy % a long name (torch.manual_seed(789)) moves to the next line, never past the margin
"""

#: Letters the preamble declares (with T2A and utf8): the Cyrillic block U+0400–U+045F.
CYRILLIC: Final = frozenset(chr(c) for c in range(0x0400, 0x0460))

#: bmatrix holds this many columns unless the counter MaxMatrixCols says more (amsmath).
MAX_MATRIX_COLS: Final = 10

#: ASCII characters that mean something to TeX, written so that they print as themselves.
ESCAPES: Final[dict[str, str]] = {
    "\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "_": "\\_", "%": "\\%", "#": "\\#",
    "&": "\\&", "$": "\\$", "^": "\\textasciicircum{}", "~": "\\textasciitilde{}",
    "<": "\\textless{}", ">": "\\textgreater{}", "|": "\\textbar{}",
}  # fmt: skip

#: Unicode symbols of the prose and their LaTeX (math in ``$…$``).
TEXT_SYMBOLS: Final[dict[str, str]] = {
    "−": "$-$", "∞": "$\\infty$", "·": "$\\cdot$", "⋅": "$\\cdot$", "×": "$\\times$",
    "→": "$\\to$", "←": "$\\leftarrow$", "≈": "$\\approx$", "≤": "$\\le$", "≥": "$\\ge$",
    "≠": "$\\ne$", "≡": "$\\equiv$", "∈": "$\\in$", "±": "$\\pm$", "∑": "$\\sum$",
    "⊙": "$\\odot$", "°": "$^\\circ$", "ℝ": "$\\mathbb{R}$", "ℕ": "$\\mathbb{N}$",
    "ℤ": "$\\mathbb{Z}$", "∂": "$\\partial$", "∇": "$\\nabla$", "∘": "$\\circ$",
    "⊗": "$\\otimes$", "∝": "$\\propto$", "⇒": "$\\Rightarrow$", "∉": "$\\notin$",
    "⊂": "$\\subset$", "∀": "$\\forall$", "∃": "$\\exists$", "µ": "$\\mu$",
    "½": "$\\frac{1}{2}$", "¼": "$\\frac{1}{4}$", "¾": "$\\frac{3}{4}$", "…": "\\dots{}",
    "ℓ": "$\\ell$", "–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "\u00a0": "~",
} | {
    char: f"$\\{name}$"  # the Greek letters of the labels: α -> $\alpha$, Σ -> $\Sigma$
    for name, char in reversed(SYMBOLS.items())
    if len(char) == 1 and unicodedata.name(char, "").startswith("GREEK")
}  # fmt: skip

#: Superscript characters and what they stand for in math (``⁽ⁱ⁾ᵀ`` -> ``^{(i)\top}``).
SUPERSCRIPTS: Final[dict[str, str]] = {
    **{s: str(d) for d, s in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
    "⁽": "(", "⁾": ")", "⁺": "+", "⁻": "-", "ⁱ": "i", "ʲ": "j", "ᵏ": "k", "ʰ": "h",
    "ⁿ": "n", "ᵗ": "t", "ᵀ": "\\top ",
}  # fmt: skip

#: Subscript characters and what they stand for in math (``ᵢⱼ`` -> ``_{ij}``).
SUBSCRIPTS: Final[dict[str, str]] = {
    **{s: str(d) for d, s in enumerate("₀₁₂₃₄₅₆₇₈₉")},
    "₍": "(", "₎": ")", "ᵢ": "i", "ⱼ": "j", "ₖ": "k", "ₜ": "t", "ₙ": "n",
}  # fmt: skip

#: Combining accents over a Latin letter (``ã`` = a + U+0303) and their text-mode commands.
ACCENTS: Final[dict[str, str]] = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0308": '"',
    "\u0327": "c", "\u030c": "v", "\u030a": "r", "\u0304": "=", "\u0306": "u",
    "\u030b": "H", "\u0307": ".",
}  # fmt: skip

COMBINING_TILDE: Final = "\u0303"

#: What ``√`` applies to in the prose: a number (``√2``) or a name (``√d_k``, ``√head_dim``).
_RADICAND = re.compile(r"\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")


def math_name(name: str) -> str:
    r"""A name of the prose as math: ``2`` → ``2``, ``d_k`` → ``d_k``, ``d_in`` →
    ``d_{\text{in}}``, ``head_dim`` → ``\text{head\_dim}`` (a word is text, not a product)."""
    if re.fullmatch(r"[\d.]+|[A-Za-z]", name):
        return name
    m = re.fullmatch(r"([A-Za-z])_([A-Za-z0-9]+)", name)
    if m:
        sub = m[2]
        return f"{m[1]}_{sub}" if len(sub) == 1 else f"{m[1]}_{{\\text{{{sub}}}}}"
    return "\\text{" + name.replace("_", "\\_") + "}"


def _unsupported(char: str, text: str) -> ValueError:
    return ValueError(
        f"--format latex cannot typeset {char!r} (U+{ord(char):04X}) in {text!r}; "
        "the other formats can"
    )


def latex_text(text: str) -> str:
    r"""Prose (Unicode) as LaTeX text that pdflatex compiles with `PREAMBLE`.

    TeX's special characters are escaped (``_`` → ``\_``, ``%`` → ``\%``, ``<`` →
    ``\textless{}``); symbols become math (``−∞`` → ``$-$$\infty$``, ``·`` → ``$\cdot$``,
    ``α`` → ``$\alpha$``); a run of superscripts becomes one (``⁽ⁱ⁾ᵀ`` → ``$^{(i)\top }$``);
    ``√x`` takes what follows as its radicand (``√d_k`` → ``$\sqrt{d_k}$``, a bare ``√`` →
    ``$\surd$``: never an empty ``\sqrt{}``); ``S̃`` → ``$\tilde{S}$``; accented Latin
    letters become accent commands (``ã`` → ``\~{a}``); straight double quotes become
    ````` `` `````/``''``; ``--`` stays two hyphens. Cyrillic letters stay as they are.
    ``ValueError`` for any other character outside ASCII.
    """
    text = unicodedata.normalize("NFC", text)
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
                m = _RADICAND.match(text, i)
                if m:
                    out.append(f"$\\sqrt{{{math_name(m[0])}}}$")
                    i = m.end()
                else:
                    out.append("$\\surd$")
            elif c == '"':
                opening = not out or out[-1][-1:] in ("", " ", "\n", "(", "[", "{")
                out.append("``" if opening else "''")
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
    return _merge_math(out)


def _merge_math(pieces: list[str]) -> str:
    """Join the pieces, adjacent math as one formula: ``$-$``, ``$\\infty$`` → ``$-\\infty$``
    (never ``$-$$\\infty$``, whose ``$$`` could open display math)."""
    out: list[str] = []
    for p in pieces:
        if out and p.startswith("$") and out[-1].startswith("$") and out[-1].endswith("$"):
            out[-1] = out[-1][:-1] + p[1:]
        else:
            out.append(p)
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


def bmatrix(value: Matrix, precision: int, decimal: str = ".") -> str:
    r"""``\begin{bmatrix} a & b \\ c & d \end{bmatrix}``, as seed 000 writes its matrices.

    Entries as `matrix_cells` writes them: no decimals when every entry is a whole number;
    a decimal comma (``decimal=","``) is written ``{,}``.
    """
    cells = matrix_cells(value, precision, latex=True, decimal=decimal)
    rows = [" & ".join(row) for row in cells]
    return "\\begin{bmatrix} " + " \\\\ ".join(rows) + " \\end{bmatrix}"


def equation(item: Mat, precision: int, decimal: str = ".") -> str:
    r"""``symbol = formula = \begin{bmatrix}…\end{bmatrix}`` (no ``= formula`` when it has none)."""
    lhs = math_label(item.symbol) + (f" = {math_label(item.formula)}" if item.formula else "")
    return lhs + " = " + bmatrix(item.value, precision, decimal)


def fit(formula: str) -> str:
    r"""Display math that never runs past the margin: ``\resizebox`` shrinks it to the line's
    width when it is wider, and leaves it at its natural size otherwise (graphicx's ``\width``
    is the box's natural width inside the size argument)."""
    return (
        "\\[\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{$\\displaystyle "
        + formula
        + "$}\\]"
    )


def to_latex(expl: Explanation, precision: int = 3, *, standalone: bool = False) -> str:
    r"""A LaTeX fragment: ``\section*`` per step, display math with ``bmatrix``.

    It opens with a comment naming the packages it needs. ``standalone``: the whole document,
    `PREAMBLE` included, for ``pdflatex``.
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
                body += [fit(equation(item, precision, expl.decimal)), ""]
                continue
            body += [
                f"\\texttt{{{latex_text(item.name)}}}: {latex_text(item.operation)}: "
                f"${shape_text(item.before)} \\to {shape_text(item.after)}$",
                "",
            ]
    fragment = "\n".join(body)
    if standalone:
        return PREAMBLE + "\\begin{document}\n\n" + fragment + "\n\\end{document}\n"
    needs = "\\usepackage{amsmath,amssymb,graphicx}"
    if any(c in CYRILLIC for c in fragment):
        needs += " and \\usepackage[T2A]{fontenc} (Cyrillic)"
    return f"% attnref: pdflatex needs {needs}; --standalone prints a whole document\n{fragment}"
