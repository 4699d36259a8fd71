"""The wheel is clean (issue 56): it installs one top-level name, ``attention_ref``, and all of it;
nothing of the book (issue 60: its package is book/attnref_book, a distribution of its own).

pyproject lists every package by hand (``[tool.setuptools] packages``; ``cli/``, kept at the
repository's top, installs as ``attention_ref.cli`` through ``package-dir``), so three things
are held here:

* the list equals the package folders of the tree: a folder with an ``__init__.py`` left off
  the list would be left out of the wheel, and the editable install would never say so;
* the wheel, built from a copy of what a fresh clone has, holds ``attention_ref/…`` and its
  dist-info and nothing else, every source file of ``attention_ref/`` and ``cli/`` among them
  (``cli/x.py`` as ``attention_ref/cli/x.py``), and the console script
  ``attnref = attention_ref.cli.main:run``;
* (soak) the wheel installed into a fresh venv outside the checkout runs the user's first
  commands: explain, exercise, check, a 5-step training into a sqlite store, and the homework
  client's import.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the source folders and the packages they install as (pyproject's ``package-dir``)
SOURCE_ROOTS: dict[str, str] = {"attention_ref": "attention_ref", "attention_ref.cli": "cli"}


def pyproject() -> dict:
    """The repository's pyproject.toml, parsed."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def package_folders(root: Path) -> set[str]:
    """The packages of the tree under ``root``: every folder with an ``__init__.py`` under each
    source folder of :data:`SOURCE_ROOTS`, named as it installs (``cli/a`` as
    ``attention_ref.cli.a``)."""
    found: set[str] = set()
    for package, folder in SOURCE_ROOTS.items():
        for init in (root / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(root / folder).parts
            found.add(".".join((package, *parts)))
    return found


def clone_files(root: Path) -> list[str]:
    """The files a fresh clone of ``root`` has (tracked, plus new files git does not ignore)."""
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    )
    names = proc.stdout.decode().split("\0")
    return sorted(name for name in names if name and (root / name).is_file())


def installed_names(files: list[str]) -> set[str]:
    """Where the wheel must put each file of the source folders: ``cli/x.py`` as
    ``attention_ref/cli/x.py``, ``attention_ref/y.py`` as itself."""
    names: set[str] = set()
    for name in files:
        for package, folder in SOURCE_ROOTS.items():
            if name.startswith(f"{folder}/"):
                names.add(package.replace(".", "/") + name.removeprefix(folder))
                break
    return names


