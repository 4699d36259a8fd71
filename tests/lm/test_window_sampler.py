"""The evaluation and the sample of a graphed run: `FixedEval` computes `estimate_loss`'s
means, `WindowSampler` draws `generate`'s characters; on CUDA each is one CUDA graph.

Runs without this folder's conftest (no hypothesis, no mlflow needed), as on a bare GPU
machine: ``python3 -m pytest -q -p no:cacheprovider --noconftest tests/lm/test_window_sampler.py``.
The CUDA tests are skipped where torch sees no GPU.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from attention_ref.lm.data import CharData, get_batch
from attention_ref.lm.model import CharGPT
from attention_ref.lm.sampling import WindowSampler, generate, multinomial_noise
from attention_ref.lm.train import (
    Callbacks,
    FixedEval,
    StartInfo,
    TrainStep,
    estimate_loss,
    lr_at,
    make_optimizer,
    seed_everything,
    train,
)
from tests.configs import tiny
from tests.lm.test_sampling import ATTENTIONS, model_for

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
#: graphed vs eager evaluation on CUDA: the same kernels on the same batches, expected equal;
#: the bound leaves room for a matrix kernel the capture picks otherwise (bf16 products
#: rounded otherwise), ten times below the 1e-3 ten training steps move the loss (the control)
EVAL_TOL = 1e-4
#: a graphed draw may differ from `generate`'s only where two characters' p_i / q_i are this
#: close (relative): the forward over the whole window sums in another order than the cache
DRAW_TOL = 1e-4
PROMPTS = [[1], [2, 3, 4, 5, 6], [*range(11), 0, 1, 2, 3]]  # the block is 12


@pytest.fixture(scope="module")
def data(shakespeare: CharData) -> CharData:
    """Tiny Shakespeare, found as the suite finds it (conftest's `shakespeare_path`)."""
    return shakespeare


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("shape", [(1, 65), (2, 11), (3, 1000)])
def test_multinomial_noise_is_what_multinomial_draws_with(shape):
    probs = torch.softmax(3 * torch.randn(shape, generator=gen(5)), dim=-1)
    g1, g2 = gen(9), gen(9)
    drawn = torch.stack([torch.multinomial(probs, 1, generator=g1) for _ in range(20)])
    noise = multinomial_noise(g2, shape, 20)
    assert noise.shape == (20, *shape) and noise.dtype == torch.float32
    assert torch.equal(torch.argmax(probs / noise, dim=-1, keepdim=True), drawn)
    assert torch.equal(g1.get_state(), g2.get_state())  # the generator left where it was
    # the control: the same noise one draw later draws other characters
    later = multinomial_noise(gen(9), shape, 21)[1:]
    assert not torch.equal(torch.argmax(probs / later, dim=-1, keepdim=True), drawn)


@pytest.mark.parametrize("attention", ATTENTIONS)
@pytest.mark.parametrize("prompt", PROMPTS)
def test_the_window_sampler_draws_generates_characters_on_the_cpu(attention, prompt):
    # prompts shorter than, then longer than the block: the window slides in every case
    model = model_for(attention)
    sampler = WindowSampler(model, 30)
    for seed in range(3):
        want = generate(model, torch.tensor([prompt]), 30, generator=gen(seed))
        assert torch.equal(sampler(torch.tensor([prompt]), 30, gen(seed)), want)
    top = WindowSampler(model, 30, temperature=0.7, top_k=3)
    want = generate(model, torch.tensor([prompt]), 30, temperature=0.7, top_k=3, generator=gen(4))
    assert torch.equal(top(torch.tensor([prompt]), 30, gen(4)), want)
    assert model.training  # the mode is put back


def test_the_window_sampler_draws_a_batch_and_fewer_characters_than_its_bound():
    model = model_for("multihead")
    sampler = WindowSampler(model, 40, batch_size=2)
    idx = torch.tensor([[1, 2], [3, 4]])
    for n in (0, 7, 40):
        assert torch.equal(sampler(idx, n, gen(2)), generate(model, idx, n, generator=gen(2)))


def test_the_comparison_can_fail():
    model = model_for("multihead")
    want = generate(model, torch.tensor([[1]]), 30, generator=gen(3))
    assert not torch.equal(WindowSampler(model, 30)(torch.tensor([[1]]), 30, gen(4)), want)


def test_the_window_sampler_refuses_what_it_cannot_do():
    model = model_for("multihead")
    with pytest.raises(ValueError, match="new_tokens must be in"):
        WindowSampler(model, 5)(torch.tensor([[1]]), 6, gen(0))
    with pytest.raises(ValueError, match="idx must be"):
        WindowSampler(model, 5)(torch.tensor([[1], [2]]), 3, gen(0))
    with pytest.raises(ValueError, match="temperature"):
        WindowSampler(model, 5, temperature=0)
    with pytest.raises(ValueError, match="CUDA graph"):
        WindowSampler(model, 5, graph=True)


def trained_model(data: CharData, device: str, precision: str, steps: int = 20):
    """A tiny model after ``steps`` eager steps, with its `TrainStep` and fixed batches."""
    cfg = tiny(device=device)
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size)).to(device)
    step_fn = TrainStep(
        model, make_optimizer(model, cfg), data.train, cfg, precision, seed_everything(cfg.seed)
    )
    for i in range(steps):
        step_fn.set_lr(lr_at(i, cfg))
        step_fn()
    g = gen(cfg.seed + 1)
    splits = [
        [
            tuple(t.to(device) for t in get_batch(split, 8, cfg.model.block_size, g))
            for _ in range(3)
        ]
        for split in (data.val, data.train)
    ]
    return model, step_fn, splits


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_fixed_eval_computes_estimate_loss_to_the_bit_on_the_cpu(data, precision):
    model, _, splits = trained_model(data, "cpu", precision)
    want = [estimate_loss(model, b, precision) for b in splits]
    assert FixedEval(model, splits, precision)() == want
    model.train()
    assert FixedEval(model, splits, precision)._means().tolist() == want  # what a graph holds
    assert model.training
    with pytest.raises(ValueError, match="CUDA graph"):
        FixedEval(model, splits, precision, graph=True)


