"""Training: tiny configurations that really learn, reproducibility, resume, NaN, bad options."""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import pairwise

import pytest
import torch

from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import TrainConfig, fit_warmup
from attention_ref.lm.sampling import generate
from attention_ref.lm.train import (
    Callbacks,
    NonFiniteLossError,
    lr_at,
    resolve_device,
    train,
)
from tests.configs import TINY, tiny

UNIGRAM = 3.35  # validation cross-entropy of character frequencies alone (tests/test_data.py)


def step_losses(cfg, data, out_dir, **kw):
    losses: list[float] = []
    result = train(
        cfg,
        data,
        out_dir,
        callbacks=Callbacks(on_step=lambda s, m: losses.append(m.train_loss)),
        **kw,
    )
    return losses, result


@pytest.mark.parametrize("attention", ["multihead", "none", "uniform"])
def test_tiny_runs_really_learn(shakespeare, tmp_path, attention):
    cfg = tiny(attention=attention)
    losses, r = step_losses(cfg, shakespeare, tmp_path)
    assert len(losses) == cfg.max_steps == r.steps_done
    assert r.best_val_loss < UNIGRAM - 0.5  # well below the unigram level
    assert r.history[-1]["val_loss"] < r.history[0]["val_loss"] or r.best_val_loss < 2.7
    assert (tmp_path / "best.pt").is_file() and (tmp_path / "last.pt").is_file()


def test_same_seed_same_run(shakespeare, tmp_path):
    a, ra = step_losses(TINY, shakespeare, tmp_path / "a")
    b, rb = step_losses(TINY, shakespeare, tmp_path / "b")
    assert a == b and ra.history == rb.history
    c, _ = step_losses(tiny(seed=8), shakespeare, tmp_path / "c")
    assert c != a


def test_resume_continues_exactly(shakespeare, tmp_path):
    full, rfull = step_losses(TINY, shakespeare, tmp_path / "full")
    calls = {"n": 0}

    def stop_after_50() -> bool:
        calls["n"] += 1
        return calls["n"] >= 50

    first, r1 = step_losses(TINY, shakespeare, tmp_path / "cut", should_stop=stop_after_50)
    assert r1.interrupted and r1.steps_done == 50 and len(first) == 50
    resume = Checkpoint.load(r1.checkpoint)
    rest, r2 = step_losses(TINY, shakespeare, tmp_path / "cut", resume_from=resume)
    assert first + rest == full  # the loss curve after resuming is the uninterrupted one
    assert r2.steps_done == TINY.max_steps
    assert r2.history == rfull.history


def test_nan_loss_stops_and_says_at_which_step(shakespeare, tmp_path):
    _, r = step_losses(tiny(max_steps=5), shakespeare, tmp_path)
    bad = Checkpoint.load(r.checkpoint)
    bad.model["tok_emb.weight"].fill_(float("nan"))
    with pytest.raises(NonFiniteLossError, match="became nan at step 6"):
        train(tiny(max_steps=10), shakespeare, tmp_path, resume_from=bad)


def test_checkpoint_loads_back_and_samples(shakespeare, tmp_path):
    step_losses(TINY, shakespeare, tmp_path)
    best = Checkpoint.load(tmp_path / "best.pt")
    assert best.config == TINY and len(best.vocab) == 65 and best.resumable
    model = best.build_model()
    start = torch.tensor([best.vocab.encode("\n")])
    g = torch.Generator().manual_seed(0)
    out = generate(model, start, 30, top_k=5, generator=g)
    assert out.shape == (1, 31)
    g.manual_seed(0)
    again = generate(model, start, 30, top_k=5, generator=g)
    assert torch.equal(out, again)


def test_learning_rate_schedule():
    cfg = TrainConfig(lr=1.0, min_lr=0.1, warmup_steps=10, max_steps=110)
    assert lr_at(0, cfg) == pytest.approx(0.1)
    assert lr_at(9, cfg) == pytest.approx(1.0)
    assert lr_at(10, cfg) == pytest.approx(1.0)
    assert lr_at(60, cfg) == pytest.approx(0.55)
    assert lr_at(110, cfg) == pytest.approx(0.1)
    assert all(lr_at(s, cfg) >= lr_at(s + 1, cfg) for s in range(10, 110))


