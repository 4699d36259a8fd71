r"""The prose's symbols and formulas as LaTeX: the tables of characters and `prose_pieces`.

What `attention_ref.render.latex` writes each character of the prose as (`ESCAPES`,
`TEXT_SYMBOLS`, `SUPERSCRIPTS`, `SUBSCRIPTS`, `ACCENTS`), and how it finds the formulas in a
sentence: `prose_pieces` cuts Unicode prose into text, names of code and formulas, each formula
as LaTeX math (``Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾`` → ``Q^{(i)} = X W_Q^{(i)}``, ``d_model = 4`` →
``d_{\text{model}} = 4``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from attention_ref.render.symbols import SYMBOLS

#: ASCII characters that mean something to TeX, written so that they print as themselves.
ESCAPES: Final[dict[str, str]] = {
    "\\": "\\textbackslash{}",
    "{": "\\{",
    "}": "\\}",
    "_": "\\_",
    "%": "\\%",
    "#": "\\#",
    "&": "\\&",
    "$": "\\$",
    "^": "\\textasciicircum{}",
    "~": "\\textasciitilde{}",
    "<": "\\textless{}",
    ">": "\\textgreater{}",
    "|": "\\textbar{}",
}

#: Unicode symbols of the prose and their LaTeX (math in ``$…$``).
TEXT_SYMBOLS: Final[dict[str, str]] = {
    "−": "$-$",
    "∞": "$\\infty$",
    "·": "$\\cdot$",
    "⋅": "$\\cdot$",
    "×": "$\\times$",
    "→": "$\\to$",
    "←": "$\\leftarrow$",
    "≈": "$\\approx$",
    "≤": "$\\le$",
    "≥": "$\\ge$",
    "≠": "$\\ne$",
    "≡": "$\\equiv$",
    "∈": "$\\in$",
    "±": "$\\pm$",
    "∑": "$\\sum$",
    "⊙": "$\\odot$",
    "°": "$^\\circ$",
    "ℝ": "$\\mathbb{R}$",
    "ℕ": "$\\mathbb{N}$",
    "ℤ": "$\\mathbb{Z}$",
    "∂": "$\\partial$",
    "∇": "$\\nabla$",
    "∘": "$\\circ$",
    "⊗": "$\\otimes$",
    "∝": "$\\propto$",
    "⇒": "$\\Rightarrow$",
    "∉": "$\\notin$",
    "⊂": "$\\subset$",
    "∀": "$\\forall$",
    "∃": "$\\exists$",
    "µ": "$\\mu$",
    "½": "$\\frac{1}{2}$",
    "¼": "$\\frac{1}{4}$",
    "¾": "$\\frac{3}{4}$",
    "…": "\\dots{}",
    "ℓ": "$\\ell$",
    "–": "--",
    "—": "---",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "\u00a0": "~",
} | {
    char: f"$\\{name}$"  # the Greek letters of the labels: α -> $\alpha$, Σ -> $\Sigma$
    for name, char in reversed(SYMBOLS.items())
    if len(char) == 1 and unicodedata.name(char, "").startswith("GREEK")
}

#: Superscript characters and what they stand for in math (``⁽ⁱ⁾ᵀ`` -> ``^{(i)\top}``).
SUPERSCRIPTS: Final[dict[str, str]] = {
    **{s: str(d) for d, s in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
    "⁽": "(",
    "⁾": ")",
    "⁺": "+",
    "⁻": "-",
    "ⁱ": "i",
    "ʲ": "j",
    "ᵏ": "k",
    "ʰ": "h",
    "ⁿ": "n",
    "ᵗ": "t",
    "ᵀ": "\\top ",
}

#: Subscript characters and what they stand for in math (``ᵢⱼ`` -> ``_{ij}``).
SUBSCRIPTS: Final[dict[str, str]] = {
    **{s: str(d) for d, s in enumerate("₀₁₂₃₄₅₆₇₈₉")},
    "₍": "(",
    "₎": ")",
    "ᵢ": "i",
    "ⱼ": "j",
    "ₖ": "k",
    "ₜ": "t",
    "ₙ": "n",
}

#: Combining accents over a Latin letter (``ã`` = a + U+0303) and their text-mode commands.
ACCENTS: Final[dict[str, str]] = {
    "\u0300": "`",
    "\u0301": "'",
    "\u0302": "^",
    "\u0303": "~",
    "\u0308": '"',
    "\u0327": "c",
    "\u030c": "v",
    "\u030a": "r",
    "\u0304": "=",
    "\u0306": "u",
    "\u030b": "H",
    "\u0307": ".",
}

COMBINING_TILDE: Final = "\u0303"

#: What ``√`` applies to in the prose: a number (``√2``) or a name (``√d_k``, ``√head_dim``).
RADICAND = re.compile(r"\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")


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
            f"(?P<sqrt>√(?:{RADICAND.pattern})?)",
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
    {
        "sym",
        "juxt",
        "dword",
        "funcs",
        "func",
        "mathfn",
        "number",
        "sqrt",
        "inf",
        "dots",
        "op",
        "open",
        "close",
        "sep",
        "ws",
    }
)
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


def merge_math(pieces: list[str]) -> str:
    """Join the pieces, adjacent math as one formula: ``$-$``, ``$\\infty$`` → ``$-\\infty$``
    (never ``$-$$\\infty$``, whose ``$$`` could open display math)."""
    out: list[str] = []
    for p in pieces:
        if out and p.startswith("$") and out[-1].startswith("$") and out[-1].endswith("$"):
            out[-1] = out[-1][:-1] + p[1:]
        else:
            out.append(p)
    return "".join(out)
