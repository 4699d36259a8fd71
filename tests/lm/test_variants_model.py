"""The Q02 model with today's attention: grouped-query attention (``--kv-heads``: h query heads
sharing g K/V heads), rotary positions (``--pos rope``) and a sliding window (``--window``),
each tested equal to the reference (`attention_ref.reference.gqa`, ``rope``, ``windows``) in
float64; the defaults are the multi-head model of Q02, weight for weight."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref.lm.config import ModelConfig
from attention_ref.lm.model import CausalSelfAttention, CharGPT, count_parameters
from attention_ref.lm.numpy_model import NumpyCharGPT, UnsupportedModelError
from attention_ref.reference import masked_multihead_attention
from attention_ref.reference.windows import sliding_window_mask


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_head": 2, "kv_heads": 3}, "does not divide --n-head 2"),
        ({"n_head": 4, "kv_heads": 3}, "does not divide --n-head 4"),
        ({"kv_heads": -1}, "--kv-heads must be an integer >= 0"),
        ({"kv_heads": True}, "--kv-heads must be an integer >= 0"),
        ({"kv_heads": 1.0}, "--kv-heads must be an integer >= 0"),
        ({"attention": "none", "kv_heads": 1}, "for multihead attention, not --attention none"),
        ({"attention": "uniform", "kv_heads": 1}, "not --attention uniform"),
        ({"pos": "sinusoidal"}, "--pos must be one of learned, rope"),
        ({"pos": "rope", "n_embd": 6, "n_head": 2}, "d_k = 3 must be even"),
        ({"pos": "rope", "attention": "none"}, "--pos rope is for multihead attention"),
        ({"window": -1}, "--window must be an integer >= 0"),
        ({"window": True}, "--window must be an integer >= 0"),
        ({"window": 4, "attention": "uniform"}, "--window is for multihead attention"),
    ],
)
def test_options_that_cannot_make_a_model_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**change)


def test_g_equal_to_h_is_the_q02_model_weight_for_weight():
    torch.manual_seed(0)
    default = CharGPT(ModelConfig()).state_dict()
    torch.manual_seed(0)
    explicit = CharGPT(ModelConfig(kv_heads=2)).state_dict()
    assert default.keys() == explicit.keys()
    assert all(torch.equal(default[k], explicit[k]) for k in default)


@pytest.mark.parametrize(("h", "g"), [(4, 4), (4, 2), (4, 1), (2, 1)])
def test_fewer_kv_heads_take_out_their_weights(h, g):
    """Each K/V head fewer takes out its W_K and W_V columns and biases, in every layer."""
    cfg = ModelConfig(n_embd=16, n_head=h, kv_heads=g, n_layer=3)
    mha = count_parameters(CharGPT(ModelConfig(n_embd=16, n_head=h, n_layer=3)))
    d, d_k = cfg.n_embd, cfg.d_k
    assert count_parameters(CharGPT(cfg)) == mha - cfg.n_layer * 2 * (h - g) * d_k * (d + 1)


def reference_of(layer: CausalSelfAttention, x: torch.Tensor):
    """The layer's weights in the reference's row convention (``W = linear.weight.T``), and
    its output by `masked_multihead_attention` (the biases are zero here: the reference has none),
    with the layer's RoPE and window."""
    h, g, d_k = layer.n_head, layer.n_kv_head, layer.d_k
    n, C = x.shape
    W = layer.qkv.weight.T  # (C, C + 2 g d_k)
    W_Q = W[:, :C].reshape(C, h, d_k).transpose(0, 1)  # (C, h d_k) -> (h, C, d_k)
    W_K = W[:, C : C + g * d_k].reshape(C, g, d_k).transpose(0, 1)  # -> (g, C, d_k)
    W_V = W[:, C + g * d_k :].reshape(C, g, d_k).transpose(0, 1)
    M = sliding_window_mask(n, layer.window) if layer.window else None
    rope = 10000.0 if layer.rope else None
    return masked_multihead_attention(x, W_Q, W_K, W_V, layer.proj.weight.T, M=M, rope_base=rope)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.sampled_from([(4, 4), (4, 2), (4, 1), (2, 1), (6, 3), (6, 2)]),
    d_k=st.sampled_from([2, 4]),
    T=st.integers(1, 7),
    pos=st.sampled_from(["learned", "rope"]),
    window=st.integers(0, 4),
    seed=st.integers(0, 2**16),
)
def test_the_layer_equals_the_reference_in_float64(shape, d_k, T, pos, window, seed):
    h, g = shape
    torch.manual_seed(seed)
    cfg = ModelConfig(n_embd=h * d_k, n_head=h, kv_heads=g, pos=pos, window=window)
    layer = CausalSelfAttention(cfg).double()
    with torch.no_grad():
        layer.qkv.bias.zero_()
        layer.proj.bias.zero_()
    x = torch.randn(1, T, h * d_k, dtype=torch.float64)
    trace = reference_of(layer, x[0])
    with torch.no_grad():
        torch.testing.assert_close(layer(x)[0], trace.output, rtol=0, atol=1e-10)
        torch.testing.assert_close(layer.attention_weights(x)[0], trace.A, rtol=0, atol=1e-10)


