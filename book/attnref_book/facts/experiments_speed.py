"""The facts of the experiments page's section on speed (``docs/experiments.md``, ``docs/
experiments.pt.md``, "How fast it trains, and how the cost grows"): how busy the machine was,
throughput, time to quality, scaling, sampling and the commands' latency, each read from the
JSON a script of ``benchmarks/`` committed in ``docs/results/benchmarks/``, in the page's
language. The sentences are `attnref_book.speed_claims`' and `attnref_book.conditions`'.
"""

from __future__ import annotations

import json
import math
import statistics
from typing import Any, Final

from attention_ref.render.document import said, thousands
from attnref_book import pages
from attnref_book.conditions import budget_sentence, load_reading, load_sentence, quiet_summary
from attnref_book.speed_claims import (
    latency_claims,
    ratio_cell,
    sampling_claims,
    scaling_claims,
    target_claim,
    throughput_claims,
    time_to_quality_claims,
)

#: the benchmarks the page reads, in its order
BENCHMARKS: Final = ("throughput", "time_to_quality", "scaling", "sampling", "cli_latency")
#: the page's words, by language (a table's header: its cells separated by ``|``)
WORDS: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "root": "../results",
        "busy": "**How busy the machine was.** {summary}\n",
        "none": "none",
        "machine": (
            "**Machine**: {cpu}, {cpus} CPUs, torch `{torch}` ({threads} threads); bf16 "
            "instructions: {flags} (the throughput run, {date} UTC).\n"
        ),
        "throughput": (
            "**Throughput** at the Q02 shape (n_embd {n_embd}, {n_layer} layers, {n_head} "
            "heads, block {block}, batch {batch}): {reps} interleaved repetitions of {steps} "
            "timed steps per arm, medians.\n"
        ),
        "arms": {
            "baseline": "baseline: nanoGPT-style trainer (fp32, SDPA, plain AdamW)",
            "attnref": "attnref ({precision}, the `auto` precision here)",
            "attnref-fp32": "attnref (fp32)",
            "attnref-bf16-attention": "attnref (bf16, the attention kernel in bf16 too)",
            "reference": "attnref (fp32) with the textbook attention of the previous pages",
        },
        "not_fp32": "— (not fp32)",
        "throughput_header": "arm|tokens/s (median)|min–max|ms/step|× baseline (fp32 arms)",
        "rss": (
            "\nPeak resident memory of `attnref train` at the defaults ({steps} steps): "
            "**{mib} MiB**."
        ),
        "ttq": (
            "**Time to quality** ({cpu}, {cpus} CPUs, bf16 instructions: {flags}, {date} UTC; "
            "attnref's precision {precision}): {budget}, evaluations included, one arm after "
            "the other. The curve is the in-loop evaluation on attnref's fixed validation "
            "batches (every arm on the same batches); the column *whole val split* evaluates "
            "the final model on every non-overlapping window of the validation split.\n"
        ),
        "ttq_header": "arm|steps|seconds|best val (in-loop)|whole val split",
        "time_to": "time to ≤ {target}",
        "not_reached": "not reached",
        "ttq_alt": "Validation loss against wall time",
        "target": (
            "\n**The target** (the defaults at val ≤ {level} within {budget} s, quiet): {line}"
        ),
        "scaling": (
            "**Scaling**: one axis at a time around the Q02 shape, {steps} timed steps per "
            "point, each point in its own process (its own peak memory).\n"
        ),
        "scaling_header": "axis|value|parameters|MFLOPs/token|tokens/s|ms/step|peak RSS (MiB)",
        "scaling_alt": "Throughput and memory against each axis",
        "sampling": (
            "\n**Sampling** (the Q02 shape, random weights; interleaved repetitions, medians): "
            "`cached` keeps each layer's keys and values, so while the text fits in the block a "
            "new character costs one position's work; once it is longer, as here, the window "
            "slides and is computed again, but for the last block, which computes its last "
            "position alone.\n"
        ),
        "sampling_header": "generation|characters|median s|min-max s|characters/s",
        "eval_sample": "training's eval sample (cached)",
        "latency": (
            "\n**Where a person waits** (`benchmarks/cli_latency.py`): the wall time of each "
            "command from the shell, as a subprocess, on {machine} ({date} UTC{other}), {reps} "
            "interleaved repetitions after one untimed run; a repetition that starts with more "
            "than {busy} cores busy with other work is flagged and left out of the median. "
            "`explain` is timed twice: as the hundredth run (its example read back as data) and "
            "as the first run of a new version of the code (computed with torch).\n"
        ),
        "other_machine": ", another machine than the throughput's above",
        "latency_header": "command|target (s)|median (s)|min–max (s)|runs kept",
        "of": "{kept} of {reps}",
    },
    "pt": {
        "root": "../../results",
        "busy": "**Quão ocupada estava a máquina.** {summary}\n",
        "none": "nenhuma",
        "machine": (
            "**Máquina**: {cpu}, {cpus} CPUs, torch `{torch}` ({threads} threads); instruções "
            "bf16: {flags} (a execução de throughput, {date} UTC).\n"
        ),
        "throughput": (
            "**Throughput** na forma da Q02 (n_embd {n_embd}, {n_layer} camadas, {n_head} "
            "cabeças, bloco {block}, lote {batch}): {reps} repetições intercaladas de {steps} "
            "passos cronometrados por braço, medianas.\n"
        ),
        "arms": {
            "baseline": "baseline: treinador no estilo do nanoGPT (fp32, SDPA, AdamW simples)",
            "attnref": "attnref ({precision}, a precisão `auto` aqui)",
            "attnref-fp32": "attnref (fp32)",
            "attnref-bf16-attention": "attnref (bf16, com o kernel de atenção também em bf16)",
            "reference": "attnref (fp32) com a atenção de livro-texto das páginas anteriores",
        },
        "not_fp32": "— (não fp32)",
        "throughput_header": "braço|tokens/s (mediana)|mín.–máx.|ms/passo|× baseline (braços fp32)",
        "rss": (
            "\nPico de memória residente do `attnref train` na configuração padrão ({steps} "
            "passos): **{mib} MiB**."
        ),
        "ttq": (
            "**Tempo até a qualidade** ({cpu}, {cpus} CPUs, instruções bf16: {flags}, {date} "
            "UTC; precisão do attnref {precision}): {budget}, avaliações incluídas, um braço "
            "depois do outro. A curva é a avaliação dentro do laço de treino, nos lotes fixos de "
            "validação do attnref (todos os braços nos mesmos lotes); a coluna *conjunto de "
            "validação inteiro* avalia o modelo final em cada janela sem sobreposição do "
            "conjunto de validação.\n"
        ),
        "ttq_header": (
            "braço|passos|segundos|melhor validação (no laço)|conjunto de validação inteiro"
        ),
        "time_to": "tempo até ≤ {target}",
        "not_reached": "não alcançado",
        "ttq_alt": "Perda de validação contra o tempo de relógio",
        "target": (
            "\n**A meta** (a configuração padrão com validação ≤ {level} em {budget} s, máquina "
            "ociosa): {line}"
        ),
        "scaling": (
            "**Escala**: um eixo de cada vez em torno da forma da Q02, {steps} passos "
            "cronometrados por ponto, cada ponto no seu próprio processo (com o seu próprio pico "
            "de memória).\n"
        ),
        "scaling_header": (
            "eixo|valor|parâmetros|MFLOPs/token|tokens/s|ms/passo|pico de RSS (MiB)"
        ),
        "scaling_alt": "Throughput e memória contra cada eixo",
        "sampling": (
            "\n**Amostragem** (a forma da Q02, pesos aleatórios; repetições intercaladas, "
            "medianas): `cached` guarda as chaves e os valores de cada camada, então, enquanto "
            "o texto cabe no bloco, um novo caractere custa o trabalho de uma posição; quando "
            "ele é mais longo, como aqui, a janela desliza e é calculada de novo, exceto no "
            "último bloco, que calcula só a sua última posição.\n"
        ),
        "sampling_header": "geração|caracteres|mediana s|mín.-máx. s|caracteres/s",
        "eval_sample": "amostra da avaliação do treino (cached)",
        "latency": (
            "\n**Onde uma pessoa espera** (`benchmarks/cli_latency.py`): o tempo de relógio de "
            "cada comando a partir do shell, como subprocesso, em {machine} ({date} "
            "UTC{other}), {reps} repetições intercaladas depois de uma execução não "
            "cronometrada; uma repetição que começa com mais de {busy} núcleos ocupados com "
            "outro trabalho é marcada e deixada fora da mediana. O `explain` é cronometrado "
            "duas vezes: como a centésima execução (o seu exemplo lido de volta como dados) e "
            "como a primeira execução de uma nova versão do código (calculado com torch).\n"
        ),
        "other_machine": ", outra máquina que a do throughput acima",
        "latency_header": "comando|meta (s)|mediana (s)|mín.–máx. (s)|execuções mantidas",
        "of": "{kept} de {reps}",
    },
}


