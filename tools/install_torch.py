"""Install torch into this Python (the fresh ``.venv`` of ``make setup``) by a plan.

PyPI's torch for Linux x86-64 is the CUDA build, with gigabytes of NVIDIA libraries, even on a
laptop without a GPU; a plain ``pip install torch`` is the wrong default there. The plan, first
match wins (`choose`, a pure function of the facts `main` gathers):

1. the build the user chose: ``--index URL`` (the Makefile's ``TORCH_INDEX``, e.g.
   ``make demo TORCH_INDEX=https://download.pytorch.org/whl/cu128``), or ``--index pypi`` for
   PyPI's default build;
2. the torch of that version that pip's own configuration finds locally (a find-links folder,
   a ``file://`` index): asked of pip with ``--dry-run --isolated`` and only those local
   sources, so the question contacts no host; torch is installed from there (``--no-deps``),
   then a plain ``pip install torch==V`` brings its dependencies from the configured indexes;
3. Linux without an NVIDIA GPU (``nvidia-smi -L`` lists none): the CPU build from PyTorch's
   CPU index, ``--index-url https://download.pytorch.org/whl/cpu`` (the command PyTorch
   documents);
4. else (macOS, Windows, Linux with an NVIDIA GPU): PyPI's default build (CPU on macOS and
   Windows, CUDA on Linux).

It prints one line: which build, from where. ``--dry-run`` prints the pip commands and
installs nothing. A failed pip ends in one line naming ``TORCH_INDEX``, the way to choose
another build, and a nonzero exit. Standard library only: it runs before anything is installed.

    python tools/install_torch.py --version 2.13.0 [--index URL|pypi] [--quiet] [--dry-run]
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

#: PyTorch's index of its CPU-only wheels (Linux, macOS and Windows)
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: the ``--index`` value that means PyPI's default build (pip's configured index)
PYPI = "pypi"
#: the way to choose another build, named when pip fails
CHOOSE = (
    "choose another build with TORCH_INDEX: an index URL "
    "(e.g. make demo TORCH_INDEX=https://download.pytorch.org/whl/cu128), "
    "or TORCH_INDEX=pypi for PyPI's default build"
)
#: ``platform.system()``'s names as people say them
SYSTEM_NAMES = {"Darwin": "macOS"}
#: how long ``nvidia-smi -L`` may take before the machine counts as one without a GPU
GPU_PROBE_S = 15.0
#: how long pip may take to say what the local sources hold (no network: seconds)
LOCAL_PROBE_S = 120.0


@dataclass(frozen=True)
class LocalSources:
    """The sources of pip's configuration that are on this machine: find-links folders and
    ``file://`` indexes."""

    find_links: tuple[str, ...] = ()
    indexes: tuple[str, ...] = ()

    def pip_options(self) -> list[str]:
        """pip's options that look there and nowhere else (with ``--isolated``, which drops
        the configuration's other sources)."""
        options = ["--no-index"] if not self.indexes else ["--index-url", self.indexes[0]]
        for index in self.indexes[1:]:
            options += ["--extra-index-url", index]
        for folder in self.find_links:
            options += ["--find-links", folder]
        return options

    def __bool__(self) -> bool:
        return bool(self.find_links or self.indexes)


@dataclass(frozen=True)
class LocalTorch:
    """The torch that pip's configuration finds locally: its version, its file, where."""

    version: str
    url: str
    sources: LocalSources


@dataclass(frozen=True)
class Plan:
    """What to install: the one line that says which build and from where, and the
    arguments of each ``pip install``, run in order."""

    says: str
    installs: tuple[tuple[str, ...], ...]


def choose(
    system: str,
    has_nvidia_gpu: bool,
    local: LocalTorch | None,
    index: str | None,
    version: str,
) -> Plan:
    """The plan for torch ``version`` on ``system`` (``platform.system()``): the user's
    ``index`` (a URL, or `PYPI`), else the ``local`` torch, else the CPU index on Linux
    without an NVIDIA GPU, else PyPI's default build."""
    pin = f"torch=={version}"
    if index is not None and index.lower() == PYPI:
        return Plan(
            f"torch {version}, PyPI's default build (TORCH_INDEX=pypi), "
            "from pip's configured index",
            ((pin,),),
        )
    if index is not None:
        return Plan(
            f"torch {version} from the index TORCH_INDEX names: {index}",
            (("--index-url", index, pin),),
        )
    if local is not None:
        where = local_path(local.url)
        return Plan(
            f"torch {local.version}, the wheel pip's configuration finds locally: {where} "
            "(then its dependencies from pip's configured indexes)",
            (
                ("--isolated", "--no-deps", *local.sources.pip_options(), pin),
                (pin,),
            ),
        )
    if system == "Linux" and not has_nvidia_gpu:
        return Plan(
            f"torch {version}, the CPU build (Linux, no NVIDIA GPU listed by nvidia-smi -L), "
            f"from PyTorch's CPU index {CPU_INDEX}",
            (("--index-url", CPU_INDEX, pin),),
        )
    build = "CUDA, for the NVIDIA GPU" if system == "Linux" else "CPU"
    name = SYSTEM_NAMES.get(system, system or "this system")
    return Plan(
        f"torch {version}, PyPI's default build for {name} ({build}), from pip's configured index",
        ((pin,),),
    )