def test_the_reference_check_fails_with_the_groups_in_the_wrong_order():
    """The control: K/V heads repeated as a tile (head i reading K/V head i mod g) instead of
    in blocks (head i reading ⌊i g/h⌋) is a different layer, and the comparison sees it."""
    torch.manual_seed(3)
    layer = CausalSelfAttention(ModelConfig(n_embd=8, n_head=4, kv_heads=2)).double()
    with torch.no_grad():
        layer.qkv.bias.zero_()
        layer.proj.bias.zero_()
    x = torch.randn(5, 8, dtype=torch.float64)
    C, g, d_k = 8, 2, 2
    W = layer.qkv.weight.T
    W_Q = W[:, :C].reshape(C, 4, d_k).transpose(0, 1)
    W_K = W[:, C : C + g * d_k].reshape(C, g, d_k).transpose(0, 1)
    W_V = W[:, C + g * d_k :].reshape(C, g, d_k).transpose(0, 1)
    tiled = masked_multihead_attention(
        x, W_Q, W_K[[0, 1, 0, 1]], W_V[[0, 1, 0, 1]], layer.proj.weight.T
    )
    with torch.no_grad():
        assert not torch.allclose(layer(x[None])[0], tiled.output, atol=1e-6)


@pytest.mark.parametrize(
    ("g", "pos", "window"),
    [(1, "learned", 0), (2, "learned", 0), (4, "rope", 0), (4, "learned", 3), (2, "rope", 2)],
)
def test_generation_with_the_cache_equals_the_whole_window(g, pos, window):
    """The KV cache keeps g heads (the memory GQA saves), and decoding against it gives the
    logits of the whole causal window, position by position (RoPE's positions continue, the
    sliding window keeps sliding)."""
    torch.manual_seed(1)
    cfg = ModelConfig(
        vocab_size=11,
        n_embd=16,
        n_head=4,
        kv_heads=g,
        n_layer=2,
        block_size=9,
        pos=pos,
        window=window,
    )
    model = CharGPT(cfg).double().eval()
    idx = torch.randint(0, 11, (2, 9))
    with torch.no_grad():
        whole, _ = model(idx)
        cache = model.new_cache()
        first, _ = model(idx[:, :4], cache=cache)
        steps = [first] + [model(idx[:, t : t + 1], cache=cache)[0] for t in range(4, 9)]
    assert cache.layers[0].k is not None and cache.layers[0].k.shape == (2, g, 9, 4)
    torch.testing.assert_close(torch.cat(steps, dim=1), whole, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"kv_heads": 2}, "kv_heads = 2"),
        ({"pos": "rope"}, "pos = 'rope'"),
        ({"window": 3}, "window = 3"),
    ],
)
def test_the_numpy_twin_leaves_the_variants_to_torch(change, said):
    """``attnref sample`` without torch computes only the models it knows: a variant is
    refused in one line (and sampled with torch), the default is computed."""
    cfg = ModelConfig(vocab_size=11, n_embd=16, n_head=4, block_size=8, **change)
    state = {k: v.numpy() for k, v in CharGPT(cfg).state_dict().items()}
    with pytest.raises(UnsupportedModelError, match=said):
        NumpyCharGPT(cfg, state)
    plain = ModelConfig(vocab_size=11, n_embd=16, n_head=4, block_size=8)
    NumpyCharGPT(plain, {k: v.numpy() for k, v in CharGPT(plain).state_dict().items()})


def test_rope_takes_out_the_position_table():
    cfg = ModelConfig(pos="rope")
    learned = count_parameters(CharGPT(ModelConfig()))
    assert count_parameters(CharGPT(cfg)) == learned - cfg.block_size * cfg.n_embd
    assert CharGPT(cfg).pos_emb is None


def test_rope_scores_depend_only_on_the_distance():
    """The model's RoPE keeps RoFormer's property: a query and a key moved by the same number
    of positions give the same score (here: every weight the same when the same characters sit
    at shifted positions, with a window so that only relative positions are seen)."""
    torch.manual_seed(5)
    layer = CausalSelfAttention(ModelConfig(n_embd=8, n_head=2, pos="rope", window=2)).double()
    x = torch.randn(1, 6, 8, dtype=torch.float64)
    A = layer.attention_weights(x)  # (1, h, 6, 6)
    shifted = layer.attention_weights(torch.cat([torch.randn(1, 3, 8, dtype=torch.float64), x], 1))
    torch.testing.assert_close(shifted[0, :, 4:, 3:], A[0, :, 1:, :], rtol=0, atol=1e-10)
