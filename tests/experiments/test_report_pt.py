"""The Q03 report in Portuguese: the same function, the same facts, other words.

The rows are those of the English tests (`tests.experiments.test_report`,
`tests.experiments.test_seeds_report`), with the numbers on both sides of each threshold: where
they go the other way, the Portuguese sentence says the other thing, as the English one does.
Every table of words has the same keys and the same fields in each language, and every report
says the same numbers in both (written with a decimal comma and the SI's thousands space).
Pure: no MLflow, no torch.
"""

from __future__ import annotations

import re
import string
from decimal import Decimal
from typing import Any

import pytest

from attention_ref.experiments import arm_words, heads_words, report_words
from attention_ref.experiments.findings import (
    AGREEMENT_TOLERANCE,
    PLATEAU_TOLERANCE,
    ArmRow,
    Baselines,
    Part,
    Side,
)
from attention_ref.experiments.report import (
    arms_source,
    build_report,
    comparison_markdown,
    next_step,
    no_ablation_report,
)
from attention_ref.experiments.spread import compare, spread
from tests.experiments.test_report import (
    BASE,
    EPS,
    MH_PARTS,
    NONE_PARTS,
    TOL,
    arm,
    bullet,
    parted,
)
from tests.experiments.test_seeds_report import seeds

#: every table of the report's words, by name
TABLES: dict[str, dict[str, Any]] = {
    "REPORT": report_words.REPORT,
    "COLUMNS": report_words.COLUMNS,
    "PARTS": report_words.PARTS,
    "SPREAD": report_words.SPREAD,
    "COMPARABILITY_WORDS": report_words.COMPARABILITY_WORDS,
    "ARMS": arm_words.ARMS,
    "HEADS": heads_words.HEADS,
}
NNBSP = "\u202f"  # the SI's thousands space, as Portuguese writes `thousands`


def report(*arms: ArmRow, base: Baselines = BASE, lang: str = "pt") -> str:
    return build_report("e", arms_source("p", lang), arms, base, lang)


# ----------------------------------------------------------------- one table per language


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def unequal(table: dict[str, Any]) -> list[str]:
    """Where ``table``'s languages differ in their keys, in the fields of a phrase, or in the
    shape of a nested value (a tuple's length, which of its words are given)."""
    found: list[str] = []

    def walk(where: str, en: Any, pt: Any) -> None:
        if isinstance(en, dict) and isinstance(pt, dict):
            if set(en) != set(pt):
                found.append(f"{where}: keys {sorted(map(str, set(en) ^ set(pt)))}")
            for k in set(en) & set(pt):
                walk(f"{where}.{k}", en[k], pt[k])
        elif isinstance(en, tuple) and isinstance(pt, tuple):
            if [bool(e) for e in en] != [bool(p) for p in pt]:
                found.append(f"{where}: words given {en!r} / {pt!r}")
            for i, (e, p) in enumerate(zip(en, pt, strict=False)):
                walk(f"{where}[{i}]", e, p)
        elif isinstance(en, str) and isinstance(pt, str):
            if _fields(en) != _fields(pt):
                found.append(f"{where}: fields {sorted(_fields(en) ^ _fields(pt))}")
        else:
            found.append(f"{where}: {type(en).__name__} / {type(pt).__name__}")

    if set(table) != {"en", "pt"}:
        found.append(f"languages {sorted(table)}")
    walk("", table.get("en"), table.get("pt"))
    return found


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_table_has_the_same_keys_and_fields_in_each_language(name):
    assert unequal(TABLES[name]) == []


def test_the_judge_of_the_tables_finds_a_dropped_key_field_or_word():
    """The control: a Portuguese phrase that drops a number, a key left out, a word missing."""
    en = {"a": "x {n} y", "b": "z", "c": ("noun", "one", "")}
    assert unequal({"en": en, "pt": en}) == []
    assert unequal({"en": en, "pt": {**en, "a": "x y"}}) == [".a: fields ['n']"]
    assert unequal({"en": en, "pt": {"a": "x {n}", "c": en["c"]}}) == [": keys ['b']"]
    assert unequal({"en": en, "pt": {**en, "c": ("n", "", "")}})[0].startswith(".c: words")


