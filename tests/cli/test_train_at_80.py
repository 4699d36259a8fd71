"""``attnref train`` at a terminal 80 columns wide (issue 42, item 8): every line it prints
fits, except a command or an address it prints on a line of its own to be copied whole, and a
word longer than a line (a store's URI), alone on its line. Run on a pseudo-terminal, as a
person runs it."""

from __future__ import annotations

import re

import pytest

from tests.cli.test_check_at_80 import at_terminal, columns_of
from tests.configs import TINY_ARGS

pytestmark = pytest.mark.slow
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_training_at_80_columns_prints_no_line_wider(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = [*TINY_ARGS, "--max-steps", "20", "--eval-interval", "10", "--tracking-uri", store]
    code, lines = at_terminal(["train", *args, "--out-dir", str(tmp_path / "runs")])
    assert code == 0, "\n".join(lines)
    lines = [ANSI.sub("", line) for line in lines]
    # a line wider than 80: a command (indented), or a word longer than a line (a URI) alone
    wide = [
        line
        for line in lines
        if columns_of(line) > 80 and not line.startswith("  ") and " " in line.strip()
    ]
    assert wide == [], wide
    text = "\n".join(lines)
    # each command on a line of its own, whole, ready to copy
    commands = [line.strip() for line in lines if line.startswith("  ")]
    assert any(re.fullmatch(r"\S*attnref sample --run-id [0-9a-f]{32}", c) for c in commands)
    assert any(c.endswith(f"ui --backend-store-uri {store}") for c in commands), commands
    assert "finished: 20 steps, best val loss" in " ".join(text.split())
