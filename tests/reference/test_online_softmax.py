"""FlashAttention's online softmax: equal to the softmax for every tile size, tiles that end
inside masked regions and tiles that a row cannot see at all included; its backward by
recomputation from m and ℓ equal to autograd."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.reference import online_softmax as osm
from attention_ref.reference import windows
from tests.reference.variants import DT, TOL


@st.composite
def heads(draw):
    """One or more heads: Q ``(*batch, n, d_k)``, K, V ``(*batch, n, ·)``, and a mask kind."""
    n = draw(st.integers(1, 9))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,), (2, 2)]))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    spread = draw(st.sampled_from([1.0, 10.0]))  # large scores: the maximum moves a lot

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=DT) * spread

    mask = draw(st.sampled_from(["none", "causal", "window", "alibi"]))
    w = draw(st.integers(1, 3))
    M = {
        "none": None,
        "causal": ref.causal_mask(n),
        "window": windows.sliding_window_mask(n, w),
        "alibi": windows.alibi_mask(windows.alibi_slopes(1), n)[0],
    }[mask]
    return r(*batch, n, d_k), r(*batch, n, d_k), r(*batch, n, d_v), M


def softmax_attention(Q, K, V, M):
    S = ref.scale(ref.scores(Q, K), Q.shape[-1])
    A = ref.softmax_rows(S if M is None else S + M)
    return A, A @ V


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=0, atol=TOL)


@given(heads())
def test_equals_the_softmax_for_every_tile_size(case):
    Q, K, V, M = case
    _, H = softmax_attention(Q, K, V, M)
    S = ref.scale(ref.scores(Q, K), Q.shape[-1])
    L = torch.logsumexp(S if M is None else S + M, dim=-1, keepdim=True)
    for b in range(1, K.shape[-2] + 2):
        trace = osm.online_softmax_attention(Q, K, V, M, tile=b)
        assert close(trace.H, H), b
        assert close(trace.L, L), b


@given(heads())
def test_equals_pytorch_kernel(case):
    Q, K, V, M = case
    H = osm.online_softmax_attention(Q, K, V, M, tile=2).H
    assert close(H, F.scaled_dot_product_attention(Q, K, V, attn_mask=M))


def test_fully_masked_tiles_and_tiles_ending_inside_the_mask():
    """Window of 2 on 6 tokens, tiles of 2: row 5 cannot see tiles 0 and 1 at all (m stays −∞
    and ℓ = 0 after them), row 0's first tile ends inside the mask; the result is exact."""
    gen = torch.Generator().manual_seed(4)
    Q, K, V = (torch.randn(6, 3, generator=gen, dtype=DT) for _ in range(3))
    M = windows.sliding_window_mask(6, 2)
    trace = osm.online_softmax_attention(Q, K, V, M, tile=2)
    first, second, last = trace.steps
    assert math.isinf(first.m[5, 0]) and first.ell[5, 0] == 0 and second.ell[5, 0] == 0
    assert torch.isneginf(first.S_j[0, 1]) and first.P_j[0, 1] == 0  # key 1 is row 0's future
    assert last.ell[5, 0] > 0
    assert close(trace.H, softmax_attention(Q, K, V, M)[1])
    assert not torch.isnan(trace.H).any()


def test_without_the_safe_max_a_fully_masked_tile_gives_nan():
    """Negative control: exp(S − m) with m = −∞ is exp(−∞ + ∞) = NaN."""
    S = torch.tensor([[-math.inf, -math.inf]], dtype=DT)
    m = S.amax(-1, keepdim=True)
    assert torch.isnan(torch.exp(S - m)).all()
    assert (osm.tile_probabilities(S, m) == 0).all()


def test_without_rescaling_the_result_is_wrong():
    """Negative control: dropping α (the factor e^{m − m'}) when the maximum grows."""
    Q = torch.tensor([[1.0, 0.0]], dtype=DT)
    K = torch.tensor([[0.0, 0.0], [4.0, 0.0]], dtype=DT)
    V = torch.tensor([[1.0], [2.0]], dtype=DT)
    good = osm.online_softmax_attention(Q, K, V, tile=1)
    assert good.steps[1].alpha[0, 0] < 1  # the max went from 0 to 4/√2
    ell = O = torch.zeros(1, 1, dtype=DT)
    m = torch.full((1, 1), -math.inf, dtype=DT)
    for j in range(2):
        S_j = osm.tile_scores(Q, K[j : j + 1], None)
        m = osm.running_max(m, S_j)
        P_j = osm.tile_probabilities(S_j, m)
        ell, O = ell + P_j.sum(-1, keepdim=True), O + P_j @ V[j : j + 1]  # no α
    assert not close(O / ell, good.H)
    assert close(good.H, softmax_attention(Q, K, V, None)[1])


def test_the_running_state_is_the_max_and_sum_of_the_keys_read():
    gen = torch.Generator().manual_seed(5)
    Q, K, V = (torch.randn(4, 2, generator=gen, dtype=DT) for _ in range(3))
    trace = osm.online_softmax_attention(Q, K, V, ref.causal_mask(4), tile=3)
    S = ref.scale(ref.scores(Q, K), 2) + ref.causal_mask(4)
    for step in trace.steps:
        seen = S[:, : step.stop]
        m = seen.amax(-1, keepdim=True)
        assert close(step.m, m)
        assert close(step.ell, torch.exp(seen - m).sum(-1, keepdim=True))
        assert close(step.partial, ref.softmax_rows(seen) @ V[: step.stop])


@settings(max_examples=40)
@given(heads(), st.integers(1, 10))
def test_backward_by_recomputation_equals_autograd(case, b):
    Q, K, V, M = case
    leaves = [x.clone().requires_grad_() for x in (Q, K, V)]
    A, H = softmax_attention(*leaves, M)
    gen = torch.Generator().manual_seed(b)
    dH = torch.randn(H.shape, generator=gen, dtype=DT)
    (H * dH).sum().backward()
    trace = osm.online_softmax_attention(Q, K, V, M, tile=b)
    grads = osm.online_softmax_backward(trace, dH)
    for mine, leaf in zip((grads.Q, grads.K, grads.V), leaves, strict=True):
        assert close(mine, leaf.grad)
    # the recomputed weights e^{S_j − L} are the softmax's columns of each tile
    assert close(torch.cat(grads.P, dim=-1), A.detach())


def test_d_is_rowsum_of_dA_times_A():
    """FlashAttention-2's D = rowsum(∂H ⊙ H) equals the softmax backward's rowsum(∂A ⊙ A)."""
    gen = torch.Generator().manual_seed(6)
    Q, K, V = (torch.randn(5, 3, generator=gen, dtype=DT) for _ in range(3))
    dH = torch.randn(5, 3, generator=gen, dtype=DT)
    A, _ = softmax_attention(Q, K, V, ref.causal_mask(5))
    trace = osm.online_softmax_attention(Q, K, V, ref.causal_mask(5), tile=2)
    D = osm.online_softmax_backward(trace, dH).D
    assert close(D, ((dH @ V.T) * A).sum(-1, keepdim=True))


@pytest.mark.parametrize("b", [0, -2, 1.5, True])
def test_bad_tile_sizes_are_refused(b):
    with pytest.raises(ValueError, match="tile size"):
        osm.tile_bounds(4, b)