def test_a_warm_up_longer_than_half_the_run_is_cut_and_said():
    """``--max-steps 60`` with the default 100 warm-up steps: the rate would still be rising
    at the last step; cut to 30 it peaks at step 29 and decays to ``min_lr`` by the end."""
    long = TrainConfig(max_steps=60)  # warmup_steps 100 by default
    assert long.warmup_steps == 100
    assert lr_at(59, long) > lr_at(58, long) and lr_at(59, long) < long.lr  # still rising
    cfg, note = fit_warmup(long)
    assert cfg.warmup_steps == 30 and cfg == replace(long, warmup_steps=30)
    assert note == (
        "--warmup-steps 100 is more than 50% of --max-steps 60: warming up for 30 steps, "
        "then the cosine decay over the other 30"
    )
    lrs = [lr_at(s, cfg) for s in range(60)]
    assert max(lrs) == pytest.approx(cfg.lr) and lrs.index(max(lrs)) == 29
    assert all(a >= b for a, b in pairwise(lrs[29:]))  # decays after
    assert lr_at(60, cfg) == pytest.approx(cfg.min_lr)


def test_the_warm_up_note_names_the_option_only_when_it_was_given():
    cfg, note = fit_warmup(TrainConfig(max_steps=60), given=False)
    assert cfg.warmup_steps == 30
    assert note is not None and note.startswith("the default warm-up of 100 steps is more than")
    assert "--warmup-steps" not in note
    _, given = fit_warmup(TrainConfig(max_steps=60), given=True)  # the control
    assert given is not None and given.startswith("--warmup-steps 100 is more than")


@pytest.mark.parametrize(
    ("max_steps", "warmup", "fitted"),
    [
        (60, 30, 30),
        (60, 31, 30),
        (61, 30, 30),
        (61, 31, 30),
        (1, 1, 0),
        (1, 0, 0),
        (6000, 100, 100),
        (150, 100, 75),
    ],
)
def test_fit_warmup_on_both_sides_of_half(max_steps, warmup, fitted):
    cfg, note = fit_warmup(TrainConfig(max_steps=max_steps, warmup_steps=warmup))
    assert cfg.warmup_steps == fitted
    assert (note is None) == (fitted == warmup)  # said exactly when it changed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_embd": 0}, "--n-embd must be a positive integer"),
        ({"batch_size": -1}, "--batch-size must be a positive integer"),
        ({"n_embd": 10, "n_head": 3}, "not divisible by --n-head"),
        ({"attention": "sparse"}, "--attention must be one of"),
        ({"device": "tpu"}, "unknown device 'tpu'"),
        ({"lr": 0.0}, "need 0 < --lr"),
        ({"dropout": 1.5}, "--dropout must be in"),
    ],
)
def test_bad_options_fail_where_they_enter(change, message):
    with pytest.raises(ValueError, match=message):
        tiny(**change)


def test_a_block_larger_than_the_data_fails_before_any_work(shakespeare, tmp_path):
    with pytest.raises(ValueError, match="larger than the data split"):
        train(tiny(block_size=10**7), shakespeare, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_devices():
    assert resolve_device("cpu") == torch.device("cpu")
    if torch.cuda.is_available():
        expected = "cuda"
    elif torch.backends.mps.is_available():
        expected = "mps"
    else:
        expected = "cpu"
    assert resolve_device("auto") == torch.device(expected)  # the first available, in order
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_sampling_rejects_bad_temperature(shakespeare, tmp_path):
    _, r = step_losses(tiny(max_steps=2), shakespeare, tmp_path)
    model = Checkpoint.load(r.checkpoint).build_model()
    with pytest.raises(ValueError, match="temperature must be > 0"):
        generate(model, torch.zeros(1, 1, dtype=torch.long), 3, temperature=0)
    assert math.isfinite(r.final_train_loss)


def test_resume_from_an_unfused_optimizer_state_continues_exactly(shakespeare, tmp_path):
    # checkpoints written before the fused AdamW carry fused=None in their groups: resuming
    # one must still run the fused kernel, and so continue as the uninterrupted run
    full, _ = step_losses(TINY, shakespeare, tmp_path / "full")
    calls = {"n": 0}

    def stop_after_30() -> bool:
        calls["n"] += 1
        return calls["n"] >= 30

    first, r1 = step_losses(TINY, shakespeare, tmp_path / "cut", should_stop=stop_after_30)
    old = Checkpoint.load(r1.checkpoint)
    assert all(g["fused"] for g in old.optimizer["param_groups"])  # the fused kernel ran
    for group in old.optimizer["param_groups"]:
        group["fused"], group["foreach"] = None, None
    rest, _ = step_losses(TINY, shakespeare, tmp_path / "cut", resume_from=old)
    assert first + rest == full


def test_the_loop_reports_the_precision_it_resolved(shakespeare, tmp_path):
    seen = []
    train(
        tiny(max_steps=1, eval_interval=1, precision="fp32"),
        shakespeare,
        tmp_path,
        callbacks=Callbacks(on_start=seen.append),
    )
    assert seen[0].precision == "fp32"
