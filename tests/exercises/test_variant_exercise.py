"""``attnref exercise --variant gqa|window|rope``'s library: the problems, their options, their
statement, key and template, and the homework's exercise left as it was.

The key's numbers are checked against PyTorch's own kernel
(``scaled_dot_product_attention`` with ``enable_gqa`` or a boolean ``attn_mask``), fed from
the problem's JSON, so a wrong wiring of the problem (the groups, the window, the rotation)
cannot pass because the reference and the key share it.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref.exercises.answer import Problem
from attention_ref.exercises.draw import draw
from attention_ref.exercises.draw import trace_of as problem_trace
from attention_ref.exercises.exercise import (
    ExerciseOptions,
    draw_problem,
    make_exercise,
    options_from_json,
)
from attention_ref.exercises.feature_table import layout as layout_of
from attention_ref.exercises.features import PROBLEMS, Features, default_shape
from attention_ref.inputs.attention_input import InputError
from attention_ref.reference import rope as ref_rope
from attention_ref.reference import windows
from attention_ref.render import render

#: the keys of the homework's "exercise" object before the variants (unchanged for mha)
MHA_KEYS = ["seed", "tokens", "d_model", "heads", "causal", "lang", "decimals"]


@st.composite
def variant_options(draw) -> ExerciseOptions:
    """Every problem (the presets and every combination, issue 59) on the shapes it takes."""
    variant = draw(st.sampled_from(PROBLEMS))
    f = Features.parse(variant)
    assert f is not None
    tokens = draw(st.integers(2, 8))
    shapes = [
        (d_model, heads)
        for d_model in range(1, 9)
        for heads in range(2 if f.grouped else 1, d_model + 1)
        if d_model % heads == 0 and not (f.rotary and (d_model // heads) % 2)
    ]
    d_model, heads = draw(st.sampled_from(shapes))
    extra: dict = {}
    if f.grouped:
        extra["kv_heads"] = draw(st.sampled_from([g for g in range(1, heads) if heads % g == 0]))
    if f.windowed:
        extra["window"] = draw(st.integers(1, tokens - 1))
    return ExerciseOptions(
        seed=draw(st.integers(0, 10**9)),
        tokens=tokens,
        d_model=d_model,
        heads=heads,
        causal=f.windowed or "alibi" in f or draw(st.booleans()),  # the causal features
        lang=draw(st.sampled_from(["en", "pt"])),
        variant=variant,
        **extra,
    )


def torch_output(problem: dict, opt: ExerciseOptions) -> torch.Tensor:
    """The problem's output by PyTorch's kernel, from its JSON alone."""
    f64 = lambda m: torch.tensor(m, dtype=torch.float64)  # noqa: E731
    X = f64(problem["X"])
    kv = problem.get("kv_heads", problem["heads"])
    Q = torch.stack([X @ f64(h["W_Q"]) for h in problem["heads"]])  # (h, n, d_k)
    K = torch.stack([X @ f64(h["W_K"]) for h in kv])  # (g, n, d_k)
    V = torch.stack([X @ f64(h["W_V"]) for h in kv])
    n = X.shape[0]
    if opt.features.rotary:
        pos = torch.tensor(problem["rope"]["positions"], dtype=torch.float64)
        assert pos.tolist() == list(range(n)) and problem["rope"]["base"] == 10000
        Q, K = ref_rope.rope_by_complex(Q, pos), ref_rope.rope_by_complex(K, pos)
    mask = None
    if opt.features.windowed:
        t, u = torch.arange(n).unsqueeze(1), torch.arange(n).unsqueeze(0)
        mask = (t - u >= 0) & (t - u < problem["window"])
    if "alibi" in opt.features:  # a float mask: the slopes' biases, −∞ where not allowed
        allowed = mask if mask is not None else torch.ones(n, n, dtype=torch.bool).tril()
        slopes = torch.tensor(problem["alibi"]["slopes"], dtype=torch.float64)
        bias = windows.alibi_bias(slopes, n)
        mask = bias.masked_fill(~allowed, float("-inf")).unsqueeze(0)
    H = F.scaled_dot_product_attention(
        Q.unsqueeze(0),
        K.unsqueeze(0),
        V.unsqueeze(0),
        attn_mask=mask,
        is_causal=opt.causal and mask is None,
        enable_gqa=True,
    )[0]
    concat = torch.cat(list(H), -1)
    return concat @ f64(problem["W_O"]) if "W_O" in problem else concat


@settings(max_examples=60, deadline=None)
@given(variant_options())
def test_the_key_is_pytorchs_kernel_on_the_problem(opt: ExerciseOptions):
    ex = make_exercise(opt)
    want = torch_output(ex.problem, opt)
    got = torch.tensor(ex.key.data["output"], dtype=torch.float64)
    assert torch.allclose(got, want, atol=1e-10), opt
    # the draw is the homework's: X and every weight 0/1, no zero column, Q, K, V integers
    tr = problem_trace(opt, ex.problem)
    assert set(torch.tensor(ex.problem["X"]).unique().tolist()) <= {0.0, 1.0}
    for t in (tr.reference().Q, tr.reference().K, tr.reference().V):
        assert torch.equal(t, t.round()) and (t.abs().sum(dim=-2) > 0).all()
    assert tr.h == opt.heads and tr.g == (opt.kv_heads or opt.heads)


@settings(max_examples=30, deadline=None)
@given(variant_options().filter(lambda o: not o.features.grouped))
def test_window_and_rope_ask_the_homeworks_numbers_of_the_same_seed(opt: ExerciseOptions):
    """The same stream of numbers: where neither problem was drawn again (so that it hides
    no mistake of its own catalogue), the very same numbers."""
    homework = ExerciseOptions(
        seed=opt.seed, tokens=opt.tokens, d_model=opt.d_model, heads=opt.heads, lang=opt.lang
    )
    if draw(homework).draws > 1 or draw(opt).draws > 1:
        return
    mha, mine = draw_problem(homework), draw_problem(opt)
    for key in ("tokens", "X", "heads"):
        assert mine[key] == mha[key]
    assert mine.get("W_O") == mha.get("W_O")


def test_the_kv_heads_of_gqa_are_drawn_after_the_query_heads():
    opt = ExerciseOptions(seed=4, variant="gqa", heads=4)
    p = draw_problem(opt)
    assert [list(h) for h in p["heads"]] == [["W_Q"]] * 4
    assert [sorted(h) for h in p["kv_heads"]] == [["W_K", "W_V"]] * 2
    # negative control: another seed draws other weights
    other = draw_problem(ExerciseOptions(seed=5, variant="gqa", heads=4))
    assert other["kv_heads"] != p["kv_heads"]


@pytest.mark.parametrize(
    ("kwargs", "filled"),
    [
        ({"variant": "gqa", "heads": 2}, {"kv_heads": 1}),  # MQA
        ({"variant": "gqa", "heads": 4}, {"kv_heads": 2}),
        ({"variant": "gqa", "d_model": 6, "heads": 3}, {"kv_heads": 1}),
        ({"variant": "gqa", "d_model": 8, "heads": 8}, {"kv_heads": 4}),
        ({"variant": "window"}, {"window": 2}),
        ({"variant": "window", "tokens": 2}, {"window": 1}),
        ({"variant": "window", "tokens": 6, "window": 4}, {"window": 4}),
    ],
)
def test_defaults_are_filled_in_so_equal_exercises_are_equal(kwargs, filled):
    opt = ExerciseOptions(**kwargs)
    assert {k: getattr(opt, k) for k in filled} == filled
    explicit = ExerciseOptions(**(kwargs | filled))
    assert opt == explicit and opt.to_json() == explicit.to_json()
    assert opt.to_json()[next(iter(filled))] == next(iter(filled.values()))


def test_the_homeworks_options_json_is_unchanged():
    """No "variant" key for mha: the classroom compares these objects as they are."""
    for opt in (
        ExerciseOptions(),
        ExerciseOptions(seed=3, lang="pt", decimals=2),
        ExerciseOptions(variant="mha", backward=True),
    ):
        assert list(opt.to_json()) == MHA_KEYS and opt.flags == ""
        assert options_from_json(opt.to_json()) == ExerciseOptions(
            **{k: getattr(opt, k) for k in MHA_KEYS}
        )
    explicit = options_from_json({"seed": 1, "variant": "mha"})
    assert explicit.to_json() == ExerciseOptions(seed=1).to_json()
    # negative control: a variant's object says so, and round-trips
    for opt in (
        ExerciseOptions(variant="gqa", heads=4),
        ExerciseOptions(variant="window"),
        ExerciseOptions(variant="rope"),
    ):
        doc = opt.to_json()
        assert list(doc)[: len(MHA_KEYS)] == MHA_KEYS and doc["variant"] == opt.variant
        assert options_from_json(json.loads(json.dumps(doc))) == opt
    assert ExerciseOptions(variant="gqa", heads=4).to_json()["kv_heads"] == 2
    assert ExerciseOptions(variant="window").flags == " --variant window --window 2"


def test_features_combine_and_are_named_once():
    """--kv-heads alone asks gqa, --window alone window; features in any order are one name,
    stored in the answer's "exercise" and read back to the same exercise."""
    assert ExerciseOptions(kv_heads=1).variant == "gqa"
    assert ExerciseOptions(window=1).variant == "window"
    both = ExerciseOptions(variant="rope+gqa", heads=4, d_model=8, window=2)
    assert both.variant == "gqa+window+rope" and both.kv_heads == 2 and both.window == 2
    assert both.features.grouped and both.features.windowed and both.features.rotary
    assert both.flags == " --variant gqa+window+rope --kv-heads 2 --window 2"
    assert options_from_json(json.loads(json.dumps(both.to_json()))) == both
    # the presets' stored forms are what they were (negative control: a combination's is not)
    assert ExerciseOptions(variant="gqa", heads=4).to_json()["variant"] == "gqa"
    assert "variant" not in ExerciseOptions().to_json()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"variant": "flash"}, "--variant must be one of mha, gqa, window, rope, alibi"),
        ({"kv_heads": 2}, "g = h is --variant mha"),  # --kv-heads alone asks gqa
        ({"variant": "rope+rope"}, "or features joined by + (gqa+rope), got 'rope+rope'"),
        ({"variant": "gqa+mha"}, "--variant must be one of mha, gqa, window, rope, alibi"),
        ({"variant": "rope", "window": 3}, "--window must be between 1 and n - 1 = 2"),
        ({"variant": "gqa+window", "heads": 4, "causal": False}, "causal sliding window"),
        ({"variant": "gqa+rope", "heads": 4}, "d_k = d_model / h must be even, got d_k = 4 / 4"),
        ({"variant": "gqa", "heads": 1, "d_model": 4}, "--variant gqa needs h >= 2"),
        ({"variant": "gqa", "heads": 4, "kv_heads": 3}, "--kv-heads must divide --heads"),
        ({"variant": "gqa", "heads": 4, "kv_heads": 4}, "g = h is --variant mha"),
        ({"variant": "gqa", "heads": 2, "kv_heads": 0}, "--kv-heads must divide"),
        ({"variant": "window", "window": 3}, "--window must be between 1 and n - 1 = 2"),
        ({"variant": "window", "window": 0}, "--window must be between 1"),
        ({"variant": "window", "tokens": 1}, "--variant window needs at least 2 tokens"),
        ({"variant": "window", "causal": False}, "causal sliding window: leave out"),
        ({"variant": "rope", "heads": 4}, "d_k = d_model / h must be even, got d_k = 4 / 4 = 1"),
        ({"variant": "rope", "heads": 4, "backward": True}, "d_k = d_model / h must be even"),
    ],
)
def test_bad_variant_options(kwargs, message):
    with pytest.raises(ValueError) as e:
        ExerciseOptions(**kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"seed": 1, "variant": 2}, '"exercise"."variant" must be one of'),
        ({"seed": 1, "variant": "gqa", "kv_heads": "2"}, '"exercise"."kv_heads" must be an '),
        ({"seed": 1, "variant": "window", "window": True}, '"exercise"."window" must be an'),
        ({"seed": 1, "variant": "gqa", "kv_heads": 3, "heads": 4}, '"exercise": --kv-heads'),
        ({"seed": 1, "variant": "rope", "flavour": 1}, 'unknown key "flavour"'),
    ],
)
def test_bad_variant_objects_in_an_answer(obj, message):
    with pytest.raises(InputError) as e:
        options_from_json(obj)
    assert message in str(e.value)


