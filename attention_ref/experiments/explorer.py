"""The attention explorer's data: a trained `CharGPT` for a forward pass in the browser, and
its attention on a few Shakespeare lines, precomputed (the book's page ``docs/explorer.md``).

`write_explorer` writes three files into one folder (``docs/results/explorer/`` when
``attnref report --export docs/results`` runs; `write_explorer_from_checkpoint` does the same
from a ``model.pt`` file):

* ``weights.bin`` (`WEIGHTS_FILE`): every tensor of the model's ``state_dict``, float32
  little-endian, one after the other, in the ``state_dict``'s order;
* ``model.json`` (`MANIFEST_FILE`): each tensor's name, shape (``torch``'s: a ``Linear``'s
  weight is ``(out, in)``, so ``W = weight.T`` in the book's row convention) and byte offset
  in ``weights.bin``; the model's shape, LayerNorm epsilon and GELU form; the vocabulary;
  where the model comes from (run, step, best validation loss, number of parameters);
* ``lines.json`` (`LINES_FILE`): for each of `EXPLORER_LINES`, where it stands in Tiny
  Shakespeare, the weights ``A`` of every layer and head (row ``i`` holds its ``i + 1``
  weights on positions ``0 … i``, rounded to `DECIMALS` decimals) and the model's `TOP_K`
  likeliest next characters after each position.

No MLflow here: `attention_ref.experiments.export.export_results` downloads the multihead arm's
``model/model.pt`` and calls `write_explorer`. The page's JavaScript
(``docs/assets/explorer/explorer.js``) repeats `CharGPT.forward` on any line a reader types;
``tests/book/test_explorer.py`` proves its attention equal to `CharGPT.attention_maps`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import AttentionMode
from attention_ref.lm.data import CharData, Vocab
from attention_ref.lm.model import CharGPT, count_parameters

#: the lines the page offers, from Tiny Shakespeare. The first is the one every multihead run
#: draws as heatmaps (``attention/``): its verse is in the text, but the text's "ROMEO:" heads
#: an earlier line (`locate_line` says so); the last is in the validation split
EXPLORER_LINES: tuple[str, ...] = (
    "ROMEO:\nBut, soft! what light through yonder window breaks?",
    "JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?",
    "GLOUCESTER:\nNow is the winter of our discontent",
    "KING RICHARD III:\nA horse! a horse! my kingdom for a horse!",
    "Good night, good night! parting is such\nsweet sorrow,",
    "Full fathom five thy father lies;\nOf his bones are coral made;",
)
#: the version of the files' layout; the page refuses another
FORMAT = 1
WEIGHTS_FILE = "weights.bin"
MANIFEST_FILE = "model.json"
LINES_FILE = "lines.json"
#: decimals of the attention weights in ``lines.json`` (rounding error at most 5e-6)
DECIMALS = 5
#: how many next-character predictions ``lines.json`` keeps per position, and their decimals
TOP_K = 3
PROB_DECIMALS = 4


@dataclass(frozen=True)
class Place:
    """Where a line stands in the text: the line number (from 1) and offset of its first
    character, the split it lies in (``training``, ``validation`` or ``both``, across the cut),
    and whether the text holds the ``whole`` line or only its last line (a speaker's name
    put before a verse spoken elsewhere in the play)."""

    line: int
    offset: int
    split: str
    whole: bool


def locate_line(text: str, n_train: int, line: str) -> Place | None:
    """The first occurrence of ``line`` in ``text`` (its first ``n_train`` characters train),
    else of the line's last line, or ``None`` when the text holds neither."""
    last = line.rsplit("\n", 1)[-1]
    for part, whole in ((line, True), (last, False)):
        at = text.find(part) if part else -1
        if at >= 0:
            end = at + len(part)
            split = "training" if end <= n_train else "validation" if at >= n_train else "both"
            return Place(line=text.count("\n", 0, at) + 1, offset=at, split=split, whole=whole)
    return None


def corpus_text(data: CharData) -> str:
    """The whole text back from its encoded splits (training, then validation)."""
    return data.vocab.decode(torch.cat([data.train, data.val]).tolist())


def _require_multihead(model: CharGPT) -> None:
    if model.cfg.attention is not AttentionMode.MULTIHEAD:
        raise ValueError(
            f"the explorer shows attention: it needs a model with attention='multihead', "
            f"not {str(model.cfg.attention)!r}"
        )


def layer_norm_eps(model: CharGPT) -> float:
    """The epsilon of the model's LayerNorms (one value: the page uses one)."""
    eps = {m.eps for m in model.modules() if isinstance(m, torch.nn.LayerNorm)}
    if len(eps) != 1:
        raise ValueError(f"the explorer needs one LayerNorm epsilon, the model has {sorted(eps)}")
    return eps.pop()


def write_weights(model: CharGPT, path: Path) -> list[dict[str, Any]]:
    """Write every tensor of ``model.state_dict()`` to ``path`` as float32 little-endian, one
    after the other; return the table of contents: ``name``, ``shape``, byte ``offset``."""
    table: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    offset = 0
    for name, tensor in model.state_dict().items():
        # float32, little-endian ('<f4'), row-major: the layout of a JavaScript Float32Array
        raw = tensor.detach().to(torch.float32).cpu().numpy().astype("<f4").tobytes()
        table.append({"name": name, "shape": list(tensor.shape), "offset": offset})
        chunks.append(raw)
        offset += len(raw)
    path.write_bytes(b"".join(chunks))
    return table


