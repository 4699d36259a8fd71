r"""The grader of ``attnref check``: each step right or not, and the mistakes that explain it.

**Grading by the precision asked.** The exercise asks for :math:`p` decimals (3 unless it says
otherwise); :math:`u = \tfrac12 10^{-p}`. The chain of `attention_ref.worked.steps` gives, for
every step, the interval of what a student can reach who rounds each earlier step to :math:`p`
decimals (and carries on from the rounded values, the unrounded ones, or their own numbers
where they gave them). An entry written with at least :math:`p` decimals is **right** when it
lies in that interval widened by :math:`u`: it is the exact value rounded as asked, give or
take what the rounding of earlier steps carries, computed entry by entry, never a constant.
An entry written with fewer decimals in a matrix that has :math:`p` decimals elsewhere is read
with its zeros put back (``0.67`` as 0.670) and graded the same way. In a matrix with no entry
to :math:`p` decimals, an entry is right only when it *is* the value to :math:`p` places with
its zeros dropped (``2`` for 2.000), from the exact computation or from the student's own
earlier numbers: an answer rounded to fewer decimals is not taken for one that kept them.
Otherwise, if it is the value at the decimals written, the verdict is "give :math:`p`
decimals", and else wrong. Infinities (masked entries) count as no decimals either way.

**Diagnoses.** When a step is wrong, the catalogue (`attention_ref.worked.mistakes`) is
walked: each mistake is recomputed through the same chain (with the same rounding, and the
student's own numbers where they follow from it), and named only when it reproduces **every**
step given, each entry within half a unit of what was written. Mistakes of a higher rank (the
slip in one entry) come only when none of a lower rank does; two mistakes together only when no
single one does, and then both are named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations
from pathlib import Path
from typing import Final

import torch

from attention_ref.worked.answer import Answer, Problem, label, load_answer, parse_answer
from attention_ref.worked.mistakes import CATALOGUE, Kind, Mistake, Style, mistakes_for, sup
from attention_ref.worked.steps import (
    BACKWARD,
    FORWARD,
    Data,
    Given,
    Iv,
    Key,
    Run,
    chain_keys,
    loosely,
    run_chain,
    within,
)


class Status(StrEnum):
    """The verdict of an entry or a step."""

    RIGHT = "right"
    FEW_DECIMALS = "few_decimals"
    WRONG = "wrong"


@dataclass(frozen=True)
class Off:
    """An entry that is not right: where (0-based), what was written, the exact value."""

    row: int
    col: int
    yours: float
    yours_decimals: int
    right: float
    status: Status


@dataclass(frozen=True)
class Verdict:
    """One step given: its status, the entries not right, the shape expected when the shape
    differs, and how far right entries are from the exact value beyond half a unit (what the
    rounding of earlier steps explains; 0 when nothing)."""

    key: Key
    status: Status
    entries: int
    off: tuple[Off, ...] = ()
    shape: tuple[int, int] | None = None
    given_shape: tuple[int, int] | None = None
    carried: float = 0.0

    @property
    def label(self) -> str:
        return label(self.key)

    @property
    def right(self) -> bool:
        return self.status is Status.RIGHT


@dataclass(frozen=True)
class Diagnosis:
    """Mistakes that together reproduce the answer (one, or two), named and in words."""

    names: tuple[str, ...]
    texts: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Report:
    """The check of one answer, as data: what the printed report and the gradebook show."""

    source: str
    lang: str
    decimals: int
    tokens: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    diagnoses: tuple[Diagnosis, ...] = ()

    @property
    def steps_given(self) -> int:
        return len(self.verdicts)

    @property
    def steps_right(self) -> int:
        return sum(v.right for v in self.verdicts)

    @property
    def all_right(self) -> bool:
        return self.steps_right == self.steps_given

    @property
    def first_wrong(self) -> Verdict | None:
        """The first wrong step in the order of the computation (not one short of decimals)."""
        return next((v for v in self.verdicts if v.status is Status.WRONG), None)

    @property
    def diagnosis_names(self) -> list[tuple[str, ...]]:
        return [d.names for d in self.diagnoses]

    def to_json(self) -> dict[str, object]:
        """The report as JSON: counts, the first wrong step (its label), the diagnoses
        (catalogue names; a pair when two mistakes together reproduce it), every verdict."""
        first = self.first_wrong
        return {
            "problem": self.source, "lang": self.lang, "decimals": self.decimals,
            "steps_given": self.steps_given, "steps_right": self.steps_right,
            "all_right": self.all_right, "first_wrong": first.label if first else None,
            "diagnoses": [list(d.names) for d in self.diagnoses],
            "diagnosis_texts": [list(d.texts[self.lang]) for d in self.diagnoses],
            "verdicts": [
                {"step": v.label, "verdict": str(v.status), "entries": v.entries,
                 "shape": list(v.shape) if v.shape else None,
                 "off": [{"row": o.row + 1, "col": o.col + 1, "yours": _json_number(o.yours),
                          "right": _json_number(o.right), "verdict": str(o.status)}
                         for o in v.off]}
                for v in self.verdicts
            ],
        }  # fmt: skip


def _json_number(x: float) -> float | str:
    return x if math.isfinite(x) else ("-inf" if x < 0 else "inf")


# --- grading -----------------------------------------------------------------------------------


def _stages(steps: Sequence[Key]) -> tuple:
    """The forward, and the backward when a gradient is given."""
    return FORWARD + BACKWARD if any(k[0].startswith("grad.") for k in steps) else FORWARD


def _verdict(key: Key, g: Given, band: Iv, exact: Iv, yours: Iv, p: int) -> Verdict:
    """One step's verdict (the rules of the module docstring)."""
    if g.value.shape != band.shape:
        return Verdict(key, Status.WRONG, band.lo.numel(), shape=band.shape,  # type: ignore[arg-type]
                       given_shape=tuple(g.value.shape))  # type: ignore[arg-type]  # fmt: skip
    u = 0.5 * 10.0**-p
    shows = (g.decimals >= p) & torch.isfinite(g.value)  # entries written to p decimals
    full = (g.decimals >= p) | bool(shows.any())  # then all are read with zeros put back
    right = torch.where(full, within(g.value, band, u),
                        within(g.value, exact, u) | within(g.value, yours, u))  # fmt: skip
    few = ~right & (g.decimals < p) & loosely(g, band, p)  # right at the decimals written
    status = Status.WRONG if bool((~right & ~few).any()) else (
        Status.FEW_DECIMALS if bool(few.any()) else Status.RIGHT)  # fmt: skip
    off = tuple(
        Off(r, c, float(g.value[r, c]), int(g.decimals[r, c]), float(exact.lo[r, c]),
            Status.FEW_DECIMALS if bool(few[r, c]) else Status.WRONG)
        for r, c in (~right).nonzero().tolist()
    )  # fmt: skip
    finite = right & torch.isfinite(g.value) & torch.isfinite(exact.lo)
    gap = float((g.value - exact.lo)[finite].abs().max()) if bool(finite.any()) else 0.0
    return Verdict(key, status, g.value.numel(), off, carried=gap if gap > u + 1e-9 else 0.0)


