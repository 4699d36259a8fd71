"""The Makefile's Debian-package targets (``browser``, ``latex``, ``postgres``, ``nginx``), run
for real by make on a copy of the Makefile, in a sandbox whose PATH holds only stubs.

* Where the probe finds the tools, nothing is installed: apt-get is not called.
* Where they are missing and apt-get is on the PATH, it installs them: ``apt-get update`` and
  ``apt-get install`` of the target's packages, through ``sudo`` only when not root.
* Where they are missing and there is no apt-get (macOS, a non-Debian Linux), make stops with
  one line that names what to install and says that ``make test`` needs Debian's apt-get.

Real apt-get cannot run in a test: the stub ``apt-get`` (and ``sudo``) first on the PATH
record their calls into a file. The run as another user (the ``sudo`` case, from root) goes
through ``setpriv`` to uid/gid 65534 (nobody), so the sandbox lies in a folder that user can
read.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
SETPRIV = shutil.which("setpriv")
NOBODY = 65534

pytestmark = pytest.mark.skipif(MAKE is None, reason="GNU make is not installed")

#: target -> (its Debian packages, the environment apt-get install gets beyond the frontend)
TARGETS: dict[str, tuple[str, str]] = {
    "browser": ("chromium chromium-driver", ""),
    "latex": ("texlive-latex-base texlive-lang-cyrillic", ""),
    "postgres": ("postgresql", ""),
    "nginx": ("nginx", "RUNLEVEL=1"),
}
#: what the stubs write per call: the program, the environment apt-get sees, the arguments
RECORDER = """#!/bin/sh
echo "{name} frontend=${{DEBIAN_FRONTEND-}} runlevel=${{RUNLEVEL-}} $*" >> {log}
{tail}
"""


@dataclass(frozen=True)
class Sandbox:
    """A copy of the Makefile, a PATH of stubs and the file of their calls."""

    root: Path
    bin: Path
    log: Path

    def stub(self, name: str, tail: str = "exit 0") -> None:
        """An executable ``name`` on the PATH that records its call, then runs ``tail``."""
        path = self.bin / name
        path.write_text(RECORDER.format(name=name, log=self.log, tail=tail), encoding="utf-8")
        path.chmod(0o755)

    def present(self) -> list[str]:
        """Every target's tools, as its probe looks for them: make's variables to pass."""
        tools = self.root / "tools"
        for name in ("chromedriver", "chromium", "nginx", "postgresql/15/bin/pg_ctl"):
            (tools / name).parent.mkdir(parents=True, exist_ok=True)
            (tools / name).write_text("#!/bin/sh\n", encoding="utf-8")
            (tools / name).chmod(0o755)
        for name in ("pdflatex", "kpsewhich"):
            (self.bin / name).write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
            (self.bin / name).chmod(0o755)
        return [
            f"CHROMEDRIVER={tools / 'chromedriver'}",
            f"CHROMIUM={tools / 'chromium'}",
            f"NGINX={tools / 'nginx'}",
            f"PG_CTL={tools}/postgresql/*/bin/pg_ctl",
        ]

    def calls(self) -> list[str]:
        """The stubs' calls, in order."""
        return self.log.read_text(encoding="utf-8").splitlines()

    def make(
        self, target: str, variables: list[str], as_user: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``make -s TARGET`` with only the stubs on the PATH (as uid/gid ``as_user`` via
        setpriv, where given)."""
        assert MAKE is not None
        command = [MAKE, "-s", "-f", str(self.root / "Makefile"), target, *variables]
        if as_user is not None:
            assert SETPRIV is not None
            ids = [f"--reuid={as_user}", f"--regid={as_user}", "--clear-groups"]
            command = [SETPRIV, *ids, *command]
        env = {"PATH": str(self.bin), "HOME": str(self.root), "LC_ALL": "C"}
        return subprocess.run(
            command, cwd=self.root, env=env, capture_output=True, text=True, timeout=60
        )


#: the probes' variables pointing nowhere: every target's tools missing
MISSING = [
    "CHROMEDRIVER=/nonexistent/chromedriver",
    "CHROMIUM=/nonexistent/chromium",
    "NGINX=/nonexistent/nginx",
    "PG_CTL=/nonexistent/*/bin/pg_ctl",
]


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A sandbox in a folder every user can read (tmp_path's parents are root's alone): the
    Makefile, and a PATH of ``id``, ``ls`` and ``env`` (what the recipes use) without
    apt-get."""
    root = Path(tempfile.mkdtemp(prefix="attnref-make-"))
    try:
        root.chmod(0o755)
        shutil.copy(ROOT / "Makefile", root / "Makefile")
        bin_dir = root / "bin"
        bin_dir.mkdir(mode=0o755)
        for tool in ("id", "ls", "env"):
            found = shutil.which(tool)
            assert found, tool
            (bin_dir / tool).symlink_to(found)
        logs = root / "logs"
        logs.mkdir()
        logs.chmod(0o777)  # the stubs write here under any uid
        log = logs / "calls"
        log.touch()
        log.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IWGRP | 0o006)
        yield Sandbox(root, bin_dir, log)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def expected_calls(target: str, sudo: bool) -> list[str]:
    """The stubs' record of a target's install: ``apt-get update``, then ``apt-get install``
    of its packages (each through ``sudo`` first, where ``sudo``)."""
    packages, extra = TARGETS[target]
    steps = (("update -qq", ""), (f"install -y -qq --no-install-recommends {packages}", extra))
    calls = []
    for args, env in steps:
        if sudo:
            command = " ".join(filter(None, ["env DEBIAN_FRONTEND=noninteractive", env]))
            calls.append(f"sudo frontend= runlevel= {command} apt-get {args}")
        runlevel = env.removeprefix("RUNLEVEL=")
        calls.append(f"apt-get frontend=noninteractive runlevel={runlevel} {args}")
    return calls