@pytest.mark.parametrize("variant", PROBLEMS[1:])  # every problem but the homework's
def test_the_template_asks_the_layouts_steps_in_explains_names(variant):
    grouped = variant.startswith("gqa")
    opt = ExerciseOptions(
        seed=2, variant=variant, heads=4 if grouped else 2, d_model=8 if grouped else 4
    )
    ex = make_exercise(opt)
    layout = layout_of(opt.features)
    assert ex.answer["exercise"] == opt.to_json()
    assert ex.answer["heads"] == [dict.fromkeys(layout.template_heads)] * opt.heads
    assert ex.answer.get("kv_heads", []) == [dict.fromkeys(layout.template_kv_heads)] * (
        (opt.kv_heads or opt.heads) if layout.template_kv_heads else 0
    )
    assert ex.answer["concat"] is None and ex.answer["output"] is None
    # every name asked is a name of the key's JSON (explain's), where its number is
    for name in layout.template_heads:
        assert name in ex.key.data["heads"][0], name
    for name in layout.template_kv_heads:
        assert name in ex.key.data["kv_heads"][0], name
    statement = render(ex.statement, "markdown", 3)
    for name in (*layout.template_heads, *layout.template_kv_heads):
        assert f'"{name}"' in statement
    assert '"exercise": ' + json.dumps(opt.to_json()) in statement


