"""``attnref report --lang en|pt`` on a real sqlite store: the Q03 answer and the heads sweep's
section in the student's language (``--lang``, else ``$ATTNREF_LANG``, else the locale), the
same numbers in each; the command's own lines and errors too."""

from __future__ import annotations

import pytest

from attention_ref.cli.main import main
from attention_ref.cli.words import WORDS
from tests.experiments.test_report_pt import numbers

ENGLISH = ("# Q03: the same model without attention, measured", "## Heads sweep: does the")
PORTUGUESE = ("# Q03: o mesmo modelo sem atenção, medido", "## Varredura de cabeças: o número")


@pytest.fixture
def measured(store, shakespeare, tmp_path):
    """A store with a tiny ablation (with and without attention) and a heads sweep (h = 1, 2)."""
    from attention_ref.experiments.ablation import run_sweep
    from attention_ref.experiments.store import connect
    from attention_ref.experiments.sweep import ablation_sweep, heads_sweep
    from tests.configs import tiny

    connect(store)
    cfg = tiny(max_steps=20, eval_interval=10)
    runs = {"out_root": tmp_path / "runs", "log_system_metrics": False}
    run_sweep(ablation_sweep(cfg, ("multihead", "none")), shakespeare, **runs)
    run_sweep(heads_sweep(cfg, (1, 2)), shakespeare, **runs)
    return store


@pytest.fixture
def locale(monkeypatch):
    """Set the locale's language (``LANG``) with nothing above it."""
    for name in ("ATTNREF_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    return lambda value: monkeypatch.setenv("LANG", value)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_report_speaks_the_language_asked_or_the_locales(measured, locale, capsys, tmp_path):
    locale("C")
    code, en, err = run(["report"], capsys)
    assert code == 0, err
    assert all(w in en for w in ENGLISH) and not any(w in en for w in PORTUGUESE)
    code, pt, err = run(["report", "--lang", "pt"], capsys)
    assert code == 0, err
    assert all(w in pt for w in PORTUGUESE) and not any(w in pt for w in ENGLISH)
    assert "## O que acontece no treino" in pt and "* **Sem atenção (Q03).**" in pt
    assert "| atenção | precisão | parâmetros | melhor perda de validação |" in pt
    assert "| cabeças h | d_k | precisão | parâmetros |" in pt
    assert numbers(pt, "pt") == numbers(en, "en") and len(numbers(en, "en")) > 20
    # no --lang: the locale's language; --lang beats it; $ATTNREF_LANG beats the locale
    locale("pt_BR.UTF-8")
    assert run(["report"], capsys)[1] == pt
    assert run(["report", "--lang", "en"], capsys)[1] == en
    locale("C")
    assert run(["report"], capsys)[1] == en
    # --output: the file in Portuguese, and the line that says so
    out_file = tmp_path / "q03.md"
    code, said, err = run(["report", "--lang", "pt", "-o", str(out_file)], capsys)
    assert code == 0, err
    assert out_file.read_text(encoding="utf-8") == pt
    assert said.strip() == f"arquivo escrito: {out_file}"
    assert run(["report", "-o", str(out_file)], capsys)[1].strip() == f"wrote {out_file}"


def test_the_reports_errors_are_in_its_language(measured, locale, capsys, tmp_path):
    locale("pt_BR.UTF-8")
    code, out, err = run(["report", "--experiment", "nope"], capsys)
    assert code == 2 and out == "" and err.startswith("attnref: erro: ")
    assert "'nope'" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(["report", "--experiment", "nope", "--lang", "en"], capsys)
    assert code == 2 and err.startswith("attnref: error: ")
    nowhere = tmp_path / "no" / "such" / "folder" / "q03.md"
    code, _, err = run(["report", "-o", str(nowhere)], capsys)
    assert code == 2 and err.startswith(f"attnref: erro: não foi possível escrever {nowhere}: ")
    locale("C")
    code, _, err = run(["report", "-o", str(nowhere)], capsys)
    assert code == 2 and err.startswith(f"attnref: error: cannot write {nowhere}: ")
    code, _, err = run(["report", "--lang", "fr"], capsys)
    assert code == 2 and "fr" in err and err.startswith("attnref: error: ")


def test_the_reports_own_lines_have_their_words_in_each_language():
    keys = {k for k in WORDS["en"] if k.startswith("report_")}
    assert keys == {"report_wrote", "report_exported", "report_cannot_write", "report_every_column"}
    assert keys <= set(WORDS["pt"])
    for k in keys:
        assert WORDS["pt"][k] != WORDS["en"][k], k


def test_at_a_narrow_terminal_the_portuguese_table_keeps_its_best_loss_and_says_what_it_left():
    """The column a reader came for is found by its header in the report's language."""
    import io

    from rich.console import Console

    from attention_ref.cli.tables import print_markdown
    from attention_ref.cli.words import said
    from attention_ref.experiments.report import best_column, comparison_markdown
    from tests.experiments.test_report import arm

    rows = [arm("multihead", 1.5, 429_824), arm("none", 2.5)]

    def shown(lang: str, kept: str) -> str:
        out = Console(file=io.StringIO(), width=44, markup=False, highlight=False)
        print_markdown(
            out,
            comparison_markdown(rows, 2.48, lang),
            elsewhere=said("report_every_column", lang),
            lang=lang,
            kept=kept,
        )
        return " ".join(out.file.getvalue().split())  # type: ignore[attr-defined]

    pt = shown("pt", best_column("pt"))
    assert "1,5000" in pt and "2,5000" in pt  # the best validation loss, kept
    assert "deixadas de fora em 44 colunas:" in pt
    assert "attnref report -o ARQUIVO tem todas as colunas" in pt
    # the control: kept by the English header, the Portuguese column goes
    assert "1,5000" not in shown("pt", best_column("en"))
    en = shown("en", best_column("en"))
    assert "1.5000" in en and "left out at 44 columns:" in en