def wheel_problems(names: set[str], expected: set[str], dist_info: str) -> list[str]:
    """What is wrong with a wheel's file ``names``: a file outside ``attention_ref/`` and the
    dist-info, a source file missing, a file no source folder holds (a stale or compiled one)."""
    problems = [
        f"outside attention_ref/ and {dist_info}/: {name}"
        for name in sorted(names)
        if not name.startswith(("attention_ref/", f"{dist_info}/"))
    ]
    inside = {name for name in names if name.startswith("attention_ref/")}
    problems += [f"missing: {name}" for name in sorted(expected - inside)]
    problems += [f"not a source file: {name}" for name in sorted(inside - expected)]
    return problems


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built once for the module by setuptools' PEP 517 backend from a copy of what
    a fresh clone has: no ``build/``, no egg-info, no ``__pycache__`` of this checkout can leak
    into it (setuptools copies whatever ``build/lib`` holds), and the build writes nothing here."""
    base = tmp_path_factory.mktemp("wheel")
    src, out = base / "src", base / "dist"
    for name in clone_files(ROOT):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    build = (
        "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_wheel(sys.argv[1]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", build, str(out)],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / proc.stdout.strip().splitlines()[-1]


def test_the_packages_listed_are_the_package_folders_of_the_tree(tmp_path: Path) -> None:
    setuptools = pyproject()["tool"]["setuptools"]
    assert setuptools.get("package-dir") == {"attention_ref.cli": "cli"}
    listed = setuptools["packages"]
    assert len(listed) == len(set(listed)), listed
    assert set(listed) == package_folders(ROOT)
    assert {"attention_ref", "attention_ref.cli", "attention_ref.classroom.exchange"} <= set(listed)
    # the control: a tree with one more package folder (under cli/ too) is not the list
    for folder in ("attention_ref/newpart", "cli/sub"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "attention_ref" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "cli" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "attention_ref" / "data").mkdir()  # no __init__.py: not a package
    assert package_folders(tmp_path) == {
        "attention_ref",
        "attention_ref.newpart",
        "attention_ref.cli",
        "attention_ref.cli.sub",
    }
    assert package_folders(tmp_path) != {"attention_ref", "attention_ref.cli"}


def test_the_wheel_holds_attention_ref_and_every_source_file_and_nothing_else(
    wheel: Path,
) -> None:
    project = pyproject()["project"]
    dist_info = f"{project['name']}-{project['version']}.dist-info"
    names = {name for name in zipfile.ZipFile(wheel).namelist() if not name.endswith("/")}
    expected = installed_names(clone_files(ROOT))
    assert "attention_ref/cli/main.py" in expected and "attention_ref/__init__.py" in expected
    # every .py file of the two source folders is expected (and they hold nothing else today)
    sources = [
        path.relative_to(ROOT).as_posix()
        for folder in SOURCE_ROOTS.values()
        for path in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    ]
    assert installed_names(sources) <= expected
    assert wheel_problems(names, expected, dist_info) == []
    assert {name.split("/")[0] for name in names} == {"attention_ref", dist_info}
    # the controls: a top-level cli/, a file left out, a stale compiled file are each caught
    assert wheel_problems(names | {"cli/main.py"}, expected, dist_info) == [
        f"outside attention_ref/ and {dist_info}/: cli/main.py"
    ]
    short = names - {"attention_ref/cli/check.py"}
    assert wheel_problems(short, expected, dist_info) == ["missing: attention_ref/cli/check.py"]
    stale = names | {"attention_ref/__pycache__/x.pyc"}
    assert wheel_problems(stale, expected, dist_info) == [
        "not a source file: attention_ref/__pycache__/x.pyc"
    ]


#: what only the book uses (issue 60), kept outside the wheel in book/attnref_book: its
#: folders, and the claims' and the simulated class's modules by name
BOOK_FOLDERS = {"book", "attnref_book", "simulated"}
BOOK_MODULES = {
    "claims",
    "gpu_claims",
    "speed_claims",
    "conditions",
    "simulate",
    "class_plan",
    "class_record",
}


def book_files(names: set[str]) -> list[str]:
    """The files of ``names`` that belong to the book's package: under a book folder, or a
    module named as one of the book's."""
    return sorted(
        name
        for name in names
        if set(name.split("/")[:-1]) & BOOK_FOLDERS
        or (name.endswith(".py") and name.split("/")[-1].removesuffix(".py") in BOOK_MODULES)
    )


def test_the_wheel_holds_no_book_claims_or_simulation_module(wheel: Path) -> None:
    """Users install what they run: the book's page helpers, the claims' sentences and the
    simulated class live in the book's own package (book/pyproject.toml), which lists exactly
    the package folders of book/."""
    names = {name for name in zipfile.ZipFile(wheel).namelist() if not name.endswith("/")}
    assert len(names) > 100
    assert book_files(names) == []
    # the book's package: its folders, all listed, none of them attnref's
    listed = tomllib.loads((ROOT / "book" / "pyproject.toml").read_text(encoding="utf-8"))
    folders = {
        ".".join(init.parent.relative_to(ROOT / "book").parts)
        for init in (ROOT / "book").rglob("__init__.py")
    }
    assert set(listed["tool"]["setuptools"]["packages"]) == folders
    assert {"attnref_book", "attnref_book.simulated"} <= folders
    # the controls: the old homes are caught, and attnref's own gradebook is not the book
    assert book_files(
        {
            "attention_ref/book/pages.py",
            "attention_ref/experiments/speed_claims.py",
            "attention_ref/classroom/simulated/__init__.py",
            "attention_ref/classroom/coursework/gradebook.py",
        }
    ) == [
        "attention_ref/book/pages.py",
        "attention_ref/classroom/simulated/__init__.py",
        "attention_ref/experiments/speed_claims.py",
    ]


def test_the_wheels_console_script_is_attention_ref_cli_main_run(wheel: Path) -> None:
    project = pyproject()["project"]
    dist_info = f"{project['name']}-{project['version']}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
        top_level = zf.read(f"{dist_info}/top_level.txt").decode()
    parser = configparser.ConfigParser()
    parser.read_string(entry_points)
    assert dict(parser["console_scripts"]) == {"attnref": "attention_ref.cli.main:run"}
    assert top_level.split() == ["attention_ref"]


# --- soak: the wheel installed into a fresh venv, outside the checkout -------------------------


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> tuple[int, str]:
    """``args`` in ``cwd`` with ``env``: the exit code and the output (stdout, then stderr)."""
    proc = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout
    )
    return proc.returncode, proc.stdout + proc.stderr


