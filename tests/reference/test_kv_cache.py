"""The KV cache: decoding token by token equals the full causal attention row by row (with
GQA, RoPE and windows), and one decode step equals PyTorch's kernel on the cached keys."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref import reference as ref
from attention_ref.reference import kv_cache, windows
from tests.reference.variants import DT, TOL, GQAProblem, gqa_problems


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=0, atol=TOL)


def decode_all(p: GQAProblem, *, prompt: int = 0, **kw) -> tuple[torch.Tensor, kv_cache.KVCache]:
    """Prefill the first ``prompt`` tokens, then decode the others one at a time."""
    batch = tuple(p.X.shape[:-2])
    if prompt:
        cache = kv_cache.prefill(p.X[..., :prompt, :], p.W_K, p.W_V, rope_base=kw.get("rope_base"))
    else:
        cache = kv_cache.empty_cache(p.g, p.W_K.shape[-1], p.W_V.shape[-1], batch=batch)
    rows = []
    for t in range(prompt, p.n):
        step = kv_cache.decode_step(p.X[..., t : t + 1, :], cache, p.W_Q, p.W_K, p.W_V, p.W_O, **kw)
        assert step.position == t and step.cache.length == t + 1
        cache = step.cache
        rows.append(step.output)
    return torch.cat(rows, dim=-2), cache


@settings(max_examples=40)
@given(gqa_problems(even_d_k=True), st.booleans(), st.sampled_from([None, 1, 2, 4]))
def test_decoding_equals_the_full_causal_attention_row_by_row(p, rope, w):
    base = 10000.0 if rope else None
    M = windows.sliding_window_mask(p.n, w) if w is not None else None
    full = ref.masked_multihead_attention(p.X, p.W_Q, p.W_K, p.W_V, p.W_O, rope_base=base, M=M)
    rows, cache = decode_all(p, rope_base=base, window=w)
    assert close(rows, full.output)
    # the cache holds what the full pass computed: g heads of rotated keys, the values
    assert cache.K.shape[-3] == p.g
    assert close(cache.K, full.K_rot) and close(cache.V, full.V)


@settings(max_examples=30)
@given(gqa_problems(), st.data())
def test_prefill_then_decode_equals_the_full_pass(p, data):
    prompt = data.draw(st.integers(1, p.n))
    full = ref.masked_multihead_attention(p.X, p.W_Q, p.W_K, p.W_V, p.W_O)
    if prompt < p.n:
        rows, _ = decode_all(p, prompt=prompt)
        assert close(rows, full.output[..., prompt:, :])


@given(gqa_problems())
def test_one_step_equals_sdpa_on_the_cached_keys(p):
    """One query against every cached key: no mask at all (all keys are in its past)."""
    t = p.n - 1
    cache = kv_cache.prefill(p.X[..., :t, :], p.W_K, p.W_V)
    step = kv_cache.decode_step(p.X[..., t:, :], cache, p.W_Q, p.W_K, p.W_V)
    H = F.scaled_dot_product_attention(step.q, step.cache.K, step.cache.V, enable_gqa=True)
    assert close(step.concat, ref.merge_heads(H))


def test_is_causal_with_one_query_is_the_wrong_mask():
    """Negative control: SDPA's is_causal aligns the mask to the top left, so one query against
    t + 1 keys would see only key 0; the decode step needs no mask."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(4, 3, generator=gen, dtype=DT)
    W = torch.randn(1, 3, 2, generator=gen, dtype=DT)
    cache = kv_cache.prefill(X[:3], W, W)
    step = kv_cache.decode_step(X[3:], cache, W, W, W)
    wrong = F.scaled_dot_product_attention(step.q, step.cache.K, step.cache.V, is_causal=True)
    assert not close(step.concat, ref.merge_heads(wrong))


def test_forgetting_to_append_the_new_key_is_caught():
    """Negative control: attending over the old cache only (the token cannot see itself)."""
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(5, 4, generator=gen, dtype=DT)
    W_Q, W_K, W_V = (torch.randn(2, 4, 2, generator=gen, dtype=DT) for _ in range(3))
    full = ref.masked_multihead_attention(X, W_Q, W_K, W_V)
    cache = kv_cache.prefill(X[:4], W_K, W_V)
    q = ref.project_heads(X[4:], W_Q)
    a = ref.softmax_rows(ref.scale(ref.scores(q, cache.K), 2))
    stale = ref.merge_heads(a @ cache.V)
    assert not close(stale, full.output[4:])
    assert close(kv_cache.decode_step(X[4:], cache, W_Q, W_K, W_V).output, full.output[4:])


def test_the_cache_is_immutable():
    gen = torch.Generator().manual_seed(2)
    X = torch.randn(3, 4, generator=gen, dtype=DT)
    W = torch.randn(1, 4, 2, generator=gen, dtype=DT)
    cache = kv_cache.prefill(X[:2], W, W)
    step = kv_cache.decode_step(X[2:], cache, W, W, W)
    assert cache.length == 2 and step.cache.length == 3


@settings(max_examples=40)
@given(gqa_problems(even_d_k=True), st.booleans(), st.sampled_from([None, 2]))
def test_decode_backward_equals_autograd_of_the_full_pass_on_the_last_row(p, rope, w):
    """A loss on y_t alone: the decode step's gradients equal the full causal pass's, and
    every token whose key and value are cached receives some."""
    base = 10000.0 if rope else None
    t = p.n - 1
    cache = kv_cache.prefill(p.X[..., :t, :], p.W_K, p.W_V, rope_base=base)
    step = kv_cache.decode_step(
        p.X[..., t:, :], cache, p.W_Q, p.W_K, p.W_V, p.W_O, rope_base=base, window=w
    )
    G = p.randn(*step.output.shape)
    mine = kv_cache.decode_step_backward(step, p.X, p.W_Q, p.W_K, p.W_V, p.W_O, G=G, rope_base=base)
    leaves = {
        k: v.clone().requires_grad_()
        for k, v in (("X", p.X), ("W_Q", p.W_Q), ("W_K", p.W_K), ("W_V", p.W_V))
    }
    W_O = p.W_O.clone().requires_grad_() if p.W_O is not None else None
    M = windows.sliding_window_mask(p.n, w) if w is not None else None
    full = ref.masked_multihead_attention(
        leaves["X"], leaves["W_Q"], leaves["W_K"], leaves["W_V"], W_O, rope_base=base, M=M
    ).output
    (full[..., t:, :] * G).sum().backward()
    for name, leaf in leaves.items():
        assert close(getattr(mine, name), leaf.grad), name
    if W_O is not None:
        assert close(mine.W_O, W_O.grad)
