"""The sentences the book writes about the GPU benchmarks, each from the numbers it states.

Pure (no torch, no mlflow), like `attnref_book.speed_claims` (whose rule it
follows: two timings are told apart only when their ranges do not overlap): the step on a GPU
(``gpu_step.json``), nanoGPT's baby GPT raced both ways (``baby_gpt.json``) and N seeds at once
(``seeds_vmap.json``). Two losses measured by two estimators are told apart only beyond the
difference between the estimators (`told_apart`). Each sentence is said in the book's language
(``lang``), its words in `attnref_book.gpu_words`.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from attention_ref.experiments.spread import overlap, ratio_spread
from attention_ref.render.document import DECIMAL_MARK, said, thousands
from attnref_book.gpu_words import WORDS

#: issue 33's targets on one GPU: attnref's graphed step at least this many times nanoGPT's
#: compiled ``train.py`` in tokens/s (batch 32), Q02's 6,000 steps and the ablation's three
#: arms (evaluations included) within these seconds
GPU_TARGETS = {"times_nanogpt": 5.0, "q02_s": 6.0, "ablation_s": 30.0}
#: the time of one iteration as nanoGPT's `train.py` prints it ("iter 490: …, time 5.47ms")
_PRINTED = r"time ([\d.]+)ms"
#: the steps of Q02's default run (the ``q02_s`` and ``ablation_s`` targets are for these)
Q02_STEPS = 6000


def nanogpt_pair(
    gs: Mapping[str, Any], n: Mapping[str, Any], arm: str
) -> tuple[list[float], list[float], list[float], list[int]]:
    """attnref's ``arm`` beside nanoGPT's run ``n`` (its batch), as speeds (steps per ms: one
    batch each, so their ratios are the tokens/s ratios): attnref's repetitions, nanoGPT's
    iterations as its ``train.py`` printed them (one run: its spread is the iterations its kept
    output holds; none kept: its mean alone), those iterations' ms and their numbers."""
    tail = [line for line in n.get("tail", []) if re.search(_PRINTED, line)]
    printed = [float(t) for line in tail for t in re.findall(_PRINTED, line)]
    iters = [int(i) for line in tail for i in re.findall(r"iter (\d+)", line)]
    ours = [1 / ms for ms in gpu_step_ms(gs, int(n["batch"]), arm)]
    theirs = [1 / ms for ms in printed or [float(n["ms_per_step"])]]
    return ours, theirs, printed, iters


def gpu_step_ms(gs: Mapping[str, Any], batch: int, arm: str) -> list[float]:
    """One arm's ms/step in each repetition of ``benchmarks/gpu_step.py``'s step table."""
    steps = int(gs["args"]["steps"])
    row = next(r for r in gs["steps"] if r["batch"] == batch and r["arm"] == arm)
    return [1e3 * s / steps for s in row["seconds"]]


def arm_precision(arm: str) -> str:
    """The precision of an arm of ``gpu_step.json``'s step table: its last word (``graph
    bf16``), the baseline's fp32 (``benchmarks/baseline_trainer.py`` has no other)."""
    last = arm.split()[-1]
    return last if last in ("fp32", "bf16") else "fp32"


def _faster(
    a_name: str, a: Sequence[float], b_name: str, b: Sequence[float], lang: str = "en"
) -> str:
    """``a`` against ``b`` in ms/step (medians), told apart only beyond their ranges."""
    w = WORDS[lang]
    ma, mb = statistics.median(a), statistics.median(b)
    text = w["against"].format(
        a=a_name, ma=said(ma, ".3f", lang), b=b_name, mb=said(mb, ".3f", lang)
    )
    if overlap(a, b):
        return text + w["overlap"]
    if ma < mb:
        _, lo, hi = ratio_spread(b, a)
        how, r = w["faster"], mb / ma
    else:
        _, lo, hi = ratio_spread(a, b)
        how, r = w["slower"], ma / mb
    return text + how.format(
        r=said(r, ".2f", lang), lo=said(lo, ".2f", lang), hi=said(hi, ".2f", lang)
    )


