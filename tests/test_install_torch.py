"""``tools/install_torch.py``: the plan by which ``make setup`` installs torch.

* `choose` (pure) by a table: the user's index first, then a torch pip's configuration finds
  locally, then the CPU index on Linux without an NVIDIA GPU, else PyPI's default build.
* The facts, for real: pip's configuration read through ``pip config list``, the GPU through
  a stub ``nvidia-smi`` first on the PATH.
* The script, run with ``--dry-run``: this machine's configuration picks its local wheel;
  with no configuration (``PIP_CONFIG_FILE=/dev/null``, no ``PIP_*``) it picks the CPU index;
  a configuration with a local wheel and an index on 127.0.0.1 picks the wheel and sends the
  index no request (the probe contacts no host).
* Real installs into a throwaway venv, from a "simple" index on 127.0.0.1 serving a tiny fake
  torch wheel: ``--index URL``; the local wheel, its dependency from the configured index;
  pip's failure as one line naming TORCH_INDEX.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import importlib.util
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "install_torch.py"
VERSION = "2.13.0"
#: this machine's pip configuration: find-links holds torch's CPU wheel
MACHINE_WHEELS = Path("/opt/wheels")


def load_script() -> ModuleType:
    """``tools/install_torch.py`` as a module (registered: its dataclasses need it)."""
    spec = importlib.util.spec_from_file_location("install_torch", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["install_torch"] = module
    spec.loader.exec_module(module)
    return module


it = load_script()
LOCAL = it.LocalTorch(
    "2.13.0+cpu", "file:///w/torch-2.13.0%2Bcpu-cp311-none.whl", it.LocalSources(("/w",))
)
PIN = ("torch==2.13.0",)
CPU = ("--index-url", it.CPU_INDEX, *PIN)
CU128 = "https://download.pytorch.org/whl/cu128"
FROM_LOCAL = (("--isolated", "--no-deps", "--no-index", "--find-links", "/w", *PIN), PIN)

#: (system, NVIDIA GPU, local torch, index) -> (pip install runs, words of the line)
PLANS = [
    (("Linux", False, None, None), ((CPU,), "the CPU build (Linux, no NVIDIA GPU")),
    (("Linux", True, None, None), ((PIN,), "PyPI's default build for Linux (CUDA")),
    (("Darwin", False, None, None), ((PIN,), "PyPI's default build for macOS (CPU)")),
    (("Windows", True, None, None), ((PIN,), "PyPI's default build for Windows (CPU)")),
    (("Linux", False, LOCAL, None), (FROM_LOCAL, "finds locally: /w/torch-2.13.0+cpu-cp311")),
    (("Linux", True, LOCAL, None), (FROM_LOCAL, "the wheel pip's configuration finds")),
    (("Darwin", False, LOCAL, None), (FROM_LOCAL, "then its dependencies")),
    (("Linux", False, LOCAL, CU128), ((("--index-url", CU128, *PIN),), f"names: {CU128}")),
    (
        ("Linux", False, None, "file:///i/simple"),
        ((("--index-url", "file:///i/simple", *PIN),), ""),
    ),
    (("Darwin", False, None, "pypi"), ((PIN,), "PyPI's default build (TORCH_INDEX=pypi)")),
    (("Linux", False, LOCAL, "PyPI"), ((PIN,), "(TORCH_INDEX=pypi)")),
]


@pytest.mark.parametrize(("facts", "expected"), PLANS)
def test_the_plan(facts: tuple, expected: tuple) -> None:
    installs, words = expected
    plan = it.choose(*facts, VERSION)
    assert plan.installs == installs
    assert words in plan.says


def test_local_sources_from_pip_config_list() -> None:
    listed = "\n".join(
        [
            ":env:.find-links='/opt/wheels https://example.org/wheels'",
            ":env:.default-timeout='180'",
            "global.extra-index-url='file:///opt/pypi/simple https://example.org/simple'",
            "global.find-links='/opt/wheels\\nwheels'",
            "install.index-url='https://pypi.org/simple'",
            "user.find-links='C:\\\\wheels'",
            "garbage line",
            "x.find-links=not-a-literal",
        ]
    )
    assert it.local_sources(listed) == it.LocalSources(
        ("/opt/wheels", "wheels", "C:\\wheels"), ("file:///opt/pypi/simple",)
    )
    assert not it.local_sources("global.index-url='https://pypi.org/simple'")


def test_local_sources_as_pip_options() -> None:
    both = it.LocalSources(("/w",), ("file:///a/simple", "file:///b/simple"))
    assert both.pip_options() == [
        *("--index-url", "file:///a/simple", "--extra-index-url", "file:///b/simple"),
        *("--find-links", "/w"),
    ]
    assert it.LocalSources(("/w", "/v")).pip_options() == [
        *("--no-index", "--find-links", "/w", "--find-links", "/v")
    ]


def test_the_folder_holding_the_wheel(tmp_path: Path) -> None:
    sources = it.LocalSources((str(tmp_path / "v"), str(tmp_path / "w")), ("file:///i",))
    url = (tmp_path / "w" / "torch-2.13.0.whl").as_uri()
    assert it.holding(sources, url) == it.LocalSources((str(tmp_path / "w"),))
    assert it.holding(sources, "file:///i/files/torch-2.13.0.whl") == sources


def stub(folder: Path, name: str, body: str) -> Path:
    """An executable shell script ``name`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return folder


GPU_LISTED = 'echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0000)"'
#: a program the hung stub runs, found on the PATH before a test empties it
SLEEP = shutil.which("sleep")
NO_GPU = 'echo "NVIDIA-SMI has failed because it could not communicate with the driver"; exit 9'


@pytest.mark.parametrize(
    ("body", "expected"),
    [(GPU_LISTED, True), (NO_GPU, False), ('echo "No devices were found"; exit 6', False)],
)
def test_nvidia_gpu_from_nvidia_smi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, expected: bool
) -> None:
    monkeypatch.setenv("PATH", str(stub(tmp_path, "nvidia-smi", body)))
    assert it.has_nvidia_gpu() is expected


def test_no_nvidia_smi_or_a_hung_one_is_no_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert it.has_nvidia_gpu() is False
    stub(tmp_path, "nvidia-smi", f"{SLEEP} 2; {GPU_LISTED}")
    assert it.has_nvidia_gpu(timeout=0.5) is False
    assert it.has_nvidia_gpu() is True  # the control: given the time, the stub lists a GPU


# --- the script, run for real -------------------------------------------------------------


def clean_env(**changes: str) -> dict[str, str]:
    """This environment without pip's ``PIP_*`` variables, with ``changes``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return env | changes


def run_script(
    *args: str, env: dict[str, str] | None = None, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    """``python tools/install_torch.py --version 2.13.0 ARGS``; a probe waiting on a network
    host would run into the timeout (pip's own is minutes)."""
    command = [python, str(SCRIPT), "--version", VERSION, *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=90)


def dry_run(env: dict[str, str] | None = None) -> tuple[str, list[list[str]]]:
    """The plan the script prints with ``--dry-run``: its line, each pip install's args."""
    done = run_script("--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    says, *commands = done.stdout.splitlines()
    runs = [shlex.split(line) for line in commands]
    assert all(run[1:4] == ["-m", "pip", "install"] for run in runs), runs
    return says, [run[4:] for run in runs]


@pytest.mark.skipif(
    not list(MACHINE_WHEELS.glob(f"torch-{VERSION}*.whl")),
    reason="this project's machines: pip's find-links /opt/wheels holds torch's CPU wheel",
)
def test_this_machine_picks_its_local_wheel() -> None:
    says, runs = dry_run()
    wheel = next(MACHINE_WHEELS.glob(f"torch-{VERSION}*.whl"))
    assert f"finds locally: {wheel}" in says
    assert runs == [
        ["--isolated", "--no-deps", "--no-index", "--find-links", str(MACHINE_WHEELS), *PIN],
        [*PIN],
    ]


linux_only = pytest.mark.skipif(platform.system() != "Linux", reason="Linux's plans")


@linux_only
@pytest.mark.parametrize(
    ("nvidia_smi", "expected"),
    [(NO_GPU, [list(CPU)]), (GPU_LISTED, [list(PIN)]), (None, [list(CPU)])],
)
def test_no_pip_configuration_picks_by_the_gpu(
    tmp_path: Path, nvidia_smi: str | None, expected: list[list[str]]
) -> None:
    path = os.environ["PATH"]
    if nvidia_smi is not None:
        path = f"{stub(tmp_path, 'nvidia-smi', nvidia_smi)}{os.pathsep}{path}"
    says, runs = dry_run(clean_env(PIP_CONFIG_FILE=os.devnull, PATH=path))
    assert runs == expected
    assert ("download.pytorch.org/whl/cpu" in says) is (expected == [list(CPU)])


def test_a_choice_that_is_no_index_is_one_line() -> None:
    done = run_script("--dry-run", "--index", "cu128")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "TORCH_INDEX must be an index URL or 'pypi', not 'cu128'" in done.stderr


# --- a "simple" index on 127.0.0.1 and fake wheels ------------------------------------------


def fake_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A tiny pure-Python wheel ``name`` ``version`` (its module says ``FAKE = True``)."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f'__version__ = "{version}"\nFAKE = True\n',
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: attnref-tests\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        record.append(f"{path},sha256={encoded},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


class Index:
    """A PEP 503 "simple" index on 127.0.0.1 over ``root``, recording each request's path."""

    def __init__(self, root: Path) -> None:
        self.root, self.requests = root, []
        requests: list[str] = self.requests

        class Recording(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                requests.append(self.path)

        handler = functools.partial(Recording, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def publish(self, wheel: Path) -> None:
        """``wheel`` in the index: under ``files/``, linked from ``simple/<name>/``."""
        name = wheel.name.split("-")[0]
        (self.root / "files").mkdir(parents=True, exist_ok=True)
        (self.root / "files" / wheel.name).write_bytes(wheel.read_bytes())
        page = self.root / "simple" / name / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f'<a href="../../files/{wheel.name}">{wheel.name}</a>\n', encoding="utf-8")

    def asked_for(self, name: str) -> bool:
        """Whether pip asked the index for project ``name``."""
        return any(path.startswith(f"/simple/{name}/") for path in self.requests)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    """A running index (empty until `Index.publish`), stopped after the test."""
    served = Index(tmp_path / "index")
    served.thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


def local_config(tmp_path: Path, index: Index) -> dict[str, str]:
    """An environment whose pip configuration is a find-links folder holding a fake torch
    (which requires ``fakedep``) and the index on 127.0.0.1 (holding ``fakedep``)."""
    wheels = tmp_path / "wheels"
    fake_wheel(wheels, "torch", VERSION, requires=("fakedep",))
    index.publish(fake_wheel(tmp_path / "built", "fakedep", "1.0"))
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nfind-links = {wheels}\nindex-url = {index.url}\n")
    return clean_env(PIP_CONFIG_FILE=str(config), PIP_NO_CACHE_DIR="1")


def test_a_local_wheel_is_found_without_asking_the_index(tmp_path: Path, index: Index) -> None:
    says, runs = dry_run(local_config(tmp_path, index))
    wheels = tmp_path / "wheels"
    assert f"finds locally: {wheels / 'torch-2.13.0-py3-none-any.whl'}" in says
    assert runs == [
        ["--isolated", "--no-deps", "--no-index", "--find-links", str(wheels), *PIN],
        [*PIN],
    ]
    assert index.requests == []


@pytest.fixture(scope="module")
def throwaway(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway venv (with pip) for this module's installs; its python."""
    folder = tmp_path_factory.mktemp("throwaway") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    return folder / "bin" / "python"


@pytest.fixture
def venv(throwaway: Path) -> Path:
    """The throwaway venv's python, without the fake torch and its dependency."""
    uninstall = [str(throwaway), "-m", "pip", "uninstall", "--yes", "--quiet", "torch", "fakedep"]
    subprocess.run(uninstall, capture_output=True, check=True, env=clean_env())
    return throwaway


def installed(python: Path, module: str) -> str:
    """``module.__version__`` and ``module.FAKE`` in the venv of ``python``."""
    code = f"import {module}; print({module}.__version__, {module}.FAKE)"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_installs_from_the_index_given(tmp_path: Path, index: Index, venv: Path) -> None:
    index.publish(fake_wheel(tmp_path / "built", "torch", VERSION))
    env = clean_env(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1")
    done = run_script("--index", index.url, "--quiet", env=env, python=str(venv))
    assert done.returncode == 0, done.stderr
    says = f"install_torch: installing torch {VERSION} from the index TORCH_INDEX names: "
    assert done.stdout == f"{says}{index.url}\n"
    assert installed(venv, "torch") == f"{VERSION} True"
    assert index.asked_for("torch")
    # pip's failure: a version the index lacks ends in one line naming TORCH_INDEX
    failed = subprocess.run(
        [str(venv), str(SCRIPT), "--version", "9.9.9", "--index", index.url, "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )
    last = failed.stderr.strip().splitlines()[-1]
    assert failed.returncode != 0
    assert last.startswith("install_torch: pip failed (exit 1) installing torch 9.9.9 from ")
    assert "choose another build with TORCH_INDEX" in last


@pytest.mark.slow
def test_installs_the_local_wheel_then_its_dependencies(
    tmp_path: Path, index: Index, venv: Path
) -> None:
    done = run_script("--quiet", env=local_config(tmp_path, index), python=str(venv))
    assert done.returncode == 0, done.stderr
    assert installed(venv, "torch") == f"{VERSION} True"
    assert installed(venv, "fakedep") == "1.0 True"
    # torch came from the folder, its dependency from the configured index
    assert (index.asked_for("torch"), index.asked_for("fakedep")) == (False, True)
