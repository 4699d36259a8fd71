"""Page 7's "recorded run" table, in English and in Portuguese from one reading of the
recording (``docs/results/comparison.json`` and ``provenance.json``): the run, the command that
made it, when and on which machine (and so in which precision: ``--precision auto`` is bf16
where the CPU has bf16 instructions, fp32 where not), the commit, the model and the schedule.

A commit written ``…-dirty`` (`attention_ref.experiments.store.git_commit`) means the tree
held changes to tracked files when the run started; which ones, the run does not keep. What
can be said, and is said, is what the commit that added the recording changed of the code
(``provenance["tree"]``), and whether the training's own code (`TRAINING_CODE`) is the same at
both commits: ``tests/book/test_recorded_run.py`` checks both against git.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from attention_ref.render.document import DECIMAL_MARK, said

#: the code a training runs, whose sameness at two commits the table states: the language
#: model, its training loop and data, and the ablation that trains its arms
TRAINING_CODE: Final = ("attention_ref/lm/", "attention_ref/experiments/ablation.py")

#: how each language says the table's rows
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "header": "recorded run",
        "parent": "MLflow parent run",
        "command": "command",
        "when": "recorded",
        "when_value": (
            "{date} UTC, after a run of {minutes} minutes, on {cpu} ({threads} threads; bf16 "
            "instructions: {flags}), so in {precision} (`--precision {option}`); the 1-minute "
            "load {load} before it started{alone}"
        ),
        "alone": ", nothing else run beside it",
        "commit": "git commit",
        "dirty": (
            ": the tree held changes not yet committed (which, the run does not keep); the "
            "commit that added this recording, `{committed}`, changes of the package's code only "
            "{files}{moved}, and the training's code ({training}) is the same at `{short}` and "
            "at `{committed}`"
        ),
        "and": " and ",
        "moved": " (named by its path today: it has moved since)",
        "model": "model",
        "model_value": (
            "n_embd {n_embd}, {n_layer} layers, {n_head} heads, block {block}, dropout {dropout}"
        ),
        "training": "training",
        "training_value": (
            "{steps} steps of {batch} × {block} characters, AdamW lr {lr} → {min_lr} "
            "(warm-up {warmup}, cosine), weight decay {wd}, clip {clip}, {seeds}"
        ),
        "seeds": "seeds {first}–{last} (each arm on {n})",
        "seed": "seed {first}",
        "evaluation": "evaluation",
        "evaluation_value": "every {interval} steps on {batches} fixed batches of each split",
    },
    "pt": {
        "header": "execução registrada",
        "parent": "execução-mãe no MLflow",
        "command": "comando",
        "when": "registrada",
        "when_value": (
            "{date} UTC, depois de uma execução de {minutes} minutos, num {cpu} ({threads} "
            "threads; instruções bf16: {flags}), portanto em {precision} (`--precision "
            "{option}`); a carga de 1 minuto era {load} antes de começar{alone}"
        ),
        "alone": ", nada mais rodou ao lado",
        "commit": "commit do git",
        "dirty": (
            ": a árvore tinha mudanças ainda não commitadas (quais, a execução não guarda); o "
            "commit que acrescentou este registro, `{committed}`, muda do código do pacote só "
            "{files}{moved}, e o código do treino ({training}) é o mesmo em `{short}` e em "
            "`{committed}`"
        ),
        "and": " e ",
        "moved": " (pelo caminho de hoje: mudou de lugar desde então)",
        "model": "modelo",
        "model_value": (
            "n_embd {n_embd}, {n_layer} camadas, {n_head} cabeças, bloco {block}, dropout {dropout}"
        ),
        "training": "treino",
        "training_value": (
            "{steps} passos de {batch} × {block} caracteres, AdamW com taxa de aprendizado "
            "{lr} → {min_lr} (aquecimento de {warmup} passos, depois cosseno), weight decay "
            "{wd}, gradiente cortado em norma {clip}, {seeds}"
        ),
        "seeds": "sementes {first}–{last} (cada braço em {n})",
        "seed": "semente {first}",
        "evaluation": "avaliação",
        "evaluation_value": (
            "a cada {interval} passos, em {batches} lotes fixos de cada conjunto (treino e "
            "validação)"
        ),
    },
}

_MACHINE = re.compile(r"^(?P<cpu>.+), (?P<threads>\d+) threads, bf16 instructions: (?P<flags>.+)$")


def machine_parts(machine: str) -> dict[str, str]:
    """``"AMD EPYC, 2 threads, bf16 instructions: avx512_bf16"`` as its three parts (a line
    in another shape is refused: the page would otherwise say what the recording does not)."""
    m = _MACHINE.match(machine)
    if m is None:
        raise ValueError(f"the machine line {machine!r} is not 'CPU, N threads, bf16 ...'")
    return m.groupdict()


#: files a recording names that have moved since: a path's old prefix -> today's (the book's
#: package left attnref's, issue 60)
MOVED: Final = {"attention_ref/book/": "book/attnref_book/"}


def today_path(path: str) -> str:
    """Where a file a recording names is today (`MOVED`); the path itself where it has not
    moved."""
    for old, new in MOVED.items():
        if path.startswith(old):
            return new + path.removeprefix(old)
    return path


def code_list(files: Sequence[str], lang: str) -> str:
    """``a``, ``a and b``, ``a, b and c`` of code spans, in ``lang``'s words."""
    spans = [f"`{f}`" for f in files]
    if len(spans) < 2:
        return "".join(spans)
    return ", ".join(spans[:-1]) + WORDS[lang]["and"] + spans[-1]


