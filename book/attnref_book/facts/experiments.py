"""The facts of the experiments page (``docs/experiments.md``, ``docs/experiments.pt.md``), up
to its summary: the recorded run of Q02 and Q03, its arms, its results, curves, answer, samples
and attention maps, each block's text in the page's language. The speed measurements are in
`attnref_book.facts.experiments_speed`, the GPU's in `attnref_book.facts.experiments_gpu`.

Every number comes from the committed recording (``docs/results/``, `attnref_book.pages.results`);
the sentences about the arms are the report's (`attention_ref.experiments.report`), in the
page's language.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Final

from attention_ref.experiments.findings import (
    Baselines,
    Span,
    arm_seeds,
    findings,
    rows_from_comparison,
    span,
)
from attention_ref.experiments.model_parts import uniform_weights
from attention_ref.experiments.report import (
    comparability_sentence,
    comparison_markdown,
    summary_lines,
    training_section,
)
from attention_ref.experiments.spread import INTERVAL_MIN_SEEDS
from attention_ref.render.document import said, thousands
from attnref_book import pages
from attnref_book.figures import figure, validation_curves_figure
from attnref_book.recorded_run import recorded_run_rows

#: the page's words, by language; ``root`` is where the page finds ``docs/results/`` (the
#: Portuguese pages are one folder deeper: ``pt/experiments/``)
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "root": "../results",
        "uniform": (
            "- **uniform**: {averages}, no \\(W_Q, W_K\\): context is mixed, but nothing learns "
            "where to look."
        ),
        "or": " or ",
        "seeds_intro": (
            "Each arm was trained on {counts} seeds: each figure of the table is the mean over "
            "them and, for the best validation loss, the min–max and the 95 % interval of the "
            "mean (Student's t with n − 1 degrees of freedom, from {least} seeds). Two arms are "
            "ordered only when those intervals (the 95 % one, or the min–max where there is no "
            'interval) do not touch: that is what the sentences below call "beyond the '
            'spread" of the seeds; "within the spread", when they touch.\n'
        ),
        "one_seed_header": (
            "attention|parameters|best val loss|final val loss|final train loss|tokens/s|"
            "wall time (s)"
        ),
        "add_one": "add-one",
        "add_k": "add-{k}",
        "bigram": (
            "Losses are cross-entropy in nats per character, on each split's fixed batches. "
            "The **bigram baseline** is **{bigram}**: the validation cross-entropy of the "
            "bigram model \\(P(\\text{{next}} \\mid \\text{{current}})\\) counted on the "
            "training split ({smoothing} smoothing, so that the pairs never seen in training "
            "get a probability too), which a model that sees one character can at best "
            "approach as it learns the same table (on the whole split; on the fixed batches a "
            "run's figure can land a little below it)."
        ),
        "fitted": (
            "It is a baseline, not a lower bound: the table counted on the validation split "
            "itself gives **{fitted}** there (the conditional entropy of the next character "
            "given the current one, the best any such table does on that split)."
        ),
        "every": ", every {gap} steps (from step {first} to {last})",
        "caption": (
            "The validation loss of each arm (the mean of its seeds), on the same fixed "
            "batches{when}; the dashed line is the bigram baseline. The training curves are in "
            "the figure above, with the validation ones."
        ),
        "curves_alt": "Loss curves of the three arms and the bigram line",
        "floor": (
            "The dashed line of the figure is the value the run logged, {logged} (labelled "
            "*bigram floor*): the table of that time gave unseen pairs add-one counts without "
            "renormalising its rows. The bigram baseline is now {now}; redrawing the figure "
            "needs the training curves, that is a new `attnref ablation`."
        ),
        "first_seed": (
            "Each arm's first seed ({seed}), as `attnref sample --arm` takes it; the attention "
            "maps below, and the model of the attention explorer (the next page), are the "
            "multihead arm's at that seed too.\n"
        ),
        "line": "Line: `{line}`\n",
        "map": "layer {layer}, head {head}",
    },
    "pt": {
        "root": "../../results",
        "uniform": (
            "- **uniform** (atenção uniforme): {averages}, sem \\(W_Q, W_K\\): o contexto é "
            "misturado, mas nada aprende onde olhar."
        ),
        "or": " ou ",
        "seeds_intro": (
            "Cada braço foi treinado em {counts} sementes: cada número da tabela é a média sobre "
            "elas e, para a melhor perda de validação, o mínimo–máximo e o intervalo de 95 % da "
            "média (t de Student com n − 1 graus de liberdade, a partir de {least} sementes). "
            "Dois braços são ordenados só quando esses intervalos (o de 95 %, ou o "
            "mínimo–máximo onde não há intervalo) não se tocam: é o que as frases abaixo chamam "
            'de "além da dispersão" das sementes; "dentro da dispersão", quando se tocam.\n'
        ),
        "one_seed_header": (
            "atenção|parâmetros|melhor perda de validação|perda final de validação|"
            "perda final de treino|tokens/s|tempo (s)"
        ),
        "add_one": "add-one",
        "add_k": "add-{k}",
        "bigram": (
            "Perdas: entropia cruzada em nats por caractere, nos lotes fixos de cada conjunto. "
            "**Linha de base do bigrama**: **{bigram}** — a entropia cruzada, na validação, do "
            "modelo de bigramas \\(P(\\text{{próximo}} \\mid \\text{{atual}})\\) contado no "
            "treino (suavização {smoothing}, para que os pares nunca vistos no treino também "
            "tenham probabilidade), da qual um modelo que vê um único caractere pode no máximo "
            "se aproximar, aprendendo a mesma tabela (em todo o conjunto; nos lotes fixos o "
            "valor de uma execução pode ficar um pouco abaixo dela)."
        ),
        "fitted": (
            "É uma linha de base, não um limite inferior: a tabela contada na própria validação "
            "dá **{fitted}** ali (a entropia condicional do próximo caractere dado o atual, o "
            "melhor que uma tabela assim faz nesse conjunto)."
        ),
        "every": ", a cada {gap} passos (do passo {first} ao {last})",
        "caption": (
            "A perda de validação de cada braço (a média das suas sementes), nos mesmos lotes "
            "fixos{when}; a linha tracejada é a linha de base do bigrama. As curvas de treino "
            "estão na figura acima, com as de validação."
        ),
        "curves_alt": "Curvas de perda dos três braços e a linha do bigrama",
        "floor": (
            "A linha tracejada da figura é o valor que a execução registrou, {logged} (rotulado "
            "*bigram floor*): a tabela daquela época dava contagens add-one aos pares nunca "
            "vistos sem renormalizar as suas linhas. A linha de base do bigrama agora é {now}; "
            "redesenhar a figura precisa das curvas de treino, isto é, de um novo "
            "`attnref ablation`."
        ),
        "first_seed": (
            "A primeira semente de cada braço ({seed}), como `attnref sample --arm` a toma; os "
            "mapas de atenção abaixo, e o modelo do explorador de atenção (a próxima página), "
            "são os do braço multihead nessa semente também.\n"
        ),
        "line": "Linha: `{line}`\n",
        "map": "camada {layer}, cabeça {head}",
    },
}

#: which positions the uniform arm averages (`span` of its weights), by language
AVERAGES: Final[dict[str, dict[Span, str]]] = {
    "en": {
        Span.ITSELF_AND_BEFORE: (
            "every position averages itself and all positions before it with equal weights, "
            "\\(A_{ij} = 1/i\\) for \\(j \\le i\\) (positions counted from 1)"
        ),
        Span.BEFORE_ONLY: (
            "every position averages the positions before it, not itself, with equal weights, "
            "\\(A_{ij} = 1/(i-1)\\) for \\(j < i\\)"
        ),
        Span.OTHER: "the layer's weights are not an equal-weight causal average",
    },
    "pt": {
        Span.ITSELF_AND_BEFORE: (
            "cada posição faz a média de si mesma e de todas as posições anteriores, com pesos "
            "iguais, \\(A_{ij} = 1/i\\) para \\(j \\le i\\) (posições contadas a partir de 1)"
        ),
        Span.BEFORE_ONLY: (
            "cada posição faz a média das posições anteriores, sem ela mesma, com pesos iguais, "
            "\\(A_{ij} = 1/(i-1)\\) para \\(j < i\\)"
        ),
        Span.OTHER: "os pesos da camada não são uma média causal de pesos iguais",
    },
}


def recorded_run(lang: str) -> str:
    """Where the figures come from: the recorded run's table (`recorded_run_rows`): the
    command, when and on which machine, the commit, the model and the schedule."""
    return pages.table(*recorded_run_rows(pages.results(), pages.results("provenance.json"), lang))


def uniform_arm(lang: str) -> str:
    """The uniform arm, as its layer computes it: which positions it averages, read off its
    weights (with \\(W_V = W_O = I\\) and \\(X = I\\) the layer's output is \\(A\\) itself)."""
    w = WORDS[lang]
    return w["uniform"].format(averages=AVERAGES[lang][span(uniform_weights(4))])


def results_table(lang: str) -> str:
    """The results of the three arms: how the seeds are read (a mean, its min–max and 95 %
    t-interval), the comparison table, what the arms share, and the bigram baseline
    (the validation cross-entropy of \\(P(\\text{next} \\mid \\text{current})\\) counted on the
    training split) with, where lower, the same table counted on the validation split."""
    w = WORDS[lang]
    doc = pages.results()
    recorded = rows_from_comparison(doc)
    groups = arm_seeds(recorded)
    ns = sorted({g.n for g in groups})
    out = []
    if ns != [1]:
        out.append(
            w["seeds_intro"].format(
                counts=w["or"].join(str(n) for n in ns), least=INTERVAL_MIN_SEEDS
            )
        )
    base = doc["baselines"]
    if any(g.n > 1 for g in groups):  # each arm on several seeds: the report's table
        out.append(comparison_markdown(recorded, base["bigram"], lang).split("\n\n", 1)[0])
    else:
        rows = [
            [
                r["attention"],
                thousands(r["n_params"], lang),
                *(said(r[k], ".4f", lang) for k in ("best_val_loss", "final_val_loss")),
                said(r["final_train_loss"], ".4f", lang),
                thousands(round(r["tokens_per_sec"]), lang),
                said(r["wall_time_s"], ".0f", lang),
            ]
            for r in doc["rows"]
        ]
        out.append(pages.table(w["one_seed_header"].split("|"), rows))
    out.append("")
    comparable = findings(recorded, Baselines(**base)).comparability
    out.append(comparability_sentence(comparable, len(recorded), lang) + "\n")
    k = base["bigram_smoothing"]
    smoothing = w["add_one"] if k == 1 else w["add_k"].format(k=said(k, "g", lang))
    out.append(w["bigram"].format(bigram=said(base["bigram"], ".4f", lang), smoothing=smoothing))
    fitted = base.get("bigram_fitted_on_val")
    if fitted is not None and fitted < base["bigram"]:
        out.append(w["fitted"].format(fitted=said(fitted, ".4f", lang)))
    return "\n".join(out)


def loss_curves(lang: str) -> str:
    """The loss curves: the recorded run's figure (training and validation, the bigram line as
    the run logged it, and why it differs where it does), then the validation curves drawn from
    the recording in the page's language."""
    w = WORDS[lang]
    doc = pages.results()
    logged = float(doc["params"]["bigram_floor"])
    now = doc["baselines"]["bigram"]
    # exec output is not link-rewritten by mkdocs: the path is relative to the page's folder
    out = [f"![{w['curves_alt']}]({w['root']}/loss_curves.png)\n"]
    if f"{logged:.3f}" != f"{now:.3f}":
        out.append(w["floor"].format(logged=said(logged, ".3f", lang), now=said(now, ".3f", lang)))
    steps = sorted({s for c in doc["curves"].values() for s, _ in c.get("val_loss", [])})
    gaps = {b - a for a, b in pairwise(steps)}
    when = (
        w["every"].format(gap=gaps.pop(), first=steps[0], last=steps[-1]) if len(gaps) == 1 else ""
    )
    out.append(figure(validation_curves_figure(doc, lang), w["caption"].format(when=when)))
    return "\n".join(out)


def q03_answer(lang: str) -> str:
    """The answer to Q03, written from the numbers: the report's section *What happens in
    training* (`training_section`), in the page's language."""
    doc = pages.results()
    return training_section(rows_from_comparison(doc), Baselines(**doc["baselines"]), lang)


def samples(lang: str) -> str:
    """Each arm's sample of its last evaluation (``docs/results/samples/``), and whose seed it
    is where the arms ran several."""
    w = WORDS[lang]
    shown = pages.results().get("shown", {})
    seeds = sorted({v["seed"] for v in shown.values()})
    out = []
    if len(pages.results()["rows"]) > len(shown) and len(seeds) == 1:
        out.append(w["first_seed"].format(seed=seeds[0]))
    for arm in ("multihead", "none", "uniform"):
        path = pages.RESULTS / "samples" / f"{arm}.txt"
        if path.exists():
            out.append(f"**{arm}**\n\n```text\n{path.read_text(encoding='utf-8').strip()}\n```\n")
    return "\n".join(out)


def attention_maps(lang: str) -> str:
    """The multihead arm's attention weights \\(A = \\operatorname{softmax}(QK^\\top/\\sqrt{d_k}
    + M)\\) on a fixed line, one image per layer and head (numbered from 1, as `attnref explain`
    numbers heads)."""
    w = WORDS[lang]
    maps = pages.results("attention/weights.json")
    out = [w["line"].format(line=repr(maps["line"]))]
    for layer, heads in enumerate(maps["layers"], start=1):
        for head in range(1, len(heads) + 1):
            alt = w["map"].format(layer=layer, head=head)
            path = f"{w['root']}/attention/layer{layer}_head{head}.png"
            out.append(f'![{alt}]({path}){{ width="48%" }}')
    return "\n".join(out)


def summary(lang: str) -> str:
    """The page's summary: each line only where the findings support it (`summary_lines`)."""
    doc = pages.results()
    f = findings(rows_from_comparison(doc), Baselines(**doc["baselines"]))
    return "\n".join(f"- {line}" for line in summary_lines(f, lang))
