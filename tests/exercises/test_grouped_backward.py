"""One backward chain for every g, with or without RoPE: the gradients of grouped-query
attention (of a window, of rotary positions) graded like the homework's (issue 41). The
chain's points are `attention_backward`'s numbers; a K/V head's gradient is its group's sum
(``"grads": {"kv_heads": [{"K", "V", "W_K", "W_V"}]}``), a query head's ``K``, ``V``, ``W_K``,
``W_V`` what came through it."""

from __future__ import annotations

import json

import pytest
import torch

from attention_ref import reference as ref
from attention_ref.exercises import chain
from attention_ref.exercises.answer import answer_from_steps, answer_text, read_answer_text
from attention_ref.exercises.catalogue import mistakes_for
from attention_ref.exercises.draw import Problem
from attention_ref.exercises.exercise import make_exercise
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.render import render


def computed_steps(*args: object, **kw: object) -> dict:
    """`attention_ref.exercises.chain.computed_steps` (numpy) as torch tensors, for the torch
    arithmetic of these tests."""
    return {k: torch.tensor(v) for k, v in chain.computed_steps(*args, **kw).items()}  # type: ignore[arg-type]


PROBLEMS = [
    ExerciseOptions(seed=2, variant="gqa", heads=4, d_model=8, backward=True),
    ExerciseOptions(seed=5, variant="gqa", heads=2, d_model=4, backward=True),  # MQA
    ExerciseOptions(seed=4, variant="gqa+window", heads=4, d_model=8, tokens=4, backward=True),
    ExerciseOptions(seed=3, variant="window", tokens=4, backward=True),
    # RoPE: the scores read Q_rot and K_rot, and the gradients turn back through the rotation
    ExerciseOptions(seed=1, variant="rope", heads=1, backward=True),
    ExerciseOptions(seed=6, variant="gqa+rope", heads=4, d_model=8, tokens=4, backward=True),
    ExerciseOptions(seed=2, variant="gqa+window+rope", heads=4, d_model=8, tokens=4, backward=True),
    # ALiBi: the bias is a constant, ∂S = ∂S̃, on its own and beside every other feature
    ExerciseOptions(seed=3, variant="alibi", tokens=4, backward=True),
    ExerciseOptions(
        seed=1, variant="gqa+window+rope+alibi", heads=4, d_model=8, tokens=4, backward=True
    ),
]
ASKED = (
    "A",
    "H",
    "output",
    "grad.W_O",
    "grad.A",
    "grad.S_masked",
    "grad.W_Q",
    "grad.X",
    "grad.kv.K",
    "grad.kv.V",
    "grad.kv.W_K",
    "grad.kv.W_V",
    "grad.W_K",
)


def text_of(prob: Problem, steps: dict) -> str:
    doc = answer_from_steps(steps, prob.naming, 3, keys=ASKED)
    return answer_text(doc, 3).replace("-Infinity", '"-inf"')


@pytest.mark.parametrize("opt", PROBLEMS, ids=lambda o: f"{o.variant}-h{o.heads}")
def test_the_chains_gradients_are_the_references(opt):
    prob = Problem.of_exercise(opt)
    steps = computed_steps(prob.data(), (), prob.chain.stages)
    gr = ref.attention_backward(prob.trace.reference())
    assert torch.allclose(steps[("grad.X", None)], gr.X, atol=1e-10)
    for j in range(prob.trace.g):
        for name in ("W_K", "W_V", "K", "V"):
            assert torch.allclose(steps[(f"grad.kv.{name}", j)], getattr(gr, name)[j], atol=1e-10)
    for i in range(prob.trace.h):
        assert torch.allclose(steps[("grad.W_Q", i)], gr.W_Q[i], atol=1e-10)
        assert torch.allclose(steps[("grad.A", i)], gr.A[i], atol=1e-10)