def commit_cell(commit: str, tree: Mapping[str, Any] | None, lang: str) -> str:
    """The commit a run started from; where it is ``…-dirty``, what can be said of the tree
    (``tree``: ``committed_in``, the commit that added the recording, and ``code_changed``,
    the code it changes). A dirty commit with nothing said of its tree is refused."""
    cell = f"`{commit}`"
    if not commit.endswith("-dirty"):
        return cell
    if not tree:
        raise ValueError(f"{commit} is -dirty and the recording says nothing of its tree")
    w = WORDS[lang]
    return cell + w["dirty"].format(
        committed=tree["committed_in"],
        files=code_list([today_path(f) for f in tree["code_changed"]], lang),
        moved=w["moved"] if any(today_path(f) != f for f in tree["code_changed"]) else "",
        training=code_list(TRAINING_CODE, lang),
        short=commit.removesuffix("-dirty")[:7],
    )


def recorded_run_rows(
    doc: Mapping[str, Any], about: Mapping[str, Any], lang: str = "en"
) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows for a recording (``doc``: its ``comparison.json``,
    ``about``: its ``provenance.json``) in ``lang``."""
    from attnref_book.claims import recorded_precision

    w, p = WORDS[lang], doc["params"]

    def n(v: object) -> str:  # a decimal as this language writes it, digits as recorded
        return str(v).replace(".", DECIMAL_MARK[lang])

    seeds = int(p.get("seeds", 1))
    first = int(p["seed"])
    machine = machine_parts(about["machine"])
    when = w["when_value"].format(
        date=about["date_utc"],
        minutes=about["minutes"],
        cpu=machine["cpu"],
        threads=machine["threads"],
        flags=machine["flags"],
        precision=recorded_precision(p["precision"], about["machine"]),
        option=p["precision"],
        load=said(about["load_1min_before"], ".2f", lang),
        alone=w["alone"] if about.get("alone") else "",
    )
    rows = [
        [w["parent"], f"`{doc['parent_run_id']}`"],
        [w["command"], f"`{about['command']}`"],
        [w["when"], when],
        [w["commit"], commit_cell(doc["git_commit"], about.get("tree"), lang)],
        # a version is no decimal number: in code, as it is
        ["torch", f"`{doc['torch_version']}`"],
        [
            w["model"],
            w["model_value"].format(
                n_embd=p["n_embd"],
                n_layer=p["n_layer"],
                n_head=p["n_head"],
                block=p["block_size"],
                dropout=n(p["dropout"]),
            ),
        ],
        [
            w["training"],
            w["training_value"].format(
                steps=p["max_steps"],
                batch=p["batch_size"],
                block=p["block_size"],
                lr=n(p["lr"]),
                min_lr=n(p["min_lr"]),
                warmup=p["warmup_steps"],
                wd=n(p["weight_decay"]),
                clip=n(p["grad_clip"]),
                seeds=(w["seeds"] if seeds > 1 else w["seed"]).format(
                    first=first, last=first + seeds - 1, n=seeds
                ),
            ),
        ],
        [
            w["evaluation"],
            w["evaluation_value"].format(interval=p["eval_interval"], batches=p["eval_batches"]),
        ],
    ]
    return [w["header"], ""], rows


__all__ = [
    "TRAINING_CODE",
    "WORDS",
    "code_list",
    "commit_cell",
    "machine_parts",
    "recorded_run_rows",
]
