r"""What a teacher decides of an assignment beyond its exercises: late work, attempts, feedback.

Stored with the assignment (one tag of its experiments, `POLICY_TAG`, which may change like the
due time), printed on every statement (`Policy.words`), and applied where each rule can be held:

* **late work**: accepted as it is (the default), or with a penalty of ``late_penalty`` percent
  of the points per day *or part of a day* after the due time,

  .. math::

      \mathrm{penalty} = \min\bigl(100,\; p \cdot \lceil \mathrm{late} / 1\,\mathrm{d} \rceil
      \bigr)\ \%, \qquad \mathrm{points} = \mathrm{steps\ right} \cdot
      (1 - \mathrm{penalty} / 100),

  and refused after a ``cutoff`` (the server's gate does not finish a submission its clock
  receives after it; the gradebook counts none received after it);
* **attempts**: unlimited (the default), or at most ``attempts`` per exercise (the gate
  refuses the next one; the gradebook counts the first ``attempts`` received);
* **feedback**: what the class's commands (``homework submit`` and ``status``) tell a student:
  ``full`` (every step's verdict with the right values of wrong entries, and the diagnosis),
  ``steps`` (each step right or wrong and the first wrong step: no right value, no diagnosis)
  or ``none`` (that the answer was received, and nothing more until the teacher releases the
  grades, ``server grade --release``). Homework is open-book (the README): a student who has
  attnref can compute every step of their numbers, so the policy says what the server tells,
  not what a student could find out.

Pure: no network, no torch, no mlflow.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Final

from attention_ref.classroom.coursework.class_time import UTC_NAME, shown

#: the tag of an assignment's experiments that holds its policy (JSON)
POLICY_TAG: Final = "attnref.homework.policy"
#: the tag the gate writes on a finished submission under an attempts limit: the exercise its
#: answer names (counted by the gate, read by nobody else)
EXERCISE_TAG: Final = "attnref.homework.exercise"
MAX_ATTEMPTS: Final = 100
DAY: Final = dt.timedelta(days=1)


class PolicyError(ValueError):
    """A policy that cannot be held; the message says why, in one line."""


class Feedback(StrEnum):
    """What ``homework submit`` and ``status`` tell a student (the module docstring)."""

    FULL = "full"
    STEPS = "steps"
    NONE = "none"


@dataclass(frozen=True, kw_only=True)
class Policy:
    """An assignment's rules for late work, attempts and feedback (the module docstring)."""

    late_penalty: int = 0  # percent of the points per day or part of a day late
    cutoff: dt.datetime | None = None  # UTC; nothing is received after it
    attempts: int | None = None  # None: unlimited
    feedback: Feedback = Feedback.FULL
    released: bool = False  # under feedback "none": the teacher released the grades

    def __post_init__(self) -> None:
        if not 0 <= self.late_penalty <= 100:
            raise PolicyError(
                f"--late-penalty is a percentage from 0 to 100, got {self.late_penalty}"
            )
        if self.attempts is not None and not 1 <= self.attempts <= MAX_ATTEMPTS:
            raise PolicyError(
                f"--attempts must be between 1 and {MAX_ATTEMPTS}, got {self.attempts}"
            )
        object.__setattr__(self, "feedback", Feedback(self.feedback))

    def check_due(self, due: dt.datetime | None) -> None:
        """A penalty or a cut-off needs a due time, and a cut-off is not before it."""
        if due is None and (self.late_penalty or self.cutoff):
            which = "--late-penalty" if self.late_penalty else "--cutoff"
            raise PolicyError(f"{which} needs a due time (--due): late is after the due time")
        if due is not None and self.cutoff is not None and self.cutoff < due:
            raise PolicyError(
                f"--cutoff {shown(self.cutoff, seconds=True)} is before the due time "
                f"{shown(due, seconds=True)}"
            )

    def penalty(self, late: dt.timedelta | None) -> int:
        """The penalty in percent of a submission ``late`` after the due time (`None`: on
        time): ``late_penalty`` per day or part of a day, at most 100."""
        if not late or not self.late_penalty:
            return 0
        days = math.ceil(late / DAY)
        return min(100, self.late_penalty * days)

    def after_cutoff(self, received: dt.datetime) -> bool:
        """Whether a submission received at ``received`` (the server's clock) is too late."""
        return self.cutoff is not None and received > self.cutoff

    @property
    def shows_values(self) -> bool:
        """Whether the class's commands show right values and diagnoses: ``full``, or
        ``none`` once the grades are released (then everything, as ``full``)."""
        return self.feedback is Feedback.FULL or (self.feedback is Feedback.NONE and self.released)

    @property
    def shows_steps(self) -> bool:
        """Whether they show each step's verdict now: ``full``, ``steps``, or ``none`` once
        the grades are released."""
        return self.feedback is not Feedback.NONE or self.released

    def to_json(self) -> str:
        """The policy as its tag holds it."""
        d = asdict(self)
        d["cutoff"] = f"{self.cutoff:%Y-%m-%dT%H:%M:%SZ}" if self.cutoff else None
        d["feedback"] = str(self.feedback)
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Policy:
        """The policy a tag holds (an empty tag, or none: the default policy)."""
        if not text:
            return cls()
        try:
            d = json.loads(text)
            cutoff = d.pop("cutoff", None)
            when = dt.datetime.fromisoformat(cutoff.replace("Z", "+00:00")) if cutoff else None
            return cls(**d, cutoff=when)
        except (AttributeError, TypeError, ValueError) as e:
            raise PolicyError(f"the assignment's policy tag is not a policy ({e})") from None

    def changed(self, **given: object) -> Policy:
        """This policy with the options a teacher gave (``None``: keep)."""
        return replace(self, **{k: v for k, v in given.items() if v is not None})

    def late_words(self, lang: str = "en", zone: str = UTC_NAME) -> str:
        """The rule on late work in a sentence, in ``lang``: its penalty per started day (or
        none) and its cut-off, in ``zone``; what a late label's ``(-20%)`` comes from."""
        w = WORDS[lang]
        late = w["penalty"].format(p=self.late_penalty) if self.late_penalty else w["accepted"]
        if self.cutoff is not None:
            late += w["cutoff"].format(at=shown(self.cutoff, zone))
        return late + "."

    def words(self, lang: str = "en", due: bool = True, zone: str = UTC_NAME) -> str:
        """The policy in sentences, as a statement prints it, in ``lang`` (without a due time,
        ``due`` false, nothing is late: no sentence on late work); the cut-off in ``zone``."""
        w = WORDS[lang]
        late = self.late_words(lang, zone)
        tries = (
            w["unlimited"]
            if self.attempts is None
            else w["limited"].format(n=self.attempts, s="s" if self.attempts != 1 else "")
        )
        said = [tries, w[f"feedback_{self.feedback}"]]
        return " ".join([late, *said] if due else said)


