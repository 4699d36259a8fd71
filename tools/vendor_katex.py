#!/usr/bin/env python3
"""Vendor KaTeX from the npm registry without npm (stdlib only).

    python vendor_katex.py TARGET_DIR [--version 0.16.x | --series 0.16] [--integrity sha512-...]

Writes TARGET_DIR/{katex.min.js, katex.min.css, fonts/*, contrib/auto-render.min.js,
LICENSE, VENDORED.json}. Idempotent: if VENDORED.json already records the requested
version and every file still matches its recorded sha256, nothing is downloaded (with an
exact --version this needs no network at all). Atomic: files are assembled in a temporary
sibling directory and swapped in with rename(), so TARGET_DIR is never half-written.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

REGISTRY = os.environ.get("NPM_REGISTRY", "https://registry.npmjs.org").rstrip("/")
PACKAGE = "katex"
STAMP = "VENDORED.json"
# tarball member (under package/) -> path inside TARGET_DIR; fonts/ handled by prefix
WANTED = {
    "dist/katex.min.js": "katex.min.js",
    "dist/katex.min.css": "katex.min.css",
    "dist/contrib/auto-render.min.js": "contrib/auto-render.min.js",
    "LICENSE": "LICENSE",
}
FONTS_PREFIX = "dist/fonts/"
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")  # releases only, no pre-releases


class VendorError(Exception):
    pass


def _get(url: str, timeout: float, accept: str | None = None) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "vendor_katex.py"})
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        raise VendorError(f"HTTP {e.code} for {url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise VendorError(f"cannot reach {url} (offline?): {reason}") from None


def resolve(version: str | None, series: str, timeout: float) -> tuple[str, str, str]:
    """-> (version, tarball_url, integrity) from the registry's abbreviated metadata."""
    meta = json.loads(
        _get(f"{REGISTRY}/{PACKAGE}", timeout, accept="application/vnd.npm.install-v1+json")
    )
    versions = meta.get("versions", {})
    if version is None:
        cands = [
            v for v in versions if _SEMVER.match(v) and (v == series or v.startswith(series + "."))
        ]
        if not cands:
            raise VendorError(f"no {PACKAGE} release matches series {series!r}")
        version = max(cands, key=lambda v: tuple(map(int, v.split("."))))
    if version not in versions:
        raise VendorError(f"{PACKAGE}@{version} not found in registry")
    dist = versions[version]["dist"]
    if not dist.get("integrity", "").startswith("sha512-"):
        raise VendorError(f"{PACKAGE}@{version}: registry gives no sha512 integrity")
    return version, dist["tarball"], dist["integrity"]


def sri_sha512(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def _sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def is_current(target: Path, version: str | None, integrity: str | None = None) -> dict | None:
    """The stamp if TARGET already holds a verified copy of `version` (any version if None)."""
    try:
        stamp = json.loads((target / STAMP).read_text())
    except (OSError, ValueError):
        return None
    if version and stamp.get("version") != version:
        return None
    if integrity and stamp.get("integrity") != integrity:
        return None
    files = stamp.get("files") or {}
    for rel, digest in files.items():
        p = target / rel
        if not p.is_file() or _sha256(p) != digest:
            return None
    return stamp if files else None


def _extract(data: bytes, dest: Path) -> dict[str, str]:
    files = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
        for m in tf.getmembers():
            name = m.name.split("/", 1)[1] if "/" in m.name else ""  # strip "package/"
            if name in WANTED:
                rel = WANTED[name]
            elif name.startswith(FONTS_PREFIX) and "/" not in name[len(FONTS_PREFIX) :]:
                rel = "fonts/" + name[len(FONTS_PREFIX) :]
            else:
                continue
            if not m.isfile() or ".." in rel.split("/") or rel.startswith("/"):
                raise VendorError(f"refusing suspicious tar member {m.name!r}")
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(tf.extractfile(m).read())
            files[rel] = _sha256(out)
    missing = [r for r in WANTED.values() if r not in files]
    if missing or not any(r.startswith("fonts/") for r in files):
        raise VendorError(f"tarball lacks expected files: {missing or ['fonts/']}")
    return dict(sorted(files.items()))


def vendor_katex(
    target: str | os.PathLike,
    version: str | None = None,
    series: str = "0.16",
    integrity: str | None = None,
    force: bool = False,
    timeout: float = 30.0,
) -> dict:
    """Make TARGET a verified copy of KaTeX's dist files. Returns the stamp dict
    (version, tarball, integrity, files{rel: sha256}, plus 'action': 'kept'|'written')."""
    target = Path(target).resolve()
    if version and not force:  # pinned: no network needed when already there
        stamp = is_current(target, version, integrity)
        if stamp:
            return {**stamp, "action": "kept"}
    version, tarball, reg_integrity = resolve(version, series, timeout)
    if integrity and integrity != reg_integrity:
        raise VendorError(
            f"registry integrity for {version} is {reg_integrity}, expected pinned {integrity}"
        )
    if not force:
        stamp = is_current(target, version, reg_integrity)
        if stamp:
            return {**stamp, "action": "kept"}
    data = _get(tarball, timeout)
    got = sri_sha512(data)
    if got != reg_integrity:
        raise VendorError(f"integrity mismatch for {tarball}: got {got}, want {reg_integrity}")

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    old = None
    try:
        files = _extract(data, tmp)
        stamp = {
            "package": PACKAGE,
            "version": version,
            "tarball": tarball,
            "integrity": reg_integrity,
            "files": files,
        }
        (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
        os.chmod(tmp, 0o755)
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.rename(target, old)
        os.rename(tmp, target)  # same filesystem => atomic
    except BaseException:
        if old is not None and not target.exists():
            os.rename(old, target)  # roll back
            old = None
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return {**stamp, "action": "written"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Vendor KaTeX dist files from the npm registry.")
    ap.add_argument("target", help="directory to (re)create, e.g. docs/assets/katex")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--version", help="exact version, e.g. 0.16.22")
    g.add_argument("--series", default="0.16", help="newest release in this series (default 0.16)")
    ap.add_argument("--integrity", help="pin: expected sha512-... SRI of the tarball")
    ap.add_argument("--force", action="store_true", help="re-download even if up to date")
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args(argv)
    try:
        s = vendor_katex(a.target, a.version, a.series, a.integrity, a.force, a.timeout)
    except VendorError as e:
        print(f"vendor_katex: error: {e}", file=sys.stderr)
        return 2
    print(
        f"katex {s['version']} {s['action']} in {a.target} "
        f"({len(s['files'])} files, {s['integrity']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
