"""The words of `attnref_book.gpu_claims` (the sentences on the GPU benchmarks of the
experiments page), in each language of the book: templates whose fields the claims fill in
with numbers already written the language's way.
"""

from __future__ import annotations

from typing import Any, Final

#: the templates, by language
WORDS: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "unnamed": "an unnamed device",
        "not_gpu": "This run was on {device}, not a GPU: the GPU targets are not judged.",
        "against": "{a} {ma} ms against {b} {mb} ms",
        "overlap": " (the ranges overlap: no measurable difference)",
        "faster": ": {r}× faster (runs {lo}–{hi})",
        "slower": ": {r}× slower (runs {lo}–{hi})",
        "pair": "{big} and {small} ms, batch {batch} and {other}",
        "launch_bound": (
            "Eager in fp32, a step of batch {batch} takes as long as one of batch {other} "
            "({pair}; the ranges overlap): the step is bound by launching its kernels, not by "
            "its arithmetic."
        ),
        "differ": (
            "Eager in fp32, a step of batch {batch} and one of batch {other} differ beyond "
            "their ranges ({pair})."
        ),
        "graph": (
            "At batch {batch}, one CUDA graph per step against the same step eager: {fp32}; {bf16}."
        ),
        "precision": "bf16 against fp32: {graph} with the graph; eager, {eager}.",
        "not_compiled": "was not compiled",
        "not_measured": "was not measured",
        "nanogpt_unjudged": (
            "nanoGPT's `train.py` at batch {batch} {why} in this run: the target "
            "(≥ {target}× its compiled tokens/s) is not judged."
        ),
        "spread_printed": (
            "{lo}–{hi}× between attnref's repetitions and the {n} iterations kept of nanoGPT's "
            "output ({first}–{last}: {fastest}–{slowest} ms), another clock than its average's"
        ),
        "spread": "{lo}–{hi}× over attnref's repetitions against nanoGPT's average",
        "met": "met",
        "averages_only": (
            "not established: met by the averages only, not across the spread of attnref's runs "
            "against nanoGPT's iterations"
        ),
        "not_met": "not met",
        "times_nanogpt": (
            "attnref's graphed bf16 step trains at {ratio}× the tokens/s of nanoGPT's compiled "
            "`train.py` in the same run ({ours} against {theirs} ms a step, nanoGPT's the "
            "average of one run's iterations {first}–{last}; {spread}): the target of "
            "≥ {target}× is {verdict}."
        ),
        "q02_unjudged": (
            "Q02's default run did not run at {steps} steps here: its target (≤ {limit} s) is "
            "not judged."
        ),
        "ablation_unjudged": (
            "The ablation's three arms did not run at {steps} steps here: its target "
            "(≤ {limit} s) is not judged."
        ),
        "q02_took": (
            "Q02's default run ({steps} steps, evaluations included; best validation loss "
            "{best}, one seed, {precision}) took {wall} s: the target of ≤ {limit} s is "
            "{side}."
        ),
        "ablation_took": (
            "The ablation's three arms ({steps} steps each, evaluations included, one after the "
            "other) took {wall} s: the target of ≤ {limit} s is {side}."
        ),
        # nanoGPT's baby GPT both ways
        "stretch_not_gpu": (
            "This run was on {device}, not a GPU: the stretch target is not judged."
        ),
        "stretch_no_evals": (
            "nanoGPT's `train.py` or attnref's preset has no evaluations in this run: the "
            "stretch target is not judged."
        ),
        "neither": "not met: neither reached it in that run",
        "did_not_reach": "did not reach it (best {best}, step {step})",
        "reached_at": "reached it at step {step}, {seconds} s into its run",
        "stretch": (
            "Val ≤ {target} in the same run: attnref's preset (seed {seed}) {ours}; nanoGPT's "
            "`train.py` {theirs}. The stretch target (≤ {target} in less wall time than "
            "nanoGPT's `train.py` in the same run) is {verdict}."
        ),
        "seed_hit": "seed {seed} at step {step}, {seconds} s",
        "hits": "; ",
        "same_gpu": "the same kind of GPU, {gpu}",
        "other_gpu": "another GPU",
        "later_one": " (seed {seeds} in a later run on {kind})",
        "later_many": " (seeds {seeds} in a later run on {kind})",
        "estimators": (
            "attnref's fixed evaluation batches against its whole validation split; nanoGPT's "
            "figure is its own estimate, on fresh batches"
        ),
        "outside_small": (
            "outside that spread by {outside}, no more than the {gap} by which two estimates "
            "of one checkpoint differ ({how})"
        ),
        "within": (
            "within that spread (two estimates of one checkpoint differ by up to {gap}: {how})"
        ),
        "not_told_apart": "{where}: the two are not told apart.",
        "outside_large": (
            "outside that spread by {outside}, more than the {gap} by which two estimates of "
            "one checkpoint differ ({how}): nanoGPT's is {side}."
        ),
        "lower": "lower",
        "higher": "higher",
        "seeds": (
            "Over {n} seeds{whose}, attnref's best validation loss is {lo}–{hi} (mean {mean}); "
            "{hit} of {n} reached {target}{reached}. nanoGPT's best, {theirs} (its one seed), "
            "is {spread}"
        ),
        "better_attnref": "attnref's best is lower by {margin}, more than the {gap}",
        "better_nanogpt": "nanoGPT's best is lower by {margin}, more than the {gap}",
        "bests_differ": "their bests differ by {margin}, ",
        "unknown_gap": "an unknown difference",
        "gap_bound": "no more than the {gap}",
        "quality_same": ": not told apart in quality",
        "level": (
            "To the level both reached in that run, each on its own estimate (val ≤ {level}; "
            "{quality} between two estimates of attnref's checkpoint, its fixed batches against "
            "its whole validation split{same}), attnref took {ours} s (step {step}; {launch} s "
            "from its process's launch, its imports and the data read included) and nanoGPT's "
            "`train.py` {theirs} s from its launch (step {their_step}; {start} s of it before "
            "its first iteration: start, compilation, the evaluation at step 0): {ratio} (one "
            "run each: no spread)."
        ),
        "nanogpt_longer": "from launch, nanoGPT's took {r}× as long as attnref's",
        "attnref_longer": "from launch, attnref's took {r}× as long as nanoGPT's",
        # N seeds at once
        "separate": "separate",
        "per_seed_step": "N = {n}: {said} per seed-step.",
        "not_bitwise": (
            "The same runs? Not to the bit: after the run the weights of the two differ by up "
            "to {diff} (other kernels, batched, sum in another order)."
        ),
        "bitwise": "The two give the same weights to the bit.",
    },
    "pt": {
        "unnamed": "um dispositivo sem nome",
        "not_gpu": "Esta execução foi em {device}, não numa GPU: as metas de GPU não são julgadas.",
        "against": "{a} {ma} ms contra {b} {mb} ms",
        "overlap": " (as faixas se sobrepõem: nenhuma diferença mensurável)",
        "faster": ": {r}× mais rápido (execuções {lo}–{hi})",
        "slower": ": {r}× mais lento (execuções {lo}–{hi})",
        "pair": "{big} e {small} ms, lote {batch} e {other}",
        "launch_bound": (
            "Eager em fp32, um passo de lote {batch} leva o mesmo tempo que um de lote {other} "
            "({pair}; as faixas se sobrepõem): o passo é limitado pelo lançamento dos seus "
            "kernels, não pela sua aritmética."
        ),
        "differ": (
            "Eager em fp32, um passo de lote {batch} e um de lote {other} diferem além das suas "
            "faixas ({pair})."
        ),
        "graph": (
            "No lote {batch}, um grafo CUDA por passo contra o mesmo passo eager: {fp32}; {bf16}."
        ),
        "precision": "bf16 contra fp32: {graph} com o grafo; eager, {eager}.",
        "not_compiled": "não foi compilado",
        "not_measured": "não foi medido",
        "nanogpt_unjudged": (
            "O `train.py` do nanoGPT no lote {batch} {why} nesta execução: a meta (≥ {target}× "
            "os tokens/s dele compilado) não é julgada."
        ),
        "spread_printed": (
            "{lo}–{hi}× entre as repetições do attnref e as {n} iterações guardadas da saída "
            "do nanoGPT ({first}–{last}: {fastest}–{slowest} ms), outro relógio que o da sua "
            "média"
        ),
        "spread": "{lo}–{hi}× nas repetições do attnref contra a média do nanoGPT",
        "met": "foi cumprida",
        "averages_only": (
            "não está estabelecida: cumprida só pelas médias, não através da dispersão das "
            "execuções do attnref contra as iterações do nanoGPT"
        ),
        "not_met": "não foi cumprida",
        "times_nanogpt": (
            "O passo do attnref em grafo e bf16 treina a {ratio}× os tokens/s do `train.py` "
            "compilado do nanoGPT na mesma execução ({ours} contra {theirs} ms por passo, o do "
            "nanoGPT a média das iterações {first}–{last} de uma execução; {spread}): a meta de "
            "≥ {target}× {verdict}."
        ),
        "q02_unjudged": (
            "A execução padrão da Q02 não rodou com {steps} passos aqui: a sua meta "
            "(≤ {limit} s) não é julgada."
        ),
        "ablation_unjudged": (
            "Os três braços da ablação não rodaram com {steps} passos aqui: a sua meta "
            "(≤ {limit} s) não é julgada."
        ),
        "q02_took": (
            "A execução padrão da Q02 ({steps} passos, avaliações incluídas; melhor perda de "
            "validação {best}, uma semente, {precision}) levou {wall} s: a meta de ≤ {limit} s "
            "{side}."
        ),
        "ablation_took": (
            "Os três braços da ablação ({steps} passos cada, avaliações incluídas, um depois do "
            "outro) levaram {wall} s: a meta de ≤ {limit} s {side}."
        ),
        "stretch_not_gpu": (
            "Esta execução foi em {device}, não numa GPU: a meta ambiciosa não é julgada."
        ),
        "stretch_no_evals": (
            "O `train.py` do nanoGPT ou o preset do attnref não tem avaliações nesta execução: "
            "a meta ambiciosa não é julgada."
        ),
        "neither": "não foi cumprida: nenhum dos dois a alcançou nessa execução",
        "did_not_reach": "não a alcançou (melhor {best}, passo {step})",
        "reached_at": "a alcançou no passo {step}, {seconds} s depois do início da sua execução",
        "stretch": (
            "Validação ≤ {target} na mesma execução: o preset do attnref (semente {seed}) "
            "{ours}; o `train.py` do nanoGPT {theirs}. A meta ambiciosa (≤ {target} em menos "
            "tempo de relógio que o `train.py` do nanoGPT na mesma execução) {verdict}."
        ),
        "seed_hit": "semente {seed} no passo {step}, {seconds} s",
        "hits": "; ",
        "same_gpu": "no mesmo tipo de GPU, {gpu}",
        "other_gpu": "em outra GPU",
        "later_one": " (semente {seeds} numa execução posterior, {kind})",
        "later_many": " (sementes {seeds} numa execução posterior, {kind})",
        "estimators": (
            "os lotes fixos de avaliação do attnref contra o seu conjunto de validação inteiro; "
            "o número do nanoGPT é a sua própria estimativa, em lotes novos"
        ),
        "outside_small": (
            "fora dessa dispersão por {outside}, não mais que os {gap} pelos quais diferem "
            "duas estimativas de um mesmo checkpoint ({how})"
        ),
        "within": (
            "dentro dessa dispersão (duas estimativas de um mesmo checkpoint diferem em até "
            "{gap}: {how})"
        ),
        "not_told_apart": "{where}: os dois não são distinguidos.",
        "outside_large": (
            "fora dessa dispersão por {outside}, mais que os {gap} pelos quais diferem duas "
            "estimativas de um mesmo checkpoint ({how}): a do nanoGPT é {side}."
        ),
        "lower": "menor",
        "higher": "maior",
        "seeds": (
            "Em {n} sementes{whose}, a melhor perda de validação do attnref é {lo}–{hi} (média "
            "{mean}); {target} alcançado em {hit} de {n}{reached}. A melhor do nanoGPT, "
            "{theirs} (a sua única semente), está {spread}"
        ),
        "better_attnref": "a melhor do attnref é menor por {margin}, mais que os {gap}",
        "better_nanogpt": "a melhor do nanoGPT é menor por {margin}, mais que os {gap}",
        "bests_differ": "as melhores diferem por {margin}, ",
        "unknown_gap": "uma diferença desconhecida",
        "gap_bound": "não mais que os {gap}",
        "quality_same": ": não distinguidos em qualidade",
        "level": (
            "Até o nível que os dois alcançaram nessa execução, cada um pela sua própria "
            "estimativa (validação ≤ {level}; {quality} entre duas estimativas do checkpoint do "
            "attnref, os seus lotes fixos contra o seu conjunto de validação inteiro{same}), o "
            "attnref levou {ours} s (passo {step}; {launch} s desde o lançamento do seu "
            "processo, incluídos os imports e a leitura dos dados) e o `train.py` do nanoGPT "
            "{theirs} s desde o seu lançamento (passo {their_step}; {start} s disso antes da "
            "sua primeira iteração: a partida, a compilação, a avaliação no passo 0): {ratio} "
            "(uma execução cada: sem dispersão)."
        ),
        "nanogpt_longer": "desde o lançamento, o do nanoGPT levou {r}× o tempo do attnref",
        "attnref_longer": "desde o lançamento, o do attnref levou {r}× o tempo do nanoGPT",
        "separate": "separadas",
        "per_seed_step": "N = {n}: {said} por passo de cada semente.",
        "not_bitwise": (
            "As mesmas execuções? Não bit a bit: depois da execução, os pesos das duas diferem "
            "em até {diff} (outros kernels, em lote, somam em outra ordem)."
        ),
        "bitwise": "As duas dão os mesmos pesos, bit a bit.",
    },
}