@pytest.mark.parametrize(
    "opt", [*PROBLEMS[:4:2], PROBLEMS[5]], ids=lambda o: f"{o.variant}-h{o.heads}"
)
def test_right_gradients_are_right_and_each_mistake_is_named(opt):
    prob = Problem.of_exercise(opt)
    d = prob.data()
    right = check_document(
        read_answer_text(text_of(prob, computed_steps(d, (), prob.chain.stages)))
    )
    assert right.all_right and right.steps_given > 10, report_lines(right)
    named = 0
    for m in mistakes_for(d, prob.chain.stages, 3, prob.chain.catalogue):
        steps = computed_steps(d, [m], prob.chain.stages)
        if m.rank or any(
            torch.isnan(v).any() or (k[0].startswith("grad.") and torch.isinf(v).any())
            for k, v in steps.items()
        ):
            continue
        report = check_document(read_answer_text(text_of(prob, steps)))
        if report.all_right:  # a step it writes another way, not asked here (gave_Qt)
            continue
        names = {n for d_ in report.diagnosis_names for n in d_}
        assert m.name in names, (m.name, report_lines(report))
        named += 1
    assert named >= 8, named


def test_the_gqa_backward_exercise_asks_and_keys_the_gradients_in_both_languages():
    for lang, title in (("en", "backward"), ("pt", "Questão 5: gradientes")):
        opt = ExerciseOptions(seed=2, variant="gqa", heads=4, d_model=8, backward=True, lang=lang)
        ex = make_exercise(opt)
        assert ex.answer["exercise"]["backward"] is True  # a feature's exercise says so
        assert set(ex.answer["grads"]) == {"W_O", "X", "heads"}
        statement = render(ex.statement, "markdown", 3)
        key = render(ex.key, "markdown", 3)
        assert "∂L/∂W_Q⁽¹⁾" in statement and title.lower() in key.lower()
        assert ex.key.data["grads"]["kv_heads"][0]["W_K"], lang
    # the homework's exercise names no backward in its JSON (its stored form, as before)
    assert "backward" not in ExerciseOptions(seed=2, backward=True).to_json()


def test_gradients_to_a_forward_exercise_of_a_feature_are_refused_in_one_line():
    """--variant gqa without --backward asks no gradients (the control of the above)."""
    prob = Problem.of_exercise(ExerciseOptions(seed=2, variant="gqa", heads=4, d_model=8))
    doc = prob.naming | {"grads": {"X": [[1.0]]}}
    with pytest.raises(ValueError, match="asks no gradients"):
        check_document(read_answer_text(json.dumps(doc)))


@pytest.mark.parametrize("variant", ["rope", "gqa+rope"])
def test_a_gradient_not_turned_back_through_reads_is_named_in_both_languages(variant):
    """∂Q = ∂Q_rot (the rotation not undone): every gradient after it is off, and the report
    names the mistake; the right answer beside it is right (the control)."""
    shape = {"heads": 1} if variant == "rope" else {"heads": 4, "d_model": 8}
    for lang in ("en", "pt"):
        opt = ExerciseOptions(seed=3, variant=variant, tokens=3, backward=True, lang=lang, **shape)
        prob = Problem.of_exercise(opt)
        d = prob.data()
        right = computed_steps(d, (), prob.chain.stages)
        assert check_document(read_answer_text(text_of(prob, right))).all_right
        (m,) = [
            m
            for m in mistakes_for(d, prob.chain.stages, 3, prob.chain.catalogue)
            if m.name == "rope_grad_not_turned_back"
        ]
        report = check_document(
            read_answer_text(text_of(prob, computed_steps(d, [m], prob.chain.stages)))
        )
        assert not report.all_right
        assert ("rope_grad_not_turned_back",) in report.diagnosis_names, report_lines(report)
        said = "not turned back through RoPE" if lang == "en" else "não voltou pela rotação"
        assert said in "\n".join(report_lines(report))


def test_the_rope_backward_exercise_keys_the_turn_back():
    """The key says ∂Q comes from ∂Q_rot turned back (not ∂S̃ K / √d_k, which is ∂Q_rot), in
    each language; the homework's key keeps its formula."""
    for lang, words in (("en", "turned back through RoPE"), ("pt", "girado de volta pelo RoPE")):
        ex = make_exercise(ExerciseOptions(seed=1, variant="rope", backward=True, lang=lang))
        key = render(ex.key, "markdown", 3)
        assert words in key and "∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k" not in key
        assert "RoPE" in render(ex.statement, "markdown", 3).split("∂L/∂X")[-1]
    homework = render(make_exercise(ExerciseOptions(seed=1, backward=True)).key, "markdown", 3)
    assert "∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k" in homework and "RoPE" not in homework
