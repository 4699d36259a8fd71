"""The facts of the experiments page's section on a GPU (``docs/experiments.md``, ``docs/
experiments.pt.md``, "On a GPU"): the step on an H100 beside nanoGPT's ``train.py``, nanoGPT's
baby GPT raced both ways and N seeds at once on an H200, read from the JSON committed in
``benchmarks/results/``, in the page's language. The sentences are `attnref_book.gpu_claims`'.

A ratio is set only between like precisions: "× baseline" for the arms in fp32 (the
baseline's), "× nanoGPT" for the arms in bf16 (nanoGPT's autocast); an arm of another
precision shows a dash (`arm_precision`).
"""

from __future__ import annotations

import json
from typing import Any, Final

from attention_ref.experiments.spread import ratio_spread
from attention_ref.render.document import DECIMAL_MARK, said, thousands
from attnref_book import pages
from attnref_book.gpu_claims import (
    arm_precision,
    baby_gpt_claims,
    gpu_claims,
    gpu_step_ms,
    nanogpt_pair,
    seeds_at_once_claims,
)
from attnref_book.speed_claims import ratio_cell

#: nanoGPT's ``train.py`` at its GPU defaults trains in bf16 autocast (``dtype = 'bfloat16'``
#: where the GPU computes it), the baseline in fp32
NANOGPT_PRECISION: Final = "bf16"
BASELINE_PRECISION: Final = "fp32"
#: the page's words, by language (a table's header: its cells separated by ``|``)
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "machine": (
            "**Machine**: one {gpu}, torch `{torch}`, host {cpu} ({cpus} CPUs), {date} UTC; the "
            "1-minute load {load} before the first timed part, {flagged} of {parts} parts "
            "started with other work busy.\n"
        ),
        "step": (
            "**The step** at the Q02 shape (n_embd 128, 2 layers, 2 heads, block 128): medians "
            "of {reps} interleaved repetitions of {steps} timed steps after {warmup} warm-up "
            "steps, `torch.cuda.synchronize()` around the timing. The baseline is "
            "`benchmarks/baseline_trainer.py` (nanoGPT-style, fp32, its batch drawn on the CPU); "
            "the eager arms read the loss back after every step, the graph arms every 100 steps "
            "(what `attnref train` logs).\n"
        ),
        "step_header": "batch|arm|ms/step|min–max ms/step|tokens/s|× baseline (fp32 arms)",
        "not_fp32": "— (not fp32)",
        "not_bf16": "— (not bf16)",
        "nanogpt_cell": "{ratio} ({lo}–{hi}: attnref's runs against nanoGPT's iterations)",
        "nanogpt": (
            "\n**Beside nanoGPT's `train.py`** (commit {commit}, `compile={compile}`, batch "
            "{batch}, dropout 0, the same shape): timed over its own iterations {first}–{last}, "
            "after the {start} s its start and compilation took.\n"
        ),
        "nanogpt_row": "nanoGPT `train.py`, compile={compile}",
        "attnref_arm": "attnref {arm}",
        "nanogpt_header": "arm|ms/step|tokens/s|× nanoGPT (bf16 arms)",
        "clocks": (
            "*Two clocks*: nanoGPT's figures are one run's mean between two lines it printed "
            "(iterations {first} and {last}, stamped as they came out of its process: "
            "{iters} iterations); attnref's and the baseline's are medians of {reps} "
            "repetitions of {steps} steps timed between `torch.cuda.synchronize()` calls. The "
            "ratio is given only for the arms in nanoGPT's precision ({precision}); the "
            "baseline and `graph fp32` compute in fp32.\n"
        ),
        "runs": (
            "\n**Whole runs** through `attention_ref.lm.train.train` (`--cuda-graph auto`, "
            "`--precision auto`; evaluations, samples and checkpoints included), one seed each, "
            "each timed from the call to its return in the process that had timed the steps "
            "above (Python's start, the imports, the data read and CUDA's start-up not "
            "counted):\n"
        ),
        "runs_header": "run|attention|steps|precision|graph|wall s|best val",
        "on": "on",
        "off": "off",
        "baby_machine": "**Machine**: one {gpu}, torch `{torch}`, {date} UTC.\n",
        "later": " (later run)",
        "graph_how": "{precision}, graph {on}",
        "nanogpt_how": "bf16 autocast, compile=True",
        "reached": "{seconds} s (step {step})",
        "not_reached": "not reached",
        "baby_header": "arm|seed|how|best val|at step|first val ≤ {target}|wall s",
        "seeds_at_once": (
            "\n\n**Seeds at once.** Q02's model, fp32, eager, {steps} steps per run, medians of "
            "{reps} interleaved repetitions on the same kind of GPU: N seeds one after the "
            "other (what `attnref ablation --seeds N` does) against the N models stacked and "
            "trained in one vmapped step (`torch.func`; SDPA's math kernel: in the first run "
            "the fused kernel SDPA picked refused vmap's batch dimension in its backward, "
            '"LSE is not correctly aligned"; the other fused kernels were not tried).\n'
        ),
        "vmap_note": (
            "`--seeds` keeps training the seeds one after the other: the vmapped step is not "
            "the same run to the bit, and it is eager, where the ablation's runs replay one "
            "CUDA graph a step ({ms} ms at batch {batch} on the H100 above, in bf16: "
            "`--precision auto` on a GPU that computes it); graph and vmap together are not "
            "built, and were not measured on this H200."
        ),
    },
    "pt": {
        "machine": (
            "**Máquina**: uma {gpu}, torch `{torch}`, hospedeira {cpu} ({cpus} CPUs), {date} UTC; "
            "a carga de 1 minuto era {load} antes da primeira parte cronometrada, {flagged} de "
            "{parts} partes começaram com outro trabalho ocupando a máquina.\n"
        ),
        "step": (
            "**O passo** na forma da Q02 (n_embd 128, 2 camadas, 2 cabeças, bloco 128): "
            "medianas de {reps} repetições intercaladas de {steps} passos cronometrados depois "
            "de {warmup} passos de aquecimento, com `torch.cuda.synchronize()` em volta da "
            "medição. O baseline é `benchmarks/baseline_trainer.py` (no estilo do nanoGPT, "
            "fp32, o seu lote sorteado na CPU); os braços eager leem a perda de volta depois de "
            "cada passo, os braços em grafo a cada 100 passos (o que o `attnref train` "
            "registra).\n"
        ),
        "step_header": ("lote|braço|ms/passo|mín.–máx. ms/passo|tokens/s|× baseline (braços fp32)"),
        "not_fp32": "— (não fp32)",
        "not_bf16": "— (não bf16)",
        "nanogpt_cell": "{ratio} ({lo}–{hi}: execuções do attnref contra iterações do nanoGPT)",
        "nanogpt": (
            "\n**Ao lado do `train.py` do nanoGPT** (commit {commit}, `compile={compile}`, lote "
            "{batch}, dropout 0, a mesma forma): cronometrado nas suas próprias iterações "
            "{first}–{last}, depois dos {start} s que a sua partida e a compilação levaram.\n"
        ),
        "nanogpt_row": "`train.py` do nanoGPT, compile={compile}",
        "attnref_arm": "attnref {arm}",
        "nanogpt_header": "braço|ms/passo|tokens/s|× nanoGPT (braços bf16)",
        "clocks": (
            "*Dois relógios*: os números do nanoGPT são a média de uma execução entre duas "
            "linhas que ele imprimiu (as iterações {first} e {last}, marcadas quando saíram do "
            "seu processo: {iters} iterações); os do attnref e do baseline são medianas de "
            "{reps} repetições de {steps} passos cronometradas entre chamadas de "
            "`torch.cuda.synchronize()`. A razão só é dada para os braços na precisão do "
            "nanoGPT ({precision}); o baseline e o `graph fp32` calculam em fp32.\n"
        ),
        "runs": (
            "\n**Execuções inteiras** por `attention_ref.lm.train.train` (`--cuda-graph auto`, "
            "`--precision auto`; avaliações, amostras e checkpoints incluídos), uma semente "
            "cada, cada uma cronometrada da chamada ao seu retorno no processo que tinha "
            "cronometrado os passos acima (a partida do Python, os imports, a leitura dos dados "
            "e a inicialização da CUDA não contados):\n"
        ),
        "runs_header": "execução|atenção|passos|precisão|grafo|s de relógio|melhor validação",
        "on": "ligado",
        "off": "desligado",
        "baby_machine": "**Máquina**: uma {gpu}, torch `{torch}`, {date} UTC.\n",
        "later": " (execução posterior)",
        "graph_how": "{precision}, grafo {on}",
        "nanogpt_how": "autocast bf16, compile=True",
        "reached": "{seconds} s (passo {step})",
        "not_reached": "não alcançado",
        "baby_header": (
            "braço|semente|como|melhor validação|no passo|primeira validação ≤ {target}|"
            "s de relógio"
        ),
        "seeds_at_once": (
            "\n\n**Sementes de uma vez.** O modelo da Q02, fp32, eager, {steps} passos por "
            "execução, medianas de {reps} repetições intercaladas no mesmo tipo de GPU: N "
            "sementes uma depois da outra (o que `attnref ablation --seeds N` faz) contra os N "
            "modelos empilhados e treinados num só passo com vmap (`torch.func`; o kernel math "
            "do SDPA: na primeira execução, o kernel fundido que o SDPA escolheu recusou a "
            'dimensão de lote do vmap no seu backward, "LSE is not correctly aligned"; os '
            "outros kernels fundidos não foram testados).\n"
        ),
        "vmap_note": (
            "O `--seeds` continua treinando as sementes uma depois da outra: o passo com vmap "
            "não é a mesma execução bit a bit, e é eager, enquanto as execuções da ablação "
            "repetem um grafo CUDA por passo ({ms} ms no lote {batch} na H100 acima, em bf16: "
            "`--precision auto` numa GPU que o calcula); grafo e vmap juntos não foram "
            "construídos, nem medidos nesta H200."
        ),
    },
}


