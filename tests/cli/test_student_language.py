"""A Portuguese student's commands at a terminal, with no ``--lang`` (issue 56): under
``LANG=pt_BR.UTF-8`` every command a student runs, its hints and its errors (the prefix
included) speak Portuguese; under ``LANG=C``, the control, English.

Each command runs as a student runs it: a process of its own whose output is a
pseudo-terminal (`tools/screens.py`'s `on_terminal`), in a folder of the test's, with nothing
but the locale saying the language (no ``$ATTNREF_LANG``, ``LC_ALL`` or ``LC_MESSAGES``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from screens import on_terminal  # noqa: E402

MAIN = "import sys; from attention_ref.cli.main import main; sys.exit(main(sys.argv[1:]))"
#: English a Portuguese error or hint must not hold (click's words and attnref's own)
ENGLISH = re.compile(
    r"\b(error|must|not found|unknown|is not|expected|choose|no such|missing|invalid|"
    r"requires|needs|given|wrote|fill in|then)\b",
    re.IGNORECASE,
)
#: a class server no test starts: the student's commands refuse before they reach it
NO_SERVER = {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}
ACCOUNT = {"MLFLOW_TRACKING_USERNAME": "ana", "MLFLOW_TRACKING_PASSWORD": "x"}


@dataclass(frozen=True)
class Case:
    """A command line, its exit code, and what it says in each language (``said``: a piece of
    its output per language; errors: the prefix and no English word in Portuguese)."""

    args: tuple[str, ...]
    code: int
    said: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)


CASES = {
    "explain": Case(
        ("explain",),
        0,
        {"pt": "Atenção multi-cabeça com máscara", "en": "Masked multi-head attention"},
    ),
    "explain an unknown example": Case(("explain", "-e", "life"), 2, {}),
    "explain a format": Case(("explain", "--format", "md"), 2, {}),
    "explain a language": Case(("explain", "--lang", "fr"), 2, {"pt": "--lang deve ser"}),
    "explain a missing file": Case(("explain", "--input", "nada.json"), 2, {}),
    "explain broken JSON": Case(("explain", "--input", "quebrado.json"), 2, {}),
    "explain a ragged X": Case(("explain", "--input", "torto.json"), 2, {}),
    "exercise --out": Case(
        ("exercise", "--seed", "3", "--out", "ex"),
        0,
        {
            "pt": "preencha ex/answer.json e depois: attnref check ex/answer.json",
            "en": "fill in ex/answer.json, then: attnref check ex/answer.json",
        },
    ),
    "exercise a size": Case(("exercise", "--tokens", "99"), 2, {"pt": "--tokens deve estar"}),
    "check an empty answer": Case(
        ("check", "ex/answer.json"), 2, {"pt": "nenhum passo dado", "en": "no step given"}
    ),
    "check an answer": Case(("check", "answer.json"), 0, {"pt": "certo", "en": "right"}),
    "check a missing file": Case(("check", "nada.json"), 2, {"pt": "não encontrado"}),
    "check broken JSON": Case(("check", "quebrado.json"), 2, {"pt": "não é JSON válido"}),
    "check with no file": Case(("check",), 2, {"pt": "falta o argumento 'answer'"}),
    "report with no runs": Case(("report",), 2, {}),
    "homework fetch with no server": Case(("homework", "fetch", "hw"), 2, {}),
    "homework status with no account": Case(
        ("homework", "status", "hw"), 2, {"pt": "MLFLOW_TRACKING_USERNAME"}, NO_SERVER
    ),
    "homework submit a missing file": Case(
        ("homework", "submit", "hw", "answer-1.json"),
        2,
        {"pt": "attnref homework fetch hw"},
        NO_SERVER | ACCOUNT,
    ),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The student's folder: a broken JSON file, an ``--input`` file with a ragged X, and an
    answer to the homework's example (its Q⁽¹⁾ right) that names no language."""
    here = tmp_path_factory.mktemp("student")
    (here / "quebrado.json").write_text('{"X": [[1, 0],', encoding="utf-8")
    ragged = {"X": [[1, 0], [1]], "heads": [{"W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}]}
    (here / "torto.json").write_text(json.dumps(ragged), encoding="utf-8")
    shown = subprocess.run(
        [sys.executable, "-c", MAIN, "explain", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        env=env_for("C"),
    )
    q = json.loads(shown.stdout)["heads"][0]["Q"]
    answer = {"example": "life-is-awesome", "heads": [{"Q": q}]}
    (here / "answer.json").write_text(json.dumps(answer), encoding="utf-8")
    return here


def env_for(locale: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a student whose locale is ``locale``, nothing else naming a language
    and no class account unless ``extra`` gives one."""
    drop = {"ATTNREF_LANG", "LC_ALL", "LC_MESSAGES", "COLUMNS", "LINES", *NO_SERVER, *ACCOUNT}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return env | {"LANG": locale, "PYTHONPATH": str(ROOT)} | (extra or {})


def run(case: Case, locale: str, cwd: Path) -> tuple[int, str]:
    argv = [sys.executable, "-c", MAIN, *case.args]
    return on_terminal(argv, env_for(locale, case.env), cwd=cwd, columns=100)


@pytest.mark.parametrize(("locale", "lang"), [("pt_BR.UTF-8", "pt"), ("C", "en")])
def test_every_student_command_speaks_the_locales_language(folder, locale, lang):
    """The cases run in order in one folder per locale (``exercise --out`` writes the answer
    ``check`` then reads), under each locale."""
    here = folder / lang
    here.mkdir()
    for name in ("quebrado.json", "torto.json", "answer.json"):
        (here / name).write_bytes((folder / name).read_bytes())
    for name, case in CASES.items():
        code, text = run(case, locale, here)
        assert code == case.code, (name, text)
        assert "Traceback" not in text, (name, text)
        if lang in case.said:
            assert case.said[lang] in " ".join(text.split()), (name, text)
        if case.code == 2:
            lines = text.strip().splitlines()
            prefix = {"pt": "attnref: erro: ", "en": "attnref: error: "}[lang]
            assert len(lines) == 1 and lines[0].startswith(prefix), (name, text)
            if lang == "pt":
                assert not ENGLISH.search(lines[0].removeprefix(prefix)), (name, text)
    statement = (here / "ex" / "statement.md").read_text(encoding="utf-8")
    then = {
        "pt": "Depois rode `attnref check ex/answer.json`.",
        "en": "Then run `attnref check ex/answer.json`.",
    }
    assert then[lang] in " ".join(statement.split())


def test_the_english_words_are_seen():
    """The control of the Portuguese check: an English error line is caught."""
    assert ENGLISH.search("answer file not found: nada.json")
    assert ENGLISH.search("unknown format 'md'; choose one of: rich")
    assert not ENGLISH.search("arquivo de resposta não encontrado: nada.json")
