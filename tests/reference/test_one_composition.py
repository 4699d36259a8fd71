"""One composition, one trace, one backward (issue 59): `masked_multihead_attention` composes
every attention of the book from (h, g, mask, positions, biases, W_O), the homework's MHA the
case g = h; `attention_backward` is the backward of all of them. Each case here mixes what the
two compositions kept apart before (biases and dropout only with g = h; K/V heads, RoPE and a
per-head mask only without biases), against PyTorch's autograd in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.reference import windows
from tests.reference.variants import DT, TOL, gqa_problems


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=0, atol=TOL)


MASKS = ("causal", "none", "window", "alibi")


def mask_of(kind: str, n: int, h: int) -> dict:
    """The keyword arguments that give the mask ``kind``: the causal one, none, a window of 2,
    ALiBi's per-head biases (``(h, n, n)``)."""
    if kind == "causal":
        return {}
    if kind == "none":
        return {"causal": False}
    if kind == "window":
        return {"M": windows.sliding_window_mask(n, 2)}
    return {"M": windows.alibi_mask(windows.alibi_slopes(h), n)}


@settings(max_examples=40, deadline=None)
@given(
    gqa_problems(even_d_k=True),
    st.sampled_from(MASKS),
    st.booleans(),
    st.booleans(),
)
def test_every_gradient_of_every_mix_equals_autograd(p, mask, rope, biased):
    """K/V heads, RoPE, a per-head mask and every bias at once: each gradient the trace has,
    the biases of the K/V heads included, equals autograd's."""
    gen = torch.Generator().manual_seed(p.seed)
    d_k, d_v = p.W_Q.shape[-1], p.W_V.shape[-1]
    leaves = {"X": p.X, "W_Q": p.W_Q, "W_K": p.W_K, "W_V": p.W_V}
    if p.W_O is not None:
        leaves["W_O"] = p.W_O
    if biased:
        leaves |= {
            "b_Q": torch.randn(p.h, d_k, generator=gen, dtype=DT),
            "b_K": torch.randn(p.g, d_k, generator=gen, dtype=DT),
            "b_V": torch.randn(p.g * d_v, generator=gen, dtype=DT),  # fused: (g*d_v,)
        }
        if p.W_O is not None:
            leaves["b_O"] = torch.randn(p.W_O.shape[1], generator=gen, dtype=DT)
    kw = mask_of(mask, p.n, p.h) | ({"rope_base": 100.0} if rope else {})
    grad = {k: v.clone().requires_grad_() for k, v in leaves.items()}
    Y = ref.masked_multihead_attention(**grad, **kw).output
    G = p.randn(*Y.shape)
    (Y * G).sum().backward()
    trace = ref.masked_multihead_attention(**leaves, **kw)
    assert trace.h == p.h and trace.g == p.g and close(trace.output, Y.detach())
    mine = ref.attention_backward(trace, G)
    for name, leaf in grad.items():
        got = getattr(mine, name)
        assert leaf.grad is not None and got is not None, name
        assert close(got.reshape(leaf.grad.shape), leaf.grad), name


def test_a_wrong_group_sum_of_a_value_bias_is_caught():
    """The control of the bias check above: ∂b_V of each K/V head is its group's sum; one query
    head's share alone is not. (∂b_K is 0: b_K adds q·b_K to a row of scores, and the softmax
    ignores a row's constant.)"""
    gen = torch.Generator().manual_seed(3)
    X = torch.randn(4, 3, generator=gen, dtype=DT)
    W_Q, W_K, W_V = (torch.randn(k, 3, 2, generator=gen, dtype=DT) for k in (4, 2, 2))
    b_K, b_V = (torch.randn(2, 2, generator=gen, dtype=DT).requires_grad_() for _ in range(2))
    ref.masked_multihead_attention(X, W_Q, W_K, W_V, b_K=b_K, b_V=b_V).output.sum().backward()
    mine = ref.attention_backward(
        ref.masked_multihead_attention(X, W_Q, W_K, W_V, b_K=b_K.detach(), b_V=b_V.detach())
    )
    assert mine.b_V is not None and b_V.grad is not None and close(mine.b_V, b_V.grad)
    assert mine.b_K is not None and close(mine.b_K, torch.zeros(2, 2, dtype=DT))
    one_head = ref.bias_grad(mine.V_rep[0::2], per_head=True)  # heads 0 and 2 alone
    assert not close(one_head, b_V.grad)


