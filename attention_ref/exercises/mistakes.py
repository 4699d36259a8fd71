r"""What a mistake of the catalogue is (`attention_ref.exercises.catalogue` holds the entries).

Each `Kind` of mistake is a name, its words in English and Portuguese, the problems it applies
to (``variants``: the homework's ``mha``, ``gqa``, ``window``, ``rope``) and how to reproduce it
on a problem: `Kind.instances` gives the `Mistake` objects that exist for that problem's shape
(a transposed weight per head, a permutation of the heads…), whatever its numbers; whether
one *shows* on the numbers drawn is `changes_something`. A `Mistake` is a change to the chain
of `attention_ref.exercises.chain`, of one of three sorts:

* ``stages``: formulas used instead of the chain's, by stage name (``"S"``: no scaling);
* ``written``: how a step is written, the computation unchanged (``"Q"``: you gave Qᵀ);
* ``adjust``: a hook on each computed step that may use the student's numbers (the slip in one
  entry), carried on to the next steps or only written (``adjust_carries``).

A mistake of ``rank`` 1 or more (the slips) is tried only when no mistake of a lower rank
reproduces the answer on its own.

The grader (`attention_ref.exercises.grader`) knows none of them by name: it walks the
catalogue, keeps what changes something on the problem and names a mistake, or two together,
only when recomputing with it reproduces every step the student gave. The generator of
exercises (`attention_ref.exercises.draw`) walks it too: no drawn problem hides a mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np

from attention_ref.exercises.chain import (
    Adjust,
    Data,
    Given,
    Iv,
    Key,
    Run,
    Stage,
    StageFn,
    run_chain,
)
from attention_ref.exercises.intervals import right_at
from attention_ref.render import LANGS, said


@dataclass(frozen=True)
class Style:
    """How the grader writes numbers and steps in a language (the slip's words need them)."""

    lang: str
    number: Callable[[float], str]
    step: Callable[[Key], str]
    row: Callable[[Key, int], str]


@dataclass(frozen=True, kw_only=True)
class Mistake:
    """One mistake on one problem: a change to the chain, and its words per language."""

    name: str
    words: Mapping[str, str]
    stages: Mapping[str, StageFn] = field(default_factory=dict)
    written: Mapping[str, Callable[[Iv], Iv]] = field(default_factory=dict)
    adjust: Adjust | None = None
    adjust_carries: bool = True
    rank: int = 0
    #: the steps, one of which an answer must give for the grader to try it (empty: any):
    #: where it gives none, another mistake writes the same numbers
    given: frozenset[str] = frozenset()
    #: the words from what the run recorded (``None``: ``words`` as they are)
    describe: Callable[[Mapping[str, object], Style], str] | None = None
    #: the mistake written consistently into the backward too (its gradients' formulas the
    #: mistaken forward's): tried only on a chain with a backward
    backward: bool = False

    def text(self, notes: Mapping[str, object], style: Style) -> str:
        """The mistake in words, in ``style.lang``."""
        if self.describe is not None:
            return self.describe(notes, style)
        return self.words[style.lang]

    def compatible(self, other: Mistake) -> bool:
        """Whether the two can happen together: they change different stages and writings,
        and at most one looks at the student's numbers."""
        return (
            not set(self.stages) & set(other.stages)
            and not set(self.written) & set(other.written)
            and (self.adjust is None or other.adjust is None)
        )


@dataclass(frozen=True)
class Kind:
    """An entry of the catalogue: a name, its words (templates) and how to reproduce it."""

    name: str
    words: Mapping[str, str]
    instances: Callable[[Data, Kind], Iterable[Mistake]]
    #: whether no problem of this shape can show it (``d_k = 1``: no scaling divides by 1);
    #: the statement then says the check cannot tell it apart
    blind: Callable[[Data], bool] = lambda d: False
    #: `Mistake.given`, for each of its mistakes
    given: frozenset[str] = frozenset()
    #: whether it is a mistake of the gradients alone: in the catalogue of a problem whose
    #: chain has a backward
    backward_only: bool = False
    #: more instances, read from the answer where the catalogue cannot list them all (the
    #: heads in any of 8! orders): the data, the kind, the steps given, the run of the right
    #: chain rounded as asked, the decimals asked
    read: Callable[[Data, Kind, Mapping[Key, Given], Run, int], Iterable[Mistake]] | None = None

    def mistake(self, name: str = "", **kw: object) -> Mistake:
        """A `Mistake` of this kind; the words' ``{fields}`` filled per language from
        ``kw["fields"]`` (a mapping lang -> fields), the rest passed on."""
        fields: Mapping[str, Mapping[str, object]] = kw.pop("fields", {})  # type: ignore[assignment]
        words = {lang: self.words[lang].format(**fields.get(lang, {})) for lang in LANGS}
        kw.setdefault("given", self.given)
        return Mistake(name=name or self.name, words=words, **kw)  # type: ignore[arg-type]


def num(x: float, lang: str) -> str:
    """``x`` to 4 significant digits, with ``lang``'s decimal mark (`render.said`)."""
    return said(x, ".4g", lang)


def sup(i: int) -> str:
    """Head ``i`` (0-based) as a superscript: ``⁽¹⁾``."""
    return "⁽" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(i + 1)) + "⁾"