def bench(name: str) -> Any:  # Any: whatever the JSON file holds
    """A committed benchmark's results (``docs/results/benchmarks/<name>.json``)."""
    return json.loads((pages.RESULTS / "benchmarks" / f"{name}.json").read_text(encoding="utf-8"))


def load_summary(lang: str) -> str:
    """How busy the machine was before each benchmark: one sentence over all, then one per
    benchmark (`attnref_book.conditions`)."""
    readings = [load_reading(name, bench(name)) for name in BENCHMARKS]
    out = [WORDS[lang]["busy"].format(summary=quiet_summary(readings, lang))]
    out += [f"- {load_sentence(r, lang)}" for r in readings]
    return "\n".join(out) + "\n"


def throughput(lang: str) -> str:
    """The machine, then tokens/s of each arm at the Q02 shape (medians of interleaved
    repetitions), a ratio to the baseline only for the arms in its precision (fp32: like with
    like), the sentences they support, and the peak memory of a training."""
    w = WORDS[lang]
    tp = bench("throughput")
    m, a = tp["machine"], tp["args"]
    out = [
        w["machine"].format(
            cpu=m["cpu"],
            cpus=m["cpus"],
            torch=m["torch"],
            threads=m["torch_threads"],
            flags=", ".join(m["cpu_bf16_flags"]) or w["none"],
            date=m["date_utc"],
        ),
        w["throughput"].format(
            n_embd=a["n_embd"],
            n_layer=a["n_layer"],
            n_head=a["n_head"],
            block=a["block_size"],
            batch=a["batch_size"],
            reps=a["reps"],
            steps=a["steps"],
        ),
    ]
    fp32 = {"baseline", "attnref-fp32", "reference"}
    fp32 |= {"attnref"} if tp["precision"] == "fp32" else set()
    rows = []
    base = tp["arms"]["baseline"]["tokens_per_s"]
    for arm, r in tp["arms"].items():
        lo, hi = min(r["tokens_per_s"]), max(r["tokens_per_s"])
        name = w["arms"].get(arm, arm).format(precision=tp["precision"])
        rows.append(
            [
                name,
                thousands(round(r["median"]), lang),
                f"{thousands(round(lo), lang)}–{thousands(round(hi), lang)}",
                said(r["ms_per_step"], ".1f", lang),
                (
                    said(r["ratio_to_baseline"], ".2f", lang)
                    if arm == "baseline"
                    else ratio_cell(r["ratio_to_baseline"], r["tokens_per_s"], base, lang)
                )
                if arm in fp32
                else w["not_fp32"],
            ]
        )
    out += [pages.table(w["throughput_header"].split("|"), rows), ""]
    out.append("\n".join(throughput_claims(tp, lang)))
    rss = tp.get("rss")
    if rss:
        mib = thousands(round(rss["peak_rss_mib"]), lang)
        out.append(w["rss"].format(steps=rss["steps"], mib=mib))
    return "\n".join(out)


