"""``attnref check ANSWER.json``: a student's hand computation, step by step, with diagnoses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: Exit codes: every given step right, some step wrong (bad input: 2, as everywhere).
EXIT_RIGHT, EXIT_WRONG = 0, 1


def check(
    answer: Annotated[
        Path,
        typer.Argument(
            help='Your answer, JSON: the problem ("exercise": {"seed": …}, "input": FILE or '
            '"example": NAME) and any steps in explain\'s JSON names: "heads": [{"Q", "K", '
            '"V", "scores", "S", "S_masked", "A", "H"}], "concat", "output", "grads".',
            show_default=False,
        ),
    ],
) -> int:
    """Check a hand computation: each step right or wrong, the first wrong step, and the
    common mistake that reproduces your numbers, if one does.

    Exit code 0 when every given step is right, 1 when one is wrong, 2 for a bad file.
    """
    from attention_ref.worked.check import check_answer, load_answer, report_lines

    report = check_answer(load_answer(answer))  # a bad file: InputError, one line, exit 2
    print("\n".join(report_lines(report)))
    if report.all_right:
        return EXIT_RIGHT
    raise typer.Exit(EXIT_WRONG)