def gpu_claims(gs: Mapping[str, Any], batch: int = 32, lang: str = "en") -> list[str]:
    """The step on a GPU (``gpu_step.json``): the graph against eager and bf16 against fp32 at
    ``batch``, attnref against nanoGPT's compiled ``train.py``, and issue 33's targets
    (`GPU_TARGETS`), each said met or not with its figure. Nothing is judged unless the run was
    on CUDA: a GPU target is never called met without a measurement on one."""
    w = WORDS[lang]
    m = gs["machine"]
    if m.get("device") != "cuda":
        return [w["not_gpu"].format(device=m.get("device", w["unnamed"]))]
    ms = {
        arm: gpu_step_ms(gs, batch, arm)
        for arm in ("eager fp32", "eager bf16", "graph fp32", "graph bf16")
    }

    def faster(a: str, b: str, a_name: str = "", b_name: str = "") -> str:
        return _faster(a_name or a, ms[a], b_name or b, ms[b], lang)

    out = []
    other = sorted({r["batch"] for r in gs["steps"]} - {batch})
    if other:
        small, big = gpu_step_ms(gs, other[0], "eager fp32"), ms["eager fp32"]
        pair = w["pair"].format(
            big=said(statistics.median(big), ".3f", lang),
            small=said(statistics.median(small), ".3f", lang),
            batch=batch,
            other=other[0],
        )
        bound = w["launch_bound"] if overlap(small, big) else w["differ"]
        out.append(bound.format(batch=batch, other=other[0], pair=pair))
    out += [
        w["graph"].format(
            batch=batch,
            fp32=faster("graph fp32", "eager fp32"),
            bf16=faster("graph bf16", "eager bf16"),
        ),
        w["precision"].format(
            graph=faster("graph bf16", "graph fp32"),
            eager=faster("eager bf16", "eager fp32", "bf16", "fp32"),
        ),
    ]
    target = GPU_TARGETS["times_nanogpt"]
    nano = [r for r in gs.get("nanogpt") or [] if "tokens_per_s" in r and r["batch"] == batch]
    compiled = [r for r in nano if r["compile"]]
    if not compiled:
        out.append(
            w["nanogpt_unjudged"].format(
                batch=batch,
                why=w["not_compiled"] if nano else w["not_measured"],
                target=said(target, "g", lang),
            )
        )
    else:
        n = compiled[-1]
        row = next(r for r in gs["steps"] if r["batch"] == batch and r["arm"] == "graph bf16")
        ratio = row["tokens_per_s"] / n["tokens_per_s"]
        ours, theirs, printed, iters = nanogpt_pair(gs, n, "graph bf16")
        _, lo, hi = ratio_spread(ours, theirs)
        spread = (w["spread_printed"] if printed else w["spread"]).format(
            lo=said(lo, ".2f", lang),
            hi=said(hi, ".2f", lang),
            fastest=said(min(printed, default=n["ms_per_step"]), ".2f", lang),
            slowest=said(max(printed, default=n["ms_per_step"]), ".2f", lang),
            n=len(printed),
            first=min(iters, default=0),
            last=max(iters, default=0),
        )

        verdict = (
            w["met"] if lo >= target else w["averages_only"] if ratio >= target else w["not_met"]
        )
        out.append(
            w["times_nanogpt"].format(
                ratio=said(ratio, ".2f", lang),
                ours=said(row["ms_per_step"], ".3f", lang),
                theirs=said(n["ms_per_step"], ".3f", lang),
                first=n.get("first_iter", "?"),
                last=n.get("last_iter", "?"),
                spread=spread,
                target=said(target, "g", lang),
                verdict=verdict,
            )
        )
    runs = gs.get("runs") or []
    q02 = [r for r in runs if r["run"] == "q02 defaults"]
    ablation = [r for r in runs if r["run"].startswith("ablation")]
    for chosen, limit, what, count in (
        (q02, GPU_TARGETS["q02_s"], "q02", 1),
        (ablation, GPU_TARGETS["ablation_s"], "ablation", 3),
    ):
        steps, bound = thousands(Q02_STEPS, lang), said(limit, "g", lang)
        if len(chosen) != count or any(r["steps"] != Q02_STEPS for r in chosen):
            out.append(w[f"{what}_unjudged"].format(steps=steps, limit=bound))
            continue
        wall = sum(r["wall_s"] for r in chosen)
        out.append(
            w[f"{what}_took"].format(
                steps=steps,
                best=said(chosen[0]["best_val"], ".4f", lang),
                precision=chosen[0]["precision"],
                wall=said(wall, ".1f", lang),
                limit=bound,
                side=w["met"] if wall <= limit else w["not_met"],
            )
        )
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


