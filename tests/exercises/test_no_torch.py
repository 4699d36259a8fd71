"""The student's loop without torch (issue 41): ``attnref exercise`` prints its statement and
``attnref check`` grades an answer with numpy's float64 arrays, and never import torch, whose
import alone takes longer than the whole check. The key too is written from the grader's own
chain, without torch (`tests/exercises/test_key_without_torch.py`).

What the grader computes in numpy beside the reference (the masks, RoPE's angles, the softmax
of a point) is held to the reference's numbers here, on every shape an exercise can have.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_ref.exercises import problem as P
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.intervals import softmax_rows
from attention_ref.exercises.options import MAX_D_MODEL, MAX_TOKENS
from attention_ref.reference import attention, rope, windows
from attention_ref.reference.spec import ROPE_BASE

ROOT = Path(__file__).resolve().parents[2]

#: Runs the CLI in this interpreter and says whether torch was loaded (the last line).
PROBE = (
    "import sys\n"
    "from attention_ref.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print('torch loaded' if 'torch' in sys.modules else 'no torch')\n"
    "sys.exit(code)\n"
)


def attnref(*args: str, cwd: Path) -> tuple[int, str]:
    """``attnref ARGS`` in a fresh interpreter: its exit code and its output."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_the_masks_are_the_references_on_every_shape():
    for n in range(1, MAX_TOKENS + 1):
        assert np.array_equal(P.causal_mask(n), attention.causal_mask(n).numpy()), n
        for w in range(1, n + 2):
            want = windows.sliding_window_mask(n, w).numpy()
            assert np.array_equal(P.window_mask(n, w), want), (n, w)
    # the control: a window one key wider is another mask
    assert not np.array_equal(P.window_mask(4, 2), windows.sliding_window_mask(4, 3).numpy())


def test_ropes_angles_are_the_references_on_every_shape_an_exercise_has():
    """Exactly equal up to d_k = 16 (an exercise's widest head is MAX_D_MODEL = 8 wide); wider
    heads may differ in the last bit of base^(-2p/d) (numpy's and torch's pow), 1e-15 of it."""
    for n in range(1, MAX_TOKENS + 1):
        for d_k in range(2, 2 * MAX_D_MODEL + 1, 2):
            theta = rope.rope_frequencies(d_k, ROPE_BASE)
            want = rope.rope_angles(torch.arange(n, dtype=torch.float64), theta).numpy()
            got = P.rope_angles(n, d_k)
            assert np.array_equal(P.rope_frequencies(d_k), theta.numpy()), d_k
            assert np.array_equal(got, want), (n, d_k)
            assert np.array_equal(np.cos(got), np.cos(want))
    wide = P.rope_angles(12, 64)
    want = rope.rope_angles(torch.arange(12.0, dtype=torch.float64), rope.rope_frequencies(64))
    assert np.allclose(wide, want.numpy(), rtol=1e-15, atol=0)


def test_the_softmax_of_a_point_is_the_references_to_the_last_bits():
    """Masked entries give 0 exactly, as the reference; the others agree to 1e-15 (numpy's exp
    and torch's may differ in the last bit)."""
    gen = torch.Generator().manual_seed(0)
    for _ in range(50):
        S = torch.randn(5, 6, dtype=torch.float64, generator=gen) * 4
        S = S + attention.causal_mask(6)[:5]
        got, want = softmax_rows(S.numpy()), attention.softmax_rows(S).numpy()
        assert np.array_equal(got == 0, want == 0)
        assert np.allclose(got, want, rtol=0, atol=1e-15)
        assert np.allclose(got.sum(-1), 1.0, rtol=0, atol=1e-15)


def test_a_problems_reference_is_its_numbers_in_torch():
    ex = make_exercise(ExerciseOptions(seed=3, variant="gqa+rope", heads=4, d_model=8))
    ref = ex.trace.reference()
    assert isinstance(ref.X, torch.Tensor) and ref.X.dtype == torch.float64
    assert np.array_equal(ref.X.numpy(), ex.trace.X)
    # the key is the chain's float64 numbers (issue 59): the reference's to the last bits
    assert np.allclose(ex.key.data["output"], ref.output.numpy(), rtol=1e-13, atol=1e-13)


@pytest.mark.slow
def test_exercise_its_key_and_check_run_without_torch(tmp_path):
    code, out = attnref("exercise", "--seed", "0", cwd=tmp_path)
    assert code == 0 and out.rstrip().endswith("no torch"), out
    assert out.startswith("# Exercise 0: masked multi-head attention by hand")  # the statement
    # the folder a teacher writes has the key: the chain's numbers, no torch either (issue 59)
    code, out = attnref("exercise", "--seed", "0", "--out", "ex", cwd=tmp_path)
    assert code == 0 and out.rstrip().endswith("no torch"), out
    doc = json.loads((tmp_path / "ex" / "answer.json").read_text(encoding="utf-8"))
    problem = json.loads((tmp_path / "ex" / "exercise.json").read_text(encoding="utf-8"))
    X, W = np.array(problem["X"]), np.array(problem["heads"][0]["W_Q"])
    doc["heads"][0]["Q"] = (X @ W).tolist()
    (tmp_path / "ex" / "answer.json").write_text(json.dumps(doc), encoding="utf-8")
    code, out = attnref("check", "ex/answer.json", cwd=tmp_path)
    assert code == 0 and out.rstrip().endswith("no torch"), out
    assert "right" in out.lower()
    # the control: one entry off is graded wrong, still without torch
    doc["heads"][0]["Q"][0][0] += 1
    (tmp_path / "ex" / "answer.json").write_text(json.dumps(doc), encoding="utf-8")
    code, out = attnref("check", "ex/answer.json", cwd=tmp_path)
    assert code == 1 and out.rstrip().endswith("no torch"), out
