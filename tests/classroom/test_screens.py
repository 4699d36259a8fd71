"""`tools/screens.py` draws a terminal's text as a picture: 80 columns wide, a line per line."""

from __future__ import annotations

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
