"""The book's page helpers: the pages' ```` ```python exec="on" ```` blocks call these.

Every number on a page is computed when the site is built, and every code listing is the
installed source (``inspect.getsource``), never a pasted copy. A failed :func:`check` raises,
so ``mkdocs build --strict`` fails instead of publishing a wrong page. The figures are in
`attnref_book.figures`.
"""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from attention_ref.render import (
    DECIMAL_MARK,
    Explanation,
    Item,
    Mat,
    bmatrix,
    fmt_number,
    markdown_table,
    row_labels,
    thousands,  # noqa: F401  (the pages write `from attnref_book.pages import thousands`)
    to_book,
)

if TYPE_CHECKING:
    from torch import Tensor

    from attention_ref.render import Matrix

#: the committed experiment results the book shows (``attnref report --export docs/results``)
RESULTS = Path("docs/results")


def source(*objs: Callable[..., object] | ModuleType) -> str:
    """A fenced Python listing of the given functions/classes, straight from the source."""
    parts = [textwrap.dedent(inspect.getsource(o)).rstrip() for o in objs]
    return "```python\n" + "\n\n\n".join(parts) + "\n```\n"


def display(latex: str) -> str:
    """Display math for arithmatex/KaTeX."""
    return f"$$\n{latex}\n$$\n"


#: what may stand between a left-hand side and its matrix (`matrix`, `labelled`)
RELATIONS = {"=": "=", "≈": r"\approx"}
#: a left-hand side that already ends in a relation would print two of them ("≈ =")
_ENDS_IN_RELATION = re.compile(r"(=|\\approx|≈|\\le|\\ge|<|>)\s*$")


def _relation(lhs: str, relation: str) -> str:
    """The LaTeX of ``relation``; ``ValueError`` for an unknown one, or an ``lhs`` that ends
    in a relation of its own (the helper writes the one between them)."""
    if relation not in RELATIONS:
        raise ValueError(f"relation {relation!r}: choose one of {', '.join(RELATIONS)}")
    if _ENDS_IN_RELATION.search(lhs):
        raise ValueError(
            f"left-hand side {lhs!r} ends in a relation; pass relation= instead (the helper "
            "writes the sign between it and the matrix)"
        )
    return RELATIONS[relation]


def matrix(
    lhs: str,
    value: Sequence[float] | Sequence[Sequence[float]] | Tensor,
    precision: int = 3,
    relation: str = "=",
) -> str:
    """``lhs = [bmatrix]`` (or ``≈``: ``relation``) as display math; ``value`` is nested
    lists or a tensor."""
    rel = _relation(lhs, relation)
    nested = value if isinstance(value, Sequence) else value.tolist()
    rows = [nested] if nested and not isinstance(nested[0], Sequence) else nested
    return display(f"{lhs} {rel} {bmatrix(cast('Matrix', rows), precision)}")


def labelled(
    lhs: str,
    value: Sequence[Sequence[float]] | Tensor,
    rows: Sequence[str],
    precision: int = 3,
    lang: str = "en",
    relation: str = "=",
) -> str:
    """``lhs = [bmatrix]`` (or ``≈``: ``relation``) as display math with a label at the left
    of each row (the tokens, for a matrix whose rows are tokens); decimal commas on the
    Portuguese pages."""
    rel = _relation(lhs, relation)
    nested = value if isinstance(value, Sequence) else value.tolist()
    if len(rows) != len(nested):
        raise ValueError(f"{lhs}: {len(nested)} rows but {len(rows)} labels")
    latex = f"{lhs} {rel} {row_labels(rows)}{bmatrix(cast('Matrix', nested), precision)}"
    return display(math_said(latex, lang))


def num(v: float, precision: int = 4) -> str:
    """A number as the pages print it (``-∞`` for masked entries)."""
    return fmt_number(float(v), precision)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table (`attention_ref.render.markdown_table`, the one writer)."""
    return "\n".join(markdown_table(header, rows)) + "\n"


#: the word before a check's label, per language of the book
CHECK_WORD = {"en": "Check", "pt": "Verificação"}


def check(label: str, ok: bool, detail: str, lang: str = "en") -> str:
    """A green box for a check that passed; an exception (failed build) for one that did not."""
    if not ok:
        raise AssertionError(f"book check failed: {label}: {detail}")
    return f'!!! success "{CHECK_WORD[lang]}: {label}"\n    {detail}\n'


#: what marks a section title's tail as a formula written in Unicode (S⁽ⁱ⁾, Kᵀ, √d_k, S̃…)
PSEUDO_MATH = re.compile(r"[=⁽⁾ⁱʰᵀ√\u0303|]")


def plain_heading(title: str) -> str:
    """A section title for a page heading, in plain words: ``"Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k"``
    becomes ``"Scores"`` (the displays under it carry the formula, typeset); a title with no
    Unicode formula in it is kept whole."""
    words, sep, tail = title.partition(": ")
    return words if sep and PSEUDO_MATH.search(tail) else title


@dataclass(frozen=True, kw_only=True)
class Words:
    """A worked example's words in another language of the book: its source line and, for
    each of its steps in order, a title and a text. The matrices stay the example's own;
    ``math`` replaces words inside their LaTeX (``\\text{…}``), whole."""

    lang: str
    source: str
    steps: Sequence[tuple[str, str]]
    math: Mapping[str, str] = field(default_factory=dict)


#: a number of a step's words as a reader reads it: its digits, the decimal mark aside
_WORD_NUMBER = {".": re.compile(r"\d+(?:\.\d+)?"), ",": re.compile(r"\d+(?:,\d+)?")}


def _numbers_of(text: str, lang: str) -> list[str]:
    mark = DECIMAL_MARK[lang]
    return sorted(n.replace(mark, ".") for n in _WORD_NUMBER[mark].findall(text))


def _in_words(item: Item, words: Words) -> Item:
    """A matrix with its LaTeX's words replaced (`Words.math`); a shape as it is."""
    if not isinstance(item, Mat) or not words.math:
        return item

    def say(latex: str) -> str:
        for old, new in words.math.items():
            latex = latex.replace(old, new)
        return latex

    return replace(item, symbol=say(item.symbol), formula=say(item.formula))


