"""The key without torch (issue 59): ``exercise --out`` writes the key from the grader's own float64
chain (`attention_ref.exercises.numbers`), held here equal to torch's reference on every preset
and combination, forward and backward, seeds 0–40; and the whole ``exercise --out`` runs without
importing torch.
"""

from __future__ import annotations

import math

import pytest

from attention_ref import reference as ref
from attention_ref.exercises.draw import draw as draw_problem
from attention_ref.exercises.draw import trace_of
from attention_ref.exercises.features import PROBLEMS, Features, default_shape
from attention_ref.exercises.key import key_data
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.reference import windows
from attention_ref.worked.grouped_backward import grads_json
from attention_ref.worked.trace import trace_json
from tests.exercises.test_no_torch import attnref


def pairs(a: object, b: object, where: str = "") -> list[tuple[str, float, float]]:
    """Every number of two JSON documents side by side (their shapes and keys equal)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        return [p for k in a for p in pairs(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        return [
            p
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for p in pairs(x, y, f"{where}[{i}]")
        ]
    if isinstance(a, float) or isinstance(b, float):
        return [(where, float(a), float(b))]  # type: ignore[arg-type]
    assert a == b, where
    return []


def torch_key_data(opt: ExerciseOptions) -> dict:
    """The key's JSON as torch's reference writes it (the code before issue 59)."""
    tr = trace_of(opt, draw_problem(opt).problem)
    rt = tr.reference()
    data = {**trace_json(rt)}
    if tr.window is not None:
        data["window"] = tr.window
    if tr.bias is not None:  # ALiBi's biases after S, and its slopes, as the reference has them
        bias = windows.alibi_bias(windows.alibi_slopes(tr.h), len(tr.tokens)).tolist()
        for i, head in enumerate(data["heads"]):
            items = list(head.items())
            at = [k for k, _ in items].index("S") + 1
            data["heads"][i] = dict([*items[:at], ("B", bias[i]), *items[at:]])
        data["alibi"] = {"slopes": windows.alibi_slopes(tr.h).tolist()}
    if opt.backward:
        data |= {"loss": "sum", "grads": grads_json(rt, ref.attention_backward(rt))}
    return data


def options(problem: str, seed: int, backward: bool) -> ExerciseOptions:
    heads, d_model = default_shape(problem)
    f = Features.parse(problem)
    kw = {"window": 2} if "window" in f else {}
    return ExerciseOptions(
        seed=seed, variant=problem, heads=heads, d_model=d_model, backward=backward, **kw
    )


@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_keys_numbers_are_torchs_reference_on_every_problem(problem):
    """Every number to 1e-12, and the same at the 3 decimals the key prints (no entry of 41
    seeds sits on a rounding boundary closer than the two computations differ)."""
    worst = 0.0
    for seed in range(41):
        for backward in (False, True):
            opt = options(problem, seed, backward)
            tr = trace_of(opt, draw_problem(opt).problem)
            got, want = key_data(tr, backward), torch_key_data(opt)
            for where, x, y in pairs(got, want):
                if math.isinf(y):
                    assert x == y, where
                    continue
                assert abs(x - y) <= 1e-12 * (1 + abs(y)), (seed, backward, where, x, y)
                assert round(x, 3) == round(y, 3) or abs(abs(y * 1e3 % 1) - 0.5) < 1e-9, where
                worst = max(worst, abs(x - y))
    assert worst < 1e-12


def test_the_comparison_can_fail():
    """The control: seed 0's key against seed 1's reference (the same shapes) differs."""
    opt = options("mha", 0, True)
    ours = key_data(trace_of(opt, draw_problem(opt).problem), True)
    other = torch_key_data(options("mha", 1, True))
    assert any(abs(x - y) > 1e-3 for _, x, y in pairs(ours["grads"], other["grads"]))


@pytest.mark.parametrize("problem, backward", [("mha", False), ("mha", True), ("gqa+rope", True)])
def test_exercise_out_writes_the_key_without_torch(tmp_path, problem, backward):
    args = ("--variant", problem) + ("--backward",) * backward
    code, out = attnref("exercise", "--seed", "3", *args, "--out", "ex", cwd=tmp_path)
    assert code == 0, out
    assert out.strip().endswith("no torch"), out
    key = (tmp_path / "ex" / "key.md").read_text(encoding="utf-8")
    assert key.startswith("# Solution key of exercise 3"), key[:80]
    # its output's last row is the reference's, at the 3 decimals it prints
    want = torch_key_data(options(problem, 3, backward))["output"][-1]
    assert " | ".join(f"{x:.3f}" for x in want) in key