def test_dropout_with_kv_heads_uses_the_dropped_weights():
    """Dropout, which only the homework's composition had, on a grouped trace: H is the
    dropped weights times the repeated values, and the backward refuses the trace."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(5, 4, generator=gen, dtype=DT)
    W_Q, W_K, W_V = (torch.randn(k, 4, 2, generator=gen, dtype=DT) for k in (4, 1, 1))
    tr = ref.masked_multihead_attention(
        X, W_Q, W_K, W_V, dropout_p=0.5, generator=torch.Generator().manual_seed(1)
    )
    assert tr.A_dropped is not None and not torch.equal(tr.A_dropped, tr.A)
    assert close(tr.H, tr.A_dropped @ tr.V_rep)
    with pytest.raises(ValueError, match="dropout"):
        ref.attention_backward(tr)


def test_the_homeworks_attention_is_the_case_g_equal_h():
    """g = h: no repeat (K_rep is K, V_rep is V), no rotation (Q_rot is Q), γ(i) = i; with
    g < h a head's K is its group's (the control)."""
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(3, 4, generator=gen, dtype=DT)
    W = torch.randn(2, 4, 2, generator=gen, dtype=DT)
    mha = ref.masked_multihead_attention(X, W, W, W)
    assert (mha.h, mha.g, mha.rope_base) == (2, 2, None)
    assert mha.K_rep is mha.K and mha.V_rep is mha.V and mha.Q_rot is mha.Q
    assert torch.equal(mha.head(1)["K"], mha.K[1])
    grads = ref.attention_backward(mha)
    assert torch.equal(grads.head(1)["W_K"], grads.W_K[1])
    grouped = ref.masked_multihead_attention(X, W, W[:1], W[:1])
    assert grouped.K_rep is not grouped.K and grouped.g == 1
    assert torch.equal(grouped.head(1)["K"], grouped.K[0])
    grouped_grads = ref.attention_backward(grouped)
    assert torch.equal(grouped_grads.head(1)["W_K"], grouped_grads.W_K[0])


def test_a_problem_with_biases_has_its_reference():
    """An ``--input`` file's problem with biases is computed by the one composition (before,
    its reference was refused: the grouped composition had no biases)."""
    gen = torch.Generator().manual_seed(4)
    X = torch.randn(3, 4, generator=gen, dtype=DT)
    W_Q, W_K, W_V = (torch.randn(2, 4, 2, generator=gen, dtype=DT) for _ in range(3))
    W_O, b_O = torch.randn(4, 3, generator=gen, dtype=DT), torch.randn(3, generator=gen, dtype=DT)
    b_V = torch.randn(2, 2, generator=gen, dtype=DT)
    tr = ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O, b_V=b_V, b_O=b_O)
    again = ProblemTrace.of_attention(tr).reference()
    assert np.allclose(again.output.numpy(), tr.output.numpy(), rtol=0, atol=1e-12)
    plain = ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O)
    assert not np.allclose(again.output.numpy(), plain.output.numpy(), rtol=0, atol=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"M": torch.zeros(2, 2, dtype=DT)}, ValueError, "M must be (n, n) = (3, 3)"),
        ({"M": torch.zeros(3, 3, 3, dtype=DT)}, ValueError, "or (2, 3, 3)"),
        ({"M": torch.zeros(3, 3, dtype=torch.float32)}, TypeError, "M has dtype"),
        ({"rope_base": 10.0, "positions": torch.arange(4.0)}, ValueError, "positions must be (3,)"),
        ({"b_K": torch.zeros(2, 2, dtype=DT)}, ValueError, "b_K must be (1, 2) per head or (2,)"),
    ],
)
def test_bad_masks_positions_and_kv_biases_are_named(kwargs, error, words):
    X = torch.zeros(3, 4, dtype=DT)
    W_Q, W_K = torch.zeros(2, 4, 2, dtype=DT), torch.zeros(1, 4, 2, dtype=DT)
    with pytest.raises(error) as info:
        ref.masked_multihead_attention(X, W_Q, W_K, W_K, **kwargs)
    assert words in str(info.value)
