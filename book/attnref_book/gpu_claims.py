"""The sentences the book writes about the GPU benchmarks, each from the numbers it states.

Pure (no torch, no mlflow), like `attnref_book.speed_claims` (whose rule it
follows: two timings are told apart only when their ranges do not overlap): the step on a GPU
(``gpu_step.json``), nanoGPT's baby GPT raced both ways (``baby_gpt.json``) and N seeds at once
(``seeds_vmap.json``). Two losses measured by two estimators are told apart only beyond the
difference between the estimators (`told_apart`).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from attention_ref.experiments.spread import overlap, ratio_spread

#: issue 33's targets on one GPU: attnref's graphed step at least this many times nanoGPT's
#: compiled ``train.py`` in tokens/s (batch 32), Q02's 6,000 steps and the ablation's three
#: arms (evaluations included) within these seconds
GPU_TARGETS = {"times_nanogpt": 5.0, "q02_s": 6.0, "ablation_s": 30.0}
#: the time of one iteration as nanoGPT's `train.py` prints it ("iter 490: …, time 5.47ms")
_PRINTED = r"time ([\d.]+)ms"
#: the steps of Q02's default run (the ``q02_s`` and ``ablation_s`` targets are for these)
Q02_STEPS = 6000


def gpu_step_ms(gs: Mapping[str, Any], batch: int, arm: str) -> list[float]:
    """One arm's ms/step in each repetition of ``benchmarks/gpu_step.py``'s step table."""
    steps = int(gs["args"]["steps"])
    row = next(r for r in gs["steps"] if r["batch"] == batch and r["arm"] == arm)
    return [1e3 * s / steps for s in row["seconds"]]


def _faster(a_name: str, a: Sequence[float], b_name: str, b: Sequence[float]) -> str:
    """``a`` against ``b`` in ms/step (medians), told apart only beyond their ranges."""
    ma, mb = statistics.median(a), statistics.median(b)
    said = f"{a_name} {ma:.3f} ms against {b_name} {mb:.3f} ms"
    if overlap(a, b):
        return f"{said} (the ranges overlap: no measurable difference)"
    if ma < mb:
        _, lo, hi = ratio_spread(b, a)
        return f"{said}: {mb / ma:.2f}× faster (runs {lo:.2f}–{hi:.2f})"
    _, lo, hi = ratio_spread(a, b)
    return f"{said}: {ma / mb:.2f}× slower (runs {lo:.2f}–{hi:.2f})"


def gpu_claims(gs: Mapping[str, Any], batch: int = 32) -> list[str]:
    """The step on a GPU (``gpu_step.json``): the graph against eager and bf16 against fp32 at
    ``batch``, attnref against nanoGPT's compiled ``train.py``, and issue 33's targets
    (`GPU_TARGETS`), each said met or not with its figure. Nothing is judged unless the run was
    on CUDA: a GPU target is never called met without a measurement on one."""
    m = gs["machine"]
    if m.get("device") != "cuda":
        return [
            f"This run was on {m.get('device', 'an unnamed device')}, not a GPU: the GPU "
            "targets are not judged."
        ]
    ms = {
        arm: gpu_step_ms(gs, batch, arm)
        for arm in ("eager fp32", "eager bf16", "graph fp32", "graph bf16")
    }
    out = []
    other = sorted({r["batch"] for r in gs["steps"]} - {batch})
    if other:
        small, big = gpu_step_ms(gs, other[0], "eager fp32"), ms["eager fp32"]
        pair = (
            f"{statistics.median(big):.3f} and {statistics.median(small):.3f} ms, batch "
            f"{batch} and {other[0]}"
        )
        out.append(
            f"Eager in fp32, a step of batch {batch} takes as long as one of batch {other[0]} "
            f"({pair}; the ranges overlap): the step is bound by launching its kernels, not "
            "by its arithmetic."
            if overlap(small, big)
            else f"Eager in fp32, a step of batch {batch} and one of batch {other[0]} differ "
            f"beyond their ranges ({pair})."
        )
    out += [
        f"At batch {batch}, one CUDA graph per step against the same step eager: "
        + _faster("graph fp32", ms["graph fp32"], "eager fp32", ms["eager fp32"])
        + "; "
        + _faster("graph bf16", ms["graph bf16"], "eager bf16", ms["eager bf16"])
        + ".",
        "bf16 against fp32: "
        + _faster("graph bf16", ms["graph bf16"], "graph fp32", ms["graph fp32"])
        + " with the graph; eager, "
        + _faster("bf16", ms["eager bf16"], "fp32", ms["eager fp32"])
        + ".",
    ]
    target = GPU_TARGETS["times_nanogpt"]
    nano = [r for r in gs.get("nanogpt") or [] if "tokens_per_s" in r and r["batch"] == batch]
    compiled = [r for r in nano if r["compile"]]
    if not compiled:
        why = "was not compiled" if nano else "was not measured"
        out.append(
            f"nanoGPT's `train.py` at batch {batch} {why} in this run: the target "
            f"(≥ {target:g}× its compiled tokens/s) is not judged."
        )
    else:
        n = compiled[-1]
        row = next(r for r in gs["steps"] if r["batch"] == batch and r["arm"] == "graph bf16")
        ratio = row["tokens_per_s"] / n["tokens_per_s"]
        # nanoGPT runs once: its spread is the iterations it printed (their "time X ms")
        printed = [float(t) for line in n.get("tail", []) for t in re.findall(_PRINTED, line)]
        fastest = min(printed) if printed else n["ms_per_step"]
        slowest = fastest / max(ms["graph bf16"])
        spread = (
            f"{slowest:.2f}× between nanoGPT's fastest printed iteration ({fastest:.2f} ms) "
            "and attnref's slowest repetition"
            if printed
            else f"{slowest:.2f}× in attnref's slowest repetition"
        )
        verdict = (
            "met"
            if slowest >= target
            else "not established: met by the averages only, not across the runs' spread"
            if ratio >= target
            else "not met"
        )
        out.append(
            f"attnref's graphed bf16 step trains at {ratio:.2f}× the tokens/s of nanoGPT's "
            f"compiled `train.py` in the same run ({row['ms_per_step']:.3f} against "
            f"{n['ms_per_step']:.3f} ms a step, nanoGPT's the average of one run's iterations "
            f"{n.get('first_iter', '?')}–{n.get('last_iter', '?')}; {spread}): the target of "
            f"≥ {target:g}× is {verdict}."
        )
    runs = gs.get("runs") or []
    q02 = [r for r in runs if r["run"] == "q02 defaults"]
    ablation = [r for r in runs if r["run"].startswith("ablation")]
    for chosen, limit, what, count in (
        (q02, GPU_TARGETS["q02_s"], "Q02's default run", 1),
        (ablation, GPU_TARGETS["ablation_s"], "The ablation's three arms", 3),
    ):
        if len(chosen) != count or any(r["steps"] != Q02_STEPS for r in chosen):
            out.append(
                f"{what} did not run at {Q02_STEPS:,} steps here: its target "
                f"(≤ {limit:g} s) is not judged."
            )
            continue
        wall = sum(r["wall_s"] for r in chosen)
        side = "met" if wall <= limit else "not met"
        if count == 1:
            r = chosen[0]
            how = (
                f"({Q02_STEPS:,} steps, evaluations included; best validation loss "
                f"{r['best_val']:.4f}, one seed, {r['precision']})"
            )
        else:
            how = f"({Q02_STEPS:,} steps each, evaluations included, one after the other)"
        out.append(f"{what} {how} took {wall:.1f} s: the target of ≤ {limit:g} s is {side}.")
    return out


def estimator_gap(arms: Sequence[Mapping[str, Any]]) -> float | None:
    """The largest difference between two estimates of one checkpoint's validation loss over
    ``arms``: attnref's evaluation on its fixed batches (``best_val``) against the same
    checkpoint on the whole validation split (``best_whole_val``); ``None`` where no arm has
    both."""
    gaps = [
        abs(a["best_val"] - a["best_whole_val"])
        for a in arms
        if a.get("best_val") is not None and a.get("best_whole_val") is not None
    ]
    return max(gaps) if gaps else None


def told_apart(margin: float, gap: float | None) -> bool:
    """The rule for a claim across two estimators (attnref's fixed batches against nanoGPT's
    fresh ones): one loss is lower than the other only by a margin larger than the difference
    between two estimates of one checkpoint (`estimator_gap`); with that difference unknown,
    never."""
    return gap is not None and abs(margin) > gap


def _first_at(evals: Sequence[Mapping[str, float]], level: float) -> Mapping[str, float] | None:
    return next((e for e in evals if e["val"] <= level), None)


def baby_gpt_claims(bg: Mapping[str, Any], more: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """nanoGPT's baby GPT both ways (``benchmarks/baby_gpt.py``'s ``baby_gpt.json``): issue 33's
    stretch target (attnref's preset at val ≤ ``target`` in less wall time than nanoGPT's own
    ``train.py`` *in the same run*), the quality of the two over attnref's seeds (``more``:
    later runs of the script with attnref's arms only, named as later runs where their seeds
    are counted), and the time each took
    to the level both reached. Nothing is judged off a GPU or without nanoGPT's evaluations.
    The two arms' losses are two estimators (attnref's fixed batches, nanoGPT's fresh ones):
    one is called lower only by `told_apart`'s rule."""
    m = bg["machine"]
    if m.get("device") != "cuda":
        return [
            f"This run was on {m.get('device', 'an unnamed device')}, not a GPU: the "
            "stretch target is not judged."
        ]
    target = bg["target"]
    ours = [a for a in bg["arms"] if a["arm"].startswith("attnref")]
    nano = next((a for a in bg["arms"] if a["arm"].startswith("nanoGPT") and a.get("evals")), None)
    if not ours or nano is None:
        return [
            "nanoGPT's `train.py` or attnref's preset has no evaluations in this run: the "
            "stretch target is not judged."
        ]
    same = ours[0]
    out = []
    mine, theirs = same.get("reached"), nano.get("reached")
    if mine and (theirs is None or mine["s"] < theirs["s"]):
        verdict = "met"
    elif mine is None and theirs is None:
        verdict = "not met: neither reached it in that run"
    else:
        verdict = "not met"

    def said(arm: Mapping[str, Any], got: Mapping[str, float] | None) -> str:
        if got is None:
            return f"did not reach it (best {arm['best_val']:.4f}, step {arm['best_step']:,})"
        return f"reached it at step {got['step']:,}, {got['s']:.1f} s into its run"

    out.append(
        f"Val ≤ {target} in the same run: attnref's preset (seed "
        f"{same['options']['seed']}) {said(same, mine)}; nanoGPT's `train.py` "
        f"{said(nano, theirs)}. The stretch target (≤ {target} in less wall time than "
        f"nanoGPT's `train.py` in the same run) is {verdict}."
    )
    seeds = [*ours, *(a for run in more for a in run["arms"] if a["arm"].startswith("attnref"))]
    if len(seeds) > 1:
        bests = [a["best_val"] for a in seeds]
        hit = [a for a in seeds if a.get("reached")]
        where = "; ".join(
            f"seed {a['options']['seed']} at step {a['reached']['step']:,}, "
            f"{a['reached']['s']:.1f} s"
            for a in hit
        )
        later = [a["options"]["seed"] for a in seeds[len(ours) :]]
        gpus = {run["machine"].get("gpu") for run in [bg, *more]}
        kind = f"the same kind of GPU, {gpus.pop()}" if len(gpus) == 1 else "another GPU"
        plural = "s" if len(later) > 1 else ""
        whose = f" (seed{plural} {', '.join(map(str, later))} in a later run on {kind})"
        # nanoGPT's figure is its own estimator: inside attnref's spread widened by the
        # difference between two estimates of one checkpoint, the two are not told apart
        gap = estimator_gap(seeds)
        widen = gap or 0.0
        outside = max(min(bests) - nano["best_val"], nano["best_val"] - max(bests), 0.0)
        how = (
            "attnref's fixed evaluation batches against its whole validation split; nanoGPT's "
            "figure is its own estimate, on fresh batches"
        )
        if not told_apart(outside, gap):
            where_it_is = (
                f"outside that spread by {outside:.4f}, no more than the {widen:.4f} by which "
                f"two estimates of one checkpoint differ ({how})"
                if outside
                else f"within that spread (two estimates of one checkpoint differ by up to "
                f"{widen:.4f}: {how})"
            )
            spread = f"{where_it_is}: the two are not told apart."
        else:
            side = "lower" if nano["best_val"] < min(bests) else "higher"
            spread = (
                f"outside that spread by {outside:.4f}, more than the {widen:.4f} by which two "
                f"estimates of one checkpoint differ ({how}): nanoGPT's is {side}."
            )
        reached = f" ({where})" if hit else ""
        out.append(
            f"Over {len(seeds)} seeds{whose if later else ''}, attnref's best validation loss "
            f"is {min(bests):.4f}–{max(bests):.4f} (mean {statistics.mean(bests):.4f}); "
            f"{len(hit)} of {len(seeds)} reached {target}{reached}. nanoGPT's best, "
            f"{nano['best_val']:.4f} (its one seed), is {spread}"
        )
    level = max(same["best_val"], nano["best_val"])
    a, b = _first_at(same["evals"], level), _first_at(nano["evals"], level)
    if a is not None and b is not None:
        launch = a["s"] + (same.get("before_clock_s") or 0.0)
        ratio = b["s"] / launch
        margin, gap = same["best_val"] - nano["best_val"], estimator_gap([same])
        if told_apart(margin, gap):
            better = "attnref's" if margin < 0 else "nanoGPT's"
            quality = f"{better} best is lower by {abs(margin):.4f}, more than the {gap:.4f}"
        else:
            quality = f"their bests differ by {abs(margin):.4f}, " + (
                "an unknown difference" if gap is None else f"no more than the {gap:.4f}"
            )
        out.append(
            f"To the level both reached in that run, each on its own estimate (val ≤ "
            f"{level:.4f}; {quality} between two estimates of attnref's checkpoint, its "
            "fixed batches against its whole validation split"
            + ("" if told_apart(margin, gap) else ": not told apart in quality")
            + f"), attnref took "
            f"{a['s']:.1f} s (step {a['step']:,}; {launch:.1f} s from its process's launch, "
            f"its imports and the data read included) and nanoGPT's `train.py` {b['s']:.1f} s "
            f"from its launch (step {b['step']:,}; {nano['to_first_iter_s']:.1f} s of it "
            f"before its first iteration: start, compilation, the evaluation at step 0): "
            + (
                f"from launch, nanoGPT's took {ratio:.2f}× as long as attnref's"
                if ratio > 1
                else f"from launch, attnref's took {1 / ratio:.2f}× as long as nanoGPT's"
            )
            + " (one run each: no spread)."
        )
    return out


def seeds_at_once_claims(sv: Mapping[str, Any]) -> list[str]:
    """N seeds at once (``benchmarks/seeds_vmap.py``'s ``seeds_vmap.json``): vmap against N
    separate runs, told apart only beyond their ranges, at each N; and whether the two are the
    same runs (the largest weight difference after the run)."""
    times = sv["times_s"]
    steps = int(sv["args"]["steps"])
    ns = sorted({int(k.split("N=")[1]) for k in times})
    out = []
    for n in ns:
        sep = [1e3 * t / (steps * n) for t in times[f"separate N={n}"]]
        vm = [1e3 * t / (steps * n) for t in times[f"vmap N={n}"]]
        out.append(f"N = {n}: " + _faster("vmap", vm, "separate", sep) + " per seed-step.")
    diff = float(sv["same"].rsplit("largest weight difference ", 1)[1])
    out.append(
        f"The same runs? Not to the bit: after the run the weights of the two differ by up to "
        f"{diff:.3g} (other kernels, batched, sum in another order)."
        if diff > 0
        else "The two give the same weights to the bit."
    )
    return out
