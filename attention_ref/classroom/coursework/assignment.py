r"""An assignment of the class server: what it asks, when it is due, and each student's variant.

An assignment is ``N`` exercises of ``attnref exercise`` (`attention_ref.exercises.exercise`), the
same shape for the whole class (tokens, ``d_model``, heads, mask, language, decimals, the
backward question; the homework's attention or one of today's, ``--variant gqa|window|rope``),
each student's numbers their own. Student ``s``'s exercise ``k`` is drawn
from the seed

.. math::

    \mathrm{seed}_{s,k} = \left\lfloor \mathrm{SHA256}(\text{salt} \,\|\, \text{name}
    \,\|\, s \,\|\, k)_{[0:8]} \,/\, 2 \right\rfloor \in [0, 2^{63}),

so the variant is a function of the assignment (its name and the random ``salt`` drawn when
the teacher creates it) and the student's name: the same on every machine, different between
students and between assignments of the same name on two servers.

The salt is the server's secret: it lives in the gradebook's definition alone, which no
student reads. A student's experiment carries the definition without it and that student's own
seeds (`student_seeds`), so no student can draw a classmate's exercises (with the salt, anyone
could: the formula above is public). A student's copy of an assignment (`Assignment.from_tags`
on their experiment) has an empty salt, and `Assignment.seed` refuses to draw from it.

On the server (`attention_ref.classroom.exchange`), an assignment is MLflow experiments:

* ``homework/NAME``, the **gradebook**: the definition in its tags, one run per student and
  exercise holding the teacher's grade. No student is granted it (``NO_PERMISSIONS`` is the
  server's default), so no student reads or writes it.
* ``homework/NAME/STUDENT``, one per student: the definition again and the student's seeds in
  its tags (written by the teacher; students never write an experiment), their submissions as
  runs in it. Only that student is granted it (EDIT), so no one reads another's answers.

This module is the pure part (names, tags, seeds, the due time); it imports neither torch nor
mlflow.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import secrets
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Final

from attention_ref.classroom.coursework.class_time import UTC_NAME, checked_zone, read_local, shown
from attention_ref.classroom.coursework.policy import POLICY_TAG, Policy, PolicyError
from attention_ref.exercises.features import PLAIN

if TYPE_CHECKING:
    from attention_ref.exercises.exercise import ExerciseOptions

#: the experiments of an assignment: ``homework/NAME`` and ``homework/NAME/STUDENT``
PREFIX: Final = "homework/"
#: tags of the assignment's experiments (written by the teacher's commands only)
TAG = "attnref.homework."
ROLE_TAG: Final = TAG + "role"
ASSIGNMENT_TAG: Final = TAG + "assignment"
STUDENT_TAG: Final = TAG + "student"
DEFINITION_TAG: Final = TAG + "definition"
DUE_TAG: Final = TAG + "due"
#: the class's time zone, which due and received times are shown in (`class_time`)
ZONE_TAG: Final = TAG + "timezone"
SEEDS_TAG: Final = TAG + "seeds"
#: tags the server itself writes on a submission when it is finished (the class's gate)
ANSWER_SHA_TAG: Final = TAG + "answer_sha256"
RECEIVED_TAG: Final = TAG + "received"
#: tags of grades (the teacher's), on the gradebook's runs and on graded submissions
GRADE = "attnref.grade."
#: tag prefixes no student may write, on any run
RESERVED: Final = (TAG, GRADE)
#: The due time in words, per language: with a due time (to the minute, in a time zone with
#: its offset: `class_time.shown`), and without.
DUE_WORDS: Final = {"en": ("due {at}", "no due time"), "pt": ("prazo {at}", "sem prazo")}


def due_words(due: dt.datetime | None, lang: str = "en", zone: str = UTC_NAME) -> str:
    """``due 2026-12-01 19:59 UTC-03:00`` (in ``zone``) or ``no due time``, in ``lang``
    (``prazo …``)."""
    at, none = DUE_WORDS[lang]
    return at.format(at=shown(due, zone)) if due else none


#: the values of `ROLE_TAG`
GRADEBOOK, SUBMISSIONS = "gradebook", "submissions"
#: the one file a submission holds
ANSWER_FILE: Final = "answer.json"
MAX_EXERCISES: Final = 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class AssignmentError(ValueError):
    """An assignment cannot be made or used as asked; the message says why, in one line."""


def check_name(name: str) -> str:
    """An assignment's name: letters, digits, ``.``, ``_``, ``-`` (1-64, no ``/``)."""
    if not _NAME.fullmatch(name):
        raise AssignmentError(
            f"an assignment's name is 1-64 letters, digits, '.', '_' or '-' (starting with a "
            f"letter or digit), got {name!r}"
        )
    return name


