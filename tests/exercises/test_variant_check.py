"""``attnref check`` on the variants' exercises: right answers right, wrong answers never right,
each variant's mistake diagnosed as itself on several seeds and shapes.

Right answers are written two ways: the key rounded as asked, and a student's chain computed
with torch alone, every step rounded before the next (RoPE from the statement's cosines and
sines rounded to 3 places). Wrong answers are built with the catalogue's own reproduction
and, for the issue's mistakes (the K/V groups' order, a window off by one, RoPE's pair, sign,
V), by hand from `attention_ref.reference` and torch, so the diagnosis is not only checked
against itself.
"""

from __future__ import annotations

import json
import math

import pytest
import torch

from attention_ref.exercises import chain
from attention_ref.exercises.answer import (
    Problem,
    answer_from_steps,
    answer_text,
    parse_answer,
    read_answer_text,
)
from attention_ref.exercises.catalogue import (
    CATALOGUE,
    Mistake,
    mistakes_for,
)
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.feature_table import TABLE
from attention_ref.exercises.features import Features
from attention_ref.exercises.grader import check_answer, check_document, report_lines
from attention_ref.inputs.attention_input import InputError
from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.reference import windows
from tests.exercises.shown import shown_steps


def computed_steps(*args: object, **kw: object) -> dict:
    """`attention_ref.exercises.chain.computed_steps` (numpy) as torch tensors, for the torch
    arithmetic of these tests."""
    return {k: torch.tensor(v) for k, v in chain.computed_steps(*args, **kw).items()}  # type: ignore[arg-type]


#: every step an answer can hold (the K/V heads' under "kv_heads")
ALL = (
    "Q",
    "Q_rot",
    "K",
    "V",
    "kv.K",
    "kv.V",
    "kv.K_rot",
    "scores",
    "S",
    "B",
    "S_masked",
    "A",
    "H",
    "concat",
    "output",
)
#: several seeds and shapes per variant: GQA (and MQA) with d_k = 1 and 2, 6 query heads in 2
#: groups, no mask; windows of 1 to 3 keys; RoPE with one pair (d_k = 2) and two (d_k = 4)
PROBLEMS = {
    "gqa": (
        ExerciseOptions(seed=3, variant="gqa", heads=4),
        ExerciseOptions(seed=8, variant="gqa", d_model=8, heads=4, tokens=3),
        ExerciseOptions(seed=1, variant="gqa", d_model=6, heads=6, kv_heads=2, tokens=3),
        ExerciseOptions(seed=2, variant="gqa", heads=4, causal=False, tokens=4),
        ExerciseOptions(seed=5, variant="gqa", heads=2),  # MQA
    ),
    "window": (
        ExerciseOptions(seed=3, variant="window", tokens=4),
        ExerciseOptions(seed=7, variant="window", tokens=5, window=3),
        ExerciseOptions(seed=2, variant="window", tokens=4, d_model=3, heads=1),
        ExerciseOptions(seed=4, variant="window", tokens=3),
    ),
    "rope": (
        ExerciseOptions(seed=3, variant="rope", heads=1),
        ExerciseOptions(seed=5, variant="rope"),
        ExerciseOptions(seed=9, variant="rope", d_model=8, heads=2, tokens=4),
        ExerciseOptions(seed=1, variant="rope", heads=1, causal=False),
    ),
    # two combinations: every feature's mistakes on one problem, beside the other's
    "gqa+rope": (
        ExerciseOptions(seed=3, variant="gqa+rope", heads=4, d_model=8),
        ExerciseOptions(seed=6, variant="gqa+rope", heads=2, d_model=8, tokens=4),  # MQA, d_k = 4
        ExerciseOptions(seed=2, variant="gqa+rope", heads=4, d_model=8, causal=False),
    ),
    "gqa+window": (
        ExerciseOptions(seed=3, variant="gqa+window", heads=4, d_model=8, tokens=4),
        ExerciseOptions(seed=7, variant="gqa+window", heads=4, tokens=5, window=3),
    ),
    # ALiBi: two heads (slopes 1/16, 1/256), four (1/4 … 1/256), and beside a window
    "alibi": (
        ExerciseOptions(seed=3, variant="alibi"),
        ExerciseOptions(seed=5, variant="alibi", d_model=4, heads=4, tokens=4),
        ExerciseOptions(seed=2, variant="window+alibi", tokens=4),
    ),
}
#: the features' mistakes of the forward (a mistake of the gradients alone, RoPE's rotation
#: not turned back, is tried in tests/exercises/test_grouped_backward.py)
VARIANT_MISTAKES = {k.name for f in TABLE.values() for k in f.kinds if not k.backward_only}