def test_gqa_statement_states_the_grouping_and_mqa_is_named():
    ex = make_exercise(ExerciseOptions(seed=1, variant="gqa", heads=4))
    text = render(ex.statement, "markdown", 3)
    assert text.startswith("# Exercise 1: grouped-query attention by hand")
    assert "h = 4 query heads share g = 2 K/V heads" in text
    assert "query heads 1 … r read K/V head 1, query heads r + 1 … 2r read K/V head 2" in text
    assert "--variant gqa --kv-heads 2" in text
    mqa = render(make_exercise(ExerciseOptions(seed=1, variant="gqa")).statement, "markdown", 3)
    assert "multi-query attention by hand" in mqa and "g = 1 K/V head (one K/V head" in mqa


def test_the_window_statement_gives_w_and_not_the_mask():
    ex = make_exercise(ExerciseOptions(seed=1, variant="window", tokens=4))
    text = render(ex.statement, "markdown", 3)
    assert "Sliding window of w = 2 keys: token t sees itself and the 1 token before it" in text
    assert "Write M_win (4×4)" in text
    assert "-∞" not in text  # the student writes the mask
    key = render(ex.key, "markdown", 3)
    assert "M_win" in key and "-∞" in key


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_rope_statement_gives_the_angles_cosines_and_sines(lang):
    opt = ExerciseOptions(seed=6, variant="rope", heads=1, tokens=4, lang=lang)
    ex = make_exercise(opt)
    tables = {
        m.text: m.value for s in ex.statement.sections for m in s.items if getattr(m, "text", None)
    }
    sin = "sen mθ_p" if lang == "pt" else "sin mθ_p"
    theta = torch.tensor([1.0, 0.01], dtype=torch.float64)  # 10000^(-2p/4)
    angles = torch.arange(4, dtype=torch.float64).unsqueeze(1) * theta
    assert torch.allclose(torch.tensor(tables["θ_p"], dtype=torch.float64), theta.unsqueeze(0))
    assert torch.allclose(torch.tensor(tables["m θ_p"], dtype=torch.float64), angles)
    assert torch.allclose(torch.tensor(tables["cos mθ_p"], dtype=torch.float64), torch.cos(angles))
    assert torch.allclose(torch.tensor(tables[sin], dtype=torch.float64), torch.sin(angles))
    text = render(ex.statement, "markdown", 3)
    cos1 = f"{math.cos(1):.3f}".replace(".", "," if lang == "pt" else ".")
    assert cos1 in text  # printed to the decimals asked
    words = (
        "x'_2p = x_2p cos mθ_p − x_2p+1 sin mθ_p"
        if lang == "en"
        else "x'_2p = x_2p cos mθ_p − x_2p+1 sen mθ_p"
    )
    assert words in text


