"""``attnref exercise`` at a terminal 80 columns wide (issue 42, item 8): its Markdown's
paragraphs broken at the width, every word kept, tables and headings as they are; to a pipe,
the Markdown with a paragraph per line (its control). Run on a pseudo-terminal, as a person
runs it (`at_terminal`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attention_ref.cli.tables import wrap_markdown
from tests.cli.test_check_at_80 import ROOT, at_terminal, columns_of

pytestmark = pytest.mark.slow

MAIN = "import sys; from attention_ref.cli.main import main; sys.exit(main())"


@pytest.mark.parametrize(
    "args", [["--seed", "3"], ["--seed", "5", "--variant", "gqa+rope", "--key"]]
)
def test_at_80_columns_the_statement_fits_and_says_every_word(args):
    code, lines = at_terminal(["exercise", *args])
    assert code == 0, "\n".join(lines)
    wide = [line for line in lines if columns_of(line) > 80 and not line.startswith("|")]
    assert wide == [], wide
    piped = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from attention_ref.cli.main import main; sys.exit(main())",
            "exercise",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert max(len(line) for line in piped.splitlines()) > 80  # the control: a pipe's lines
    assert " ".join(" ".join(lines).split()) == " ".join(piped.split())  # no word lost


def test_only_prose_is_wrapped():
    text = (
        "# A heading that is long "
        + "x " * 40
        + "\n\n"
        + "A paragraph "
        + "word " * 30
        + "\n\n"
        + "- an item "
        + "word " * 30
        + "\n\n"
        + "| a | "
        + "b | " * 40
        + "\n\n"
        + "$$\nA = "
        + "x + " * 40
        + "\n$$\n\n"
        + "```\ncode "
        + "y " * 60
        + "\n```\n"
    )
    lines = wrap_markdown(text, 40).splitlines()
    assert lines[0].startswith("# A heading") and len(lines[0]) > 40  # headings stay whole
    item = next(i for i, line in enumerate(lines) if line.startswith("- an item"))
    assert lines[item + 1].startswith("  word")  # an item's next lines under its text
    for kept in ("| a | b", "A = x", "code y"):
        assert any(line.startswith(kept) and len(line) > 40 for line in lines), kept
    assert all(len(line) <= 40 for line in lines if line.startswith(("A paragraph", "word")))
    assert " ".join(wrap_markdown(text, 40).split()) == " ".join(text.split())


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_at_80_columns_out_says_where_it_wrote_and_the_command_whole(tmp_path, lang):
    """``exercise --out``'s two lines at a terminal: broken at 80 columns (the Portuguese one
    is 88 long), the check command on a line of its own, whole, to copy."""
    from screens import on_terminal

    argv = [sys.executable, "-c", MAIN, "exercise", "--seed", "3", "--lang", lang, "--out", "ex"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code, text = on_terminal(argv, env, cwd=tmp_path, columns=80)
    lines = text.splitlines()
    assert code == 0, lines
    assert max(columns_of(line) for line in lines) <= 80, lines
    assert "  attnref check ex/answer.json" in lines
    assert len(lines) > 2  # the control: the list of files did not fit on one line
