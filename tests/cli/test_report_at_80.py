"""``attnref train`` and ``report`` at a terminal 80 columns wide (issue 42, items 8 and 10): the
training's lines fit (a command or an address on a line of its own, whole); the Q03 report of
that run, its table fitted to the width and the next step said; to a pipe, the markdown
itself. Both run as a person runs them, on a pseudo-terminal (`at_terminal`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.cli.test_check_at_80 import ROOT, at_terminal, columns_of
from tests.configs import TINY_ARGS

pytestmark = pytest.mark.slow
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_report_of_one_run_fits_80_columns_and_says_what_q03_needs(tmp_path, monkeypatch):
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; from attention_ref.cli.main import main; sys.exit(main(sys.argv[1:]))"

    def piped(*args: str) -> subprocess.CompletedProcess[str]:
        """``attnref ARGS`` with its output to a pipe."""
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )

    train = [*TINY_ARGS, "--max-steps", "20", "--eval-interval", "10", "--tracking-uri", store]
    monkeypatch.chdir(tmp_path)
    # the training too, at the terminal: every line fits but a command or an address printed
    # on a line of its own to be copied whole, or a word longer than a line (the store's URI)
    done, trained = at_terminal(["train", *train, "--out-dir", str(tmp_path / "runs")])
    assert done == 0, "\n".join(trained)
    trained = [ANSI.sub("", line) for line in trained]
    wide = [
        line
        for line in trained
        if columns_of(line) > 80 and not line.startswith("  ") and " " in line.strip()
    ]
    assert wide == [], wide
    commands = [line.strip() for line in trained if line.startswith("  ")]
    assert any(re.fullmatch(r"\S*attnref sample --run-id [0-9a-f]{32}", c) for c in commands)
    assert any(c.endswith(f"ui --backend-store-uri {store}") for c in commands), commands
    code_, lines = at_terminal(["report", "--tracking-uri", store])
    assert code_ == 0, "\n".join(lines)
    lines = [ANSI.sub("", line) for line in lines]  # the terminal's styles take no column
    wide = [line for line in lines if columns_of(line) > 80]
    assert wide == [], wide
    text = " ".join(" ".join(lines).split())
    assert "To answer Q03" in text and "attnref train --no-attention" in text
    # the table: no cell cut short, the columns it leaves out said
    table = [line for line in lines if line.startswith(("┃", "│"))]
    assert table and not any("…" in line for line in table), table
    assert "left out at 80 columns:" in text and "attnref report -o FILE has every column" in text
    # the control: to a pipe, the markdown itself, its table on lines wider than 80
    report = piped("report", "--tracking-uri", store)
    assert report.returncode == 0, report.stderr
    assert any(line.startswith("| ") and len(line) > 80 for line in report.stdout.splitlines())


def test_markdown_is_cut_into_its_tables_and_the_rest():
    from attention_ref.cli.tables import markdown_blocks

    text = "# T\n\nA | B in a sentence.\n\n| a | b |\n|---|---:|\n| x | 1.5 |\n\nEnd."
    blocks = markdown_blocks(text)
    assert [k for k, _ in blocks] == ["text", "table", "text"]
    assert blocks[1][1] == [["a", "b"], ["x", "1.5"]]  # the |---| line dropped
    assert "A | B in a sentence." in blocks[0][1]  # a bar inside a sentence is text
