"""``attnref exercise``'s library: seed-000-like problems, their statement and key."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_ref.exercises.exercise import (
    ExerciseOptions,
    draw_problem,
    make_exercise,
    options_from_json,
)
from attention_ref.inputs.attention_input import InputError, parse_input
from attention_ref.render import render
from attention_ref.worked.gradients import input_trace


@st.composite
def options(draw) -> ExerciseOptions:
    d_model = draw(st.integers(2, 8))
    heads = draw(st.sampled_from([h for h in range(1, d_model + 1) if d_model % h == 0]))
    return ExerciseOptions(
        seed=draw(st.integers(0, 10**9)),
        tokens=draw(st.integers(1, 8)),
        d_model=d_model,
        heads=heads,
        causal=draw(st.booleans()),
        lang=draw(st.sampled_from(["en", "pt"])),
    )


@given(options())
def test_projections_are_integers_and_nothing_is_all_zero(opt: ExerciseOptions):
    problem = draw_problem(opt)
    tr = input_trace(parse_input(problem))
    for t in (tr.Q, tr.K, tr.V, tr.QKt):
        assert torch.equal(t, t.round()), "Q, K, V and Q Kᵀ must be integers"
    for role in (tr.Q, tr.K, tr.V):
        assert (role.abs().sum(dim=-2) > 0).all(), "no column of Q, K, V is all zeros"
    X = torch.tensor(problem["X"])
    assert (X.sum(0) > 0).all() and (X.sum(1) > 0).all()
    assert set(X.unique().tolist()) <= {0.0, 1.0}
    assert tr.X.shape == (opt.tokens, opt.d_model) and tr.h == opt.heads
    assert tr.d_k == opt.d_model // opt.heads and (tr.M is not None) == opt.causal


@given(options())
def test_W_O_is_an_integer_matrix_neither_identity_nor_symmetric(opt: ExerciseOptions):
    W_O = torch.tensor(draw_problem(opt)["W_O"])
    eye = torch.eye(opt.d_model)
    assert torch.equal(W_O, W_O.round()) and torch.equal(W_O.diagonal(), eye.diagonal())
    assert not torch.equal(W_O, eye) and not torch.equal(W_O, W_O.T)


def test_same_seed_same_exercise_other_seed_other_exercise():
    a, b = ExerciseOptions(seed=7), ExerciseOptions(seed=8)
    assert draw_problem(a) == draw_problem(ExerciseOptions(seed=7))
    assert draw_problem(a)["X"] != draw_problem(b)["X"] or (
        draw_problem(a)["heads"] != draw_problem(b)["heads"]
    )


def test_the_language_changes_the_words_not_the_numbers():
    en, pt = draw_problem(ExerciseOptions(seed=4)), draw_problem(ExerciseOptions(seed=4, lang="pt"))
    assert {k: v for k, v in en.items() if k != "tokens"} == {
        k: v for k, v in pt.items() if k != "tokens"
    }
    assert en["tokens"] != pt["tokens"]


def test_one_column_has_no_W_O_and_the_output_is_the_concat():
    problem = draw_problem(ExerciseOptions(seed=1, d_model=1, heads=1))
    assert "W_O" not in problem
    tr = input_trace(parse_input(problem))
    assert torch.equal(tr.output, tr.concat)


def test_the_key_is_explain_of_the_problem_and_the_statement_asks_every_step():
    ex = make_exercise(ExerciseOptions(seed=3))
    tr = input_trace(parse_input(ex.problem))
    assert ex.key.data["output"] == tr.output.tolist()
    statement = render(ex.statement, "markdown", 3)
    for words in (
        "Question 1",
        "Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾",
        "√d_k",
        "softmax",
        "Concat · W_O",
        "attnref check",
        '"exercise": {"seed": 3',
    ):
        assert words in statement
    assert "Question 5" not in statement and "grads" not in ex.key.data
    key = render(ex.key, "markdown", 3)
    assert "A^(1)" in key and "Output" in key


def test_backward_adds_a_gradient_question_and_the_gradients_to_the_key():
    ex = make_exercise(ExerciseOptions(seed=3, backward=True))
    statement = render(ex.statement, "markdown", 3)
    assert "Question 5: gradients" in statement and "∂L/∂W_Q⁽¹⁾" in statement
    assert set(ex.key.data["grads"]) >= {"W_O", "X", "heads"}
    # the statement names the command that draws it, --backward included, and the key the same
    assert ex.statement.source.endswith("--causal --backward")
    assert ex.key.source == ex.statement.source
    forward = make_exercise(ExerciseOptions(seed=3))
    assert "--backward" not in forward.statement.source + forward.key.source


def test_portuguese_statement():
    ex = make_exercise(ExerciseOptions(seed=3, lang="pt", backward=True))
    statement = render(ex.statement, "markdown", 3)
    assert "Exercício 3" in statement and "Questão 5: gradientes" in statement
    assert "Question" not in statement


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"heads": 3}, "--heads must divide"),
        ({"tokens": 0}, "--tokens must be between"),
        ({"d_model": 9}, "--d-model must be between"),
        ({"lang": "fr"}, "--lang must be one of"),
        ({"seed": -1}, "--seed must be between"),
    ],
)
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ExerciseOptions(**kwargs)


def test_options_from_an_answer_file():
    assert options_from_json({"seed": 2, "heads": 1}) == ExerciseOptions(seed=2, heads=1)
    for bad, message in (
        ([], "must be an object"),
        ({"seed": "2"}, "must be an integer"),
        ({"seed": 2, "causal": 1}, "true or false"),
        ({"seed": 2, "x": 1}, "unknown key"),
    ):
        with pytest.raises(InputError, match=message):
            options_from_json(bad)


#: a number written with a decimal point (the Portuguese key must have none outside its JSON)
DECIMAL_POINT = re.compile(r"\d\.\d")


def test_portuguese_key_answers_the_statements_questions_with_decimal_commas():
    opt = ExerciseOptions(seed=3, lang="pt", backward=True)
    ex = make_exercise(opt)
    md, tex = render(ex.key, "markdown", 3), render(ex.key, "latex", 3)
    assert isinstance(md, str) and isinstance(tex, str)
    for title in (
        "Gabarito do exercício 3",
        "Fonte:",
        "Dados",
        "Questão 1: projeções",
        "Questão 2",
        "Questão 3: máscara e softmax",
        "Questão 4",
        "Questão 5: gradientes",
        "∂W_Q^(1)",
        "∂S̃^(1)",
    ):
        assert title in md, title
    for english in ("Source", "Question", "Inputs", "Projections", "Head outputs", "Backward"):
        assert english not in md, english
    assert not DECIMAL_POINT.search(md) and not DECIMAL_POINT.search(tex)
    # the numbers are the English key's (same seed: same draws, only the token words differ)
    en = make_exercise(ExerciseOptions(seed=3, backward=True))
    A = en.key.data["heads"][0]["A"]
    row = next(r for r in A if any(0 < v < 1 for v in r))  # a row with fractions
    cells = " | ".join(f"{v:.3f}".replace(".", ",") for v in row)
    assert cells in md
    assert " & ".join(f"{v:.3f}".replace(".", "{,}") for v in row) in tex
    for key in ("heads", "concat", "output", "grads"):
        assert ex.key.data[key] == en.key.data[key], key
    # negative control: the English key has decimal points, and "Source"
    en_md = render(en.key, "markdown", 3)
    assert isinstance(en_md, str)
    assert DECIMAL_POINT.search(en_md) and "Source:" in en_md and "Fonte" not in en_md


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("pt", ("Sem máscara", "que é a saída (não há W_O)", "sem W_O, G é o gradiente")),
        ("en", ("Without a mask", "which is the output (there is no W_O)", "without W_O, G is")),
    ],
)
def test_the_key_without_mask_or_output_projection(lang, said):
    ex = make_exercise(
        ExerciseOptions(seed=1, d_model=1, heads=1, causal=False, lang=lang, backward=True)
    )
    md = render(ex.key, "markdown", 3)
    assert isinstance(md, str)
    for words in said:
        assert words in md, words
    assert "**M**" not in md and "∂W_O" not in md and "**W_O**" not in md
    assert bool(DECIMAL_POINT.search(md)) == (lang == "en")


@pytest.mark.parametrize(
    ("heads", "d_model", "lang", "said"),
    [
        (1, 2, "en", "h = 1 head,"),
        (2, 4, "en", "h = 2 heads,"),
        (1, 2, "pt", "h = 1 cabeça,"),
        (2, 4, "pt", "h = 2 cabeças,"),
    ],
)
def test_the_statement_counts_its_heads_in_words(heads, d_model, lang, said):
    opt = ExerciseOptions(seed=3, heads=heads, d_model=d_model, lang=lang)
    text = render(make_exercise(opt).statement, "markdown", 3)
    assert said in text
    assert "h = 1 heads" not in text and "h = 1 cabeças" not in text