@pytest.mark.parametrize("variant", PROBLEMS[1:])  # every feature and every combination
def test_portuguese_statement_and_key(variant):
    heads, d_model = default_shape(variant)
    opt = ExerciseOptions(seed=3, variant=variant, lang="pt", heads=heads, d_model=d_model)
    ex = make_exercise(opt)
    statement, key = render(ex.statement, "markdown", 3), render(ex.key, "markdown", 3)
    assert statement.startswith("# Exercício 3:") and key.startswith("# Gabarito do exercício 3")
    for text in (statement, key):
        assert "Question" not in text and "Source" not in text
    en = make_exercise(ExerciseOptions(**{**opt.__dict__, "lang": "en"}))
    # the same numbers in both languages (only the token names differ)
    assert ex.key.data["output"] == en.key.data["output"]
    out = ex.key.data["output"][-1][0]
    assert f"{out:.3f}".replace(".", ",") in key  # decimal commas
    # the key answers under the statement's titles
    titles = [s.title for s in ex.statement.sections][:-1]
    assert [s.title for s in ex.key.sections] == titles


#: every preset and the two combinations, with the backward where it is asked (not with RoPE)
ONE_WRITER = [
    ExerciseOptions(seed=3, backward=True),
    ExerciseOptions(seed=1, d_model=1, heads=1, causal=False, backward=True),
    ExerciseOptions(seed=3, variant="gqa", heads=4, d_model=8, backward=True),
    ExerciseOptions(seed=3, variant="window", backward=True),
    ExerciseOptions(seed=3, variant="rope", heads=1),
    ExerciseOptions(seed=2, variant="gqa+rope", heads=4, d_model=8),
    ExerciseOptions(seed=2, variant="gqa+window", heads=4, d_model=8, backward=True),
]


