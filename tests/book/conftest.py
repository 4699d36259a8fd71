"""The book's fixtures: the site is built once per session (``mkdocs build --strict``)."""

from __future__ import annotations

import os
import shutil
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


def build_site(out: Path) -> None:
    """``mkdocs build --strict`` into ``out``; a failed build fails with mkdocs' own words."""
    proc = subprocess.run(
        # never --quiet: it hides the very warnings that --strict counts
        [MKDOCS, "build", "--strict", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The book, built once for the whole run.

    Under pytest-xdist (``make test`` runs two workers) the workers share one build: the first
    to ask builds it under a file lock in the run's common temporary directory, the others wait
    and read it (the lock also keeps a second build from starting beside a failed one's
    leftovers: a failed build leaves no ``BUILT`` mark, so the next worker builds again and
    fails with mkdocs' words too). ``ATTNREF_TEST_SITE`` names a site already built from this
    checkout (``mkdocs build --strict -d DIR``), read instead: for iterating on the book's
    tests, never set by ``make test``.
    """
    if built := os.environ.get("ATTNREF_TEST_SITE"):  # a build of this checkout, to iterate
        return Path(built)
    if not (ROOT / "docs" / "assets" / "katex" / "katex.min.js").is_file():
        pytest.fail("KaTeX is not vendored: run `make test` (it runs tools/vendor_katex.py)")
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # no xdist: a build of this session's own
        out = tmp_path_factory.mktemp("book") / "site"
        build_site(out)
        return out
    from filelock import FileLock

    common = tmp_path_factory.getbasetemp().parent
    out, done = common / "book-site", common / "book-site.BUILT"
    with FileLock(str(common / "book-site.lock")):
        if not done.is_file():
            shutil.rmtree(out, ignore_errors=True)
            build_site(out)
            done.touch()
    return out


@pytest.fixture(scope="session")
def chromium() -> None:
    """Fail (not skip) when headless Chromium is missing: the book's tests need it."""
    chromedriver = Path(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    if not chromedriver.is_file():
        pytest.fail("headless Chromium is missing: run `make browser` (Debian chromium + driver)")


def mkdocs_config() -> dict:
    """``mkdocs.yml`` as mkdocs reads it with no environment set: an ``!ENV [NAME, default]``
    value is its default (PyYAML's safe loader knows no ``!ENV``)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def env(loader: yaml.SafeLoader, node: yaml.Node) -> object:
        values = loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode) else []
        return values[-1] if len(values) > 1 else None

    Loader.add_constructor("!ENV", env)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
