"""Properties of the reference over random sizes (hypothesis)."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_ref import reference as ref
from tests.strategies import Problem, problems


def run(p: Problem, X: torch.Tensor | None = None, *, causal: bool = True) -> ref.AttentionTrace:
    return ref.masked_multihead_attention(
        p.X if X is None else X, p.W_Q, p.W_K, p.W_V, p.W_O, causal=causal
    )


@given(problems(), st.data())
def test_causality_future_tokens_do_not_change_the_past(p, data):
    n = p.X.shape[1]
    t = data.draw(st.integers(0, n - 1), label="t")
    X2 = p.X.clone()
    X2[:, t + 1 :, :] = torch.randn_like(X2[:, t + 1 :, :]) * 10  # change every token after t
    before, after = run(p).output, run(p, X2).output
    assert torch.allclose(before[:, : t + 1], after[:, : t + 1], rtol=0, atol=1e-12)
    if t + 1 < n:  # and the change is visible after t: the test can fail
        assert not torch.allclose(before[:, t + 1 :], after[:, t + 1 :])


@given(problems())
def test_rows_of_A_sum_to_one_and_are_zero_above_the_diagonal(p):
    A = run(p).A  # (B, h, n, n)
    n = A.shape[-1]
    assert torch.allclose(A.sum(-1), torch.ones_like(A.sum(-1)), rtol=0, atol=1e-12)
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
    assert (A[..., blocked] == 0).all()  # exactly zero, not merely small
    assert (A[..., ~blocked] > 0).all()
    assert (A[..., 0, 0] == 1).all()  # the first token sees only itself


@given(problems())
def test_output_and_intermediate_shapes(p):
    tr = run(p)
    B, n, d_model = p.X.shape
    h, d_k = p.h, p.W_Q.shape[-1]
    assert tr.output.shape == (B, n, d_model)
    assert tr.Q.shape == tr.K.shape == tr.V.shape == (B, h, n, d_k)
    assert tr.S.shape == tr.A.shape == (B, h, n, n)
    assert tr.H.shape == (B, h, n, d_k)
    assert tr.concat.shape == (B, n, h * d_k)
    single = run(p, p.X[0])
    assert single.output.shape == (n, d_model)
    assert torch.allclose(single.output, tr.output[0], rtol=0, atol=1e-12)


@given(problems())
def test_split_then_merge_is_identity_and_merge_equals_concat(p):
    Y = ref.project(p.X, ref.fuse_heads(p.W_Q))  # (B, n, h*d_k)
    heads = ref.split_heads(Y, p.h)
    assert heads.shape == (Y.shape[0], p.h, Y.shape[1], Y.shape[2] // p.h)
    assert torch.equal(ref.merge_heads(heads), Y)
    assert torch.equal(ref.concat_heads(list(heads.unbind(dim=1))), Y)
    assert torch.equal(ref.unfuse_heads(ref.fuse_heads(p.W_Q), p.h), p.W_Q)


@given(problems())
def test_per_head_view_equals_fused_view(p):
    per_head = run(p)
    fused = ref.masked_multihead_attention_fused(
        p.X,
        ref.fuse_heads(p.W_Q),
        ref.fuse_heads(p.W_K),
        ref.fuse_heads(p.W_V),
        p.W_O,
        h=p.h,
    )
    for name in ("Q", "K", "V", "S", "A", "H", "concat", "output"):
        a, b = getattr(per_head, name), getattr(fused, name)
        assert torch.allclose(a, b, rtol=0, atol=1e-12), name


@given(problems(), st.randoms(use_true_random=False))
def test_without_mask_permuting_tokens_permutes_outputs(p, rnd):
    n = p.X.shape[1]
    perm_list = list(range(n))
    rnd.shuffle(perm_list)
    perm = torch.tensor(perm_list)
    out = run(p, causal=False).output
    out_perm = run(p, p.X[:, perm], causal=False).output
    assert torch.allclose(out_perm, out[:, perm], rtol=0, atol=1e-10)


@given(problems(max_n=6))
def test_with_the_mask_permutation_equivariance_breaks(p):
    # The counterpart: with the causal mask, reversing the tokens is not reversing the outputs
    # (unless every token is the same) — the mask is what makes order matter.
    n = p.X.shape[1]
    if n < 2:
        return
    rev = torch.arange(n - 1, -1, -1)
    out = run(p).output
    out_rev = run(p, p.X[:, rev]).output
    assert not torch.allclose(out_rev, out[:, rev], rtol=0, atol=1e-10)


def test_softmax_of_a_masked_row_is_one_zero_zero():
    S = torch.tensor([[2.5, float("-inf"), float("-inf")]], dtype=torch.float64)
    assert ref.softmax_rows(S).tolist() == [[1.0, 0.0, 0.0]]


def test_causal_mask_shape_and_values():
    M = ref.causal_mask(4)
    assert M.shape == (4, 4)
    assert (M.tril() == 0).all()
    assert torch.isneginf(M.triu(1)[torch.ones(4, 4, dtype=torch.bool).triu(1)]).all()


@given(st.floats(0.05, 0.9), st.integers(0, 2**31 - 1))
def test_attention_dropout_zeroes_and_rescales(p, seed):
    A = torch.softmax(torch.randn(4, 6, 6, dtype=torch.float64), dim=-1)
    g = torch.Generator().manual_seed(seed)
    D = ref.attention_dropout(A, p, g)
    kept = D != 0
    assert torch.allclose(D[kept], A[kept] / (1 - p), rtol=1e-12)
    g2 = torch.Generator().manual_seed(seed)
    assert torch.equal(D, ref.attention_dropout(A, p, g2))  # reproducible from the generator
    assert ref.attention_dropout(A, 0.0) is A


def test_attention_dropout_keeps_the_expected_weight():
    A = torch.full((200, 50, 50), 0.02, dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    D = ref.attention_dropout(A, 0.2, g)
    assert abs(D.mean().item() - 0.02) < 0.0005
    assert abs((D == 0).double().mean().item() - 0.2) < 0.01


def test_trace_records_dropout_and_uses_it():
    p = Problem(
        X=torch.randn(1, 5, 4, dtype=torch.float64),
        W_Q=torch.randn(2, 4, 2, dtype=torch.float64),
        W_K=torch.randn(2, 4, 2, dtype=torch.float64),
        W_V=torch.randn(2, 4, 2, dtype=torch.float64),
        W_O=torch.eye(4, dtype=torch.float64),
    )
    g = torch.Generator().manual_seed(1)
    tr = ref.masked_multihead_attention(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, dropout_p=0.5, generator=g)
    assert tr.A_dropped is not None
    assert torch.allclose(tr.H, tr.A_dropped @ tr.V)
    assert run(p).A_dropped is None


@given(problems(dtype=torch.float32))
def test_float32_agrees_with_float64(p):
    tr32 = run(p)
    p64 = Problem(*(x.double() for x in (p.X, p.W_Q, p.W_K, p.W_V, p.W_O)))
    tr64 = run(p64)
    assert tr32.output.dtype == torch.float32
    assert torch.allclose(tr32.output.double(), tr64.output, rtol=1e-4, atol=1e-5)
