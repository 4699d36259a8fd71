"""Issue 59: ALiBi as an exercise, to prove that a feature is one object.

ALiBi is `attention_ref/exercises/feature_alibi.py` and its line in the one table: its option
check, its step ``B`` per head, its stage of the chain, its numbers (the slopes of
`attention_ref.reference.spec.alibi_slopes`, the reference's), its mistakes and its words in
both languages. The broad tests draw it with every other feature (`PROBLEMS`, 16 problems),
against PyTorch's kernel and the reference; these are its own.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.exercise import ExerciseOptions, OptionError, make_exercise
from attention_ref.exercises.feature_alibi import ALIBI_KINDS, alibi_bias
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.reference import windows
from attention_ref.render import render
from tests.exercises.test_no_torch import attnref


def test_its_bias_is_the_references_for_every_head_count():
    for h in range(1, 9):
        for n in range(1, 6):
            want = windows.alibi_bias(windows.alibi_slopes(h), n).numpy()
            assert np.array_equal(alibi_bias(n, h), want), (h, n)
    # the control: three heads take the paper's rule (1/16, 1/256, then 1/4), not 2^(-8i/3)
    naive = [2.0 ** (-8.0 * i / 3) for i in (1, 2, 3)]
    assert not np.allclose(-alibi_bias(2, 3)[:, 1, 0], naive)


@pytest.mark.parametrize(("lang", "slope"), [("en", "m_1 = 0.0625"), ("pt", "m_1 = 0,0625")])
def test_the_statement_gives_the_slopes_and_asks_b_before_the_mask(lang, slope):
    ex = make_exercise(ExerciseOptions(seed=3, variant="alibi", lang=lang))
    text = render(ex.statement, "markdown", 3)
    assert slope in text and "m_2 = " in text
    assert text.index("B⁽ⁱ⁾ (3×3)") < text.index("S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + B⁽ⁱ⁾ + M")
    assert all("B" in head for head in ex.answer["heads"])
    assert ex.key.data["alibi"] == {"slopes": [0.0625, 0.00390625]}


def test_without_the_causal_mask_it_is_refused_in_one_line(tmp_path):
    with pytest.raises(OptionError, match="leave out --no-causal"):
        ExerciseOptions(variant="alibi", causal=False)
    code, out = attnref("exercise", "--variant", "alibi", "--no-causal", cwd=tmp_path)
    assert code == 2 and "Traceback" not in out
    assert "--variant alibi adds its biases to the causal mask" in out


def check(prob: Problem, steps: dict, keys: tuple[str, ...]):
    text = answer_text(answer_from_steps(steps, prob.naming, 3, keys=keys), 3)
    return check_document(read_answer_text(text))


@pytest.mark.parametrize("variant", ["alibi", "gqa+alibi", "window+rope+alibi"])
def test_each_of_its_mistakes_is_named_and_the_right_answer_is_right(variant):
    """On every problem with ALiBi where a mistake exists: the answer B … output with the
    mistake is wrong and named as it; the control, the right answer, is right."""
    kw = {"heads": 4, "d_model": 8} if "gqa" in variant else {}
    named = set()
    for seed in range(4):
        prob = Problem.of_exercise(ExerciseOptions(seed=seed, variant=variant, tokens=4, **kw))
        d = prob.data()
        keys = ("B", "S_masked", "A", "output")
        assert check(prob, computed_steps(d), keys).all_right
        for kind in ALIBI_KINDS:
            for m in kind.instances(d, kind):
                report = check(prob, computed_steps(d, [m]), keys)
                assert not report.all_right and (m.name,) in report.diagnosis_names, (
                    seed,
                    m.name,
                    report_lines(report),
                )
                named.add(m.name)
    assert named == {k.name for k in ALIBI_KINDS}