def problem(opt: ExerciseOptions) -> Problem:
    return Problem.of_exercise(opt)


def mistakes(opt: ExerciseOptions) -> list[Mistake]:
    prob = problem(opt)
    return mistakes_for(prob.data(), None, 3, prob.chain.catalogue)


def answer(prob: Problem, steps: dict, keys=ALL, decimals: int = 3, catalogue=None):
    """The steps written to ``decimals`` places and checked, through the answer's JSON text
    (``catalogue=()``: graded only, no diagnosis)."""
    text = answer_text(answer_from_steps(steps, prob.naming, decimals, keys=keys), decimals)
    doc = read_answer_text(text)
    return check_document(doc) if catalogue is None else check_answer(parse_answer(doc), catalogue)


def wrong_steps(opt: ExerciseOptions, ms: list[Mistake]) -> dict:
    """The mistakes' steps, leaving out any that cannot be written (NaN: −∞ · 0)."""
    steps = computed_steps(problem(opt).data(), ms)
    return {k: v for k, v in steps.items() if not torch.isnan(v).any()}


def shown(opt: ExerciseOptions, m: Mistake) -> list:
    """The steps an answer holds where the mistake shows at 3 decimals, in order."""
    d = problem(opt).data()
    return shown_steps(d, computed_steps(d, ()), wrong_steps(opt, [m]), ALL)


def cases() -> list[tuple[ExerciseOptions, str, int]]:
    """Each variant's own mistakes on every problem (two instances at most); the homework's
    mistakes on the first problem of each variant."""
    out = []
    for opts in PROBLEMS.values():
        for n, opt in enumerate(opts):
            seen: dict[str, int] = {}
            for m in mistakes(opt):
                if m.rank or (n and m.name not in VARIANT_MISTAKES) or seen.get(m.name, 0) > 1:
                    continue
                out.append((opt, m.name, seen.get(m.name, 0)))
                seen[m.name] = seen.get(m.name, 0) + 1
    return out


def ident(case) -> str:
    opt, name, index = case
    return (
        f"{opt.variant}-{name}{index or ''}-s{opt.seed}n{opt.tokens}d{opt.d_model}"
        f"h{opt.heads}{'' if opt.causal else '-nomask'}"
    )


def mistake(opt: ExerciseOptions, name: str, index: int = 0) -> Mistake:
    return [m for m in mistakes(opt) if m.name == name][index]


def names(report) -> set[str]:
    return {n for d in report.diagnosis_names for n in d}


# --- the catalogue covers the mistakes, where they exist ---------------------------------


def test_every_variant_mistake_shows_on_at_least_two_problems():
    count = {name: 0 for name in VARIANT_MISTAKES}
    for opts in PROBLEMS.values():
        for opt in opts:
            for name in {m.name for m in mistakes(opt)} & VARIANT_MISTAKES:
                count[name] += 1
    assert all(c >= 2 for c in count.values()), count


def test_a_mistake_that_cannot_happen_or_changes_nothing_is_not_offered():
    def offered(opt: ExerciseOptions) -> set[str]:
        return {m.name for m in mistakes(opt)}

    mqa = offered(ExerciseOptions(seed=5, variant="gqa", heads=2))  # one K/V head for all
    assert not {"gqa_interleaved", "gqa_one_kv"} & mqa
    assert {"gqa_interleaved", "gqa_one_kv"} <= offered(PROBLEMS["gqa"][0])  # the control
    # r = 1 … g = 2 of h = 4 but g = h / 2 = 2 K/V heads of 2 heads each: both exist; with
    # h = 6, g = 3, interleaving is its own mistake too
    assert "gqa_interleaved" in offered(
        ExerciseOptions(seed=4, variant="gqa", d_model=6, heads=6, kv_heads=3)
    )
    # a window one key too wide is the causal mask when w + 1 >= n: named window_causal
    narrow = offered(ExerciseOptions(seed=4, variant="window", tokens=3))  # w = 2, n = 3
    assert "window_plus_one" not in narrow and "window_causal" in narrow
    assert "window_plus_one" in offered(PROBLEMS["window"][0])  # n = 4
    assert "window_minus_one" not in offered(
        ExerciseOptions(seed=4, variant="window", tokens=3, window=1)
    )
    one_pair = offered(ExerciseOptions(seed=5, variant="rope"))  # d_k = 2
    assert not {"rope_wrong_pair", "rope_half_pairs"} & one_pair
    assert {"rope_wrong_pair", "rope_half_pairs"} <= offered(PROBLEMS["rope"][0])  # d_k = 4
    # the homework's catalogue has none of them (they are the variants' own entries)
    assert not VARIANT_MISTAKES & {k.name for k in CATALOGUE}