# ------------------------------------------------------------- the same numbers, other words

EN_NUMBER = re.compile(r"(?<![\w.,])([-+]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\w)")
PT_NUMBER = re.compile(rf"(?<![\w.,{NNBSP}])([-+]?)(\d{{1,3}}(?:{NNBSP}\d{{3}})+|\d+)(,\d+)?(?!\w)")


def numbers(text: str, lang: str) -> list[Decimal]:
    """Every number a reader reads in ``text``, in order, as written in ``lang``."""
    pattern, group, point = (EN_NUMBER, ",", ".") if lang == "en" else (PT_NUMBER, NNBSP, ",")
    return [
        Decimal(sign + whole.replace(group, "") + (frac or "").replace(point, "."))
        for sign, whole, frac in pattern.findall(text)
    ]


def test_the_numbers_are_read_each_way():
    assert numbers("a 429,824 b 2.480 (+0.025), 1337, 1338 and 31%", "en") == [
        Decimal(429824),
        Decimal("2.480"),
        Decimal("+0.025"),
        Decimal(1337),
        Decimal(1338),
        Decimal(31),
    ]
    assert numbers(f"a 429{NNBSP}824 b 2,480 (+0,025), 1337, 1338 e 31%", "pt") == numbers(
        "a 429,824 b 2.480 (+0.025), 1337, 1338 and 31%", "en"
    )
    assert numbers("sha256 `86c4e6aa9db7…`, Q03, run-7a", "en") == []


