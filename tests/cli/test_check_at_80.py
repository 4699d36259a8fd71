"""``attnref check`` at a terminal 80 columns wide (issue 42 item 8): every line broken at spaces
within the width, a step's verdict under its own column (or under its label when a variant's
long label leaves it less than half the line), nothing left out; to a pipe, whole lines.

The command runs as a student runs it: a process whose output is a pseudo-terminal of 80
columns (no ``COLUMNS`` in its environment: the terminal's own size).
"""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from screens import on_terminal  # noqa: E402


def at_terminal(
    args: list[str],
    columns: int = 80,
    code: str = "import sys; from attention_ref.cli.main import main; sys.exit(main(sys.argv[1:]))",
) -> tuple[int, list[str]]:
    """``attnref ARGS`` (or Python's ``code``, ARGS its ``sys.argv[1:]``) with its output on a
    pseudo-terminal ``columns`` wide (`tools/screens.py`'s `on_terminal`): exit code, lines."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-c", code, *args]
    done, text = on_terminal(argv, env, columns=columns)
    return done, text.splitlines()


def columns_of(line: str) -> int:
    """The columns a line takes (a combining tilde takes none)."""
    return sum(not unicodedata.combining(c) for c in line)


def answer(tmp_path: Path, **options: object) -> tuple[str, list[str]]:
    """An answer with the scaling forgotten (scores, S and A to 3 decimals), and its report's
    lines."""
    from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text
    from attention_ref.exercises.catalogue import mistakes_for
    from attention_ref.exercises.chain import computed_steps
    from attention_ref.exercises.exercise import ExerciseOptions
    from attention_ref.exercises.grader import check_file, report_lines

    prob = Problem.of_exercise(ExerciseOptions(**options))  # type: ignore[arg-type]
    d = prob.data()
    ms = [m for m in mistakes_for(d) if m.name == "no_scale"]
    doc = answer_from_steps(computed_steps(d, ms), prob.naming, keys=("scores", "S", "A"))
    path = tmp_path / "answer.json"
    path.write_text(answer_text(doc, 3), encoding="utf-8")
    return str(path), report_lines(check_file(path, None))


CASES = {
    "homework": {"seed": 9},
    "gqa+rope": {"seed": 3, "variant": "gqa+rope", "heads": 4, "d_model": 8},
    "portuguese": {"seed": 9, "lang": "pt"},
}


@pytest.mark.parametrize("case", list(CASES))
def test_at_80_columns_no_line_is_wider_and_no_word_is_lost(tmp_path, case):
    path, whole = answer(tmp_path, **CASES[case])
    assert max(columns_of(line) for line in whole) > 80, "the control: lines wider than 80"
    code, lines = at_terminal(["check", path])
    assert code == 1, lines
    assert max(columns_of(line) for line in lines) <= 80, lines
    assert " ".join(lines).split() == " ".join(whole).split()  # the same words, in order
    # a wrapped verdict goes on under its own column (6 blanks or more), never back at column 0
    # or at a step's own indent: one line starts each step, as many as the report has steps
    steps = [line for line in whole if line.startswith("  ")]
    starts = [line for line in lines if line.startswith("  ") and line[2] != " "]
    assert len(starts) == len(steps), lines
    goes_on = [line for line in lines if line.startswith("      ")]
    assert goes_on, lines


def test_a_long_label_puts_the_verdict_under_it(tmp_path):
    """gqa+rope's labels take more than half of 80 columns: the verdict of a wrong step goes
    on its own lines under the label, not squeezed into the last columns."""
    path, _ = answer(tmp_path, **CASES["gqa+rope"])
    _, lines = at_terminal(["check", path])
    label = next(i for i, line in enumerate(lines) if line.startswith("  S⁽¹⁾ (heads[0].S)"))
    assert lines[label].rstrip() == "  S⁽¹⁾ (heads[0].S)"
    assert lines[label + 1].startswith("      WRONG: ")


def test_to_a_pipe_the_lines_are_whole(tmp_path, capsys, monkeypatch):
    """The control: no terminal, the report as `report_lines` writes it, whatever COLUMNS says
    (pytest-xdist's workers say 80)."""
    from attention_ref.cli.main import main

    path, whole = answer(tmp_path, **CASES["homework"])
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["check", path]) == 1
    assert capsys.readouterr().out.splitlines() == whole


ECHO = "import sys; from attention_ref.cli.tables import echo; echo(sys.argv[1])"


def test_what_the_homework_commands_say_breaks_at_the_terminal_and_not_to_a_pipe():
    """`attention_ref.cli.tables.echo`, what ``homework fetch``, ``submit`` and ``status`` print
    their sentences with: at an 80-column terminal broken at spaces, the command to copy (indented)
    on a line of its own, whole; to a pipe, the text as it is."""
    from attention_ref.classroom.exchange.student_words import said

    long = "attention-pt-" + "x" * 40
    text = said("fill_in", "pt", name=long, file=f"{long}/answer-1.json")
    sentence = said("fetched", "pt", name=long, student="ana", n=2, due="prazo 2026-12-01 23:59")
    code, lines = at_terminal([text + "\n" + sentence * 2], code=ECHO)
    assert code == 0, lines
    command = f"  attnref homework submit {long} {long}/answer-1.json"
    assert command in lines and len(command) > 80  # whole, to be copied
    assert all(len(line) <= 80 for line in lines if line != command), lines
    assert " ".join(lines).split() == (text + " " + sentence * 2).split()
    # the control: to a pipe, the same text, its lines as they are
    piped = subprocess.run(
        [sys.executable, "-c", ECHO, text + "\n" + sentence * 2],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"},
        check=True,
    )
    assert piped.stdout == text + "\n" + sentence * 2 + "\n"
