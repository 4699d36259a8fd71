"""GQA's weights and the KV cache's bytes, counted from shapes: equal to the tensors the
reference builds, to MHA's counts when g = h; and the params path imports no torch."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from attention_ref import reference as ref
from attention_ref.reference import kv_cache
from attention_ref.reference.params import (
    DTYPE_BYTES,
    attention_params,
    dtype_bytes,
    gqa_params,
    kv_cache_params,
)


@pytest.mark.parametrize(("d_model", "h"), [(128, 2), (12, 3), (64, 8)])
@pytest.mark.parametrize("bias", [True, False])
def test_g_equal_h_counts_as_multi_head_attention(d_model, h, bias):
    p = gqa_params(d_model, h, h, bias=bias)
    assert p.kind == "MHA" and p.total == attention_params(d_model, h, bias=bias).total


@pytest.mark.parametrize(("d_model", "h", "g", "d_k"), [(16, 4, 2, 4), (16, 4, 1, 3), (8, 6, 3, 2)])
def test_counts_are_the_numbers_of_the_reference_tensors(d_model, h, g, d_k):
    p = gqa_params(d_model, h, g, d_k=d_k, bias=False)
    W_Q = torch.zeros(h, d_model, d_k)
    W_K, W_V = torch.zeros(g, d_model, d_k), torch.zeros(g, d_model, d_k)
    W_O = torch.zeros(h * d_k, d_model)
    trace = ref.masked_multihead_attention(torch.zeros(3, d_model), W_Q, W_K, W_V, W_O)
    assert p.total == sum(t.numel() for t in (trace.W_Q, trace.W_K, trace.W_V, W_O))
    assert p.key_value == W_K.numel() + W_V.numel()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_cache_bytes_per_token_are_the_bytes_of_the_cached_tensors(dtype):
    """2·L·g·d_k·b equals L layers of the prefill's K and V tensors, per token."""
    d_model, h, g, d_k, n, layers = 16, 4, 2, 4, 5, 3
    gen = torch.Generator().manual_seed(0)
    W_K = torch.randn(g, d_model, d_k, generator=gen).to(dtype)
    cache = kv_cache.prefill(torch.zeros(n, d_model, dtype=dtype), W_K, W_K)
    stored = layers * sum(t.numel() * t.element_size() for t in (cache.K, cache.V))
    name = str(dtype).removeprefix("torch.")
    kv = kv_cache_params(gqa_params(d_model, h, g, d_k=d_k), layers=layers, context=n, dtype=name)
    assert kv.bytes_per_sequence == stored and kv.bytes_per_token * n == stored


def test_fewer_kv_heads_mean_proportionally_fewer_cache_bytes():
    sizes = {
        g: kv_cache_params(
            gqa_params(4096, 32, g, d_k=128, bias=False), layers=32, context=8192, dtype="bf16"
        )
        for g in (32, 8, 1)
    }
    assert sizes[32].bytes_per_token == 32 * sizes[1].bytes_per_token
    assert sizes[32].bytes_per_token == 4 * sizes[8].bytes_per_token
    assert sizes[8].bytes_per_sequence == 2 * 32 * 8 * 128 * 2 * 8192  # 1 GiB
    assert sizes[8].layer.kind == "GQA" and sizes[1].layer.kind == "MQA"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((16, 4, 3), "must divide"),
        ((16, 4, 0), "K/V heads g must be between"),
        ((10, 4, 2), "not divisible by h=4"),
        ((16, True, 1), "number of heads h"),
    ],
)
def test_bad_sizes_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        gqa_params(*args)


def test_unknown_dtype_lists_the_names():
    with pytest.raises(ValueError, match="choose one of: float64"):
        dtype_bytes("int4")
    assert set(DTYPE_BYTES.values()) == {8, 4, 2, 1}


def test_the_params_module_and_the_package_import_no_torch():
    code = (
        "import sys, attention_ref.reference, attention_ref.reference.params; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_reexported_name_still_brings_torch():
    """The probe above can fail: the first ``ref.scores`` imports torch."""
    code = (
        "import sys; from attention_ref import reference as ref; ref.scores; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_the_lazy_names_are_the_modules_names():
    from attention_ref import reference as ref
    from attention_ref.reference import attention, backward, multihead, trace

    modules = (attention, backward, multihead, trace)
    assert ref.__all__ == [name for m in modules for name in m.__all__]
    for module in (attention, backward, multihead):
        assert all(getattr(ref, name) is getattr(module, name) for name in module.__all__)
    assert ref.rope.apply_rope is not None and "apply_rope" not in ref.__all__
    with pytest.raises(AttributeError):
        _ = ref.no_such_name
