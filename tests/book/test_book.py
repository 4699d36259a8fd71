"""The book: ``mkdocs build --strict``, no external resource, typeset math in headless Chromium.

The site is built once per session into a temporary folder (its ``python exec`` blocks run
the reference, and a failed check on a page fails the build). Chromium is Debian's package,
driven by selenium through ``/usr/bin/chromedriver``; every request that tries to leave
127.0.0.1 is recorded (by the page's network log and by a refusing proxy) and fails the test.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from attention_ref.worked import life_is_awesome as ex
from tests.book.conftest import MKDOCS, ROOT, SHOTS
from tests.book.site_scan import scan

pytestmark = pytest.mark.slow

PAGES = [
    "index.html",
    "by-hand/index.html",
    "trainable-weights/index.html",
    "scaled-dot-product/index.html",
    "causal-mask/index.html",
    "multi-head/index.html",
    "worked-example/index.html",
    "experiments/index.html",
    "cli/index.html",
    "api/index.html",
    "pt/worked-example/index.html",
    "pt/experiments/index.html",
]


def test_every_page_is_built(site):
    for page in PAGES:
        assert (site / page).is_file(), page
    assert (site / "assets" / "katex" / "fonts").is_dir()


def _book_of_one_page(tmp_path: Path, check: str) -> subprocess.CompletedProcess[str]:
    """The book's configuration (theme, hooks, plugins, extensions) over one page whose code
    block prints ``check``: the build is the book's, without its forty other pages."""
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs" / "assets", docs / "assets")
    shutil.copytree(ROOT / "overrides", tmp_path / "overrides")  # the theme's custom_dir
    (tmp_path / "attention_ref").symlink_to(ROOT / "attention_ref")  # the pages' --8<-- snippets
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    head, _, tail = text.partition("\nnav:\n")
    rest = tail[tail.index("\n\n") :] if "\n\n" in tail else ""
    (tmp_path / "mkdocs.yml").write_text(f"{head}\nnav:\n  - index.md\n{rest}", encoding="utf-8")
    (docs / "index.md").write_text(
        '# One page\n\n```python exec="on"\nfrom attnref_book.pages import check\n\n'
        f"print({check})\n```\n"
    )
    return subprocess.run(
        [MKDOCS, "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_a_failing_check_on_a_page_fails_the_build(tmp_path):
    proc = _book_of_one_page(tmp_path / "bad", 'check("one is two", 1 == 2, "it is not")')
    assert proc.returncode != 0
    assert "book check failed: one is two: it is not" in proc.stdout + proc.stderr
    # the control: the same book with a check that holds builds
    proc = _book_of_one_page(tmp_path / "good", 'check("one is one", 1 == 1, "it is")')
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_page_loads_anything_from_another_host(site, tmp_path):
    found = scan(site)
    assert found["resources"] == [], found["resources"][:5]
    # the scanner is able to fail: an external script, stylesheet and font are reported
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "index.html").write_text(
        '<script src="https://cdn.example.org/x.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/f.css">'
    )
    (bad / "f.css").write_text("@font-face { src: url(https://fonts.example.org/a.woff2) }")
    assert len(scan(bad)["resources"]) == 3


def test_math_is_typeset_and_the_worked_example_shows_the_documents_values(site, tmp_path):
    chromedriver = Path(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    if not chromedriver.is_file():
        pytest.fail("headless Chromium is missing: run `make browser` (Debian chromium + driver)")
    from tests.book.browser import (
        RecordingProxy,
        make_driver,
        offline_verdict,
        page_requests,
        serve_dir,
    )

    requests: list[str] = []
    netlog = tmp_path / "netlog.json"
    with serve_dir(site) as base, RecordingProxy() as proxy:
        drv = make_driver(proxy, netlog=netlog)
        try:
            for page in (
                "worked-example/",
                "causal-mask/",
                "by-hand/",
                "multi-head/",
                "experiments/",
                "pt/worked-example/",
                "api/",
            ):
                drv.get(f"{base}/{page}")
                state = typeset_state(drv)
                assert state["katex"] > 0 and state["errors"] == 0, (page, state)
                left = [d for d in ("$$", "\\(", "\\)", "\\[", "\\]") if d in state["raw"]]
                assert left == [], (page, left)
                requests += page_requests(drv)
                if page == "worked-example/":
                    shown = state["typeset"]
                    # the homework's printed values, as KaTeX typeset them
                    for M in (ex.DOC_LIFE_A[0], ex.DOC_LIFE_A[1], ex.DOC_LIFE_CONCAT):
                        for row in M:
                            for v in row:
                                assert f"{v:.3f}" in shown, v
                    assert "−∞" in shown or "-∞" in shown  # the mask, typeset
                    SHOTS.mkdir(parents=True, exist_ok=True)
                    drv.save_screenshot(str(SHOTS / "worked-example.png"))
                    drv.execute_script(
                        "[...document.querySelectorAll('article h2')]"
                        ".find(h => h.textContent.startsWith('Softmax')).scrollIntoView()"
                    )
                    time.sleep(0.8)  # let the header's title transition finish
                    drv.save_screenshot(str(SHOTS / "worked-example-softmax.png"))
            severe = [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        finally:
            drv.quit()
    fetched, browser = offline_verdict(requests, netlog, proxy)
    assert fetched == [], (fetched, browser)  # the pages' own requests, not the browser's
    assert severe == []
    assert (SHOTS / "worked-example.png").stat().st_size > 10_000


def typeset_state(drv) -> dict:
    """KaTeX's output on the page, and the article's text with that output removed."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, 15).until(
        lambda d: d.execute_script(
            "return document.querySelectorAll('article .arithmatex').length === 0 ||"
            " document.querySelectorAll('article .katex').length > 0"
        )
    )
    return drv.execute_script(
        """
        const art = document.querySelector('article');
        const html = [...art.querySelectorAll('.katex-html')].map(e => e.textContent).join(' ');
        const c = art.cloneNode(true);
        c.querySelectorAll('.katex, script, style, pre, code').forEach(e => e.remove());
        return {
          katex: art.querySelectorAll('.katex').length,
          errors: art.querySelectorAll('.katex-error').length,
          typeset: html,
          raw: c.textContent,
        };"""
    )