def _reproduces(
    d: Data, stages: tuple, ans: Answer, mistakes: Sequence[Mistake], base: Run
) -> dict | None:
    """The run's notes when the mistakes reproduce every given step, else ``None``; the notes
    also hold ``"given"``, the steps given in the order of the computation."""
    p = ans.problem.decimals

    def keep_going(key: Key, shown: Iv) -> bool:
        g = ans.steps.get(key)
        return g is None or (g.value.shape == shown.shape and bool(loosely(g, shown, p).all()))

    run = run_chain(d, stages, decimals=p, asked=p, given=ans.steps, mistakes=mistakes,
                    until=keep_going, base=base)  # fmt: skip
    return None if run.stopped else {**run.notes, "given": [k for k in run.raw if k in ans.steps]}


def diagnose(
    d: Data,
    stages: tuple,
    ans: Answer,
    style: dict[str, Style],
    band: Run,
    catalogue: Sequence[Kind] = CATALOGUE,
) -> list[Diagnosis]:
    """Single mistakes that reproduce the answer, rank by rank; else pairs, rank by rank (the
    higher rank of the two). ``band``: the run without mistakes (its steps before those a
    mistake changes are reused)."""
    candidates = mistakes_for(d, stages, ans.problem.decimals, catalogue)
    found: list[Diagnosis] = []

    def attempt(ms: Sequence[Mistake]) -> None:
        notes = _reproduces(d, stages, ans, ms, band)
        if notes is None:
            return
        texts = {lang: tuple(m.text(notes, s) for m in ms) for lang, s in style.items()}
        if all(texts["en"] != f.texts["en"] for f in found):
            found.append(Diagnosis(tuple(m.name for m in ms), texts))

    ranks = sorted({m.rank for m in candidates})
    for rank in ranks:
        for m in candidates:
            if m.rank == rank:
                attempt([m])
        if found:
            return found
    for rank in ranks:
        for a, b in combinations(candidates, 2):
            if max(a.rank, b.rank) == rank and a.compatible(b):
                attempt([a, b])
        if found:
            return found
    return found


