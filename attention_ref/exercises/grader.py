r"""The grader of ``attnref check``: each step right or not, and the mistakes that explain it
(what it found is data, `attention_ref.exercises.verdicts`, written out by `report_lines`).

**Grading by the precision asked: one definition of right.** The exercise asks for :math:`p`
decimals (3 unless it says otherwise). The chain of `attention_ref.exercises.chain` gives, for
every step, the interval of its true value given the student's own earlier steps, carried
rounded or not (where they gave them; elsewhere each earlier step rounded to :math:`p` places
or not). An entry is **right** when it is a value of that interval rounded to :math:`p`
decimals, either way at an exact tie (`attention_ref.exercises.intervals.right_at`): judged at
:math:`p` places whatever digits are written (``2`` is 2.000, right for 2.000 and wrong for
0.707; ``2.7`` is 2.700), and an entry with more places is right only if it rounds to a right
value. The same definition accepts a step the run then carries on from, and a mistake's step
in the diagnoses. Not right, a matrix written wholly to fewer places than asked whose entries
are the true ones rounded to those places is "give :math:`p` decimals"; any other entry that
is not right is wrong. Infinities (masked entries) count as no decimals either way.

**Diagnoses.** When a step is wrong, the catalogue (`attention_ref.exercises.catalogue`) is
walked: each mistake is recomputed through the same chain (with the same rounding, and the
student's own numbers where they follow from it), and named only when it reproduces **every**
step given, each entry within half a unit of what was written. Mistakes of a higher rank (the
slip in one entry) come only when none of a lower rank does; two mistakes together only when no
single one does, and then both are named.

**Stand-ins for −∞.** An entry written as a large negative number (at most
`attention_ref.exercises.answer_words.STAND_IN`, ``-1e9``) where a −∞ belongs (a masked entry
of a masked step) is what code writes for a mask, not an answer: the check refuses the answer
(`InputError`, in its language) with the spelling to write, ``"-inf"``. Anywhere else a large
number is a number, graded like any other.

**Every problem alike.** A problem carries its chain (`attention_ref.exercises.answer.Chain`:
its stages, the catalogue of its features, `attention_ref.exercises.catalogue.catalogue_of`,
and the layout of its answer); the homework's attention and ``--variant gqa+rope`` are graded
and walked by the same code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Final

import numpy as np

from attention_ref.exercises.answer import Answer, Chain, Problem, load_answer, parse_answer
from attention_ref.exercises.answer_words import error, spellings, step_label, words
from attention_ref.exercises.catalogue import CATALOGUE, Kind, Mistake, Style, mistakes_for
from attention_ref.exercises.chain import (
    Data,
    Given,
    Iv,
    Key,
    Run,
    chain_keys,
    right_at,
    run_chain,
    within,
)
from attention_ref.exercises.features import Features
from attention_ref.exercises.intervals import quiet
from attention_ref.exercises.mistakes import changes_something, in_heads
from attention_ref.exercises.verdicts import (
    Diagnosis,
    Off,
    Report,
    Status,
    Verdict,
    math_name,
    number,
    report_at,
    report_lines,
    row_name,
)

#: The most candidate mistakes tried two at a time (a problem with many heads of square
#: weights has hundreds; pairs of them would take minutes).
MAX_PAIRED: Final = 64

# --- grading -----------------------------------------------------------------------------------


def _stages(chain: Chain, steps: Sequence[Key]) -> tuple:
    """The problem's stages: its forward, and its backward only when a gradient is given."""
    if any(k[0].startswith("grad.") for k in steps):
        return chain.stages
    return tuple(s for s in chain.stages if not s.name.startswith("grad."))


@quiet
def _verdict(key: Key, g: Given, band: Iv, exact: Iv, p: int) -> Verdict:
    """One step's verdict (the rules of the module docstring)."""
    if g.value.shape != band.shape:
        return Verdict(
            key,
            Status.WRONG,
            band.lo.size,
            shape=band.shape,  # type: ignore[arg-type]
            given_shape=tuple(g.value.shape),
        )  # type: ignore[arg-type]
    u = 0.5 * 10.0**-p
    right = right_at(g, band, p)  # the one definition of right (zeros put back: 2.7 is 2.700)
    # not right, but the right values rounded to the places written, in a matrix written wholly
    # to fewer places than asked: "give p decimals"; one entry past that (2 for 1.414 beside 1
    # for 0.707) and every entry not right is wrong
    finite = np.isfinite(g.value)
    own = within(g.value, band, 0.5 * 10.0 ** -np.minimum(g.decimals, p).astype(np.float64))
    few = ~right & finite & own
    short = not bool((finite & (g.decimals >= p)).any())
    if not short or bool((~right & ~few).any()):
        few = np.zeros_like(right)
    status = (
        Status.WRONG
        if bool((~right & ~few).any())
        else (Status.FEW_DECIMALS if bool(few.any()) else Status.RIGHT)
    )
    off = tuple(
        Off(
            r,
            c,
            float(g.value[r, c]),
            int(g.decimals[r, c]),
            float(exact.lo[r, c]),
            Status.FEW_DECIMALS if bool(few[r, c]) else Status.WRONG,
        )
        for r, c in np.argwhere(~right).tolist()
    )
    finite = right & np.isfinite(g.value) & np.isfinite(exact.lo)
    gap = float(np.abs(g.value - exact.lo)[finite].max()) if bool(finite.any()) else 0.0
    return Verdict(key, status, g.value.size, off, carried=gap if gap > u + 1e-9 else 0.0)


