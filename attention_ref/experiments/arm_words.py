"""The words of Q03's arms, one table per language (`attention_ref.experiments.arm_paragraphs`).

Pure data. The paragraph of each arm is chosen from the facts of
`attention_ref.experiments.findings` by one function; these tables only say it, in English
and in Portuguese, with the same keys and the same fields in each (a test holds them equal).
"""

from __future__ import annotations

from typing import Final

ARMS: Final[dict[str, dict[str, str]]] = {
    "en": {
        # an arm's loss against the bigram baseline, the sign said in words (by `Side`'s values)
        "below": "{gap} nats below the bigram baseline",
        "above": "{gap} nats above the bigram baseline",
        "at": "at the bigram baseline ({gap} nats, within {tolerance})",
        # its validation curve
        "no_curve": "Its validation curve has fewer than two evaluations.",
        "early": "The curve levels off early: from step {step} of {last} the validation loss "
        "stays within {tolerance} of its final {final}.",
        "late": "The curve levels off only late: from step {step} of {last} the validation "
        "loss stays within {tolerance} of its final {final}.",
        "moving": "The curve has not levelled off: its last evaluation ({final} at step "
        "{last}) is more than {tolerance} from the one before.",
        # below the baseline: is context shown to be used?
        "beats_any": ", and below even the bigram table counted on the validation split "
        "itself ({fitted}), which no table P(next | current) beats there: {conclusion}.",
        "not_below_fitted": ", but not below the bigram table counted on the validation split "
        "({fitted}): these numbers alone do not show that it uses context.",
        "not_even_bigram": ": at these steps it has not learned even the bigram table.",
        # with attention (Q02)
        "mh": "* **With attention (Q02).** {text}",
        "mh_best": "The best validation loss is {best}",
        "mh_falls": "Validation loss falls from {first} at step {step} to {best}",
        "mh_flat": "Validation loss does not fall below its first evaluation ({first} at step "
        "{step}); the best is {best}",
        "mh_context": "the predictions use context, the previous characters of the block "
        "weighted by softmax(QKᵀ/√d_k + M)",
        "mh_at": ": at these steps it has learned no more than a model that sees one character "
        "can.",
        # without attention (Q03)
        "none": "* **Without attention (Q03).** {curve} {best} {why} {more}",
        "none_best": "The best validation loss is {best}, {where}",
        "none_at": ": the model has learned about as much as the bigram table of the training "
        "split.",
        "none_above": ": it has not yet learned the bigram table as well as counting it does.",
        "none_below": ": more than the {tolerance} that fixed batches explain. A model without "
        "attention should not get there; **look for context leaking into its predictions**",
        "none_leaks": ". It is even below the bigram table counted on the validation split "
        "({fitted}), which no model that sees one character can beat there: context leaks.",
        "why": "Without the attention sub-layer nothing moves information between positions: "
        "the MLP and the LayerNorms act on each position alone, so the prediction at position i "
        "is a function of character i and its position only, and the position inside a random "
        "window says nothing about the text. Such a model can at best learn the table "
        "P(next | current) of the training split, whose validation cross-entropy is the bigram "
        "baseline (on the whole split; measured on the fixed batches, a seed's figure can land "
        "a little below it).",
        "agree": "train ({train}) and validation ({val}) agree within {tolerance}",
        "differ": "train ({train}) and validation ({val}) differ by more than {tolerance}",
        "stuck": "More steps would not help: the curve has levelled off at the baseline and "
        "{agree}; the model is not under-trained, it is blind to context.",
        "still_moving": "Its curve is still moving and {agree}: these steps do not show where "
        "it stops.",
        "final": "Final {agree}.",
        # uniform attention
        "uniform": "* **Uniform attention.** {text}",
        "uniform_reaches": "Averaging, at each position, itself and every position before it "
        "with equal weights (no W_Q, W_K) reaches {best}, {where}",
        "uniform_context": "mixing context already helps",
        "uniform_at": ": at these steps mixing context has not helped.",
        "lower_one_seed": "Learned attention is {d} nats lower ({learned}): that difference is "
        "what learning *where to look* is worth here, on one seed.",
        "higher_one_seed": "It is {d} nats below learned attention ({learned}): at these steps "
        "equal weights beat learned ones, on one seed.",
        "at_one_seed": "It is within {tolerance} of learned attention ({learned}, {d}): at "
        "these steps learning where to look has not paid.",
        "lower": "Learned attention is {d} nats lower ({learned}), {qualifier}: that "
        "difference is what learning *where to look* is worth here.",
        "higher": "It is {d} nats below learned attention ({learned}), {qualifier}: at these "
        "steps equal weights beat learned ones.",
        "at_spread": "It is {d} nats from learned attention ({learned}), {qualifier}: these "
        "steps do not show that learning where to look pays.",
    },
    "pt": {
        "below": "{gap} nats abaixo da linha de base do bigrama",
        "above": "{gap} nats acima da linha de base do bigrama",
        "at": "na linha de base do bigrama ({gap} nats, dentro de {tolerance})",
        "no_curve": "A sua curva de validação tem menos de duas avaliações.",
        "early": "A curva se estabiliza cedo: a partir do passo {step} de {last}, a perda de "
        "validação fica a menos de {tolerance} do seu valor final {final}.",
        "late": "A curva só se estabiliza tarde: a partir do passo {step} de {last}, a perda "
        "de validação fica a menos de {tolerance} do seu valor final {final}.",
        "moving": "A curva ainda não se estabilizou: a sua última avaliação ({final} no passo "
        "{last}) está a mais de {tolerance} da anterior.",
        "beats_any": ", e abaixo até da tabela de bigramas contada na própria validação "
        "({fitted}), que nenhuma tabela P(próximo | atual) supera ali: {conclusion}.",
        "not_below_fitted": ", mas não abaixo da tabela de bigramas contada na validação "
        "({fitted}): só esses números não mostram que o contexto é usado.",
        "not_even_bigram": ": nesses passos não aprendeu nem a tabela de bigramas.",
        "mh": "* **Com atenção (Q02).** {text}",
        "mh_best": "A melhor perda de validação é {best}",
        "mh_falls": "A perda de validação cai de {first} no passo {step} para {best}",
        "mh_flat": "A perda de validação não cai abaixo da sua primeira avaliação ({first} no "
        "passo {step}); a melhor é {best}",
        "mh_context": "as previsões usam o contexto, os caracteres anteriores do bloco "
        "ponderados por softmax(QKᵀ/√d_k + M)",
        "mh_at": ": nesses passos não aprendeu mais do que consegue um modelo que vê um só "
        "caractere.",
        "none": "* **Sem atenção (Q03).** {curve} {best} {why} {more}",
        "none_best": "A melhor perda de validação é {best}, {where}",
        "none_at": ": o modelo aprendeu mais ou menos o mesmo que a tabela de bigramas do treino.",
        "none_above": ": ainda não aprendeu a tabela de bigramas tão bem quanto contá-la.",
        "none_below": ": mais do que os {tolerance} que os lotes fixos explicam. Um modelo sem "
        "atenção não deveria chegar lá; **procure um vazamento de contexto nas suas previsões**",
        "none_leaks": ". Está abaixo até da tabela de bigramas contada na validação "
        "({fitted}), que nenhum modelo que vê um só caractere supera ali: o contexto vaza.",
        "why": "Sem a subcamada de atenção nada move informação entre posições: o MLP e as "
        "LayerNorms agem em cada posição isoladamente, então a previsão na posição i é função "
        "só do caractere i e da sua posição, e a posição dentro de uma janela aleatória nada "
        "diz sobre o texto. Um modelo assim pode no máximo aprender a tabela "
        "P(próximo | atual) do treino, cuja entropia cruzada na validação é a linha de base do "
        "bigrama (em todo o conjunto; medido nos lotes fixos, o valor de uma semente pode ficar "
        "um pouco abaixo dela).",
        "agree": "treino ({train}) e validação ({val}) concordam a menos de {tolerance}",
        "differ": "treino ({train}) e validação ({val}) diferem em mais de {tolerance}",
        "stuck": "Treinar mais não ajudaria: a curva se estabilizou na linha de base e "
        "{agree}; o modelo não está subtreinado, está cego ao contexto.",
        "still_moving": "A sua curva ainda se move e {agree}: esses passos não mostram onde "
        "ela para.",
        "final": "No fim, {agree}.",
        "uniform": "* **Atenção uniforme.** {text}",
        "uniform_reaches": "A média, em cada posição, dela mesma e de todas as posições "
        "anteriores, com pesos iguais (sem W_Q, W_K), chega a {best}, {where}",
        "uniform_context": "misturar contexto já ajuda",
        "uniform_at": ": nesses passos misturar contexto não ajudou.",
        "lower_one_seed": "A atenção aprendida fica {d} nats abaixo ({learned}): essa "
        "diferença é quanto vale aqui aprender *onde olhar*, numa semente.",
        "higher_one_seed": "Fica {d} nats abaixo da atenção aprendida ({learned}): nesses "
        "passos, pesos iguais vencem os aprendidos, numa semente.",
        "at_one_seed": "Fica a menos de {tolerance} da atenção aprendida ({learned}, {d}): "
        "nesses passos, aprender onde olhar não compensou.",
        "lower": "A atenção aprendida fica {d} nats abaixo ({learned}), {qualifier}: essa "
        "diferença é quanto vale aqui aprender *onde olhar*.",
        "higher": "Fica {d} nats abaixo da atenção aprendida ({learned}), {qualifier}: nesses "
        "passos, pesos iguais vencem os aprendidos.",
        "at_spread": "Fica a {d} nats da atenção aprendida ({learned}), {qualifier}: esses "
        "passos não mostram que aprender onde olhar compensa.",
    },
}