def translated(expl: Explanation, words: Words) -> Explanation:
    """``expl`` told in ``words``' language: each step's title and text replaced, its
    matrices kept, its numbers written with that language's decimal mark.

    ``ValueError`` when ``words`` has another number of steps, or a step's words do not
    carry the same numbers as the English ones (title as the page shows it, `plain_heading`,
    and text): a step the English example gains, or a number it changes, fails the build of
    the other language's page instead of leaving it saying less.
    """
    if len(words.steps) != len(expl.sections):
        raise ValueError(
            f"{expl.title!r} has {len(expl.sections)} steps, the words give "
            f"{len(words.steps)}: {[s.title for s in expl.sections]}"
        )
    steps = []
    pairs = [(expl.source, words.source)]
    for sec, (title, text) in zip(expl.sections, words.steps, strict=True):
        pairs.append((f"{plain_heading(sec.title)} {sec.text}", f"{plain_heading(title)} {text}"))
        steps.append(
            replace(sec, title=title, text=text, items=[_in_words(i, words) for i in sec.items])
        )
    for en, other in pairs:
        if _numbers_of(en, expl.lang) != _numbers_of(other, words.lang):
            raise ValueError(
                f"not the same numbers: {_numbers_of(en, expl.lang)} in {en!r}, "
                f"{_numbers_of(other, words.lang)} in {other!r}"
            )
    return replace(expl, source=words.source, sections=steps, lang=words.lang)


def example(
    name: str,
    precision: int | None = None,
    heading: int = 3,
    after: Mapping[str, str] | None = None,
    words: Words | None = None,
    labelled: bool = False,
) -> str:
    """A worked example of ``attnref explain``, every matrix as display math (``labelled``:
    each row's token at its left, `attention_ref.render.to_book`).

    Step headings are written in plain words (`plain_heading`). ``after`` maps the start of a
    step's heading to markdown (a figure) placed at the end of that step. ``words`` tells the
    example in another language of the book (`translated`): the Portuguese pages show the
    English pages' examples, the same matrices and numbers.
    """
    from attention_ref.worked.registry import explain_example

    expl = explain_example(name)
    if words is not None:
        expl = translated(expl, words)
    p = precision if precision is not None else expl.precision
    return told(expl, p, heading, after or {}, labelled)


def told(
    expl: Explanation,
    precision: int,
    heading: int,
    after: Mapping[str, str],
    labelled: bool = True,
) -> str:
    """An explanation as the book shows it (`example`'s body, for an explanation at hand):
    every matrix as display math, step headings in plain words, ``after``'s markdown at the
    end of the step whose heading starts with its key (`ValueError` where none does)."""
    text = to_book(expl, precision, heading=heading, labelled=labelled)
    marks = "#" * heading + " "
    out: list[str] = []
    pending = ""
    for line in text.split("\n"):
        if line.startswith(marks):
            out.append(pending)
            pending = ""
            title = plain_heading(line[len(marks) :])
            line = marks + title
            for start, extra in after.items():
                if title.startswith(start):
                    pending = extra
        out.append(line)
    out.append(pending)
    missing = [k for k in after if not any(o.startswith(marks + k) for o in out)]
    if missing:
        raise ValueError(f"no step of {expl.title!r} starts with {missing}")
    return "\n".join(out)


def results(name: str = "comparison.json") -> Any:  # Any: whatever the JSON file holds
    """A committed results file (JSON parsed, text otherwise)."""
    path = RESULTS / name
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else text


# --- numbers as each language of the book writes them -----------------------------------


#: a decimal point between two digits
_POINT = re.compile(r"(?<=\d)\.(?=\d)")
#: a decimal mark as LaTeX writes it: a comma in braces, so that KaTeX does not space it
_MATH_MARK = {".": ".", ",": "{,}"}


def prose(text: str, lang: str) -> str:
    """``text`` with each decimal point between two digits written in ``lang``'s decimal mark
    (`attention_ref.render.DECIMAL_MARK`: ``0.5`` is ``0,5`` in Portuguese); for math use
    `math_said`."""
    return _POINT.sub(DECIMAL_MARK[lang], text)


def math_said(latex: str, lang: str) -> str:
    """`prose` for LaTeX: the decimal comma written ``{,}`` (KaTeX would space a bare one)."""
    return _POINT.sub(_MATH_MARK[DECIMAL_MARK[lang]], latex)