CASES: dict[str, list[ArmRow]] = {
    "three arms": [arm("multihead", 1.58, 429_824), arm("none", 2.486), arm("uniform", 2.26)],
    "above the baseline": [arm("multihead", 2.553), arm("none", 2.48 + TOL + EPS)],
    "below even the fitted table": [arm("multihead", 2.2), arm("none", 2.37 - TOL - EPS)],
    "no clear best": [arm("multihead", 2.40), arm("uniform", 2.40 + TOL - EPS)],
    "parts recorded": [
        parted(arm("multihead", 1.6, 429_824, tokens_per_sec=39_000.0), MH_PARTS),
        parted(arm("none", 2.49, tokens_per_sec=66_000.0), NONE_PARTS),
    ],
    "seeds apart": [
        *seeds("multihead", [1.50, 1.51, 1.52]),
        *seeds("uniform", [2.20, 2.21, 2.22]),
    ],
    "seeds within": [*seeds("multihead", [1.46, 1.50, 1.54]), *seeds("uniform", [1.5, 1.54])],
    "not comparable": [arm("multihead", 2.4, steps=40, seed=1337), arm("none", 2.6, seed=7)],
    "one arm": [arm("multihead", 1.55)],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_portuguese_report_says_the_english_numbers_in_other_words(case):
    en, pt = report(*CASES[case], lang="en"), report(*CASES[case])
    assert numbers(pt, "pt") == numbers(en, "en") and numbers(en, "en")
    assert not re.search(r"\d\.\d", pt), "a decimal point in Portuguese"
    en_words = set(re.findall(r"[a-z]{4,}", en))
    assert len(set(re.findall(r"[a-z]{4,}", pt)) & en_words) < len(en_words) / 3


def test_the_english_report_is_the_one_of_before():
    """``lang`` defaults to English, and the source of an ablation's arms is said as before."""
    rows = CASES["three arms"]
    assert report(*rows, lang="en") == build_report("e", "ablation run `p`", rows, BASE)
    assert arms_source(None) == "the latest finished single run of each mode"
    assert arms_source(None, "pt") == "a última execução avulsa terminada de cada modo"


# ------------------------------------------------------- each threshold, in Portuguese


@pytest.mark.parametrize(
    ("best", "says", "never"),
    [
        (
            2.553,
            "0,073 nats acima da linha de base do bigrama: nesses passos não aprendeu nem "
            "a tabela de bigramas",
            "abaixo",
        ),
        (
            2.48 + TOL - EPS,
            "na linha de base do bigrama (+0,025 nats, dentro de 0,03): nesses "
            "passos não aprendeu mais do que",
            "abaixo da linha",
        ),
        (
            2.48 - TOL - EPS,
            "0,035 nats abaixo da linha de base do bigrama, mas não abaixo da "
            "tabela de bigramas contada na validação (2,370): só esses números não mostram",
            "usam o contexto",
        ),
        (
            2.37 - TOL - EPS,
            "nats abaixo da linha de base do bigrama, e abaixo até da tabela de "
            "bigramas contada na própria validação (2,370)",
            "não mostram",
        ),
    ],
)
def test_the_sentence_on_attention_follows_the_side_of_the_baseline(best, says, never):
    line = bullet(report(arm("multihead", best)), "Com atenção")
    assert says in line and never not in line


@pytest.mark.parametrize(
    ("best", "says", "never"),
    [
        (
            2.489,
            "chega a 2,489, na linha de base do bigrama (+0,009 nats, dentro de 0,03): "
            "nesses passos misturar contexto não ajudou",
            "abaixo",
        ),
        (
            2.48 - TOL - EPS,
            "0,035 nats abaixo da linha de base do bigrama, mas não abaixo",
            "já ajuda",
        ),
        (
            2.30,
            "0,180 nats abaixo da linha de base do bigrama, e abaixo até da tabela de "
            "bigramas contada na própria validação (2,370), que nenhuma tabela P(próximo | atual) "
            "supera ali: misturar contexto já ajuda",
            "não abaixo",
        ),
        (
            2.48 + TOL + EPS,
            "0,035 nats acima da linha de base do bigrama: nesses passos não "
            "aprendeu nem a tabela de bigramas",
            "ajuda",
        ),
    ],
)
def test_the_sentence_on_uniform_attention_follows_the_numbers(best, says, never):
    line = bullet(report(arm("uniform", best)), "Atenção uniforme")
    assert says in line and never not in line


@pytest.mark.parametrize(
    ("learned", "says"),
    [
        (
            2.30 - TOL - EPS,
            "A atenção aprendida fica 0,035 nats abaixo (2,265): essa diferença "
            "é quanto vale aqui aprender *onde olhar*, numa semente.",
        ),
        (
            2.30 - TOL + EPS,
            "Fica a menos de 0,03 da atenção aprendida (2,275, +0,025): nesses "
            "passos, aprender onde olhar não compensou.",
        ),
        (
            2.30 + TOL + EPS,
            "Fica 0,035 nats abaixo da atenção aprendida (2,335): nesses passos, "
            "pesos iguais vencem os aprendidos, numa semente.",
        ),
    ],
)
def test_uniform_against_learned_attention_follows_the_numbers(learned, says):
    line = bullet(report(arm("multihead", learned), arm("uniform", 2.30)), "Atenção uniforme")
    assert says in line
    assert ("quanto vale" in line) is (learned < 2.30 - TOL)


@pytest.mark.parametrize(
    ("gap", "leak", "learned"),
    [
        (-TOL - EPS, True, False),
        (-TOL + EPS, False, True),
        (TOL - EPS, False, True),
        (TOL + EPS, False, False),
    ],
)
def test_the_leak_of_context_warning_follows_the_numbers(gap, leak, learned):
    line = bullet(report(arm("none", BASE.bigram + gap)), "Sem atenção")
    assert ("procure um vazamento de contexto" in line) is leak
    assert ("aprendeu mais ou menos o mesmo que a tabela" in line) is learned
    assert ("ainda não aprendeu a tabela de bigramas" in line) is (gap > TOL)
    assert "o contexto vaza." not in line
    below = bullet(report(arm("none", 2.37 - TOL - EPS)), "Sem atenção")
    assert "procure um vazamento" in below and "o contexto vaza." in below


@pytest.mark.parametrize(
    ("curve", "early", "levelled"),
    [
        ([(0, 3.0), (250, 2.5), (500, 2.49), (750, 2.49), (1000, 2.49)], True, True),
        ([(0, 3.0), (250, 2.7), (500, 2.6), (750, 2.5), (1000, 2.49)], False, True),
        ([(0, 3.0), (500, 2.6), (1000, 2.5 - PLATEAU_TOLERANCE - EPS)], False, False),
    ],
)
def test_the_plateau_words_follow_the_curve(curve, early, levelled):
    line = bullet(report(arm("none", 2.49, curve=curve)), "Sem atenção")
    assert ("A curva se estabiliza cedo" in line) is early
    assert ("A curva só se estabiliza tarde" in line) is (levelled and not early)
    assert ("A curva ainda não se estabilizou" in line) is (not levelled)
    assert ("Treinar mais não ajudaria" in line) is early
    assert ("esses passos não mostram onde ela para" in line) is (not levelled)


@pytest.mark.parametrize("apart", [AGREEMENT_TOLERANCE - EPS, AGREEMENT_TOLERANCE + EPS])
def test_more_steps_would_not_help_needs_train_and_validation_to_agree(apart):
    line = bullet(report(arm("none", 2.49, train=2.49 - apart)), "Sem atenção")
    agree = apart <= AGREEMENT_TOLERANCE
    assert ("Treinar mais não ajudaria" in line) is agree
    assert ("concordam a menos de 0,05" in line) is agree
    assert ("diferem em mais de 0,05" in line) is not agree


@pytest.mark.parametrize("apart", [TOL - EPS, TOL + EPS])
def test_the_best_arm_is_named_only_when_it_is_clearly_best(apart):
    text = report(arm("multihead", 2.40), arm("uniform", 2.40 + apart), arm("none", 2.49))
    clear = apart > TOL
    assert ("**Menor perda de validação: multihead** (2,400)" in text) is clear
    assert ("**Nenhum braço claramente melhor:** multihead (2,400) e uniform" in text) is not clear
    assert ("ficam a menos de 0,03 um do outro, numa semente." in text) is not clear


@pytest.mark.parametrize(
    ("none_tps", "none_best", "buys_back"),
    [(66_000.0, 2.49, True), (30_000.0, 2.49, False), (66_000.0, 2.48 + TOL + EPS, False)],
)
def test_speed_does_not_buy_back_context_only_when_the_numbers_say_so(
    none_tps, none_best, buys_back
):
    text = report(
        arm("multihead", 1.6, 429_824, tokens_per_sec=39_000.0),
        arm("none", none_best, tokens_per_sec=none_tps),
    )
    line = bullet(text, "Custo")
    assert ("a velocidade não compra de volta o contexto" in line) is buys_back
    assert ("× mais rápido" in line) is (none_tps > 39_000.0)
    assert ("não é mais rápido" in line) is (none_tps <= 39_000.0)
    fast = f"{round(none_tps):,}".replace(",", NNBSP)
    assert f"{fast} tokens/s contra 39{NNBSP}000" in line


def test_the_parameters_of_attention_are_said_as_the_breakdowns_record_them():
    mh, no = parted(arm("multihead", 1.6, 429_824), MH_PARTS), parted(arm("none", 2.49), NONE_PARTS)
    assert (
        f"A atenção tem 132{NNBSP}096 dos 429{NNBSP}824 parâmetros (31%); os braços diferem em "
        f"132{NNBSP}608: 132{NNBSP}096 nas subcamadas de atenção e 512 na LayerNorm antes de "
        "cada subcamada de atenção;" in bullet(report(mh, no), "Custo")
    )
    whole = parted(arm("multihead", 1.6, 429_824 - 512), {**MH_PARTS, Part.ATTENTION_NORM: 0})
    assert ": toda a diferença entre os braços;" in bullet(report(whole, no), "Custo")
    other = bullet(report(mh, arm("none", 2.49)), "Custo")
    assert "(as partes do outro braço não estão registradas)" in other
    unparted = bullet(report(arm("multihead", 1.6, 429_824), arm("none", 2.49)), "Custo")
    assert (
        f"O modelo com atenção tem 429{NNBSP}824 parâmetros, sem ela 297{NNBSP}216; quais deles "
        "são atenção não está registrado" in unparted
    )
    assert "A atenção tem" not in unparted


def test_arms_over_seeds_are_ordered_only_beyond_their_spread():
    apart = report(*CASES["seeds apart"])
    assert bullet(apart, "Menor perda de validação: multihead").endswith(
        "0,700 nats abaixo do seguinte (uniform, 2,210), além da dispersão de 3 sementes."
    )
    assert "Cada braço foi treinado em 3 sementes (multihead 7, 8, 9, uniform 7, 8, 9)" in apart
    assert "Execuções: multihead `multihead-7` (semente 7), `multihead-8` (semente 8)" in apart
    within = report(*seeds("multihead", [1.46, 1.50, 1.54]), *seeds("uniform", [1.50, 1.54, 1.58]))
    assert bullet(within, "Nenhum braço claramente melhor") == (
        "* **Nenhum braço claramente melhor:** multihead (1,500) e uniform (1,540) ficam dentro "
        "da dispersão de 3 sementes."
    )
    line = bullet(within, "Atenção uniforme")
    assert "Fica a +0,040 nats da atenção aprendida (1,500), dentro da dispersão de 3" in line
    two = report(*seeds("multihead", [1.50, 1.52]), *seeds("uniform", [1.56, 1.58, 1.60]))
    assert "além da dispersão de 3 e 2 sementes" in two


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1.50, 1.52], [1.53, 1.55]),
        ([1.50, 1.54], [1.53, 1.55]),
        ([1.5], [1.54]),
        ([1.5], [1.52]),
        ([1.500, 1.501, 1.502], [1.530, 1.531]),
        ([1.50, 1.51, 1.52], [1.53, 1.54, 1.55]),
    ],
)
def test_the_order_of_two_arms_rests_on_the_same_words_in_each_language(a, b):
    g = compare(spread(a), spread(b), TOL)
    assert report_words.qualifier(g, "en") == g.qualifier()
    pt = report_words.qualifier(g, "pt")
    assert pt.endswith("numa semente") is g.one_seed
    assert ("a menos de" in pt or "dentro da" in pt) is (g.side == Side.AT)


