"""The facts of the variants ablation page (``docs/variants-ablation.md``,
``docs/variants-ablation.pt.md``), computed once and said in each language.

Each function is one code block of the page and returns what it prints, read from the recorded
sweep (``docs/results/variants/``) and, for the three recordings of one seed, from the
experiments page's recordings (``docs/results/``, ``docs/results/earlier-fp32/``): the sweep
and what its record leaves out, the arms against the difference two recordings of one seed
show, and what to read in them. The table and the arms' sentences are
`attention_ref.experiments.variants_report`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from attention_ref.render import DECIMAL_MARK, said, thousands
from attnref_book.pages import RESULTS

#: where a recording's provenance keeps the machine's load, and where a recording keeps the
#: commit of its code (`attnref_book.recorded_run`: ``load_1min_before``, ``tree``; the
#: comparison's ``git_commit``)
LOAD_KEYS: Final = ("load_1min_before", "load")
COMMIT_KEYS: Final = ("git_commit", "commit", "tree")

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "recorded": "Recorded {date} UTC with `{command}` on {machine}, torch `{torch}` (MLflow "
        "run `{run}`): every arm {steps} steps of batch {batch} × block {block}, lr {lr} → "
        "{min_lr}, {seeds}, {precision}; {minutes} minutes of training for the four arms.\n",
        "seed": "seed {seed}",
        "seeds": "{n} seeds ({seeds})",
        "precision": "precision `{precision}`",
        "in_runs": " ({runs} in the runs)",
        "unrecorded_load_commit": "The load and the commit were not recorded: the sweep's "
        "record (`docs/results/variants/`) keeps neither the machine's load while the arms "
        "ran nor the git commit of the code they ran, so it cannot tell what else ran beside "
        "the tokens/s above, nor which code gave the figures above.",
        "unrecorded_load": "The load was not recorded: the sweep's record "
        "(`docs/results/variants/`) does not keep the machine's load while the arms ran, so it "
        "cannot tell what else ran beside the tokens/s above.",
        "unrecorded_commit": "The commit was not recorded: the sweep's record "
        "(`docs/results/variants/`) does not keep the git commit of the code the arms ran, so "
        "it cannot tell which code gave the figures above.",
        "figure": "![The four arms' validation loss](../results/variants/loss_curves.png)",
        "check_label": "the experiments page's multihead arm is this page's mha",
        "check_detail": "the same seed, steps, model and schedule: one configuration recorded "
        "three times",
        "bf16": "a CPU with bf16 instructions",
        "no_bf16": "a CPU without them",
        "hedge": " as far as can be told",
        "no_precision": "its runs recorded no precision",
        "inferred": "its machine is inferred from `{source}`",
        "undated": "its date was not recorded",
        "here": "\nThe losses above are this recording's, in {precision}{hedge} (`--precision "
        "auto` on {cpu}{notes}). [Page 7](../experiments/) recorded the same configuration and "
        "seed in {there_precision}{there_hedge} (`auto` on {there_cpu}{there_notes}): its "
        "`multihead` arm at that seed reached {there}, this page's `mha` {here}, ",
        "same": "the same figure to the digit (both ran on the same kind of CPU, torch version "
        "and thread count and, as far as can be told, the same training code: the sweep's "
        "commit was not recorded; on a CPU a run is then the same for a seed).",
        "apart": "{gap} apart.",
        "earlier": " Its first recording, in {precision}{hedge} (`auto` on {cpu}, kept in "
        "`docs/results/earlier-fp32/`{notes}), reached {there}, {gap} from this page's.",
        "one_seed": " Until the arms are recorded over several seeds, a difference between two "
        "arms says something only where it is larger than that:\n",
        "within": "within the difference two recordings of one seed showed",
        "larger": "larger than the difference two recordings of one seed showed",
        "arm_one": "- {name}: {change} against mha, {words} ({gap}).",
        "several": " The arms above are recorded over several seeds: each difference from mha "
        "is called above or below it only beyond the spread of its seeds:\n",
        "arm_many": "- {name}: {change} against mha, {qualifier}.",
        "minus": "-",
        "exact_one": "- The parameters and the KV cache are exact: they follow from the shapes. "
        "The losses are one run each, so read them together with the sentences above on what "
        "the arms share and on what one seed gave twice.",
        "exact_many": "- The parameters and the KV cache are exact: they follow from the "
        "shapes. The losses are means over {n} seeds, and an arm is called above or below mha "
        "only where the gap is beyond the spread of their seeds (the sentences above).",
        "rope": "- RoPE gives up the learned position table: beyond what the causal mask tells "
        "(a character's place among those before it), positions reach the model only through "
        "the angle between a query and a key.\n",
        "window": "- The window of {w} hides every character {w} or more back: a character sees "
        "itself and the {before} before it.\n",
        "cache": "- Here the KV cache of a generated character is {low} to {high} bytes (fp32, "
        "{layers} layers, a context of {block} characters): grouped-query attention is built "
        "for models whose cache is far larger (the Llama 3 8B table on [page 11](../gqa/)).",
    },
    "pt": {
        "recorded": "Registrada em {date} UTC com `{command}` em `{machine}`, torch `{torch}` "
        "(execução MLflow `{run}`): cada braço {steps} passos de lote {batch} × bloco {block}, "
        "taxa de aprendizado {lr} → {min_lr}, {seeds}, {precision}; {minutes} minutos de "
        "treino para os quatro braços.\n",
        "seed": "semente {seed}",
        "seeds": "{n} sementes ({seeds})",
        "precision": "precisão `{precision}`",
        "in_runs": " ({runs} nas execuções)",
        "unrecorded_load_commit": "A carga e o commit não foram registrados: o registro da "
        "varredura (`docs/results/variants/`) não guarda nem a carga da máquina enquanto os "
        "braços rodavam nem o commit do git do código que eles rodaram, então ele não diz o "
        "que mais rodava ao lado dos tokens/s acima, nem qual código deu os números acima.",
        "unrecorded_load": "A carga não foi registrada: o registro da varredura "
        "(`docs/results/variants/`) não guarda a carga da máquina enquanto os braços rodavam, "
        "então ele não diz o que mais rodava ao lado dos tokens/s acima.",
        "unrecorded_commit": "O commit não foi registrado: o registro da varredura "
        "(`docs/results/variants/`) não guarda o commit do git do código que os braços "
        "rodaram, então ele não diz qual código deu os números acima.",
        "figure": "![As curvas de perda de validação dos quatro braços (rótulos em inglês, como "
        "a figura da página em inglês)](../../results/variants/loss_curves.png)",
        "check_label": "o braço multihead da página dos experimentos é o mha desta página",
        "check_detail": "a mesma semente, os mesmos passos, o mesmo modelo e o mesmo "
        "cronograma: uma configuração gravada três vezes",
        "bf16": "uma CPU com instruções bf16",
        "no_bf16": "uma CPU sem elas",
        "hedge": " até onde se pode dizer",
        "no_precision": "as suas execuções não registraram a precisão",
        "inferred": "a sua máquina é deduzida de `{source}`",
        "undated": "a sua data não foi registrada",
        "here": "\nAs perdas acima são desta gravação, em {precision}{hedge} (`--precision "
        "auto` em {cpu}{notes}). A [página 7](../../experiments/), em inglês, gravou a mesma "
        "configuração e a mesma semente em {there_precision}{there_hedge} (`auto` em "
        "{there_cpu}{there_notes}): o seu braço `multihead` nessa semente chegou a {there}, o "
        "`mha` desta página a {here}, ",
        "same": "o mesmo número até o último dígito (as duas rodaram no mesmo tipo de CPU, com "
        "a mesma versão do torch, o mesmo número de threads e, até onde se pode saber, o mesmo "
        "código de treino: o commit da varredura não foi registrado; numa CPU uma execução é "
        "então a mesma para uma semente).",
        "apart": "{gap} de diferença.",
        "earlier": " A sua primeira gravação, em {precision}{hedge} (`auto` em {cpu}, guardada "
        "em `docs/results/earlier-fp32/`{notes}), chegou a {there}, {gap} de diferença para "
        "o `mha` desta página.",
        "one_seed": " Até os braços serem gravados com várias sementes, uma diferença entre "
        "dois braços só diz algo quando é maior do que essa:\n",
        "within": "dentro da diferença que duas gravações da mesma semente mostraram",
        "larger": "maior do que a diferença que duas gravações da mesma semente mostraram",
        "arm_one": "- {name}: {change} contra o mha, {words} ({gap}).",
        "several": " Os braços acima foram gravados com várias sementes: cada diferença para o "
        "mha só é dita acima ou abaixo dele além da dispersão das sementes:\n",
        "arm_many": "- {name}: {change} contra o mha, {qualifier}.",
        "minus": "−",
        "exact_one": "- Os parâmetros e o cache KV são exatos: decorrem das formas. As perdas "
        "são uma execução cada, então leia-as junto com as frases acima sobre o que os braços "
        "têm em comum e sobre o que uma mesma semente deu duas vezes.",
        "exact_many": "- Os parâmetros e o cache KV são exatos: decorrem das formas. As perdas "
        "são médias sobre {n} sementes, e um braço só é dito acima ou abaixo do mha quando a "
        "diferença vai além da dispersão das sementes (as frases acima).",
        "rope": "- O RoPE abre mão da tabela de posições aprendida: além do que a máscara "
        "causal diz (o lugar de um caractere entre os anteriores), as posições chegam ao "
        "modelo só pelo ângulo entre uma consulta e uma chave.\n",
        "window": "- A janela de {w} esconde todo caractere {w} ou mais posições para trás: um "
        "caractere vê a si mesmo e os {before} anteriores.\n",
        "cache": "- Aqui o cache KV de um caractere gerado tem de {low} a {high} bytes (fp32, "
        "{layers} camadas, um contexto de {block} caracteres): a atenção com consultas "
        "agrupadas é feita para modelos cujo cache é muito maior (a tabela do Llama 3 8B em "
        "[GQA e MQA](../gqa/)).",
    },
}


def read(name: str) -> Any:  # Any: whatever the JSON file holds
    """A recorded JSON file under ``docs/results``."""
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def unrecorded(about: Mapping[str, Any], doc: Mapping[str, Any], lang: str) -> str:
    """That a recording's record (``about``: its ``provenance.json``, ``doc``: its
    ``comparison.json``) keeps no machine load and no commit, as far as it keeps neither; ""
    where it keeps both."""
    missing = []
    if not any(about.get(k) is not None for k in LOAD_KEYS):
        missing.append("load")
    if not any(r.get(k) is not None for r in (about, doc) for k in COMMIT_KEYS):
        missing.append("commit")
    return WORDS[lang]["_".join(["unrecorded", *missing])] if missing else ""


def recorded_sweep(lang: str) -> str:
    """The recorded sweep: when, how and on what it ran, its schedule and seeds, the arms'
    table and sentences (`attention_ref.experiments.variants_report`), what its record leaves
    out, and the validation losses' figure."""
    from attention_ref.experiments.findings import ArmRow
    from attention_ref.experiments.variants_report import variants_sentences, variants_table

    say = WORDS[lang]
    doc, about = read("variants/comparison.json"), read("variants/provenance.json")
    rows = [ArmRow(**r) for r in doc["rows"]]
    c = rows[0].config
    minutes = sum(r.wall_time_s for r in rows) / 60
    seeds = list(dict.fromkeys(r.config["seed"] for r in rows))
    runs = {r.precision for r in rows}  # the precision each run recorded (None: not recorded)
    precision = say["precision"].format(precision=c["precision"])
    if None not in runs:
        precision += say["in_runs"].format(runs=", ".join(sorted(runs)))  # type: ignore[arg-type]
    mark = DECIMAL_MARK[lang]
    out = [
        say["recorded"].format(
            date=about["date_utc"],
            command=about["command"],
            machine=about["machine"],
            torch=about["torch"],
            run=about["parent_run_id"],
            steps=thousands(rows[0].steps, lang),
            batch=c["batch_size"],
            block=c["block_size"],
            lr=c["lr"].replace(".", mark),
            min_lr=c["min_lr"].replace(".", mark),
            seeds=say["seed"].format(seed=seeds[0])
            if len(seeds) == 1
            else say["seeds"].format(n=len(seeds), seeds=", ".join(seeds)),
            precision=precision,
            minutes=said(minutes, ".1f", lang),
        ),
        variants_table(rows, lang),
    ]
    out += [f"- {sentence}" for sentence in variants_sentences(rows, lang)]
    if note := unrecorded(about, doc, lang):
        out.append(f"- {note}")
    out += ["", say["figure"]]
    return "\n".join(out)


