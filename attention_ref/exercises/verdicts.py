r"""What ``attnref check`` found, as data and in words (English and Portuguese).

A `Report` holds one `Verdict` per step given (right, short of the decimals asked, or wrong,
with the entries that are not right) and the `Diagnosis` of the mistakes that reproduce the
answer; it counts the steps given and right, names the first wrong step, and has a JSON form
(`Report.to_json`, steps by their JSON paths) for a gradebook. `report_lines` writes it in the
report's language: each step as the statement writes it with its JSON path beside
(``S̃⁽¹⁾ (heads[0].S_masked)``), rows by their tokens, numbers with a decimal comma in
Portuguese.
The grading itself is `attention_ref.exercises.grader`.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from attention_ref.exercises.answer_words import (
    STEP_WORDS,
    label,
    math_name,
    pad,
    step_label,
    width,
    words,
)
from attention_ref.exercises.chain import Key
from attention_ref.exercises.feature_table import active
from attention_ref.exercises.features import PLAIN as PLAIN_NAME
from attention_ref.exercises.features import Features
from attention_ref.render import DECIMAL_MARK


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
    #: whether pairs of mistakes were tried (not when the problem has too many candidates)
    pairs_tried: bool = True
    #: the attention the problem asks, by the name of its features (``mha``, the homework's;
    #: ``gqa``, ``gqa+rope`` …): the words of its steps and of its catalogue
    variant: str = PLAIN_NAME

    #: the problem's query heads (the orders of the heads tried depend on them)
    heads: int = 0

    @property
    def features(self) -> Features:
        return Features.parse(self.variant) or Features()

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
            "problem": self.source,
            "lang": self.lang,
            "decimals": self.decimals,
            "steps_given": self.steps_given,
            "steps_right": self.steps_right,
            "all_right": self.all_right,
            "first_wrong": first.label if first else None,
            "pairs_tried": self.pairs_tried,
            "diagnoses": [list(d.names) for d in self.diagnoses],
            "diagnosis_texts": [list(d.texts[self.lang]) for d in self.diagnoses],
            "verdicts": [
                {
                    "step": v.label,
                    "verdict": str(v.status),
                    "entries": v.entries,
                    "shape": list(v.shape) if v.shape else None,
                    "off": [
                        {
                            "row": o.row + 1,
                            "col": o.col + 1,
                            "yours": _json_number(o.yours),
                            "right": _json_number(o.right),
                            "verdict": str(o.status),
                        }
                        for o in v.off
                    ],
                }
                for v in self.verdicts
            ],
        }


def _json_number(x: float) -> float | str:
    return x if math.isfinite(x) else ("-inf" if x < 0 else "inf")


# --- the report in words ------------------------------------------------------------------------

#: The words of the printed report, per language.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "head": "Checking your answer to {source}: {given}, graded to {p} decimals.",
        "one": "1 step given",
        "many": "{n} steps given",
        "right": "right",
        "carried": "right; off the exact value by up to {gap}, which the rounding of earlier "
        "steps explains",
        "few": "give {p} decimals",
        "wrong": "WRONG",
        "of": "{k} of {n} entries off",
        "few_of": "{k} of {n} entries have fewer than {p} "
        "decimals and are not the exact value to {p} decimals",
        "shape": "shape {got}, expected {want}",
        "entry": "[{row}, {col}] yours {yours}, right {right}",
        "more": "and {k} more",
        "all": "Every step you gave is right.",
        "not_yet": "Not right yet: give {p} decimals in {steps} (the exercise asks for {p}).",
        "first": "First wrong step: {label}.",
        "one_diag": "Diagnosis: {text}.",
        "many_diag": "Diagnosis (each of these reproduces it): {text}.",
        "pair": "two mistakes together: {a}; and {b}",
        "or": "; or ",
        "redo": "Recomputing with this mistake reproduces every step you gave.",
        "redo_pair": "Recomputing with both mistakes reproduces every step you gave.",
        "none": "No mistake of the catalogue ({what}), {how}, reproduces your numbers: check "
        "the arithmetic of the first wrong step.",
        "how": "alone or two together",
        "how_alone": "alone (this problem has too many candidates to try two at a time)",
    },
    "pt": {
        "head": "Conferindo a sua resposta a {source}: {given}, avaliação com {p} casas decimais.",
        "one": "1 passo dado",
        "many": "{n} passos dados",
        "right": "certo",
        "carried": "certo; difere do valor exato em até {gap}, o que o arredondamento dos "
        "passos anteriores explica",
        "few": "dê {p} casas decimais",
        "wrong": "ERRADO",
        "of": "{k} de {n} entradas erradas",
        "few_of": "{k} de {n} entradas têm menos de {p} "
        "casas e não são o valor exato com {p} casas",
        "shape": "formato {got}, esperado {want}",
        # no comma beside a decimal comma: "sua 1,0, certa 2,000" read as three numbers
        "entry": "[{row}, {col}] sua {yours} (certa {right})",
        "more": "e mais {k}",
        "all": "Todos os passos que você deu estão certos.",
        "not_yet": "Ainda não está certo: dê {p} casas decimais em {steps} (o exercício pede {p}).",
        "first": "Primeiro passo errado: {label}.",
        "one_diag": "Diagnóstico: {text}.",
        "many_diag": "Diagnóstico (cada um destes o reproduz): {text}.",
        "pair": "dois erros juntos: {a}; e {b}",
        "or": "; ou ",
        "redo": "Refazer a conta com esse erro reproduz todos os passos que você deu.",
        "redo_pair": "Refazer a conta com os dois erros reproduz todos os passos que você deu.",
        "none": "Nenhum erro do catálogo ({what}), {how}, reproduz os seus números: confira "
        "as contas do primeiro passo errado.",
        "how": "sozinho ou dois juntos",
        "how_alone": "sozinho (este problema tem candidatos demais para tentar dois de cada vez)",
    },
}

#: The homework's catalogue in a few words, per language (every problem's ends with it).
_HOMEWORK: Final = {
    "en": "scaling, softmax direction or one-hot A, mask, K Qᵀ, a transposed weight or step, "
    "Aᵀ V, the heads' order or V, W_O, a slip in one entry",
    "pt": "escala, direção da softmax ou A one-hot, máscara, K Qᵀ, um peso ou passo "
    "transposto, Aᵀ V, a ordem ou o V das cabeças, W_O, um erro de conta numa entrada",
}
#: The heads' orders tried beyond `attention_ref.exercises.reproduce.EVERY_ORDER_UP_TO` heads.
_SOME_ORDERS: Final = {
    "en": ("the heads' order or V", "the heads' order (two swapped, or all reversed) or V"),
    "pt": (
        "a ordem ou o V das cabeças",
        "a ordem das cabeças (duas trocadas, ou todas invertidas) ou o V delas",
    ),
}


def catalogue_words(f: Features, lang: str, heads: int = 0) -> str:
    """What "none" says was tried: the features' own entries, then the homework's (with more
    than `EVERY_ORDER_UP_TO` heads, the orders of the heads tried)."""
    from attention_ref.exercises.reproduce import EVERY_ORDER_UP_TO

    own = [feat.kinds_words[lang] for feat in active(f)]
    homework = _HOMEWORK[lang]
    if heads > EVERY_ORDER_UP_TO:
        homework = homework.replace(*_SOME_ORDERS[lang])
    return ", ".join([*own, homework])


def number(x: float, decimals: int, lang: str) -> str:
    """``x`` to ``decimals`` places (a decimal comma in Portuguese; ``-inf`` as ``−∞``)."""
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    # a number past a screen's width (1e308) in a form that fits: 1.000e+308; "z": a zero is
    # 0.000, never -0.000 (-1e-17, where another CPU kernel rounds a product that is 0)
    s = f"{x:z.{decimals}f}" if abs(x) < 1e12 else f"{x:z.{min(decimals, 6)}e}"
    return s.replace(".", DECIMAL_MARK[lang])


#: Steps whose rows are not the tokens (the rows of a weight's gradient are X's columns).
_WEIGHT_GRADS: Final = frozenset({"grad.W_Q", "grad.W_K", "grad.W_V", "grad.W_O", "grad.b_O"})


def row_name(tokens: tuple[str, ...], key: Key, r: int) -> str:
    """Row ``r`` of a step: its token, or its number (from 1) for a weight's gradient."""
    return tokens[r] if key[0] not in _WEIGHT_GRADS and r < len(tokens) else str(r + 1)


