"""bf16 autocast: where ``auto`` picks it, and how far it may move the numbers (its tolerance).

The fast path is proven equal to the reference in fp32/fp64 (tests/reference); here bf16 (8 bits
of mantissa, a relative step of 2^-8 ≈ 0.4 %) gets its own, looser, tolerance, and a check that
the tolerance still catches a real mistake.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import attention_ref.reference as ref
from attention_ref.lm.model import CausalSelfAttention, CharGPT, ModelConfig
from attention_ref.lm.train import (
    Callbacks,
    autocast,
    cpu_flags,
    make_optimizer,
    resolve_precision,
    train,
    training_step,
)
from tests.configs import tiny

CPU = torch.device("cpu")
BF16_TOL = 3e-2  # a few bf16 steps on outputs of order 1


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512_bf16\n\nprocessor\t: 1\n")
    assert cpu_flags(info) == {"fpu", "sse2", "avx2", "avx512_bf16"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


@pytest.mark.parametrize(
    ("name", "flags", "expected"),
    [
        ("auto", {"avx2", "avx512_bf16"}, "bf16"),
        ("auto", {"avx2", "amx_bf16", "amx_tile"}, "bf16"),
        ("auto", {"avx2", "avx512f"}, "fp32"),  # bf16 would be emulated: slower, keep fp32
        ("auto", set(), "fp32"),
        ("fp32", {"avx512_bf16"}, "fp32"),  # an explicit choice is honoured
        ("bf16", set(), "bf16"),
    ],
)
def test_auto_takes_bf16_only_where_the_cpu_has_it(name, flags, expected):
    assert resolve_precision(name, CPU, frozenset(flags)) == expected


def test_auto_elsewhere():
    """CUDA: bf16 where the GPU computes it (``torch.cuda.is_bf16_supported()``, passed here
    as ``cuda_bf16``), fp32 on an older one; MPS: fp32; whatever the host CPU's flags. The
    device is only named, so no GPU is needed to check the rule."""
    cuda, mps, host = torch.device("cuda"), torch.device("mps"), frozenset({"avx512_bf16"})
    assert resolve_precision("auto", cuda, host, cuda_bf16=True) == "bf16"
    assert resolve_precision("auto", cuda, host, cuda_bf16=False) == "fp32"
    assert resolve_precision("auto", mps, host) == "fp32"
    for device in (mps, cuda):
        assert resolve_precision("bf16", device) == "bf16"
        assert resolve_precision("fp32", device, cuda_bf16=True) == "fp32"
    with pytest.raises(ValueError, match="--precision must be one of auto, fp32, bf16"):
        resolve_precision("fp16", CPU)


def test_bad_precision_fails_where_it_enters():
    with pytest.raises(ValueError, match="--precision must be one of auto, fp32, bf16, got 'fp8'"):
        tiny(precision="fp8")
    assert tiny(precision="bf16").to_flat()["precision"] == "bf16"


def attention_pair(n_embd: int = 16, n_head: int = 2, T: int = 9):
    torch.manual_seed(5)
    attn = CausalSelfAttention(ModelConfig(n_embd=n_embd, n_head=n_head, block_size=16)).eval()
    with torch.no_grad():
        attn.qkv.bias.zero_()  # the reference has no input-projection bias
    x = torch.randn(2, T, n_embd)
    W = attn.qkv.weight.detach().T.double()  # (d, 3d) in the row convention
    W_Q, W_K, W_V = W.split(n_embd, dim=1)
    W_O, b_O = attn.proj.weight.detach().T.double(), attn.proj.bias.detach().double()
    return attn, x, (W_Q, W_K, W_V, W_O, b_O, n_head)


@pytest.mark.parametrize("attention_in_fp32", [True, False])
def test_bf16_fast_path_within_tolerance_of_the_fp64_reference(monkeypatch, attention_in_fp32):
    # on the CPU the attention kernel itself runs in fp32 (the model's rule) or in bf16
    monkeypatch.setattr(CausalSelfAttention, "cpu_bf16_attention_in_fp32", attention_in_fp32)
    attn, x, (W_Q, W_K, W_V, W_O, b_O, h) = attention_pair()
    expected = ref.masked_multihead_attention_fused(
        x.double(), W_Q, W_K, W_V, W_O, b_O=b_O, h=h
    ).output
    with torch.no_grad(), autocast(CPU, "bf16"):
        fast = attn(x)
    assert fast.dtype == torch.bfloat16  # autocast really ran the projections in bf16
    err = (fast.double() - expected).abs().max().item()
    assert 0 < err < BF16_TOL  # not bit-equal (it is bf16), but close
    with torch.no_grad():
        fp32 = attn(x)
    assert (fp32.double() - expected).abs().max().item() < 1e-5  # fp32 stays tight
    # the tolerance still catches a mistake: the scores without the 1/√d_k scale
    unscaled = ref.masked_multihead_attention_fused(
        x.double(), W_Q * (W_Q.shape[1] // h) ** 0.5, W_K, W_V, W_O, b_O=b_O, h=h
    ).output
    assert (unscaled - expected).abs().max().item() > BF16_TOL


def test_bf16_loss_and_gradients_close_to_fp32():
    torch.manual_seed(0)
    model = CharGPT(ModelConfig(vocab_size=65, n_embd=32, n_layer=2, n_head=2, block_size=32))
    x, y = torch.randint(65, (4, 32)), torch.randint(65, (4, 32))
    _, loss32 = model(x, y)
    with autocast(CPU, "bf16"):
        _, loss16 = model(x, y)
    assert loss16.dtype == torch.float32  # cross-entropy runs in fp32 under autocast
    assert abs(loss16.item() - loss32.item()) < BF16_TOL
    loss16.backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in model.parameters())


def test_a_bf16_step_updates_fp32_weights():
    torch.manual_seed(0)
    model = CharGPT(ModelConfig(vocab_size=65, n_embd=32, n_layer=1, n_head=2, block_size=16))
    before = [p.detach().clone() for p in model.parameters()]
    opt = make_optimizer(model, tiny())
    x, y = torch.randint(65, (4, 16)), torch.randint(65, (4, 16))
    loss, norm = training_step(model, opt, x, y, grad_clip=1.0, precision="bf16")
    assert torch.isfinite(loss) and norm > 0
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_bf16_training_is_deterministic_and_tracks_fp32(shakespeare, tmp_path):
    def losses(precision: str, out: str) -> list[float]:
        seen: list[float] = []
        cfg = tiny(
            precision=precision, max_steps=10, eval_interval=10, eval_batches=1, sample_tokens=0
        )
        train(
            cfg,
            shakespeare,
            tmp_path / out,
            callbacks=Callbacks(on_step=lambda s, m: seen.append(m.train_loss)),
        )
        return seen

    bf16 = losses("bf16", "a")
    assert bf16 == losses("bf16", "b")  # same seed, same run
    fp32 = losses("fp32", "c")
    assert bf16 != fp32  # bf16 really ran
    assert max(abs(a - b) for a, b in zip(bf16, fp32, strict=True)) < 0.05
