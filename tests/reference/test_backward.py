"""The backward pass by hand ≡ ``torch.autograd`` in float64 to 1e-10, and its properties.

Each gradient of `attention_ref.reference.attention_backward` is compared with the gradient
autograd computes through the reference forward (intermediates kept with ``retain_grad``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.trace import t

TOL = 1e-10
DT = torch.float64


@dataclass(frozen=True)
class Case:
    """A random problem: maybe batched, any d_k, d_v, d_out; maybe biases; an upstream G."""

    X: torch.Tensor
    W_Q: torch.Tensor  # (h, d_model, d_k)
    W_K: torch.Tensor
    W_V: torch.Tensor  # (h, d_model, d_v)
    W_O: torch.Tensor | None  # (h*d_v, d_out); None: the output is the concat
    b_Q: torch.Tensor | None  # noqa: N815  (h, d_k)
    b_K: torch.Tensor | None  # noqa: N815
    b_V: torch.Tensor | None  # noqa: N815  (h, d_v)
    b_O: torch.Tensor | None  # noqa: N815  (d_out,)
    G: torch.Tensor
    causal: bool


@st.composite
def cases(draw, *, bias: bool | None = None) -> Case:
    h = draw(st.integers(1, 3))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    d_model, d_out = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    n = draw(st.integers(1, 6))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    causal = draw(st.booleans())
    with_bias = draw(st.booleans()) if bias is None else bias
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=DT)

    no_W_O = draw(st.booleans()) and not with_bias
    return Case(
        X=r(*batch, n, d_model),
        W_Q=r(h, d_model, d_k),
        W_K=r(h, d_model, d_k),
        W_V=r(h, d_model, d_v),
        W_O=None if no_W_O else r(h * d_v, d_out),
        b_Q=r(h, d_k) if with_bias else None,
        b_K=r(h, d_k) if with_bias else None,
        b_V=r(h, d_v) if with_bias else None,
        b_O=r(d_out) if with_bias else None,
        G=r(*batch, n, h * d_v if no_W_O else d_out),
        causal=causal,
    )


BIASES = ("b_Q", "b_K", "b_V", "b_O")


def autograd(c: Case) -> tuple[ref.AttentionTrace, dict[str, torch.Tensor]]:
    """The forward with every input a leaf and every intermediate kept; ⟨G, output⟩ backward."""
    names = ("X", "W_Q", "W_K", "W_V", "W_O", *BIASES)
    leaves = {k: getattr(c, k).clone().requires_grad_() for k in names if getattr(c, k) is not None}
    tr = ref.masked_multihead_attention(
        leaves["X"],
        leaves["W_Q"],
        leaves["W_K"],
        leaves["W_V"],
        leaves.get("W_O"),
        **{b: leaves.get(b) for b in BIASES},
        causal=c.causal,
    )
    inner = ("Q", "K", "V", "QKt", "S", "S_masked", "A", "H", "concat")
    for name in inner:
        getattr(tr, name).retain_grad()
    (tr.output * c.G).sum().backward()
    grads = {name: leaves[name].grad for name in leaves}
    grads |= {name: getattr(tr, name).grad for name in inner}
    return tr, grads


def by_hand(c: Case) -> ref.GradientTrace:
    tr = ref.masked_multihead_attention(
        c.X, c.W_Q, c.W_K, c.W_V, c.W_O, causal=c.causal, **{b: getattr(c, b) for b in BIASES}
    )
    return ref.attention_backward(tr, c.G)


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and float((a - b).abs().max()) <= TOL * max(1.0, float(b.abs().max()))


@given(cases())
def test_every_gradient_equals_autograd(c: Case):
    _, want = autograd(c)
    got = by_hand(c)
    for name, w in want.items():
        mine = getattr(got, name)
        assert mine is not None and close(mine, w), name
    for name in ("W_O", *BIASES):  # no parameter, no gradient
        assert (getattr(got, name) is None) == (getattr(c, name) is None), name


@given(cases(bias=False))
def test_the_three_paths_of_dX_add_up_and_each_is_its_own_gradient(c: Case):
    """∂X = ∂X_Q + ∂X_K + ∂X_V, and each path is autograd's gradient with the others detached."""
    got = by_hand(c)
    assert torch.equal(got.X, got.X_from_Q + got.X_from_K + got.X_from_V)
    for role in ("Q", "K", "V"):
        X = c.X.clone().requires_grad_()
        Xs = {r: (X if r == role else c.X) for r in ("Q", "K", "V")}
        Q, K, V = (
            ref.project_heads(Xs[r], W) for r, W in zip("QKV", (c.W_Q, c.W_K, c.W_V), strict=True)
        )
        S = ref.scale(ref.scores(Q, K), Q.shape[-1])
        if c.causal:
            S = ref.add_mask(S, ref.causal_mask(S.shape[-1]))
        out = ref.merge_heads(ref.weighted_sum(ref.softmax_rows(S), V))
        out = out @ c.W_O if c.W_O is not None else out
        (out * c.G).sum().backward()
        assert close(getattr(got, f"X_from_{role}"), X.grad), role