def recording(folder: str, arm: str, seed: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One recording's row of ``arm`` at ``seed`` (``folder``: under ``docs/results``, "" for
    the experiments page's), and its provenance."""
    prefix = f"{folder}/" if folder else ""
    doc = read(f"{prefix}comparison.json")
    row = next(r for r in doc["rows"] if r["attention"] == arm and r["config"]["seed"] == seed)
    return row, read(f"{prefix}provenance.json")


def how_known(row: Mapping[str, Any], about: Mapping[str, Any], lang: str) -> tuple[str, str]:
    """How far a recording's precision is known: a hedge (" as far as can be told") where its
    runs recorded no precision or its machine is inferred from another file (the precision is
    then read off that machine), and notes of what its record lacks or infers (no precision,
    the file its machine is inferred from, no date); both "" where nothing is lacking."""
    say = WORDS[lang]
    notes = []
    unsure = row.get("precision") is None
    if unsure:
        notes.append(say["no_precision"])
    if source := about.get("machine_source"):
        unsure = True
        notes.append(say["inferred"].format(source=source.split(",")[0]))
    if not about.get("date_utc"):
        notes.append(say["undated"])
    return say["hedge"] if unsure else "", "".join(f"; {n}" for n in notes)


def signed(v: float, lang: str) -> str:
    """A change in nats, with its sign as ``lang`` writes it (``-``/``−``) and 4 decimals."""
    return ("+" if v >= 0 else WORDS[lang]["minus"]) + said(abs(v), ".4f", lang)


def three_recordings(lang: str) -> str:
    """One configuration and seed recorded three times (this sweep's ``mha``, the experiments
    page's ``multihead``, and its first, fp32 recording), how far each one's precision is
    known, and each arm's difference from ``mha`` read against the difference two recordings
    of one seed show (one seed each) or against the spread of its seeds."""
    from attention_ref.experiments.findings import ArmRow
    from attention_ref.experiments.report_words import qualifier
    from attention_ref.experiments.variants_report import variant_facts
    from attnref_book.claims import two_recordings
    from attnref_book.pages import check

    say = WORDS[lang]
    two = two_recordings(RESULTS)
    earlier = two_recordings(RESULTS, "earlier-fp32")  # page 7 as first recorded
    sweep = [ArmRow(**r) for r in read("variants/comparison.json")["rows"]]
    here = next(r for r in sweep if r.attention == "mha")
    seed = here.config["seed"]
    known = {
        name: how_known(*recording(folder, arm, seed), lang)
        for name, folder, arm in (
            ("here", "variants", "mha"),
            ("there", "", "multihead"),
            ("earlier", "earlier-fp32", "multihead"),
        )
    }

    def cpu(precision: str) -> str:
        return say["bf16" if precision == "bf16" else "no_bf16"]

    out = [check(say["check_label"], two.same and earlier.same, say["check_detail"], lang=lang)]
    same = round(two.gap, 4) == 0
    out.append(
        say["here"].format(
            precision=two.here_precision,
            hedge=known["here"][0],
            cpu=cpu(two.here_precision),
            notes=known["here"][1],
            there_precision=two.there_precision,
            there_hedge=known["there"][0],
            there_cpu=cpu(two.there_precision),
            there_notes=known["there"][1],
            there=said(two.there, ".4f", lang),
            here=said(two.here, ".4f", lang),
        )
        + (say["same"] if same else say["apart"].format(gap=said(two.gap, ".4f", lang)))
        + say["earlier"].format(
            precision=earlier.there_precision,
            hedge=known["earlier"][0],
            cpu=cpu(earlier.there_precision),
            notes=known["earlier"][1],
            there=said(earlier.there, ".4f", lang),
            gap=said(earlier.gap, ".4f", lang),
        )
    )
    two = earlier  # the difference the precision alone makes, to read the gaps against
    facts = [f for f in variant_facts(sweep) if f.name != "mha"]
    if all(f.gap is not None and f.gap.one_seed for f in facts):
        out.append(say["one_seed"])
        for f in facts:
            words = say["within" if two.within(f.val_change) else "larger"]
            out.append(
                say["arm_one"].format(
                    name=f.name,
                    change=signed(f.val_change, lang),
                    words=words,
                    gap=said(two.gap, ".4f", lang),
                )
            )
    else:  # several seeds: the sentences above order the arms by their spread
        out.append(say["several"])
        for f in facts:
            assert f.gap is not None
            out.append(
                say["arm_many"].format(
                    name=f.name, change=signed(f.val_change, lang), qualifier=qualifier(f.gap, lang)
                )
            )
    return "\n".join(out)


def what_to_read(lang: str) -> str:
    """What to read in the sweep: which figures are exact and which are runs, what RoPE gives
    up, what the window hides, and the KV cache of a generated character,
    :math:`2 \\cdot L \\cdot g \\cdot d_k \\cdot 4` bytes (fp32), against a large model's."""
    from attention_ref.experiments.variants_report import kv_cache_bytes

    say = WORDS[lang]
    doc = read("variants/comparison.json")
    n = len({r["config"]["seed"] for r in doc["rows"]})
    out = [say["exact_one"] if n == 1 else say["exact_many"].format(n=n), say["rope"]]
    cache = [kv_cache_bytes(r["config"]) for r in doc["rows"]]
    c = doc["rows"][0]["config"]
    w = max(int(r["config"].get("window", 0)) for r in doc["rows"])
    out.append(say["window"].format(w=w, before=w - 1))
    out.append(
        say["cache"].format(
            low=thousands(min(cache), lang),
            high=thousands(max(cache), lang),
            layers=c["n_layer"],
            block=c["block_size"],
        )
    )
    return "\n".join(out)