def single_token(d: Data) -> bool:
    """One token: every score, mask and softmax mistake gives the same 1 × 1 numbers (a
    `Kind.blind`)."""
    return int(d.trace.X.shape[0]) == 1


def one(kind: Kind, **kw: object) -> Iterable[Mistake]:
    """The kind's one mistake on a problem."""
    return [kind.mistake(**kw)]


#: A mistake made in some query heads only, said after its words (`in_heads`).
IN_HEADS_WORDS: Final = {
    "en": {"one": ", in head {heads} only", "many": ", in heads {heads} only", "and": " and "},
    "pt": {"one": ", só na cabeça {heads}", "many": ", só nas cabeças {heads}", "and": " e "},
}


def heads_said(heads: Iterable[int], lang: str) -> str:
    """Query heads (0-based) as the words say them, from 1: ``1``, ``1 and 3``, ``1, 2 and 4``."""
    w = IN_HEADS_WORDS[lang]
    names = [str(i + 1) for i in sorted(heads)]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + w["and"] + names[-1]
    return w["one" if len(names) == 1 else "many"].format(heads=listed)


def in_heads(m: Mistake, heads: frozenset[int], stages: Sequence[Stage]) -> Mistake | None:
    """``m`` made in the query ``heads`` only (0-based), the right formulas in the others:
    its stages per query head wrapped, its words followed by the heads (`heads_said`).
    ``None`` for a mistake that is not one of the query heads' formulas: one that changes a
    stage of the K/V heads or after the heads, writes a step another way, reads the
    student's numbers, or is a slip."""
    per_head = {s.name: s.fn for s in stages if s.per_head and s.count is None}
    if m.rank or m.written or m.adjust is not None or not set(m.stages) <= set(per_head):
        return None

    def wrapped(fn: StageFn, right: StageFn) -> StageFn:
        return lambda d, e, i: fn(d, e, i) if i in heads else right(d, e, i)

    said = {lang: heads_said(heads, lang) for lang in LANGS}
    describe = m.describe
    return replace(
        m,
        stages={name: wrapped(fn, per_head[name]) for name, fn in m.stages.items()},
        words={lang: m.words[lang] + said[lang] for lang in LANGS},
        describe=None
        if describe is None
        else (lambda notes, style: describe(notes, style) + said[style.lang]),
    )


def changes_something(
    d: Data,
    m: Mistake,
    stages: Sequence[Stage],
    decimals: int,
    right: Run | None = None,
    exact: Run | None = None,
    keys: Iterable[Key] | None = None,
) -> bool:
    """Whether the mistake, written to ``decimals`` places, differs on a step (of ``keys``;
    ``None``: any) from what the exact computation accepts: more than the grading tolerance
    (a mistake that changes nothing cannot be told apart); a mistake of rank 1 or more
    depends on the answer, so it is kept. ``right``: the run rounded as asked; ``exact``: the
    exact run."""
    if m.rank:
        return True
    right = right or run_chain(d, stages, decimals=decimals, asked=decimals)
    exact = exact or run_chain(d, stages, decimals=None, asked=decimals)
    wrong = run_chain(d, stages, decimals=None, asked=decimals, mistakes=[m], base=exact)
    wanted = None if keys is None else set(keys)
    for key, band in right.raw.items():
        if wanted is not None and key not in wanted:
            continue
        if key not in wrong.raw:
            return True
        value = wrong.raw[key].lo
        if value.shape != band.shape or bool(np.isnan(value).any()):
            return True
        rounded = np.where(np.isinf(value), value, value.round(decimals))
        if not bool(right_at(Given(rounded, np.full(value.shape, decimals)), band, decimals).all()):
            return True
    return False


__all__ = [
    "IN_HEADS_WORDS",
    "LANGS",
    "Kind",
    "Mistake",
    "Style",
    "changes_something",
    "heads_said",
    "in_heads",
    "num",
    "one",
    "single_token",
    "sup",
]
