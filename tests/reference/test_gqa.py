"""Grouped-query attention: g = h is MHA, g = 1 is MQA, equal to PyTorch's ``enable_gqa``
kernel in float64 to 1e-10, and its backward (the K/V heads sum their group) equal to autograd.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.reference import gqa, windows
from tests.reference.variants import DT, TOL, GQAProblem, gqa_problems


def run(p: GQAProblem, **kw) -> ref.AttentionTrace:
    return ref.masked_multihead_attention(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, **kw)


def sdpa(p: GQAProblem, **kw) -> torch.Tensor:
    """PyTorch's kernel on the same projections: Q with h heads, K and V with g heads."""
    Q, K, V = (ref.project_heads(p.X, W) for W in (p.W_Q, p.W_K, p.W_V))
    H = F.scaled_dot_product_attention(Q, K, V, enable_gqa=True, **kw)  # (..., h, n, d_v)
    concat = ref.merge_heads(H)
    return concat if p.W_O is None else concat @ p.W_O


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=0, atol=TOL)


# --- the groups ---------------------------------------------------------------------------------


def test_kv_group_is_floor_of_i_g_over_h():
    assert [gqa.kv_group(i, 4, 2) for i in range(4)] == [0, 0, 1, 1]
    assert [gqa.kv_group(i, 6, 3) for i in range(6)] == [0, 0, 1, 1, 2, 2]
    assert [gqa.kv_group(i, 4, 1) for i in range(4)] == [0, 0, 0, 0]  # MQA
    assert [gqa.kv_group(i, 4, 4) for i in range(4)] == [0, 1, 2, 3]  # MHA


@pytest.mark.parametrize(("i", "h", "g"), [(0, 4, 3), (4, 4, 2), (-1, 4, 2), (0, 4, 0)])
def test_kv_group_refuses_what_is_not_a_group(i, h, g):
    with pytest.raises(ValueError):
        gqa.kv_group(i, h, g)


def test_repeat_kv_copies_each_kv_head_for_its_group():
    K = torch.arange(2 * 3 * 1, dtype=DT).reshape(2, 3, 1)  # g = 2 heads of 3 tokens
    rep = gqa.repeat_kv(K, 4)
    for i in range(4):
        assert torch.equal(rep[i], K[gqa.kv_group(i, 4, 2)])
    with pytest.raises(ValueError, match="must divide"):
        gqa.repeat_kv(K, 3)


def test_sum_kv_groups_adds_the_heads_of_each_group():
    d = torch.arange(4 * 2 * 1, dtype=DT).reshape(4, 2, 1)  # h = 4 heads, 2 tokens
    out = gqa.sum_kv_groups(d, 2)
    assert torch.equal(out[0], d[0] + d[1]) and torch.equal(out[1], d[2] + d[3])
    # negative control: grouping the other way round (heads 0, 2 together) is another sum
    assert not torch.equal(out[0], d[0] + d[2])


# --- g = h, g = 1 -------------------------------------------------------------------------------


@given(gqa_problems(g_equals_h=True), st.booleans())
def test_g_equal_h_is_multi_head_attention(p, causal):
    """g = h through the one composition: the homework's fused view (seeds 001/002, another
    path through the projections) and PyTorch's kernel without ``enable_gqa``."""
    tr = run(p, causal=causal)
    fused = ref.masked_multihead_attention_fused(
        p.X, *(ref.fuse_heads(W) for W in (p.W_Q, p.W_K, p.W_V)), p.W_O, h=p.h, causal=causal
    )
    assert close(tr.output, fused.output)
    Q, K, V = (ref.project_heads(p.X, W) for W in (p.W_Q, p.W_K, p.W_V))
    concat = ref.merge_heads(F.scaled_dot_product_attention(Q, K, V, is_causal=causal))
    assert close(tr.output, concat if p.W_O is None else concat @ p.W_O)


@given(gqa_problems(), st.booleans())
def test_g_equal_1_is_multi_query_attention(p, causal):
    """MQA: every query head reads the one K/V head; MHA with that head copied h times."""
    W_K, W_V = p.W_K[:1], p.W_V[:1]
    mqa = ref.masked_multihead_attention(p.X, p.W_Q, W_K, W_V, p.W_O, causal=causal)
    copies = {"W_K": W_K.expand(p.h, -1, -1), "W_V": W_V.expand(p.h, -1, -1)}
    mha = ref.masked_multihead_attention(
        p.X, p.W_Q, copies["W_K"], copies["W_V"], p.W_O, causal=causal
    )
    assert mqa.g == 1 and close(mqa.output, mha.output)


@given(gqa_problems())
def test_gqa_is_mha_with_each_kv_head_copied_to_its_group(p):
    """Any g: MHA whose head i has K/V head γ(i)'s weights."""
    idx = [gqa.kv_group(i, p.h, p.g) for i in range(p.h)]
    mha = ref.masked_multihead_attention(p.X, p.W_Q, p.W_K[idx], p.W_V[idx], p.W_O)
    assert close(run(p).output, mha.output)


# --- PyTorch's kernel ---------------------------------------------------------------------------


@given(gqa_problems())
def test_equals_sdpa_enable_gqa_is_causal(p):
    assert close(run(p).output, sdpa(p, is_causal=True))


