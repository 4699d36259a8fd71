"""Equivalence in float64 to 1e-10: the reference ≡ PyTorch's kernels ≡ a plain loop ≡ the model.

Weights are copied from one implementation into the other. ``nn.Linear`` and
``nn.MultiheadAttention`` store ``(out, in)`` matrices, so ``W = linear.weight.T``.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given

from attention_ref import reference as ref
from attention_ref.lm.model import CausalSelfAttention, ModelConfig
from tests.strategies import Problem, problems

TOL = 1e-10


def reference_output(p: Problem, causal: bool = True) -> torch.Tensor:
    return ref.masked_multihead_attention(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, causal=causal).output


def sdpa_output(p: Problem) -> torch.Tensor:
    """``F.scaled_dot_product_attention(is_causal=True)`` on the fused projections."""
    q = ref.split_heads(p.X @ ref.fuse_heads(p.W_Q), p.h)  # (B, n, d) -> (B, h, n, d_k)
    k = ref.split_heads(p.X @ ref.fuse_heads(p.W_K), p.h)
    v = ref.split_heads(p.X @ ref.fuse_heads(p.W_V), p.h)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, n, d_k)
    return ref.merge_heads(y) @ p.W_O


def torch_mha_output(p: Problem) -> torch.Tensor:
    """``torch.nn.MultiheadAttention`` with the reference's weights copied in."""
    _, n, d = p.X.shape
    mha = torch.nn.MultiheadAttention(d, p.h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        W_in = torch.cat([ref.fuse_heads(W) for W in (p.W_Q, p.W_K, p.W_V)], dim=1)  # (d, 3d)
        mha.in_proj_weight.copy_(W_in.T)  # nn stores (3d, d)
        mha.out_proj.weight.copy_(p.W_O.T)
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1)  # True = may not attend
    out, _ = mha(p.X, p.X, p.X, attn_mask=blocked, need_weights=False)
    return out


def loop_output(p: Problem) -> torch.Tensor:
    """A plain loop, per sequence, per head, per token: only tokens j <= t are ever summed."""
    B, n, _ = p.X.shape
    out = torch.zeros(B, n, p.W_O.shape[1], dtype=p.X.dtype)
    for b in range(B):
        heads = []
        for i in range(p.h):
            Q, K, V = p.X[b] @ p.W_Q[i], p.X[b] @ p.W_K[i], p.X[b] @ p.W_V[i]
            d_k = Q.shape[1]
            H = torch.zeros(n, V.shape[1], dtype=p.X.dtype)
            for t in range(n):
                s = [float(Q[t] @ K[j]) / math.sqrt(d_k) for j in range(t + 1)]
                m = max(s)
                e = [math.exp(x - m) for x in s]
                z = sum(e)
                for j in range(t + 1):
                    H[t] += (e[j] / z) * V[j]
            heads.append(H)
        out[b] = torch.cat(heads, dim=1) @ p.W_O
    return out


@given(problems())
def test_reference_equals_scaled_dot_product_attention(p):
    assert torch.allclose(reference_output(p), sdpa_output(p), rtol=0, atol=TOL)


@given(problems())
def test_reference_equals_torch_multihead_attention(p):
    assert torch.allclose(reference_output(p), torch_mha_output(p), rtol=0, atol=TOL)


@given(problems(max_n=6, max_batch=2))
def test_reference_equals_a_plain_per_head_loop(p):
    assert torch.allclose(reference_output(p), loop_output(p), rtol=0, atol=TOL)


def test_the_comparisons_can_fail():
    # A wrong scale or a missing mask must be caught at this tolerance.
    g = torch.Generator().manual_seed(0)
    p = Problem(
        *(
            torch.randn(*s, generator=g, dtype=torch.float64)
            for s in ((2, 5, 4), (2, 4, 2), (2, 4, 2), (2, 4, 2), (4, 4))
        )
    )
    assert not torch.allclose(reference_output(p, causal=False), sdpa_output(p), atol=TOL)
    wrong = Problem(p.X, p.W_Q * 2, p.W_K, p.W_V, p.W_O)
    assert not torch.allclose(reference_output(wrong), loop_output(p), atol=TOL)


@pytest.mark.parametrize(("n_embd", "n_head", "T"), [(8, 2, 5), (12, 3, 7), (16, 4, 1), (6, 1, 4)])
def test_model_fast_path_equals_reference(n_embd, n_head, T):
    torch.manual_seed(n_embd * 100 + n_head)
    cfg = ModelConfig(n_embd=n_embd, n_head=n_head, block_size=16)
    attn = CausalSelfAttention(cfg).double().eval()
    with torch.no_grad():
        attn.qkv.bias.zero_()  # the reference has no input-projection bias
    x = torch.randn(3, T, n_embd, dtype=torch.float64)
    W = attn.qkv.weight.detach().T  # (d, 3d) in the row convention
    W_Q, W_K, W_V = W.split(n_embd, dim=1)
    trace = ref.masked_multihead_attention_fused(
        x, W_Q, W_K, W_V, attn.proj.weight.detach().T, b_O=attn.proj.bias.detach(), h=n_head
    )
    with torch.no_grad():
        fast = attn(x)
        A = attn.attention_weights(x)
    assert torch.allclose(fast, trace.output, rtol=0, atol=TOL)
    assert torch.allclose(A, trace.A, rtol=0, atol=TOL)
