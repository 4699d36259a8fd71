"""mkdocs hook: the book needs KaTeX, vendored (`make docs/assets/katex/VENDORED.json`).

Every page's math is typeset in the browser by ``docs/assets/katex/katex.min.js`` (listed in
``extra_javascript``); the folder is ignored by git and filled from the npm registry by
``tools/vendor_katex.py``. Without it the site still builds, and every page shows its raw
``\\(…\\)``: a strict build (``mkdocs build --strict``, the one the tests and ``make docs`` run)
stops at once with one line saying how to vendor it; any other build warns with that line.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError

#: the file every page loads, relative to ``docs_dir``
KATEX_JS = Path("assets") / "katex" / "katex.min.js"
HOW = "run make docs/assets/katex/VENDORED.json (KaTeX is vendored from the npm registry)"

log = logging.getLogger("mkdocs.hooks.katex")


def missing(config: MkDocsConfig) -> str | None:
    """The one line to say when KaTeX is not vendored under ``config.docs_dir``, else None."""
    path = Path(config.docs_dir) / KATEX_JS
    if path.is_file():
        return None
    return f"KaTeX is missing ({path} not found): every page would show raw \\(…\\); {HOW}"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    line = missing(config)
    if line is not None:
        if config.strict:
            raise PluginError(line)
        log.warning(line)
    return config