def read_weights(folder: Path) -> dict[str, Tensor]:
    """The tensors of ``folder``'s ``weights.bin``, by the names of its ``model.json``."""
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    raw = np.frombuffer((folder / manifest["weights"]).read_bytes(), dtype="<f4")
    out: dict[str, Tensor] = {}
    for entry in manifest["tensors"]:
        shape = tuple(entry["shape"])
        start = entry["offset"] // 4  # bytes -> float32 elements
        flat = raw[start : start + math.prod(shape)].astype(np.float32)  # a copy, native order
        out[entry["name"]] = torch.from_numpy(flat).reshape(shape)
    return out


def line_record(
    model: CharGPT, vocab: Vocab, line: str, place: Place | None = None
) -> dict[str, Any]:
    """One line as ``lines.json`` holds it: text, place, rounded attention, top predictions.

    ``attention[l][h][i]`` is row ``i`` of ``A`` (layer ``l``, head ``h``) up to the diagonal:
    the ``i + 1`` weights of position ``i`` on positions ``0 … i`` (the rest are 0, masked).
    ``next[i]`` lists the `TOP_K` likeliest characters after position ``i``, ``[char, p]``.
    """
    _require_multihead(model)
    idx = torch.tensor([vocab.encode(line)])  # (1, T)
    maps = model.attention_maps(idx)  # [(1, h, T, T)] per layer
    with torch.no_grad():
        logits, _ = model(idx)
    probs = logits[0].softmax(dim=-1)  # (T, vocab)
    top_p, top_i = probs.topk(min(TOP_K, len(vocab)), dim=-1)  # (T, k)
    T = idx.size(1)
    attention = [
        [[[round(v, DECIMALS) for v in A[i, : i + 1].tolist()] for i in range(T)] for A in m[0]]
        for m in maps
    ]
    nxt = [
        [[vocab.chars[i], round(p, PROB_DECIMALS)] for p, i in zip(ps, ids, strict=True)]
        for ps, ids in zip(top_p.tolist(), top_i.tolist(), strict=True)
    ]
    return {
        "text": line,
        "place": None if place is None else vars(place),
        "attention": attention,
        "next": nxt,
    }


def write_explorer(
    checkpoint: Checkpoint,
    dest: Path,
    *,
    source: str,
    data: CharData | None = None,
    lines: tuple[str, ...] = EXPLORER_LINES,
) -> list[Path]:
    """Write ``weights.bin``, ``model.json`` and ``lines.json`` of ``checkpoint`` into ``dest``.

    ``source`` says in words where the model comes from (the page prints it). With ``data``,
    each line's place in the text is looked up and the data's sha256 recorded. A line longer
    than the model's context is cut to ``block_size`` characters.
    """
    model = checkpoint.build_model()
    _require_multihead(model)
    dest.mkdir(parents=True, exist_ok=True)
    cfg = model.cfg
    tensors = write_weights(model, dest / WEIGHTS_FILE)
    text = corpus_text(data) if data is not None else None
    n_train = len(data.train) if data is not None else 0
    records = []
    for full in lines:
        line = full[: cfg.block_size]
        place = locate_line(text, n_train, line) if text is not None else None
        records.append(line_record(model, checkpoint.vocab, line, place))
    manifest = {
        "format": FORMAT,
        "weights": WEIGHTS_FILE,
        "dtype": "float32",
        "byte_order": "little",
        "tensors": tensors,
        "config": {
            "vocab_size": len(checkpoint.vocab),
            "block_size": cfg.block_size,
            "n_embd": cfg.n_embd,
            "n_layer": cfg.n_layer,
            "n_head": cfg.n_head,
            "d_k": cfg.d_k,
            "layer_norm_eps": layer_norm_eps(model),
            "gelu": "erf",  # F.gelu's default: x·Φ(x), Φ by erf (not the tanh approximation)
        },
        "chars": list(checkpoint.vocab.chars),
        "model": {
            "source": source,
            "step": checkpoint.step,
            "best_val_loss": checkpoint.best_val_loss,
            "n_params": count_parameters(model),
            "options": checkpoint.config.to_flat(),
            "data_sha256": data.text_sha256 if data is not None else None,
            "torch_version": torch.__version__,
        },
    }
    written = [dest / WEIGHTS_FILE, dest / MANIFEST_FILE, dest / LINES_FILE]
    written[1].write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    # one line per recorded line: small, and a diff shows which line changed
    body = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    written[2].write_text(
        f'{{"format":{FORMAT},"decimals":{DECIMALS},"lines":[\n{body}\n]}}\n', encoding="utf-8"
    )
    return written


def write_explorer_from_checkpoint(
    path: Path, dest: Path, data: CharData | None = None, *, source: str | None = None
) -> list[Path]:
    """`write_explorer` for a checkpoint file (a run's ``model/model.pt`` or a ``best.pt``)."""
    checkpoint = Checkpoint.load(path)
    return write_explorer(
        checkpoint, dest, source=source or f"checkpoint file {path.name}", data=data
    )
