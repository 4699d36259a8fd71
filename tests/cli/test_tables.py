"""Tables at 80 columns: the cells a reader came for are whole, the rest left out with a note."""

from __future__ import annotations

import io

from rich.console import Console

from cli.tables import Column, fit, print_table

RUN_ID = "5e413835300146fdab11923aa0c1d2e3"
URL = "http://127.0.0.1:5000/#/experiments/1?workflowType=machine_learning"
COLUMNS = [Column("run id", keep=True), Column("name", rank=3),
           Column("attention", rank=2), Column("status", keep=True),
           Column("steps", keep=True, justify="right"), Column("best val", keep=True),
           Column("started", rank=1), Column("link", rank=0)]  # fmt: skip
ROWS = [[RUN_ID, "q02-multihead-seed-0", "multihead (2 heads)", "FINISHED", "6000", "1.5323",
         "2026-11-26 05:16:16", URL]]  # fmt: skip


def printed(width: int) -> tuple[str, list[str]]:
    out = Console(width=width, file=io.StringIO(), highlight=False, color_system=None)
    left = print_table(out, f"runs of {URL}", COLUMNS, ROWS, elsewhere="--format json")
    return out.file.getvalue(), left  # type: ignore[attr-defined]


def test_at_80_columns_the_kept_cells_are_whole_and_the_rest_said():
    text, left = printed(80)
    assert all(len(line) <= 80 for line in text.splitlines())
    for cell in (RUN_ID, "FINISHED", "6000", "1.5323"):
        assert any(cell in line for line in text.splitlines()), cell  # on one line, whole
    assert "link" in left and "started" in left
    assert f"(left out at 80 columns: {', '.join(left)}; --format json)" in text
    assert URL in text.splitlines()[0]  # the title's URL on a line of its own, unbroken


def test_at_120_columns_fewer_are_left_out_and_at_240_none():
    text, left = printed(120)
    assert all(len(line) <= 120 for line in text.splitlines())
    assert RUN_ID in text and "q02-multihead-seed-0" in text
    assert left == ["started", "link"]  # 133 characters whole: the lowest ranks go
    text, left = printed(240)
    assert left == [] and URL in text.splitlines()[-2] and "left out" not in text


def test_the_lowest_rank_goes_first_and_kept_columns_never():
    natural = {c.name: i for i, c in enumerate(COLUMNS)}
    shown = fit(COLUMNS, ROWS, 20)  # narrower than the kept columns alone
    assert [COLUMNS[i].name for i in shown] == ["run id", "status", "steps", "best val"]
    shown = fit(COLUMNS, ROWS, 110)
    assert natural["link"] not in shown and natural["name"] in shown
