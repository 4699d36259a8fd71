"""The Q03 report's words, one table per language, and the numbers as each language writes them.

Pure: no MLflow, no torch. `attention_ref.experiments.report` computes the facts once (from
`attention_ref.experiments.findings`) and says them through these tables: a sentence in
Portuguese cannot say another thing than the English one, because the same code chose it. Each
table has the same keys and the same fields in every language (a test holds them equal). The
numbers go through `num` and `count`: Portuguese writes a decimal comma and groups thousands
with the SI's narrow space (`attention_ref.render.document`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from attention_ref.experiments.attention_cost import Part
from attention_ref.experiments.spread import Gap, Side, Spread
from attention_ref.render.document import said, thousands

#: the report's sentences (`attention_ref.experiments.report`)
REPORT: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "# Q03: the same model without attention, measured",
        "opening": "Experiment `{experiment}`, {source}. {comparability} Losses are "
        "cross-entropy in nats per character on fixed validation batches.",
        "reference": "Reference points on the whole validation split: a uniform guess over "
        "the {vocab} characters costs ln {vocab} = {ln_vocab}; character frequencies alone "
        "(unigram) {unigram}; the **bigram baseline** {bigram}: the validation cross-entropy "
        "of the bigram model P(next | current) counted on the training split ({smoothing} "
        "smoothing), which a model that sees one character can at best approach as it learns "
        "the same table (on the whole split; on the fixed batches a run's figure can land a "
        "little below it).",
        "add_one": "add-one",
        "add_k": "add-{k}",
        "not_a_bound": " It is not a lower bound: the table counted on the validation split "
        "itself gives {fitted}.",
        "fitted": " The table counted on the validation split itself gives {fitted}.",
        "in_training": "## What happens in training",
        "seeds": "Each arm was trained on {counts} seeds ({seeds}); a figure below is the mean "
        "over an arm's seeds, and one arm is called lower than another only where the gap "
        "exceeds their spread (their 95 % t-intervals, or with 2 seeds their ranges, do not "
        "overlap).",
        "runs": "Runs: {runs}.",
        "run_of_seed": "`{run}` (seed {seed})",
        "ablation_source": "ablation run `{run}`",
        "single_source": "the latest finished single run of each mode",
        "baseline_line": "Bigram baseline (validation cross-entropy of the bigram model "
        "counted on the training split): {baseline} nats",
        "means": "Each arm's figures are means over its {counts} seeds; min–max and the 95 % "
        "t-interval (from {least} seeds) are of its best validation loss.",
        "lowest": "* **Lowest validation loss: {first}** ({first_loss}), {gap} nats below the "
        "next ({second}, {second_loss}), {rests}.",
        "no_clear_one_seed": "* **No clear best arm:** {first} ({first_loss}) and {second} "
        "({second_loss}) are within {tolerance} of each other, on one seed.",
        "no_clear": "* **No clear best arm:** {first} ({first_loss}) and {second} "
        "({second_loss}) are {qualifier}.",
        "cost": "* **Cost.** {parameters}; {speed}{tail}.",
        "faster": "the model without attention trains at {without} tokens/s against "
        "{with_attention} ({speedup}× as fast{spread})",
        "speed_runs": "; runs {lo}–{hi}",
        "not_faster": "the model without attention is not faster ({without} tokens/s against "
        "{with_attention})",
        "buys_back": ", but speed does not buy back the context: its loss has levelled off "
        "{gap} nats above the model with attention ({rests})",
        "params_total": "The model with attention has {with_attention} parameters, without it "
        "{without}",
        "which_unknown": "; which of them are attention is not recorded",
        "attention_has": "Attention has {attention} of the {total} parameters ({share})",
        "parts_unknown": "; the arms differ by {difference} (the other arm's parts are not "
        "recorded)",
        "all_attention": ": the whole difference between the arms",
        "differ_by": "; the arms differ by {difference}: {parts}",
        "part_other": "in {part}",
        "to_answer": "**To answer Q03**, the experiment needs {missing}, or `attnref ablation` "
        "for the three arms at once; then `attnref report` again.",
        "needs_without": "the same model without attention: `attnref train --no-attention` "
        "with this run's options (its seed and steps)",
        "needs_with": "the same model with attention: `attnref train` with this run's options",
        "needs_both": "the model with attention and without it: `attnref train` and `attnref "
        "train --no-attention` with these options",
        "no_ablation": "Experiment `{experiment}` has no finished ablation and no finished "
        "single training run, so nothing here answers Q03 (the arms of a heads sweep are all "
        "models with attention); run `attnref ablation` first.",
    },
    "pt": {
        "title": "# Q03: o mesmo modelo sem atenção, medido",
        "opening": "Experimento `{experiment}`, {source}. {comparability} As perdas são "
        "entropia cruzada em nats por caractere, em lotes fixos de validação.",
        "reference": "Pontos de referência em todo o conjunto de validação: um palpite "
        "uniforme entre os {vocab} caracteres custa ln {vocab} = {ln_vocab}; só as frequências "
        "dos caracteres (unigrama), {unigram}; a **linha de base do bigrama**, {bigram}: a "
        "entropia cruzada, na validação, do modelo de bigramas P(próximo | atual) contado no "
        "treino (suavização {smoothing}), da qual um modelo que vê um único caractere pode no "
        "máximo se aproximar, aprendendo a mesma tabela (em todo o conjunto; nos lotes fixos o "
        "valor de uma execução pode ficar um pouco abaixo dela).",
        "add_one": "add-one",
        "add_k": "add-{k}",
        "not_a_bound": " Não é um limite inferior: a tabela contada na própria validação dá "
        "{fitted}.",
        "fitted": " A tabela contada na própria validação dá {fitted}.",
        "in_training": "## O que acontece no treino",
        "seeds": "Cada braço foi treinado em {counts} sementes ({seeds}); um número abaixo é a "
        "média sobre as sementes de um braço, e um braço só é dito menor que outro onde a "
        "diferença excede a dispersão deles (os seus intervalos t de 95 %, ou, com 2 sementes, "
        "os seus mínimo–máximo não se sobrepõem).",
        "runs": "Execuções: {runs}.",
        "run_of_seed": "`{run}` (semente {seed})",
        "ablation_source": "execução de ablação `{run}`",
        "single_source": "a última execução avulsa terminada de cada modo",
        "baseline_line": "Linha de base do bigrama (entropia cruzada, na validação, do modelo "
        "de bigramas contado no treino): {baseline} nats",
        "means": "Os números de cada braço são médias sobre as suas {counts} sementes; o "
        "mín.–máx. e o intervalo t de 95 % (a partir de {least} sementes) são da sua melhor "
        "perda de validação.",
        "lowest": "* **Menor perda de validação: {first}** ({first_loss}), {gap} nats abaixo "
        "do seguinte ({second}, {second_loss}), {rests}.",
        "no_clear_one_seed": "* **Nenhum braço claramente melhor:** {first} ({first_loss}) e "
        "{second} ({second_loss}) ficam a menos de {tolerance} um do outro, numa semente.",
        "no_clear": "* **Nenhum braço claramente melhor:** {first} ({first_loss}) e {second} "
        "({second_loss}) ficam {qualifier}.",
        "cost": "* **Custo.** {parameters}; {speed}{tail}.",
        "faster": "sem atenção o modelo treina a {without} tokens/s contra {with_attention} "
        "({speedup}× mais rápido{spread})",
        "speed_runs": "; execuções {lo}–{hi}",
        "not_faster": "sem atenção o modelo não é mais rápido ({without} tokens/s contra "
        "{with_attention})",
        "buys_back": ", mas a velocidade não compra de volta o contexto: a sua perda se "
        "estabilizou {gap} nats acima do modelo com atenção ({rests})",
        "params_total": "O modelo com atenção tem {with_attention} parâmetros, sem ela {without}",
        "which_unknown": "; quais deles são atenção não está registrado",
        "attention_has": "A atenção tem {attention} dos {total} parâmetros ({share})",
        "parts_unknown": "; os braços diferem em {difference} (as partes do outro braço não "
        "estão registradas)",
        "all_attention": ": toda a diferença entre os braços",
        "differ_by": "; os braços diferem em {difference}: {parts}",
        "part_other": "em {part}",
        "to_answer": "**Para responder à Q03**, o experimento precisa {missing}, ou de "
        "`attnref ablation` para os três braços de uma vez; depois, `attnref report` de novo.",
        "needs_without": "do mesmo modelo sem atenção: `attnref train --no-attention` com as "
        "opções desta execução (a sua semente e os seus passos)",
        "needs_with": "do mesmo modelo com atenção: `attnref train` com as opções desta execução",
        "needs_both": "do modelo com atenção e sem ela: `attnref train` e `attnref train "
        "--no-attention` com estas opções",
        "no_ablation": "O experimento `{experiment}` não tem nenhuma ablação terminada nem "
        "nenhuma execução de treino avulsa terminada, então nada aqui responde à Q03 (os "
        "braços de uma varredura de cabeças são todos modelos com atenção); rode `attnref "
        "ablation` primeiro.",
    },
}

#: `comparability_sentence` in each language; ``aspects``: an aspect's noun (where the arms
#: differ or it is not recorded), then how "the same …" says it, of one value and of several
COMPARABILITY_WORDS: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "single": "A single arm: nothing to compare it with.",
        "differ": "**The arms are not comparable as they stand**: they differ in {parts}, so a "
        "difference below mixes the attention with these.",
        "same": "Every arm has the same {items}",
        "missing_one": "the {items} is not recorded for every arm, so it is not claimed to be "
        "the same.",
        "missing_many": "the {items} are not recorded for every arm, so they are not claimed to "
        "be the same.",
        "aspects": {
            "seed": ("seed", "seed", "seeds"),
            "number of steps": ("number of steps", "number of steps", ""),
            "data": ("data", "data", ""),
            "model shape": ("model shape", "model shape", ""),
            "schedule": ("schedule", "schedule", ""),
            "evaluation": ("evaluation", "evaluation", ""),
        },
    },
    "pt": {
        "single": "Um só braço: nada com que compará-lo.",
        "differ": "**Os braços não são comparáveis como estão**: diferem em {parts}; as "
        "diferenças abaixo misturam a atenção com isso.",
        "same": "Todos os braços têm {items}",
        "missing_one": "não há registro de {items} para todos os braços, então não se afirma "
        "que seja igual.",
        "missing_many": "não há registro de {items} para todos os braços, então não se afirma "
        "que sejam iguais.",
        "aspects": {
            "seed": ("semente", "a mesma semente", "as mesmas sementes"),
            "number of steps": ("número de passos", "o mesmo número de passos", ""),
            "data": ("dados", "os mesmos dados", ""),
            "model shape": ("forma do modelo", "a mesma forma do modelo", ""),
            "schedule": ("cronograma de otimização", "o mesmo cronograma de otimização", ""),
            "evaluation": ("avaliação", "a mesma avaliação", ""),
        },
    },
}

#: the comparison tables' column headers (the ablation's and the heads sweep's)
COLUMNS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "attention": "attention",
        "heads": "heads h",
        "d_k": "d_k",
        "seeds": "seeds",
        "precision": "precision",
        "parameters": "parameters",
        "best": "best val loss",
        "best_mean": "best val loss (mean)",
        "range": "min–max",
        "interval": "95 % interval",
        "final_val": "final val loss",
        "final_train": "final train loss",
        "tokens_per_sec": "tokens/s",
        "wall_time": "wall time (s)",
        "steps": "steps",
        "not_recorded": "not recorded",
    },
    "pt": {
        "attention": "atenção",
        "heads": "cabeças h",
        "d_k": "d_k",
        "seeds": "sementes",
        "precision": "precisão",
        "parameters": "parâmetros",
        "best": "melhor perda de validação",
        "best_mean": "melhor perda de validação (média)",
        "range": "mín.–máx.",
        "interval": "intervalo de 95 %",
        "final_val": "perda final de validação",
        "final_train": "perda final de treino",
        "tokens_per_sec": "tokens/s",
        "wall_time": "tempo (s)",
        "steps": "passos",
        "not_recorded": "não registrada",
    },
}

#: where the cost sentence says a part's parameters are
PARTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        Part.EMBEDDINGS: "in the embeddings",
        Part.ATTENTION: "in the attention sub-layers",
        Part.ATTENTION_NORM: "in the LayerNorm before each attention sub-layer",
        Part.MLP: "in the MLPs",
        Part.MLP_NORM: "in the LayerNorm before each MLP",
        Part.FINAL_NORM: "in the final LayerNorm",
        Part.HEAD: "in the output head",
    },
    "pt": {
        Part.EMBEDDINGS: "nos embeddings",
        Part.ATTENTION: "nas subcamadas de atenção",
        Part.ATTENTION_NORM: "na LayerNorm antes de cada subcamada de atenção",
        Part.MLP: "nos MLPs",
        Part.MLP_NORM: "na LayerNorm antes de cada MLP",
        Part.FINAL_NORM: "na LayerNorm final",
        Part.HEAD: "na cabeça de saída",
    },
}

#: what the order of two arms rests on (`qualifier`): one seed and a tolerance, or the spread
#: of several seeds
SPREAD: Final[dict[str, dict[str, str]]] = {
    "en": {
        "one_seed": "one seed",
        "n_seeds": "{n} seeds",
        "two_counts": "{hi} and {lo} seeds",
        "within_tolerance": "within {tolerance} of each other, on one seed",
        "beyond_tolerance": "more than {tolerance} apart, on one seed",
        "within_spread": "within the spread of {seeds}",
        "beyond_spread": "beyond the spread of {seeds}",
        "on_one_seed": "on one seed",
    },
    "pt": {
        "one_seed": "uma semente",
        "n_seeds": "{n} sementes",
        "two_counts": "{hi} e {lo} sementes",
        "within_tolerance": "a menos de {tolerance} um do outro, numa semente",
        "beyond_tolerance": "a mais de {tolerance} um do outro, numa semente",
        "within_spread": "dentro da dispersão de {seeds}",
        "beyond_spread": "além da dispersão de {seeds}",
        "on_one_seed": "numa semente",
    },
}

#: the word that joins the last two items of a list, per language
#: the experiments page's summary (`attention_ref.experiments.report.summary_lines`), each
#: line said only where the findings support it
SUMMARY: Final[dict[str, dict[str, str]]] = {
    "en": {
        "reads": "With attention, the model reads the previous characters: it goes below even "
        "the best table \\(P(\\text{{next}} \\mid \\text{{current}})\\) of the validation split.",
        "stuck": "Without attention, each prediction sees only its own character (and "
        "position): the loss levels off at the bigram baseline from step {step} of {last}, and "
        "more training cannot help.",
        "leak": "Without attention, the loss is below the bigram baseline: look for a leak of "
        "context.",
        "uniform": "Equal weights over the past (uniform) already beat every bigram table",
        "closes": "; learning where to look is what closes the rest of the gap ({rests}).",
    },
    "pt": {
        "reads": "Com atenção, o modelo lê os caracteres anteriores: fica abaixo até da melhor "
        "tabela \\(P(\\text{{próximo}} \\mid \\text{{atual}})\\) da divisão de validação.",
        "stuck": "Sem atenção, cada previsão vê só o seu próprio caractere (e a posição): a "
        "perda se estabiliza na linha de base do bigrama a partir do passo {step} de {last}, e "
        "mais treino não pode ajudar.",
        "leak": "Sem atenção, a perda fica abaixo da linha de base do bigrama: procure um "
        "vazamento de contexto.",
        "uniform": "Pesos iguais sobre o passado (uniforme) já vencem toda tabela de bigramas",
        "closes": "; aprender onde olhar é o que fecha o resto da diferença ({rests}).",
    },
}

AND: Final[dict[str, str]] = {"en": " and ", "pt": " e "}


def join_words(items: Sequence[str], lang: str = "en") -> str:
    """``a, b and c`` (``a, b e c`` in Portuguese): the report's lists, in both languages."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + AND[lang] + items[-1]


