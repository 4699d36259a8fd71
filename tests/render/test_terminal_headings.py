"""`explain`'s section headings keep their formulas at 80 columns (issue 31, item 8): a heading
wider than the terminal wraps at its spaces instead of being cut with an ellipsis, for every
example of the registry (RoPE's rotation is the longest)."""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console

from attention_ref.render import to_rich
from attention_ref.render.terminal import Heading
from attention_ref.worked.registry import EXAMPLE_NAMES, explain_example


def printed(renderables, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    for r in renderables:
        console.print(r)
    return console.file.getvalue()


def whole(text: str) -> str:
    """The text with every run of blanks (line breaks included) as one space."""
    return " ".join(text.split())


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_heading_is_printed_whole_at_80_columns(name):
    expl = explain_example(name)
    out = printed(to_rich(expl), 80)
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    flat = whole(out)
    missing = [s.title for s in expl.sections if whole(s.title) not in flat]
    assert missing == []


def test_rope_rotation_is_wrapped_not_cut():
    expl = explain_example("rope")
    (title,) = [s.title for s in expl.sections if s.title.startswith("Rotate each pair")]
    assert len(title) > 80  # the case this test is about
    out = printed([Heading(title)], 80)
    assert "…" not in out
    assert whole(title) in whole(out)
    assert out.splitlines()[0].rstrip().endswith(" sin")  # wrapped at a space


def test_a_short_heading_stays_in_its_rule():
    out = printed([Heading("Scores: S = Q Kᵀ")], 80)
    (line,) = out.splitlines()
    assert line.startswith("Scores: S = Q Kᵀ ─") and len(line) == 80


def test_control_a_plain_rule_cuts_the_long_heading():
    """The measure sees the old failure: rich's Rule cuts a title wider than the terminal."""
    from rich.rule import Rule

    title = next(s.title for s in explain_example("rope").sections if len(s.title) > 80)
    out = printed([Rule(title, align="left")], 80)
    assert "…" in out and whole(title) not in whole(out)
