"""``check`` draws what it grades once: the answer carries the draw the generator kept
(``"draw"``), and the problem is drawn again from the seed's stream without the search."""

from __future__ import annotations

import pytest

from attention_ref.exercises import draw as draw_module
from attention_ref.exercises.answer import parse_answer, resolve
from attention_ref.exercises.draw import MAX_DRAWS, Problem, draw, draw_at
from attention_ref.exercises.exercise import make_exercise
from attention_ref.exercises.features import PROBLEMS, default_shape
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.inputs.errors import InputError

#: every problem: the homework's, each feature, every combination (issue 59)
SHAPES = PROBLEMS


def options(name: str, seed: int) -> ExerciseOptions:
    heads, d_model = default_shape(name)
    return ExerciseOptions(seed=seed, variant=name, heads=heads, d_model=d_model)


@pytest.mark.parametrize("name", SHAPES)
def test_the_draw_kept_is_drawn_again_without_the_search(name):
    kept = []
    for seed in range(12):
        opt = options(name, seed)
        found = draw(opt)
        assert draw_at(opt, found.kept) == found.problem, seed
        kept.append(found.kept)
    assert min(kept) == 1


def test_a_problem_drawn_again_is_the_one_the_search_kept():
    # a seed the generator draws again (its first draw hides a mistake)
    opt = next(o for s in range(200) if draw(o := ExerciseOptions(seed=s)).draws > 1)
    found = draw(opt)
    assert found.kept == found.draws > 1
    assert draw_at(opt, 1) != found.problem  # the control: the first draw is another problem
    again, searched = Problem.of_exercise(opt, found.kept), Problem.of_exercise(opt)
    assert again.trace.X.tolist() == searched.trace.X.tolist()
    assert again.trace.W_Q.tolist() == searched.trace.W_Q.tolist()
    assert again.naming == searched.naming and again.chain == searched.chain
    assert make_exercise(opt).answer["draw"] == found.kept


def test_the_answer_with_its_draw_runs_no_search(monkeypatch):
    calls = []
    real = draw_module.hidden

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(draw_module, "hidden", counted)
    opt = options("gqa", 5)
    doc = {"exercise": opt.to_json(), "draw": 1}
    draw_module._draw.cache_clear()
    resolve(doc, None)
    assert calls == []
    draw_module._draw.cache_clear()
    resolve({"exercise": opt.to_json()}, None)  # the control: without it, the search runs
    assert calls


@pytest.mark.parametrize(
    ("doc", "said"),
    [
        ({"draw": 0}, '"draw" is the number attnref exercise wrote'),
        ({"draw": MAX_DRAWS + 1}, f"1 to {MAX_DRAWS}"),
        ({"draw": "1"}, '"draw" is the number'),
        ({"draw": True}, '"draw" is the number'),
        ({"draw": 1.0}, '"draw" is the number'),
    ],
)
def test_a_bad_draw_is_refused_in_one_line(doc, said):
    with pytest.raises(InputError, match=said) as refused:
        resolve({"exercise": options("mha", 1).to_json(), **doc}, None)
    assert "\n" not in str(refused.value)


def test_a_draw_belongs_to_an_exercise():
    with pytest.raises(InputError, match='"draw" goes with "exercise"'):
        resolve({"example": "life-is-awesome", "draw": 1}, None)
    pt = {"exercise": {**options("mha", 1).to_json(), "lang": "pt"}, "draw": 0}
    with pytest.raises(InputError, match='"draw" é o número'):
        resolve(pt, None)


def test_a_tampered_draw_only_hurts_its_author():
    """Where the problem is given (the class's grader draws from the assignment's options),
    the answer's draw is not read."""
    opt = options("mha", 2)
    prob = Problem.of_exercise(opt)
    doc = {"exercise": opt.to_json(), "draw": 7, "concat": [[1.0] * 4] * 3}
    assert parse_answer(doc, problem=prob).problem is prob
    assert resolve(doc, None).trace.X.tolist() != prob.trace.X.tolist()  # what its author gets
    for bad in (0, "7", True):
        with pytest.raises(InputError, match='"draw" is the number'):
            parse_answer({**doc, "draw": bad}, problem=prob)  # judged even where not read