def gpu_results(folder: str, name: str) -> Any:  # Any: whatever the JSON file holds
    """A committed GPU result, beside the book's results: ``docs/results`` → the checkout's
    ``benchmarks/results/<folder>/<name>`` (a notebook finds the checkout's ``docs/results``
    wherever it runs, `attnref_book.pages.RESULTS`)."""
    path = pages.RESULTS.parents[1] / "benchmarks" / "results" / folder / name
    return json.loads(path.read_text(encoding="utf-8"))


def nanogpt_cell(ratio: float, gs: dict[str, Any], n: dict[str, Any], arm: str, lang: str) -> str:
    """A ``× nanoGPT`` cell: the recorded ratio, and the least and greatest ratio between
    attnref's repetitions and the iterations nanoGPT's one run printed (`nanogpt_pair`)."""
    _, lo, hi = ratio_spread(*nanogpt_pair(gs, n, arm)[:2])
    return WORDS[lang]["nanogpt_cell"].format(
        ratio=said(ratio, ".2f", lang), lo=said(lo, ".2f", lang), hi=said(hi, ".2f", lang)
    )


def _nanogpt_table(gs: dict[str, Any], lang: str) -> list[str]:
    """nanoGPT's compiled ``train.py`` beside the arms of its batch, a ratio only for the arms
    in its precision, and the two clocks."""
    w = WORDS[lang]
    nano = [n for n in gs["nanogpt"] if "tokens_per_s" in n]
    if not nano:
        return []
    n = nano[-1]
    head = w["nanogpt"].format(
        commit=n["commit"][:7],
        compile=n["compile"],
        batch=n["batch"],
        first=n["first_iter"],
        last=n["last_iter"],
        start=said(n["to_first_iter_s"], ".0f", lang),
    )
    rows = [
        [
            w["nanogpt_row"].format(compile=n["compile"]),
            said(n["ms_per_step"], ".3f", lang),
            thousands(round(n["tokens_per_s"]), lang),
            said(1.0, ".2f", lang),
        ]
    ]
    for r in gs["steps"]:
        if r["batch"] == n["batch"] and r["arm"] in ("baseline", "graph fp32", "graph bf16"):
            like = arm_precision(r["arm"]) == NANOGPT_PRECISION
            rows.append(
                [
                    r["arm"] if r["arm"] == "baseline" else w["attnref_arm"].format(arm=r["arm"]),
                    said(r["ms_per_step"], ".3f", lang),
                    thousands(round(r["tokens_per_s"]), lang),
                    nanogpt_cell(r["tokens_per_s"] / n["tokens_per_s"], gs, n, r["arm"], lang)
                    if like
                    else w["not_bf16"],
                ]
            )
    a = gs["args"]
    clocks = w["clocks"].format(
        first=n["first_iter"],
        last=n["last_iter"],
        iters=thousands(n["last_iter"] - n["first_iter"], lang),
        reps=a["reps"],
        steps=a["steps"],
        precision=NANOGPT_PRECISION,
    )
    return [head, pages.table(w["nanogpt_header"].split("|"), rows), clocks]


