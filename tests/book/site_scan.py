"""List external URLs referenced by a built static site (stdlib only).

    python scan_external.py SITE_DIR [--show-nav] [--show-js]

Classes:
  RESOURCE  fetched automatically by the browser -> must be empty for an offline site:
            <script src>, <link href> (stylesheet/icon/preload/preconnect/manifest/...),
            <img src|srcset>, <source>, <iframe>, <video>/<audio>, <object data>, <embed>,
            <input type=image>, style="...url()", <style> url()/@import, and in *.css
            files url(...) / @import (this is where @font-face sources live).
  NAV       <a href>, <area href>, <form action>, <link rel=canonical|alternate|...>:
            only followed on user action, fine.
  JS        http(s):// literals inside *.js files: not proof of a fetch, listed for review.
Exit status 1 if any RESOURCE is external.
"""

from __future__ import annotations

import re
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

EXTERNAL = re.compile(r"^\s*(?:https?:)?//", re.I)  # http://, https://, //host
CSS_URL = re.compile(r"""url\(\s*(['"]?)(.*?)\1\s*\)""", re.I | re.S)
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]([^'"]+)['"]""", re.I)
JS_LIT = re.compile(r"""["'`](https?://[^"'`\s]+)""")
NAV_LINK_RELS = {
    "canonical",
    "alternate",
    "next",
    "prev",
    "author",
    "license",
    "help",
    "search",
    "bookmark",
    "me",
}
RESOURCE_ATTRS = {
    "script": ["src"],
    "img": ["src", "srcset"],
    "source": ["src", "srcset"],
    "iframe": ["src"],
    "video": ["src", "poster"],
    "audio": ["src"],
    "track": ["src"],
    "embed": ["src"],
    "object": ["data"],
    "input": ["src"],
}


def is_external(u: str) -> bool:
    return bool(EXTERNAL.match(u or ""))


def _srcset(v: str):
    return [part.strip().split()[0] for part in v.split(",") if part.strip()]


def css_urls(text: str):
    for m in CSS_URL.finditer(text):
        yield m.group(2).strip()
    for m in CSS_IMPORT.finditer(text):
        yield m.group(1).strip()


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.res, self.nav = [], []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for v in css_urls(a.get("style") or ""):
            self.res.append((f"<{tag} style>", v))
        if tag == "link" and a.get("href"):
            rels = set((a.get("rel") or "").lower().split())
            (self.nav if rels and rels <= NAV_LINK_RELS else self.res).append(
                (f"<link rel={' '.join(sorted(rels))}>", a["href"])
            )
        elif tag in ("a", "area") and a.get("href"):
            self.nav.append((f"<{tag}>", a["href"]))
        elif tag == "form" and a.get("action"):
            self.nav.append(("<form>", a["action"]))
        elif tag == "style":
            self._in_style = True
        for attr in RESOURCE_ATTRS.get(tag, []):
            v = a.get(attr)
            if v:
                for u in _srcset(v) if attr == "srcset" else [v]:
                    self.res.append((f"<{tag} {attr}>", u))

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            for v in css_urls(data):
                self.res.append(("<style>", v))


def scan(site: str | Path):
    """-> dict(resources=[(file, where, url)], nav=[...], js=[...]) of EXTERNAL urls only."""
    site = Path(site)
    out = defaultdict(list)
    for f in sorted(site.rglob("*")):
        if not f.is_file():
            continue
        rel = str(f.relative_to(site))
        suf = f.suffix.lower()
        if suf in (".html", ".htm"):
            p = _Page()
            p.feed(f.read_text(encoding="utf-8", errors="replace"))
            out["resources"] += [(rel, w, u) for w, u in p.res if is_external(u)]
            out["nav"] += [(rel, w, u) for w, u in p.nav if is_external(u)]
        elif suf == ".css":
            t = f.read_text(encoding="utf-8", errors="replace")
            out["resources"] += [
                (rel, "css url()/@import", u) for u in css_urls(t) if is_external(u)
            ]
        elif suf in (".js", ".mjs"):
            t = f.read_text(encoding="utf-8", errors="replace")
            out["js"] += [(rel, "js literal", u) for u in sorted(set(JS_LIT.findall(t)))]
    return out
