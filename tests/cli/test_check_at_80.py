"""``attnref check`` at a terminal 80 columns wide (issue 42 item 8): every line broken at spaces
within the width, a step's verdict under its own column (or under its label when a variant's
long label leaves it less than half the line), nothing left out; to a pipe, whole lines.

The command runs as a student runs it: a process whose output is a pseudo-terminal of 80
columns (no ``COLUMNS`` in its environment: the terminal's own size).
"""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def at_terminal(args: list[str], columns: int = 80) -> tuple[int, list[str]]:
    """``attnref ARGS`` with its output on a pseudo-terminal ``columns`` wide: exit code, lines."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(ROOT)
    code = "import sys; from cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=child, stdout=child, stderr=child, env=env
    )
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError as e:  # EIO: the child closed the terminal
            if e.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    return proc.wait(timeout=300), out.decode("utf-8").replace("\r\n", "\n").splitlines()


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
    from cli.main import main

    path, whole = answer(tmp_path, **CASES["homework"])
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["check", path]) == 1
    assert capsys.readouterr().out.splitlines() == whole
