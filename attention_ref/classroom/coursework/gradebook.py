"""The gradebook of an assignment, as data: which submission counts, its grade, the run of the
gradebook that holds it. Pure: no network, no torch, no mlflow (`attention_ref.classroom.exchange`
reads and writes the server; `attention_ref.exercises.grader` grades). What a teacher reads of
it, the class's summary and the CSV, is `attention_ref.classroom.coursework.gradebook_report`.

A student's submissions of one exercise are their attempts. The **latest** (by the time the
server received it) counts, unless the teacher says otherwise: ``best`` (most steps right, the
earliest of equals) or a submission named by its run id. A submission is graded only as it
was when the student finished it: one whose stored answer no longer has the hash the server
recorded then is ``changed`` and gets no steps; one that is not an answer to the student's
exercise (not JSON, a problem of someone else, no step) is ``malformed`` and gets none either.

What a student wrote (their account's name, a reason that quotes their answer) reaches the
gradebook runs' descriptions, Markdown in MLflow's UI, only as a `code_span`: shown as
written, never a link, an image or emphasis.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from attention_ref.classroom.coursework.assignment import GRADE, duration, from_iso, iso_ms
from attention_ref.classroom.coursework.policy import Policy
from attention_ref.experiments.names import ui_experiment_url


class Standing(StrEnum):
    """How a submission (or its absence) stands for grading."""

    GRADED = "graded"
    MALFORMED = "malformed"
    CHANGED = "changed after it was finished"
    MISSING = "no submission"


class Chosen(StrEnum):
    """Why the submission that counts counts."""

    LATEST = "latest"
    BEST = "best"
    TEACHER = "teacher"
    NONE = ""


@dataclass(frozen=True)
class Graded:
    """One submission as the teacher's side graded it from the stored answer."""

    student: str
    run_id: str
    exercise: int | None  # None: it names none of the student's exercises (malformed)
    received: dt.datetime
    late: dt.timedelta | None
    standing: Standing
    steps_right: int = 0
    steps_given: int = 0
    first_wrong: str = ""
    diagnoses: tuple[tuple[str, ...], ...] = ()
    reason: str = ""  # why malformed or changed, in one line
    started: int = 0  # the run's start time (ms, the server's clock): ties of `received`
    steps_asked: int = 0  # the steps a whole answer to the exercise has (0: not known)

    @property
    def key(self) -> tuple[int, int, float, int]:
        """Best first: graded, most steps right, then the earliest."""
        return (
            self.standing is Standing.GRADED,
            self.steps_right,
            -self.received.timestamp(),
            -self.started,
        )

    @property
    def order(self) -> tuple[dt.datetime, int]:
        """When it was received, to order attempts (the latest counts by default)."""
        return self.received, self.started


#: What each column of a gradebook run is, in the words the gradebook's description shows:
#: the metrics (`Row.metrics`, columns of the MLflow runs table) and the tags (`Row.tags`).
RUN_COLUMNS: Final[dict[str, str]] = {
    "steps_right": "metric: the steps of the counted answer that are right",
    "steps_given": "metric: the steps the counted answer gave",
    "steps_asked": "metric: the steps a whole answer has (steps_right is out of it)",
    "attempts": "metric: how many answers the student submitted",
    "late": "metric: 1 when the counted answer came after the due time, else 0",
    "points": "metric: the steps right less the late penalty (the grade the exports sum)",
    GRADE + "student": "the student",
    GRADE + "exercise": "the exercise, from 1",
    GRADE + "status": "graded, malformed, changed after it was finished, or no submission",
    GRADE + "first_wrong": "the first wrong step, by its JSON path (heads[0].A)",
    GRADE + "diagnosis": "the mistakes the checker named: a | b, either reproduces the answer; "
    "a + b, both together",
    GRADE + "diagnoses": "the same, as JSON",
    GRADE + "late": "how late, in words, or no",
    GRADE + "late_s": "how late, in seconds",
    GRADE + "penalty": "the late penalty, in percent of the points",
    GRADE + "received": "when the server received the counted answer (UTC)",
    GRADE + "submission": "the run of the counted answer in the student's experiment",
    GRADE + "chosen": "why that answer counts: latest, best, or the teacher's choice",
    GRADE + "reason": "why an answer was not graded",
}


