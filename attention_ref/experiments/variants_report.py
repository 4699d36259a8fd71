r"""The variants sweep in words: Q02's model with one change of today's attention per arm.

``attnref ablation --arms variants`` trains Q02's model as it is (``mha``) and with one change
each: one K/V head for both query heads (``mqa``, grouped-query attention at its extreme),
rotary positions instead of the learned position table (``rope``), a sliding window (``window``).
Pure (no MLflow, no torch): rows (`ArmRow`, the arm's name in ``attention``, its options in
``config``) -> facts (`variant_facts`) -> a table and sentences, each number computed here.

What an arm costs is read off its options: the parameters from the run, the KV cache a
generated character keeps from the shape,

$$
\text{bytes per character} = 2 \cdot L \cdot g \cdot d_k \cdot 4
$$

(K and V, every layer $L$, $g$ K/V heads of width $d_k$, fp32).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attention_ref.experiments.arm_table import arms_table
from attention_ref.experiments.findings import (
    BASELINE_TOLERANCE,
    COMPARED_KEYS,
    RECORDED_BEFORE,
    ArmRow,
    ArmSeeds,
    arm_seeds,
    comparability,
)
from attention_ref.experiments.report_words import qualifier
from attention_ref.experiments.spread import Gap, compare, overlap, ratio_spread
from attention_ref.render import said, thousands

#: the arms and what each changes, as a sentence says it, per language (``{window_less}``: the
#: characters before a character that its window sees)
VARIANT_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "mha": "Q02's model: multi-head attention, learned positions, the causal mask",
        "mqa": "one K/V head shared by the query heads (multi-query attention)",
        "rope": "rotary positions (RoPE) instead of the learned position table",
        "window": "a sliding window: each character sees itself and the {window_less} before it",
    },
    "pt": {
        "mha": "o modelo da Q02: atenção multi-cabeça, posições aprendidas, a máscara causal",
        "mqa": "uma só cabeça K/V para as cabeças de consulta (atenção multi-consulta)",
        "rope": "posições rotativas (RoPE) no lugar da tabela de posições aprendida",
        "window": "uma janela deslizante: cada caractere vê a si mesmo e os {window_less} "
        "anteriores",
    },
}
#: the table's and the sentences' words, per language (the same blanks in each)
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "arm": "arm",
        "no_base": "no {base} arm finished: nothing to compare with",
        "what": "what changes",
        "cache": "KV cache (bytes per character)",
        "against": "against {base}",
        "same_one": "Every arm has the same seed, number of steps, data, model shape (but for the "
        "variant), schedule and evaluation; each is one run of that seed, so a difference is one "
        "measurement, not an average over seeds.",
        "same_many": "Every arm has the same seeds ({seeds}), number of steps, data, model shape "
        "(but for the variant), schedule and evaluation; a figure is the mean over an arm's "
        "seeds, and an arm is called above or below {base} only where the gap exceeds their "
        "spread (their 95 % t-intervals, or with 2 seeds their ranges, do not overlap).",
        "differ": "The arms do not share {keys}: their differences are not the variants' alone.",
        "fewer": "{n} fewer parameters ({share})",
        "more": "{n} more parameters ({share})",
        "same_params": "the same parameters",
        "smaller": "a KV cache {ratio} times smaller per character",
        "same_cache": "the same KV cache per character",
        "window_cache": " (a window of {w} could keep only {w} keys, {small} bytes against "
        "{whole} at {block} characters, but the model's cache keeps every key)",
        "same_loss": "the same as {base}'s to 4 decimals",
        "above": "{gap} nats above {base}'s {base_loss}",
        "below": "{gap} nats below {base}'s {base_loss}",
        "mean_loss": "mean best validation loss",
        "loss": "best validation loss",
        "sentence": "{name}, {what}: {size}, {cache}; {label} {loss}, {than}, {speed}.",
        "speed": "at {ratio} {base}'s tokens/s{overlap}",
        "one_run": "{ratio}× (one run each: no spread)",
        "runs": "{ratio}× (of the medians; runs {lo}–{hi})",
        "overlap": "; the ranges overlap: no measurable difference",
        "not_compared": "its tokens/s not compared with {base}'s (trained in {mine} against "
        "{theirs})",
        "unrecorded": "unrecorded",
    },
    "pt": {
        "arm": "braço",
        "no_base": "nenhum braço {base} terminou: nada com que comparar",
        "what": "o que muda",
        "cache": "cache KV (bytes por caractere)",
        "against": "contra {base}",
        "same_one": "Todos os braços têm a mesma semente, o mesmo número de passos, os mesmos "
        "dados, a mesma forma do modelo (fora a variante), o mesmo cronograma e a mesma "
        "avaliação; cada um é uma execução dessa semente, então uma diferença é uma medida, não "
        "uma média sobre sementes.",
        "same_many": "Todos os braços têm as mesmas sementes ({seeds}), o mesmo número de "
        "passos, os mesmos dados, a mesma forma do modelo (fora a variante), o mesmo cronograma "
        "e a mesma avaliação; um número é a média sobre as sementes de um braço, e um braço só "
        "é dito acima ou abaixo de {base} quando a diferença vai além da dispersão das "
        "sementes (os intervalos t de 95 %, ou com 2 sementes as faixas mín–máx, não se "
        "sobrepõem).",
        "differ": "Os braços não têm em comum {keys}: as suas diferenças não são só das variantes.",
        "fewer": "{n} parâmetros a menos ({share})",
        "more": "{n} parâmetros a mais ({share})",
        "same_params": "os mesmos parâmetros",
        "smaller": "um cache KV {ratio} vezes menor por caractere",
        "same_cache": "o mesmo cache KV por caractere",
        "window_cache": " (uma janela de {w} poderia guardar só {w} chaves, {small} bytes contra "
        "{whole} com {block} caracteres, mas o cache do modelo guarda todas as chaves)",
        "same_loss": "a mesma de {base} com 4 casas",
        "above": "{gap} nats acima dos {base_loss} de {base}",
        "below": "{gap} nats abaixo dos {base_loss} de {base}",
        "mean_loss": "melhor perda de validação média",
        "loss": "melhor perda de validação",
        "sentence": "{name}, {what}: {size}, {cache}; {label} {loss}, {than}, {speed}.",
        "speed": "a {ratio} os tokens/s de {base}{overlap}",
        "one_run": "{ratio}× (uma execução cada: sem dispersão)",
        "runs": "{ratio}× (das medianas; execuções {lo}–{hi})",
        "overlap": "; as faixas se sobrepõem: nenhuma diferença mensurável",
        "not_compared": "os seus tokens/s não são comparados com os de {base} (treinado em "
        "{mine} contra {theirs})",
        "unrecorded": "não registrada",
    },
}
#: the arm every other is compared with
BASE = "mha"
#: bytes of one number of the KV cache (fp32)
CACHE_DTYPE_BYTES = 4


def kv_cache_bytes(config: Mapping[str, str]) -> int:
    """The KV cache of one generated character, in bytes: ``2 L g d_k · 4`` (K and V, fp32)."""
    n_embd, n_head = int(config["n_embd"]), int(config["n_head"])
    g = int(config.get("kv_heads", RECORDED_BEFORE["kv_heads"])) or n_head
    return 2 * int(config["n_layer"]) * g * (n_embd // n_head) * CACHE_DTYPE_BYTES


@dataclass(frozen=True)
class VariantFact:
    """One arm against the base arm (``mha``)."""

    name: str
    n_params: int
    params_change: int  # against the base arm
    cache_bytes: int
    cache_ratio: float  # the base arm's cache / this arm's
    best_val_loss: float  # the mean over the arm's seeds
    val_change: float  # against the base arm, nats per character (means)
    tokens_per_sec: float
    #: the arm's best validation loss against the base arm's over their seeds (`compare`; one
    #: seed each: by `BASELINE_TOLERANCE`); None for the base arm itself
    gap: Gap | None = None
    seeds: ArmSeeds | None = None  # the arm's runs

    def what(self, lang: str = "en") -> str:
        """What the arm changes, in ``lang``'s words (`VARIANT_WORDS`)."""
        assert self.seeds is not None
        window = int(self.seeds.mean_row.config.get("window", 0))
        words = VARIANT_WORDS[lang].get(self.name, self.name)
        return words.format(window_less=max(window - 1, 0))