def time_to_quality(lang: str) -> str:
    """Validation loss against wall time within one budget: each arm's steps, time, best
    in-loop loss, the final model on the whole validation split and the time to each target
    level, the figure, the sentences, and the target of the defaults (`target_claim`)."""
    w = WORDS[lang]
    tq = bench("time_to_quality")
    m = tq["machine"]
    targets = [float(t) for t in tq["args"]["targets"].split(",")]
    ends = {arm: curve[-1]["seconds"] for arm, curve in tq["curves"].items()}
    out = [
        w["ttq"].format(
            cpu=m["cpu"],
            cpus=m["cpus"],
            flags=", ".join(m["cpu_bf16_flags"]) or w["none"],
            date=m["date_utc"],
            precision=tq["precision"],
            budget=budget_sentence(tq["args"]["budget"], ends, lang),
        )
    ]
    rows = []
    for arm, curve in tq["curves"].items():
        best = min(p["val_loss"] for p in curve)
        first = [
            next((p["seconds"] for p in curve if p["val_loss"] <= t), math.nan) for t in targets
        ]
        rows.append(
            [
                arm,
                thousands(curve[-1]["step"], lang),
                said(curve[-1]["seconds"], ".0f", lang),
                said(best, ".4f", lang),
                said(tq["whole_val"][arm], ".4f", lang),
                *[f"{said(s, '.0f', lang)} s" if s == s else w["not_reached"] for s in first],
            ]
        )
    header = w["ttq_header"].split("|")
    header += [w["time_to"].format(target=said(t, ".2f", lang)) for t in targets]
    out.append(pages.table(header, rows))
    out.append(f"\n![{w['ttq_alt']}]({w['root']}/benchmarks/time_to_quality.png)\n")
    out.append("\n\n".join(time_to_quality_claims(tq, lang)))
    out.append(
        w["target"].format(
            level=said(tq["target"]["val_loss"], ".2f", lang),
            budget=said(tq["target"]["budget_s"], ".0f", lang),
            line=target_claim(tq, lang),
        )
    )
    return "\n".join(out)


