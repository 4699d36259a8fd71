"""The benchmarks' baseline trains nanoGPT's own model (vendored), not a copy of it."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import baseline_trainer as bt

from attention_ref.lm.data import CharData

VENDORED = Path(__file__).resolve().parents[2] / "benchmarks" / "nanogpt" / "model.py"


def test_the_model_is_the_vendored_nanogpt_class_at_the_recipe_s_shape():
    model = bt.make_model(bt.RECIPE)
    assert type(model).__module__ == "nanogpt_model"
    assert Path(inspect.getfile(type(model))) == VENDORED
    names = {n for n, _ in model.named_parameters()}
    # nanoGPT's names (`transformer.h.0.attn.c_attn`), the head tied to the token embedding
    assert "transformer.h.1.attn.c_attn.weight" in names and "lm_head.weight" not in names
    assert model.transformer.wte.weight is model.lm_head.weight  # type: ignore[union-attr]
    assert len(model.transformer.h) == bt.RECIPE.n_layer  # type: ignore[union-attr,arg-type]


def test_a_few_steps_lower_the_loss_and_repeat_to_the_bit(shakespeare: CharData):
    cfg = bt.BaselineConfig(vocab_size=shakespeare.vocab_size, batch_size=8, block_size=32)
    gen = torch.Generator().manual_seed(3)
    from attention_ref.lm.data import get_batch

    val = [get_batch(shakespeare.val, 8, 32, gen) for _ in range(2)]
    untrained = bt.mean_loss(bt.make_model(cfg), val)
    first = bt.mean_loss(bt.train(cfg, shakespeare.train, 40, torch.device("cpu")), val)
    again = bt.mean_loss(bt.train(cfg, shakespeare.train, 40, torch.device("cpu")), val)
    assert first < untrained - 0.5 and first == again
