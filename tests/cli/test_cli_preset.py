"""``attnref train --preset``: a whole recipe by name, nanoGPT's baby GPT among them (issue 33's
stretch), with the options given beside it winning."""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

import mlflow
import pytest

from attention_ref.cli.main import main
from attention_ref.lm.config import PRESETS, TrainConfig, preset_config
from tests.configs import TINY_ARGS as TINY

ROOT = Path(__file__).resolve().parents[2]
NANOGPT = ROOT / "benchmarks" / "nanogpt"


def _assignments(path: Path) -> dict[str, object]:
    """The ``name = literal`` lines of one of nanoGPT's Python config files."""
    out: dict[str, object] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                # an expression (nanoGPT's device type) is not a recipe value
                with contextlib.suppress(ValueError):
                    out[target.id] = ast.literal_eval(node.value)
    return out


def test_the_nanogpt_preset_is_nanogpts_own_shakespeare_char_recipe():
    """Read from the vendored nanoGPT (its train.py defaults, then the config file over them):
    a value changed on either side fails here."""
    theirs = _assignments(NANOGPT / "train.py") | _assignments(
        NANOGPT / "config" / "train_shakespeare_char.py"
    )
    cfg = preset_config("nanogpt-shakespeare-char")
    ours = {
        "n_layer": cfg.model.n_layer,
        "n_head": cfg.model.n_head,
        "n_embd": cfg.model.n_embd,
        "block_size": cfg.model.block_size,
        "dropout": cfg.model.dropout,
        "batch_size": cfg.batch_size,
        "learning_rate": cfg.lr,
        "max_iters": cfg.max_steps,
        "lr_decay_iters": cfg.max_steps,
        "min_lr": cfg.min_lr,
        "warmup_iters": cfg.warmup_steps,
        "weight_decay": cfg.weight_decay,
        "grad_clip": cfg.grad_clip,
        "eval_interval": cfg.eval_interval,
        "eval_iters": cfg.eval_batches,
        "gradient_accumulation_steps": 1,
        "beta1": 0.9,
        "beta2": 0.99,  # make_optimizer's
    }
    assert {k: theirs[k] for k in ours} == ours


def test_the_optimizer_uses_the_betas_the_preset_relies_on():
    import torch

    from attention_ref.lm.model import CharGPT
    from attention_ref.lm.step import make_optimizer

    cfg = preset_config(
        "nanogpt-shakespeare-char", n_layer=1, n_embd=12, n_head=6, block_size=8, device="cpu"
    )
    opt = make_optimizer(CharGPT(cfg.model), cfg)
    assert opt.defaults["betas"] == (0.9, 0.99) and isinstance(opt, torch.optim.AdamW)


def test_q02_is_the_defaults_and_options_win_over_a_preset():
    assert PRESETS["q02"] == {} and preset_config("q02") == TrainConfig()
    cfg = preset_config("nanogpt-shakespeare-char", n_layer=2, dropout=0.0)
    assert (cfg.model.n_layer, cfg.model.dropout, cfg.model.n_embd) == (2, 0.0, 384)
    with pytest.raises(ValueError, match="--preset must be one of q02, nanogpt-shakespeare-char"):
        preset_config("gpt-2")


def test_train_with_the_preset_names_its_run_and_keeps_the_preset_where_nothing_is_given(
    store, capsys
):
    """The tiny model's options given beside the preset win; dropout (not given) is the
    preset's 0.2; the run is named after the preset, not ``q02-multihead``."""
    assert "--dropout" not in TINY
    code = main(
        [
            "train",
            *TINY,
            "--n-head",
            "2",
            "--preset",
            "nanogpt-shakespeare-char",
            "--max-steps",
            "6",
            "--eval-interval",
            "6",
            "--warmup-steps",
            "2",
        ]
    )
    assert code == 0, capsys.readouterr().err
    (run,) = mlflow.search_runs(experiment_names=["shakespeare"], output_format="list")
    params = run.data.params
    assert run.info.run_name == "nanogpt-shakespeare-char"
    assert params["dropout"] == "0.2" and params["n_embd"] == "32" and params["max_steps"] == "6"
    assert params["lr"] == "0.01"  # the tiny config's, given beside it


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--preset", "gpt-2"], "one of q02, nanogpt-shakespeare-char, got 'gpt-2'"),
        (["--preset", "q02", "--resume", "f0"], "leave out --preset"),
    ],
)
def test_a_bad_preset_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, said):
    monkeypatch.chdir(tmp_path)
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err
    assert list(tmp_path.iterdir()) == []  # nothing made: no store, no runs folder
