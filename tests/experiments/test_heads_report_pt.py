"""The heads sweep's section in Portuguese: the rows of the English tests
(`tests.experiments.test_heads_report`), each claim on both sides of its threshold, the same
numbers as the English section. Pure: rows made here, no MLflow, no training.
"""

from __future__ import annotations

import pytest

from attention_ref.experiments.findings import ArmRow
from attention_ref.experiments.heads_report import (
    HEADS_TOLERANCE,
    heads_report,
    heads_table,
    parameters_sentence,
    single_head_sentence,
    sweep_sentence,
    sweep_source,
    verdict,
)
from tests.experiments.test_heads_report import row, sweep
from tests.experiments.test_report_pt import NNBSP, numbers


def test_what_the_arms_share_is_said_in_portuguese_only_as_recorded():
    assert sweep_sentence(sweep(1.6, 1.6), "pt") == (
        "todos os braços têm a mesma semente (1337), o mesmo número de passos (2600), os mesmos "
        "dados (sha256 `86c4e6aa9db7…`), a mesma forma do modelo (salvo as cabeças), o mesmo "
        "cronograma de otimização e a mesma avaliação"
    )
    assert sweep_sentence([row(1, 1.6), row(2, 1.6, seed=7)], "pt") == (
        "**os braços não são comparáveis como estão**: além das cabeças, diferem em semente "
        "(h = 1: 1337, h = 2: 7)"
    )
    unknown = sweep_sentence([row(1, 1.6), row(2, 1.6, data_sha256=None)], "pt")
    assert unknown.endswith(
        "; não há registro de dados para todos os braços, então não se afirma que seja igual"
    )
    bare = [ArmRow(str(h), "r", "FINISHED", 1, 1.6, 1.6, 1.6, 1.0, 1.0, 10) for h in (1, 2)]
    assert sweep_sentence(bare, "pt").startswith("todos os braços têm o mesmo número de passos")
    assert sweep_sentence(bare, "pt").endswith("então não se afirma que sejam iguais")
    assert sweep_sentence([row(1, 1.6)], "pt") == "um só braço"


@pytest.mark.parametrize(
    ("spread", "matters"),
    [(0.0, False), (HEADS_TOLERANCE - 0.005, False), (HEADS_TOLERANCE + 0.005, True), (0.2, True)],
)
def test_the_verdict_says_heads_matter_only_beyond_the_noise(spread, matters):
    rows = sweep(1.50, 1.50 + spread / 2, 1.50 + spread, 1.50 + spread / 3)
    text = verdict(rows, lang="pt")
    assert ("O número de cabeças faz diferença aqui" in text) is matters
    assert ("não faz diferença mensurável" in text) is (not matters)
    assert f"{spread:.3f} nats".replace(".", ",") in text
    if matters:
        assert "h = 1 chega à menor" in text and "h = 4 à maior" in text
    over_seeds = [*rows, *(row(int(r.attention), r.best_val_loss + 0.001, seed=7) for r in rows)]
    several = verdict(over_seeds, lang="pt")
    assert "numa semente" not in several and "sementes" in several
    assert verdict([row(2, 1.6)], lang="pt") == "Um só braço: nada a comparar."


@pytest.mark.parametrize(
    ("diff", "says"),
    [
        (HEADS_TOLERANCE + 0.01, "uma só cabeça é pior"),
        (HEADS_TOLERANCE - 0.01, "uma só cabeça se sai tão bem quanto"),
        (-(HEADS_TOLERANCE - 0.01), "uma só cabeça se sai tão bem quanto"),
        (-(HEADS_TOLERANCE + 0.01), "uma só cabeça é melhor"),
    ],
)
def test_the_single_head_reading_of_q03_follows_the_difference(diff, says):
    rows = [row(1, 1.60 + diff), row(2, 1.62), row(4, 1.60), row(8, 1.65)]
    text = single_head_sentence(rows, lang="pt")
    assert text.startswith("Lendo a Q03 como *com uma só cabeça em vez de várias*")
    assert says in text and f"{1.60 + diff:.3f}".replace(".", ",") in text and "h = 4" in text
    outcomes = {"é pior", "se sai tão bem quanto", "é melhor"}
    for other in outcomes - {says.removeprefix("uma só cabeça ")}:
        assert other not in text
    assert text != single_head_sentence(rows)
    assert "não pode dizer quanto custa" in single_head_sentence([row(2, 1.6)], lang="pt")


def test_parameter_counts_equal_or_not_in_portuguese():
    assert parameters_sentence(sweep(1.6, 1.6), "pt").startswith(
        f"Todos os braços têm 824{NNBSP}000 parâmetros"
    )
    text = parameters_sentence([row(1, 1.6), row(2, 1.6, n_params=900_000)], "pt")
    assert f"diferem (h = 1: 824{NNBSP}000, h = 2: 900{NNBSP}000)" in text
    assert "não é a tamanho fixo" in text


def test_the_section_in_portuguese_has_the_english_numbers():
    rows = sweep(1.61, 1.55, 1.52, 1.53)
    en = heads_report(sweep_source("p1"), rows)
    pt = heads_report(sweep_source("p1", "pt"), rows, "pt")
    assert sweep_source("p1") == "Heads sweep run `p1`"
    assert pt.startswith("## Varredura de cabeças: o número de cabeças importa")
    assert "Execução da varredura de cabeças `p1`: um modelo treinado com h = 1, 2, 4, 8" in pt
    assert heads_table(rows, "pt").rstrip() in pt
    assert heads_table(rows, "pt").startswith("| cabeças h | d_k | parâmetros | melhor perda")
    for r in rows:
        best = f"{r.best_val_loss:.4f}".replace(".", ",")
        assert f"| {int(r.attention)} | {128 // int(r.attention)} | 824{NNBSP}000 | {best} |" in pt
    assert "Execuções: h = 1 `run1`, h = 2 `run2`" in pt
    assert numbers(pt, "pt") == numbers(en, "en") and numbers(en, "en")
    several = [*rows, *(row(int(r.attention), r.best_val_loss + 0.002, seed=7) for r in rows)]
    pt2 = heads_report("x", several, "pt")
    assert "(semente 7)" in pt2 and "| sementes |" in pt2
    assert numbers(pt2, "pt") == numbers(heads_report("x", several), "en")
