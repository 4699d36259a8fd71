"""The graph-ready step (`TrainStep`): on the CPU today's numbers to the last bit; on CUDA the
step captured in one graph, agreeing with the eager step within `GRAPH_TOL`.

Runs without this folder's conftest (no hypothesis, no mlflow needed), as on a bare GPU
machine: ``python3 -m pytest -q -p no:cacheprovider --noconftest tests/lm/test_graph_step.py``.
The CUDA tests are skipped where torch sees no GPU.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from attention_ref.lm.data import CharData, get_batch
from attention_ref.lm.model import CharGPT
from attention_ref.lm.train import (
    Callbacks,
    StartInfo,
    TrainStep,
    capture_step,
    lr_at,
    make_optimizer,
    resolve_precision,
    seed_everything,
    train,
    training_step,
)
from tests.configs import tiny

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
#: graphed vs eager on CUDA, fp32, over 200 steps: the largest difference of a step's loss and
#: of a final parameter. The two run the same kernels on the same random numbers, so they are
#: expected to agree far closer; a wrong learning rate, batch or skipped step moves the loss by
#: more than 1e-2 within a few steps (the controls below).
GRAPH_TOL = 1e-3


@pytest.fixture(scope="module")
def data(shakespeare: CharData) -> CharData:
    """Tiny Shakespeare, found as the suite finds it (conftest's `shakespeare_path`)."""
    return shakespeare


def todays_loop(cfg, data: CharData, steps: int, precision: str = "fp32"):
    """The eager loop of every run before `TrainStep` (attnref at ecaef51): a fresh batch
    tensor per step from `get_batch`, the rate written into the groups as a Python float."""
    batch_gen = seed_everything(cfg.seed)
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size))
    optimizer = make_optimizer(model, cfg)
    seen = []
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, cfg)
        x, y = get_batch(data.train, cfg.batch_size, cfg.model.block_size, batch_gen)
        loss, norm = training_step(
            model, optimizer, x, y, grad_clip=cfg.grad_clip, precision=precision
        )
        seen.append((loss.item(), norm.item()))
    return seen, model


def graph_ready_loop(cfg, data: CharData, steps: int, precision: str = "fp32", *, lr_dtype=None):
    batch_gen = seed_everything(cfg.seed)
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size))
    step_fn = TrainStep(model, make_optimizer(model, cfg), data.train, cfg, precision, batch_gen)
    if lr_dtype is not None:  # the control: the rate rounded to another dtype
        step_fn.lr = step_fn.lr.to(lr_dtype)
        step_fn.use_lr_tensor()
    buffers = (step_fn.x.data_ptr(), step_fn.y.data_ptr())
    seen = []
    for step in range(steps):
        step_fn.set_lr(lr_at(step, cfg))
        loss, norm = step_fn()
        seen.append((loss.item(), norm.item()))
    assert (step_fn.x.data_ptr(), step_fn.y.data_ptr()) == buffers  # drawn in place
    assert all(g["lr"] is step_fn.lr for g in step_fn.optimizer.param_groups)
    return seen, model