def check_answer(ans: Answer, catalogue: Sequence[Kind] = CATALOGUE) -> Report:
    """Judge every given step, then, if one is wrong, look for the mistakes of the
    ``catalogue`` that explain it."""
    prob = ans.problem
    d = Data.of(prob.trace, ans.G)
    stages = _stages(list(ans.steps))
    p = prob.decimals
    band = run_chain(d, stages, decimals=p, asked=p, given=ans.steps)
    exact = run_chain(d, stages, decimals=None, asked=p)
    yours = run_chain(d, stages, decimals=None, asked=p, given=ans.steps)
    order = [k for k in chain_keys(d, stages) if k in ans.steps]
    verdicts = tuple(_verdict(k, ans.steps[k], band.raw[k], exact.raw[k], yours.raw[k], p)
                     for k in order)  # fmt: skip
    report = Report(prob.source, prob.lang, p, prob.trace.tokens, verdicts)
    if report.first_wrong is None:
        return report
    style = {lang: _style(lang, p, prob.trace.tokens) for lang in ("en", "pt")}
    return Report(prob.source, prob.lang, p, prob.trace.tokens, verdicts,
                  tuple(diagnose(d, stages, ans, style, band, catalogue)))  # fmt: skip


def check_document(
    doc: object, problem: Problem | None = None, *, base: Path | None = None
) -> Report:
    """Check a decoded answer document (decode with
    `attention_ref.worked.answer.read_answer_text`, so that its decimals are kept) against
    ``problem`` (``None``: the one the document names). Reads no file unless ``base`` is given
    (the folder of an ``"input": FILE``); bad documents raise `InputError`."""
    return check_answer(parse_answer(doc, base, problem))


def check_file(path: str | Path) -> Report:
    """``attnref check PATH``: read, parse and check an answer file."""
    return check_answer(load_answer(path))


# --- the report in words ------------------------------------------------------------------------

