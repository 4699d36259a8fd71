"""Biases ``b_Q, b_K, b_V, b_O`` and ``W_O`` of any width (or none), float64 to 1e-10.

The reference is compared with ``torch.nn.Linear`` layers that hold the same numbers
(``linear.weight = W.T``, ``linear.bias = b``), one set per head, and with
``torch.nn.MultiheadAttention(bias=True)``. Shapes are drawn independently: ``d_out`` and
``h*d_v`` need not equal ``d_model``.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given

from attention_ref import reference as ref
from tests.strategies import GeneralProblem, general_problems

TOL = 1e-10
DT = torch.float64


def linear(W: torch.Tensor, b: torch.Tensor | None) -> torch.nn.Linear:
    """An ``nn.Linear`` holding our row-convention ``W`` ``(d_in, d_out)``: weight = Wᵀ."""
    lin = torch.nn.Linear(W.shape[0], W.shape[1], bias=b is not None, dtype=W.dtype)
    with torch.no_grad():
        lin.weight.copy_(W.T)
        if b is not None:
            lin.bias.copy_(b)
    return lin


def torch_output(p: GeneralProblem) -> torch.Tensor:
    """Per head: nn.Linear projections, torch.softmax with a −inf mask; cat; nn.Linear out."""
    heads = []
    with torch.no_grad():
        for i in range(p.h):
            per_head = {"b_Q": p.b_Q, "b_K": p.b_K, "b_V": p.b_V}
            pick = {k: (b[i] if b is not None else None) for k, b in per_head.items()}
            q = linear(p.W_Q[i], pick["b_Q"])(p.X)
            k = linear(p.W_K[i], pick["b_K"])(p.X)
            v = linear(p.W_V[i], pick["b_V"])(p.X)
            s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if p.causal:
                n = s.shape[-1]
                s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
            heads.append(torch.softmax(s, dim=-1) @ v)
        concat = torch.cat(heads, dim=-1)
        return concat if p.W_O is None else linear(p.W_O, p.b_O)(concat)


def reference(p: GeneralProblem) -> ref.AttentionTrace:
    return ref.masked_multihead_attention(
        p.X, p.W_Q, p.W_K, p.W_V, p.W_O, causal=p.causal, **p.biases
    )


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and float((a - b).abs().max()) <= TOL * max(1.0, float(b.abs().max()))


@given(general_problems())
def test_reference_equals_nn_linear_with_biases_for_any_widths(p: GeneralProblem):
    tr = reference(p)
    want = torch_output(p)
    assert close(tr.output, want)
    d_out = p.W_O.shape[1] if p.W_O is not None else p.h * p.W_V.shape[-1]
    assert tr.output.shape == (*p.X.shape[:-1], d_out) and tr.d_out == d_out
    assert (tr.W_O is None) == (p.W_O is None)  # the trace says whether W_O was applied
    for name, b in p.biases.items():
        kept = getattr(tr, name)
        assert (kept is None) == (b is None) and (b is None or torch.equal(kept, b))


@given(general_problems())
def test_fused_view_with_fused_biases_equals_per_head_view(p: GeneralProblem):
    """``W_Q = [W_Q^(1) | … ]`` and ``b_Q = [b_Q^(1) | … ]`` (``(h*d,)``) give the same trace."""
    per_head = reference(p)
    flat = {k: (b.reshape(-1) if b is not None and k != "b_O" else b) for k, b in p.biases.items()}
    fused = ref.masked_multihead_attention_fused(
        p.X,
        *(ref.fuse_heads(W) for W in (p.W_Q, p.W_K, p.W_V)),
        p.W_O,
        h=p.h,
        causal=p.causal,
        **flat,
    )
    assert close(fused.output, per_head.output)
    assert close(fused.Q, per_head.Q) and close(fused.V, per_head.V)
    assert torch.equal(fused.W_Q, p.W_Q)  # the trace keeps the weights per head
    if p.b_Q is not None:
        assert fused.b_Q is not None and torch.equal(fused.b_Q, p.b_Q)


def test_without_W_O_the_output_is_the_concat_for_any_width():
    """rasbt's MultiHeadAttentionWrapper: 2 heads of d_v = 2 on d_model = 3 -> 4 columns."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(6, 3, generator=g, dtype=DT)
    W_Q, W_K, W_V = (torch.randn(2, 3, 2, generator=g, dtype=DT) for _ in range(3))
    tr = ref.masked_multihead_attention(X, W_Q, W_K, W_V)  # h*d_v = 4 != d_model = 3
    assert tr.W_O is None and tr.b_O is None
    assert tr.output.shape == (6, 4)
    assert torch.equal(tr.output, tr.concat)