@pytest.mark.parametrize("opt", ONE_WRITER, ids=lambda o: o.variant + "-backward" * o.backward)
def test_the_key_has_one_writer_in_both_languages(opt):
    """The English and the Portuguese key answer the statement's questions under its titles,
    with the same matrices in the same order, the same numbers and the same JSON: only the
    words differ."""
    en = make_exercise(opt)
    pt = make_exercise(ExerciseOptions(**{**opt.__dict__, "lang": "pt"}))
    for ex in (en, pt):
        titles = [s.title for s in ex.statement.sections][:-1]  # all but "How to answer"
        assert [s.title for s in ex.key.sections] == titles
        answers = ex.key.sections[1 + opt.features.rotary :]  # after the data (and RoPE's table)
        assert all(s.text and s.items for s in answers)
    mats = [[m for s in ex.key.sections for m in s.items] for ex in (en, pt)]
    assert len(mats[0]) == len(mats[1]) > 0
    words = {"{jan}": "{win}", "{sen}": "{sin}"}  # M_win and sin are M_jan and sen in PT

    def english(latex: str) -> str:
        for pt_word, en_word in words.items():
            latex = latex.replace(pt_word, en_word)
        return latex

    for a, b in zip(*mats, strict=True):
        assert a.symbol == english(b.symbol) and a.formula == english(b.formula), a.symbol
        assert a.value == b.value, a.symbol
    assert {k: v for k, v in en.key.data.items() if k != "tokens"} == {
        k: v for k, v in pt.key.data.items() if k != "tokens"
    }
    en_md, pt_md = render(en.key, "markdown", 3), render(pt.key, "markdown", 3)
    assert "Question 1" in en_md and "Questão 1" in pt_md and "Question" not in pt_md
    if opt.backward:
        assert "∂W_Q^(1)" in en_md and "∂W_Q^(1)" in pt_md and "grads" in en.key.data
    if opt.features.rotary:
        assert en.key.data["rope"] == {"base": 10000.0, "positions": [0.0, 1.0, 2.0]}
        assert "Q_rot^(1)" in en_md and "Q_rot^(1)" in pt_md


def test_the_homeworks_problem_is_the_one_check_grades():
    for opt in (ExerciseOptions(seed=2, variant="gqa", heads=4), ExerciseOptions(seed=2)):
        prob = Problem.of_exercise(opt)
        assert prob.naming == {"exercise": opt.to_json()}
        assert prob.chain.name == opt.variant
        assert prob.source.startswith("attnref exercise --seed 2 --tokens 3 --d-model 4 --heads ")
    assert Problem.of_exercise(ExerciseOptions(seed=2, variant="gqa", heads=4)).source.endswith(
        "--causal --variant gqa --kv-heads 2"
    )
