"""The architecture as tests: what each folder may import, proven two ways.

* In a fresh interpreter, importing every module of a folder leaves the forbidden packages out
  of ``sys.modules`` (what the folder pulls in when it is used).
* Statically, no ``import`` statement in a folder's files (function-level ones included: they
  run later, when a command needs them) names a forbidden package.

Dependencies point one way: reference -> inputs -> worked -> exercises -> classroom (render
beside worked); lm -> experiments -> classroom; the CLI above them all. And no import circle
anywhere in the package, not even between two files of one folder; no module over 450 lines,
none excepted (the textbook's formulas and their composition are two modules since issue 59).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "attention_ref"

#: folder -> the top-level packages and attnref folders it must never import
RULES: dict[str, set[str]] = {
    "attention_ref/reference": {"mlflow", "matplotlib", "typer", "rich", "attention_ref.cli",
                                "attention_ref.inputs", "attention_ref.exercises",
                                "attention_ref.worked", "attention_ref.render",
                                "attention_ref.lm", "attention_ref.experiments",
                                "attnref_book", "attention_ref.classroom"},
    "attention_ref/render": {"torch", "mlflow", "matplotlib", "typer", "attention_ref.cli",
                             "attention_ref.reference", "attention_ref.worked",
                             "attention_ref.inputs", "attention_ref.exercises",
                             "attention_ref.lm", "attention_ref.experiments",
                             "attnref_book", "attention_ref.classroom"},
    "attention_ref/worked": {"mlflow", "matplotlib", "typer", "attention_ref.cli",
                             "attention_ref.lm", "attention_ref.experiments", "attnref_book",
                             "attention_ref.classroom", "attention_ref.exercises"},
    # reading a user's file: below everything that reads one; nothing of the package, no torch
    "attention_ref/inputs": {"torch", "mlflow", "matplotlib", "typer", "rich", "attention_ref.cli",
                             "attention_ref.reference", "attention_ref.render",
                             "attention_ref.worked", "attention_ref.exercises",
                             "attention_ref.lm", "attention_ref.experiments",
                             "attnref_book", "attention_ref.classroom"},
    # the exercises and their grader: above worked/ and reference/, below classroom/
    "attention_ref/exercises": {"mlflow", "matplotlib", "typer", "attention_ref.cli",
                                "attention_ref.lm", "attention_ref.experiments",
                                "attnref_book", "attention_ref.classroom"},
    "attention_ref/lm": {"mlflow", "typer", "attention_ref.cli", "attention_ref.worked",
                         "attention_ref.exercises", "attention_ref.inputs",
                         "attention_ref.render", "attention_ref.experiments",
                         "attnref_book", "attention_ref.classroom"},
    # render (a leaf: it imports nothing of attnref) gives the report each language's numbers
    "attention_ref/experiments": {"typer", "attention_ref.cli", "attention_ref.worked",
                                  "attention_ref.exercises", "attention_ref.inputs",
                                  "attnref_book", "attention_ref.classroom"},
    "attention_ref/lm/config.py": {"torch", "mlflow", "attention_ref"},
    # attnref sample on a local file: numpy, never torch (it costs more than the generation)
    "attention_ref/lm/numpy_model.py": {"torch", "mlflow", "matplotlib", "attention_ref.lm.model",
                                        "attention_ref.lm.data", "attention_ref.lm.checkpoint"},
    "attention_ref/lm/draw.py": {"torch", "mlflow", "attention_ref"},
    "attention_ref/experiments/report.py": {"torch", "mlflow", "matplotlib",
                                            "attention_ref.lm"},
    "attention_ref/experiments/findings.py": {"torch", "mlflow", "matplotlib",
                                              "attention_ref.lm"},
    # split out of findings.py: the same rule
    "attention_ref/experiments/arm_rows.py": {"torch", "mlflow", "matplotlib",
                                              "attention_ref.lm"},
    "attention_ref/experiments/comparability.py": {"torch", "mlflow", "matplotlib",
                                                   "attention_ref.lm"},
    "attention_ref/experiments/attention_cost.py": {"torch", "mlflow", "matplotlib",
                                                    "attention_ref.lm"},
    "attention_ref/experiments/heads_report.py": {"torch", "mlflow", "matplotlib",
                                                  "attention_ref.lm"},
    # split out of report.py: the same rule
    "attention_ref/experiments/arm_paragraphs.py": {"torch", "mlflow", "matplotlib",
                                                    "attention_ref.lm"},
    # the report's words, per language: the same rule
    "attention_ref/experiments/report_words.py": {"torch", "mlflow", "matplotlib",
                                                  "attention_ref.lm"},
    "attention_ref/experiments/arm_words.py": {"torch", "mlflow", "matplotlib",
                                               "attention_ref.lm"},
    "attention_ref/experiments/heads_words.py": {"torch", "mlflow", "matplotlib",
                                                 "attention_ref.lm"},
    "attention_ref/experiments/names.py": {"torch", "mlflow", "attention_ref"},
    # a worked example read back from the cache: no torch until one must be computed
    "attention_ref/worked/cached.py": {"torch", "mlflow", "matplotlib", "attention_ref.reference",
                                       "attention_ref.lm", "attention_ref.experiments"},
    # what `attnref runs` and `attnref sample` read a local store with: no MLflow import
    "attention_ref/experiments/local_store.py": {"torch", "mlflow", "matplotlib",
                                                 "attention_ref.lm"},
    # the class (server, access table, later assignments and grades): it uses experiments/ and
    # worked/ (the checker), never the CLI; the table itself is pure data
    "attention_ref/classroom": {"typer", "attention_ref.cli", "attnref_book"},
    # the class's parts, each one way down: coursework, connection, gate, exchange, hosting,
    # simulated (`attention_ref.classroom`'s docstring); the gate runs inside mlflow server
    "attention_ref/classroom/coursework": {"typer", "attention_ref.cli", "attnref_book",
                                           "mlflow", "flask",
                                           "attention_ref.classroom.connection",
                                           "attention_ref.classroom.gate",
                                           "attention_ref.classroom.exchange",
                                           "attention_ref.classroom.hosting"},
    "attention_ref/classroom/connection": {"typer", "attention_ref.cli", "attnref_book",
                                           "attention_ref.classroom.gate",
                                           "attention_ref.classroom.exchange",
                                           "attention_ref.classroom.hosting"},
    "attention_ref/classroom/gate": {"typer", "attention_ref.cli", "attnref_book",
                                     "attention_ref.classroom.exchange",
                                     "attention_ref.classroom.hosting"},
    "attention_ref/classroom/exchange": {"typer", "attention_ref.cli", "attnref_book",
                                         "attention_ref.classroom.hosting"},
    "attention_ref/classroom/hosting": {"typer", "attention_ref.cli", "attnref_book",
                                        "attention_ref.classroom.exchange"},
    "attention_ref/classroom/gate/access.py": {"torch", "mlflow", "flask", "attention_ref.lm",
                                          "attention_ref.experiments", "attention_ref.worked",
                                          "attention_ref.exercises"},
    "attention_ref/classroom/gate/access_table.py": {"torch", "mlflow", "flask", "attention_ref.lm",
                                                "attention_ref.experiments",
                                                "attention_ref.worked"},
    # the book's build: outside the layers (it uses them; none of them imports it), never the
    # store or the CLI
    "book/attnref_book": {"mlflow", "typer", "attention_ref.cli"},
    # the book's pages as notebooks: text work, and in a notebook the book's RESULTS
    "book/attnref_book/notebooks.py": {"torch", "mlflow", "matplotlib", "typer", "rich",
                                        "attention_ref.cli", "attention_ref.reference",
                                        "attention_ref.worked", "attention_ref.render",
                                        "attention_ref.lm",
                                        "attention_ref.experiments"},
    "book/attnref_book/kernel.py": {"torch", "mlflow", "matplotlib", "typer", "rich",
                                     "attention_ref.cli", "attention_ref.reference",
                                     "attention_ref.worked", "attention_ref.render",
                                     "attention_ref.lm",
                                     "attention_ref.experiments"},
}  # fmt: skip
#: what importing the CLI (``attnref --help``) may not pull in: it must start fast
CLI_STARTUP_FORBIDDEN = {"torch", "mlflow", "matplotlib", "numpy"}


def module_name(f: Path) -> str:
    """The dotted name a file imports as: its path, but the CLI's folder ``cli/`` installs as
    ``attention_ref.cli`` (pyproject's package-dir)."""
    parts = list(f.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] == "cli":
        parts.insert(0, "attention_ref")
    if parts[0] == "book":  # the book's package, book/attnref_book: installed as attnref_book
        parts.pop(0)
    return ".".join(parts)


def modules_of(target: str) -> list[str]:
    path = ROOT / target
    files = [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    return [module_name(f) for f in files]


def imported_names(path: Path) -> set[str]:
    """Every module named by an import statement in ``path`` (absolute imports)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def violates(name: str, forbidden: set[str]) -> bool:
    return any(name == f or name.startswith(f + ".") for f in forbidden)


def fresh_import(modules: list[str]) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("target", sorted(RULES))
def test_no_import_statement_crosses_a_layer(target):
    path = ROOT / target
    files = [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    assert files, f"{target} has no Python files"
    bad = {
        f"{f.relative_to(ROOT)}: {name}"
        for f in files
        for name in imported_names(f)
        if violates(name, RULES[target])
        and not (name.startswith("attention_ref") and target.startswith(name.replace(".", "/")))
    }
    assert not bad, sorted(bad)


@pytest.mark.parametrize("target", sorted(RULES))
def test_importing_a_layer_loads_nothing_it_may_not_use(target):
    loaded = fresh_import(modules_of(target))
    own = set(modules_of(target))
    bad = {m for m in loaded - own if violates(m, RULES[target])}
    # a folder's own package __init__ chain (attention_ref, attention_ref.lm) is fine
    bad = {m for m in bad if not any(o.startswith(m + ".") or o == m for o in own)}
    assert not bad, sorted(bad)


def book_imports(files: list[Path]) -> list[str]:
    """``file: module`` of every import of the book's package (`attnref_book`) in ``files``."""
    return [
        f"{f.relative_to(ROOT)}: {name}"
        for f in files
        for name in sorted(imported_names(f))
        if violates(name, {"attnref_book"})
    ]


def test_the_package_and_the_cli_never_import_the_book():
    """What users install (attention_ref and its CLI) runs without the book's package, which
    the wheel does not carry (tests/test_packaging.py); a module that imported it would fail
    on a user's machine only."""
    files = sorted([*PKG.rglob("*.py"), *(ROOT / "cli").rglob("*.py")])
    assert len(files) > 100
    assert book_imports(files) == []
    # the control: the book's own files import it
    assert "book/attnref_book/figures.py: attnref_book.pages" in book_imports([BOOK / "figures.py"])


def test_cli_start_up_imports_neither_torch_nor_mlflow():
    loaded = fresh_import(["attention_ref.cli.main"])
    assert not {m for m in loaded if violates(m, CLI_STARTUP_FORBIDDEN)}


def test_the_rules_can_fail():
    """The checks above are not vacuous: a known import is caught by both."""
    assert violates("attention_ref.lm.model", {"attention_ref.lm"})
    assert "torch" in imported_names(PKG / "lm" / "model.py")
    assert "mlflow" in fresh_import(["attention_ref.experiments.runs"])
    # the package's re-exports are lazy (attnref params needs no torch); the math brings it
    assert "torch" in fresh_import(["attention_ref.reference.attention"])


def test_every_package_module_is_under_a_rule():
    """A new top-level module or folder must be placed in the architecture on purpose."""
    top = {p.name for p in PKG.iterdir() if p.name != "__pycache__"}
    assert top == {
        "__init__.py",
        "reference",
        "inputs",
        "worked",
        "exercises",
        "render",
        "lm",
        "experiments",
        "classroom",
    }


# --- no import circle, no long module ------------------------------------------------------------


BOOK = ROOT / "book" / "attnref_book"


def module_files() -> dict[str, Path]:
    """Every module of the package, of the CLI and of the book's package, by dotted name."""
    files = sorted([*PKG.rglob("*.py"), *(ROOT / "cli").rglob("*.py"), *BOOK.rglob("*.py")])
    return {module_name(f): f for f in files}


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports: every import statement, at the top, in a
    function or under ``TYPE_CHECKING``, relative ones resolved."""
    files = module_files()
    graph: dict[str, set[str]] = {m: set() for m in files}
    for m, f in files.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = m.split(".")[: None if f.name == "__init__.py" else -1]
                    up = here[: len(here) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            graph[m] |= {n for n in names if n in files and n != m}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's), each a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_in_the_package_or_the_cli():
    graph = import_graph()
    assert len(graph) > 100 and sum(map(len, graph.values())) > 400  # the graph was read
    assert circles(graph) == []


def test_an_import_circle_is_found():
    """The control: a circle of three (and one through a relative import) is reported."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


MAX_LINES = 450


def long_modules(files: dict[str, Path]) -> dict[str, int]:
    return {
        name: n
        for name, f in files.items()
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }


def test_no_module_is_over_450_lines(tmp_path):
    assert long_modules(module_files()) == {}
    # the control: a module one line over the cap is reported
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    assert long_modules({"long": long}) == {"long": MAX_LINES + 1}


# --- public names across modules, no façades ------------------------------------------------


#: the top-level names of this project's packages
OURS = ("attention_ref", "attnref_book")


def private_imports(files: dict[str, Path]) -> list[str]:
    """``file: module.name`` of every import of another module's private name (``_x``)."""
    found = []
    for path in files.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(OURS):
                found += [
                    f"{path.relative_to(ROOT)}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def re_exports(files: dict[str, Path]) -> list[str]:
    """``file: name`` of every name a module's ``__all__`` lists that it imports rather than
    defines (a façade for another module's names), and every ``import x as x``."""
    found = []
    for path in files.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported: set[str] = set()
        listed: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):
                for a in node.names:
                    imported.add(a.asname or a.name.split(".")[0])
                    if a.asname is not None and a.asname == a.name.split(".")[-1]:
                        found.append(f"{path.relative_to(ROOT)}: {a.name} as {a.asname}")
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                listed = [
                    e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)
                ]
        found += [f"{path.relative_to(ROOT)}: {n}" for n in listed if n in imported]
    return found


def test_no_module_imports_another_modules_private_name():
    files = module_files()
    files |= {str(p): p for p in (ROOT / "cli").rglob("*.py")}
    assert private_imports(files) == []


def test_no_classroom_module_re_exports_another_modules_names():
    """The class's modules (and the CLI) name each thing where it is defined: no façade that
    re-exports another module's names for old import paths (the server's and the homework's
    were, with about 50 names)."""
    files = {k: p for k, p in module_files().items() if "/classroom/" in str(p)}
    files |= {str(p): p for p in (ROOT / "cli").rglob("*.py")}
    assert re_exports(files) == []


def test_the_import_rules_find_a_private_import_and_a_facade(tmp_path):
    """The controls: a private name imported, a name re-exported, are found."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from attention_ref.classroom.connection.client import _x\n"
        "from attention_ref.classroom.connection.client import rest as rest\n"
        "from attention_ref.classroom.connection.client import healthy\n"
        "__all__ = ['healthy', 'mine']\n"
        "def mine(): ...\n",
        encoding="utf-8",
    )
    real = {"bad": bad}
    # the file is outside the project's root: reported by its name alone
    real_root = ROOT
    try:
        globals()["ROOT"] = tmp_path
        assert private_imports(real) == ["bad.py: attention_ref.classroom.connection.client._x"]
        assert sorted(re_exports(real)) == ["bad.py: healthy", "bad.py: rest as rest"]
    finally:
        globals()["ROOT"] = real_root


# --- the code as the formatter writes it ----------------------------------------------------


#: The tables left aligned by hand (``# fmt: skip``): the formatter would put one cell a line,
#: or split a row's columns apart. Everything else is as ``ruff format`` writes it, so the
#: 450-line cap above is measured on formatted code.
ALIGNED_TABLES: dict[str, tuple[str, ...]] = {
    # the mistakes: name, words in each language, how to reproduce it, where it applies
    "attention_ref/exercises/catalogue.py": ("HOMEWORK_KINDS",),
    # each feature's own mistakes and words
    "attention_ref/exercises/feature_gqa.py": ("GQA_KINDS", "WORDS"),
    "attention_ref/exercises/feature_window.py": ("WINDOW_KINDS", "WORDS"),
    "attention_ref/exercises/feature_rope.py": ("ROPE_KINDS", "WORDS"),
    "attention_ref/exercises/feature_alibi.py": ("ALIBI_KINDS", "WORDS"),
    "attention_ref/exercises/draw.py": ("WORDS",),  # token names, ten to a row, per language
    "attention_ref/exercises/features.py": ("PRESETS",),  # a preset a row
    "attention_ref/exercises/words.py": ("TEXT", "SLOTS"),  # the statement's and key's words
    "attention_ref/experiments/spread.py": ("_T975",),  # 30 t-values, ten to a row
    "attention_ref/reference/params.py": ("DTYPE_BYTES",),  # a dtype a row, with its alias
    "cli/words.py": ("USAGE",),  # click's English error a row, its pattern and its words
    # the tests' tables of cases, a case a row: what a judge must refuse, and its controls
    "tests/test_layers.py": ("RULES", "ALIGNED_TABLES"),  # a layer a row, a module a row
    "tests/classroom/test_parameters.py": ("REFUSED", "CONTROLS"),  # a request a row
    "tests/classroom/test_fuzz.py": ("WEIRD",),  # odd values, a kind a row
    "tests/classroom/test_gradebook_columns.py": ("WRITTEN",),  # Markdown a student could send
    "tests/exercises/test_check_answers.py": ("MALFORMED",),  # a malformed answer a row
    "tests/inputs/test_inputs.py": ("BIASED", "BAD"),  # a malformed input file a row
}  # fmt: skip


def skipped_statements(path: Path) -> list[str]:
    """The names assigned by the top-level statements that end in ``# fmt: skip`` (``?`` for a
    skipped line that is not a top-level assignment)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    ends = {i + 1 for i, line in enumerate(lines) if line.rstrip().endswith("# fmt: skip")}
    names = []
    for node in ast.parse(text).body:
        if node.end_lineno in ends and isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            names.append(target.id if isinstance(target, ast.Name) else "?")
            ends.discard(node.end_lineno)
    return names + ["?"] * len(ends)