def speed_against(arm: ArmSeeds, base: ArmSeeds, lang: str = "en") -> str:
    """The arm's tokens/s against the base arm's, seed by seed, with the spread
    (`attention_ref.experiments.spread.ratio_spread`), and "no measurable difference"
    where the ranges of several runs overlap; none where their precisions differ: a speed is
    compared like with like."""
    say = WORDS[lang]
    if arm.precision != base.precision:
        return say["not_compared"].format(
            base=BASE,
            mine=arm.precision or say["unrecorded"],
            theirs=base.precision or say["unrecorded"],
        )
    mine, theirs = ([r.tokens_per_sec for r in g.rows] for g in (arm, base))
    mid, lo, hi = ratio_spread(mine, theirs)
    same = ""
    if arm.n == base.n == 1:
        ratio = say["one_run"].format(ratio=said(mid, ".2f", lang))
    else:
        ratio = say["runs"].format(
            ratio=said(mid, ".2f", lang), lo=said(lo, ".2f", lang), hi=said(hi, ".2f", lang)
        )
        same = say["overlap"] if overlap(mine, theirs) else ""
    return say["speed"].format(ratio=ratio, base=BASE, overlap=same)


def _groups(rows: Sequence[ArmRow]) -> dict[str, ArmSeeds]:
    return {g.attention: g for g in arm_seeds(rows)}