#: The policy's sentences, per language.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "accepted": "Late work is accepted with no penalty",
        "penalty": "Late work loses {p}% of its points per day or part of a day",
        "cutoff": ", and is refused after {at}",
        "unlimited": "You may submit again as often as you like; the latest attempt counts.",
        "limited": "You have {n} attempt{s} per exercise; the latest counts.",
        "feedback_full": "On submitting you see the check at once: each step, the right values "
        "of wrong entries, the diagnosis.",
        "feedback_steps": "On submitting you see which steps are right and the first wrong one, "
        "not the right values.",
        "feedback_none": "On submitting you see that it was received; the check comes when the "
        "teacher releases the grades.",
    },
    "pt": {
        "accepted": "Entregas atrasadas são aceitas sem desconto",
        "penalty": "Entregas atrasadas perdem {p}% dos pontos por dia ou fração de dia",
        "cutoff": " e são recusadas depois de {at}",
        "unlimited": "Você pode reenviar quantas vezes quiser; vale a última tentativa.",
        "limited": "Você tem {n} tentativa{s} por exercício; vale a última.",
        "feedback_full": "Ao enviar você vê a correção na hora: cada passo, os valores certos "
        "das entradas erradas, o diagnóstico.",
        "feedback_steps": "Ao enviar você vê quais passos estão certos e o primeiro errado, sem "
        "os valores certos.",
        "feedback_none": "Ao enviar você vê que a resposta foi recebida; a correção vem quando "
        "o professor liberar as notas.",
    },
}


__all__ = [
    "EXERCISE_TAG",
    "POLICY_TAG",
    "Feedback",
    "Policy",
    "PolicyError",
]
