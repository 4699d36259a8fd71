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
\usepackage{graphicx} % \resizebox (--fit-width): a matrix wider than the line is shrunk to fit
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
    return _merge_math(out)


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
                m = _RADICAND.match(text, i)
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


# --- the formulas of the prose -----------------------------------------------------------------

#: Letters that are symbols on their own: Latin, Greek (α, θ, Σ), ℓ and the number sets.
_GREEK: Final = "".join(
    c for c in SYMBOLS.values() if len(c) == 1 and unicodedata.name(c, "").startswith("GREEK")
)
_LETTER: Final = f"[A-Za-z{_GREEK}ℓℝℕℤ]"
_SUPS: Final = "".join(SUPERSCRIPTS)
_SUBS: Final = "".join(SUBSCRIPTS)
#: what a symbol carries: ``_k``, ``_model``, ``_2i+1``, ``_{…}``, ``^(…)``, ``^{…}``, ``^Q``,
#: and runs of Unicode super- and subscripts (``⁽ⁱ⁾ᵀ``)
_SCRIPT: Final = (
    r"_(?:\{[^{}]*\}|[A-Za-z0-9]+(?:[+\-][0-9]+)?)|\^(?:\{[^{}]*\}|\([^()]*\)|[A-Za-z0-9])"
    f"|[{_SUPS}]+|[{_SUBS}]+"
)
_SCRIPTS: Final = f"(?:{_SCRIPT})*"
_END: Final = r"(?![A-Za-z0-9])"
#: a letter of a word: Latin (accented too, not × and ÷) and Cyrillic
_WORD: Final = "[A-Za-zÀ-ÖØ-öø-ɏЀ-ӿ]"
_NUMBER: Final = r"\d+(?:\.\d+|,\d+)?(?:e[-+]\d+)?"
#: the tokens of the prose, first match wins; each kind is one group
_TOKEN: Final = re.compile(
    "|".join(
        (
            r"(?P<code>`[^`\n]+`)",  # a code span of markdown
            r'(?P<quoted>"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*")',  # a JSON name: "S_masked"
            # a, e, o alone are words (English "a", Portuguese "e", "o"), never a symbol
            f"(?P<word1>[aeo])(?![A-Za-z0-9_^'{_SUPS}{_SUBS}\u0303])",
            # one symbol: ∂, a letter (a tilde, a prime), what it carries; nothing glued after
            f"(?P<sym>∂?{_LETTER}\u0303?(?:'(?![A-Za-z]))?{_SCRIPTS}){_END}",
            r"(?P<juxt>[A-Z])(?=[A-Z][_^])",  # Q of QW_1^Q: Q times W_1^Q
            r"(?P<ident>[A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+)" + _END,  # a name of code
            f"(?P<dword>∂[A-Za-z]{{2,}}{_SCRIPTS}){_END}",  # ∂output, ∂Concat
            f"(?P<funcs>[A-Za-z]{{2,}}(?:{_SCRIPT})+){_END}",  # Concatᵀ, base^(−2i/d_k)
            r"(?P<func>[A-Za-z]{2,})(?=\()",  # softmax(, Concat(
            f"(?P<mathfn>log|cos|sin|exp)(?!{_WORD})",
            f"(?P<word>{_WORD}+)",
            f"(?P<number>{_NUMBER}{_SCRIPTS}){_END}",
            f"(?P<sqrt>√(?:{_RADICAND.pattern})?)",
            r"(?P<inf>∞)|(?P<dots>…)",
            # an ASCII hyphen is a minus between blanks or before a number, else text (--seed)
            r"(?P<op>[=+−·⋅×/≈≤≥≠<>∈←→⊙|±]|(?<=\s)-(?=\s)|(?<![\w-])-(?=\d))",
            r"(?P<open>[(\[])|(?P<close>[)\]])|(?P<sep>[,;])|(?P<ws> +)",
            r"(?P<apostrophe>'[A-Za-z]+)",  # the 's of "token t's query": text
            r"(?P<other>.)",
        )
    ),
    re.S,
)
#: the kinds a formula is made of, and those that make a run a formula on their own
_MATH: Final = frozenset(
    {"sym", "juxt", "dword", "funcs", "func", "mathfn", "number", "sqrt", "inf", "dots", "op",
     "open", "close", "sep", "ws"}
)  # fmt: skip
_OPERANDS: Final = frozenset(
    {"sym", "juxt", "dword", "funcs", "mathfn", "number", "sqrt", "inf", "dots", "close"}
)
_UNARY: Final = frozenset("−-±")
_PAIRS: Final = {")": "(", "]": "["}


