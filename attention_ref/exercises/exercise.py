r"""Exercises like seed 000's, for teachers: ``attnref exercise``.

An exercise is four documents: the statement (`attention_ref.exercises.statement`), the
solution key (`attention_ref.exercises.key`: the statement's questions answered under their
titles, the gradients' when asked; one writer for both languages, the numbers computed once),
its problem as JSON (`Exercise.problem`: the ``--input`` format, which ``explain --input``
takes, with ``"variant"`` and its keys for today's attention), and the answer to fill in
(`Exercise.answer`: the ``"exercise"`` object with its language and decimals, every step
``null``), which ``check`` takes once filled. The statement and key carry the language, so
the writers print decimal commas in Portuguese; the check reports in the answer's.

One problem model (`attention_ref.exercises.options`): ``h`` query heads sharing ``g`` K/V
heads, a mask (causal, none, a sliding window), positions (none, RoPE); the homework's masked
multi-head attention (``mha``, the default) is the preset :math:`g = h`, causal, no rotation,
and its options, documents and JSON are what they were before the variants (no
``"variant"`` key). One generator (`attention_ref.exercises.draw`): no drawn problem hides a
mistake of its catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from attention_ref.exercises.answer import template
from attention_ref.exercises.answer_words import ANSWER_FILE
from attention_ref.exercises.draw import WORDS, draw, draw_problem, trace_of
from attention_ref.exercises.feature_table import layout
from attention_ref.exercises.options import (
    EXERCISE_VARIANTS,
    LANGS,
    MAX_D_MODEL,
    MAX_DECIMALS,
    MAX_TOKENS,
    ExerciseOptions,
    OptionError,
    options_from_json,
)
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.exercises.statement import statement
from attention_ref.exercises.words import TEXT
from attention_ref.render import Explanation, JSONValue


@dataclass(frozen=True, kw_only=True)
class Exercise:
    """One exercise: its options, its numbers (``--input`` JSON, and ``trace``: as the chain
    reads them), statement, answer template and key. The key is written when it is first read
    (``attnref exercise`` without ``--out`` prints the statement alone): its numbers are the
    grader's own float64 chain's (`attention_ref.exercises.numbers`), no torch either."""

    options: ExerciseOptions
    problem: dict[str, JSONValue]
    statement: Explanation
    answer: dict[str, object]
    trace: ProblemTrace

    @cached_property
    def key(self) -> Explanation:
        """The solution key (`attention_ref.exercises.key.key`; no torch)."""
        from attention_ref.exercises.key import key

        return key(self.options, self.problem, self.statement, self.trace)


def make_exercise(opt: ExerciseOptions, answer: str = ANSWER_FILE) -> Exercise:
    """Draw the problem of ``opt`` and write its statement and answer template (the key when
    it is read: `Exercise.key`); ``answer``: the answer file as the statement names it (the
    path the student has, ``ex/answer.json`` where ``--out ex`` wrote it)."""
    drawn = draw(opt)
    problem = drawn.problem
    tr = trace_of(opt, problem)
    text = statement(opt, problem, tr, drawn.hidden, answer)
    answer = template(
        {"exercise": opt.answer_json(), "draw": drawn.kept},  # check draws it again, no search
        layout(opt.features),
        opt.heads,
        opt.g,
        backward=opt.backward,
        has_w_o="W_O" in problem,
    )
    return Exercise(options=opt, problem=problem, statement=text, answer=answer, trace=tr)


__all__ = [
    "EXERCISE_VARIANTS",
    "LANGS",
    "MAX_DECIMALS",
    "MAX_D_MODEL",
    "MAX_TOKENS",
    "TEXT",
    "WORDS",
    "Exercise",
    "ExerciseOptions",
    "OptionError",
    "draw_problem",
    "make_exercise",
    "options_from_json",
]