def _reproduces(
    d: Data, stages: tuple, ans: Answer, mistakes: Sequence[Mistake], base: Run
) -> dict | None:
    """The run's notes when the mistakes reproduce every given step, else ``None``; the notes
    also hold ``"given"``, the steps given in the order of the computation."""
    p = ans.problem.decimals

    def keep_going(key: Key, shown: Iv) -> bool:
        g = ans.steps.get(key)
        return g is None or (g.value.shape == shown.shape and bool(right_at(g, shown, p).all()))

    run = run_chain(
        d,
        stages,
        decimals=p,
        asked=p,
        given=ans.steps,
        mistakes=mistakes,
        until=keep_going,
        base=base,
    )
    return None if run.stopped else {**run.notes, "given": [k for k in run.raw if k in ans.steps]}


def diagnose(
    d: Data,
    stages: tuple,
    ans: Answer,
    style: dict[str, Style],
    band: Run,
    catalogue: Sequence[Kind] = CATALOGUE,
    *,
    singles: bool = False,
) -> tuple[list[Diagnosis], bool]:
    """Single mistakes that reproduce the answer, rank by rank; else pairs, rank by rank (the
    higher rank of the two), when there are at most `MAX_PAIRED` candidates. ``band``: the
    run without mistakes (its steps before those a mistake changes are reused). ``singles``:
    single mistakes of rank 0 only (no slip, no pair). Returns the diagnoses and whether pairs
    were tried."""
    names = {k[0] for k in ans.steps}
    candidates = [
        m
        for m in mistakes_for(d, stages, ans.problem.decimals, catalogue)
        if (not m.given or m.given & names) and not (singles and m.rank)
    ]
    found: list[Diagnosis] = []
    given, p = list(ans.steps), ans.problem.decimals
    runs: list[Run] = []  # the runs without mistakes, rounded and exact: computed once, if asked

    def right_runs() -> list[Run]:
        if not runs:
            runs.extend(
                (
                    run_chain(d, stages, decimals=p, asked=p),
                    run_chain(d, stages, decimals=None, asked=p),
                )
            )
        return runs

    def changes_a_given_step(m: Mistake) -> bool:
        """A mistake that changes none of the steps given cannot be their diagnosis (RoPE's
        positions counted from 1 leave the scores as they are: they depend on t − u only)."""
        right, exact = right_runs()
        return changes_something(d, m, stages, p, right, exact, keys=given)

    # the instances a kind reads from the answer (the heads in any of h! orders)
    for kind in catalogue:
        if kind.read is not None and not singles:
            candidates += kind.read(d, kind, ans.steps, right_runs()[0], p)

    def attempt(ms: Sequence[Mistake]) -> None:
        notes = _reproduces(d, stages, ans, ms, band)
        if notes is None or (len(ms) == 1 and not changes_a_given_step(ms[0])):
            return  # (a pair is tried only where no single mistake reproduces the answer)
        texts = {lang: tuple(m.text(notes, s) for m in ms) for lang, s in style.items()}
        if all(texts["en"] != f.texts["en"] for f in found):
            found.append(Diagnosis(tuple(m.name for m in ms), texts))

    # a mistake of the query heads' formulas made in the heads whose steps are wrong only,
    # tried after every mistake made in every head, before the slips
    wrong = _wrong_heads(ans, band)
    partial = [
        x
        for m in candidates
        if 0 < len(wrong) < d.trace.h and (x := in_heads(m, wrong, stages)) is not None
    ]
    ranks = sorted({m.rank for m in candidates})
    for rank in ranks:
        for m in candidates:
            if m.rank == rank:
                attempt([m])
        if found:
            return found, False
        if rank == 0:
            for m in partial:
                attempt([m])
            if found:
                return found, False
    if singles or len(candidates) > MAX_PAIRED:
        return found, False
    for rank in ranks:
        for a, b in combinations(candidates, 2):
            if max(a.rank, b.rank) == rank and a.compatible(b):
                attempt([a, b])
        if found:
            break
    return found, True


def _wrong_heads(ans: Answer, band: Run) -> frozenset[int]:
    """The query heads (0-based) with a step given that is not right."""
    p = ans.problem.decimals
    return frozenset(
        i
        for (name, i), g in ans.steps.items()
        if i is not None
        and not name.startswith(("kv.", "grad."))
        and (name, i) in band.raw
        and (
            g.value.shape != band.raw[name, i].shape
            or not bool(right_at(g, band.raw[name, i], p).all())
        )
    )


