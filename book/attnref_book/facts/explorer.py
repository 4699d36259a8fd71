"""The facts of the attention explorer page (``docs/explorer.md``, ``docs/explorer.pt.md``),
computed once and said in each language.

Each function is one code block of the page and returns what it prints, read from the files the
explorer loads (``docs/results/explorer/``): the model and the run it comes from, the files, the
check that the recorded lines are that model's attention, the lines and where they lie in Tiny
Shakespeare, and where each head looks on them.
"""

from __future__ import annotations

import re
from typing import Any, Final

from attention_ref.render import said, thousands
from attnref_book.pages import RESULTS, check, results, table

#: the files' folder
FOLDER: Final = RESULTS / "explorer"

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "model": "the model in this page",
        "from": "from",
        "mlflow": "MLflow run {run} (arm {arm} of the ablation {ablation}, experiment "
        "{experiment}), {artifact}",
        "checkpoint": "checkpoint file {path}",
        "shape": "shape",
        "shape_is": "vocabulary {vocab}, context {block} characters, n_embd {n_embd}, "
        "{layers} layers of {heads} heads (d_k = {d_k}), {params} parameters",
        "trained": "trained",
        "trained_is": "best checkpoint at step {step} of {steps} (batch {batch}, seed {seed}), "
        "best validation loss {loss} nats per character",
        "written": "written with",
        "file": "file",
        "holds": "holds",
        "manifest": "names, shapes and offsets of the tensors; the shape; the vocabulary; the run",
        "weights": "every tensor of the model, float32 little-endian",
        "lines": "the recorded lines: A of every layer and head, the likeliest next characters",
        "check_label": "the recorded lines are this model's attention",
        "check_detail": "a CharGPT built from <code>weights.bin</code> gives, on the {n} "
        "recorded lines, the weights of <code>lines.json</code> to within {worst} (they are "
        "rounded to {decimals} decimals).",
        "line": "line (↵: newline)",
        "characters": "characters",
        "in_text": "in Tiny Shakespeare",
        "nowhere": "not in the text",
        "at": "line {line}, {split}",
        "last_only": "its last line only, at {at}",
        "layer": "layer",
        "head": "head",
        "own": "on itself",
        "previous": "on the one before",
        "back": "further back",
    },
    "pt": {
        "model": "o modelo desta página",
        "from": "origem",
        "mlflow": "execução MLflow {run} (braço {arm} da ablação {ablation}, experimento "
        "{experiment}), {artifact}",
        "checkpoint": "arquivo de checkpoint {path}",
        "shape": "forma",
        "shape_is": "vocabulário de {vocab}, contexto de {block} caracteres, n_embd {n_embd}, "
        "{layers} camadas de {heads} cabeças (d_k = {d_k}), {params} parâmetros",
        "trained": "treino",
        "trained_is": "melhor checkpoint no passo {step} de {steps} (lote {batch}, semente "
        "{seed}), melhor perda de validação {loss} nats por caractere",
        "written": "gravado com",
        "file": "arquivo",
        "holds": "contém",
        "manifest": "nomes, formas e posições (em bytes, em `weights.bin`) dos tensores; a forma "
        "do modelo; o vocabulário; a execução",
        "weights": "todos os tensores do modelo, float32 little-endian",
        "lines": "as linhas registradas: a matriz A de cada camada e cabeça, os próximos "
        "caracteres mais prováveis",
        "check_label": "as linhas registradas são a atenção deste modelo",
        "check_detail": "um CharGPT construído a partir de <code>weights.bin</code> dá, nas {n} "
        "linhas registradas, os pesos de <code>lines.json</code> com diferença máxima de "
        "{worst} (eles estão arredondados para {decimals} casas decimais).",
        "line": "linha (↵: quebra de linha)",
        "characters": "caracteres",
        "in_text": "no Tiny Shakespeare",
        "nowhere": "fora do texto",
        "at": "linha {line}, {split}",
        "last_only": "só a sua última linha, na {at}",
        "layer": "camada",
        "head": "cabeça",
        "own": "em si mesmo",
        "previous": "no anterior",
        "back": "mais para trás",
    },
}

#: the split a recorded line lies in (`attention_ref.experiments.explorer.locate_line`), in
#: each language's words
SPLITS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "training": "training split",
        "validation": "validation split",
        "both": "across the training and validation splits",
    },
    "pt": {
        "training": "no conjunto de treino",
        "validation": "no conjunto de validação",
        "both": "entre os conjuntos de treino e de validação",
    },
}

#: where the model came from, as ``model.json`` records it (the exporter's English words):
#: an arm of an ablation in MLflow (`attnref report --export`), or a checkpoint file
FROM_MLFLOW: Final = re.compile(
    r"MLflow run (?P<run>\w+) \(arm (?P<arm>\w+) of the ablation (?P<ablation>\w+), "
    r"experiment (?P<experiment>.+)\), (?P<artifact>.+)"
)
FROM_CHECKPOINT: Final = re.compile(r"checkpoint file (?P<path>.+)")


def source_words(source: str, lang: str) -> str:
    """Where the model came from (``model.json``'s ``source``) in ``lang``'s words; a source
    of another form as it is."""
    if found := FROM_MLFLOW.fullmatch(source):
        return WORDS[lang]["mlflow"].format(**found.groupdict())
    if found := FROM_CHECKPOINT.fullmatch(source):
        return WORDS[lang]["checkpoint"].format(**found.groupdict())
    return source


