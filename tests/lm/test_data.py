"""Tiny Shakespeare: facts, where it comes from, a real download over HTTP, the bigram
baseline."""

from __future__ import annotations

import functools
import hashlib
import http.server
import math
import threading
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
import torch

from attention_ref.lm import data as D


def test_the_data_set_facts(shakespeare):
    assert shakespeare.vocab_size == 65
    assert len(shakespeare.train) == 1_003_854
    assert len(shakespeare.val) == 111_540
    assert shakespeare.text_sha256 == D.SHA256
    assert shakespeare.vocab.decode(shakespeare.vocab.encode("To be, or not")) == "To be, or not"


def test_a_different_file_is_refused(tmp_path):
    p = tmp_path / "input.txt"
    p.write_text("not shakespeare\n" * 100)
    with pytest.raises(D.DataError, match="is not Tiny Shakespeare: sha256"):
        D.load(p)
    small = D.load(p, verify=False)  # tests may load their own small text
    assert small.vocab_size == len(set("not shakespeare\n"))


def test_locate_order(tmp_path, monkeypatch, shakespeare_path):
    explicit = tmp_path / "explicit.txt"
    explicit.write_text("x")
    monkeypatch.setenv(D.ENV_VAR, str(shakespeare_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert D.locate(explicit) == explicit  # 1. --data
    assert D.locate() == shakespeare_path  # 2. the environment variable
    monkeypatch.delenv(D.ENV_VAR)
    cached = D.cache_path()
    assert cached == tmp_path / "cache" / "attnref" / "tinyshakespeare.txt"
    cached.parent.mkdir(parents=True)
    cached.write_text("y")
    assert D.locate() == cached  # 3. the cache
    cached.unlink()
    with pytest.raises(D.DataError, match="--data PATH"):
        D.locate(allow_download=False)
    with pytest.raises(D.DataError, match=r"points to .* which is not a file"):
        D.locate(tmp_path / "missing.txt")


@pytest.fixture
def http_server(tmp_path, shakespeare_path):
    """A real HTTP server on 127.0.0.1 serving a copy of the data and a corrupted copy."""
    root = tmp_path / "www"
    root.mkdir()
    (root / "input.txt").write_bytes(shakespeare_path.read_bytes())
    (root / "bad.txt").write_bytes(shakespeare_path.read_bytes()[:-10])
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_verifies_and_writes_atomically(tmp_path, http_server, monkeypatch):
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    seen: list[int] = []
    path = D.locate(url=f"{http_server}/input.txt", progress=lambda done, total: seen.append(done))
    assert path == D.cache_path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == D.SHA256
    assert seen and seen[-1] == D.N_CHARS  # the progress callback saw every byte (ASCII text)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    assert D.locate(url="http://127.0.0.1:9/never-called") == path  # now served from the cache


def test_download_with_a_wrong_checksum_saves_nothing(tmp_path, http_server):
    dest = tmp_path / "cache" / "input.txt"
    with pytest.raises(D.DataError, match=r"was not saved.*--data PATH"):
        D.download(f"{http_server}/bad.txt", dest)
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_download_offline_or_missing_says_how_to_pass_a_file(tmp_path, http_server):
    with pytest.raises(D.DataError, match=r"cannot download.*ATTNREF_DATA"):
        D.download("http://127.0.0.1:9/input.txt", tmp_path / "x.txt", timeout=2)
    with pytest.raises(D.DataError, match=r"cannot download.*404"):
        D.download(f"{http_server}/missing.txt", tmp_path / "x.txt")


def test_the_bigram_table_is_a_distribution_in_every_row(shakespeare):
    counts = D.bigram_counts(shakespeare.train, shakespeare.vocab_size)
    assert counts.sum() == len(shakespeare.train) - 1
    for k in (1.0, 0.5, 0.01):
        table = D.bigram_table(counts, k)
        assert torch.allclose(table.sum(dim=1), torch.ones(65, dtype=torch.float64))
        assert bool((table > 0).all())  # every pair has a probability, seen or not
    with pytest.raises(ValueError, match="smoothing must be >= 0"):
        D.bigram_table(counts, -1.0)


def test_bigram_cross_entropy_by_hand():
    """``aaab`` counts a->a twice, a->b once, nothing after b; scored on ``aab`` and ``ba``."""
    fit, V = torch.tensor([0, 0, 0, 1]), 2
    add_one = D.bigram_cross_entropy(fit, torch.tensor([0, 0, 1]), V, 1.0)
    assert add_one == pytest.approx(-(math.log(3 / 5) + math.log(2 / 5)) / 2)
    counted = D.bigram_cross_entropy(fit, torch.tensor([0, 0, 1]), V, 0.0)
    assert counted == pytest.approx(-(math.log(2 / 3) + math.log(1 / 3)) / 2)
    assert D.bigram_table(D.bigram_counts(fit, V), 0.0)[1].tolist() == [0.0, 0.0]  # b: no row
    assert D.bigram_table(D.bigram_counts(fit, V), 1.0)[1].tolist() == [0.5, 0.5]
    assert D.bigram_cross_entropy(fit, torch.tensor([1, 0]), V, 0.0) == math.inf


def test_the_bigram_baseline_is_the_add_one_table_of_the_training_split(shakespeare):
    """Counted again here, pair by pair, with no tensor code of the module."""
    V, train, val = 65, shakespeare.train.tolist(), shakespeare.val.tolist()
    pairs = Counter(pairwise(train))
    row = Counter(train[:-1])
    expected = -sum(math.log((pairs[(a, b)] + 1) / (row[a] + V)) for a, b in pairwise(val)) / (
        len(val) - 1
    )
    baseline = D.bigram_val_loss(shakespeare)
    assert math.isfinite(baseline) and baseline == pytest.approx(expected, abs=1e-9)
    assert 2.481 < baseline < 2.483
    unseen = sum(1 for a, b in pairwise(val) if (a, b) not in pairs)
    assert unseen > 0  # why it needs smoothing: some validation pairs never occur in training
    with pytest.raises(ValueError, match="smoothing must be > 0"):
        D.bigram_val_loss(shakespeare, smoothing=0.0)


def test_the_bigram_baseline_barely_depends_on_the_added_count(shakespeare):
    values = [D.bigram_val_loss(shakespeare, k) for k in (0.1, 0.5, 1.0)]
    assert max(values) - min(values) < 0.003  # the docstring's claim


def test_the_bigram_baseline_is_not_a_lower_bound(shakespeare):
    baseline = D.bigram_val_loss(shakespeare)
    fitted = D.bigram_val_entropy(shakespeare)
    assert 2.36 < fitted < 2.38 and fitted < baseline - 0.1
    # the table counted on validation is the best any table P(next | current) does there
    counts = D.bigram_counts(shakespeare.val, 65)
    g = torch.Generator().manual_seed(0)
    val = shakespeare.val
    for _ in range(3):
        other = D.bigram_table(counts + torch.rand(65, 65, generator=g, dtype=torch.float64), 0.0)
        assert float(-torch.log(other[val[:-1], val[1:]]).mean()) > fitted


def test_the_bigram_baseline_is_almost_a_nat_under_the_unigram(shakespeare):
    baseline = D.bigram_val_loss(shakespeare)
    counts = torch.bincount(shakespeare.train, minlength=65).double()
    unigram = float(-torch.log((counts / counts.sum())[shakespeare.val]).mean())
    assert D.unigram_val_loss(shakespeare) == pytest.approx(unigram)
    assert baseline < unigram - 0.8  # the previous character is worth almost a nat


def test_batches_are_next_character_pairs(shakespeare):
    g = torch.Generator().manual_seed(0)
    x, y = D.get_batch(shakespeare.train, 4, 16, g)
    assert x.shape == y.shape == (4, 16)
    assert torch.equal(x[:, 1:], y[:, :-1])
    g2 = torch.Generator().manual_seed(0)
    assert torch.equal(D.get_batch(shakespeare.train, 4, 16, g2)[0], x)


def test_encode_rejects_unknown_characters(shakespeare):
    with pytest.raises(ValueError, match="not in the Shakespeare vocabulary"):
        shakespeare.vocab.encode("ß")


def test_cache_path_default(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert D.cache_path() == Path.home() / ".cache" / "attnref" / "tinyshakespeare.txt"