#: The words of the printed report, per language.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "head": "Checking your answer to {source}: {given}, graded to {p} decimals.",
        "one": "1 step given", "many": "{n} steps given", "right": "right",
        "carried": "right; off the exact value by up to {gap}, which the rounding of earlier "
        "steps explains",
        "few": "give {p} decimals", "wrong": "WRONG",
        "of": "{k} of {n} entries off", "few_of": "{k} of {n} entries have fewer than {p} "
        "decimals and are not the exact value to {p} decimals",
        "shape": "shape {got}, expected {want}", "entry": "[{row}, {col}] yours {yours}, "
        "right {right}", "more": "and {k} more",
        "all": "Every step you gave is right.",
        "not_yet": "Not right yet: give {p} decimals in {steps} (the exercise asks for {p}).",
        "first": "First wrong step: {label}, i.e. {math}.",
        "one_diag": "Diagnosis: {text}.", "many_diag": "Diagnosis (each of these reproduces "
        "it): {text}.", "pair": "two mistakes together: {a}; and {b}", "or": "; or ",
        "redo": "Recomputing with this mistake reproduces every step you gave.",
        "redo_pair": "Recomputing with both mistakes reproduces every step you gave.",
        "none": "No mistake of the catalogue (scaling, softmax direction, mask, K Qᵀ, a "
        "transposed weight or step, the heads' order or V, W_O, a slip in one entry), alone "
        "or two together, reproduces your numbers: check the arithmetic of the first wrong "
        "step.",
    },
    "pt": {
        "head": "Conferindo a sua resposta a {source}: {given}, avaliação com {p} casas "
        "decimais.",
        "one": "1 passo dado", "many": "{n} passos dados", "right": "certo",
        "carried": "certo; difere do valor exato em até {gap}, o que o arredondamento dos "
        "passos anteriores explica",
        "few": "dê {p} casas decimais", "wrong": "ERRADO",
        "of": "{k} de {n} entradas erradas", "few_of": "{k} de {n} entradas têm menos de {p} "
        "casas e não são o valor exato com {p} casas",
        "shape": "formato {got}, esperado {want}", "entry": "[{row}, {col}] sua {yours}, "
        "certa {right}", "more": "e mais {k}",
        "all": "Todos os passos que você deu estão certos.",
        "not_yet": "Ainda não está certo: dê {p} casas decimais em {steps} (o exercício pede "
        "{p}).",
        "first": "Primeiro passo errado: {label}, isto é, {math}.",
        "one_diag": "Diagnóstico: {text}.", "many_diag": "Diagnóstico (cada um destes o "
        "reproduz): {text}.", "pair": "dois erros juntos: {a}; e {b}", "or": "; ou ",
        "redo": "Refazer a conta com esse erro reproduz todos os passos que você deu.",
        "redo_pair": "Refazer a conta com os dois erros reproduz todos os passos que você deu.",
        "none": "Nenhum erro do catálogo (escala, direção da softmax, máscara, K Qᵀ, um peso "
        "ou passo transposto, a ordem ou o V das cabeças, W_O, um erro de conta numa "
        "entrada), sozinho ou dois juntos, reproduz os seus números: confira as contas do "
        "primeiro passo errado.",
    },
}  # fmt: skip


#: The steps without a symbol, in words.
STEP_WORDS: Final = {"en": {"concat": "the concat", "output": "the output"},
                     "pt": {"concat": "a concatenação", "output": "a saída"}}  # fmt: skip


def math_name(key: Key, lang: str = "en") -> str:
    """The step as the book writes it: ``A⁽²⁾``, ``∂W_Q⁽¹⁾``, ``the concat``."""
    name, head = key
    grad = name.startswith("grad.")
    name = name[5:] if grad else name
    sym = {"scores": "QKᵀ", "S_masked": "S̃"}.get(name, name)
    if not grad and name in STEP_WORDS[lang]:
        return STEP_WORDS[lang][name]
    if head is not None:
        s = sup(head)
        sym = f"Q{s}K{s}ᵀ" if name == "scores" else f"{sym}{s}"
    return ("∂" if grad else "") + sym


