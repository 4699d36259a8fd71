"""Generation with the KV cache: the same tokens as the plain loop, less work, one thread."""

from __future__ import annotations

import pytest
import torch

from attention_ref.lm.model import CharGPT, ModelConfig
from attention_ref.lm.sampling import generate

ATTENTIONS = ["multihead", "uniform", "none"]


def model_for(attention: str, *, dtype: torch.dtype = torch.float32, seed: int = 0) -> CharGPT:
    """A small random model; its weights scaled up so the next-character laws are far from
    uniform (a wrong position or a missing key then changes the draws)."""
    torch.manual_seed(seed)
    cfg = ModelConfig(
        vocab_size=11, n_embd=16, n_layer=2, n_head=2, block_size=12, attention=attention
    )
    model = CharGPT(cfg).to(dtype)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.mul_(4.0)
    return model


def draw(model: CharGPT, prompt: list[int], n: int, *, use_cache: bool, seed: int = 3, **kw):
    g = torch.Generator().manual_seed(seed)
    return generate(model, torch.tensor([prompt]), n, generator=g, use_cache=use_cache, **kw)


@pytest.mark.parametrize("attention", ATTENTIONS)
@pytest.mark.parametrize("prompt", [[1], [2, 3, 4, 5, 6], [*range(11), 0, 1, 2, 3]])
def test_cached_generation_draws_the_same_tokens(attention, prompt):
    # prompts shorter than, then longer than the block (12): the window slides in every case
    model = model_for(attention)
    cached = draw(model, prompt, 30, use_cache=True)
    plain = draw(model, prompt, 30, use_cache=False)
    assert cached.shape == (1, len(prompt) + 30)
    assert torch.equal(cached, plain)
    top = draw(model, prompt, 30, use_cache=True, temperature=0.7, top_k=3)
    assert torch.equal(top, draw(model, prompt, 30, use_cache=False, temperature=0.7, top_k=3))


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_cached_logits_equal_full_forward_in_fp64(attention):
    model = model_for(attention, dtype=torch.float64).eval()
    idx = torch.randint(11, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full, _ = model(idx)
        cache = model.new_cache()
        parts = [model(idx[:, :5], cache=cache)[0]]  # a prompt of 5, then 3, then one at a time
        parts.append(model(idx[:, 5:8], cache=cache)[0])
        parts += [model(idx[:, t : t + 1], cache=cache)[0] for t in range(8, 12)]
    assert cache.length == 12
    assert torch.allclose(torch.cat(parts, dim=1), full, rtol=0, atol=1e-12)


def test_the_comparison_can_fail():
    # a cache that forgets the positions (each new token at position 0) draws other tokens
    model = model_for("multihead").eval()
    g = torch.Generator().manual_seed(3)
    idx = torch.tensor([[1]])
    with torch.no_grad():
        for _ in range(11):
            logits, _ = model(idx[:, -1:])  # no context, position 0
            nxt = torch.multinomial(torch.softmax(logits[:, -1], dim=-1), 1, generator=g)
            idx = torch.cat([idx, nxt], dim=1)
    assert not torch.equal(idx, draw(model, [1], 11, use_cache=False))


def test_the_cache_computes_each_position_once_while_the_text_fits():
    model = model_for("multihead")
    seen: list[int] = []
    model.tok_emb.register_forward_hook(lambda m, inp, out: seen.append(inp[0].size(1)))
    draw(model, [1, 2, 3], 9, use_cache=True)  # 3 + 9 = 12 = block: never slides
    assert seen == [3] + [1] * 8  # the prompt once, then one position per new character
    seen.clear()
    draw(model, [1, 2, 3], 9, use_cache=False)
    assert seen == list(range(3, 12))  # the plain loop recomputes the whole context


def test_one_thread_for_a_single_sequence_then_restored():
    model = model_for("multihead")
    inside: list[int] = []
    model.head.register_forward_hook(lambda *_: inside.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    draw(model, [1], 4, use_cache=True)
    assert set(inside) == {1} and torch.get_num_threads() == before
    inside.clear()
    g = torch.Generator().manual_seed(0)
    generate(model.train(), torch.tensor([[1], [2]]), 2, generator=g)  # a batch keeps them all
    assert set(inside) == {before} and model.training  # and the mode is restored


def test_a_cache_longer_than_the_block_is_refused():
    model = model_for("multihead").eval()
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.zeros(1, 12, dtype=torch.long), cache=cache)
        with pytest.raises(ValueError, match="exceeds block_size=12"):
            model(torch.zeros(1, 1, dtype=torch.long), cache=cache)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_last_only_gives_the_last_positions_logits_in_fp64(attention):
    model = model_for(attention, dtype=torch.float64).eval()
    idx = torch.randint(11, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full, _ = model(idx)
        last, _ = model(idx, last_only=True)
    assert last.shape == (2, 1, 11)
    assert torch.allclose(last, full[:, -1:], rtol=0, atol=1e-12)
    assert not torch.allclose(last, full[:, -2:-1], rtol=0, atol=1e-3)  # the control: not any row


def test_sliding_generation_computes_the_last_block_for_one_position():
    """Once the window slides, the last block's MLP sees one position, the first block's the
    whole window; the plain loop computes every position everywhere."""
    model = model_for("multihead")
    widths: dict[str, list[int]] = {"first": [], "last": []}
    model.blocks[0].mlp.register_forward_hook(lambda m, i, o: widths["first"].append(i[0].size(1)))
    model.blocks[-1].mlp.register_forward_hook(lambda m, i, o: widths["last"].append(i[0].size(1)))
    draw(model, [*range(11), 0, 1], 3, use_cache=True)  # longer than the block: every step slides
    assert widths == {"first": [12, 12, 12], "last": [1, 1, 1]}
    widths["first"].clear()
    widths["last"].clear()
    draw(model, [*range(11), 0, 1], 3, use_cache=False)
    assert widths == {"first": [12, 12, 12], "last": [12, 12, 12]}


def test_last_only_is_refused_with_a_cache_or_targets():
    model = model_for("multihead").eval()
    idx = torch.zeros(1, 4, dtype=torch.long)
    with pytest.raises(ValueError, match="last_only"):
        model(idx, cache=model.new_cache(), last_only=True)
    with pytest.raises(ValueError, match="last_only"):
        model(idx, idx, last_only=True)
