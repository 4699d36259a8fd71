"""The CLI page's facts (``docs/cli.md``, ``docs/cli.pt.md``): what loading the data checks,
the Q02 recipe and the recorded sweep that chose it, and every command and option, said in the
page's language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from attention_ref.render import said
from attnref_book.pages import RESULTS, results, thousands

#: the page's words per language; ``{…}`` fields are filled from the code and the records
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "data": "Loading checks the file: {chars} characters, {vocab} symbols, {train} training "
        "and {val} validation tokens (sha256 `{sha}…`).",
        "recipe": "The Q02 recipe (the defaults): batch {batch}, {steps} steps, AdamW lr {lr} → "
        "{min_lr} (cosine), chosen by `benchmarks/recipe_sweep.py` on the loss each recipe "
        "reaches on one common validation sample, not on timings (its table: "
        '`benchmarks/RESULTS.md`, "Q02 recipe"; its lines: '
        "`docs/results/benchmarks/recipe_sweep.jsonl`): the old defaults ({old_steps} steps) "
        "reached {old}, these {new} ({seeds}).",
        "apart": "one seed each; their gap, {gap}, is wider than the {spread} by which the new "
        "defaults' best validation loss ranges over the {n} seeds of the recorded ablation "
        "(measured another way: on its fixed validation batches, in bf16; the old defaults' "
        "own spread over seeds was not measured)",
        "not_apart": "one seed each; their gap, {gap}, is within the {spread} by which the new "
        "defaults' best validation loss ranges over the {n} seeds of the recorded ablation: "
        "these runs do not tell the two apart",
        "help": "markdown",
    },
    "pt": {
        "data": "A leitura confere o arquivo: {chars} caracteres, {vocab} símbolos, {train} "
        "tokens de treino e {val} de validação (sha256 `{sha}…`).",
        "recipe": "A receita da Q02 (os padrões): batch {batch}, {steps} passos, AdamW com lr "
        "{lr} → {min_lr} (cosseno), escolhida por `benchmarks/recipe_sweep.py` pela perda que "
        "cada receita alcança numa mesma amostra de validação, não pelos tempos (a sua tabela: "
        '`benchmarks/RESULTS.md`, "Q02 recipe"; as suas linhas: '
        "`docs/results/benchmarks/recipe_sweep.jsonl`): os padrões antigos ({old_steps} "
        "passos) alcançavam {old}, estes {new} ({seeds}).",
        "apart": "uma semente cada; a diferença entre eles, {gap}, é maior que os {spread} de "
        "amplitude da melhor perda de validação dos novos padrões nas {n} sementes da ablação "
        "registrada (medida de outro jeito: nos seus lotes fixos de validação, em bf16; a "
        "dispersão dos padrões antigos entre sementes não foi medida)",
        "not_apart": "uma semente cada; a diferença entre eles, {gap}, fica dentro dos {spread} "
        "de amplitude da melhor perda de validação dos novos padrões nas {n} sementes da "
        "ablação registrada: estes runs não distinguem os dois",
        "help": "terminal",
    },
}


def data_check(lang: str) -> str:
    """What loading Tiny Shakespeare checks (`attention_ref.lm.data`): its characters, its
    symbols, the training and validation tokens (a 90/10 split), its sha256."""
    from attention_ref.lm import data as D

    return WORDS[lang]["data"].format(
        chars=thousands(D.N_CHARS, lang),
        vocab=D.VOCAB_SIZE,
        train=thousands(D.N_TRAIN, lang),
        val=thousands(D.N_VAL, lang),
        sha=D.SHA256[:12],
    )


def recipe(lang: str) -> str:
    """The Q02 recipe (`attention_ref.lm.config.TrainConfig`'s defaults) and the recorded sweep
    that chose it (``recipe_sweep.jsonl``): the loss the old and the new defaults reached on
    one common validation sample, one seed each, and whether their gap is wider than the range
    of the new defaults' best validation loss over the seeds of the recorded ablation
    (``comparison.json``, its ``multihead`` arm, trained with these defaults)."""
    from attention_ref.experiments.findings import arm_seeds, rows_from_comparison
    from attention_ref.lm.config import TrainConfig

    w = WORDS[lang]
    cfg = TrainConfig()
    lines = (RESULTS / "benchmarks" / "recipe_sweep.jsonl").read_text(encoding="utf-8")
    sweep = {r["name"]: r for r in map(json.loads, lines.splitlines())}
    old, new = sweep["R0-default"], sweep["R5-b16-lr5e-3"]
    if not (
        new["changes"]["batch_size"] == cfg.batch_size
        and new["steps"] == cfg.max_steps
        and new["changes"]["lr"] == cfg.lr
        and new["changes"]["min_lr"] == cfg.min_lr
    ):
        raise AssertionError(f"the sweep's {new['name']} is not today's defaults")
    arm = next(a for a in arm_seeds(rows_from_comparison(results())) if a.attention == "multihead")
    for row in arm.rows:
        trained = {k: float(row.config[k]) for k in ("batch_size", "max_steps", "lr", "min_lr")}
        defaults = {k: float(getattr(cfg, k)) for k in trained}
        if trained != defaults:
            raise AssertionError(f"the ablation's run {row.run_id} is not today's defaults")
    gap = round(abs(old["common_val"] - new["common_val"]), 4)
    spread = round(arm.best.hi - arm.best.lo, 4)
    seeds = w["apart" if gap > spread else "not_apart"].format(
        gap=said(gap, ".4f", lang), spread=said(spread, ".4f", lang), n=arm.n
    )
    return w["recipe"].format(
        batch=cfg.batch_size,
        steps=thousands(cfg.max_steps, lang),
        lr=said(cfg.lr, "g", lang),
        min_lr=said(cfg.min_lr, "g", lang),
        old_steps=thousands(old["steps"], lang),
        old=said(old["common_val"], ".4f", lang),
        new=said(new["common_val"], ".4f", lang),
        seeds=seeds,
    )


def as_markdown(command: Any, doc: str) -> str:
    """Every command and option as Typer's Markdown documentation (without its title: the page
    has its own)."""
    return doc.split("\n", 1)[1]


def as_terminal(command: Any, doc: str) -> str:
    """Under each heading of Typer's documentation (the same anchors), the command's
    ``--help`` as a terminal 100 columns wide shows it, without colour."""
    from click.testing import CliRunner

    runner = CliRunner(env={"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1", "FORCE_COLOR": None})

    def help_of(path: list[str]) -> str:
        output = runner.invoke(command, [*path, "--help"], prog_name="attnref").output
        return "\n".join(line.rstrip() for line in output.splitlines()).strip("\n")

    out = [f"````text\n{help_of([])}\n````\n"]
    for title in re.findall(r"^#{2,3} `attnref [^`]+`$", doc, re.M):
        path = title.split("`")[1].split()[1:]
        out.append(f"{title}\n\n````text\n{help_of(path)}\n````\n")
    return "\n".join(out)


#: how each language's page shows the help: the English page as Typer's Markdown, the
#: Portuguese page as the terminal prints it (the program's words are English in both)
HELP_FORMS: dict[str, Callable[[Any, str], str]] = {
    "markdown": as_markdown,
    "terminal": as_terminal,
}


def every_command(typer: ModuleType, app: Any, tidy_help: Callable[[Any], Any], lang: str) -> str:
    """Every command and option of the Typer app ``app`` (the page passes
    `attention_ref.cli.main.app`), type names as ``attnref --help`` shows them (``tidy_help``:
    `attention_ref.cli.options.tidy_help`), in the page's form (`HELP_FORMS`).

    The page passes the CLI's objects and ``typer`` (with ``typer.cli`` imported): the book's
    package imports neither Typer nor the CLI (``tests/test_layers.py``), the page that shows
    the CLI does."""
    command = tidy_help(typer.main.get_command(app))
    ctx = typer.Context(command)
    doc = typer.cli.get_docs_for_click(obj=command, ctx=ctx, name="attnref", title="attnref")
    return HELP_FORMS[WORDS[lang]["help"]](command, doc)