def test_W_O_may_reduce_the_dimension_and_b_O_is_added_to_every_row():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(5, 4, generator=g, dtype=DT)
    W_Q, W_K, W_V = (torch.randn(2, 4, 2, generator=g, dtype=DT) for _ in range(3))
    W_O, b_O = torch.randn(4, 2, generator=g, dtype=DT), torch.randn(2, generator=g, dtype=DT)
    tr = ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O, b_O=b_O)
    assert tr.output.shape == (5, 2)
    assert close(tr.output, tr.concat @ W_O + b_O)
    assert close(tr.output - b_O, ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O).output)


def test_projection_with_bias_is_nn_linear():
    g = torch.Generator().manual_seed(2)
    X, W, b = (torch.randn(*s, generator=g, dtype=DT) for s in ((4, 3), (3, 5), (5,)))
    with torch.no_grad():
        assert close(ref.project(X, W, b), linear(W, b)(X))
    assert close(ref.project(X, W, b) - b, ref.project(X, W))


@pytest.mark.parametrize("causal", [True, False])
def test_reference_equals_torch_multihead_attention_with_biases(causal: bool):
    """``nn.MultiheadAttention(bias=True)``: in_proj_bias = [b_Q | b_K | b_V], out_proj.bias."""
    g = torch.Generator().manual_seed(3)
    B, n, d, h = 2, 5, 6, 3
    X = torch.randn(B, n, d, generator=g, dtype=DT)
    mha = torch.nn.MultiheadAttention(d, h, bias=True, batch_first=True, dtype=DT)
    with torch.no_grad():
        for prm in (mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight, mha.out_proj.bias):
            prm.copy_(torch.randn(prm.shape, generator=g, dtype=DT))
    W_Q, W_K, W_V = mha.in_proj_weight.detach().T.chunk(3, dim=1)  # (d, 3d) -> 3 × (d, d)
    b_Q, b_K, b_V = mha.in_proj_bias.detach().chunk(3)  # (3d,) -> 3 × (d,), fused layout
    W_O, b_O = mha.out_proj.weight.detach().T, mha.out_proj.bias.detach()
    tr = ref.masked_multihead_attention_fused(
        X, W_Q, W_K, W_V, W_O, h=h, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O, causal=causal
    )
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None
    with torch.no_grad():
        want, _ = mha(X, X, X, attn_mask=blocked, need_weights=False)
    assert close(tr.output, want)


def small() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(4)
    return {
        "X": torch.randn(3, 4, generator=g, dtype=DT),
        "W_Q": torch.randn(2, 4, 2, generator=g, dtype=DT),
        "W_K": torch.randn(2, 4, 2, generator=g, dtype=DT),
        "W_V": torch.randn(2, 4, 3, generator=g, dtype=DT),
    }


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"b_O": torch.zeros(4, dtype=DT)}, ValueError, "W_O is None"),
        (
            {"W_O": torch.zeros(6, 2, dtype=DT), "b_O": torch.zeros(3, dtype=DT)},
            ValueError,
            "b_O must be (d_out,) = (2,)",
        ),
        ({"W_O": torch.zeros(4, 4, dtype=DT)}, ValueError, "h*d_v = 6"),
        ({"b_Q": torch.zeros(3, dtype=DT)}, ValueError, "b_Q must be (2, 2) per head or (4,)"),
        ({"b_V": torch.zeros(2, 2, dtype=DT)}, ValueError, "b_V must be (2, 3)"),
        ({"b_K": torch.zeros(2, 2, dtype=torch.float32)}, TypeError, "b_K has dtype"),
        (
            {"W_O": torch.zeros(6, 2, dtype=DT), "b_O": torch.zeros(2, dtype=torch.float32)},
            TypeError,
            "b_O has dtype",
        ),
    ],
)
def test_bad_biases_and_W_O_are_named(kwargs, error, words):
    m = small()
    W_O = kwargs.pop("W_O", None)
    with pytest.raises(error, match=None) as info:
        ref.masked_multihead_attention(m["X"], m["W_Q"], m["W_K"], m["W_V"], W_O, **kwargs)
    assert words in str(info.value)
