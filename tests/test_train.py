"""Training: tiny configurations that really learn, reproducibility, resume, NaN, bad options."""

from __future__ import annotations

import math

import pytest
import torch

from attention_ref.train import (
    Callbacks,
    NonFiniteLossError,
    TrainConfig,
    generate,
    load_checkpoint,
    lr_at,
    resolve_device,
    train,
)

TINY = TrainConfig(
    n_embd=32, n_layer=1, n_head=2, block_size=32, batch_size=16, max_steps=120,
    eval_interval=60, eval_batches=4, sample_tokens=40, warmup_steps=10, lr=1e-2, min_lr=1e-3,
    seed=7, device="cpu",
)  # fmt: skip

UNIGRAM = 3.35  # validation cross-entropy of character frequencies alone (tests/test_data.py)


def step_losses(cfg, data, out_dir, **kw):
    losses: list[float] = []
    result = train(
        cfg, data, out_dir,
        callbacks=Callbacks(on_step=lambda s, m: losses.append(m["train_loss"])),
        **kw,
    )  # fmt: skip
    return losses, result


@pytest.mark.parametrize("attention", ["multihead", "none", "uniform"])
def test_tiny_runs_really_learn(shakespeare, tmp_path, attention):
    cfg = TrainConfig(**{**TINY.to_dict(), "attention": attention})
    losses, r = step_losses(cfg, shakespeare, tmp_path)
    assert len(losses) == cfg.max_steps == r.steps_done
    assert r.best_val_loss < UNIGRAM - 0.5  # well below the unigram level
    assert r.history[-1]["val_loss"] < r.history[0]["val_loss"] or r.best_val_loss < 2.7
    assert (tmp_path / "best.pt").is_file() and (tmp_path / "last.pt").is_file()


def test_same_seed_same_run(shakespeare, tmp_path):
    a, ra = step_losses(TINY, shakespeare, tmp_path / "a")
    b, rb = step_losses(TINY, shakespeare, tmp_path / "b")
    assert a == b and ra.history == rb.history
    c, _ = step_losses(TrainConfig(**{**TINY.to_dict(), "seed": 8}), shakespeare, tmp_path / "c")
    assert c != a


def test_resume_continues_exactly(shakespeare, tmp_path):
    full, rfull = step_losses(TINY, shakespeare, tmp_path / "full")
    calls = {"n": 0}

    def stop_after_50() -> bool:
        calls["n"] += 1
        return calls["n"] >= 50

    first, r1 = step_losses(TINY, shakespeare, tmp_path / "cut", should_stop=stop_after_50)
    assert r1.interrupted and r1.steps_done == 50 and len(first) == 50
    rest, r2 = step_losses(TINY, shakespeare, tmp_path / "cut", resume_from=r1.checkpoint)
    assert first + rest == full  # the loss curve after resuming is the uninterrupted one
    assert r2.steps_done == TINY.max_steps
    assert r2.history == rfull.history


def test_nan_loss_stops_and_says_at_which_step(shakespeare, tmp_path):
    _, r = step_losses(TrainConfig(**{**TINY.to_dict(), "max_steps": 5}), shakespeare, tmp_path)
    state = torch.load(r.checkpoint, weights_only=False)
    state["model"]["tok_emb.weight"].fill_(float("nan"))
    bad = tmp_path / "nan.pt"
    torch.save(state, bad)
    with pytest.raises(NonFiniteLossError, match="became nan at step 6"):
        train(
            TrainConfig(**{**TINY.to_dict(), "max_steps": 10}),
            shakespeare,
            tmp_path,
            resume_from=bad,
        )


def test_checkpoint_loads_back_and_samples(shakespeare, tmp_path):
    step_losses(TINY, shakespeare, tmp_path)
    model, cfg, chars = load_checkpoint(tmp_path / "best.pt")
    assert cfg == TINY and len(chars) == 65
    g = torch.Generator().manual_seed(0)
    out = generate(model, torch.tensor([[chars.index("\n")]]), 30, top_k=5, generator=g)
    assert out.shape == (1, 31)
    g.manual_seed(0)
    again = generate(model, torch.tensor([[chars.index("\n")]]), 30, top_k=5, generator=g)
    assert torch.equal(out, again)


def test_learning_rate_schedule():
    cfg = TrainConfig(lr=1.0, min_lr=0.1, warmup_steps=10, max_steps=110)
    assert lr_at(0, cfg) == pytest.approx(0.1)
    assert lr_at(9, cfg) == pytest.approx(1.0)
    assert lr_at(10, cfg) == pytest.approx(1.0)
    assert lr_at(60, cfg) == pytest.approx(0.55)
    assert lr_at(110, cfg) == pytest.approx(0.1)
    assert all(lr_at(s, cfg) >= lr_at(s + 1, cfg) for s in range(10, 110))


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
        ({"block_size": 10**7}, "larger than the data split"),
    ],
)
def test_bad_options_fail_before_any_work(shakespeare, tmp_path, change, message):
    cfg = TrainConfig(**{**TINY.to_dict(), **change})
    with pytest.raises(ValueError, match=message):
        train(cfg, shakespeare, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_devices():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda", "mps")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_sampling_rejects_bad_temperature(shakespeare, tmp_path):
    _, r = step_losses(TrainConfig(**{**TINY.to_dict(), "max_steps": 2}), shakespeare, tmp_path)
    model, _, _ = load_checkpoint(r.checkpoint)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        generate(model, torch.zeros(1, 1, dtype=torch.long), 3, temperature=0)
    assert math.isfinite(r.final_train_loss)
