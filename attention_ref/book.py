"""Helpers for the mkdocs book: the pages' ```` ```python exec="on" ```` ```` blocks call these.

Every number on a page is computed when the site is built, and every code listing is the
installed source (``inspect.getsource``), never a pasted copy. A failed :func:`check` raises,
so ``mkdocs build --strict`` fails instead of publishing a wrong page.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from attention_ref.render import bmatrix, fmt_number, to_book

if TYPE_CHECKING:
    from torch import Tensor

    from attention_ref.render import Matrix

#: the committed experiment results the book shows (``attnref report --export docs/results``)
RESULTS = Path("docs/results")


def source(*objs: Callable[..., object] | ModuleType) -> str:
    """A fenced Python listing of the given functions/classes, straight from the source."""
    parts = [textwrap.dedent(inspect.getsource(o)).rstrip() for o in objs]
    return "```python\n" + "\n\n\n".join(parts) + "\n```\n"


def display(latex: str) -> str:
    """Display math for arithmatex/KaTeX."""
    return f"$$\n{latex}\n$$\n"


def matrix(
    lhs: str, value: Sequence[float] | Sequence[Sequence[float]] | Tensor, precision: int = 3
) -> str:
    """``lhs = [bmatrix]`` as display math; ``value`` is nested lists or a tensor."""
    nested = value if isinstance(value, Sequence) else value.tolist()
    rows = [nested] if nested and not isinstance(nested[0], Sequence) else nested
    return display(f"{lhs} = {bmatrix(cast('Matrix', rows), precision)}")


def num(v: float, precision: int = 4) -> str:
    """A number as the pages print it (``-∞`` for masked entries)."""
    return fmt_number(float(v), precision)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def check(label: str, ok: bool, detail: str) -> str:
    """A green box for a check that passed; an exception (failed build) for one that did not."""
    if not ok:
        raise AssertionError(f"book check failed: {label}: {detail}")
    return f'!!! success "Check: {label}"\n    {detail}\n'


def example(name: str, precision: int | None = None, heading: int = 3) -> str:
    """A worked example of ``attnref explain``, every matrix as display math."""
    from attention_ref.worked.registry import explain_example

    expl = explain_example(name)
    return to_book(expl, precision if precision is not None else expl.precision, heading=heading)


def results(name: str = "comparison.json") -> Any:  # Any: whatever the JSON file holds
    """A committed results file (JSON parsed, text otherwise)."""
    path = RESULTS / name
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else text