def gpu_step(lang: str) -> str:
    """The step on one H100 (``gpu_step.json``): the machine, each arm's ms/step and tokens/s
    at each batch (a ratio to the fp32 baseline only for the fp32 arms), nanoGPT's compiled
    ``train.py`` beside it (a ratio only for the bf16 arms, and the two clocks said), the whole
    runs, and the sentences they support (`gpu_claims`)."""
    w = WORDS[lang]
    gs = gpu_results("gpu-h100", "gpu_step.json")
    m, a, ld = gs["machine"], gs["args"], gs["machine"]["load"]
    out = [
        w["machine"].format(
            gpu=m["gpu"],
            torch=m["torch"],
            cpu=m["cpu"],
            cpus=m["cpus"],
            date=m["date_utc"],
            load=said(ld["first_load_1min"], ".2f", lang),
            flagged=ld["flagged"],
            parts=ld["parts"],
        ),
        w["step"].format(reps=a["reps"], steps=a["steps"], warmup=a["warmup"]),
    ]
    rows = []
    for r in gs["steps"]:
        reps = gpu_step_ms(gs, r["batch"], r["arm"])
        like = arm_precision(r["arm"]) == BASELINE_PRECISION
        rows.append(
            [
                r["batch"],
                r["arm"],
                said(r["ms_per_step"], ".3f", lang),
                f"{said(min(reps), '.3f', lang)}–{said(max(reps), '.3f', lang)}",
                thousands(round(r["tokens_per_s"]), lang),
                (
                    said(r["vs_baseline"], ".2f", lang)
                    if r["arm"] == "baseline"
                    else ratio_cell(
                        r["vs_baseline"],
                        [1 / x for x in reps],
                        [1 / x for x in gpu_step_ms(gs, r["batch"], "baseline")],
                        lang,
                    )
                )
                if like
                else w["not_fp32"],
            ]
        )
    out += [pages.table(w["step_header"].split("|"), rows), ""]
    out += _nanogpt_table(gs, lang)
    out.append(w["runs"])
    rows = [
        [
            r["run"],
            r["attention"],
            thousands(r["steps"], lang),
            r["precision"],
            w["on"] if r["graph"] else w["off"],
            said(r["wall_s"], ".1f", lang),
            said(r["best_val"], ".4f", lang),
        ]
        for r in gs["runs"]
    ]
    out += [pages.table(w["runs_header"].split("|"), rows), ""]
    out += [f"\n- {claim}" for claim in gpu_claims(gs, lang=lang)]
    return "\n".join(out)