def fresh_env(venv: Path) -> dict[str, str]:
    """This process's environment as a user's shell with ``venv`` activated: no PYTHONPATH (the
    checkout must not be importable), no MLflow settings, no other venv on PATH; pip's settings
    (the registries, /opt/wheels for torch) and HOME (pip's cache) kept."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"} and not key.startswith("MLFLOW_")
    }
    env["PATH"] = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    env["VIRTUAL_ENV"] = str(venv)
    return env


@pytest.mark.soak
def test_the_wheel_installed_in_a_fresh_venv_runs_the_first_commands(
    wheel: Path, tmp_path: Path, shakespeare_path: Path
) -> None:
    """About two minutes on 2 idle cores with pip's cache warm (five beside other tests): pip
    installs torch (the CPU wheel of /opt/wheels, pinned first as the Makefile does), then the
    wheel and its dependencies from the configured registries."""
    venv, work = tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    assert not work.is_relative_to(ROOT) and not venv.is_relative_to(ROOT)
    env = fresh_env(venv)
    python, attnref = str(venv / "bin" / "python"), str(venv / "bin" / "attnref")

    code, out = run([sys.executable, "-m", "venv", str(venv)], cwd=work, env=env)
    assert code == 0, out
    pip = [python, "-m", "pip", "install", "--quiet"]
    code, out = run([*pip, "torch==2.13.0"], cwd=work, env=env, timeout=900)
    assert code == 0, out[-5000:]
    code, out = run([*pip, str(wheel)], cwd=work, env=env, timeout=900)
    assert code == 0, out[-5000:]

    # the package imported is the installed one, not the checkout
    where = (
        "import attention_ref, sysconfig\n"
        "print(attention_ref.__file__)\n"
        "print(sysconfig.get_paths()['purelib'])"
    )
    code, out = run([python, "-c", where], cwd=work, env=env)
    assert code == 0, out
    module, purelib = (Path(line) for line in out.splitlines()[-2:])
    assert module.is_relative_to(venv) and module.is_relative_to(purelib), out
    assert not module.resolve().is_relative_to(ROOT), out
    code, out = run([python, "-m", "pip", "show", "-f", "attnref"], cwd=work, env=env)
    assert code == 0, out
    files = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert "attention_ref/cli/main.py" in files
    assert [name for name in files if name.startswith("cli/")] == []
    assert not (purelib / "cli").exists()

    code, out = run([attnref, "explain", "--example", "life-is-awesome"], cwd=work, env=env)
    assert code == 0, out
    assert 'Masked multi-head attention: "Life is awesome"' in out

    code, out = run([attnref, "exercise", "--seed", "3", "--out", "ex"], cwd=work, env=env)
    assert code == 0, out
    assert {"exercise.json", "answer.json", "statement.md", "key.md"} <= {
        path.name for path in (work / "ex").iterdir()
    }
    # Q of the first head filled in by hand (X @ W_Q), as tests/exercises/test_no_torch.py does
    answer = work / "ex" / "answer.json"
    doc = json.loads(answer.read_text(encoding="utf-8"))
    problem = json.loads((work / "ex" / "exercise.json").read_text(encoding="utf-8"))
    X, W_Q = np.array(problem["X"]), np.array(problem["heads"][0]["W_Q"])
    doc["heads"][0]["Q"] = (X @ W_Q).tolist()
    answer.write_text(json.dumps(doc), encoding="utf-8")
    code, out = run([attnref, "check", "ex/answer.json"], cwd=work, env=env)
    assert code == 0, out
    assert "exercise --seed 3" in out and "1 step given" in out
    assert "(heads[0].Q)  right" in out and "Every step you gave is right." in out
    # the control: one entry off is graded wrong
    doc["heads"][0]["Q"][0][0] += 1
    answer.write_text(json.dumps(doc), encoding="utf-8")
    code, out = run([attnref, "check", "ex/answer.json"], cwd=work, env=env)
    assert code == 1 and "(heads[0].Q)  right" not in out, out

    db = work / "mlflow.db"
    train = [attnref, "train", "--quick", "--max-steps", "5", "--data", str(shakespeare_path)]
    code, out = run([*train, "--tracking-uri", f"sqlite:///{db}"], cwd=work, env=env, timeout=600)
    assert code == 0, out[-5000:]
    assert "finished: 5 steps" in out and db.is_file(), out
    (run_dir,) = (work / "runs").iterdir()
    assert (run_dir / "best.pt").is_file() and f"run {run_dir.name} finished" in out

    code, out = run(
        [python, "-c", "import attention_ref.classroom.connection.class_client"], cwd=work, env=env
    )
    assert code == 0, out
