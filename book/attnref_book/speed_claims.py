"""The sentences the book writes about the speed benchmarks, each from the numbers it states.

Pure (no torch, no mlflow): every function takes the JSON a script in ``benchmarks/`` wrote
(``throughput.json``, ``time_to_quality.json``, ``scaling.json``, ``sampling.json``,
``cli_latency.json``; the GPU's in `attnref_book.gpu_claims`) and returns
the sentences its numbers support, in the book's language (``lang``: `WORDS`); the
experiments page prints them, and ``tests/book/test_speed_claims.py`` puts numbers on both
sides of every condition.

Two timings are told apart only when their ranges (min–max over the interleaved repetitions)
do not overlap: on a noisy 2-core machine a difference of medians inside the spread is noise.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from attention_ref.experiments.spread import overlap, ratio_spread
from attention_ref.render.document import said, thousands
from attnref_book.conditions import load_reading, load_said, quiet_limit_said
from attnref_book.speed_words import WORDS

#: the Q02 shape's point on each axis of ``benchmarks/scaling.py``
Q02_POINTS = {("block_size", 128), ("n_embd", 128), ("n_layer", 2)}


def ratio_cell(
    ratio: float, mine: Sequence[float], theirs: Sequence[float], lang: str = "en"
) -> str:
    """A table's ratio (``ratio``, as recorded) with the least and the greatest ratio two runs
    give (`attention_ref.experiments.spread.ratio_spread` of ``mine`` over ``theirs``, both
    "larger is faster"), and whether the two ranges overlap."""
    _, lo, hi = ratio_spread(mine, theirs)
    key = "ratio_cell_overlap" if overlap(mine, theirs) else "ratio_cell"
    return WORDS[lang][key].format(
        ratio=said(ratio, ".2f", lang), lo=said(lo, ".2f", lang), hi=said(hi, ".2f", lang)
    )


def ratio_words(a: Sequence[float], b: Sequence[float], lang: str = "en") -> str:
    """``a``'s median over ``b``'s with its spread (`ratio_spread`)."""
    w = WORDS[lang]
    mid, lo, hi = ratio_spread(a, b)
    if len(a) == len(b) == 1:
        return w["ratio_one"].format(mid=said(mid, ".2f", lang))
    return w["ratio"].format(
        mid=said(mid, ".2f", lang), lo=said(lo, ".2f", lang), hi=said(hi, ".2f", lang)
    )


def _batch_words(tp: Mapping[str, Any], lang: str) -> str:
    """The batch the throughput ran at, and the defaults' where it is another."""
    from attention_ref.lm.config import TrainConfig

    batch = tp.get("args", {}).get("batch_size")
    if batch is None:
        return ""
    default = TrainConfig().batch_size
    w = WORDS[lang]
    return w["batch"].format(batch=batch) + (
        "" if batch == default else w["defaults_batch"].format(default=default)
    )


def throughput_claims(tp: Mapping[str, Any], lang: str = "en") -> list[str]:
    """attnref against the baseline at equal precision (fp32, the same shape: the baseline
    has no other), then what bf16 gives attnref against its own fp32 run; each ratio with its
    spread, and "no measurable difference" where the ranges overlap."""
    w = WORDS[lang]
    arms = tp["arms"]
    base = arms["baseline"]["tokens_per_s"]
    fp32 = arms.get("attnref-fp32")
    if fp32 is None and tp["precision"] == "fp32":
        fp32 = arms["attnref"]
    out = []
    if fp32 is not None:
        ours = fp32["tokens_per_s"]
        out.append(
            w["equal_precision"].format(
                batch=_batch_words(tp, lang), ratio=ratio_words(ours, base, lang)
            )
            + (w["overlap"] if overlap(ours, base) else ".")
        )
    if tp["precision"] == "fp32" and not tp["machine"]["cpu_bf16_flags"]:
        out.append(w["no_bf16"])
    elif tp["precision"] != "fp32" and fp32 is not None:
        bf16 = arms["attnref"]["tokens_per_s"]
        out.append(
            w["auto_precision"].format(
                precision=tp["precision"], ratio=ratio_words(bf16, fp32["tokens_per_s"], lang)
            )
            + (w["overlap"] if overlap(bf16, fp32["tokens_per_s"]) else ".")
            + w["fp32_only"]
        )
    return out