def _wrong(v: Verdict) -> Verdict:
    """A step short of decimals as a wrong one (a mistake reproduces it as written)."""
    if v.status is not Status.FEW_DECIMALS:
        return v
    off = tuple(replace(o, status=Status.WRONG) for o in v.off)
    return replace(v, status=Status.WRONG, off=off)


def _refuse_stand_ins(ans: Answer, exact: Run, features: Features) -> None:
    """Raise the `InputError` for the first large number (``-1e9``) written where a −∞ belongs:
    a masked entry, in the order of the computation (`Answer.large`). Only a step with a masked
    entry can hold one; elsewhere a large number is a number, graded like any other (a wrong
    gradient of −1502 is wrong, not a stand-in)."""
    lang = ans.problem.lang
    for key in exact.raw:
        want = exact.raw[key].lo
        if key not in ans.large or not bool(np.isinf(want).any()):
            continue
        same = tuple(want.shape) == tuple(ans.steps[key].value.shape)
        for (r, c), text in sorted(ans.large[key].items()):
            if not same or math.isinf(float(want[r, c])):  # another shape: any entry may be
                where = words(
                    lang, "entry", step=step_label(key, lang, features), row=r + 1, col=c + 1
                ).rstrip(",")
                raise error(lang, "stand_in", where=where, shown=text, spellings=spellings())


def check_answer(ans: Answer, catalogue: Sequence[Kind] | None = None) -> Report:
    """Judge every given step, then, if one is wrong, look for the mistakes of the
    ``catalogue`` that explain it (``None``: the problem's own, `Chain.catalogue`)."""
    prob = ans.problem
    d = Data.of(prob.trace, ans.G)
    chain = prob.chain
    stages = _stages(chain, list(ans.steps))
    catalogue = chain.catalogue if catalogue is None else catalogue
    f, p = chain.features, prob.decimals
    band = run_chain(d, stages, decimals=p, asked=p, given=ans.steps)
    exact = run_chain(d, stages, decimals=None, asked=p)
    _refuse_stand_ins(ans, exact, f)
    order = [k for k in chain_keys(d, stages) if k in ans.steps]
    verdicts = tuple(_verdict(k, ans.steps[k], band.raw[k], exact.raw[k], p) for k in order)
    report = Report(
        prob.source, prob.lang, p, prob.trace.tokens, verdicts, variant=f.name, heads=prob.trace.h
    )
    short = any(v.status is Status.FEW_DECIMALS for v in verdicts)
    if report.first_wrong is None and not short:
        return report
    style = {lang: _style(lang, p, prob.trace.tokens, f) for lang in ("en", "pt")}
    singles = report.first_wrong is None
    found, paired = diagnose(d, stages, ans, style, band, catalogue, singles=singles)
    if singles:
        if not found:
            return report  # "give p decimals": nothing but the rounding to fewer places
        # a mistake of the catalogue (no slip) reproduces the entries as written (1 is
        # Q Kᵀ's 1 unscaled, not 0.707 rounded to 0 places): they are wrong, the mistake named
        verdicts = tuple(_wrong(v) for v in verdicts)
    return Report(
        prob.source,
        prob.lang,
        p,
        prob.trace.tokens,
        verdicts,
        tuple(found),
        pairs_tried=paired,
        variant=f.name,
        heads=prob.trace.h,
    )


def check_document(
    doc: object,
    problem: Problem | None = None,
    *,
    base: Path | None = None,
    lang: str | None = None,
) -> Report:
    """Check a decoded answer document (decode with
    `attention_ref.exercises.answer.read_answer_text`, so that its decimals are kept) against
    ``problem`` (``None``: the one the document names). Reads no file unless ``base`` is given
    (the folder of an ``"input": FILE``); bad documents raise `InputError`. ``lang``: the
    language of the report and the errors (``None``: the problem's)."""
    return check_answer(parse_answer(doc, base, problem, lang=lang))


def check_file(path: str | Path, lang: str | None = None, fallback: str = "en") -> Report:
    """``attnref check PATH``: read, parse and check an answer file (``lang``: the report's
    language and its errors'; ``None``: the answer's, else ``fallback``, the student's)."""
    return check_answer(load_answer(path, lang, fallback))


def _style(lang: str, p: int, tokens: tuple[str, ...], features: Features) -> Style:
    return Style(
        lang,
        lambda x: number(x, p, lang),
        lambda key: math_name(key, lang, features),
        lambda key, r: row_name(tokens, key, r),
    )


__all__ = [
    "Diagnosis",
    "Report",
    "Status",
    "Verdict",
    "check_answer",
    "check_document",
    "check_file",
    "diagnose",
    "report_at",
    "report_lines",
]