def baby_gpt(lang: str) -> str:
    """nanoGPT's baby GPT both ways on one H200 (``baby_gpt.json``, and attnref's later seeds
    in ``seeds/baby_gpt.json``): each arm's best validation loss, when it first reached the
    target and its wall time, the sentences they support (`baby_gpt_claims`); then N seeds
    trained one after the other against at once in a vmapped step (``seeds_vmap.json``,
    `seeds_at_once_claims`)."""
    w = WORDS[lang]
    bg = gpu_results("gpu-h200", "baby_gpt.json")
    more = [gpu_results("gpu-h200", "seeds/baby_gpt.json")]
    m = bg["machine"]
    out = [w["baby_machine"].format(gpu=m["gpu"], torch=m["torch"], date=m["date_utc"])]
    rows = []
    for run in [bg, *more]:
        for a in run["arms"]:
            got = a.get("reached")
            seed = a["options"]["seed"] if "options" in a else 1337
            how = (
                w["graph_how"].format(
                    precision=a["precision"], on=w["on"] if a["graph"] else w["off"]
                )
                if "graph" in a
                else w["nanogpt_how"]
            )
            reached = (
                w["reached"].format(
                    seconds=said(got["s"], ".1f", lang), step=thousands(got["step"], lang)
                )
                if got
                else w["not_reached"]
            )
            rows.append(
                [
                    a["arm"].split(" seed")[0] + ("" if run is bg else w["later"]),
                    seed,
                    how,
                    said(a["best_val"], ".4f", lang),
                    thousands(a["best_step"], lang),
                    reached,
                    said(a["wall_s"], ".1f", lang),
                ]
            )
    target = str(bg["target"]).replace(".", DECIMAL_MARK[lang])
    out += [pages.table(w["baby_header"].format(target=target).split("|"), rows), ""]
    out += [f"\n- {claim}" for claim in baby_gpt_claims(bg, more, lang)]
    sv = gpu_results("gpu-h200", "seeds_vmap.json")
    out.append(w["seeds_at_once"].format(steps=sv["args"]["steps"], reps=sv["args"]["reps"]))
    out += [f"\n- {claim}" for claim in seeds_at_once_claims(sv, lang)]
    return "\n".join(out)


def vmap_note(lang: str) -> str:
    """Why ``--seeds`` stays sequential: the vmapped step is eager and not the same run to the
    bit, where the ablation's step is a CUDA graph (its time read from the H100's step table:
    ``graph bf16`` at batch 16, ``--precision auto`` on a GPU that computes bf16)."""
    gs = gpu_results("gpu-h100", "gpu_step.json")
    step = next(r for r in gs["steps"] if r["batch"] == 16 and r["arm"] == "graph bf16")
    return WORDS[lang]["vmap_note"].format(
        ms=said(step["ms_per_step"], ".3f", lang), batch=step["batch"]
    )