def test_the_reference_points_and_the_table_in_portuguese():
    text = report(arm("none", 2.5))
    assert "ln 65 = 4,174; só as frequências dos caracteres (unigrama), 3,347" in text
    assert "a **linha de base do bigrama**, 2,480" in text and "(suavização add-one)" in text
    assert "Não é um limite inferior: a tabela contada na própria validação dá 2,370." in text
    higher = report(arm("none", 2.5), base=Baselines(65, 3.347, 2.48, bigram_fitted_on_val=2.49))
    assert "limite inferior" not in higher and "validação dá 2,490." in higher
    assert "(suavização add-0,5)" in report(arm("none", 2.5), base=Baselines(65, 3.3, 2.48, 0.5))
    md = comparison_markdown([arm("multihead", 1.5, 429_824), arm("none", 2.5)], 2.48, "pt")
    assert md.splitlines()[0] == (
        "| atenção | parâmetros | melhor perda de validação | perda final de validação | "
        "perda final de treino | tokens/s | tempo (s) | passos |"
    )
    assert f"| multihead | 429{NNBSP}824 | 1,5000 | 1,5000 | 1,5000 | 40{NNBSP}000 | 100 |" in md
    assert md.rstrip().endswith("contado no treino): 2,4800 nats")
    several = comparison_markdown([*seeds("multihead", [1.5, 1.52]), arm("none", 2.5)], 2.48, "pt")
    assert "| sementes | parâmetros | melhor perda de validação (média) | mín.–máx. |" in several
    assert "| 1,5100 | 1,5000–1,5200 | – |" in several
    assert "médias sobre as suas 1 e 2 sementes" in several


def test_what_q03_still_needs_is_said_in_portuguese():
    alone = report(arm("multihead", 1.55))
    assert "**Para responder à Q03**, o experimento precisa do mesmo modelo sem atenção" in alone
    assert "do mesmo modelo com atenção: `attnref train`" in report(arm("none", 2.48))
    assert "Para responder" not in report(arm("multihead", 1.55), arm("none", 2.48))
    assert next_step(True, True, "pt") is None
    assert "e `attnref train --no-attention` com estas opções" in str(next_step(False, False, "pt"))
    assert "Um só braço: nada com que compará-lo." in alone
    nothing = no_ablation_report("x", "pt")
    assert nothing.startswith("# Q03: o mesmo modelo sem atenção, medido\n\nO experimento `x`")
    assert "nada aqui responde à Q03" in nothing and no_ablation_report("x") != nothing
