r"""The document model: what an explanation (or a table of counts) says, as plain data.

Matrices are lists of rows of floats, shapes are tuples, labels are LaTeX written once: the
writers (`attention_ref.render.markdown`, `.latex`, `.terminal`, `.jsonout`) only lay them out.
Every type is a frozen, keyword-only dataclass, so a call site names each field.

Whether a matrix prints with decimals is not a field: it follows from its values
(`attention_ref.render.numbers.is_integral`, decided per matrix by every writer alike), so no
producer can forget it or claim a whole number the values do not hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from attention_ref.render.symbols import latex_to_unicode

#: A matrix as rows of numbers; a vector is one row.
Matrix: TypeAlias = Sequence[Sequence[float]]

#: What ``--format json`` writes: numbers, strings, booleans, lists and objects of them.
JSONValue: TypeAlias = (
    "float | int | str | bool | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
)


@dataclass(frozen=True, kw_only=True)
class Mat:
    r"""A labelled matrix: ``symbol = formula = value``.

    ``symbol`` and ``formula`` are LaTeX (``Q^{(1)}``, ``X W_Q^{(1)}``): the LaTeX writers
    print them as written, the plain-text writers print `latex_to_unicode` of them
    (``Q^(1)``, ``X W_Q^(1)``). ``text`` and ``formula_text`` replace that plain form only
    where the words differ, e.g. the code's name ``queries`` for the symbol ``Q``.
    """

    symbol: str
    value: Matrix
    formula: str = ""
    rows: Sequence[str] | None = None
    cols: Sequence[str] | None = None
    text: str | None = None
    formula_text: str | None = None

    def __post_init__(self) -> None:
        if self.formula and "".join(self.formula.split()) == "".join(self.symbol.split()):
            raise ValueError(
                f"matrix {self.symbol!r}: its formula repeats its symbol (it would print "
                f"{self.symbol} = {self.formula} = …); leave the formula out"
            )

    def symbol_as_text(self) -> str:
        """The name the plain-text writers print."""
        if self.text is not None:
            return self.text
        return latex_to_unicode(self.symbol)

    def formula_as_text(self) -> str:
        """The formula the plain-text writers print (``""``: none)."""
        if self.formula_text is not None:
            return self.formula_text
        return latex_to_unicode(self.formula)


@dataclass(frozen=True, kw_only=True)
class Shape:
    """One reshape/transpose/matmul step: ``name: operation: before -> after``."""

    name: str
    operation: str
    before: tuple[int, ...]
    after: tuple[int, ...]


#: What a section holds, in order.
Item: TypeAlias = Mat | Shape


@dataclass(frozen=True, kw_only=True)
class Section:
    """A titled step: prose first, then matrices and shape transforms in order."""

    title: str
    text: str = ""
    items: Sequence[Item] = ()


#: The languages a document can be written in: the word the writers put before its source,
#: and the decimal mark of its numbers (Portuguese writes ``0,670``).
SOURCE_WORD: Final[Mapping[str, str]] = {"en": "Source", "pt": "Fonte"}
DECIMAL_MARK: Final[Mapping[str, str]] = {"en": ".", "pt": ","}
#: Those languages, English first (the default): every writer of words takes one of them.
LANGS: Final = tuple(DECIMAL_MARK)


def said(v: float, spec: str, lang: str) -> str:
    """``v`` as a sentence in ``lang`` writes it: formatted by ``spec``, with that language's
    decimal mark (``said(0.25, ".1e", "pt")`` is ``2,5e-01``)."""
    return format(v, spec).replace(".", DECIMAL_MARK[lang])


#: the thousands separator of each language: Portuguese writes the SI's (narrow, no-break)
#: space, so that a point between digits on a Portuguese page is never a decimal
THOUSANDS: Final = {"en": ",", "pt": "\u202f"}


def thousands(n: int, lang: str = "en") -> str:
    """An integer grouped by thousands: ``109,514,298`` (en), ``109 514 298`` (pt)."""
    return f"{n:,}".replace(",", THOUSANDS[lang])


@dataclass(frozen=True, kw_only=True)
class Explanation:
    """A whole worked example; ``data`` is the payload of ``--format json``.

    ``lang`` is the language its words are written in; the writers print its numbers with
    that language's decimal mark (`DECIMAL_MARK`; JSON keeps JSON's decimal point).
    """

    title: str
    source: str
    sections: Sequence[Section]
    data: Mapping[str, JSONValue]
    precision: int = 3  # decimals shown unless --precision says otherwise
    lang: str = "en"

    def __post_init__(self) -> None:
        if self.lang not in DECIMAL_MARK:
            raise ValueError(f"lang must be one of {', '.join(DECIMAL_MARK)}, got {self.lang!r}")

    @property
    def decimal(self) -> str:
        """The decimal mark of the document's numbers: ``"."`` or ``","``."""
        return DECIMAL_MARK[self.lang]

    @property
    def source_word(self) -> str:
        """The word before the source line: ``Source``, ``Fonte``."""
        return SOURCE_WORD[self.lang]


@dataclass(frozen=True, kw_only=True)
class Table:
    """A table of counts and the claim its numbers support.

    The terminal prints ``title`` above the table and the claim as a sentence below it;
    markdown has no caption, so it opens the claim with ``context`` instead
    (``d_model = 128; parameter counts ...``). Integers are grouped by thousands in the
    terminal except in ``plain_columns``. ``data`` is the payload of ``--format json``.
    """

    title: str
    context: str
    columns: Sequence[str]
    rows: Sequence[Sequence[int | str]]
    claim: str  # a clause: "parameter counts equal for every h: ..."
    data: Mapping[str, JSONValue]
    plain_columns: frozenset[str] = frozenset()
