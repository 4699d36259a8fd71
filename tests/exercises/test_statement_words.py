"""What the statement asks is what the answer may hold, in words that fit the decimals asked;
no error line quotes more of a value than a screen line holds."""

from __future__ import annotations

import json

import pytest

from attention_ref.exercises.answer import Problem, parse_answer, read_answer_text
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.inputs.errors import InputError
from attention_ref.render import render


@pytest.mark.parametrize(
    ("decimals", "en", "pt"),
    [
        (
            1,
            "Give decimals to 1 place; trailing zeros may be dropped (2 for 2.0)",
            "Dê 1 casa decimal; zeros à direita podem ser omitidos (2 para 2,0)",
        ),
        (
            2,
            "Give decimals to 2 places; trailing zeros may be dropped (0.7 for 0.70, 2 for 2.00)",
            "Dê 2 casas decimais; zeros à direita podem ser omitidos (0,7 para 0,70; 2 para 2,00)",
        ),
        (
            3,
            "Give decimals to 3 places; trailing zeros may be dropped (0.67 for 0.670, 2 for "
            "2.000)",
            "Dê 3 casas decimais; zeros à direita podem ser omitidos (0,67 para 0,670; 2 "
            "para 2,000)",
        ),
    ],
)
def test_the_decimals_asked_in_words_that_fit_them(decimals, en, pt):
    for variant in ("mha", "window"):
        for lang, words in (("en", en), ("pt", pt)):
            opt = ExerciseOptions(seed=2, decimals=decimals, lang=lang, variant=variant)
            text = " ".join(render(make_exercise(opt).statement, "markdown", 3).split())
            assert words in text, (variant, lang)
            if decimals == 1:
                assert "1 places" not in text and "0.67 for 0.670" not in text


def test_the_window_mask_the_statement_asks_for_is_an_answer_step():
    opt = ExerciseOptions(seed=3, variant="window", tokens=4)
    ex = make_exercise(opt)
    assert "Write M_win (4×4)" in render(ex.statement, "markdown", 3)
    assert "M" in ex.answer and ex.answer["M"] is None  # asked in answer.json
    prob = Problem.of_exercise(opt)
    M = computed_steps(prob.data())[("M", None)]
    written = [["-inf" if x < 0 else 0 for x in row] for row in M.tolist()]
    right = check_document(read_answer_text(json.dumps(prob.naming | {"M": written})))
    assert right.all_right and right.steps_given == 1
    wrong = [row[:] for row in written]
    wrong[3][1] = 0  # three keys seen instead of w = 2: the window one key too wide
    report = check_document(read_answer_text(json.dumps(prob.naming | {"M": wrong})))
    assert not report.all_right
    assert "First wrong step: M_win (M)." in report_lines(report)
    # the homework's answer has no such step: refused, as before
    with pytest.raises(InputError, match='unknown key "M"'):
        parse_answer(
            read_answer_text(
                json.dumps({"exercise": ExerciseOptions(seed=3).to_json(), "M": written})
            )
        )


def test_a_huge_entry_is_reported_on_a_screen_line():
    prob = Problem.of_exercise(ExerciseOptions(seed=1))
    Q = computed_steps(prob.data())[("Q", 0)].tolist()
    Q[0][0] = 1e308
    report = check_document(read_answer_text(json.dumps(prob.naming | {"heads": [{"Q": Q}]})))
    assert not report.all_right
    assert max(len(line) for line in report_lines(report)) < 200, report_lines(report)
    assert "1.000e+308" in "\n".join(report_lines(report))


def test_a_huge_string_is_not_echoed_back():
    doc = {"exercise": {"seed": 1, "lang": "x" * 2_000_000}, "output": [[1.0]]}
    with pytest.raises(InputError) as e:
        parse_answer(read_answer_text(json.dumps(doc)))
    assert len(str(e.value)) < 300 and "\n" not in str(e.value)
