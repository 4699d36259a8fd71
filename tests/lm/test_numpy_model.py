"""``attnref sample`` without torch: the numpy twin of the model reads the same file, computes the
same logits (within float32 rounding) and draws the same characters as torch's model.

The twin is `attention_ref.lm.numpy_model`; the draw both use is `attention_ref.lm.draw`.
Each comparison is shown failing on a model that differs by one weight or one formula.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_ref.lm import numpy_model as npm
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import ModelConfig, TrainConfig
from attention_ref.lm.data import Vocab
from attention_ref.lm.draw import draw_index, uniforms
from attention_ref.lm.sampling import SampleParams, sample_text
from tests.lm.test_sampling import ATTENTIONS, model_for

ROOT = Path(__file__).resolve().parents[2]
CHARS = tuple("\n abcdefghi")  # 11 characters: model_for's vocabulary


def saved(tmp_path: Path, attention: str, seed: int = 0) -> tuple[Path, Checkpoint]:
    """model_for's model as a run's slim ``model.pt``."""
    model = model_for(attention, seed=seed)
    cfg = TrainConfig().with_options(
        n_embd=16, n_layer=2, n_head=2, block_size=12, attention=attention
    )
    ck = Checkpoint(
        config=cfg, vocab=Vocab(CHARS), model=model.state_dict(), step=1, best_val_loss=1.0
    )
    return ck.save(tmp_path / f"{attention}-{seed}.pt"), ck


def test_the_file_reads_as_torch_reads_it(tmp_path):
    path, _ = saved(tmp_path, "multihead")
    ours = npm.read_torch_file(path)
    theirs = torch.load(path, weights_only=False)
    assert ours.keys() == theirs.keys()
    assert ours["config"] == theirs["config"] and ours["chars"] == theirs["chars"]
    assert ours["model"].keys() == theirs["model"].keys()
    for name, w in theirs["model"].items():
        assert ours["model"][name].dtype == np.float32
        assert np.array_equal(ours["model"][name], w.numpy()), name


def test_views_with_offsets_and_strides_are_rebuilt(tmp_path):
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    state = {"t": base.T, "s": base[1:, 2:4], "i": torch.arange(5)}  # strided, offset views
    torch.save(state, tmp_path / "v.pt")
    ours = npm.read_torch_file(tmp_path / "v.pt")
    for k, v in state.items():
        assert np.array_equal(ours[k], v.numpy()), k


@pytest.mark.parametrize(
    "content",
    [
        {"model": torch.nn.Linear(2, 2)},  # a module: a global the reader does not know
        {"x": {1, 2}},  # builtins.set
        {"x": torch.zeros(2, dtype=torch.complex64)},  # a storage type it does not know
    ],
)
def test_anything_else_is_refused(tmp_path, content):
    torch.save(content, tmp_path / "x.pt")
    with pytest.raises(npm.UnsupportedModelError):
        npm.read_torch_file(tmp_path / "x.pt")


def test_not_a_torch_file_is_refused(tmp_path):
    (tmp_path / "a.pt").write_bytes(b"not a zip")
    path, _ = saved(tmp_path, "none")
    (tmp_path / "b.pt").write_bytes(path.read_bytes()[:200])  # truncated
    for bad in ("a.pt", "b.pt"):
        with pytest.raises(npm.UnsupportedModelError):
            npm.NumpyCheckpoint.load(tmp_path / bad)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_logits_equal_torch_whole_window_cached_and_last_only(tmp_path, attention):
    path, ck = saved(tmp_path, attention)
    model = ck.build_model()
    ours = npm.NumpyCheckpoint.load(path).model
    idx = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]
    with torch.no_grad():
        full = model(torch.tensor([idx]))[0][0].numpy()
        last = model(torch.tensor([idx]), last_only=True)[0][0].numpy()
    assert np.allclose(ours.forward(idx), full, rtol=0, atol=2e-5)
    assert np.allclose(ours.forward(idx, last_only=True), last, rtol=0, atol=2e-5)
    ours.reset()
    parts = [ours.forward(idx[:5], cache=True), ours.forward(idx[5:8], cache=True)]
    parts += [ours.forward(idx[t : t + 1], cache=True) for t in range(8, 12)]
    assert ours.length == 12
    assert np.allclose(np.concatenate(parts), full, rtol=0, atol=2e-5)
    with pytest.raises(ValueError, match="exceeds"):
        ours.forward([1], cache=True)


@pytest.mark.parametrize("attention", ATTENTIONS)
@pytest.mark.parametrize(
    ("prompt", "temperature", "top_k", "seed"),
    [("a", 1.0, None, 0), ("\nabc de", 0.7, 3, 5), ("hgfedcba\n abc", 1.4, None, 11)],
)
def test_the_same_characters_as_torch(tmp_path, attention, prompt, temperature, top_k, seed):
    # 40 characters after prompts shorter and longer than the block (12): the window slides
    path, ck = saved(tmp_path, attention)
    theirs = sample_text(
        ck,
        prompt,
        SampleParams(max_new_tokens=40, temperature=temperature, top_k=top_k or 0, seed=seed),
    )
    ours = npm.sample_text(
        npm.NumpyCheckpoint.load(path),
        prompt,
        tokens=40,
        temperature=temperature,
        top_k=top_k,
        seed=seed,
    )
    assert ours == theirs
    assert len(ours) == len(prompt) + 40


def test_the_comparisons_can_fail(tmp_path):
    """One weight changed, or the tanh GELU instead of the exact one: logits and draws differ."""
    path, ck = saved(tmp_path, "multihead")
    ours = npm.NumpyCheckpoint.load(path)
    idx = [3, 1, 4, 1, 5, 9]
    with torch.no_grad():
        full = ck.build_model()(torch.tensor([idx]))[0][0].numpy()
    ours.model.layers[0].W_1[0, 0] += 0.05
    assert not np.allclose(ours.model.forward(idx), full, rtol=0, atol=2e-5)
    tanh = npm.NumpyCheckpoint.load(path)
    exact = npm.gelu
    try:
        npm.gelu = lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))
        assert not np.allclose(tanh.model.forward(idx), full, rtol=0, atol=2e-5)
    finally:
        npm.gelu = exact
    text = npm.sample_text(
        npm.NumpyCheckpoint.load(path), "a", tokens=40, temperature=1.0, top_k=None, seed=0
    )
    other = sample_text(ck, "a", SampleParams(max_new_tokens=40, seed=1))
    assert text != other  # another seed: other characters


def test_erf_is_within_float32_rounding():
    x = np.linspace(-6, 6, 20001, dtype=np.float32)
    exact = np.array([math.erf(float(v)) for v in x])
    assert np.abs(npm.erf(x) - exact).max() < 1e-6
    assert npm.erf(x).dtype == np.float32


def test_a_model_it_does_not_know_is_left_to_torch(tmp_path):
    path, _ = saved(tmp_path, "multihead")
    state = npm.read_torch_file(path)["model"]
    cfg = ModelConfig(vocab_size=11, n_embd=16, n_layer=2, n_head=2, block_size=12)
    npm.NumpyCharGPT(cfg, state)  # the control: known

    @dataclass(frozen=True)
    class Later(ModelConfig):
        position: str = "learned"  # a later option

    npm.NumpyCharGPT(Later(**vars(cfg)), state)  # at its default: the same model
    with pytest.raises(npm.UnsupportedModelError, match="position"):
        npm.NumpyCharGPT(Later(**vars(cfg), position="rope"), state)
    with pytest.raises(npm.UnsupportedModelError, match="unknown weights"):
        npm.NumpyCharGPT(cfg, {**state, "blocks.0.attn.rope": np.zeros(2, np.float32)})
    missing = {k: v for k, v in state.items() if k != "head.weight"}
    with pytest.raises(npm.UnsupportedModelError, match=r"head\.weight"):
        npm.NumpyCharGPT(cfg, missing)


@settings(max_examples=60, deadline=None)
@given(
    logits=st.lists(st.floats(-8, 8), min_size=2, max_size=12),
    u=st.floats(0, 1, exclude_max=True),
    temperature=st.floats(0.25, 3),
    k=st.integers(1, 12),
)
def test_the_draw_is_the_inverse_cdf(logits, u, temperature, k):
    i = draw_index(np.array(logits, np.float32), temperature, None, u)
    z = np.array(logits, np.float32).astype(np.float64) / temperature
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    cdf = np.cumsum(p)
    assert (cdf[i - 1] if i else 0.0) <= u + 1e-12 and (u < cdf[i] + 1e-12 or i == len(p) - 1)
    j = draw_index(np.array(logits, np.float32), temperature, k, u)
    kth = sorted(logits, reverse=True)[min(k, len(logits)) - 1]
    assert float(np.float32(logits[j])) >= float(np.float32(kth))  # among the k largest


def test_the_stream_of_uniforms_is_pythons():
    import random

    rng = random.Random(42)
    stream = uniforms(42)
    assert [next(stream) for _ in range(5)] == [rng.random() for _ in range(5)]


def test_sampling_imports_no_torch(tmp_path):
    """What ``attnref sample`` runs on a local file, in a fresh interpreter: no torch."""
    path, _ = saved(tmp_path, "multihead")
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from attention_ref.lm.numpy_model import NumpyCheckpoint, sample_text\n"
        f"ck = NumpyCheckpoint.load(Path({str(path)!r}))\n"
        "print(sample_text(ck, 'a', tokens=20, temperature=1.0, top_k=None, seed=0))\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.rstrip("\n")) == 21