def variant_facts(rows: Sequence[ArmRow]) -> list[VariantFact]:
    """Each arm's facts against the base arm; ``ValueError`` without a base arm. An arm of
    several seeds (several rows of one name): the means over them, and `VariantFact.gap`
    says whether its difference from the base arm exceeds their spread."""
    groups = _groups(rows)
    by_name = {a: g.mean_row for a, g in groups.items()}
    if BASE not in by_name:
        raise ValueError(f"the variants sweep needs its {BASE!r} arm to compare with")
    base = by_name[BASE]
    base_cache = kv_cache_bytes(base.config)
    facts = []
    for r in by_name.values():
        g = groups[r.attention]
        cache = kv_cache_bytes(r.config)
        facts.append(
            VariantFact(
                r.attention,
                r.n_params,
                r.n_params - base.n_params,
                cache,
                base_cache / cache,
                r.best_val_loss,
                r.best_val_loss - base.best_val_loss,
                r.tokens_per_sec,
                None
                if r.attention == BASE
                else compare(g.best, groups[BASE].best, BASELINE_TOLERANCE),
                g,
            )
        )
    return facts


def variants_table(rows: Sequence[ArmRow], lang: str = "en") -> str:
    """The arms side by side (markdown, `attention_ref.experiments.arm_table.arms_table`), in
    ``lang``'s words and numbers: each arm's name and what it changes first, its KV cache after
    its parameters, its best validation loss against ``mha``'s and its tokens/s last."""
    say = WORDS[lang]
    facts = {f.name: f for f in variant_facts(rows)}

    def change(g: ArmSeeds) -> str:
        return "" if g.attention == BASE else said(facts[g.attention].val_change, "+.4f", lang)

    lead = [
        (say["arm"], lambda g: g.attention),
        (say["what"], lambda g: facts[g.attention].what(lang)),
    ]
    middle = [(say["cache"], lambda g: thousands(facts[g.attention].cache_bytes, lang))]
    tail = [
        (say["against"].format(base=BASE), change),
        ("tokens/s", lambda g: thousands(round(facts[g.attention].tokens_per_sec), lang)),
    ]
    groups = [f.seeds for f in facts.values() if f.seeds is not None]
    return "\n".join(arms_table(groups, lang, lead=lead, middle=middle, tail=tail)) + "\n"


def _first_sentence(groups: Mapping[str, ArmSeeds], lang: str) -> str:
    """What the arms share, only as far as their rows record it."""
    say = WORDS[lang]
    means = [g.mean_row for g in groups.values()]
    shared = comparability(means, [k for k in COMPARED_KEYS if k not in tuple(RECORDED_BEFORE)])
    if not shared.comparable:
        return say["differ"].format(keys=", ".join(sorted({*shared.differ, *shared.unknown})))
    if max(g.n for g in groups.values()) == 1:
        return say["same_one"]
    return say["same_many"].format(seeds=means[0].config.get("seed"), base=BASE)


def variants_sentences(rows: Sequence[ArmRow], lang: str = "en") -> list[str]:
    """What the arms share, then what each variant costs and changes, from the rows only, in
    ``lang``'s words (`WORDS`) and numbers."""
    say = WORDS[lang]
    groups = _groups(rows)
    n = max(g.n for g in groups.values())
    out = [_first_sentence(groups, lang)]
    facts = {f.name: f for f in variant_facts(rows)}
    base = facts[BASE]
    for f in facts.values():
        if f.name == BASE:
            continue
        share = said(abs(f.params_change) / base.n_params, ".1%", lang)
        count = thousands(abs(f.params_change), lang)
        size = (
            say["fewer" if f.params_change < 0 else "more"].format(n=count, share=share)
            if f.params_change
            else say["same_params"]
        )
        cache = (
            say["smaller"].format(ratio=said(f.cache_ratio, "g", lang))
            if f.cache_ratio > 1
            else say["same_cache"]
        )
        config = groups[f.name].mean_row.config
        window, block = int(config.get("window", 0)), int(config.get("block_size", 0))
        if 0 < window < block:
            cache += say["window_cache"].format(
                w=window,
                small=thousands(window * f.cache_bytes, lang),
                whole=thousands(block * f.cache_bytes, lang),
                block=block,
            )
        if round(f.val_change, 4) == 0:
            than = say["same_loss"].format(base=BASE)
        else:
            than = say["above" if f.val_change > 0 else "below"].format(
                gap=said(abs(f.val_change), ".4f", lang),
                base=BASE,
                base_loss=said(base.best_val_loss, ".4f", lang),
            )
        if f.gap is not None and not f.gap.one_seed:
            than += f" ({qualifier(f.gap, lang)})"  # the Q03 report's words for a spread
        out.append(
            say["sentence"].format(
                name=f.name,
                what=f.what(lang),
                size=size,
                cache=cache,
                label=say["mean_loss" if n > 1 else "loss"],
                loss=said(f.best_val_loss, ".4f", lang),
                than=than,
                speed=speed_against(groups[f.name], groups[BASE], lang),
            )
        )
    return out