@pytest.mark.parametrize("target", TARGETS)
def test_missing_without_apt_get_stops_with_one_line(sandbox: Sandbox, target: str) -> None:
    packages, _ = TARGETS[target]
    done = sandbox.make(target, MISSING)
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode != 0
    assert len(lines) == 1, lines
    assert f"make {target}: missing" in lines[0]
    assert f"(Debian's packages: {packages})" in lines[0]
    assert "make test needs Debian's apt-get (make demo needs none of them)" in lines[0]
    assert "command not found" not in lines[0]
    # the control: with apt-get on the PATH, the same run installs instead of stopping
    sandbox.stub("apt-get")
    done = sandbox.make(target, MISSING)
    assert done.returncode == 0, done.stderr
    assert "Debian's apt-get" not in done.stdout + done.stderr
    assert f"--no-install-recommends {packages}" in "\n".join(sandbox.calls())


@pytest.mark.parametrize("target", TARGETS)
def test_present_tools_call_no_apt_get(sandbox: Sandbox, target: str) -> None:
    sandbox.stub("apt-get")
    done = sandbox.make(target, sandbox.present())
    assert (done.returncode, done.stdout + done.stderr, sandbox.calls()) == (0, "", [])
    # the control: the probe pointed away (and pdflatex gone), the same stub is called
    for name in ("pdflatex", "kpsewhich"):
        (sandbox.bin / name).unlink()
    done = sandbox.make(target, MISSING)
    assert done.returncode == 0, done.stderr
    assert sandbox.calls() != []


@pytest.mark.skipif(os.geteuid() != 0, reason="the root case needs root")
@pytest.mark.parametrize("target", TARGETS)
def test_as_root_apt_get_runs_without_sudo(sandbox: Sandbox, target: str) -> None:
    sandbox.stub("apt-get")
    sandbox.stub("sudo", tail='exec "$@"')
    done = sandbox.make(target, MISSING)
    packages, _ = TARGETS[target]
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"installing {packages} (Debian packages) for ")
    assert sandbox.calls() == expected_calls(target, sudo=False)


@pytest.mark.skipif(
    os.geteuid() == 0 and SETPRIV is None, reason="from root, the other user needs setpriv"
)
@pytest.mark.parametrize("target", ["browser", "nginx"])
def test_not_root_apt_get_runs_through_sudo(sandbox: Sandbox, target: str) -> None:
    sandbox.stub("apt-get")
    sandbox.stub("sudo", tail='exec "$@"')
    as_user = NOBODY if os.geteuid() == 0 else None
    done = sandbox.make(target, MISSING, as_user=as_user)
    assert done.returncode == 0, done.stderr
    assert sandbox.calls() == expected_calls(target, sudo=True)
    # the control: as root (where this runs as root) the same run calls no sudo
    if os.geteuid() == 0:
        sandbox.log.write_text("", encoding="utf-8")
        sandbox.make(target, MISSING)
        assert not any(call.startswith("sudo") for call in sandbox.calls())