@given(gqa_problems())
def test_equals_sdpa_enable_gqa_without_mask(p):
    assert close(run(p, causal=False).output, sdpa(p))


@given(gqa_problems(), st.integers(1, 9))
def test_equals_sdpa_with_a_sliding_window_attn_mask(p, w):
    M = windows.sliding_window_mask(p.n, w)
    allowed = windows.window_allowed(p.n, w)  # SDPA's boolean: True may attend
    assert close(run(p, M=M).output, sdpa(p, attn_mask=allowed))


@given(gqa_problems())
def test_equals_sdpa_with_alibi_as_a_float_attn_mask(p):
    M = windows.alibi_mask(windows.alibi_slopes(p.h), p.n)  # (h, n, n), −∞ in the future
    assert close(run(p, M=M).output, sdpa(p, attn_mask=M))


def test_the_wrong_group_order_is_caught_by_the_kernel():
    """Negative control: repeating K/V heads as a tile (0, 1, 0, 1) instead of in groups
    (0, 0, 1, 1) is a different attention, and the comparison above sees it."""
    gen = torch.Generator().manual_seed(3)
    X = torch.randn(5, 6, generator=gen, dtype=DT)
    W_Q = torch.randn(4, 6, 3, generator=gen, dtype=DT)
    W_K, W_V = (torch.randn(2, 6, 3, generator=gen, dtype=DT) for _ in range(2))
    p = GQAProblem(X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=None, seed=3)
    tiled = ref.masked_multihead_attention(X, W_Q, W_K.repeat(2, 1, 1), W_V.repeat(2, 1, 1))
    assert close(run(p).output, sdpa(p, is_causal=True))
    assert not close(tiled.output, sdpa(p, is_causal=True))


# --- the backward -------------------------------------------------------------------------------


def autograd(p: GQAProblem, G: torch.Tensor, **kw) -> dict[str, torch.Tensor]:
    leaves = {
        k: v.clone().requires_grad_()
        for k, v in (("X", p.X), ("W_Q", p.W_Q), ("W_K", p.W_K), ("W_V", p.W_V))
    }
    W_O = p.W_O.clone().requires_grad_() if p.W_O is not None else None
    out = ref.masked_multihead_attention(
        leaves["X"], leaves["W_Q"], leaves["W_K"], leaves["W_V"], W_O, **kw
    ).output
    (out * G).sum().backward()
    grads = {k: v.grad for k, v in leaves.items()}
    if W_O is not None:
        grads["W_O"] = W_O.grad
    return grads


@settings(max_examples=40)
@given(
    gqa_problems(even_d_k=True),
    st.sampled_from(["causal", "none", "window", "alibi"]),
    st.booleans(),
)
def test_backward_equals_autograd(p, mask, rope):
    M = {
        "causal": None,
        "none": None,
        "window": windows.sliding_window_mask(p.n, 2),
        "alibi": windows.alibi_mask(windows.alibi_slopes(p.h), p.n),
    }[mask]
    kw = {"causal": mask != "none", "M": M, "rope_base": 10000.0 if rope else None}
    trace = run(p, **kw)
    G = p.randn(*trace.output.shape)
    mine = ref.attention_backward(trace, G)
    want = autograd(p, G, **kw)
    for name in want:
        assert close(getattr(mine, name), want[name]), name


def test_backward_sums_the_group_and_a_wrong_sum_is_caught():
    """∂K of a K/V head is the sum over its group; summing the wrong heads differs."""
    gen = torch.Generator().manual_seed(5)
    X = torch.randn(4, 5, generator=gen, dtype=DT)
    p = GQAProblem(
        X=X,
        W_Q=torch.randn(4, 5, 2, generator=gen, dtype=DT),
        W_K=torch.randn(2, 5, 2, generator=gen, dtype=DT),
        W_V=torch.randn(2, 5, 2, generator=gen, dtype=DT),
        W_O=None,
        seed=5,
    )
    trace = run(p)
    mine = ref.attention_backward(trace)
    want = autograd(p, torch.ones_like(trace.output))
    assert close(mine.W_K, want["W_K"])
    assert close(mine.K, mine.K_rep[0::2] + mine.K_rep[1::2])  # heads (0, 1) and (2, 3)
    wrong_K = mine.K_rep.reshape(2, 2, 4, 2).sum(dim=0)  # heads (0, 2) and (1, 3) together
    assert not close(ref.weight_grad_heads(X, wrong_K), want["W_K"])


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (((4, 3, 2), (3, 3, 2), (3, 3, 2)), "must divide"),
        (((4, 3, 2), (2, 3, 2), (1, 3, 2)), "W_V has 1"),
        (((4, 3, 2), (2, 3, 3), (2, 3, 2)), "same width"),
        (((4, 2, 2), (2, 3, 2), (2, 3, 2)), "W_Q must be"),
    ],
)
def test_bad_shapes_are_one_clear_error(shapes, message):
    X = torch.zeros(3, 3, dtype=DT)
    Ws = [torch.zeros(*s, dtype=DT) for s in shapes]
    with pytest.raises(ValueError, match=message):
        ref.masked_multihead_attention(X, *Ws)