def _strong(kind: str, text: str) -> bool:
    """A token that is math by itself: a symbol with a script, a Greek letter, a tilde, a
    prime, ∂, √, ∞ (a bare Latin letter or number is not: "a token", "3 tokens")."""
    if kind in ("dword", "funcs", "sqrt", "inf"):
        return True
    if kind == "number":
        return bool(re.search(f"[_^{_SUPS}{_SUBS}]", text))
    return kind == "sym" and not re.fullmatch(r"[A-Za-z]", text)


def prose_pieces(text: str) -> list[tuple[str, str]]:
    """``text`` cut into ``("text", …)``, ``("code", …)`` (a name of code, a code span without
    its backticks) and ``("math", LaTeX)`` pieces, in order.

    A formula is a run of symbols, numbers, operators and brackets (no word but a function's,
    ``softmax(``) with its brackets matched, a comma only inside them, no operator at either end,
    and either a symbol that is math on its own (``W_O``, ``Q⁽ⁱ⁾``, ``α``, ``√2``) or an
    operator between two operands (``n = 3``, ``m − n``).
    """
    tokens = [(m.lastgroup or "other", m[0]) for m in _TOKEN.finditer(text)]
    pieces: list[tuple[str, str]] = []

    def add(kind: str, piece: str) -> None:
        if pieces and pieces[-1][0] == kind == "text":
            pieces[-1] = ("text", pieces[-1][1] + piece)
        else:
            pieces.append((kind, piece))

    i = 0
    while i < len(tokens):
        kind, tok = tokens[i]
        if kind not in _MATH:
            if kind == "code":
                add("code", tok[1:-1])
            elif kind == "quoted":
                add("text", '"')
                add("ident", tok[1:-1])
                add("text", '"')
            else:
                add("ident" if kind == "ident" else "text", tok)
            i += 1
            continue
        j = i
        while j < len(tokens) and tokens[j][0] in _MATH:
            j += 1
        for is_math, part in _formulas(tokens[i:j]):
            add("math", _math(part)) if is_math else add("text", "".join(t for _, t in part))
        i = j
    return [("code" if k == "ident" else k, p) for k, p in pieces]


def _formulas(run: list[tuple[str, str]]) -> list[tuple[bool, list[tuple[str, str]]]]:
    """A run of math tokens cut at its unmatched brackets and its top-level commas, each part
    trimmed of operators at its ends; ``(is it a formula, tokens)`` in order."""
    cut = set()
    stack: list[int] = []
    for k, (kind, tok) in enumerate(run):
        if kind == "open":
            stack.append(k)
        elif kind == "close":
            if stack and run[stack[-1]][1] == _PAIRS[tok]:
                stack.pop()
            else:
                cut.add(k)
                stack.clear()  # what was open before it cannot close after it
                cut.update(stack)
    cut.update(stack)
    if sum(tok == "|" for _, tok in run) % 2:  # a bar without its pair: text, as a bracket
        cut.update(k for k, (_, tok) in enumerate(run) if tok == "|")
    depth = 0
    for k, (kind, _) in enumerate(run):
        if k in cut:
            continue
        depth += {"open": 1, "close": -1}.get(kind, 0)
        if kind == "sep" and depth == 0:
            cut.add(k)
    out: list[tuple[bool, list[tuple[str, str]]]] = []
    part: list[tuple[str, str]] = []
    for k, token in enumerate(run):
        if k in cut:
            out += [*_trimmed(part), (False, [token])]
            part = []
        else:
            part.append(token)
    return out + _trimmed(part)


def _trimmed(part: list[tuple[str, str]]) -> list[tuple[bool, list[tuple[str, str]]]]:
    """``part`` as text, formula, text: no blank, no operator (but a sign in front, or the bars
    of an absolute value) and no function name without its bracket at either end."""
    bars = sum(tok == "|" for _, tok in part) % 2 == 0

    def loose(kind: str, tok: str, first: bool) -> bool:
        if kind == "ws":
            return True
        if kind == "op":
            return not ((first and tok in _UNARY) or (tok == "|" and bars))
        return kind == "func" and not first

    a, b = 0, len(part)
    while a < b and loose(*part[a], first=True):
        a += 1
    while b > a and loose(*part[b - 1], first=False):
        b -= 1
    core = part[a:b]
    operands = sum(kind in _OPERANDS for kind, _ in core)
    binary = any(kind == "op" and k > 0 for k, (kind, _) in enumerate(core))
    is_math = any(_strong(*t) for t in core) or (operands >= 2 and binary)
    out = [(False, part[:a]), (is_math, core), (False, part[b:])]
    return [(m, p) for m, p in out if p]