def the_model(lang: str) -> str:
    """The model the page runs (``model.json``): the run it comes from, its shape
    (``d_k = n_embd / n_head``), how it was trained, and the torch that wrote it."""
    say = WORDS[lang]
    m = results("explorer/model.json")
    info, cfg, o = m["model"], m["config"], m["model"]["options"]
    shape = say["shape_is"].format(
        vocab=cfg["vocab_size"],
        block=cfg["block_size"],
        n_embd=cfg["n_embd"],
        layers=cfg["n_layer"],
        heads=cfg["n_head"],
        d_k=cfg["d_k"],
        params=thousands(info["n_params"], lang),
    )
    trained = say["trained_is"].format(
        step=info["step"],
        steps=o["max_steps"],
        batch=o["batch_size"],
        seed=o["seed"],
        loss=said(info["best_val_loss"], ".4f", lang),
    )
    rows = [
        [say["from"], source_words(info["source"], lang)],
        [say["shape"], shape],
        [say["trained"], trained],
        # the version as code: 2.13.0 is not a decimal number
        [say["written"], f"torch `{info['torch_version']}`"],
    ]
    return table([say["model"], ""], rows)


def the_files(lang: str) -> str:
    """The files the page reads under ``results/explorer/``, their sizes and what each holds."""
    from attention_ref.experiments.explorer import LINES_FILE, MANIFEST_FILE, WEIGHTS_FILE

    say = WORDS[lang]
    what = {MANIFEST_FILE: say["manifest"], WEIGHTS_FILE: say["weights"], LINES_FILE: say["lines"]}
    rows = [[f"`{n}`", thousands((FOLDER / n).stat().st_size, lang), w] for n, w in what.items()]
    return table([say["file"], "bytes", say["holds"]], rows)


def lines_check(lang: str) -> str:
    """A `CharGPT` built from ``weights.bin`` gives, on the recorded lines, the weights of
    ``lines.json``, :math:`A = \\operatorname{softmax}(QK^\\top/\\sqrt{d_k} + M)`, to within
    their rounding."""
    import torch

    from attention_ref.experiments.explorer import read_weights
    from attention_ref.lm.config import ModelConfig
    from attention_ref.lm.model import CharGPT

    say = WORDS[lang]
    m, recorded_lines = results("explorer/model.json"), results("explorer/lines.json")
    lines = recorded_lines["lines"]
    keys = ("vocab_size", "block_size", "n_embd", "n_layer", "n_head")
    model = CharGPT(ModelConfig(**{k: m["config"][k] for k in keys}))
    model.load_state_dict(read_weights(FOLDER))
    model.eval()
    stoi = {c: i for i, c in enumerate(m["chars"])}
    worst = 0.0
    for line in lines:
        maps = model.attention_maps(torch.tensor([[stoi[c] for c in line["text"]]]))
        for A, recorded in zip(maps, line["attention"], strict=True):
            for head, rows in zip(A[0], recorded, strict=True):
                for i, row in enumerate(rows):
                    worst = max(worst, (head[i, : i + 1] - torch.tensor(row)).abs().max().item())
    detail = say["check_detail"].format(
        n=len(lines), worst=said(worst, ".1e", lang), decimals=recorded_lines["decimals"]
    )
    return check(say["check_label"], worst <= 1e-5, detail, lang=lang)


def place_words(place: dict[str, Any] | None, lang: str) -> str:
    """Where a recorded line lies in Tiny Shakespeare (`locate_line`'s place), in words: its
    line number and split, or that only its last line is in the text, or that it is not."""
    say = WORDS[lang]
    if place is None:
        return say["nowhere"]
    split = SPLITS[lang].get(place["split"], place["split"])
    at = say["at"].format(line=thousands(place["line"], lang), split=split)
    return at if place["whole"] else say["last_only"].format(at=at)


def the_lines(lang: str) -> str:
    """The recorded lines (↵ for a newline), their length and where each lies in Tiny
    Shakespeare."""
    import html

    say = WORDS[lang]
    lines = results("explorer/lines.json")["lines"]
    rows = [
        [
            n,
            f"<code>{html.escape(r['text']).replace(chr(10), '↵')}</code>",
            len(r["text"]),
            place_words(r["place"], lang),
        ]
        for n, r in enumerate(lines, 1)
    ]
    return table(["", say["line"], say["characters"], say["in_text"]], rows)


def where_heads_look(lang: str) -> str:
    """Each layer's and head's mean weight on the character itself (:math:`A_{ii}`), on the one
    before (:math:`A_{i,i-1}`) and on all those further back, over every position of the
    recorded lines but the first of each."""
    say = WORDS[lang]
    lines = results("explorer/lines.json")["lines"]
    m = results("explorer/model.json")
    rows: list[list[object]] = []
    for layer in range(m["config"]["n_layer"]):
        for head in range(m["config"]["n_head"]):
            own = prev = back = 0.0
            n = 0
            for line in lines:
                for row in line["attention"][layer][head][1:]:
                    own, prev, back = own + row[-1], prev + row[-2], back + sum(row[:-2])
                    n += 1
            means = [said(v / n, ".3f", lang) for v in (own, prev, back)]
            rows.append([layer + 1, head + 1, *means])
    header = [say["layer"], say["head"], say["own"], say["previous"], say["back"]]
    return table(header, rows)