def local_path(url: str) -> str:
    """A ``file://`` URL as the path it names (other URLs as they are)."""
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else url


def is_local(location: str) -> bool:
    """Whether a find-links or index location is on this machine: a path (``C:\\`` too) or a
    ``file://`` URL."""
    scheme = urlparse(location).scheme
    return scheme in ("", "file") or len(scheme) == 1


def local_sources(config_list: str) -> LocalSources:
    """The local find-links and indexes in ``pip config list``'s output (``key='value'``
    lines, a value holding one or more locations)."""
    find_links: list[str] = []
    indexes: list[str] = []
    for line in config_list.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        try:
            locations = str(ast.literal_eval(value)).split()
        except (ValueError, SyntaxError):
            continue
        option = key.rpartition(".")[2]
        found = (
            find_links
            if option == "find-links"
            else indexes
            if option.endswith("index-url")
            else None
        )
        if found is not None:
            found += [x for x in locations if is_local(x) and x not in found]
    return LocalSources(tuple(find_links), tuple(indexes))


def pip(*args: str) -> list[str]:
    """The command line of this Python's pip."""
    return [sys.executable, "-m", "pip", *args]


def find_local(version: str) -> LocalTorch | None:
    """The torch ``version`` that pip's configuration finds on this machine: pip's
    ``--dry-run`` over the configuration's local sources alone (``--isolated``: no other
    source, no host contacted); ``None`` where there is none, or pip cannot say."""
    try:
        listed = subprocess.run(
            pip("config", "list"), capture_output=True, text=True, timeout=LOCAL_PROBE_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sources = local_sources(listed.stdout)
    if listed.returncode != 0 or not sources:
        return None
    probe = pip(
        *("install", "--isolated", "--dry-run", "--no-deps", "--ignore-installed"),
        *("--quiet", "--report", "-", *sources.pip_options(), f"torch=={version}"),
    )
    try:
        found = subprocess.run(probe, capture_output=True, text=True, timeout=LOCAL_PROBE_S)
        report = json.loads(found.stdout) if found.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        return None
    for item in report.get("install", []):
        if item.get("metadata", {}).get("name", "").lower() == "torch":
            url = item["download_info"]["url"]
            return LocalTorch(item["metadata"]["version"], url, holding(sources, url))
    return None


def holding(sources: LocalSources, url: str) -> LocalSources:
    """The find-links folder of ``sources`` that holds the file at ``url``, alone (``--no-index
    --find-links`` it); all of ``sources`` where the file is not in one (a local index's)."""
    folder = Path(local_path(url)).resolve().parent
    for link in sources.find_links:
        if Path(local_path(link)).resolve() == folder:
            return LocalSources(find_links=(link,))
    return sources


def has_nvidia_gpu(timeout: float = GPU_PROBE_S) -> bool:
    """Whether ``nvidia-smi -L`` works and lists a GPU (``GPU 0: ...``)."""
    command = shutil.which("nvidia-smi")
    if command is None:
        return False
    try:
        listed = subprocess.run(
            [command, "-L"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and any(
        line.startswith("GPU ") for line in listed.stdout.splitlines()
    )


def commands(plan: Plan, quiet: bool) -> list[list[str]]:
    """The full command lines of the plan's ``pip install`` runs."""
    return [pip("install", *(["--quiet"] if quiet else []), *args) for args in plan.installs]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line's options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", required=True, help="torch's version, e.g. 2.13.0")
    parser.add_argument(
        "--index",
        default="",
        help="an index URL to install torch from, or 'pypi' for PyPI's default build "
        "(empty: the plan decides)",
    )
    parser.add_argument("--quiet", action="store_true", help="pip's --quiet")
    parser.add_argument("--dry-run", action="store_true", help="print the pip commands only")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Choose, say, and install (or print, with ``--dry-run``); pip's failure as one line."""
    options = parse(argv)
    index = options.index.strip() or None
    if index is not None and index.lower() != PYPI and "://" not in index:
        print(
            f"install_torch: TORCH_INDEX must be an index URL or 'pypi', not {index!r}; {CHOOSE}",
            file=sys.stderr,
        )
        return 2
    local = find_local(options.version) if index is None else None
    gpu = has_nvidia_gpu() if index is None and local is None else False
    plan = choose(platform.system(), gpu, local, index, options.version)
    print(f"install_torch: installing {plan.says}", flush=True)
    for command in commands(plan, options.quiet):
        if options.dry_run:
            print(shlex.join(command), flush=True)
            continue
        code = subprocess.run(command, check=False).returncode
        if code != 0:
            print(
                f"install_torch: pip failed (exit {code}) installing {plan.says}; {CHOOSE}",
                file=sys.stderr,
                flush=True,
            )
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