def time_to_quality_claims(tq: Mapping[str, Any], lang: str = "en") -> list[str]:
    """Where the defaults stood when the budget ended, and the baseline beside them."""
    w = WORDS[lang]
    c, ours = tq["config"], tq["curves"]["attnref"]
    steps, whole = tq["steps"]["attnref"], tq["whole_val"]["attnref"]
    first = w["defaults_arm"].format(
        batch=c["batch_size"],
        max_steps=thousands(c["max_steps"], lang),
        lr=said(c["lr"], "", lang),
        min_lr=said(c["min_lr"], "", lang),
        step=thousands(ours[-1]["step"], lang),
        seconds=said(ours[-1]["seconds"], ".0f", lang),
        whole=said(whole, ".4f", lang),
    )
    if steps < c["max_steps"]:
        first += w["cut_schedule"].format(share=format(steps / c["max_steps"], ".0%"))
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
        base = tq["curves"]["baseline"][-1]
        theirs = tq["curves"][fp32][-1]
        planned, done = tq["args"]["baseline_steps"], tq["steps"]["baseline"]
        cut = (
            w["baseline_cut"].format(planned=thousands(planned, lang), done=thousands(done, lang))
            if done < planned
            else ""
        )
        out.append(
            w["baseline"].format(
                budget=said(tq["args"]["budget"], ".0f", lang),
                batch=tq["args"]["baseline_batch"],
                seconds=said(base["seconds"], ".0f", lang),
                cut=cut,
                whole=said(b, ".4f", lang),
                gap=said(abs(gap), ".3f", lang),
                where=w["above"] if gap > 0 else w["below"],
                arm=w["attnref_fp32"] if fp32 == "attnref-fp32" else w["attnref"],
                mine=said(mine, ".4f", lang),
                ended=said(theirs["seconds"], ".0f", lang),
            )
        )
    return out


def target_claim(tq: Mapping[str, Any], lang: str = "en") -> str:
    """The time-to-quality target (the defaults at val ≤ ``target.val_loss`` within
    ``target.budget_s`` s, quiet), read from attnref's curve as ``benchmarks/time_to_quality.py``
    judges it: called met only where the defaults, the budget and a quiet start all say so.
    A verdict rests on this one run: it names the precision and the processor it ran on
    (``--precision auto`` is bf16 only where the CPU has bf16 instructions), and the same
    run's fp32 arm where it has one."""
    w = WORDS[lang]
    level, budget = tq["target"]["val_loss"], tq["target"]["budget_s"]
    curve = tq["curves"]["attnref"]
    best = min(curve, key=lambda p: p["val_loss"])
    first = next((p for p in curve if p["val_loss"] <= level), None)
    lv, bs = said(level, ".2f", lang), said(budget, ".0f", lang)
    text = w["reached"].format(
        best=said(best["val_loss"], ".4f", lang),
        seconds=said(best["seconds"], ".0f", lang),
        step=int(best["step"]),
    )
    if first is None:
        text += w["not_reached"].format(level=lv, seconds=said(curve[-1]["seconds"], ".0f", lang))
    else:
        text += w["first_at"].format(
            level=lv, seconds=said(first["seconds"], ".0f", lang), step=int(first["step"])
        )
    changes = bool(tq["args"].get("set"))
    quiet = bool(tq["quiet_start"]["quiet"])
    why = [
        reason
        for reason, bad in (
            (w["why_changed"], changes),
            (w["why_budget"].format(budget=bs), tq["args"]["budget"] > budget),
            (w["why_loaded"], not quiet),
        )
        if bad
    ]
    if why:
        return text + w["not_judged"].format(why=", ".join(why))
    if first is not None and first["seconds"] <= budget:
        verdict = w["met"]
    elif first is not None:
        late = said(first["seconds"] - budget, ".2f", lang)
        verdict = w["late"].format(level=lv, late=late)
    else:
        verdict = w["not_met"]
    m = tq["machine"]
    flags = ", ".join(m["cpu_bf16_flags"])
    on = (w["cpu_with"] if flags else w["cpu_without"]).format(
        flags=flags, cpu=m["cpu"], cpus=m["cpus"]
    )
    rests = w["one_run"].format(precision=tq["precision"], on=on)
    fp32 = tq["curves"].get("attnref-fp32")
    if fp32 and tq["precision"] != "fp32":
        hit = next((p for p in fp32 if p["val_loss"] <= level), None)
        rests += (
            w["fp32_first"].format(level=lv, seconds=said(hit["seconds"], ".0f", lang))
            if hit
            else w["fp32_never"].format(level=lv)
        )
    return text + w["judged"].format(level=lv, budget=bs, verdict=verdict, rests=rests)