def gradebook_experiment(name: str) -> str:
    """The name of the assignment's gradebook experiment (the teacher's alone)."""
    return PREFIX + name


def student_experiment(name: str, student: str) -> str:
    """The name of one student's experiment of the assignment (theirs alone)."""
    return f"{PREFIX}{name}/{student}"


def parse_due(text: str, option: str = "--due", zone: str | None = None) -> dt.datetime:
    """``--due`` (or ``option``, ``--cutoff``): an ISO 8601 time (``2026-12-01T23:59``,
    ``2026-12-01 23:59+01:00``, a date alone meaning its end, 23:59:59); without a zone, in
    ``zone`` (the class's, `class_time.read_local`), else in this machine's. Returned in UTC,
    to the second."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise AssignmentError(
            f"{option} must be an ISO time like 2026-12-01T23:59 or 2026-12-01T23:59+01:00, "
            f"got {text!r}"
        ) from None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        when = when.replace(hour=23, minute=59, second=59)
    if when.tzinfo is None:
        # the class's zone, else the machine's local one
        when = read_local(when, zone) if zone else when.astimezone()
    return when.astimezone(dt.UTC).replace(microsecond=0)


def iso(when: dt.datetime) -> str:
    """A UTC time as the tags keep it: ``2026-12-01T22:59:00Z``."""
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(when: dt.datetime) -> str:
    """A UTC time to the millisecond (when a submission was received: attempts within one
    second are told apart): ``2026-12-01T22:59:00.123Z``."""
    when = when.astimezone(dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def from_iso(text: str) -> dt.datetime:
    """The inverse of `iso` (any ISO time with a zone)."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC)


def from_ms(ms: int) -> dt.datetime:
    """A time in milliseconds since the epoch (MLflow's), in UTC."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC)


def lateness(received: dt.datetime, due: dt.datetime | None) -> dt.timedelta | None:
    """How late a submission received at ``received`` is (``None``: on time, or no due time).

    Late means strictly after the due time, both read on the server's clock."""
    if due is None or received <= due:
        return None
    return received - due


def duration(td: dt.timedelta) -> str:
    """``1 h 03 min``, ``4 min 10 s``, ``2 d 1 h 05 min``: a lateness in words, to the
    minute past an hour (a day's penalty that a started day takes is read with its minutes:
    ``1 d 0 h 22 min``, not ``1 d 0 h``)."""
    s = int(td.total_seconds())
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if d:
        return f"{d} d {h} h {m:02d} min"
    if h:
        return f"{h} h {m:02d} min"
    if m:
        return f"{m} min {s:02d} s"
    return f"{s} s"


