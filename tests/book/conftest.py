"""The book's fixtures: the site is built once per session (``mkdocs build --strict``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = str(Path(sys.executable).with_name("mkdocs"))
SHOTS = ROOT / "build" / "screenshots"


def built_pages(site: Path) -> list[str]:
    """Every page of a built site, as a path relative to it (``"."`` is the home page)."""
    return sorted(
        str(p.parent.relative_to(site))
        for p in site.rglob("index.html")
        if "assets" not in p.relative_to(site).parts
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    if not (ROOT / "docs" / "assets" / "katex" / "katex.min.js").is_file():
        pytest.fail("KaTeX is not vendored: run `make test` (it runs tools/vendor_katex.py)")
    out = tmp_path_factory.mktemp("book") / "site"
    proc = subprocess.run(
        # never --quiet: it hides the very warnings that --strict counts
        [MKDOCS, "build", "--strict", "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="session")
def chromium() -> None:
    """Fail (not skip) when headless Chromium is missing: the book's tests need it."""
    chromedriver = Path(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    if not chromedriver.is_file():
        pytest.fail("headless Chromium is missing: run `make browser` (Debian chromium + driver)")