def number(x: float, decimals: int, lang: str) -> str:
    """``x`` to ``decimals`` places (a decimal comma in Portuguese; ``-inf`` as ``−∞``)."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    s = f"{x:.{decimals}f}"
    return s.replace(".", ",") if lang == "pt" else s


#: Steps whose rows are not the tokens (the rows of a weight's gradient are X's columns).
_WEIGHT_GRADS: Final = frozenset({"grad.W_Q", "grad.W_K", "grad.W_V", "grad.W_O", "grad.b_O"})


def row_name(tokens: tuple[str, ...], key: Key, r: int) -> str:
    """Row ``r`` of a step: its token, or its number (from 1) for a weight's gradient."""
    return tokens[r] if key[0] not in _WEIGHT_GRADS and r < len(tokens) else str(r + 1)


def _style(lang: str, p: int, tokens: tuple[str, ...]) -> Style:
    return Style(lang, lambda x: number(x, p, lang), lambda key: math_name(key, lang),
                 lambda key, r: row_name(tokens, key, r))  # fmt: skip


def _step_line(r: Report, v: Verdict, w: dict[str, str], width: int) -> str:
    lang, p = r.lang, r.decimals
    head = f"  {v.label:<{width}}  "
    if v.status is Status.RIGHT:
        if v.carried:
            return head + w["carried"].format(gap=number(v.carried, 4, lang), p=p)
        return head + w["right"]
    if v.shape is not None:
        dims = ["×".join(str(x) for x in s) for s in (v.given_shape, v.shape) if s is not None]
        return head + w["wrong"] + ": " + w["shape"].format(got=dims[0], want=dims[1])
    wrong = [o for o in v.off if o.status is Status.WRONG]
    shown = wrong or list(v.off)
    count = (w["of"].format(k=len(wrong), n=v.entries) if wrong else
             w["few_of"].format(k=len(v.off), n=v.entries, p=p))  # fmt: skip
    cells = [w["entry"].format(row=row_name(r.tokens, v.key, o.row), col=o.col + 1,
                               yours=number(o.yours, o.yours_decimals, lang),
                               right=number(o.right, p, lang)) for o in shown[:4]]  # fmt: skip
    if len(shown) > 4:
        cells.append(w["more"].format(k=len(shown) - 4))
    verdict = w["wrong"] if wrong else w["few"].format(p=p)
    return head + f"{verdict}: " + "; ".join([count, *cells])


def report_lines(r: Report) -> list[str]:
    """The report as lines of text, in the report's language: one per step, then the first
    wrong step and the diagnoses."""
    w = WORDS[r.lang]
    n = r.steps_given
    given = w["one"] if n == 1 else w["many"].format(n=n)
    lines = [w["head"].format(source=r.source, given=given, p=r.decimals)]
    width = max(len(v.label) for v in r.verdicts)
    lines += [_step_line(r, v, w, width) for v in r.verdicts]
    if r.all_right:
        return [*lines, w["all"]]
    first = r.first_wrong
    if first is None:
        few = ", ".join(v.label for v in r.verdicts if v.status is Status.FEW_DECIMALS)
        return [*lines, w["not_yet"].format(p=r.decimals, steps=few)]
    lines.append(w["first"].format(label=first.label, math=math_name(first.key, r.lang)))
    if not r.diagnoses:
        return [*lines, w["none"]]
    texts = [t[0] if len(t) == 1 else w["pair"].format(a=t[0], b=t[1])
             for t in (d.texts[r.lang] for d in r.diagnoses)]  # fmt: skip
    lead = w["one_diag"] if len(texts) == 1 else w["many_diag"]
    lines.append(lead.format(text=w["or"].join(texts)))
    pair = all(len(d.names) == 2 for d in r.diagnoses)
    return [*lines, w["redo_pair"] if pair else w["redo"]]


__all__ = [
    "WORDS",
    "Diagnosis",
    "Off",
    "Report",
    "Status",
    "Verdict",
    "check_answer",
    "check_document",
    "check_file",
    "diagnose",
    "math_name",
    "number",
    "report_lines",
]