@dataclass(frozen=True, kw_only=True)
class Assignment:
    """What an assignment asks: ``exercises`` problems of this shape, due at ``due`` (UTC).

    ``salt`` (random, drawn once when the teacher creates it) makes the variants of two
    assignments of the same name on two servers differ.
    """

    name: str
    exercises: int = 1
    tokens: int = 3
    d_model: int = 4
    heads: int = 2
    causal: bool = True
    lang: str = "en"
    backward: bool = False
    decimals: int = 3
    #: the attention: ``mha`` (the homework's), or features (``gqa``, ``window``, ``rope``,
    #: joined by ``+``: `attention_ref.exercises.features`; with RoPE, the forward pass)
    variant: str = PLAIN
    kv_heads: int | None = None  # g < h: K/V heads (None: the exercise's default, h/2)
    window: int | None = None  # a window: keys a token sees (None: the exercise's default)
    salt: str = field(default_factory=lambda: secrets.token_hex(8))
    due: dt.datetime | None = None
    #: whether a statement prints its source, the ``attnref exercise`` command that draws it
    #: (and, with ``--key``, prints its key): a practice assignment's choice
    #: (``server assign --source``); a graded one's statements name no such command. A
    #: definition written before this default changed (no ``source`` key) meant ``True``
    source: bool = False
    #: late work, attempts, feedback (`attention_ref.classroom.coursework.policy`); may change,
    #: like ``due``
    policy: Policy = field(default_factory=Policy)
    #: the class's time zone, the due and received times are shown in (`class_time`); may
    #: change, like ``due``
    timezone: str = UTC_NAME

    def __post_init__(self) -> None:
        check_name(self.name)
        try:
            self.policy.check_due(self.due)
        except PolicyError as e:
            raise AssignmentError(str(e)) from None
        if not 1 <= self.exercises <= MAX_EXERCISES:
            raise AssignmentError(
                f"--exercises must be between 1 and {MAX_EXERCISES}, got {self.exercises}"
            )
        # the shape's own checks (ExerciseOptions), one line each; the attention named by its
        # features, as the exercise names it (--kv-heads alone asks gqa)
        object.__setattr__(self, "variant", self.options(0).variant)

    def definition(self, *, salt: bool = True) -> dict[str, object]:
        """What defines the exercises (everything but the due time, which may move); the
        homework's own attention is written as before the variants (no variant key). Without
        ``salt``: the copy a student's experiment carries (the module docstring)."""
        d = asdict(self)
        del d["due"], d["name"], d["policy"], d["timezone"]
        if not salt:
            del d["salt"]
        if self.source:  # the default, written as before the option existed
            del d["source"]
        if not self.options(0).features.any:
            del d["variant"], d["kv_heads"], d["window"]
        return d

    def shape(self) -> dict[str, object]:
        """What the teacher asked: the definition without its random salt."""
        return self.definition(salt=False)

    def same_exercises(self, other: Assignment) -> bool:
        """Whether ``other`` asks the same exercises as this one (due time, salt and whether
        the statements print their source aside: those may change)."""
        return self.name == other.name and replace(self, source=other.source).shape() == (
            other.shape()
        )

    def options(self, seed: int) -> ExerciseOptions:
        """The exercise of this shape drawn from ``seed``."""
        from attention_ref.exercises.exercise import ExerciseOptions

        shape = {f.name: getattr(self, f.name) for f in fields(ExerciseOptions) if f.name != "seed"}
        try:
            return ExerciseOptions(seed=seed, **shape)
        except ValueError as e:
            raise AssignmentError(str(e)) from None

    def seed(self, student: str, k: int) -> int:
        """The seed of ``student``'s exercise ``k`` (1-based): see the module docstring.
        A student's copy (no salt) draws none: its seeds are in its tags (`student_seeds`)."""
        if not self.salt:
            raise AssignmentError(
                f"this copy of assignment {self.name!r} carries no salt (a student's): its "
                "seeds are in its experiment's tags"
            )
        text = "\0".join(("attnref homework", self.salt, self.name, student, str(k)))
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1

    def seeds(self, student: str) -> list[int]:
        """``student``'s seeds, exercise 1 first."""
        return [self.seed(student, k) for k in range(1, self.exercises + 1)]

    def student_exercises(self, tags: dict[str, str]) -> list[ExerciseOptions]:
        """The exercises of the student whose experiment's ``tags`` these are, from their own
        seeds (`student_seeds`: a student's copy carries no salt to draw them)."""
        return [self.options(s) for s in student_seeds(tags, self.exercises)]

    def exercises_of(self, student: str) -> list[ExerciseOptions]:
        """``student``'s exercises, 1 first."""
        return [self.options(s) for s in self.seeds(student)]

    def tags(self, role: str, student: str | None = None) -> dict[str, str]:
        """The tags of the gradebook (``role`` `GRADEBOOK`) or of a student's experiment."""
        out = {
            ROLE_TAG: role,
            ASSIGNMENT_TAG: self.name,
            DEFINITION_TAG: json.dumps(self.definition(), sort_keys=True),
            DUE_TAG: iso(self.due) if self.due else "",
            POLICY_TAG: self.policy.to_json(),
            ZONE_TAG: self.timezone,
        }
        if student is not None:  # the student's copy: no salt, their own seeds
            out[DEFINITION_TAG] = json.dumps(self.definition(salt=False), sort_keys=True)
            out[STUDENT_TAG] = student
            out[SEEDS_TAG] = json.dumps(self.seeds(student))
        return out

    @classmethod
    def from_tags(cls, tags: dict[str, str]) -> Assignment:
        """The assignment an experiment's tags define; `AssignmentError` if they do not."""
        try:
            definition = json.loads(tags[DEFINITION_TAG])
            if not isinstance(definition, dict):
                raise TypeError(f"a definition is a JSON object, got {type(definition).__name__}")
            definition.setdefault("salt", "")  # a student's copy
            definition.setdefault("source", True)  # written before the default changed
            due = tags.get(DUE_TAG) or None
            return cls(
                name=tags[ASSIGNMENT_TAG],
                **definition,
                due=from_iso(due) if due else None,
                policy=Policy.from_json(tags.get(POLICY_TAG, "")),
                timezone=checked_zone(tags.get(ZONE_TAG) or UTC_NAME),
            )
        except (KeyError, TypeError, ValueError) as e:  # ZoneError is a ValueError
            if isinstance(e, AssignmentError):
                raise
            raise AssignmentError(f"the experiment's tags define no assignment ({e})") from None

    def describe_due(self, lang: str = "en", zone: str | None = None) -> str:
        """``due 2026-12-01 19:59 UTC-03:00`` or ``no due time`` (`due_words`), in ``zone``
        (default: the assignment's)."""
        return due_words(self.due, lang, zone or self.timezone)


