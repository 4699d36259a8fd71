"""``attnref check --lang en|pt``: the report's language and its errors' (default: the answer's),
through the CLI (issue 31 item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attention_ref.cli.main import main


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def answer(tmp_path: Path, lang: str, *, mistake: str | None = "no_scale", name="a.json") -> str:
    """Exercise 9's S and A (3 decimals) in ``lang``, optionally with the scale forgotten."""
    from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text
    from attention_ref.exercises.catalogue import mistakes_for
    from attention_ref.exercises.chain import computed_steps
    from attention_ref.exercises.exercise import ExerciseOptions

    prob = Problem.of_exercise(ExerciseOptions(seed=9, lang=lang))
    d = prob.data()
    ms = [m for m in mistakes_for(d) if m.name == mistake]
    doc = answer_from_steps(computed_steps(d, ms), prob.naming, keys=("S", "A"))
    path = tmp_path / name
    path.write_text(answer_text(doc, 3), encoding="utf-8")
    return str(path)


ENGLISH = (
    "Checking your answer to attnref exercise --seed 9",
    "First wrong step: S⁽¹⁾ (heads[0].S).",
    "Diagnosis: no scaling: S = Q Kᵀ was not divided by √d_k = 1.414.",
)
PORTUGUESE = (
    "Conferindo a sua resposta a attnref exercise --seed 9",
    "Primeiro passo errado: S⁽¹⁾ (heads[0].S).",
    "Diagnóstico: sem escala: S = Q Kᵀ não foi dividido por √d_k = 1,414.",
)


@pytest.mark.parametrize(("lang", "other"), [("en", "pt"), ("pt", "en")])
def test_the_report_is_in_the_answers_language_unless_lang_asks_another(
    tmp_path, capsys, lang, other
):
    path = answer(tmp_path, lang)
    words = {"en": ENGLISH, "pt": PORTUGUESE}
    code, out, err = run(["check", path], capsys)  # the default: the answer's
    assert code == 1 and err == "" and all(w in out for w in words[lang]), out
    code, out, err = run(["check", path, "--lang", other], capsys)
    assert code == 1 and err == "" and all(w in out for w in words[other]), out
    assert not any(w in out for w in words[lang])
    code, out, _ = run(["check", "--lang", lang, path], capsys)  # asking its own: the same
    assert code == 1 and all(w in out for w in words[lang])


def test_a_wrong_entry_in_portuguese_reads_as_two_numbers(tmp_path, capsys):
    """ "sua 1,0, certa 2,000" reads as three numbers beside the decimal comma: the right value
    goes in parentheses, and no list comma follows a decimal one."""
    path = answer(tmp_path, "pt")
    code, out, _ = run(["check", path], capsys)
    wrong = [line for line in out.splitlines() if "ERRADO" in line]
    assert code == 1 and wrong, out
    assert re.search(r"\] sua -?\d+,\d+ \(certa -?\d+,\d+\)", wrong[0]), wrong[0]
    assert not re.search(r"\d,\d+, ", out), out
    code, out, _ = run(["check", path, "--lang", "en"], capsys)  # the control: English's commas
    assert re.search(r"\] yours -?\d+\.\d+, right -?\d+\.\d+", out), out


def test_a_right_answer_in_the_language_asked(tmp_path, capsys):
    path = answer(tmp_path, "en", mistake=None)
    code, out, _ = run(["check", path, "--lang", "pt"], capsys)
    assert code == 0 and out.rstrip().endswith("Todos os passos que você deu estão certos.")
    code, out, _ = run(["check", path], capsys)
    assert code == 0 and out.rstrip().endswith("Every step you gave is right.")


@pytest.mark.parametrize(
    ("text", "en", "pt"),
    [
        (
            '{"exercise": {"seed": 9}, "heads": [{"A": [[1, null, 0]]}]}',
            "A⁽¹⁾ (heads[0].A), entry [1, 2], is null",
            "A⁽¹⁾ (heads[0].A), entrada [1, 2], é null",
        ),
        (
            '{"exercise": {"seed": 9}, "heads": [{"S_masked": [[0, -1e9, -1e9]]}]}',
            '-1e9 is a large number, not −∞: write "-inf"',
            '-1e9 é um número grande, não −∞: escreva "-inf"',
        ),
        (
            '{"exercise": {"seed": 9}, "heads": [{"A": [["1,0", 0, 0]]}]}',
            "a number with a decimal comma",
            "um número com vírgula decimal",
        ),
        ('{"exercise": {"seed": 9}, "output": [[1,]]}', "is not valid JSON", "não é JSON válido"),
    ],
)
def test_errors_about_the_answer_are_in_the_language_asked(tmp_path, capsys, text, en, pt):
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(["check", str(path)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and en in err, err
    code, out, err = run(["check", str(path), "--lang", "pt"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and pt in err, err
    # the answer's own language, without --lang
    pt_text = text.replace('{"seed": 9}', '{"seed": 9, "lang": "pt"}')
    path.write_text(pt_text, encoding="utf-8")
    code, _, err = run(["check", str(path)], capsys)
    assert code == 2 and pt in err, err


def test_a_missing_file_in_the_language_asked(tmp_path, capsys):
    missing = str(tmp_path / "answer-1.json")
    code, _, err = run(["check", missing, "--lang", "pt"], capsys)
    assert code == 2 and "arquivo de resposta não encontrado" in err
    code, _, err = run(["check", missing], capsys)  # nothing to read a language from: English
    assert code == 2 and "answer file not found" in err


def test_a_language_check_does_not_know_is_one_line_exit_2(tmp_path, capsys):
    path = answer(tmp_path, "en")
    code, out, err = run(["check", path, "--lang", "fr"], capsys)
    assert (code, out) == (2, "") and err == "attnref: error: --lang must be en or pt, got 'fr'\n"
    code, out, _ = run(["check", "--help"], capsys)
    assert code == 0 and "--lang" in out
    assert json.loads(Path(path).read_text(encoding="utf-8"))["exercise"]["lang"] == "en"