@CUDA
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_graphed_evaluation_equals_estimate_loss_and_follows_the_training(data, precision):
    model, step_fn, splits = trained_model(data, "cuda", precision)
    evaluate = FixedEval(model, splits, precision, graph=True)
    assert evaluate.graph is not None
    got = evaluate()
    want = [estimate_loss(model, b, precision) for b in splits]
    assert max(abs(a - b) for a, b in zip(got, want, strict=True)) <= EVAL_TOL, (got, want)
    for i in range(20, 30):  # the parameters change in place: the graph reads them
        step_fn.set_lr(lr_at(i, tiny()))
        step_fn()
    later = evaluate()
    want_later = [estimate_loss(model, b, precision) for b in splits]
    assert max(abs(a - b) for a, b in zip(later, want_later, strict=True)) <= EVAL_TOL
    assert max(abs(a - b) for a, b in zip(later, got, strict=True)) > 1e-3  # the control


def first_difference_is_a_near_tie(model, prompt, got, want, seed, **kw) -> bool:
    """Where the graphed draw first differs from `generate`'s, the two characters' p_i / q_i
    (`generate`'s probabilities, the noise of that draw) are within `DRAW_TOL`."""
    i = next(t for t in range(got.size(1)) if got[0, t] != want[0, t])
    prefix = want[:, :i]
    block = model.cfg.block_size
    with torch.no_grad():
        logits = model.eval()(prefix[:, -block:])[0][:, -1] / kw.get("temperature", 1.0)
    if kw.get("top_k"):
        kth = torch.topk(logits, kw["top_k"]).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits.float(), dim=-1).cpu()
    draw = i - len(prompt)
    q = multinomial_noise(gen(seed), tuple(probs.shape), draw + 1)[draw]
    r = (probs / q)[0]
    a, b = int(got[0, i]), int(want[0, i])
    return abs(float(r[a] - r[b])) <= DRAW_TOL * float(r.max())


@CUDA
@pytest.mark.parametrize("attention", ATTENTIONS)
def test_the_graphed_sampler_draws_generates_characters(attention):
    model = model_for(attention).cuda()
    cases = [
        (prompt, seed, kw)
        for prompt in PROMPTS
        for seed in range(3)
        for kw in ({}, {"temperature": 0.7, "top_k": 3})
    ]
    samplers = {}
    equal = 0
    for prompt, seed, kw in cases:
        key = tuple(sorted(kw.items()))
        if key not in samplers:
            samplers[key] = WindowSampler(model, 30, graph=True, **kw)
        idx = torch.tensor([prompt], device="cuda")
        got = samplers[key](idx, 30, gen(seed))
        want = generate(model, idx, 30, generator=gen(seed), **kw)
        if torch.equal(got, want):
            equal += 1
        else:
            assert first_difference_is_a_near_tie(model, prompt, got, want, seed, **kw)
    assert equal >= len(cases) - 2, f"{equal} of {len(cases)} samples equal"
    # the control: another generator draws other characters
    idx = torch.tensor([[1]], device="cuda")
    assert not torch.equal(samplers[()](idx, 30, gen(0)), samplers[()](idx, 30, gen(1)))


@CUDA
def test_a_graphed_run_replays_the_evaluation_and_the_sample(data, tmp_path, monkeypatch):
    counts: dict[int, int] = {}
    replay = torch.cuda.CUDAGraph.replay

    def counted(self):
        counts[id(self)] = counts.get(id(self), 0) + 1
        return replay(self)

    monkeypatch.setattr(torch.cuda.CUDAGraph, "replay", counted)
    starts: list[StartInfo] = []
    texts: list[str] = []
    cfg = tiny(
        device="cuda",
        max_steps=200,
        eval_interval=100,
        eval_batches=2,
        sample_tokens=40,
        precision="fp32",
    )
    r = train(
        cfg,
        data,
        tmp_path / "run",
        callbacks=Callbacks(on_start=starts.append, on_eval=lambda s, m, text: texts.append(text)),
    )
    info = starts[0]
    assert info.graph and info.graph_note.endswith("; the evaluation and sample one graph each")
    # the step 200 times, the evaluation once per evaluation, the sample's step 40 times each
    assert sorted(counts.values()) == [2, 80, 200] and r.steps_done == 200
    assert len(texts) == 2 and all(len(t) == 40 for t in texts)
    assert texts[0] != texts[1]
