"""Install size: what ``make setup`` downloads and leaves on disk (issue 56's figures).

Run (once; minutes: it builds a fresh ``.venv``)::

    python3 benchmarks/install_size.py
    python3 benchmarks/install_size.py --torch torch==2.13.0+cpu --out benchmarks/results

Three figures, each with the command that produced it:

1. torch's CPU wheel: ``pip download --no-deps`` of ``--torch`` (the CPU build, pinned with
   its ``+cpu`` label) through pip's configuration (on this project's machines, find-links
   ``/opt/wheels`` holds the very file PyTorch's CPU index serves);
2. the rest of what ``pip install -e .`` pulls: ``pip download`` of the project's
   dependencies (pyproject's, torch pinned to the same CPU wheel), less the torch wheel: every
   other file, torch's own dependencies included, their sizes summed;
3. a fresh ``.venv`` after ``make setup``: the working tree (git's tracked and untracked,
   not ignored, files) copied to a temporary folder, ``make setup`` run there, the ``.venv``
   measured (apparent bytes and bytes on disk, the largest packages).

Writes ``install_size.json`` to ``--out`` (date, machine, commit, commands, figures). Standard
library only (it measures the install; it needs none of it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000


def run(command: list[str], cwd: Path | None = None) -> str:
    """Run ``command`` (its output shown), fail loudly; the command as one shell line."""
    print(f"$ {shlex.join(command)}", flush=True)
    subprocess.run(command, cwd=cwd, check=True)
    return shlex.join(command)


def git(*args: str) -> str:
    """``git ARGS`` in the repository, its output stripped."""
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def machine() -> dict[str, Any]:
    """The machine: system, distribution, CPU cores, Python, pip."""
    release = Path("/etc/os-release")
    pretty = ""
    if release.is_file():
        for line in release.read_text(encoding="utf-8").splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.partition("=")[2].strip('"')
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True
    ).stdout.split()
    return {
        "system": f"{platform.system()} {platform.machine()}",
        "distribution": pretty,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pip": pip[1] if len(pip) > 1 else None,
    }


def dependencies(torch: str) -> list[str]:
    """pyproject's dependencies, torch's replaced by ``torch`` (a pinned requirement)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    others = [d for d in project["dependencies"] if not d.replace(" ", "").startswith("torch")]
    return [torch, *others]


def tree_bytes(folder: Path) -> tuple[int, int]:
    """``(apparent bytes, bytes on disk)`` of the files under ``folder`` (links not
    followed, a hard-linked file counted once)."""
    seen: set[tuple[int, int]] = set()
    apparent = disk = 0
    for path in folder.rglob("*"):
        info = path.lstat()
        if (info.st_dev, info.st_ino) in seen:
            continue
        seen.add((info.st_dev, info.st_ino))
        if path.is_symlink() or path.is_file():
            apparent += info.st_size
        disk += info.st_blocks * 512
    return apparent, disk


def largest(sizes: dict[str, int], count: int = 10) -> list[dict[str, Any]]:
    """The ``count`` largest entries, in MB."""
    ranked = sorted(sizes.items(), key=lambda item: -item[1])[:count]
    return [{"name": name, "mb": round(size / MB, 1)} for name, size in ranked]


def downloads(torch: str, work: Path) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The torch wheel and the rest of ``pip install -e .``'s downloads, with the commands."""
    pip = [sys.executable, "-m", "pip", "download", "--quiet"]
    alone, everything = work / "torch", work / "all"
    commands = [
        run([*pip, "--no-deps", "--dest", str(alone), torch]),
        run([*pip, "--dest", str(everything), *dependencies(torch)]),
    ]
    (wheel,) = alone.iterdir()
    rest = {p.name: p.stat().st_size for p in everything.iterdir() if p.name != wheel.name}
    torch_figure = {"file": wheel.name, "bytes": wheel.stat().st_size}
    rest_figure = {
        "files": len(rest),
        "bytes": sum(rest.values()),
        "largest": largest(rest),
        "torch_wheel_in_the_same_download": (everything / wheel.name).is_file(),
    }
    return torch_figure, rest_figure, commands


def fresh_venv(work: Path) -> tuple[dict[str, Any], list[str]]:
    """``make setup`` in a copy of the working tree; the ``.venv`` it leaves."""
    tree = work / "tree"
    listed = git("ls-files", "--cached", "--others", "--exclude-standard", "-z")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    started = time.perf_counter()
    command = run(["make", "-C", str(tree), "setup"])
    seconds = time.perf_counter() - started
    venv = tree / ".venv"
    apparent, disk = tree_bytes(venv)
    (site,) = venv.glob("lib/python*/site-packages")
    packages = {p.name: tree_bytes(p)[0] for p in site.iterdir() if p.is_dir()}
    figure = {
        "bytes": apparent,
        "bytes_on_disk": disk,
        "make_setup_seconds": round(seconds, 1),
        "largest": largest(packages),
        "nvidia_packages": sorted(p for p in packages if p.startswith("nvidia")),
    }
    return figure, [f"cp $(git ls-files -co --exclude-standard) {tree}", command]


def main() -> int:
    """Measure, write ``install_size.json``, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", default="torch==2.13.0+cpu", help="the CPU wheel, pinned")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="install-size-") as folder:
        work = Path(folder)
        torch_figure, rest_figure, commands = downloads(options.torch, work)
        venv_figure, venv_commands = fresh_venv(work)
    result = {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "commit": git("rev-parse", "HEAD"),
        "working_tree_changed": bool(git("status", "--porcelain")),
        "commands": [*commands, *venv_commands, "sizes: file sizes summed in Python (lstat)"],
        "torch_cpu_wheel": torch_figure,
        "rest_of_pip_install_e": rest_figure,
        "fresh_venv_after_make_setup": venv_figure,
    }
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / "install_size.json"
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"torch CPU wheel {torch_figure['bytes'] / MB:.0f} MB; the rest of pip install -e . "
        f"{rest_figure['bytes'] / MB:.0f} MB in {rest_figure['files']} files; a fresh .venv "
        f"after make setup {venv_figure['bytes'] / MB:.0f} MB ({path})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