def _seeds_sentence(
    bg: Mapping[str, Any],
    more: Sequence[Mapping[str, Any]],
    seeds: Sequence[Mapping[str, Any]],
    later: Sequence[int],
    nano: Mapping[str, Any],
    lang: str,
) -> str:
    """attnref's best over its seeds against nanoGPT's one, with `told_apart`'s rule."""
    w = WORDS[lang]
    target = str(bg["target"]).replace(".", DECIMAL_MARK[lang])
    bests = [a["best_val"] for a in seeds]
    hit = [a for a in seeds if a.get("reached")]
    where = w["hits"].join(
        w["seed_hit"].format(
            seed=a["options"]["seed"],
            step=thousands(a["reached"]["step"], lang),
            seconds=said(a["reached"]["s"], ".1f", lang),
        )
        for a in hit
    )
    gpus = {run["machine"].get("gpu") for run in [bg, *more]}
    kind = w["same_gpu"].format(gpu=gpus.pop()) if len(gpus) == 1 else w["other_gpu"]
    whose = (w["later_many"] if len(later) > 1 else w["later_one"]).format(
        seeds=", ".join(map(str, later)), kind=kind
    )
    # nanoGPT's figure is its own estimator: inside attnref's spread widened by the
    # difference between two estimates of one checkpoint, the two are not told apart
    gap = estimator_gap(seeds)
    widen = said(gap or 0.0, ".4f", lang)
    outside = max(min(bests) - nano["best_val"], nano["best_val"] - max(bests), 0.0)
    how, out = w["estimators"], said(outside, ".4f", lang)
    if not told_apart(outside, gap):
        where_it_is = (w["outside_small"] if outside else w["within"]).format(
            outside=out, gap=widen, how=how
        )
        spread = w["not_told_apart"].format(where=where_it_is)
    else:
        side = w["lower"] if nano["best_val"] < min(bests) else w["higher"]
        spread = w["outside_large"].format(outside=out, gap=widen, how=how, side=side)
    return w["seeds"].format(
        n=len(seeds),
        whose=whose if later else "",
        lo=said(min(bests), ".4f", lang),
        hi=said(max(bests), ".4f", lang),
        mean=said(statistics.mean(bests), ".4f", lang),
        hit=len(hit),
        target=target,
        reached=f" ({where})" if hit else "",
        theirs=said(nano["best_val"], ".4f", lang),
        spread=spread,
    )


