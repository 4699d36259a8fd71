r"""LaTeX labels → the plain-text (Unicode) form the terminal and markdown writers print.

A label is written once, in LaTeX (``\frac{Q^{(1)} K^{(1)\top}}{\sqrt{2}}``); the LaTeX
writers print it as it is and the others print `latex_to_unicode` of it
(``Q^(1) K^(1)ᵀ / √2``). Only the small part of LaTeX that the labels use is understood; any
other command raises ``ValueError``, so a new label cannot print half-converted.
"""

from __future__ import annotations

import re
from typing import Final

#: Commands without an argument and the character each stands for.
SYMBOLS: Final[dict[str, str]] = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
    "top": "ᵀ",
    "cdot": "·",
    "times": "×",
    "mid": "|",
    "sum": "Σ",
    "to": "→",
    "infty": "∞",
    "ell": "ℓ",
    ",": " ",
    ";": " ",
    " ": " ",
    "!": "",
    "{": "{",
    "}": "}",
    "_": "_",
    "%": "%",
}

#: Commands whose one argument is shown converted, without the command.
PLAIN: Final = frozenset({"operatorname", "mathrm", "mathit", "mathbf"})

#: Commands whose one argument is text, shown as written.
TEXT: Final = frozenset({"text", "texttt"})

COMBINING_TILDE: Final = "\u0303"

#: a superscript of more than one term (``e^{S - m}``): printed in parentheses
_COMPOUND: Final = re.compile(r"[\s+\-−/]")


class _Reader:
    """A cursor over one LaTeX string; every method consumes what it returns."""

    def __init__(self, latex: str) -> None:
        self.latex = latex
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.latex)

    def take(self) -> str:
        if self.at_end():
            raise ValueError(f"latex_to_unicode: {self.latex!r} ends where an argument was due")
        c = self.latex[self.pos]
        self.pos += 1
        return c

    def skip_spaces(self) -> None:
        while not self.at_end() and self.latex[self.pos] == " ":
            self.pos += 1

    def sequence(self, *, in_group: bool) -> str:
        """Atoms up to the ``}`` that closes the group (consumed) or the end of the string."""
        out: list[str] = []
        while not self.at_end():
            if self.latex[self.pos] == "}":
                if not in_group:
                    raise ValueError(f"latex_to_unicode: unbalanced '}}' in {self.latex!r}")
                self.pos += 1
                return "".join(out)
            out.append(self.atom())
        if in_group:
            raise ValueError(f"latex_to_unicode: missing '}}' in {self.latex!r}")
        return "".join(out)

    def atom(self) -> str:
        """One character, group, command, superscript or subscript."""
        c = self.take()
        if c == "{":
            return self.sequence(in_group=True)
        if c == "\\":
            return self.command()
        if c == "^":
            arg = self.argument()
            if arg == SYMBOLS["top"]:
                return arg  # X^\top -> Xᵀ
            if _COMPOUND.search(arg) and not (arg.startswith("(") and arg.endswith(")")):
                return f"^({arg})"  # e^{S - m} -> e^(S - m), never e^S - m
            return "^" + arg  # Q^{(1)} -> Q^(1)
        if c == "_":
            return "_" + self.argument()  # W_{query} -> W_query
        return c

    def argument(self) -> str:
        """The argument of a command, ``^`` or ``_``: a group, a command or one character."""
        self.skip_spaces()
        return self.atom()

    def raw_group(self) -> str:
        """A ``{...}`` group as written (``\\text``): nested braces kept, nothing converted."""
        self.skip_spaces()
        if self.take() != "{":
            raise ValueError(f"latex_to_unicode: expected '{{' after \\text in {self.latex!r}")
        depth, start = 1, self.pos
        while depth:
            c = self.take()
            depth += {"{": 1, "}": -1}.get(c, 0)
        return self.latex[start : self.pos - 1]

    def command(self) -> str:
        start = self.pos
        while not self.at_end() and self.latex[self.pos].isalpha():
            self.pos += 1
        name = self.latex[start : self.pos] or self.take()  # \alpha, or one symbol: \, \{
        if name in SYMBOLS:
            return SYMBOLS[name]
        if name == "frac":
            numerator = self.argument()
            return f"{numerator} / {self.argument()}"  # \frac{a}{b} -> a / b
        if name == "sqrt":
            return "√" + self.argument()
        if name == "tilde":
            return self.argument() + COMBINING_TILDE  # \tilde S -> S̃
        if name in PLAIN:
            return self.argument()
        if name in TEXT:
            return self.raw_group()
        raise ValueError(f"latex_to_unicode: unknown command \\{name} in {self.latex!r}")


def latex_to_unicode(latex: str) -> str:
    r"""The plain-text form of a LaTeX label.

    ``\alpha`` → ``α`` (every Greek letter), ``X^\top`` → ``Xᵀ``, ``\tilde S`` → ``S̃``,
    ``\frac{a}{b}`` → ``a / b``, ``\sqrt{2}`` → ``√2``, ``\operatorname{softmax}`` →
    ``softmax``, ``\text{implied}`` → ``implied``, ``\cdot`` → ``·``, ``\mid`` → ``|``,
    ``\sum_j`` → ``Σ_j``; a subscript loses its braces (``W_{query}`` → ``W_query``) and a
    superscript keeps its caret (``Q^{(1)}`` → ``Q^(1)``, ``K^{(1)\top}`` → ``K^(1)ᵀ``), in
    parentheses when it has more than one term (``e^{S - m}`` → ``e^(S - m)``), as the
    terminal and markdown output write them. Spaces separate as written, a run of them counts
    as one (``\text{implied } \alpha_j`` → ``implied α_j``) and none lead or trail.
    ``ValueError`` for an unknown command or unbalanced braces.
    """
    return re.sub(" {2,}", " ", _Reader(latex).sequence(in_group=False)).strip(" ")