def same_parameters(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_graph_ready_step_is_todays_step_to_the_last_bit_on_the_cpu(data, precision):
    cfg = tiny()
    old, old_model = todays_loop(cfg, data, 20, precision)
    new, new_model = graph_ready_loop(cfg, data, 20, precision)
    assert new == old  # every loss and gradient norm, bit for bit
    assert same_parameters(new_model, old_model)
    # the comparison sees a difference as small as the rate's rounding to float32
    rounded, rounded_model = graph_ready_loop(cfg, data, 20, precision, lr_dtype=torch.float32)
    assert rounded != old and not same_parameters(rounded_model, old_model)


def test_train_on_the_cpu_runs_todays_steps(data, tmp_path):
    """`train` (which runs a `TrainStep`) gives the losses of today's loop, reads every step
    whatever ``metrics_every`` says (no graph on a CPU), and says nothing of a graph."""
    cfg = tiny(max_steps=20, eval_interval=20, eval_batches=1, sample_tokens=0, precision="fp32")
    old, old_model = todays_loop(cfg, data, 20, "fp32")
    losses, starts = [], []
    r = train(
        cfg,
        data,
        tmp_path,
        metrics_every=7,
        callbacks=Callbacks(
            on_start=starts.append, on_step=lambda s, m: losses.append(m.train_loss)
        ),
    )
    assert losses == [loss for loss, _ in old]
    assert starts[0].graph is False and starts[0].graph_note == ""
    from attention_ref.lm.checkpoint import Checkpoint

    last = Checkpoint.load(r.checkpoint)
    assert last.device_batch_rng is None  # the CPU's batches come from batch_rng
    assert all(torch.equal(last.model[k], v) for k, v in old_model.state_dict().items())


def test_asking_for_a_graph_on_the_cpu_falls_back_with_one_line(data, tmp_path):
    starts: list[StartInfo] = []
    cfg = tiny(max_steps=2, eval_interval=2, eval_batches=1, sample_tokens=0, cuda_graph="on")
    train(cfg, data, tmp_path, callbacks=Callbacks(on_start=starts.append))
    assert starts[0].graph is False
    assert starts[0].graph_note == "CUDA graph off: cpu is not a CUDA device"
    step_fn = TrainStep(
        *_model_and_optimizer(cfg, data), data.train, cfg, "fp32", torch.Generator()
    )
    with pytest.raises(ValueError, match="a CUDA graph needs a CUDA device, not cpu"):
        capture_step(step_fn)


def test_cuda_graph_option_is_checked_where_it_enters():
    with pytest.raises(ValueError, match="--cuda-graph must be one of auto, on, off, got 'yes'"):
        tiny(cuda_graph="yes")
    assert tiny(cuda_graph="off").to_flat()["cuda_graph"] == "off"
    # a config written before the option (a checkpoint, MLflow's config.json) still loads
    flat = tiny().to_flat()
    del flat["cuda_graph"]
    assert type(tiny()).from_flat(flat) == tiny()


def test_auto_precision_on_cuda_follows_the_gpus_bf16():
    cuda = torch.device("cuda")  # only named: no GPU needed to check the rule
    assert resolve_precision("auto", cuda, cuda_bf16=True) == "bf16"
    assert resolve_precision("auto", cuda, cuda_bf16=False) == "fp32"
    assert resolve_precision("fp32", cuda, cuda_bf16=True) == "fp32"


def _model_and_optimizer(cfg, data, device="cpu"):
    model = CharGPT(replace(cfg.model, vocab_size=data.vocab_size)).to(device)
    return model, make_optimizer(model, cfg)


def cuda_run(
    data, tmp_path, name: str, metrics_every: int = 1, resume=None, stop_at=None, **change
):
    options = {
        "device": "cuda",
        "max_steps": 200,
        "eval_interval": 100,
        "eval_batches": 2,
        "sample_tokens": 0,
        "precision": "fp32",
    }
    cfg = tiny(**(options | change))
    steps: dict[int, float] = {}
    starts: list[StartInfo] = []
    calls = {"n": 0}

    def should_stop() -> bool:
        calls["n"] += 1
        return stop_at is not None and calls["n"] >= stop_at

    r = train(
        cfg,
        data,
        tmp_path / name,
        metrics_every=metrics_every,
        resume_from=resume,
        should_stop=should_stop,
        callbacks=Callbacks(
            on_start=starts.append, on_step=lambda s, m: steps.__setitem__(s, m.train_loss)
        ),
    )
    return steps, starts[0], r


@CUDA
def test_the_graph_is_captured_and_replayed_once_a_step(data, tmp_path, monkeypatch):
    replays: dict[int, int] = {}  # per graph
    replay = torch.cuda.CUDAGraph.replay

    def counted(self):
        replays[id(self)] = replays.get(id(self), 0) + 1
        return replay(self)

    monkeypatch.setattr(torch.cuda.CUDAGraph, "replay", counted)
    steps, info, r = cuda_run(data, tmp_path, "graph", cuda_graph="on")
    assert info.graph is True and info.graph_note.startswith("CUDA graph on"), info.graph_note
    # the step's graph once a step; the evaluation's (FixedEval) once per evaluation (100, 200)
    assert sorted(replays.values()) == [2, 200] and r.steps_done == 200
    assert len(steps) == 200  # metrics_every=1: read after every replay


@CUDA
def test_graphed_and_eager_agree_over_200_steps(data, tmp_path):
    from attention_ref.lm.checkpoint import Checkpoint

    graphed, g_info, g = cuda_run(data, tmp_path, "graph", cuda_graph="on")
    eager, e_info, e = cuda_run(data, tmp_path, "eager", cuda_graph="off")
    assert g_info.graph and not e_info.graph
    assert sorted(graphed) == sorted(eager) == list(range(1, 201))
    worst = max(abs(graphed[s] - eager[s]) for s in eager)
    assert worst <= GRAPH_TOL, worst
    gp, ep = Checkpoint.load(g.checkpoint).model, Checkpoint.load(e.checkpoint).model
    assert max((gp[k] - ep[k]).abs().max().item() for k in ep) <= GRAPH_TOL
    assert abs(g.final_val_loss - e.final_val_loss) <= GRAPH_TOL
    assert eager[200] < eager[1] - 0.5  # it learns: a step that did nothing would not
    # the control: a warm-up one step longer (another schedule) moves the losses beyond it
    shifted, _, _ = cuda_run(data, tmp_path, "shifted", cuda_graph="off", warmup_steps=11)
    assert max(abs(shifted[s] - eager[s]) for s in eager) > GRAPH_TOL


@CUDA
def test_a_graphed_run_reads_its_loss_only_every_metrics_every_steps(data, tmp_path):
    every, _, _ = cuda_run(data, tmp_path, "every", cuda_graph="on")
    sparse, info, r = cuda_run(data, tmp_path, "sparse", cuda_graph="on", metrics_every=30)
    assert info.graph
    # multiples of 30, the evaluations (100, 200) and the last step
    assert sorted(sparse) == [30, 60, 90, 100, 120, 150, 180, 200]
    assert all(sparse[s] == every[s] for s in sparse)  # reading less changes no number
    assert r.steps_done == 200


@CUDA
def test_a_graphed_run_resumes_as_the_uninterrupted_one(data, tmp_path):
    from attention_ref.lm.checkpoint import Checkpoint

    full, _, _ = cuda_run(data, tmp_path, "full", cuda_graph="on")
    first, _, r1 = cuda_run(data, tmp_path, "cut", cuda_graph="on", stop_at=50)
    assert r1.interrupted and r1.steps_done == 50
    resume = Checkpoint.load(r1.checkpoint)
    assert resume.device_batch_rng is not None  # the device's batch generator was saved
    rest, info, _ = cuda_run(data, tmp_path, "cut", cuda_graph="on", resume=resume)
    assert info.graph and info.start_step == 50
    assert sorted(first | rest) == sorted(full)
    assert max(abs((first | rest)[s] - full[s]) for s in full) <= GRAPH_TOL


@CUDA
def test_auto_on_cuda_graphs_the_step_in_bf16_where_the_gpu_has_it(data, tmp_path):
    steps, info, r = cuda_run(data, tmp_path, "auto", cuda_graph="auto", precision="auto")
    assert info.graph
    expected = "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    assert info.precision == expected and f"({expected};" in info.graph_note
    assert steps[200] < steps[1] - 0.5 and r.best_val_loss < 3.0


def _replayed_losses(dropout: float, replays: int = 5) -> list[float]:
    """A captured step on a split of one repeated character (every batch the same) at rate 0
    (the weights never move): the losses of ``replays`` replays differ only by dropout."""
    cfg = tiny(device="cuda", precision="fp32", dropout=dropout)
    seed_everything(cfg.seed)
    model = CharGPT(replace(cfg.model, vocab_size=65)).to("cuda")
    step = TrainStep(
        model,
        make_optimizer(model, cfg),
        torch.zeros(500, dtype=torch.long),
        cfg,
        "fp32",
        torch.Generator().manual_seed(cfg.seed),
    )
    step.set_lr(0.0)
    graph = capture_step(step)
    seen = []
    for _ in range(replays):
        graph.replay()
        assert step.loss is not None
        seen.append(step.loss.item())
    return seen


@CUDA
def test_a_graphed_step_draws_a_new_dropout_mask_at_each_replay():
    """The baby-GPT preset trains with dropout 0.2 in the graph: each replay must draw new
    masks (the default CUDA generator's offset moves on), not repeat the captured one."""
    with_dropout = _replayed_losses(0.3)
    assert len(set(with_dropout)) == len(with_dropout), with_dropout
    without = _replayed_losses(0.0)  # the control: the same batch, the same weights
    assert len(set(without)) == 1, without


@CUDA
def test_a_graphed_run_with_dropout_learns_like_the_eager_one(data, tmp_path):
    """Not the same numbers (the masks come from the generator in another order), the same
    training: within 0.1 of each other after 200 steps, and learning."""
    graphed, info, g = cuda_run(data, tmp_path, "graph", cuda_graph="on", dropout=0.2)
    _, _, e = cuda_run(data, tmp_path, "eager", cuda_graph="off", dropout=0.2)
    assert info.graph and graphed[200] < graphed[1] - 0.5
    assert abs(g.final_val_loss - e.final_val_loss) <= 0.1, (g.final_val_loss, e.final_val_loss)