#: The columns the MLflow UI shows a gradebook with, in this order after the run's name (its
#: runs table otherwise shows Source, Models and Dataset, and a reader picks the grade's
#: columns by hand): MLflow's column keys, ``metrics.`name``` and ``tags.`name```, and their
#: widths (px; 0: the UI's). The run's name says the student and the exercise: with it, the
#: first five (steps right to steps asked) are on screen at a laptop's 1366 px, no scroll.
_SHOWN: Final[dict[str, int]] = {
    "metrics.`steps_right`": 110,
    "metrics.`points`": 80,
    "metrics.`late`": 70,
    f"tags.`{GRADE}diagnosis`": 190,
    "metrics.`steps_asked`": 110,
    "metrics.`steps_given`": 110,
    f"tags.`{GRADE}first_wrong`": 200,
    "metrics.`attempts`": 0,
    f"tags.`{GRADE}status`": 0,
}
SHOWN_COLUMNS: Final[tuple[str, ...]] = tuple(_SHOWN)
#: MLflow's key of the run-name column (pinned at the left, with the run's creation time)
_RUN_NAME = "attributes.`Run Name`"
#: The name of that view. MLflow's UI reads a "shared view" from the experiment's tag
#: ``mlflow.sharedViewState.<name>`` when a link says ``viewStateShareKey=<name>``.
VIEW = "attnref-gradebook"
VIEW_TAG = "mlflow.sharedViewState." + VIEW


def view_state() -> str:
    """The gradebook's view in MLflow's UI, as the JSON its "share" button stores: the grade's
    columns (`SHOWN_COLUMNS`) first, the runs sorted by name (by student, then exercise)."""
    return json.dumps(
        {
            "selectedColumns": list(SHOWN_COLUMNS),
            "columnOrder": [_RUN_NAME, *SHOWN_COLUMNS, "runDateAndNestInfo", "duration"],
            "columnWidths": {_RUN_NAME: 230} | {k: w for k, w in _SHOWN.items() if w},
            "orderByKey": "tags.`mlflow.runName`",
            "orderByAsc": True,
        }
    )


def ui_url(base: str, gradebook_id: str) -> str:
    """The gradebook in MLflow's UI at server ``base``: its runs, in the gradebook's view."""
    return ui_experiment_url(base, gradebook_id, VIEW)


#: runs of backticks, and the characters a code span may not hold: line endings (a blank line
#: would end the paragraph, and the span with it), Unicode's line and paragraph separators, and
#: the other control characters
_BACKTICKS = re.compile(r"`+")
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def code_span(text: str) -> str:
    """``text`` as Markdown's inline code: shown as written, never markup (a link, an image,
    emphasis, HTML), by CommonMark and by Showdown (MLflow's UI renders a description with
    it, code spans first).

    The fence is one backtick longer than the longest run of backticks in ``text``; a space
    pads each side where ``text`` begins or ends with a backtick or a space (CommonMark takes
    one space off each side of a span that has both); line endings and other control
    characters become spaces. An empty ``text`` is a span of one space (an empty one is no
    span). Two spans need something between them (a fence next to a fence is one run); a
    backslash just before one would escape its fence."""
    body = _BREAKS.sub(" ", text) or " "
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(body)), default=0) + 1)
    if body.strip(" ") and (body[0] in "` " or body[-1] in "` "):
        body = f" {body} "
    return f"{fence}{body}{fence}"


def columns_text() -> str:
    """`RUN_COLUMNS` as one paragraph of the gradebook's description (markdown)."""
    return "Columns: " + "; ".join(f"`{k}`: {v}" for k, v in RUN_COLUMNS.items()) + "."