def _step_line(r: Report, v: Verdict, w: dict[str, str], columns: int, values: bool = True) -> str:
    lang, p = r.lang, r.decimals
    head = f"  {pad(step_label(v.key, lang, r.features), columns)}  "
    if v.status is Status.RIGHT:
        if v.carried:
            return head + w["carried"].format(gap=number(v.carried, 4, lang), p=p)
        return head + w["right"]
    if v.shape is not None:
        dims = ["×".join(str(x) for x in s) for s in (v.given_shape, v.shape) if s is not None]
        wider = v.given_shape is not None and v.given_shape[-1] > v.shape[-1]
        hint = words(lang, "comma_hint") if wider else ""  # 0,670 is two entries in JSON
        return head + w["wrong"] + ": " + w["shape"].format(got=dims[0], want=dims[1]) + hint
    wrong = [o for o in v.off if o.status is Status.WRONG]
    shown = wrong or list(v.off)
    count = (
        w["of"].format(k=len(wrong), n=v.entries)
        if wrong
        else w["few_of"].format(k=len(v.off), n=v.entries, p=p)
    )
    cells = [
        w["entry"].format(
            row=row_name(r.tokens, v.key, o.row),
            col=o.col + 1,
            yours=number(o.yours, o.yours_decimals, lang),
            right=number(o.right, p, lang),
        )
        for o in shown[:4]
    ]
    if len(shown) > 4:
        cells.append(w["more"].format(k=len(shown) - 4))
    if not values:  # the feedback policy "steps": how many entries, not which nor their values
        cells = []
    verdict = w["wrong"] if wrong else w["few"].format(p=p)
    return head + f"{verdict}: " + "; ".join([count, *cells])


