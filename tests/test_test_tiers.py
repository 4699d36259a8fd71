"""`make test` leaves out the soak tests and CI runs them: the two tiers cover the suite.

The suite's long breadth, volume and restart runs are marked ``soak`` (pyproject's markers):
`make test` deselects them to stay under 20 minutes on a 2-core machine, `make test-soak`
selects them alone, and ``.ci/run`` calls both, so nothing marked is left to no one.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def recipe(makefile: str, target: str) -> list[str]:
    """The command lines of a Makefile target (its tab-indented lines)."""
    m = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)*)", makefile, re.M)
    assert m, f"no target {target}"
    return [line.strip() for line in m.group(1).splitlines()]


def pytest_selection(lines: list[str]) -> str | None:
    """The ``-m`` expression of the recipe's pytest line (``None``: every test)."""
    runs = [shlex.split(line) for line in lines if "-m pytest" in line]
    assert len(runs) == 1, runs
    args = runs[0][runs[0].index("pytest") + 1 :]
    return args[args.index("-m") + 1] if "-m" in args else None


def tiers(makefile: str, ci: str) -> tuple[str | None, str | None, bool]:
    """``(make test's selection, make test-soak's, whether CI runs both)``."""
    calls = re.findall(r"^\s*make\s+([\w-]+)", ci, re.M)
    return (
        pytest_selection(recipe(makefile, "test")),
        pytest_selection(recipe(makefile, "test-soak")),
        {"test", "test-soak"} <= set(calls),
    )


def test_make_test_leaves_out_the_soak_tests_and_ci_runs_both():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tiers(makefile, ci) == ("not soak", "soak", True)
    assert "soak:" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # a registered mark
    # the controls: a CI that forgets the soak tests, a make test that runs them too
    assert tiers(makefile, ci.replace("make test-soak", "true"))[2] is False
    loose = makefile.replace('--dist loadfile -m "not soak"', "--dist loadfile")
    assert tiers(loose, ci)[0] is None