@dataclass(frozen=True)
class Row:
    """One line of the gradebook: a student's exercise, its counted submission and attempts."""

    student: str
    exercise: int
    standing: Standing
    steps_right: int = 0
    steps_given: int = 0
    first_wrong: str = ""
    diagnoses: tuple[tuple[str, ...], ...] = ()
    attempts: int = 0
    late: dt.timedelta | None = None
    received: dt.datetime | None = None
    submission: str = ""
    chosen: Chosen = Chosen.NONE
    reason: str = ""
    penalty: int = 0  # percent of the points the late policy takes (`Policy.penalty`)
    steps_asked: int = 0  # the steps a whole answer has (0: a row written before it was kept)

    @property
    def asked(self) -> int:
        """What the steps right are out of (the steps given, for a row written before)."""
        return self.steps_asked or self.steps_given

    @property
    def complete(self) -> bool:
        """Every step asked given and right: a partial answer, all right, is not."""
        return self.standing is Standing.GRADED and self.steps_right == self.asked

    @property
    def points(self) -> float:
        """The grade of this exercise: steps right less the late penalty, to 2 decimals."""
        if self.standing is not Standing.GRADED:
            return 0.0
        return round(self.steps_right * (100 - self.penalty) / 100, 2)

    @property
    def diagnosis(self) -> str:
        """``no_mask``; ``no_scale | scale_d_k`` (either reproduces it); ``a + b`` (both)."""
        return " | ".join(" + ".join(names) for names in self.diagnoses)

    @property
    def late_text(self) -> str:
        """``late by 4 min 10 s``, ``late by 1 d 2 h 05 min (-20%)`` under a penalty, or empty."""
        if not self.late:
            return ""
        return f"late by {duration(self.late)}" + (f" (-{self.penalty}%)" if self.penalty else "")

    @property
    def run_name(self) -> str:
        """The gradebook run's name, the grade at a glance in the UI's runs table (whose other
        columns a reader picks by hand): ``alice · 1 · 10/18 · no_mask · late`` (of asked)."""
        parts = [self.student, str(self.exercise)]
        if self.standing is Standing.GRADED:
            parts.append(f"{self.steps_right}/{self.asked}")
            parts += [self.diagnosis] if self.diagnosis else []
        else:
            parts.append(str(self.standing))
        late = ["late" + (f" -{self.penalty}%" if self.penalty else "")] if self.late else []
        return " · ".join(parts + late)

    def tags(self) -> dict[str, str]:
        """The grade's text as tags of its gradebook run (numbers are `metrics`)."""
        return {
            GRADE + "student": self.student,
            GRADE + "exercise": str(self.exercise),
            GRADE + "status": str(self.standing),
            GRADE + "first_wrong": self.first_wrong,
            GRADE + "diagnosis": self.diagnosis or "",
            GRADE + "diagnoses": json.dumps([list(d) for d in self.diagnoses]),
            GRADE + "late": self.late_text or "no",
            GRADE + "late_s": str(int(self.late.total_seconds())) if self.late else "",
            GRADE + "penalty": str(self.penalty),
            GRADE + "received": iso_ms(self.received) if self.received else "",
            GRADE + "submission": self.submission,
            GRADE + "chosen": str(self.chosen),
            GRADE + "reason": self.reason[:500],
        }

    def note(self, words: Callable[[str], str] = str) -> str:
        """The grade in sentences: the gradebook run's description in MLflow's UI (markdown).
        ``words`` names a mistake of the catalogue in words (``no_mask``: "no causal mask").
        The student's name, the reason (it quotes their answer) and the names of steps and
        mistakes are each a `code_span`."""
        head = f"**{code_span(self.student)}**, exercise {self.exercise}: "
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        if self.standing is Standing.MISSING:
            return head + "no submission."
        if self.standing is not Standing.GRADED:
            why = f": {code_span(self.reason)}" if self.reason else ""
            return head + f"not graded ({self.standing}{why}); {tries}."
        return head + self._grade_words(words) + " " + self._counted_words(tries)

    def _grade_words(self, words: Callable[[str], str]) -> str:
        """The steps right, the first wrong one, and the mistakes that reproduce the answer."""
        if self.complete:
            return f"all {self.asked} steps right."
        grade = f"{self.steps_right} of {self.asked} steps right"
        if self.steps_given < self.asked:
            grade += f" ({self.steps_given} given)"
        if not self.first_wrong:
            if self.steps_right == self.steps_given:
                return grade + "; no step given is wrong."
            return grade + "; no step is wrong, the others are short of the decimals asked."
        grade += f"; the first wrong step is {code_span(self.first_wrong)}."

        def named(name: str) -> str:
            said = words(name)
            return f"{said} ({code_span(name)})" if said != name else code_span(name)

        alts = [" together with ".join(named(n) for n in d) for d in self.diagnoses]
        if not alts:
            return grade + " No mistake of the catalogue reproduces the answer."
        if len(alts) == 1:
            return grade + f" The mistake that reproduces the answer: {alts[0]}."
        return grade + " Each of these reproduces the answer: " + "; ".join(alts) + "."

    def _counted_words(self, tries: str) -> str:
        """How many attempts, which one counts, when it came."""
        which = {
            Chosen.TEACHER: "the one the teacher chose",
            Chosen.BEST: "the best",
            Chosen.LATEST: "the latest",
        }.get(self.chosen, "one")
        when = f", received {self.received:%Y-%m-%d %H:%M:%S} UTC" if self.received else ""
        late = f", {self.late_text}" if self.late else (", on time" if self.received else "")
        return f"{tries}; {which} counts{when}{late}."

    def metrics(self) -> dict[str, float]:
        """The grade's numbers as metrics of its gradebook run (columns of the runs table)."""
        return {
            "steps_right": self.steps_right,
            "steps_given": self.steps_given,
            "steps_asked": self.steps_asked,
            "attempts": self.attempts,
            "late": float(self.late is not None),
            "points": self.points,
        }

    @classmethod
    def from_run(cls, tags: dict[str, str], metrics: dict[str, float]) -> Row:
        """The row a gradebook run holds (`tags` and `metrics` inverted)."""
        late_s = tags.get(GRADE + "late_s", "")
        received = tags.get(GRADE + "received", "")
        return cls(
            student=tags[GRADE + "student"],
            exercise=int(tags[GRADE + "exercise"]),
            standing=Standing(tags[GRADE + "status"]),
            steps_right=int(metrics.get("steps_right", 0)),
            steps_given=int(metrics.get("steps_given", 0)),
            steps_asked=int(metrics.get("steps_asked", 0)),
            first_wrong=tags.get(GRADE + "first_wrong", ""),
            diagnoses=tuple(tuple(d) for d in json.loads(tags.get(GRADE + "diagnoses", "[]"))),
            attempts=int(metrics.get("attempts", 0)),
            late=dt.timedelta(seconds=int(late_s)) if late_s else None,
            received=from_iso(received) if received else None,
            submission=tags.get(GRADE + "submission", ""),
            chosen=Chosen(tags.get(GRADE + "chosen", "")),
            reason=tags.get(GRADE + "reason", ""),
            penalty=int(tags.get(GRADE + "penalty") or 0),
        )