def unformatted(files: dict[str, Path]) -> dict[str, tuple[str, ...]]:
    """Per module, what ``# fmt: skip`` keeps from the formatter, where it is not a listed
    table."""
    found = {str(f.relative_to(ROOT)): tuple(skipped_statements(f)) for f in files.values()}
    return {k: v for k, v in found.items() if v and v != ALIGNED_TABLES.get(k)}


def formatted_files() -> dict[str, Path]:
    """The package, the CLI, the tests, the tools and the benchmarks (nanoGPT's vendored files
    excepted: their own style)."""
    folders = ("tests", "tools", "benchmarks")
    found = [p for d in folders for p in (ROOT / d).rglob("*.py") if "nanogpt" not in p.parts]
    return module_files() | {str(p): p for p in found}


def test_fmt_skip_only_on_the_listed_tables(tmp_path):
    assert unformatted(formatted_files()) == {}
    # the control: a packed call kept from the formatter is reported, and so is a table the
    # list does not name
    bad = tmp_path / "bad.py"
    bad.write_text("x = f(1,\n      2)  # fmt: skip\nT = {1: 2}  # fmt: skip\n", encoding="utf-8")
    assert skipped_statements(bad) == ["x", "T"]
    inner = tmp_path / "inner.py"
    inner.write_text("def f():\n    return g(1,\n             2)  # fmt: skip\n", encoding="utf-8")
    assert skipped_statements(inner) == ["?"]