def report_lines(r: Report, values: bool = True) -> list[str]:
    """The report as lines of text, in the report's language: one per step, then the first
    wrong step and the diagnoses; without ``values`` (a class's feedback policy ``steps``),
    no entry's right value and no diagnosis."""
    w = WORDS[r.lang]
    n = r.steps_given
    given = w["one"] if n == 1 else w["many"].format(n=n)
    lines = [w["head"].format(source=r.source, given=given, p=r.decimals)]
    columns = max(width(step_label(v.key, r.lang, r.features)) for v in r.verdicts)
    lines += [_step_line(r, v, w, columns, values) for v in r.verdicts]
    if r.all_right:
        return [*lines, w["all"]]
    first = r.first_wrong
    if first is None:
        few = ", ".join(
            step_label(v.key, r.lang, r.features)
            for v in r.verdicts
            if v.status is Status.FEW_DECIMALS
        )
        return [*lines, w["not_yet"].format(p=r.decimals, steps=few)]
    lines.append(w["first"].format(label=step_label(first.key, r.lang, r.features)))
    if not values:
        return lines
    if not r.diagnoses:
        how = w["how" if r.pairs_tried else "how_alone"]
        what = catalogue_words(r.features, r.lang, r.heads)
        return [*lines, w["none"].format(what=what, how=how)]
    texts = [
        t[0] if len(t) == 1 else w["pair"].format(a=t[0], b=t[1])
        for t in (d.texts[r.lang] for d in r.diagnoses)
    ]
    lead = w["one_diag"] if len(texts) == 1 else w["many_diag"]
    lines.append(lead.format(text=w["or"].join(texts)))
    pair = all(len(d.names) == 2 for d in r.diagnoses)
    return [*lines, w["redo_pair"] if pair else w["redo"]]


def _wrapped(text: str, columns: int, indent: str = "", first: str = "") -> list[str]:
    """``text`` broken at spaces, never inside a word (a long one keeps a line of its own):
    the first line after ``first``, the next ones after ``indent``."""
    room = max(columns - width(indent), 20)
    parts = textwrap.wrap(text, room, break_long_words=False, break_on_hyphens=False) or [""]
    return [first + parts[0], *(indent + part for part in parts[1:])]


def report_at(r: Report, columns: int, values: bool = True) -> list[str]:
    """`report_lines` for a terminal ``columns`` wide: every line broken at spaces, a step's
    verdict going on under its own column, or, when its label leaves it less than half the
    line (a variant's long labels), under the label on lines of its own; nothing left out."""
    lines = report_lines(r, values)
    names = [step_label(v.key, r.lang, r.features) for v in r.verdicts]
    name_columns = max(width(name) for name in names)
    steps = lines[1 : 1 + len(names)]
    out = _wrapped(lines[0], columns)
    for name, line in zip(names, steps, strict=True):
        head = f"  {pad(name, name_columns)}  "
        verdict = line.removeprefix(head)
        if width(line) <= columns:
            out.append(line)
        elif width(head) <= columns // 2:
            out += _wrapped(verdict, columns, " " * width(head), head)
        else:
            out.append(head.rstrip())
            out += _wrapped(verdict, columns, " " * 6, " " * 6)
    for line in lines[1 + len(names) :]:
        out += _wrapped(line, columns)
    return out


__all__ = [
    "STEP_WORDS",
    "WORDS",
    "Diagnosis",
    "Off",
    "Report",
    "Status",
    "Verdict",
    "math_name",
    "number",
    "report_at",
    "report_lines",
    "row_name",
    "step_label",
]
