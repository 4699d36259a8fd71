"""The sentences the book writes about the speed benchmarks, each from the numbers it states.

Pure (no torch, no mlflow): every function takes the JSON a script in ``benchmarks/`` wrote
(``throughput.json``, ``time_to_quality.json``, ``scaling.json``, ``sampling.json``,
``cli_latency.json``; the GPU's in `attnref_book.gpu_claims`) and returns
the sentences its numbers support; the experiments page prints them, and
``tests/experiments/test_speed_claims.py`` puts numbers on both sides of every condition.

Two timings are told apart only when their ranges (min–max over the interleaved repetitions)
do not overlap: on a noisy 2-core machine a difference of medians inside the spread is noise.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from attention_ref.experiments.spread import overlap, ratio_spread

#: the Q02 shape's point on each axis of ``benchmarks/scaling.py``
Q02_POINTS = {("block_size", 128), ("n_embd", 128), ("n_layer", 2)}


def ratio_words(a: Sequence[float], b: Sequence[float]) -> str:
    """``a``'s median over ``b``'s with its spread (`ratio_spread`)."""
    mid, lo, hi = ratio_spread(a, b)
    if len(a) == len(b) == 1:
        return f"{mid:.2f}× (one run each: no spread)"
    return f"{mid:.2f}× (runs {lo:.2f}–{hi:.2f})"


def _batch_words(tp: Mapping[str, Any]) -> str:
    """The batch the throughput ran at, and the defaults' where it is another."""
    from attention_ref.lm.config import TrainConfig

    batch = tp.get("args", {}).get("batch_size")
    if batch is None:
        return ""
    default = TrainConfig().batch_size
    return f", batch {batch}" + ("" if batch == default else f"; the defaults train at {default}")


def throughput_claims(tp: Mapping[str, Any]) -> list[str]:
    """attnref against the baseline at equal precision (fp32, the same shape: the baseline
    has no other), then what bf16 gives attnref against its own fp32 run; each ratio with its
    spread, and "no measurable difference" where the ranges overlap."""
    arms = tp["arms"]
    base = arms["baseline"]["tokens_per_s"]
    fp32 = arms.get("attnref-fp32")
    if fp32 is None and tp["precision"] == "fp32":
        fp32 = arms["attnref"]
    out = []
    if fp32 is not None:
        ours = fp32["tokens_per_s"]
        out.append(
            f"At equal precision (fp32, the same shape{_batch_words(tp)}) attnref trains at "
            f"{ratio_words(ours, base)} the baseline's tokens/s"
            + (
                "; the two ranges overlap: no measurable difference."
                if overlap(ours, base)
                else "."
            )
        )
    if tp["precision"] == "fp32" and not tp["machine"]["cpu_bf16_flags"]:
        out.append(
            "This CPU has no bf16 instructions, so `--precision auto` trains in fp32, the "
            "baseline's arithmetic. The gain of the fast path is bf16 autocast, which needs "
            "avx512_bf16 or amx_bf16."
        )
    elif tp["precision"] != "fp32" and fp32 is not None:
        bf16 = arms["attnref"]["tokens_per_s"]
        out.append(
            f"`--precision auto` trains in {tp['precision']} here, at "
            f"{ratio_words(bf16, fp32['tokens_per_s'])} attnref's own fp32 tokens/s"
            + (
                "; the two ranges overlap: no measurable difference."
                if overlap(bf16, fp32["tokens_per_s"])
                else "."
            )
            + " The baseline has no bf16 arm: the two trainers are compared in fp32 only."
        )
    return out


def time_to_quality_claims(tq: Mapping[str, Any]) -> list[str]:
    """Where the defaults stood when the budget ended, and the baseline beside them."""
    c, ours = tq["config"], tq["curves"]["attnref"]
    steps, whole = tq["steps"]["attnref"], tq["whole_val"]["attnref"]
    first = (
        f"attnref's arm is the defaults (batch {c['batch_size']}, {c['max_steps']:,} steps, lr "
        f"{c['lr']} → {c['min_lr']}); it ended at step {ours[-1]['step']:,} after "
        f"{ours[-1]['seconds']:.0f} s with {whole:.4f} on the whole validation split"
    )
    if steps < c["max_steps"]:
        first += (
            f", {steps / c['max_steps']:.0%} of its schedule: the defaults' schedule does not "
            "fit in this budget on this machine."
        )
    else:
        first += "."
    out = [first]
    if "baseline" in tq["whole_val"]:
        b = tq["whole_val"]["baseline"]
        # like with like: the baseline trains in fp32, so it is set beside attnref's fp32 arm
        # where the run has one (attnref's own arm trains at the `auto` precision)
        fp32 = "attnref-fp32" if "attnref-fp32" in tq["whole_val"] else "attnref"
        mine = tq["whole_val"][fp32]
        gap = b - mine
        where = "above" if gap > 0 else "below"
        base = tq["curves"]["baseline"][-1]
        theirs = tq["curves"][fp32][-1]
        planned, done = tq["args"]["baseline_steps"], tq["steps"]["baseline"]
        cut = (
            f", its schedule set for {planned:,} steps and cut at {done:,}"
            if done < planned
            else ""
        )
        arm = "attnref's in fp32" if fp32 == "attnref-fp32" else "attnref's"
        out.append(
            f"Within the same {tq['args']['budget']:.0f}-s budget the baseline's recipe (lr 1e-3, "
            f"dropout 0.2, batch {tq['args']['baseline_batch']}, fp32) ran "
            f"{base['seconds']:.0f} s{cut}, and reached {b:.4f} on the whole validation split, "
            f"{abs(gap):.3f} nats {where} {arm} ({mine:.4f}, which ended after "
            f"{theirs['seconds']:.0f} s); one run each."
        )
    return out