def scaling_claims(sc: Mapping[str, Any], lang: str = "en") -> list[str]:
    """The noise of one point (the Q02 shape, measured on every axis), then how the time of a
    step grows against its arithmetic along each axis."""
    w = WORDS[lang]
    out = []
    q02 = [p["ms_per_step"] for p in sc["points"] if (p["axis"], p["value"]) in Q02_POINTS]
    if len(q02) > 1:
        out.append(
            w["noise"].format(
                n=len(q02),
                values=w["list"].join(said(v, ".1f", lang) for v in q02),
                spread=said(max(q02) / min(q02), ".2f", lang),
            )
        )

    def work(p: Mapping[str, Any]) -> float:  # FLOPs of one step: FLOPs/token × tokens/step
        return float(p["flops_per_token"] * p["tokens_per_s"] * p["ms_per_step"] / 1e3)

    for axis in ("block_size", "n_embd", "n_layer"):
        pts = sorted((p for p in sc["points"] if p["axis"] == axis), key=lambda p: p["value"])
        if len(pts) < 2:
            continue
        lo, hi = pts[0], pts[-1]
        out.append(
            w["axis"].format(
                axis=axis,
                lo=lo["value"],
                hi=hi["value"],
                time=said(hi["ms_per_step"] / lo["ms_per_step"], ".2f", lang),
                work=said(work(hi) / work(lo), ".2f", lang),
            )
        )
    return out


def sampling_claims(sa: Mapping[str, Any], lang: str = "en") -> list[str]:
    """Whether the KV cache saves measurable time, and what the CLI's start-up costs."""
    w = WORDS[lang]
    s = sa["seconds"]
    med = {k: statistics.median(v) for k, v in s.items()}
    cached, uncached = said(med["cached"], ".2f", lang), said(med["uncached-1-thread"], ".2f", lang)
    out = []
    if overlap(s["cached"], s["uncached-1-thread"]):
        out.append(w["cache_same"].format(cached=cached, uncached=uncached))
    elif med["cached"] < med["uncached-1-thread"]:
        out.append(
            w["cache_saves"].format(
                ratio=ratio_words(s["uncached-1-thread"], s["cached"], lang),
                cached=cached,
                uncached=uncached,
            )
        )
    if sa.get("cli_seconds"):
        cli = statistics.median(sa["cli_seconds"])
        out.append(
            w["cli"].format(
                cli=said(cli, ".1f", lang),
                tokens=sa["args"]["tokens"],
                generation=said(med["cached"], ".1f", lang),
            )
        )
    return out


def latency_met(c: Mapping[str, Any]) -> bool:
    """A command's target is met when every run counted (started with no more than the busy
    limit of other cores busy) is under it, not its median alone."""
    return bool(c["kept"]) and c["max_s"] < c["target_s"]