def student_seeds(tags: dict[str, str], exercises: int) -> list[int]:
    """A student's seeds as their experiment's tags hold them (`SEEDS_TAG`): ``exercises``
    integers in ``[0, 2**63)``; `AssignmentError` for anything else."""
    try:
        seeds = json.loads(tags.get(SEEDS_TAG, ""))
    except ValueError:
        seeds = None
    if (
        not isinstance(seeds, list)
        or len(seeds) != exercises
        or not all(type(s) is int and 0 <= s < 2**63 for s in seeds)
    ):
        raise AssignmentError(f"the experiment's tags hold no {exercises} seeds of a student")
    return seeds


def matching_exercise(doc: object, exercises: list[ExerciseOptions]) -> int | None:
    """Which of ``exercises`` (1-based) an answer document names in its ``"exercise"``
    object, or ``None``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("exercise"), dict):
        return None
    from attention_ref.exercises.exercise import options_from_json
    from attention_ref.inputs.attention_input import InputError

    try:
        named = options_from_json(doc["exercise"]).to_json()
    except InputError:
        return None
    for k, opt in enumerate(exercises, start=1):
        if named == opt.to_json():
            return k
    return None


__all__ = [
    "ANSWER_FILE",
    "GRADE",
    "GRADEBOOK",
    "RESERVED",
    "SUBMISSIONS",
    "Assignment",
    "AssignmentError",
    "check_name",
    "duration",
    "from_iso",
    "from_ms",
    "gradebook_experiment",
    "iso",
    "iso_ms",
    "lateness",
    "matching_exercise",
    "parse_due",
    "student_experiment",
    "student_seeds",
]