def scaling_claims(sc: Mapping[str, Any]) -> list[str]:
    """The noise of one point (the Q02 shape, measured on every axis), then how the time of a
    step grows against its arithmetic along each axis."""
    out = []
    q02 = [p["ms_per_step"] for p in sc["points"] if (p["axis"], p["value"]) in Q02_POINTS]
    if len(q02) > 1:
        out.append(
            f"The Q02 shape is a point of every axis, measured {len(q02)} times: "
            f"{', '.join(f'{v:.1f}' for v in q02)} ms/step, a spread of "
            f"{max(q02) / min(q02):.2f}×: one point's noise on this machine, so read the table "
            "for how cost grows, not for its last digit. From the smallest to the largest value:"
        )

    def work(p: Mapping[str, Any]) -> float:  # FLOPs of one step: FLOPs/token × tokens/step
        return float(p["flops_per_token"] * p["tokens_per_s"] * p["ms_per_step"] / 1e3)

    for axis in ("block_size", "n_embd", "n_layer"):
        pts = sorted((p for p in sc["points"] if p["axis"] == axis), key=lambda p: p["value"])
        if len(pts) < 2:
            continue
        lo, hi = pts[0], pts[-1]
        out.append(
            f"- {axis} {lo['value']} → {hi['value']}: the time of a step × "
            f"{hi['ms_per_step'] / lo['ms_per_step']:.2f}, its arithmetic × "
            f"{work(hi) / work(lo):.2f}."
        )
    return out


def sampling_claims(sa: Mapping[str, Any]) -> list[str]:
    """Whether the KV cache saves measurable time, and what the CLI's start-up costs."""
    s = sa["seconds"]
    med = {k: statistics.median(v) for k, v in s.items()}
    out = []
    if overlap(s["cached"], s["uncached-1-thread"]):
        out.append(
            f"At this size the cache saves no measurable time on this CPU ({med['cached']:.2f} s "
            f"against {med['uncached-1-thread']:.2f} s, overlapping ranges): a forward pass of "
            "one position and of 128 cost about the same, the per-character overhead sets the "
            "pace."
        )
    elif med["cached"] < med["uncached-1-thread"]:
        out.append(
            f"The cache saves {ratio_words(s['uncached-1-thread'], s['cached'])} on this CPU "
            f"({med['cached']:.2f} s against {med['uncached-1-thread']:.2f} s)."
        )
    if sa.get("cli_seconds"):
        cli = statistics.median(sa["cli_seconds"])
        out.append(
            f"`attnref sample` itself (the trained model, read from the store) takes "
            f"{cli:.1f} s for {sa['args']['tokens']} characters, of which generation is about "
            f"{med['cached']:.1f} s: the rest is start-up (Python, torch, finding and loading "
            "the model)."
        )
    return out


def latency_met(c: Mapping[str, Any]) -> bool:
    """A command's target is met when every run that started quiet is under it, not its
    median alone."""
    return bool(c["kept"]) and c["max_s"] < c["target_s"]


def latency_claims(lat: Mapping[str, Any]) -> list[str]:
    """Each command against its target (``cli_latency.json``), then where the slowest one's
    start-up goes. A target is called met only where every run that started quiet is under
    it (`latency_met`); under by the median alone is said so; a command with no quiet run is
    not judged."""
    out = []
    for c in lat["commands"]:
        head = f"`{c['command']}`"
        if not c["kept"]:
            out.append(
                f"{head}: no run started on a quiet machine ({c['reps'] - c['kept']} flagged), "
                f"so its {c['target_s']:g} s target is not judged."
            )
            continue
        med, target = c["median_s"], c["target_s"]
        side = (
            "under"
            if latency_met(c)
            else "under by its median only (its slowest quiet run is not)"
            if med < target
            else "over"
        )
        runs = "run" if c["kept"] == 1 else "runs"
        out.append(
            f"{head}: {med:.2f} s (median of {c['kept']} {runs} started quiet, "
            f"{c['min_s']:.2f}-{c['max_s']:.2f} s), {side} its {target:g} s target."
        )
    judged = [c for c in lat["commands"] if c["kept"]]
    if judged and len(judged) == len(lat["commands"]):
        met = sum(latency_met(c) for c in judged)
        out.append(
            "Every target is met."
            if met == len(judged)
            else f"{met} of {len(judged)} targets are met."
        )
    b = lat["import_breakdown"]
    if b["packages"]:
        top = b["packages"][0]
        out.append(
            f"The slowest, `{b['command']}`, spends {b['import_s']:.2f} s of its "
            f"{b['wall_s']:.2f} s run importing modules, {top['seconds']:.2f} s of them in "
            f"{top['package']} ({top['share']:.0%})."
        )
    return out
