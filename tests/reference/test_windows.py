"""Sliding-window masks and ALiBi: the definitions entry by entry, their limits, and attention
with them equal to PyTorch's kernel (``attn_mask``) in float64 to 1e-10."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.reference import rope, windows
from tests.reference.variants import DT, TOL, gqa_problems


@given(st.integers(1, 9), st.integers(0, 4), st.integers(1, 10))
def test_window_mask_entry_by_entry(n_q, extra, w):
    """0 where 0 ≤ p_i − j < w (p_i the query's position, the last n_q of n_k), −∞ elsewhere."""
    n_k = n_q + extra
    M = windows.sliding_window_mask(n_q, w, n_k=n_k)
    for i in range(n_q):
        p = n_k - n_q + i
        for j in range(n_k):
            assert M[i, j] == (0.0 if 0 <= p - j < w else -math.inf)


def test_window_of_two_on_four_tokens():
    allowed = windows.window_allowed(4, 2).to(torch.int64).tolist()
    assert allowed == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]


def test_off_by_one_window_is_caught():
    """Negative control: "j ≥ i − w" (w + 1 keys) is another mask, which the test above sees."""
    delta = windows.relative_positions(5)
    wrong = (delta >= 0) & (delta <= 2)
    assert not torch.equal(wrong, windows.window_allowed(5, 2))
    assert torch.equal(wrong, windows.window_allowed(5, 3))


@given(st.integers(1, 9), st.integers(0, 5))
def test_a_window_as_wide_as_the_sequence_is_the_causal_mask(n, more):
    assert torch.equal(windows.sliding_window_mask(n, n + more), ref.causal_mask(n))


def test_a_window_of_one_sees_only_itself():
    M = windows.sliding_window_mask(4, 1)
    assert torch.equal(M == 0, torch.eye(4, dtype=torch.bool))


@pytest.mark.parametrize("w", [0, -1, 1.5, True])
def test_bad_windows_are_refused(w):
    with pytest.raises(ValueError, match="window"):
        windows.sliding_window_mask(3, w)


def test_relative_positions_align_the_queries_to_the_end():
    assert windows.relative_positions(1, 4).tolist() == [[3, 2, 1, 0]]  # one decode step
    assert windows.relative_positions(3).tolist() == [[0, -1, -2], [1, 0, -1], [2, 1, 0]]
    with pytest.raises(ValueError):
        windows.relative_positions(4, 3)


# --- ALiBi --------------------------------------------------------------------------------------


def test_alibi_slopes_of_eight_heads_are_halves():
    assert windows.alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    assert windows.alibi_slopes(2).tolist() == [2.0**-4, 2.0**-8]


def test_alibi_slopes_of_a_non_power_of_two_follow_the_paper():
    """h = 6: the 4 slopes of h = 4, then every other slope of h = 8 (2⁻¹, 2⁻³)."""
    assert windows.alibi_slopes(6).tolist() == [
        2.0**-2,
        2.0**-4,
        2.0**-6,
        2.0**-8,
        2.0**-1,
        2.0**-3,
    ]


@given(st.integers(1, 6), st.integers(1, 7))
def test_alibi_bias_is_minus_slope_times_distance_below_the_diagonal(h, n):
    slopes = windows.alibi_slopes(h)
    B = windows.alibi_mask(slopes, n)
    for i in range(h):
        for q in range(n):
            for k in range(n):
                want = -float(slopes[i]) * (q - k) if k <= q else -math.inf
                assert B[i, q, k] == want


@given(st.integers(1, 4), st.integers(2, 7), st.integers(1, 3))
def test_alibi_rows_keep_their_weights_when_shifted(h, n, shift):
    """The bias depends on the distance only: a query with its keys moved by the same number
    of positions gets the same weights (on keys equal up to the shift)."""
    gen = torch.Generator().manual_seed(n)
    S = torch.randn(n, n, generator=gen, dtype=DT)
    slopes = windows.alibi_slopes(h)
    A = ref.softmax_rows(S + windows.alibi_mask(slopes, n))
    big = torch.full((n + shift, n + shift), 0.0, dtype=DT)
    big[shift:, shift:] = S
    blocked = torch.zeros(n + shift, n + shift, dtype=DT)
    blocked[:, :shift] = -math.inf  # the first tokens are not there
    A_big = ref.softmax_rows(big + windows.alibi_mask(slopes, n + shift) + blocked)
    assert torch.allclose(A_big[:, shift:, shift:], A, rtol=0, atol=TOL)


@given(gqa_problems(even_d_k=True), st.integers(1, 5))
def test_gqa_with_rope_and_a_window_equals_sdpa_on_rotated_queries(p, w):
    """The whole composition of today's layers: RoPE, a window, GQA ≡ SDPA on the rotated Q, K."""
    trace = ref.masked_multihead_attention(
        p.X, p.W_Q, p.W_K, p.W_V, p.W_O, rope_base=10000.0, M=windows.sliding_window_mask(p.n, w)
    )
    Q, K, V = (ref.project_heads(p.X, W) for W in (p.W_Q, p.W_K, p.W_V))
    allowed = windows.window_allowed(p.n, w)
    H = F.scaled_dot_product_attention(
        rope.apply_rope(Q), rope.apply_rope(K), V, attn_mask=allowed, enable_gqa=True
    )
    out = ref.merge_heads(H) if p.W_O is None else ref.merge_heads(H) @ p.W_O
    assert torch.allclose(trace.output, out, rtol=0, atol=TOL)