@given(cases(bias=True))
def test_fused_view_gradients_equal_autograd_on_fused_weights(c: Case):
    """Seeds 001/002's view: ∂W_Q = Xᵀ [∂Q⁽¹⁾ | … | ∂Q⁽ʰ⁾], ∂b_Q the fused column sums."""
    h = c.W_Q.shape[0]
    fused = [ref.fuse_heads(W).clone().requires_grad_() for W in (c.W_Q, c.W_K, c.W_V)]
    biases = [b.reshape(-1).clone().requires_grad_() for b in (c.b_Q, c.b_K, c.b_V)]
    tr = ref.masked_multihead_attention_fused(
        c.X,
        *fused,
        c.W_O,
        h=h,
        b_Q=biases[0],
        b_K=biases[1],
        b_V=biases[2],
        b_O=c.b_O,
        causal=c.causal,
    )
    (tr.output * c.G).sum().backward()
    with torch.no_grad():
        got = ref.attention_backward(tr, c.G)
    for role, W, b in zip("QKV", fused, biases, strict=True):
        assert close(got.fused(role), W.grad), role
        dQ = {"Q": got.Q, "K": got.K, "V": got.V}[role]
        assert close(ref.weight_grad_fused(c.X, dQ), W.grad), role
        assert close(getattr(got, f"b_{role}").reshape(-1), b.grad), role


@given(cases(bias=False))
def test_masked_entries_get_exactly_zero_gradient(c: Case):
    """Above the diagonal ∂S̃ and ∂S are 0.0 exactly (not merely small), for any G."""
    c = Case(**{**c.__dict__, "causal": True, "G": c.G * 1e6})
    got = by_hand(c)
    n = c.X.shape[-2]
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
    for grad in (got.S_masked, got.S, got.QKt):
        assert torch.equal(grad[..., blocked], torch.zeros_like(grad[..., blocked]))


def test_without_the_mask_the_same_entries_get_gradient():
    """Negative control for the zero-gradient property: the entries above are not 0 by chance."""
    tr = life.life_trace()
    W = (t(life.LIFE_W_Q), t(life.LIFE_W_K), t(life.LIFE_W_V))
    plain = ref.masked_multihead_attention(tr.X, *W, tr.W_O, causal=False)
    G = torch.randn(tr.output.shape, generator=torch.Generator().manual_seed(0), dtype=DT)
    blocked = torch.ones(3, 3, dtype=torch.bool).triu(1)
    assert (ref.attention_backward(plain, G).S[..., blocked] != 0).all()
    assert (ref.attention_backward(tr, G).S[..., blocked] == 0).all()


def test_finite_differences_on_the_worked_example():
    """Central differences of L = ⟨G, output⟩ on seed 000's example match every ∂W and ∂X."""
    X, W_O = t(life.LIFE_X), t(life.LIFE_W_O)
    W = {"W_Q": t(life.LIFE_W_Q), "W_K": t(life.LIFE_W_K), "W_V": t(life.LIFE_W_V)}
    G = torch.randn(3, 4, generator=torch.Generator().manual_seed(1), dtype=DT)

    def loss(X, W_Q, W_K, W_V, W_O) -> float:
        out = ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O).output
        return float((out * G).sum())

    args = {"X": X, **W, "W_O": W_O}
    got = ref.attention_backward(ref.masked_multihead_attention(X, *W.values(), W_O), G)
    eps, checked = 1e-6, 0
    for name, value in args.items():
        grad = getattr(got, name)
        for idx in torch.cartesian_prod(*(torch.arange(s) for s in value.shape)).reshape(
            -1, value.dim()
        ):
            ix = tuple(idx.tolist())
            plus, minus = value.clone(), value.clone()
            plus[ix] += eps
            minus[ix] -= eps
            fd = (loss(**{**args, name: plus}) - loss(**{**args, name: minus})) / (2 * eps)
            assert abs(fd - float(grad[ix])) < 1e-6, (name, ix, fd, float(grad[ix]))
            checked += 1
    assert checked == 12 + 3 * 16 + 16  # X, W_Q/W_K/W_V (2 heads × 4 × 2 each), W_O


def test_default_upstream_gradient_is_all_ones():
    """G = None means L = Σ output: the same as passing ones."""
    tr = life.life_trace()
    a = ref.attention_backward(tr)
    b = ref.attention_backward(tr, torch.ones(3, 4, dtype=DT))
    assert torch.equal(a.output, torch.ones(3, 4, dtype=DT)) and torch.equal(a.X, b.X)


def test_softmax_backward_removes_a_shift_of_the_row():
    """Adding the same number to a row of ∂A changes nothing: softmax ignores row shifts."""
    g = torch.Generator().manual_seed(2)
    A = ref.softmax_rows(torch.randn(4, 5, generator=g, dtype=DT))
    dA = torch.randn(4, 5, generator=g, dtype=DT)
    shifted = dA + torch.arange(4, dtype=DT).unsqueeze(1) * 10
    assert close(ref.softmax_rows_backward(A, shifted), ref.softmax_rows_backward(A, dA))
    assert close(ref.softmax_rows_backward(A, dA).sum(-1), torch.zeros(4, dtype=DT))


def test_bad_calls_say_what_is_wrong():
    tr = life.life_trace()
    W = (t(life.LIFE_W_Q), t(life.LIFE_W_K), t(life.LIFE_W_V))
    with pytest.raises(ValueError, match="shape of the output"):
        ref.attention_backward(tr, torch.ones(3, 3, dtype=DT))
    with pytest.raises(TypeError, match="dtype"):
        ref.attention_backward(tr, torch.ones(3, 4, dtype=torch.float32))
    dropped = ref.masked_multihead_attention(
        tr.X, *W, tr.W_O, dropout_p=0.5, generator=torch.Generator().manual_seed(0)
    )
    with pytest.raises(ValueError, match="dropout"):
        ref.attention_backward(dropped)
