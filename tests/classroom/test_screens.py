"""`tools/screens.py` draws a terminal's text as a picture: 80 columns wide, a line per line."""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from screens import CHAR_PX, PAD_PX, render, size_of  # noqa: E402


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return struct.unpack(">II", data[16:24])


def test_a_picture_is_80_columns_wide_and_a_line_per_line(tmp_path):
    table = "│ student │ steps │\n" + "x" * 80
    assert size_of(table)[0] >= 80 * CHAR_PX + 2 * PAD_PX
    assert png_size(render(table, tmp_path / "two.png")) == size_of(table)
    long = "\n".join(["line"] * 20)
    assert png_size(render(long, tmp_path / "twenty.png")) == size_of(long)
    # the control: more lines, a taller picture of the same width
    assert size_of(long)[1] > size_of(table)[1] and size_of(long)[0] == size_of(table)[0]
    assert not (tmp_path / "two.html").exists()  # the page it drew from is not left behind


SCREENS = ROOT / "docs" / "results" / "screens"
#: the first words of an error, in each language (`attention_ref.cli.errors.CLIError.line`)
ERROR = re.compile(r"attnref: (error|erro): ")


def over_80(text: str) -> list[str]:
    """The lines of a screen wider than 80 columns, but for one word alone on its line (a URL,
    an id: a terminal cannot break it anywhere a reader could copy it back) and an error (one
    line by rule, for a program to read: ``attnref: error: …``, the terminal folds it)."""
    return [
        line
        for line in text.splitlines()[1:]  # the first line is the command, as typed
        if len(line) > 80 and len(line.split()) > 1 and not ERROR.match(line)
    ]


def table_rows(text: str) -> list[list[str]]:
    """The rows of a screen's table, each cell's lines joined by spaces: a line whose first
    cell is empty goes on with the row above (a cell of words over lines; the first column of
    these tables is a name, never empty), a rule between rows ends one."""
    rows: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("│"):
            parts = [c.strip() for c in line.split("│")[1:-1]]
            if current is not None and not parts[0]:
                current[:] = [f"{a} {b}".strip() for a, b in zip(current, parts, strict=True)]
                continue
            current = parts
            rows.append(current)
        elif line.startswith(("├", "└")):
            current = None
    return rows


def test_every_recorded_screen_fits_80_columns():
    screens = sorted(SCREENS.glob("*.txt"))
    names = {p.stem for p in screens}
    assert {
        "server-grades",
        "server-assign-late-penalty",
        "server-grades-late-penalty",
        "check-gqa",
        "homework-fetch-pt",
        "homework-submit-pt",
        "runs",
        "server-grades-moodle",
        "server-grades-canvas",
        # issue 58's term (tools/term.py): the teacher's and the students' screens
        "term-add-students-moodle",
        "term-assign-move-due",
        "term-grades",
        "term-grades-moodle",
        "term-status-bruno",
        "term-status-carla",
        "term-submit-over-attempts",
    } <= names
    for path in screens:
        assert not over_80(path.read_text(encoding="utf-8")), path.name
    # the judge can fail: a long sentence is caught, a long address alone on its line is not
    assert over_80("$ cmd\n" + "policy: " + "word " * 20) and not over_80("$ cmd\n  " + "u" * 99)
    assert not over_80("$ cmd\nattnref: erro: " + "word " * 20)  # an error: one line


def test_the_late_penalty_screen_shows_the_policy_and_what_it_took():
    said = (SCREENS / "server-assign-late-penalty.txt").read_text(encoding="utf-8")
    assert "policy: Late work loses 50% of its points per day" in said
    book = (SCREENS / "server-grades-late-penalty.txt").read_text(encoding="utf-8")
    plain = (SCREENS / "server-grades.txt").read_text(encoding="utf-8")
    assert "(-50%)" in book and "(-50%)" not in plain  # the control: graded before the policy
    # what the penalty left: a late 18/18 is 9 points, in the column the penalty keeps
    header = next(line for line in book.splitlines() if line.startswith("┃"))
    assert "points" in header and "points" not in plain.splitlines()[2], header
    late = [row for row in table_rows(book) if "(-50%)" in row[-1]]
    assert any(row[1] == "18/18" and row[2] == "9" for row in late), late


def test_the_students_screens_speak_portuguese_and_hold_back_the_values():
    """Issue 42's items 2, 6 and 7 as the student sees them: fetch and submit of a Portuguese
    assignment whose feedback is the verdicts alone, from the folder fetch wrote."""
    fetched = (SCREENS / "homework-fetch-pt.txt").read_text(encoding="utf-8").splitlines()
    assert fetched[1].startswith("tarefa 'attention-pt' para ")
    assert "  attnref homework submit attention-pt attention-pt/answer-1.json" in fetched
    sent = (SCREENS / "homework-submit-pt.txt").read_text(encoding="utf-8")
    assert sent.startswith("$ attnref homework submit attention-pt answer-1.json\n")
    assert "ERRADO" in sent and "Primeiro passo errado" in sent
    # the policy `steps`: no right value, no diagnosis (the control: the check of a GQA
    # answer, under no policy, gives both)
    assert "certa " not in sent and "Diagnóstico" not in sent
    checked = (SCREENS / "check-gqa.txt").read_text(encoding="utf-8")
    assert "right " in checked and "Diagnosis: no scaling" in checked
    assert "enviado answer-1.json como exercício 1" in " ".join(sent.split())


def test_the_runs_of_an_ablation_are_told_apart_at_80_columns():
    """Issue 42's item 9: after an ablation, each arm's name and attention before its id."""
    runs = (SCREENS / "runs.txt").read_text(encoding="utf-8")
    for arm in ("multihead", "none", "uniform"):
        assert f"│ ablation/{arm} " in runs, runs


def test_the_lms_screens_say_the_file_and_the_steps_of_its_import():
    """Issue 42's items 3 and 4 as the teacher sees them: the file written, then what to make
    first in Moodle (the grade item, its maximum) and what Canvas matches students by."""
    for system, first in (("moodle", "Moodle"), ("canvas", "Canvas")):
        said = (SCREENS / f"server-grades-{system}.txt").read_text(encoding="utf-8")
        assert f"wrote attention-1-{system}.csv" in said, said
        assert first in said and "18" in said, said  # the points possible, for the item