def scaling(lang: str) -> str:
    """One axis at a time around the Q02 shape: parameters, arithmetic per token, tokens/s,
    time per step and peak memory of each point, the figure, and how cost grows."""
    w = WORDS[lang]
    sc = bench("scaling")
    rows = [
        [
            p["axis"],
            p["value"],
            thousands(p["params"], lang),
            said(p["flops_per_token"] / 1e6, ".2f", lang),
            thousands(round(p["tokens_per_s"]), lang),
            said(p["ms_per_step"], ".1f", lang),
            thousands(round(p["peak_rss_mib"]), lang),
        ]
        for p in sc["points"]
    ]
    return "\n".join(
        [
            w["scaling"].format(steps=sc["args"]["steps"]),
            pages.table(w["scaling_header"].split("|"), rows),
            f"\n![{w['scaling_alt']}]({w['root']}/benchmarks/scaling.png)\n",
            "\n\n".join(scaling_claims(sc, lang)),
        ]
    )


def sampling(lang: str) -> str:
    """Characters/s of generation, with and without the KV cache (medians and ranges of
    interleaved repetitions), and the training's evaluation sample; then what they support."""
    w = WORDS[lang]
    sa = bench("sampling")
    runs = [(arm, sa["args"]["tokens"], s) for arm, s in sa["seconds"].items()]
    if sa.get("eval_sample_seconds"):
        runs.append((w["eval_sample"], sa["args"]["sample_tokens"], sa["eval_sample_seconds"]))
    rows = []
    for name, chars, seconds in runs:
        med = statistics.median(seconds)
        spread = f"{said(min(seconds), '.3f', lang)}-{said(max(seconds), '.3f', lang)}"
        rows.append(
            [name, chars, said(med, ".3f", lang), spread, thousands(round(chars / med), lang)]
        )
    out = [w["sampling"], pages.table(w["sampling_header"].split("|"), rows)]
    out += ["\n" + claim for claim in sampling_claims(sa, lang)]
    return "\n".join(out)


def cli_latency(lang: str) -> str:
    """The wall time of each command from the shell against its target, on which machine and
    how the repetitions were counted; then what they support (`latency_claims`)."""
    w = WORDS[lang]
    lat = bench("cli_latency")
    here = load_reading("cli_latency", lat)
    other = (
        w["other_machine"]
        if here.machine != load_reading("throughput", bench("throughput")).machine
        else ""
    )
    rows = [
        [
            f"`{c['command']}`",
            said(c["target_s"], "g", lang),
            said(c["median_s"], ".2f", lang) if c["kept"] else "–",
            f"{said(c['min_s'], '.2f', lang)}–{said(c['max_s'], '.2f', lang)}"
            if c["kept"]
            else "–",
            w["of"].format(kept=c["kept"], reps=c["reps"]),
        ]
        for c in lat["commands"]
    ]
    head = w["latency"].format(
        machine=here.machine_in(lang),
        date=lat["machine"]["date_utc"],
        other=other,
        reps=lat["args"]["reps"],
        busy=said(lat["args"]["busy_limit"], "g", lang),
    )
    return "\n".join(
        [
            head,
            pages.table(w["latency_header"].split("|"), rows),
            "",
            "\n\n".join(latency_claims(lat, lang)),
        ]
    )
