"""Time to quality: validation loss against wall time, attnref's defaults vs the baseline's recipe.

Run (one command, a quiet machine: it refuses to start at a 1-minute load of `QUIET_LOAD`
or more unless ``--allow-load``, and the results say which; about ``budget × arms``
seconds)::

    .venv/bin/python benchmarks/time_to_quality.py --out benchmarks/results
    .venv/bin/python benchmarks/time_to_quality.py --set max_steps=3000 --set lr=4e-3 --out DIR
    .venv/bin/python benchmarks/time_to_quality.py --device cuda --out DIR

Arms, one after the other (after a few untimed warm-up steps of each; give ``--arms`` in
another order to check that the order does not matter), each stopped at ``--budget`` seconds
of wall time (evaluations and samples included: what a student waits for):

* ``attnref``: `attention_ref.lm.train.train` with the defaults (``--set key=value`` changes
  options: candidate schedules, batch, block, lr), ``--precision`` (default ``auto``);
* ``attnref-fp32``: the same at fp32, when ``auto`` resolves to bf16: the two curves at the
  same steps show what bf16 costs in loss (the issue's bound: 0.01 nats);
* ``baseline``: ``benchmarks/baseline_trainer.py`` (nanoGPT's own model, vendored, in its
  ``train.py``'s loop) with nanoGPT's shakespeare_char recipe at
  the same shape (lr 1e-3 → 1e-4 over ``--baseline-steps``, warm-up 100, dropout 0.2), fp32,
  plain AdamW, evaluated every ``eval_interval`` steps on the *same* fixed validation batches
  as attnref (so the curves compare; nanoGPT's own 200-batch estimate would cost more time).

Prints each arm's curve (step, seconds, validation loss), then a summary: best validation
loss, the final model's loss on the whole validation split (every non-overlapping window, so no
random draw and no batch size enters it; off the clock), the time at which each arm first
reached ``--targets`` (1.60, 1.55), and writes ``time_to_quality.{json,md}`` and
``time_to_quality.png`` (if matplotlib is there) to ``--out``.

The target of issue 21: on a machine with nothing else running (1-minute load below 0.3
before the start, stated), the default ``attnref train`` reaching val ≤ 1.55 within 300 s;
the results say what it reached and when (`reached_line`). The load is read before the start
and before each arm (`_bench.LoadLog`), never after the work.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import _bench
import torch
from baseline_trainer import RECIPE, mean_loss
from baseline_trainer import train as baseline_train

from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import PRECISIONS, TrainConfig, option_defaults
from attention_ref.lm.data import CharData, get_batch, load, locate
from attention_ref.lm.train import Callbacks, EvalMetrics, estimate_loss, resolve_precision, train

ARMS = ("attnref", "attnref-fp32", "baseline")
#: a start at this 1-minute load or more is not "a machine with nothing else running"
QUIET_LOAD = 0.3
#: the target: the default attnref train at val <= TARGET within BUDGET seconds
TARGET, BUDGET = 1.55, 300.0
Curve = list[dict[str, float]]


@dataclass(frozen=True)
class Arm:
    """One arm's run: its curve (in-loop evaluations), its final model's loss on the whole
    validation split, and the steps it took."""

    curve: Curve
    whole_val: float
    steps: int


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", type=float, default=300.0, help="seconds per arm (300)")
    p.add_argument("--arms", default=",".join(ARMS), help=f"subset of {','.join(ARMS)}")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, mps or auto")
    p.add_argument("--precision", default="auto", choices=PRECISIONS, help="attnref's arm")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change an attnref option (repeatable), e.g. max_steps=3000",
    )
    p.add_argument(
        "--baseline-steps",
        type=int,
        default=RECIPE.max_steps,
        help=f"the baseline's lr_decay_iters (its recipe: {RECIPE.max_steps})",
    )
    p.add_argument(
        "--baseline-batch",
        type=int,
        default=RECIPE.batch_size,
        help=f"the baseline's batch size (the Q02 shape's: {RECIPE.batch_size})",
    )
    p.add_argument("--targets", default="1.60,1.55", help="validation losses to time")
    p.add_argument(
        "--allow-load",
        action="store_true",
        help=f"start even at a 1-minute load >= {QUIET_LOAD} (the results say it was loaded)",
    )
    p.add_argument("--data", type=Path, default=None)
    p.add_argument("--out", type=Path, default=None, help="write the results and the plot here")
    return p.parse_args()


def attnref_config(args: argparse.Namespace) -> TrainConfig:
    """The defaults with ``--set`` changes (typed as the defaults), device and precision."""
    defaults = option_defaults()
    changes: dict[str, Any] = {"device": args.device, "precision": args.precision}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or key not in defaults:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE with KEY among the options")
        changes[key] = type(defaults[key])(value)
    return TrainConfig().with_options(**changes)


def run_attnref(cfg: TrainConfig, data: CharData, budget: float, label: str) -> Arm:
    """Train until ``budget`` seconds (or the schedule's end); the curve, then the final model's
    loss on the whole validation split (off the clock)."""
    curve: Curve = []
    t0 = time.perf_counter()

    def on_eval(step: int, m: EvalMetrics, sample: str) -> None:
        curve.append({"step": step, "seconds": time.perf_counter() - t0, "val_loss": m.val_loss})
        print(
            f"  {label:13s} step {step:6d} {curve[-1]['seconds']:7.1f} s  val {m.val_loss:.4f}",
            flush=True,
        )

    device = _bench.pick_device(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    with tempfile.TemporaryDirectory() as tmp:
        r = train(
            cfg,
            data,
            Path(tmp),
            callbacks=Callbacks(on_eval=on_eval),
            should_stop=lambda: time.perf_counter() - t0 > budget,
        )
        stopped = time.perf_counter() - t0
        assert r.checkpoint is not None
        model = Checkpoint.load(r.checkpoint).build_model().to(device)
        if r.interrupted and (not curve or curve[-1]["step"] < r.steps_done):
            # the budget ended between evaluations: evaluate where it stopped (off the clock)
            loss = estimate_loss(model, fixed_val_batches(cfg, data), precision)
            curve.append({"step": r.steps_done, "seconds": stopped, "val_loss": loss})
            print(f"  {label:13s} step {r.steps_done:6d} {stopped:7.1f} s  val {loss:.4f} (stop)")
    whole = whole_val(model, cfg, data, label)
    return Arm(curve, whole, r.steps_done)


def whole_val(model: torch.nn.Module, cfg: TrainConfig, data: CharData, label: str) -> float:
    """The final model's loss on the whole validation split (`_bench.split_batches`)."""
    device = _bench.pick_device(cfg.device)
    batches = [
        (x.to(device), y.to(device))
        for x, y in _bench.split_batches(data.val, cfg.model.block_size)
    ]
    loss = _bench.split_loss(model, batches)
    print(f"  {label:13s} whole validation split ({len(data.val):,} characters): {loss:.4f}")
    return loss


def fixed_val_batches(cfg: TrainConfig, data: CharData) -> list[tuple[torch.Tensor, ...]]:
    """attnref's fixed validation batches (`train` draws them first, from ``seed + 1``)."""
    device = _bench.pick_device(cfg.device)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    return [
        tuple(t.to(device) for t in get_batch(data.val, cfg.batch_size, cfg.model.block_size, gen))
        for _ in range(cfg.eval_batches)
    ]


def run_baseline(
    cfg: TrainConfig,
    data: CharData,
    budget: float,
    steps: int,
    *,
    batch_size: int = RECIPE.batch_size,
    quiet: bool = False,
) -> Arm:
    """nanoGPT's loop and recipe at attnref's model shape (its own batch size, the Q02 shape's
    32 unless told), evaluated like attnref: on attnref's fixed batches, then on the whole
    validation split."""
    device = _bench.pick_device(cfg.device)
    base = replace(
        RECIPE,
        vocab_size=data.vocab_size,
        n_embd=cfg.model.n_embd,
        n_layer=cfg.model.n_layer,
        n_head=cfg.model.n_head,
        block_size=cfg.model.block_size,
        batch_size=batch_size,
        max_steps=steps,
    )
    val = fixed_val_batches(cfg, data)
    curve: Curve = []
    t0 = time.perf_counter()
    done = 0

    def on_step(step: int, model: Any) -> bool:
        nonlocal done
        done = step
        over = time.perf_counter() - t0 > budget
        if step % cfg.eval_interval == 0 or over:
            loss = mean_loss(model, val)  # type: ignore[arg-type]
            curve.append({"step": step, "seconds": time.perf_counter() - t0, "val_loss": loss})
            seconds = curve[-1]["seconds"]
            if not quiet:
                print(
                    f"  {'baseline':13s} step {step:6d} {seconds:7.1f} s  val {loss:.4f}",
                    flush=True,
                )
        return over

    model = baseline_train(base, data.train, 10**9, device, on_step=on_step)
    whole = math.nan if quiet else whole_val(model, cfg, data, "baseline")
    return Arm(curve, whole, done)


def warm_up(
    arms: list[str], cfg: TrainConfig, data: CharData, baseline_steps: int, baseline_batch: int
) -> None:
    """A few untimed steps of every arm (with an evaluation and a sample) before any clock
    runs: the CUDA context, kernel and primitive choices, first-use allocations."""
    short = {"max_steps": 3, "eval_interval": 3, "eval_batches": 1, "sample_tokens": 10}
    for arm in arms:
        if arm == "baseline":
            run_baseline(
                cfg.with_options(eval_interval=3, eval_batches=1),
                data,
                0.0,
                baseline_steps,
                batch_size=baseline_batch,
                quiet=True,
            )
        else:
            run_cfg = cfg if arm == "attnref" else cfg.with_options(precision="fp32")
            with tempfile.TemporaryDirectory() as tmp:
                train(run_cfg.with_options(**short), data, Path(tmp))


def first_time(curve: Curve, target: float) -> float:
    return next((p["seconds"] for p in curve if p["val_loss"] <= target), math.nan)


def plot(curves: dict[str, Curve], targets: list[float], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for arm, curve in curves.items():
        ax.plot(
            [p["seconds"] for p in curve], [p["val_loss"] for p in curve], marker=".", label=arm
        )
    for t in targets:
        ax.axhline(t, color="grey", lw=0.6, ls="--")
    ax.set(xlabel="wall time (s)", ylabel="validation loss (nats)", title="Time to quality")
    ax.set_ylim(top=min(2.6, ax.get_ylim()[1]))
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main() -> None:
    args = parse()
    try:
        cfg = attnref_config(args)
        device = _bench.pick_device(cfg.device)
        targets = [float(t) for t in args.targets.split(",")]
        arms = [a.strip() for a in args.arms.split(",") if a.strip()]
        if set(arms) - set(ARMS) or args.budget <= 0:
            raise ValueError(f"--arms among {', '.join(ARMS)}; --budget > 0")
        data = load(locate(args.data))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    loads = _bench.LoadLog()
    loads.before("start")
    start = quiet_start(loads.first_load)
    if not start["quiet"] and not args.allow_load:
        print(
            f"error: {start['words']}; wait for a quiet machine, or pass --allow-load (the "
            "results will say the start was loaded)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    print(start["words"], flush=True)
    precision = resolve_precision(cfg.precision, device)
    if precision == "fp32" and "attnref-fp32" in arms:
        arms.remove("attnref-fp32")
    print(
        f"time to quality: {', '.join(arms)}; {args.budget:.0f} s each; device {device}; "
        f"attnref {cfg.precision} -> {precision}; changes: {args.set or 'none'}",
        flush=True,
    )
    warm_up(arms, cfg, data, args.baseline_steps, args.baseline_batch)
    runs: dict[str, Arm] = {}
    for arm in arms:
        loads.before(arm)
        if arm == "baseline":
            runs[arm] = run_baseline(
                cfg, data, args.budget, args.baseline_steps, batch_size=args.baseline_batch
            )
        else:
            run_cfg = cfg if arm == "attnref" else cfg.with_options(precision="fp32")
            runs[arm] = run_attnref(run_cfg, data, args.budget, arm)
    curves = {arm: r.curve for arm, r in runs.items()}
    header = [
        "arm",
        "steps",
        "seconds",
        "best val",
        "whole val split (end)",
        *[f"time to ≤ {t:.2f}" for t in targets],
    ]
    rows = []
    for arm, c in curves.items():
        best = min((p["val_loss"] for p in c), default=math.nan)
        times = [first_time(c, t) for t in targets]
        rows.append(
            [
                arm,
                c[-1]["step"] if c else 0,
                f"{c[-1]['seconds']:.0f}" if c else "-",
                f"{best:.4f}",
                f"{runs[arm].whole_val:.4f}",
                *[f"{t:.0f} s" if t == t else "not reached" for t in times],
            ]
        )
    print("\n" + _bench.text_table(header, rows))
    same = same_step_gap(curves)
    if same is not None:
        print(f"bf16 - fp32 validation loss at the same steps: max |gap| {same:.4f} nats")
    machine = _bench.machine(device, loads)
    reached = reached_line(curves.get("attnref", []), start, args.set, args.budget)
    print(reached)
    md = [
        f"### Time to quality — `benchmarks/time_to_quality.py` ({machine['date_utc']} UTC)",
        "",
        f"{_bench.describe(machine)}. Budget {args.budget:.0f} s per arm; attnref "
        f"{precision}, changes: {', '.join(args.set) or 'none (the defaults)'}; baseline: "
        f"nanoGPT shakespeare_char recipe at the same model shape, batch {args.baseline_batch}, "
        f"{args.baseline_steps} lr steps. Curves: the in-loop evaluation on attnref's fixed "
        "validation batches (both arms on the same batches); whole val split: the final model "
        "on every non-overlapping window of the validation split, off the clock.",
        "",
        f"{start['words'][0].upper()}{start['words'][1:]}. {reached}",
        "",
        _bench.markdown_table(header, rows),
    ]
    if same is not None:
        md += ["", f"bf16 vs fp32 at the same steps: max |Δ val| = {same:.4f} nats."]
    for arm, c in curves.items():
        md += [
            "",
            f"`{arm}`:",
            "",
            _bench.markdown_table(
                ["step", "seconds", "val"],
                [[p["step"], f"{p['seconds']:.1f}", f"{p['val_loss']:.4f}"] for p in c],
            ),
        ]
    payload = {
        "args": vars(args),
        "machine": machine,
        "precision": precision,
        "config": cfg.to_flat(),
        "curves": curves,
        "whole_val": {arm: r.whole_val for arm, r in runs.items()},
        "steps": {arm: r.steps for arm, r in runs.items()},
        "bf16_fp32_max_gap": same,
        "quiet_start": start,
        "target": {"val_loss": TARGET, "budget_s": BUDGET, "line": reached},
    }
    _bench.write_results(args.out, "time_to_quality", payload, "\n".join(md))
    if args.out is not None and plot(curves, targets, args.out / "time_to_quality.png"):
        print(f"wrote {args.out / 'time_to_quality.png'}")


def quiet_start(load: float | None, limit: float = QUIET_LOAD) -> dict[str, Any]:
    """Whether the machine was quiet when the benchmark started (1-minute load < ``limit``,
    read before any work), in words that state the load."""
    if load is None:
        return {
            "load_1min": None,
            "limit": limit,
            "quiet": False,
            "words": "the load cannot be read here: not stated as a quiet machine",
        }
    quiet = load < limit
    words = (
        f"1-minute load {load:.2f} before the start: "
        + ("a quiet machine" if quiet else "NOT a quiet machine")
        + f" (quiet: < {limit:g})"
    )
    return {"load_1min": load, "limit": limit, "quiet": quiet, "words": words}


def reached_line(curve: Curve, start: dict[str, Any], changes: list[str], budget: float) -> str:
    """What the default ``attnref train`` reached and when, against the target (val ≤
    `TARGET` within `BUDGET` s on a quiet machine); the target is called met only when the
    numbers, the defaults, the budget and a quiet start all say so."""
    if not curve:
        return "attnref: no evaluation recorded"
    best = min(curve, key=lambda p: p["val_loss"])
    first = next((p for p in curve if p["val_loss"] <= TARGET), None)
    what = (
        f"attnref reached val {best['val_loss']:.4f} (its best) at {best['seconds']:.0f} s, "
        f"step {int(best['step'])}; "
    )
    if first is None:
        what += f"val ≤ {TARGET:.2f} not reached within {curve[-1]['seconds']:.0f} s"
    else:
        what += f"val ≤ {TARGET:.2f} first at {first['seconds']:.0f} s (step {int(first['step'])})"
    fair = not changes and budget <= BUDGET and start["quiet"]
    met = first is not None and first["seconds"] <= BUDGET
    if not fair:
        why = [
            w
            for w, bad in (
                ("options changed", bool(changes)),
                (f"budget over {BUDGET:.0f} s", budget > BUDGET),
                ("not a quiet start", not start["quiet"]),
            )
            if bad
        ]
        return f"{what}. The target is not judged here: {', '.join(why)}."
    verdict = "met" if met else "not met"
    if first is not None and not met:  # "first at 300 s" beside "not met": say by how much
        late = first["seconds"] - BUDGET
        verdict += f" (the first ≤ {TARGET:.2f} came {late:.2f} s past the budget)"
    return f"{what}. Target (val ≤ {TARGET:.2f} within {BUDGET:.0f} s, quiet machine): {verdict}."


def same_step_gap(curves: dict[str, Curve]) -> float | None:
    """Largest |val(bf16) - val(fp32)| over the steps both arms evaluated, if both ran."""
    if "attnref" not in curves or "attnref-fp32" not in curves:
        return None
    fp32 = {p["step"]: p["val_loss"] for p in curves["attnref-fp32"]}
    gaps = [abs(p["val_loss"] - fp32[p["step"]]) for p in curves["attnref"] if p["step"] in fp32]
    return max(gaps) if gaps else None


if __name__ == "__main__":
    main()