#: math of the operators and of the symbols of the prose (``−`` → ``-``, ``·`` → ``\cdot``)
_MATH_SYMBOLS: Final[dict[str, str]] = {
    c: v[1:-1] + " " for c, v in TEXT_SYMBOLS.items() if v.startswith("$") and v.endswith("$")
} | {"−": "-", "…": "\\dots ", "|": "|", "<": "<", ">": ">"}


def _math(tokens: list[tuple[str, str]]) -> str:
    """Math tokens (`prose_pieces`) as one formula's LaTeX."""
    out = []
    for kind, tok in tokens:
        if kind in ("sym", "juxt", "number", "dword", "funcs"):
            out.append(_operand(tok))
        elif kind == "func":
            out.append(f"\\operatorname{{{tok}}}")
        elif kind == "mathfn":
            out.append(f"\\{tok} ")
        elif kind == "sqrt":
            out.append(f"\\sqrt{{{math_name(tok[1:])}}}" if len(tok) > 1 else "\\surd ")
        elif kind == "ws":
            out.append(" ")
        else:
            out.append(_MATH_SYMBOLS.get(tok, tok))
    return re.sub(" +", " ", "".join(out)).strip()


def _script_math(text: str) -> str:
    """The inside of a script (``−2i/d_k``, ``3×4``, ``model``) as math."""
    if re.fullmatch(r"[A-Za-z]{2,}", text):
        return f"\\text{{{text}}}"  # d_model: a word, not a product of letters
    parts = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        parts.append(f"\\mathrm{{{m[0]}}}" if kind == "word" else _math([(kind, m[0])]))
    return "".join(parts)


def _operand(tok: str) -> str:
    r"""One symbol with what it carries: ``W_Q⁽ⁱ⁾`` → ``W_Q^{(i)}``, ``d_model`` →
    ``d_{\text{model}}``, ``∂K⁽ʲ⁾`` → ``\partial K^{(j)}``, ``S̃`` → ``\tilde{S}``,
    ``2^(−8i/h)`` → ``2^{-8i/h}``, ``Q^(i)`` → ``Q^{(i)}``, ``Concatᵀ`` →
    ``\operatorname{Concat}^{\top}``."""
    m = re.match(f"(∂?)([A-Za-z]{{2,}}|{_LETTER}\u0303?'?|{_NUMBER})", tok)
    assert m is not None, tok
    partial, base = m[1], m[2]
    if base[0] in _GREEK or base[0] in "ℓℝℕℤ":
        head = _MATH_SYMBOLS[base[0]].strip() + base[1:]
    elif base[:1].isdigit():
        head = base.replace(",", "{,}")
        if "e" in base:
            head = f"\\text{{{base}}}"
    elif len(base) > 1 and base[1] == COMBINING_TILDE:
        head = f"\\tilde{{{base[0]}}}" + base[2:]
    elif len(base) > 1 and base[1] != "'":
        head = f"\\operatorname{{{base}}}" if not partial else f"\\mathrm{{{base}}}"
    else:
        head = base
    out, used = ("\\partial " if partial else "") + head, ""
    for s in re.findall(_SCRIPT, tok[m.end() :]):
        if s[0] in SUPERSCRIPTS:
            mark, inner = "^", "".join(SUPERSCRIPTS[c] for c in s).strip()
        elif s[0] in SUBSCRIPTS:
            mark, inner = "_", "".join(SUBSCRIPTS[c] for c in s)
        else:
            mark, inner = s[0], s[1:]
            if inner[:1] == "{":
                inner = _script_math(inner[1:-1])
            elif inner[:1] == "(":
                # Q^(i): the head's index keeps its brackets; 2^(−8i/h) is an exponent
                inner = inner if re.fullmatch(r"\([A-Za-z0-9]\)", inner) else inner[1:-1]
                inner = _script_math(inner) if inner[:1] != "(" else inner
            else:
                inner = _script_math(inner)
        if mark in used:
            out, used = "{" + out + "}", ""  # a second subscript: x_{2i}₁ as {x_{2i}}_1
        used += mark
        out += f"{mark}{{{inner}}}" if len(inner) > 1 else f"{mark}{inner}"
    return out


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