# --- right answers are right ----------------------------------------------------------------------


def r(t: torch.Tensor, p: int = 3) -> torch.Tensor:
    """Rounded to ``p`` places, −∞ kept."""
    return torch.where(torch.isinf(t), t, t.round(decimals=p))


def students_chain(opt: ExerciseOptions, p: int = 3) -> dict:
    """A student's answer by torch alone: every step rounded to ``p`` places before the next;
    RoPE's cosines and sines as the statement prints them (rounded to ``p``)."""
    ex = make_exercise(opt)
    f64 = lambda m: torch.tensor(m, dtype=torch.float64)  # noqa: E731
    pb = ex.problem
    X, kvs = f64(pb["X"]), pb.get("kv_heads", pb["heads"])
    h, g, n = opt.heads, len(kvs), len(pb["X"])
    Q = [X @ f64(hd["W_Q"]) for hd in pb["heads"]]
    K = [X @ f64(hd["W_K"]) for hd in kvs]
    V = [X @ f64(hd["W_V"]) for hd in kvs]
    steps: dict = {}
    steps |= {("Q", i): Q[i] for i in range(h)}
    steps |= {("kv.K", j): K[j] for j in range(g)} | {("kv.V", j): V[j] for j in range(g)}
    if opt.features.rotary:
        d = Q[0].shape[-1]
        theta = torch.tensor([10000.0 ** (-2 * q / d) for q in range(d // 2)], dtype=torch.float64)
        angles = torch.arange(n, dtype=torch.float64).unsqueeze(1) * theta
        cos, sin = r(torch.cos(angles), p), r(torch.sin(angles), p)

        def turn(x):
            a, b = x[:, 0::2], x[:, 1::2]
            return r(torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2), p)

        Q = [turn(q) for q in Q]
        K = [turn(k) for k in K]
        steps |= {("Q_rot", i): Q[i] for i in range(h)}
        steps |= {("kv.K_rot", j): K[j] for j in range(g)}
    M = torch.zeros(n, n, dtype=torch.float64)
    if opt.causal:
        w = opt.window if opt.features.windowed else n
        M = windows.sliding_window_mask(n, w)
    # ALiBi: each head's bias from the slopes the statement gives (the reference's formula)
    B = [torch.zeros(n, n, dtype=torch.float64)] * h
    if "alibi" in opt.features:
        slopes = f64(pb["alibi"]["slopes"])
        B = list(windows.alibi_bias(slopes, n))
        steps |= {("B", i): B[i] for i in range(h)}
    H = []
    for i in range(h):
        j = i * g // h
        scores = r(Q[i] @ K[j].T, p)
        S = r(scores / math.sqrt(Q[i].shape[-1]), p)
        A = r(torch.softmax(S + B[i] + M, -1), p)
        H.append(r(A @ V[j], p))
        steps |= {
            ("K", i): K[j],
            ("V", i): V[j],
            ("scores", i): scores,
            ("S", i): S,
            ("S_masked", i): S + B[i] + M,
            ("A", i): A,
            ("H", i): H[i],
        }
    concat = torch.cat(H, -1)
    out = concat @ f64(pb["W_O"]) if "W_O" in pb else concat
    return steps | {("concat", None): concat, ("output", None): r(out, p)}


def shape_of(variant: str, seed: int = 0) -> dict:
    """A shape each feature can show its mistakes on: 4 query heads (d_k = 2) with g < h,
    4 tokens with a window, one head or two with RoPE alone."""
    f = Features.parse(variant)
    kw: dict = {"heads": 4, "d_model": 8} if f.grouped else {}
    if f.windowed:
        kw["tokens"] = 4
    if f.rotary and not f.grouped:
        kw["heads"] = 1 + seed % 2
    return kw


@pytest.mark.parametrize("variant", list(PROBLEMS))
def test_right_answers_are_right_on_many_seeds(variant):
    """The key rounded to 3 decimals, and a student's chain rounded step by step, on 25 seeds
    and two shapes; with 2 decimals asked, both to 2 decimals."""
    for seed in range(25):
        for decimals in (3, 2) if seed < 5 else (3,):
            opt = ExerciseOptions(
                seed=seed, variant=variant, decimals=decimals, **shape_of(variant, seed)
            )
            prob = problem(opt)
            key = computed_steps(prob.data(), ())
            for steps in (key, students_chain(opt, decimals)):
                report = answer(prob, steps, decimals=decimals)
                assert report.all_right, (opt, report_lines(report))
                assert report.steps_given == len([k for k in steps if k[0] in ALL])


@pytest.mark.parametrize("variant", list(PROBLEMS))
def test_the_template_filled_from_the_keys_json_is_right(variant):
    """The names of answer.json are the key's JSON names (explain's): filled from the key's
    numbers, every step is right."""
    opt = ExerciseOptions(seed=11, variant=variant, **shape_of(variant, 1))
    ex = make_exercise(opt)
    doc = json.loads(json.dumps(ex.answer))

    def rounded(m):
        return [
            [x if isinstance(x, str) or math.isinf(x) else round(x, 3) for x in row] for row in m
        ]

    for part in ("heads", "kv_heads"):
        for i, head in enumerate(doc.get(part, [])):
            for name in head:
                head[name] = rounded(ex.key.data[part][i][name])
    doc["concat"], doc["output"] = rounded(ex.key.data["concat"]), rounded(ex.key.data["output"])
    text = json.dumps(doc).replace("-Infinity", '"-inf"')
    report = check_document(read_answer_text(text))
    assert report.all_right and report.steps_given > 10, report_lines(report)


@pytest.mark.parametrize("variant", list(PROBLEMS))
def test_wrong_answers_are_never_right(variant):
    """Rounded to fewer decimals than asked, one entry off by 0.01, every mistake: not right
    (graded only: the diagnoses are the tests below)."""
    for opt in PROBLEMS[variant][:2]:
        prob = problem(opt)
        key = computed_steps(prob.data(), ())
        assert answer(prob, key, catalogue=()).all_right  # the control
        assert not answer(prob, key, decimals=2, catalogue=()).all_right  # 2 where 3 are asked
        for name in ("A", "output", "S"):
            step = (name, opt.heads - 1 if name != "output" else None)
            off = dict(key)
            off[step] = key[step].clone()
            off[step][-1, 0] += 0.01
            report = answer(prob, off, keys=(name,), catalogue=())
            assert not report.all_right and report.first_wrong.key == step
        for m in mistakes(opt):
            if m.rank == 0:
                assert not answer(prob, wrong_steps(opt, [m]), catalogue=()).all_right, m.name


# --- each mistake diagnosed as itself -------------------------------------------------------------


@pytest.mark.parametrize("case", cases(), ids=ident)
def test_each_mistake_is_diagnosed_as_itself_from_a_full_answer(case):
    opt, name, index = case
    m = mistake(opt, name, index)
    report = answer(problem(opt), wrong_steps(opt, [m]))
    assert not report.all_right
    # (two orders of the heads can give the same numbers: then both are named, each itself)
    assert names(report) == {name} and all(len(d) == 1 for d in report.diagnosis_names), (
        report_lines(report)
    )
    assert f"{m.words['en']}" in "\n".join(report_lines(report))
    assert report.first_wrong.key == shown(opt, m)[0]  # where it first shows


def indistinguishable(opt: ExerciseOptions, a: Mistake, b: Mistake, keys: list) -> bool:
    wa, wb = wrong_steps(opt, [a]), wrong_steps(opt, [b])
    return all(
        k in wa
        and k in wb
        and wa[k].shape == wb[k].shape
        and torch.allclose(wa[k], wb[k], atol=1e-3)
        for k in keys
    )


@pytest.mark.parametrize("case", [c for c in cases() if c[1] in VARIANT_MISTAKES], ids=ident)
def test_each_variant_mistake_is_diagnosed_from_partial_answers(case):
    """Only the first step where it shows, only the output: the mistake is named, and any other
    named with it writes the same numbers on those steps (they cannot be told apart)."""
    opt, name, index = case
    m = mistake(opt, name, index)
    where = shown(opt, m)
    for keys in ([where[0]], [("output", None)]):
        if keys[0] not in where:
            continue
        steps = {k: v for k, v in wrong_steps(opt, [m]).items() if k[0] == keys[0][0]}
        report = answer(problem(opt), steps, keys=(keys[0][0],))
        assert (name,) in report.diagnosis_names, (keys, report_lines(report))
        others = [
            o for o in mistakes(opt) if (o.name,) in report.diagnosis_names and o.name != name
        ]
        assert all(indistinguishable(opt, m, o, list(steps)) for o in others), keys


# --- built by hand -------------------------------------------------------------------------------


def by_hand(
    opt: ExerciseOptions, *, repeat=None, M=None, turn_q=None, turn_k=None, turn_v=None
) -> dict:
    """The problem computed with torch and the reference's pieces, with one change: the K/V
    heads ``repeat``ed another way, another mask ``M``, another rotation of Q or K, or V
    rotated."""
    tr = problem(opt).trace.reference()
    n = tr.X.shape[0]
    pos = torch.arange(n, dtype=torch.float64)
    rope = opt.features.rotary
    same = (lambda x: ref_rope.apply_rope(x, pos)) if rope else (lambda x: x)
    Q, K, V = (turn_q or same)(tr.Q), (turn_k or same)(tr.K), tr.V
    if turn_v is not None:
        V = turn_v(V)
    K_rep = repeat(K) if repeat else ref_gqa.repeat_kv(K, tr.h)
    V_rep = repeat(V) if repeat else ref_gqa.repeat_kv(V, tr.h)
    if M is None:
        M = tr.M if tr.M is not None else torch.zeros(n, n, dtype=torch.float64)
    scores = Q @ K_rep.transpose(-2, -1)
    S = scores / math.sqrt(tr.d_k)
    A = torch.softmax(S + M, -1)
    H = A @ V_rep
    concat = torch.cat(list(H), -1)
    out = concat @ tr.W_O if tr.W_O is not None else concat
    steps = {("concat", None): concat, ("output", None): out}
    for i in range(tr.h):
        steps |= {("scores", i): scores[i], ("S", i): S[i], ("A", i): A[i], ("H", i): H[i]}
    if rope:
        steps |= {("Q_rot", i): Q[i] for i in range(tr.h)}
        steps |= {("kv.K_rot", j): K[j] for j in range(tr.g)}
    return steps


def diagnosed(opt: ExerciseOptions, steps: dict, keys) -> list:
    report = answer(problem(opt), steps, keys=keys)
    assert not report.all_right
    return report.diagnosis_names


def having(feature: str) -> list[ExerciseOptions]:
    """Every problem of `PROBLEMS` with the feature, presets and combinations."""
    return [o for opts in PROBLEMS.values() for o in opts if getattr(o.features, feature)]


@pytest.mark.parametrize("opt", [o for o in having("grouped") if 1 < o.kv_heads < o.heads])
def test_kv_groups_repeated_interleaved_by_hand(opt):
    """``K.repeat`` (tile: K/V heads 1, 2, 1, 2) where ``repeat_interleave`` is right."""
    r = opt.heads // opt.kv_heads
    steps = by_hand(opt, repeat=lambda K: K.repeat(r, 1, 1))  # (g, n, d) -> (h, n, d), tiled
    for keys in (("scores",), ("output",), ("S", "A", "H", "concat", "output")):
        assert diagnosed(opt, steps, keys) == [("gqa_interleaved",)], keys
    words = "\n".join(report_lines(answer(problem(opt), steps, keys=("A",))))
    assert "the K/V heads repeated in the wrong order: query heads 1 to" in words


@pytest.mark.parametrize("opt", having("windowed"))
def test_a_window_off_by_one_by_hand(opt):
    n, w = opt.tokens, opt.window
    for wrong, name in (
        (w + 1, "window_plus_one"),
        (w - 1, "window_minus_one"),
        (n, "window_causal"),
    ):
        if not 1 <= wrong <= n or (wrong == n and name != "window_causal"):
            continue
        steps = by_hand(opt, M=windows.sliding_window_mask(n, wrong))
        for keys in (("A",), ("output",)):
            assert diagnosed(opt, steps, keys) == [(name,)], (keys, wrong)


@pytest.mark.parametrize("opt", having("rotary"))
def test_ropes_mistakes_by_hand(opt):
    tr = problem(opt).trace
    n, d = tr.X.shape[0], tr.d_k
    pos = torch.arange(n, dtype=torch.float64)
    angles = ref_rope.rope_angles(pos, ref_rope.rope_frequencies(d))

    def rotate_half(x):  # Hugging Face's layout: cos·x + rotate_half(x)·sin, (x_p, x_p+d/2)
        cos, sin = torch.cos(angles).repeat(1, 2), torch.sin(angles).repeat(1, 2)
        return x * cos + torch.cat((-x[..., d // 2 :], x[..., : d // 2]), -1) * sin

    def both(turn):
        return {"turn_q": turn, "turn_k": turn}

    built = {
        "rope_wrong_sign": by_hand(opt, **both(lambda x: ref_rope.apply_rope(x, -pos))),
        "rope_on_V": by_hand(opt, turn_v=lambda x: ref_rope.apply_rope(x, pos)),
        "rope_keys_not_rotated": by_hand(opt, turn_k=lambda x: x),
    }
    if d >= 4:
        built["rope_wrong_pair"] = by_hand(
            opt, **both(lambda x: ref_rope.rotate_pairs(x, angles.flip(-1)))
        )
        built["rope_half_pairs"] = by_hand(opt, **both(rotate_half))
    for name, steps in built.items():
        for keys in (("scores",) if name != "rope_on_V" else ("H",), ("output",)):
            assert diagnosed(opt, steps, keys) == [(name,)], (name, keys)


def test_the_homeworks_catalogue_alone_names_no_variant_mistake():
    """A control: the same answers checked with the homework's catalogue get no variant name."""
    opt = PROBLEMS["gqa"][0]
    steps = by_hand(opt, repeat=lambda K: K.repeat(2, 1, 1))
    text = answer_text(answer_from_steps(steps, problem(opt).naming, keys=ALL), 3)
    ans = parse_answer(read_answer_text(text))
    assert check_answer(ans).diagnosis_names == [("gqa_interleaved",)]
    assert ("gqa_interleaved",) not in check_answer(ans, CATALOGUE).diagnosis_names


# --- the report's words ---------------------------------------------------------------------------


def test_steps_of_the_kv_heads_are_named_by_their_json_path_and_symbol():
    opt = ExerciseOptions(seed=3, variant="gqa", heads=4, lang="pt")
    prob = problem(opt)
    key = computed_steps(prob.data(), ())
    K = key[("kv.K", 1)].clone()
    K[0, 0] += 1  # a slip in K/V head 2's key
    report = answer(prob, {("kv.K", 1): K, ("K", 2): K}, keys=("kv.K", "K"))
    text = "\n".join(report_lines(report))
    assert "Primeiro passo errado: K⁽²⁾ (kv_heads[1].K)." in text
    assert "Diagnóstico: um erro de conta em uma entrada: K⁽²⁾ em [" in text
    en = answer(
        problem(ExerciseOptions(seed=3, variant="gqa", heads=4)), {("K", 2): K}, keys=("K",)
    )
    assert "First wrong step: the K query head 3 reads (heads[2].K)." in report_lines(en)


def test_a_variant_answer_no_mistake_explains_lists_the_variants_catalogue():
    for variant, words in (
        ("gqa", "the order of the K/V groups"),
        ("window", "the window's width off by one"),
        ("rope", "RoPE's angle of the wrong pair"),
    ):
        prob = problem(PROBLEMS[variant][0])
        out = computed_steps(prob.data(), ())[("output", None)]
        noise = torch.arange(out.numel(), dtype=torch.float64).reshape(out.shape) % 7 * 0.1
        report = answer(prob, {("output", None): out + noise}, keys=("output",))
        assert not report.diagnoses
        assert report_lines(report)[-1].startswith(f"No mistake of the catalogue ({words}")
    # the homework's report keeps its own sentence
    mha = problem(ExerciseOptions(seed=3))
    out = computed_steps(mha.data())[("output", None)]
    report = answer(mha, {("output", None): out + 0.37}, keys=("output",))
    assert report_lines(report)[-1].startswith("No mistake of the catalogue (scaling, softmax")


def test_the_rope_diagnosis_in_portuguese():
    opt = ExerciseOptions(seed=3, variant="rope", heads=1, lang="pt")
    m = mistake(opt, "rope_wrong_sign")
    report = answer(problem(opt), wrong_steps(opt, [m]))
    text = "\n".join(report_lines(report))
    assert text.startswith("Conferindo a sua resposta a attnref exercise --seed 3")
    assert "Diagnóstico: RoPE girado no sentido errado, por −m θ" in text
    assert "Primeiro passo errado: Q_rot⁽¹⁾ (heads[0].Q_rot)." in text


def test_the_report_json_keeps_its_keys():
    """The gradebook reads Report.to_json: the same keys for the homework and the variants."""
    keys = [
        "problem",
        "lang",
        "decimals",
        "steps_given",
        "steps_right",
        "all_right",
        "first_wrong",
        "pairs_tried",
        "diagnoses",
        "diagnosis_texts",
        "verdicts",
    ]
    mha = problem(ExerciseOptions(seed=3))
    report = answer(mha, computed_steps(mha.data()), keys=("A", "output"))
    assert list(report.to_json()) == keys and report.variant == "mha"
    opt = PROBLEMS["gqa"][0]
    doc = answer(problem(opt), wrong_steps(opt, [mistake(opt, "gqa_interleaved")])).to_json()
    assert list(doc) == keys and doc["diagnoses"] == [["gqa_interleaved"]]
    assert doc["problem"].endswith("--variant gqa --kv-heads 2")


# --- bad answers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("opt", "extra", "message"),
    [
        (
            PROBLEMS["gqa"][0],
            {"grads": {"X": [[1]]}},
            '"grads": the --variant gqa exercise asks no gradients',
        ),
        (
            PROBLEMS["gqa"][0],
            {"kv_heads": [{}, {}, {}]},
            "kv_heads has 3 entries but the problem has g = 2 K/V heads",
        ),
        (PROBLEMS["gqa"][0], {"heads": [{"Q_rot": [[1]]}]}, 'heads[0] has unknown step "Q_rot"'),
        (PROBLEMS["rope"][0], {"kv_heads": [{"Q": [[1]]}]}, 'kv_heads[0] has unknown step "Q"'),
        (ExerciseOptions(seed=3), {"kv_heads": [{"K": [[1]]}]}, 'unknown key "kv_heads"'),
    ],
)
def test_bad_variant_answers_say_what_is_wrong(opt, extra, message):
    doc = {"exercise": opt.to_json(), "output": [[1.0]]} | extra
    with pytest.raises(InputError) as e:
        parse_answer(read_answer_text(json.dumps(doc)))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_windows_words_count_its_keys_in_good_english_and_portuguese():
    opt = PROBLEMS["window"][0]  # w = 2, n = 4
    words = {m.name: m.words for m in mistakes(opt) if m.name.startswith("window_")}
    assert "each token saw 1 key (only itself) instead of w = 2" in words["window_minus_one"]["en"]
    assert "each token saw 3 keys (itself and the 2 before it)" in words["window_plus_one"]["en"]
    assert "cada token viu 1 chave (só ele mesmo)" in words["window_minus_one"]["pt"]
    assert words["window_ahead"]["en"].endswith(
        "saw itself and the token after it instead of the one before it"
    )
    wide = {m.name: m.words for m in mistakes(PROBLEMS["window"][1])}  # w = 3
    assert wide["window_ahead"]["pt"].endswith("os 2 tokens seguintes em vez dos 2 anteriores")
    assert (
        "cada token viu 3 chaves (ele mesmo e os 2 anteriores)" in (words["window_plus_one"]["pt"])
    )


def test_a_gqa_scores_step_names_the_key_its_head_reads():
    """heads[1].scores of h = 4, g = 2 is Q⁽²⁾ against K/V head 1's key, not K⁽²⁾."""
    opt = PROBLEMS["gqa"][0]
    prob = problem(opt)
    scores = computed_steps(prob.data(), ())[("scores", 1)] + 1.0
    lines = report_lines(answer(prob, {("scores", 1): scores}, keys=("scores",)))
    assert "First wrong step: Q⁽²⁾Kᵀ (heads[1].scores; the K query head 2 reads)." in lines