def latency_claims(lat: Mapping[str, Any], lang: str = "en") -> list[str]:
    """Each command against its target (``cli_latency.json``), then how busy the machine was,
    and where the slowest one's start-up goes. A run counts where it started with at most
    ``busy_limit`` other cores busy (the script's probe, not a quiet machine); a target is
    called met only where every run counted is under it (`latency_met`); under by the median
    alone is said so; a command with no run counted is not judged. The load of the machine
    (`attnref_book.conditions`) is said beside the count: targets met on a machine that was
    not quiet are not called met on a quiet one."""
    w = WORDS[lang]
    busy = said(lat["args"]["busy_limit"], "g", lang)
    out = []
    for c in lat["commands"]:
        head = f"`{c['command']}`"
        target = said(c["target_s"], "g", lang)
        if not c["kept"]:
            out.append(
                w["none_counted"].format(
                    head=head, busy=busy, flagged=c["reps"] - c["kept"], target=target
                )
            )
            continue
        med = c["median_s"]
        side = (
            w["under"] if latency_met(c) else w["median_only"] if med < c["target_s"] else w["over"]
        ).format(target=target)
        out.append(
            (w["counted_one"] if c["kept"] == 1 else w["counted"]).format(
                head=head,
                median=said(med, ".2f", lang),
                kept=c["kept"],
                busy=busy,
                lo=said(c["min_s"], ".2f", lang),
                hi=said(c["max_s"], ".2f", lang),
                side=side,
            )
        )
    out += sampling_paths(lat, lang)
    judged = [c for c in lat["commands"] if c["kept"]]
    if judged and len(judged) == len(lat["commands"]):
        r = load_reading("cli_latency", lat)
        quiet = r.load_1min is not None and r.read_before and r.quiet
        if r.load_1min is not None and r.read_before:
            load = w["load_quiet" if r.quiet else "load_loaded"].format(
                load=load_said(r.load_1min, r.quiet_limit, lang),
                limit=quiet_limit_said(r, lang),
            )
        else:
            load = w["load_unknown"]
        out.append(w["judged_on"].format(load=load, busy=busy))
        met = sum(latency_met(c) for c in judged)
        # a target is called met only on a quiet machine; elsewhere the runs are said under it
        every, some = ("all_met", "some_met") if quiet else ("all_under", "some_under")
        out.append(w[every] if met == len(judged) else w[some].format(met=met, judged=len(judged)))
    b = lat["import_breakdown"]
    if b["packages"]:
        top = b["packages"][0]
        out.append(
            w["imports"].format(
                command=b["command"],
                imports=said(b["import_s"], ".2f", lang),
                wall=said(b["wall_s"], ".2f", lang),
                top=said(top["seconds"], ".2f", lang),
                package=top["package"],
                share=format(top["share"], ".0%"),
            )
        )
    return out


def sampling_paths(lat: Mapping[str, Any], lang: str = "en") -> list[str]:
    """What sampling without torch buys: ``sample --run-id`` (a local run, read and run in
    numpy: `attention_ref.lm.numpy_model`) against ``sample --model`` (the same run's model
    through MLflow's client and torch), their runs counted in the same interleaved recording:
    the ratio of the medians with its runs' range, and no saving claimed where the ranges
    overlap or a side has one run. None for a recording without both."""
    w = WORDS[lang]

    def kept(flag: str) -> list[float]:
        found = [c for c in lat["commands"] if c.get("name") == "sample" and flag in c["command"]]
        return [t["seconds"] for c in found for t in c.get("times", []) if not t["flagged"]]

    numpy, torch = kept("--run-id"), kept("--model")
    if not numpy or not torch:
        return []
    told = min(len(numpy), len(torch)) > 1 and not overlap(numpy, torch)
    key = "paths" if told else "paths_overlap"
    return [
        w[key].format(
            ratio=ratio_words(torch, numpy, lang),
            numpy=said(statistics.median(numpy), ".2f", lang),
            torch=said(statistics.median(torch), ".2f", lang),
        )
    ]
