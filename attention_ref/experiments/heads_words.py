"""The heads sweep's words, one table per language (`attention_ref.experiments.heads_report`).

Pure data. What the arms share is said with the aspects' words of the Q03 report
(`attention_ref.experiments.report_words.COMPARABILITY_WORDS`), the table's headers with its
columns (`attention_ref.experiments.report_words.COLUMNS`); the rest is here, with the same
keys and the same fields in each language (a test holds them equal).
"""

from __future__ import annotations

from typing import Final

HEADS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "## Heads sweep: does the number of heads matter at fixed parameters?",
        "source": "Heads sweep run `{run}`",
        "trained": "{source}: one model trained with h = {heads} heads; {sweep}.",
        "run_seed": " (seed {seed})",
        "single_arm": "a single arm",
        "differ": "**the arms are not comparable as they stand**: besides the heads they "
        "differ in {parts}",
        "same": "every arm has the same {items}",
        "but_heads": "{aspect} but for the heads",
        "missing_one": "the {items} is not recorded for every arm, so not claimed the same",
        "missing_many": "the {items} are not recorded for every arm, so not claimed the same",
        "one_count": "Every arm has {n} parameters: the heads split d_model = h · d_k between "
        "them, they add no weights.",
        "counts_differ": "The parameter counts differ ({listed}), so the comparison is not at "
        "fixed size.",
        "one_arm": "One arm only: nothing to compare.",
        "flat_one_seed": "**The number of heads does not matter measurably here.** The best "
        "validation losses lie within {gap} nats of each other (from {lo} to {hi}), no more "
        "than the {tolerance} nats that one seed's fixed validation batches cannot tell apart.",
        "matters_one_seed": "**The number of heads matters here.** h = {best} reaches the "
        "lowest best validation loss ({lo}), h = {worst} the highest ({hi}): a spread of {gap} "
        "nats, more than the {tolerance} nats of sampling noise, on one seed.",
        "flat": "**The number of heads does not matter measurably here.** The mean best "
        "validation losses lie within {gap} nats of each other (from {lo} with h = {best} to "
        "{hi} with h = {worst}), {qualifier}.",
        "matters": "**The number of heads matters here.** h = {best} reaches the lowest mean "
        "best validation loss ({lo}), h = {worst} the highest ({hi}): {gap} nats apart, "
        "{qualifier}.",
        "no_single_head": "The sweep has no single-head arm and a multi-head arm both, so it "
        "cannot say what one head costs.",
        "noise_one_seed": "the {tolerance} of noise",
        "noise_spread": "the spread of {seeds}",
        "worse": "a single head is worse: {one} against {many} with h = {heads}, {diff} nats, "
        "more than {noise}. Several heads can look at several places at once; one head mixes "
        "them in one softmax.",
        "better": "a single head is better: {one} against the best multi-head {many} "
        "(h = {heads}), {diff} nats, more than {noise}: at this size and this many steps, wide "
        "heads (d_k = {d_k}) help more than many of them.",
        "as_well": "a single head does as well: {one} against the best multi-head {many} "
        "(h = {heads}), a difference of {diff} nats, within {noise}.",
        "one_head": "Read as *with one head instead of several* (the same parameters), {how}",
    },
    "pt": {
        "title": "## Varredura de cabeças: o número de cabeças importa com os parâmetros fixos?",
        "source": "Execução da varredura de cabeças `{run}`",
        "trained": "{source}: um modelo treinado com h = {heads} cabeças; {sweep}.",
        "run_seed": " (semente {seed})",
        "single_arm": "um só braço",
        "differ": "**os braços não são comparáveis como estão**: além das cabeças, diferem em "
        "{parts}",
        "same": "todos os braços têm {items}",
        "but_heads": "{aspect} (salvo as cabeças)",
        "missing_one": "não há registro de {items} para todos os braços, então não se afirma "
        "que seja igual",
        "missing_many": "não há registro de {items} para todos os braços, então não se afirma "
        "que sejam iguais",
        "one_count": "Todos os braços têm {n} parâmetros: as cabeças dividem d_model = h · d_k "
        "entre si, não acrescentam pesos.",
        "counts_differ": "As contagens de parâmetros diferem ({listed}), então a comparação "
        "não é a tamanho fixo.",
        "one_arm": "Um só braço: nada a comparar.",
        "flat_one_seed": "**O número de cabeças não faz diferença mensurável aqui.** As "
        "melhores perdas de validação ficam a menos de {gap} nats umas das outras (de {lo} a "
        "{hi}), não mais do que os {tolerance} nats que os lotes fixos de validação de uma "
        "semente não distinguem.",
        "matters_one_seed": "**O número de cabeças faz diferença aqui.** h = {best} chega à "
        "menor melhor perda de validação ({lo}), h = {worst} à maior ({hi}): uma diferença de "
        "{gap} nats, mais do que os {tolerance} nats de ruído de amostragem, numa semente.",
        "flat": "**O número de cabeças não faz diferença mensurável aqui.** As médias das "
        "melhores perdas de validação ficam a menos de {gap} nats umas das outras (de {lo} com "
        "h = {best} a {hi} com h = {worst}), {qualifier}.",
        "matters": "**O número de cabeças faz diferença aqui.** h = {best} chega à menor média "
        "da melhor perda de validação ({lo}), h = {worst} à maior ({hi}): {gap} nats de "
        "distância, {qualifier}.",
        "no_single_head": "A varredura não tem ao mesmo tempo um braço de uma só cabeça e um "
        "de várias, então não pode dizer quanto custa ter uma só cabeça.",
        "noise_one_seed": "os {tolerance} de ruído",
        "noise_spread": "a dispersão de {seeds}",
        "worse": "uma só cabeça é pior: {one} contra {many} com h = {heads}, {diff} nats, mais "
        "do que {noise}. Várias cabeças podem olhar para vários lugares ao mesmo tempo; uma só "
        "cabeça os mistura num único softmax.",
        "better": "uma só cabeça é melhor: {one} contra a melhor com várias cabeças, {many} "
        "(h = {heads}), {diff} nats, mais do que {noise}: neste tamanho e com tantos passos, "
        "cabeças largas (d_k = {d_k}) ajudam mais do que muitas delas.",
        "as_well": "uma só cabeça se sai tão bem quanto: {one} contra a melhor com várias "
        "cabeças, {many} (h = {heads}), uma diferença de {diff} nats, sem exceder {noise}.",
        "one_head": "Lendo a Q03 como *com uma só cabeça em vez de várias* (os mesmos "
        "parâmetros), {how}",
    },
}
