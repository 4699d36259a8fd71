"""``attnref check ANSWER.json``: a student's hand computation, step by step, with diagnoses."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli.language import explicit, from_locale, option_help

if TYPE_CHECKING:
    from attention_ref.exercises.verdicts import Report

#: Exit codes: every given step right, some step wrong or short of decimals (bad input: 2).
EXIT_RIGHT, EXIT_WRONG = 0, 1


def report_text(report: Report, values: bool = True) -> str:
    """The report as ``check`` and ``homework submit`` print it: at a terminal, broken at its
    width, a step's verdict under its own column (`report_at`); to a pipe, whole lines.
    Without ``values``, no right value and no diagnosis (`report_lines`). `printable`: a
    diagnosis quotes the answer's keys, and no control character of them reaches a terminal."""
    from attention_ref.cli.tables import terminal_columns
    from attention_ref.exercises.grader import report_at, report_lines
    from attention_ref.render.printable import printable

    columns = terminal_columns()
    lines = report_lines(report, values) if columns is None else report_at(report, columns, values)
    return printable("\n".join(lines))


def check(
    answer: Annotated[
        Path,
        typer.Argument(
            help="Your answer, JSON: answer.json as attnref exercise --out writes it, with the "
            'steps you computed filled in (null: not given), or any file naming the problem ("'
            'exercise": {"seed": …}, "input": FILE or "example": NAME) with steps in explain\'s '
            'JSON names: "heads": [{"Q", "K", "V", "scores", "S", "S_masked", "A", "H"}], '
            '"concat", "output", "grads"; an answer to exercise --variant adds the steps its '
            'features ask (the K/V heads, "kv_heads": [{"K", "V", …}], and each feature\'s, in '
            "explain's names), and its report names the features' mistakes. The exercise file "
            "itself (exercise.json) "
            "is refused in one line (exit 2): it is the problem, not an answer.",
            show_default=False,
        ),
    ],
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang",
            help=option_help(
                "Language of the report and of the errors: en, pt (decimal commas).",
                '$ATTNREF_LANG, else the answer\'s ("lang" of its "exercise"), else the '
                "locale's (LANG=pt_BR.UTF-8: pt), else en",
            ),
            show_default=False,
        ),
    ] = None,
) -> int:
    """Check a hand computation: each step right or not, the first wrong step, and the
    mistakes of the catalogue that reproduce your numbers (one, or two together).

    Grading: each entry is graded at the decimals the exercise asks (3 unless it says
    otherwise), whatever the decimals you wrote. An entry is right when it is the exact value
    rounded as asked, give or take at least the rounding that earlier steps rounded as asked
    carry into it (an interval computed entry by entry: never narrower than that rounding,
    sometimes wider). Every entry is read with its zeros put back (0.67 as 0.670; 2 for 2.000),
    whether it is right or not: a slip onto a trailing zero is a slip. A matrix with no entry
    to 3 decimals whose entries are the values at the decimals written (2 for 2.121) gets
    "give 3 decimals", unless a mistake of the catalogue reproduces it as written: then it is
    wrong and the mistake is named. The report, and every error about the answer, is in
    the language --lang or $ATTNREF_LANG asks, else the answer's ("lang" of its "exercise"),
    else the locale's (LANG=pt_BR.UTF-8 is Portuguese), else English. Steps are named
    as the statement writes them, with the JSON path beside: Q⁽¹⁾ (heads[0].Q).

    A masked entry (−∞) is written "-inf" (or "−∞", the statement's symbol); null in a
    matrix, another spelling, a number in quotes or with a decimal comma ("0,670") and a large
    number standing in for −∞ (-1e9) are refused in one line that says what to write.

    At a terminal the report's lines are broken at its width, a step's verdict going on under
    its own column; to a pipe or a file, each line whole.

    Exit code 0 when every given step is right, 1 when one is wrong or short of decimals, 2
    for a bad file, the exercise file itself, or an answer with no step filled in.
    """
    from attention_ref.exercises.grader import check_file

    named = explicit(lang)  # None: the answer's language, else the locale's
    report = check_file(answer, named, from_locale())  # a bad file: InputError, one line, exit 2
    print(report_text(report))
    if report.all_right:
        return EXIT_RIGHT
    raise typer.Exit(EXIT_WRONG)
