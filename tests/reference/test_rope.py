"""RoPE: three formulations agree, norms are kept, q_m · k_n depends only on m − n, and the
backward (the rotation's transpose) equals autograd."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_ref.reference import rope
from tests.reference.variants import DT, TOL


@st.composite
def rows(draw, *, max_n: int = 7):
    """``x`` ``(*batch, n, d)`` with ``d`` even, its positions, and a base."""
    d = 2 * draw(st.integers(1, 4))
    n = draw(st.integers(1, max_n))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    x = torch.randn(*batch, n, d, generator=gen, dtype=DT)
    start = draw(st.integers(0, 1000))
    positions = torch.arange(start, start + n, dtype=DT)
    base = draw(st.sampled_from([10000.0, 500000.0, 100.0]))
    return x, positions, base


def close(a: torch.Tensor, b: torch.Tensor, tol: float = TOL) -> bool:
    return torch.allclose(a, b, rtol=0, atol=tol)


def test_frequencies_are_base_to_the_minus_2i_over_d():
    theta = rope.rope_frequencies(8, 10000.0)
    assert theta.tolist() == [10000.0 ** (-2 * i / 8) for i in range(4)]
    assert theta[0] == 1.0  # pair 0 turns by one radian per position
    with pytest.raises(ValueError, match="even"):
        rope.rope_frequencies(5)


def test_one_pair_turns_by_m_radians():
    """d = 2: θ_0 = 1, so position m turns (1, 0) to (cos m, sin m)."""
    x = torch.tensor([[1.0, 0.0]] * 4, dtype=DT)
    out = rope.apply_rope(x)
    for m in range(4):
        assert close(out[m], torch.tensor([math.cos(m), math.sin(m)], dtype=DT))


@given(rows())
def test_three_formulations_agree(case):
    """Cosines and sines of each pair ≡ RoFormer's block-diagonal matrices ≡ complex numbers."""
    x, positions, base = case
    pairs = rope.apply_rope(x, positions, base)
    assert close(pairs, rope.rope_by_matrices(x, positions, base), 1e-9)
    assert close(pairs, rope.rope_by_complex(x, positions, base), 1e-9)


def test_rotate_half_is_another_pairing_and_is_caught():
    """Negative control: Hugging Face's rotate_half pairs i with i + d/2; on the same vector it
    gives other numbers, which the comparison above would see."""
    x = torch.arange(1.0, 9.0, dtype=DT).reshape(1, 8).expand(3, 8)
    d = 8
    angles = rope.rope_angles(torch.arange(3, dtype=DT), rope.rope_frequencies(d))
    cos, sin = torch.cos(angles).repeat(1, 2), torch.sin(angles).repeat(1, 2)
    half = torch.cat((-x[:, d // 2 :], x[:, : d // 2]), dim=-1)
    hf = x * cos + half * sin
    assert not close(hf, rope.apply_rope(x), 1e-3)
    assert close(hf[0], rope.apply_rope(x)[0])  # position 0 is not rotated by either


@given(rows())
def test_norms_are_preserved(case):
    x, positions, base = case
    assert close(rope.apply_rope(x, positions, base).norm(dim=-1), x.norm(dim=-1), 1e-9)


@given(rows(max_n=1), st.integers(0, 200), st.integers(0, 200), st.integers(-100, 100))
def test_scores_depend_only_on_the_distance(case, m, n, shift):
    """(R_m q) · (R_n k) = (R_{m+s} q) · (R_{n+s} k) = q · (R_{n−m} k)."""
    x, _, base = case
    q, k = x[..., :1, :], torch.flip(x[..., :1, :], dims=(-1,))

    def score(a: int, b: int) -> torch.Tensor:
        qa = rope.apply_rope(q, torch.tensor([float(a)]), base)
        kb = rope.apply_rope(k, torch.tensor([float(b)]), base)
        return (qa * kb).sum(-1)

    s = score(m, n)
    if m + shift >= 0 and n + shift >= 0:
        assert close(s, score(m + shift, n + shift), 1e-9)
    relative = (q * rope.apply_rope(k, torch.tensor([float(n - m)]), base)).sum(-1)
    assert close(s, relative, 1e-9)


def test_absolute_positions_would_not_keep_the_distance():
    """Negative control: adding a position vector instead of rotating breaks the property."""
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 4, generator=gen, dtype=DT)
    p = torch.randn(10, 4, generator=gen, dtype=DT)  # learned absolute embeddings
    assert not math.isclose(float((q + p[1]) @ (k + p[3])), float((q + p[5]) @ (k + p[7])))
    rot = [rope.apply_rope(v.expand(10, 4)) for v in (q, k)]
    assert math.isclose(float(rot[0][1] @ rot[1][3]), float(rot[0][5] @ rot[1][7]), abs_tol=1e-12)


@given(rows())
def test_backward_is_the_transpose_and_equals_autograd(case):
    x, positions, base = case
    leaf = x.clone().requires_grad_()
    out = rope.apply_rope(leaf, positions, base)
    gen = torch.Generator().manual_seed(1)
    G = torch.randn(out.shape, generator=gen, dtype=DT)
    (out * G).sum().backward()
    assert close(rope.rope_backward(G, positions, base), leaf.grad)
    # the transpose of a rotation is its inverse: back to x
    assert close(rope.rope_backward(out.detach(), positions, base), x, 1e-9)


def test_positions_must_match_the_rows():
    with pytest.raises(ValueError, match="one position per token"):
        rope.apply_rope(torch.zeros(3, 4, dtype=DT), torch.arange(2))