def whole(x: float) -> int | float:
    """``9`` for 9.0, ``14.4`` as it is: a grade reads as a whole number where it is one."""
    return int(x) if x == int(x) else x


def held(attempts: Sequence[Graded], policy: Policy) -> list[Graded]:
    """The attempts the policy lets count, in the order received: none received after the
    cut-off, and the first ``policy.attempts`` of the others (the gate refuses the rest; these
    rules hold here too for answers received before the teacher set them)."""
    kept = sorted(
        (g for g in attempts if not policy.after_cutoff(g.received)), key=lambda g: g.order
    )
    return kept if policy.attempts is None else kept[: policy.attempts]


def counted(
    graded: Sequence[Graded],
    *,
    best: bool = False,
    use: Iterable[str] = (),
    policy: Policy | None = None,
) -> tuple[Graded | None, Chosen]:
    """The submission that counts among one student's attempts at one exercise: one the
    teacher named (``use``: run ids), else the best with ``best`` (the most points after the
    late penalty, then `Graded.key`), else the latest."""
    policy = policy or Policy()
    named = [g for g in graded if g.run_id in set(use)]
    if named:
        return named[-1], Chosen.TEACHER
    if not graded:
        return None, Chosen.NONE
    if best:

        def points(g: Graded) -> tuple[float, tuple[int, int, float, int]]:
            return (g.steps_right * (100 - policy.penalty(g.late)), g.key)

        return max(graded, key=points), Chosen.BEST
    return max(graded, key=lambda g: g.order), Chosen.LATEST


def rows(
    graded: Sequence[Graded],
    students: Sequence[str],
    exercises: int,
    *,
    best: bool = False,
    use: Iterable[str] = (),
    policy: Policy | None = None,
) -> list[Row]:
    """The gradebook: one row per student (in ``students``' order) and exercise, from every
    submission graded, under the assignment's ``policy`` (`held`, its late penalty). A
    submission whose answer cannot be read counts as an attempt at the exercise its run
    names, else at exercise 1 when there is one exercise."""
    policy = policy or Policy()
    use = list(use)
    out = []
    for student in students:
        mine = [g for g in graded if g.student == student]
        for k in range(1, exercises + 1):
            attempts = held(
                [g for g in mine if g.exercise == k or (g.exercise is None and exercises == 1)],
                policy,
            )
            chosen, why = counted(attempts, best=best, use=use, policy=policy)
            if chosen is None:
                out.append(Row(student, k, Standing.MISSING))
                continue
            out.append(
                Row(
                    student,
                    k,
                    chosen.standing,
                    chosen.steps_right,
                    chosen.steps_given,
                    chosen.first_wrong,
                    chosen.diagnoses,
                    len(attempts),
                    chosen.late,
                    chosen.received,
                    chosen.run_id,
                    why,
                    chosen.reason,
                    policy.penalty(chosen.late),
                    chosen.steps_asked,
                )
            )
    return out


__all__ = [
    "Chosen",
    "Graded",
    "Row",
    "Standing",
    "code_span",
    "counted",
    "held",
    "rows",
    "whole",
]