def baby_gpt_claims(
    bg: Mapping[str, Any], more: Sequence[Mapping[str, Any]] = (), lang: str = "en"
) -> list[str]:
    """nanoGPT's baby GPT both ways (``benchmarks/baby_gpt.py``'s ``baby_gpt.json``): issue 33's
    stretch target (attnref's preset at val ≤ ``target`` in less wall time than nanoGPT's own
    ``train.py`` *in the same run*), the quality of the two over attnref's seeds (``more``:
    later runs of the script with attnref's arms only, named as later runs where their seeds
    are counted), and the time each took
    to the level both reached. Nothing is judged off a GPU or without nanoGPT's evaluations.
    The two arms' losses are two estimators (attnref's fixed batches, nanoGPT's fresh ones):
    one is called lower only by `told_apart`'s rule."""
    w = WORDS[lang]
    m = bg["machine"]
    if m.get("device") != "cuda":
        return [w["stretch_not_gpu"].format(device=m.get("device", w["unnamed"]))]
    target = str(bg["target"]).replace(".", DECIMAL_MARK[lang])
    ours = [a for a in bg["arms"] if a["arm"].startswith("attnref")]
    nano = next((a for a in bg["arms"] if a["arm"].startswith("nanoGPT") and a.get("evals")), None)
    if not ours or nano is None:
        return [w["stretch_no_evals"]]
    same = ours[0]
    out = []
    mine, theirs = same.get("reached"), nano.get("reached")
    if mine and (theirs is None or mine["s"] < theirs["s"]):
        verdict = w["met"]
    elif mine is None and theirs is None:
        verdict = w["neither"]
    else:
        verdict = w["not_met"]

    def reach(arm: Mapping[str, Any], got: Mapping[str, float] | None) -> str:
        if got is None:
            return w["did_not_reach"].format(
                best=said(arm["best_val"], ".4f", lang), step=thousands(arm["best_step"], lang)
            )
        return w["reached_at"].format(
            step=thousands(got["step"], lang), seconds=said(got["s"], ".1f", lang)
        )

    out.append(
        w["stretch"].format(
            target=target,
            seed=same["options"]["seed"],
            ours=reach(same, mine),
            theirs=reach(nano, theirs),
            verdict=verdict,
        )
    )
    seeds = [*ours, *(a for run in more for a in run["arms"] if a["arm"].startswith("attnref"))]
    if len(seeds) > 1:
        later = [a["options"]["seed"] for a in seeds[len(ours) :]]
        out.append(_seeds_sentence(bg, more, seeds, later, nano, lang))
    level = max(same["best_val"], nano["best_val"])
    a, b = _first_at(same["evals"], level), _first_at(nano["evals"], level)
    if a is not None and b is not None:
        launch = a["s"] + (same.get("before_clock_s") or 0.0)
        ratio = b["s"] / launch
        margin, gap = same["best_val"] - nano["best_val"], estimator_gap([same])
        m4 = said(abs(margin), ".4f", lang)
        if told_apart(margin, gap):
            better = w["better_attnref"] if margin < 0 else w["better_nanogpt"]
            quality = better.format(margin=m4, gap=said(gap or 0.0, ".4f", lang))
        else:
            quality = w["bests_differ"].format(margin=m4) + (
                w["unknown_gap"]
                if gap is None
                else w["gap_bound"].format(gap=said(gap, ".4f", lang))
            )
        out.append(
            w["level"].format(
                level=said(level, ".4f", lang),
                quality=quality,
                same="" if told_apart(margin, gap) else w["quality_same"],
                ours=said(a["s"], ".1f", lang),
                step=thousands(a["step"], lang),
                launch=said(launch, ".1f", lang),
                theirs=said(b["s"], ".1f", lang),
                their_step=thousands(b["step"], lang),
                start=said(nano["to_first_iter_s"], ".1f", lang),
                ratio=(w["nanogpt_longer"] if ratio > 1 else w["attnref_longer"]).format(
                    r=said(ratio if ratio > 1 else 1 / ratio, ".2f", lang)
                ),
            )
        )
    return out


def seeds_at_once_claims(sv: Mapping[str, Any], lang: str = "en") -> list[str]:
    """N seeds at once (``benchmarks/seeds_vmap.py``'s ``seeds_vmap.json``): vmap against N
    separate runs, told apart only beyond their ranges, at each N; and whether the two are the
    same runs (the largest weight difference after the run)."""
    w = WORDS[lang]
    times = sv["times_s"]
    steps = int(sv["args"]["steps"])
    ns = sorted({int(k.split("N=")[1]) for k in times})
    out = []
    for n in ns:
        sep = [1e3 * t / (steps * n) for t in times[f"separate N={n}"]]
        vm = [1e3 * t / (steps * n) for t in times[f"vmap N={n}"]]
        out.append(
            w["per_seed_step"].format(n=n, said=_faster("vmap", vm, w["separate"], sep, lang))
        )
    diff = float(sv["same"].rsplit("largest weight difference ", 1)[1])
    out.append(w["not_bitwise"].format(diff=said(diff, ".3g", lang)) if diff > 0 else w["bitwise"])
    return out
