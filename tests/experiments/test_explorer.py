"""The explorer's files (`attention_ref.experiments.explorer`): read back, they are the model.

A real `CharGPT` (the Q02 shape, seeded initial weights: what is tested is the export, not
training) on the real vocabulary of Tiny Shakespeare; no mock anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from attention_ref.experiments import explorer
from attention_ref.lm.checkpoint import Checkpoint
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.data import CharData
from attention_ref.lm.model import CharGPT, count_parameters
from tests.configs import tiny


def checkpoint_of(cfg: TrainConfig, data: CharData, seed: int = 3) -> Checkpoint:
    """A checkpoint of a freshly initialised model of ``cfg`` (biases made non-zero, so a
    mix-up of two tensors of one shape cannot pass)."""
    torch.manual_seed(seed)
    model = CharGPT(cfg.model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return Checkpoint(cfg, data.vocab, model.state_dict(), step=17, best_val_loss=2.5)


@pytest.fixture(scope="module")
def written(tmp_path_factory, shakespeare) -> tuple[Checkpoint, Path]:
    ckpt = checkpoint_of(TrainConfig(), shakespeare)
    dest = tmp_path_factory.mktemp("explorer")
    files = explorer.write_explorer(ckpt, dest, source="a test", data=shakespeare)
    assert [f.name for f in files] == ["weights.bin", "model.json", "lines.json"]
    return ckpt, dest


def test_the_weights_file_read_back_is_the_state_dict(written):
    ckpt, dest = written
    back = explorer.read_weights(dest)
    assert list(back) == list(ckpt.model)  # every tensor, in the state_dict's order
    for name, tensor in ckpt.model.items():
        assert back[name].dtype == torch.float32 and torch.equal(back[name], tensor), name
    raw = (dest / "weights.bin").stat().st_size
    assert raw == 4 * count_parameters(ckpt.build_model()) == 4 * 429_824


def test_the_manifest_describes_the_model(written):
    ckpt, dest = written
    m = json.loads((dest / "model.json").read_text(encoding="utf-8"))
    model = ckpt.build_model()
    assert m["format"] == explorer.FORMAT and m["byte_order"] == "little"
    assert m["chars"] == list(ckpt.vocab.chars) and len(m["chars"]) == 65
    assert m["config"] == {
        "vocab_size": 65,
        "block_size": 128,
        "n_embd": 128,
        "n_layer": 2,
        "n_head": 2,
        "d_k": 64,
        "layer_norm_eps": model.ln_f.eps,
        "gelu": "erf",
    }
    assert m["model"]["step"] == 17 and m["model"]["best_val_loss"] == 2.5
    assert m["model"]["n_params"] == 429_824 and m["model"]["source"] == "a test"
    assert m["model"]["options"] == ckpt.config.to_flat()
    offsets = [t["offset"] for t in m["tensors"]]
    assert offsets == sorted(offsets) and offsets[0] == 0


def test_the_recorded_attention_is_the_models(written):
    ckpt, dest = written
    doc = json.loads((dest / "lines.json").read_text(encoding="utf-8"))
    model = ckpt.build_model()
    assert [r["text"] for r in doc["lines"]] == list(explorer.EXPLORER_LINES)
    for rec in doc["lines"]:
        idx = torch.tensor([ckpt.vocab.encode(rec["text"])])
        maps = model.attention_maps(idx)
        T = idx.size(1)
        assert len(rec["attention"]) == len(maps) == 2
        for A, layer in zip(maps, rec["attention"], strict=True):
            assert len(layer) == 2
            for head, rows in zip(A[0], layer, strict=True):
                assert [len(r) for r in rows] == list(range(1, T + 1))  # up to the diagonal
                full = torch.zeros(T, T)
                for i, r in enumerate(rows):
                    full[i, : i + 1] = torch.tensor(r)
                # rounding to DECIMALS = 5 decimals is the only difference
                assert torch.allclose(full, head, rtol=0, atol=5.1e-6)
                assert not torch.allclose(full, head.T, atol=1e-3)  # not the transpose
        probs = model(idx)[0][0].softmax(-1)
        for t, top in enumerate(rec["next"]):
            assert len(top) == explorer.TOP_K
            for ch, p in top:
                assert abs(probs[t, ckpt.vocab.chars.index(ch)].item() - p) <= 5.1e-5
            assert top[0][1] == pytest.approx(probs[t].max().item(), abs=5.1e-5)


def test_each_line_is_found_where_it_is_in_the_text(written, shakespeare):
    _, dest = written
    text = explorer.corpus_text(shakespeare)
    assert len(text) == 1_115_394
    lines = text.split("\n")
    places = [r["place"] for r in json.loads((dest / "lines.json").read_text())["lines"]]
    for line, place in zip(explorer.EXPLORER_LINES, places, strict=True):
        found = line if place["whole"] else line.rsplit("\n", 1)[-1]
        assert text[place["offset"] : place["offset"] + len(found)] == found
        assert lines[place["line"] - 1].startswith(found.split("\n")[0])
    # the heatmap line's verse is Romeo's, but the text's "ROMEO:" heads an earlier line
    assert places[0]["whole"] is False and places[0]["line"] == 16870
    assert places[1] == {"line": 16908, "offset": 478131, "split": "training", "whole": True}
    assert places[-1]["split"] == "validation"


def test_locate_line_names_the_split_and_the_cut():
    text = "A:\nab\ncd\nef\n"
    assert explorer.locate_line(text, 6, "ab") == explorer.Place(2, 3, "training", True)
    assert explorer.locate_line(text, 6, "cd") == explorer.Place(3, 6, "validation", True)
    assert explorer.locate_line(text, 6, "b\nc").split == "both"
    assert explorer.locate_line(text, 6, "B:\ncd") == explorer.Place(3, 6, "validation", False)
    assert explorer.locate_line(text, 6, "zz") is None


def test_a_checkpoint_file_with_a_short_context_cuts_the_lines(tmp_path, shakespeare):
    cfg = tiny()  # block_size 32: the recorded lines are longer
    path = checkpoint_of(cfg, shakespeare).save(tmp_path / "model.pt")
    explorer.write_explorer_from_checkpoint(path, tmp_path / "out")
    doc = json.loads((tmp_path / "out" / "lines.json").read_text())
    assert [r["text"] for r in doc["lines"]] == [s[:32] for s in explorer.EXPLORER_LINES]
    assert all(r["place"] is None for r in doc["lines"])  # no data given: no places
    m = json.loads((tmp_path / "out" / "model.json").read_text())
    assert m["model"]["source"] == "checkpoint file model.pt" and m["config"]["n_layer"] == 1


def test_a_model_without_attention_is_refused(tmp_path, shakespeare):
    ckpt = checkpoint_of(tiny(attention="uniform"), shakespeare)
    with pytest.raises(ValueError, match="needs a model with attention='multihead'"):
        explorer.write_explorer(ckpt, tmp_path, source="x")
    assert not (tmp_path / "weights.bin").exists()
