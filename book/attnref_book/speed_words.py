"""The words of `attnref_book.speed_claims` (the sentences on the speed benchmarks of the
experiments page), in each language of the book: templates whose fields the claims fill in
with numbers already written the language's way.
"""

from __future__ import annotations

from typing import Final

#: the templates, by language; ``list`` separates numbers in a list (a decimal comma would
#: run into a comma)
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "list": ", ",
        "ratio": "{mid}× (runs {lo}–{hi})",
        "ratio_one": "{mid}× (one run each: no spread)",
        "batch": ", batch {batch}",
        "defaults_batch": "; the defaults train at {default}",
        "equal_precision": (
            "At equal precision (fp32, the same shape{batch}) attnref trains at {ratio} the "
            "baseline's tokens/s"
        ),
        "overlap": "; the two ranges overlap: no measurable difference.",
        "ratio_cell": "{ratio} (runs {lo}–{hi})",
        "ratio_cell_overlap": "{ratio} (runs {lo}–{hi}; the ranges overlap)",
        "no_bf16": (
            "This CPU has no bf16 instructions, so `--precision auto` trains in fp32, the "
            "baseline's arithmetic. The gain of the fast path is bf16 autocast, which needs "
            "avx512_bf16 or amx_bf16."
        ),
        "auto_precision": (
            "`--precision auto` trains in {precision} here, at {ratio} attnref's own fp32 tokens/s"
        ),
        "fp32_only": " The baseline has no bf16 arm: the two trainers are compared in fp32 only.",
        "defaults_arm": (
            "attnref's arm is the defaults (batch {batch}, {max_steps} steps, lr {lr} → "
            "{min_lr}); it ended at step {step} after {seconds} s with {whole} on the whole "
            "validation split"
        ),
        "cut_schedule": (
            ", {share} of its schedule: the defaults' schedule does not fit in this budget on "
            "this machine."
        ),
        "baseline_cut": ", its schedule set for {planned} steps and cut at {done}",
        "baseline": (
            "Within the same {budget}-s budget the baseline's recipe (lr 1e-3, dropout 0.2, "
            "batch {batch}, fp32) ran {seconds} s{cut}, and reached {whole} on the whole "
            "validation split, {gap} nats {where} {arm} ({mine}, which ended after {ended} s); "
            "one run each."
        ),
        "above": "above",
        "below": "below",
        "attnref_fp32": "attnref's in fp32",
        "attnref": "attnref's",
        "reached": "attnref reached val {best} (its best) at {seconds} s, step {step}; ",
        "not_reached": "val ≤ {level} not reached within {seconds} s",
        "first_at": "val ≤ {level} first at {seconds} s (step {step})",
        "why_changed": "options changed",
        "why_budget": "budget over {budget} s",
        "why_loaded": "not a quiet start",
        "not_judged": ". The target is not judged here: {why}.",
        "met": "met",
        "late": "not met (the first ≤ {level} came {late} s past the budget)",
        "not_met": "not met",
        "cpu_with": "a CPU with {flags} ({cpu}, {cpus} CPUs)",
        "cpu_without": "a CPU without bf16 instructions ({cpu}, {cpus} CPUs)",
        "one_run": "in one quiet run, in {precision} on {on}",
        "fp32_first": (
            "; the same run's attnref-fp32 arm first reached val ≤ {level} at {seconds} s"
        ),
        "fp32_never": "; the same run's attnref-fp32 arm did not reach val ≤ {level}",
        "judged": ". Target (val ≤ {level} within {budget} s, quiet machine): {verdict}, {rests}.",
        "noise": (
            "The Q02 shape is a point of every axis, measured {n} times: {values} ms/step, a "
            "spread of {spread}×: one point's noise on this machine, so read the table for how "
            "cost grows, not for its last digit. From the smallest to the largest value:"
        ),
        "axis": "- {axis} {lo} → {hi}: the time of a step × {time}, its arithmetic × {work}.",
        "cache_same": (
            "At this size the cache saves no measurable time on this CPU ({cached} s against "
            "{uncached} s, overlapping ranges): a forward pass of one position and of 128 cost "
            "about the same, the per-character overhead sets the pace."
        ),
        "cache_saves": "The cache saves {ratio} on this CPU ({cached} s against {uncached} s).",
        "cli": (
            "`attnref sample` itself (the trained model, read from the store) takes {cli} s "
            "for {tokens} characters, of which generation is about {generation} s: the rest is "
            "start-up (Python, torch, finding and loading the model)."
        ),
        "none_counted": (
            "{head}: every run started with more than {busy} other cores busy ({flagged} "
            "flagged), so its {target} s target is not judged."
        ),
        "counted": (
            "{head}: {median} s (median of {kept} runs started with ≤ {busy} other cores busy, "
            "{lo}-{hi} s), {side}."
        ),
        "counted_one": (
            "{head}: {median} s (median of {kept} run started with ≤ {busy} other cores busy, "
            "{lo}-{hi} s), {side}."
        ),
        "under": "under its {target} s target",
        "median_only": (
            "under by its median only (its slowest run counted is not) its {target} s target"
        ),
        "over": "over its {target} s target",
        "load_quiet": (
            "Judged on a quiet machine (1-minute load {load} before the first timed part, at "
            "most the {limit} of a quiet machine)"
        ),
        "load_loaded": (
            "Judged on a machine that was not quiet: the 1-minute load was {load} before the "
            "first timed part, above the {limit} of a quiet machine"
        ),
        "load_unknown": (
            "Judged on a machine whose load before the runs is not recorded, so not called quiet"
        ),
        "judged_on": (
            "{load}; a run counts where it started with ≤ {busy} other cores busy, and a "
            "target is met where every run counted is under it."
        ),
        "all_met": "Every target is met.",
        "some_met": "{met} of {judged} targets are met.",
        "all_under": (
            "Every command was under its target in every run counted; the machine was not "
            "quiet, so no target is called met."
        ),
        "some_under": (
            "{met} of {judged} commands were under their targets in every run counted; the "
            "machine was not quiet, so no target is called met."
        ),
        "paths": (
            "Sampling without MLflow's client and torch is measured worth keeping: `sample "
            "--model` (the same run's model through MLflow's client and torch) took {torch} s at "
            "the median against {numpy} s for `sample --run-id` (read from the local store and "
            "run in numpy, neither imported), {ratio} the time, in the same interleaved runs."
        ),
        "paths_overlap": (
            "`sample --model` (the same run's model through MLflow's client and torch) took "
            "{torch} s at the median against {numpy} s for `sample --run-id` (numpy, neither "
            "imported), "
            "{ratio}; with the ranges overlapping or a side of one run, sampling without them is "
            "not shown to save time here."
        ),
        "imports": (
            "Where the slowest, `{command}`, spends its time: in a run of its own under "
            "`python -X importtime` ({wall} s, the profiler's cost included; not one of the "
            "timed runs), {imports} s went to importing modules, {top} s of them to {package} "
            "({share})."
        ),
    },
    "pt": {
        "list": "; ",
        "ratio": "{mid}× (execuções {lo}–{hi})",
        "ratio_one": "{mid}× (uma execução cada: sem dispersão)",
        "batch": ", lote {batch}",
        "defaults_batch": "; a configuração padrão treina com lote {default}",
        "equal_precision": (
            "Na mesma precisão (fp32, a mesma forma{batch}) o attnref treina a {ratio} os "
            "tokens/s do baseline"
        ),
        "overlap": "; as duas faixas se sobrepõem: nenhuma diferença mensurável.",
        "ratio_cell": "{ratio} (execuções {lo}–{hi})",
        "ratio_cell_overlap": "{ratio} (execuções {lo}–{hi}; as faixas se sobrepõem)",
        "no_bf16": (
            "Esta CPU não tem instruções bf16, então `--precision auto` treina em fp32, a "
            "aritmética do baseline. O ganho do caminho rápido é o autocast bf16, que precisa "
            "de avx512_bf16 ou amx_bf16."
        ),
        "auto_precision": (
            "`--precision auto` treina em {precision} aqui, a {ratio} os tokens/s do próprio "
            "attnref em fp32"
        ),
        "fp32_only": (
            " O baseline não tem braço bf16: os dois treinadores são comparados só em fp32."
        ),
        "defaults_arm": (
            "O braço do attnref é a configuração padrão (lote {batch}, {max_steps} passos, taxa "
            "de aprendizado {lr} → {min_lr}); terminou no passo {step} depois de {seconds} s, "
            "com {whole} no conjunto de validação inteiro"
        ),
        "cut_schedule": (
            ", {share} do seu cronograma: o cronograma padrão não cabe neste orçamento nesta "
            "máquina."
        ),
        "baseline_cut": ", com o cronograma feito para {planned} passos e cortado em {done},",
        "baseline": (
            "No mesmo orçamento de {budget} s, a receita do baseline (taxa de aprendizado 1e-3, "
            "dropout 0,2, lote {batch}, fp32) rodou {seconds} s{cut} e chegou a {whole} no "
            "conjunto de validação inteiro, {gap} nats {where} {arm} ({mine}, que terminou "
            "depois de {ended} s); uma execução cada."
        ),
        "above": "acima do",
        "below": "abaixo do",
        "attnref_fp32": "attnref em fp32",
        "attnref": "attnref",
        "reached": (
            "o attnref chegou a {best} na validação (a sua melhor) aos {seconds} s, passo {step}; "
        ),
        "not_reached": "validação ≤ {level} não alcançada em {seconds} s",
        "first_at": "validação ≤ {level} pela primeira vez aos {seconds} s (passo {step})",
        "why_changed": "opções alteradas",
        "why_budget": "orçamento acima de {budget} s",
        "why_loaded": "início não ocioso",
        "not_judged": ". A meta não é julgada aqui: {why}.",
        "met": "cumprida",
        "late": "não cumprida (o primeiro ≤ {level} veio {late} s depois do fim do orçamento)",
        "not_met": "não cumprida",
        "cpu_with": "CPU com {flags} ({cpu}, {cpus} CPUs)",
        "cpu_without": "CPU sem instruções bf16 ({cpu}, {cpus} CPUs)",
        "one_run": "numa única execução ociosa, em {precision}, numa {on}",
        "fp32_first": (
            "; o braço attnref-fp32 da mesma execução chegou a validação ≤ {level} pela "
            "primeira vez aos {seconds} s"
        ),
        "fp32_never": ("; o braço attnref-fp32 da mesma execução não chegou a validação ≤ {level}"),
        "judged": (
            ". Meta (validação ≤ {level} em {budget} s, máquina ociosa): {verdict}, {rests}."
        ),
        "noise": (
            "A forma da Q02 é um ponto de cada eixo, medido {n} vezes: {values} ms/passo, uma "
            "dispersão de {spread}×: o ruído de um ponto nesta máquina; leia a tabela pelo "
            "modo como o custo cresce, não pelo seu último dígito. Do menor ao maior valor:"
        ),
        "axis": "- {axis} {lo} → {hi}: o tempo de um passo × {time}, a sua aritmética × {work}.",
        "cache_same": (
            "Neste tamanho o cache não economiza tempo mensurável nesta CPU ({cached} s contra "
            "{uncached} s, faixas sobrepostas): uma passagem para a frente de uma posição e uma "
            "de 128 custam mais ou menos o mesmo; o custo fixo de cada caractere dita o ritmo."
        ),
        "cache_saves": "O cache economiza {ratio} nesta CPU ({cached} s contra {uncached} s).",
        "cli": (
            "O próprio `attnref sample` (o modelo treinado, lido do armazenamento) leva {cli} s "
            "para {tokens} caracteres, dos quais a geração leva cerca de {generation} s: o "
            "resto é a inicialização (o Python, o torch, achar e carregar o modelo)."
        ),
        "none_counted": (
            "{head}: toda execução começou com mais de {busy} outros núcleos ocupados "
            "({flagged} marcadas), então a sua meta de {target} s não é julgada."
        ),
        "counted": (
            "{head}: {median} s (mediana de {kept} execuções iniciadas com ≤ {busy} outros "
            "núcleos ocupados, {lo}-{hi} s), {side}."
        ),
        "counted_one": (
            "{head}: {median} s (mediana de {kept} execução iniciada com ≤ {busy} outros "
            "núcleos ocupados, {lo}-{hi} s), {side}."
        ),
        "under": "abaixo da sua meta de {target} s",
        "median_only": (
            "abaixo da sua meta de {target} s só pela mediana (a sua execução contada mais "
            "lenta não está)"
        ),
        "over": "acima da sua meta de {target} s",
        "load_quiet": (
            "Julgado numa máquina ociosa (carga de 1 minuto {load} antes da primeira parte "
            "cronometrada, no máximo os {limit} de uma máquina ociosa)"
        ),
        "load_loaded": (
            "Julgado numa máquina que não estava ociosa: a carga de 1 minuto era {load} antes da "
            "primeira parte cronometrada, acima dos {limit} de uma máquina ociosa"
        ),
        "load_unknown": (
            "Julgado numa máquina cuja carga antes das execuções não foi registrada, então não "
            "dita ociosa"
        ),
        "judged_on": (
            "{load}; uma execução conta quando começou com ≤ {busy} outros núcleos ocupados, e "
            "uma meta é cumprida quando toda execução contada fica abaixo dela."
        ),
        "all_met": "Todas as metas são cumpridas.",
        "some_met": "{met} de {judged} metas são cumpridas.",
        "all_under": (
            "Todo comando ficou abaixo da sua meta em toda execução contada; a máquina não "
            "estava ociosa, então nenhuma meta é dita cumprida."
        ),
        "some_under": (
            "{met} de {judged} comandos ficaram abaixo das suas metas em toda execução contada; "
            "a máquina não estava ociosa, então nenhuma meta é dita cumprida."
        ),
        "paths": (
            "Amostrar sem o cliente do MLflow e sem o torch vale a pena, medido: `sample --model` "
            "(o modelo da mesma execução pelo cliente do MLflow e o torch) levou {torch} s na "
            "mediana contra {numpy} s de `sample --run-id` (lido do armazenamento local e rodado "
            "em numpy, sem importar nenhum dos dois), {ratio} o tempo, nas mesmas execuções "
            "intercaladas."
        ),
        "paths_overlap": (
            "`sample --model` (o modelo da mesma execução pelo cliente do MLflow e o torch) "
            "levou {torch} s na mediana contra {numpy} s de `sample --run-id` (numpy, sem nenhum "
            "dos dois), "
            "{ratio}; com as faixas sobrepostas ou um lado de uma só execução, amostrar sem eles "
            "não se mostra mais rápido aqui."
        ),
        "imports": (
            "Onde o mais lento, `{command}`, gasta o seu tempo: numa execução à parte sob "
            "`python -X importtime` ({wall} s, com o custo do profiler; não é uma das execuções "
            "cronometradas), {imports} s foram para importar módulos, {top} s deles para "
            "{package} ({share})."
        ),
    },
}