def num(v: float, spec: str, lang: str) -> str:
    """``v`` formatted by ``spec`` with ``lang``'s decimal mark (``2,480`` in Portuguese)."""
    return said(v, spec, lang)


def count(v: float, lang: str) -> str:
    """``v`` rounded to a whole number, grouped by thousands as ``lang`` groups them
    (``429,824``; ``429 824`` with the SI's narrow space in Portuguese)."""
    return thousands(round(v), lang)


def shown(key: str, value: str) -> str:
    """A compared value as a sentence shows it: the data by the start of its sha256."""
    return f"sha256 `{value[:12]}…`" if key == "data" else value


def cells(s: Spread, lang: str, digits: int = 4) -> tuple[str, str, str]:
    """The table cells of a spread in ``lang``: the mean, the range, the 95 % interval ("–"
    where there is none to give)."""
    rng = f"{num(s.lo, f'.{digits}f', lang)}–{num(s.hi, f'.{digits}f', lang)}" if s.n > 1 else "–"
    iv = s.interval
    ci = (
        "–"
        if iv is None
        else f"{num(iv[0], f'.{digits}f', lang)}–{num(iv[1], f'.{digits}f', lang)}"
    )
    return num(s.mean, f".{digits}f", lang), rng, ci


def seeds_of(g: Gap, lang: str) -> str:
    """How many seeds the two arms of ``g`` have, in words: "3 seeds", "3 and 2 seeds", "one
    seed"."""
    say = SPREAD[lang]
    if g.a.n == g.b.n:
        return say["one_seed"] if g.a.n == 1 else say["n_seeds"].format(n=g.a.n)
    lo, hi = sorted((g.a.n, g.b.n))
    return say["two_counts"].format(hi=hi, lo=lo)


def qualifier(g: Gap, lang: str) -> str:
    """The words that say what the order of the two arms of ``g`` rests on (in English,
    `attention_ref.experiments.spread.Gap.qualifier`'s)."""
    say = SPREAD[lang]
    apart = g.side != Side.AT
    if g.one_seed:
        key = "beyond_tolerance" if apart else "within_tolerance"
        return say[key].format(tolerance=num(g.tolerance, "g", lang))
    return say["beyond_spread" if apart else "within_spread"].format(seeds=seeds_of(g, lang))


def rests_on(g: Gap, lang: str) -> str:
    """ "on one seed" for two arms of one seed each, else `qualifier`."""
    return SPREAD[lang]["on_one_seed"] if g.one_seed else qualifier(g, lang)
