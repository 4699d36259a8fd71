"""Issue 59's item 2: the order the features are typed in does not change the problem.

``--variant rope+gqa`` exited 2 ("needs h ≥ 2 … got h = 1") where ``gqa+rope`` worked, and
``window+gqa`` drew h = 2, d = 4 where ``gqa+window`` drew h = 4, d = 8: the default shape came
from the first feature as typed. Now a combination is named, and drawn, in `FEATURES`' order,
whatever the order typed; `PROBLEMS` names all eight problems, which the broad tests draw from.
"""

from __future__ import annotations

import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest

from attention_ref.cli.exercise_shape import shape
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.features import FEATURES, PLAIN, PROBLEMS, Features, default_shape
from attention_ref.render import to_json

ATTNREF = str(Path(sys.executable).with_name("attnref"))
#: every combination in every order it may be typed: ``(typed, its problem)``
ORDERS = [
    ("+".join(order), name)
    for name in PROBLEMS
    if "+" in name
    for order in permutations(name.split("+"))
]


def test_the_eight_problems_are_named_once_each_and_read_back():
    assert len(PROBLEMS) == len(set(PROBLEMS)) == 2 ** len(FEATURES)
    assert PROBLEMS[0] == PLAIN and set(PROBLEMS[1 : 1 + len(FEATURES)]) == set(FEATURES)
    for name in PROBLEMS:
        assert Features.parse(name).name == name
    # the control: what names no problem is no problem
    assert Features.parse("gqa+gqa") is None and Features.parse("sinusoid") is None


@pytest.mark.parametrize(("typed", "name"), ORDERS)
def test_any_order_names_and_draws_the_same_problem(typed, name):
    assert Features.parse(typed).name == name
    assert default_shape(typed) == default_shape(name)
    assert shape(typed, "none", None, None) == (name, *default_shape(name))
    h, d = default_shape(typed)
    drawn = make_exercise(ExerciseOptions(seed=1, variant=typed, heads=h, d_model=d))
    same = make_exercise(ExerciseOptions(seed=1, variant=name, heads=h, d_model=d))
    assert to_json(drawn.problem) == to_json(same.problem)


def test_the_shape_of_a_combination_is_its_first_feature_s_in_their_order():
    assert default_shape("rope") == (1, 4) and default_shape("gqa") == (4, 8)  # the presets
    assert default_shape("rope+gqa") == default_shape("gqa") != default_shape("rope")
    assert default_shape("rope+window") == default_shape("window") != default_shape("rope")


def test_the_command_draws_rope_gqa_as_gqa_rope():
    """The issue's case, as typed: it exited 2 before."""

    def drawn(variant: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ATTNREF, "exercise", "--variant", variant, "--seed", "1"],
            capture_output=True,
            text=True,
            timeout=120,
        )

    typed, named = drawn("rope+gqa"), drawn("gqa+rope")
    assert typed.returncode == 0, typed.stderr
    assert typed.stdout == named.stdout and "--variant gqa+rope" in typed.stdout
