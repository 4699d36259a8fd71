"""A student's homework commands speak the assignment's language (issue 42, item 7): the words
of ``fetch`` and ``status`` (`attention_ref.classroom.exchange.student_words`), the diagnosis in
the catalogue's words, and the error line's prefix; before the assignment is known, the
language of the student's environment. The commands themselves, on a real class server, are
in `tests/classroom/test_homework.py`.
"""

from __future__ import annotations

import datetime as dt
import re
import string

import pytest

from attention_ref.classroom.coursework.assignment import GRADE
from attention_ref.classroom.exchange.student_words import STUDENT, said
from attention_ref.classroom.exchange.submit import MySubmission
from attention_ref.cli.errors import CLIError
from attention_ref.cli.main import main
from attention_ref.exercises.answer import read_answer_text
from attention_ref.exercises.grader import check_document
from attention_ref.inputs.errors import InputError


def fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_every_language_says_every_sentence_with_the_same_fields():
    keys = set(STUDENT["en"])
    for lang, table in STUDENT.items():
        assert set(table) == keys, lang
        for key in keys:
            assert fields(table[key]) == fields(STUDENT["en"][key]), (lang, key)
    # the Portuguese words are Portuguese, not English copied over
    same = [k for k in keys if STUDENT["pt"][k] == STUDENT["en"][k]]
    assert same == [], same


def test_a_plural_follows_the_count():
    assert said("fetched", "pt", name="hw", student="ana", n=1, due="sem prazo") == (
        "tarefa 'hw' para ana: 1 exercício, sem prazo"
    )
    assert said("submissions", "en", name="hw", student="ana", n=3, due="no due time") == (
        "hw for ana: 3 submissions, no due time"
    )


def submission(**grade: str) -> MySubmission:
    received = dt.datetime(2026, 11, 28, 9, 0, 31, tzinfo=dt.UTC)
    tags = {GRADE + k: v for k, v in grade.items()}
    late = dt.timedelta(seconds=31)
    return MySubmission("f" * 32, "exercise 1", "FINISHED", received, late, tags)


def test_status_says_the_grade_and_the_diagnosis_in_the_assignments_language():
    s = submission(exercise="1", steps="8/18", first_wrong="heads[0].S", diagnosis="no_scale")
    s = MySubmission(**{**s.__dict__, "grade": {**s.grade, GRADE + "counts": "yes"}})
    pt = s.cells("pt")
    # under the header "atraso" (late), the lateness itself
    assert pt[3] == "31 s" and pt[5] == "8/18" and pt[8] == "sim"
    assert pt[7].startswith("sem escala") and "no_scale" not in pt[7]
    en = s.cells("en")
    assert en[3] == "31 s" and en[7].startswith("no scaling") and en[8] == "yes"
    # a late penalty: beside the lateness, and the points it left beside the steps (issue 58:
    # "18/18" with no -20% read as a whole grade)
    fined = submission(steps="18/18", penalty="20", points="14.4")
    assert fined.cells("en")[3] == "31 s (-20%)" and fined.cells("en")[5] == "18/18, 14.4 points"
    assert fined.cells("pt")[5] == "18/18, 14.4 pontos"
    assert submission(steps="18/18", penalty="0", points="18").cells("en")[5] == "18/18"
    # two mistakes together, and two diagnoses: each said, the separators kept
    both = submission(diagnosis="no_mask + no_W_O | slip").cells("pt")[7]
    assert both.count(" + ") == 1 and both.count(" | ") == 1
    assert not {"no_mask", "no_W_O", "slip"} & set(re.split(r" [+|] ", both)), both
    # not graded yet: said so, in the language
    assert submission().cells("pt")[5] == "ainda sem nota"
    assert submission().cells("pt")[7] == ""


def test_the_error_prefix_is_the_messages_language(capsys):
    assert CLIError("x", "pt").line() == "attnref: erro: x"
    assert CLIError("x").line() == "attnref: error: x"
    assert CLIError("x", "fr").line() == "attnref: error: x"  # no such table: English
    # an answer's error is raised in the answer's language, and printed with its prefix
    with pytest.raises(InputError) as e:
        check_document(
            read_answer_text('{"exercise": {"seed": 0, "lang": "pt"}, "heads": [{"Q": "x"}]}')
        )
    assert e.value.lang == "pt"


def test_check_of_a_portuguese_answer_says_its_error_in_portuguese(tmp_path, capsys):
    bad = tmp_path / "answer.json"
    bad.write_text('{"exercise": {"seed": 0, "lang": "pt"}, "heads": [{"Q": "x"}]}')
    assert main(["check", str(bad)]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("attnref: erro: ") and "\n" not in line
    # the control: the same answer in English
    bad.write_text('{"exercise": {"seed": 0}, "heads": [{"Q": "x"}]}')
    assert main(["check", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("attnref: error: ")


def test_homework_before_the_server_speaks_the_students_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    assert main(["homework", "fetch", "hw"]) == 2
    line = capsys.readouterr().err.strip()
    assert re.fullmatch(r"attnref: erro: defina MLFLOW_TRACKING_USERNAME .*", line), line
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert main(["homework", "fetch", "hw"]) == 2
    assert capsys.readouterr().err.startswith("attnref: error: set MLFLOW_TRACKING_USERNAME")


def test_the_exercise_file_refused_in_its_own_language(tmp_path, capsys):
    """exercise.json carries no "lang": its tokens say it (the generator draws them from one
    language's words); a file of mixed or unknown tokens is refused in English."""
    from attention_ref.exercises.answer import drawn_lang
    from attention_ref.exercises.exercise import ExerciseOptions, make_exercise

    for lang, words in (("pt", "é o exercício"), ("en", "is the exercise")):
        problem = make_exercise(ExerciseOptions(seed=0, lang=lang)).problem
        assert drawn_lang(problem) == lang
        path = tmp_path / f"exercise-{lang}.json"
        path.write_text(__import__("json").dumps(problem), encoding="utf-8")
        assert main(["check", str(path)]) == 2
        err = capsys.readouterr().err
        assert words in err and err.startswith(CLIError("", lang).line()), err
    assert drawn_lang({"tokens": ["vida", "Life"]}) == "en"  # the controls
    assert drawn_lang({"tokens": []}) == drawn_lang({"X": [[1]]}) == "en"


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_with_no_due_time_a_submission_is_not_said_on_time(lang):
    """`submitted_line`: "on time (no due time)" said nothing true; with no due time the line
    says there is none, and "on time" only against a due time (and "LATE" past it)."""
    from attention_ref.classroom.exchange.submit import Submitted, submitted_line

    at = dt.datetime(2026, 11, 29, 5, 42, 10, tzinfo=dt.UTC)
    sent = Submitted(1, "r" * 32, at, None, 1, None, None)  # type: ignore[arg-type]
    none = submitted_line(sent, "answer-1.json", "hw", lang)
    on_time = STUDENT[lang]["on_time_due"].split(" (")[0]
    assert ("no due time" if lang == "en" else "sem prazo") in none
    assert on_time not in none, none
    # the control: against a due time, on time is said, and late is said late
    due = Submitted(1, "r" * 32, at, None, 1, None, at + dt.timedelta(days=1))  # type: ignore[arg-type]
    assert on_time in submitted_line(due, "answer-1.json", "hw", lang)
    late = Submitted(1, "r" * 32, at, dt.timedelta(seconds=5), 1, None, at)  # type: ignore[arg-type]
    assert STUDENT[lang]["late_due"].split(" ")[0] in submitted_line(late, "a.json", "hw", lang)
