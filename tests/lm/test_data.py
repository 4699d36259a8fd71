"""Tiny Shakespeare: facts, where it comes from, a real download over HTTP, the bigram
baseline."""

from __future__ import annotations

import hashlib
import http.client
import math
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
import torch

from attention_ref.lm import data as D
from tests.data_server import (
    INVALID_HOST_URL,
    UNRESOLVABLE_URL,
    DataServer,
    refused_url,
    silent_url,
)


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
    with pytest.raises(D.DataError, match=f"--data PATH .* put the file at {cached}"):
        D.locate(allow_download=False)
    with pytest.raises(D.DataError, match=r"points to .* which is not a file"):
        D.locate(tmp_path / "missing.txt")


@pytest.fixture
def server(shakespeare_path):
    """A real HTTP server on 127.0.0.1 serving the data, and the bad cases (`DataServer`)."""
    with DataServer(shakespeare_path.read_bytes()) as s:
        yield s


def test_download_verifies_and_writes_atomically(tmp_path, server, monkeypatch):
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    seen: list[int] = []
    path = D.locate(url=f"{server.url}/input.txt", progress=lambda done, total: seen.append(done))
    assert path == D.cache_path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == D.SHA256
    assert seen and seen[-1] == D.N_CHARS  # the progress callback saw every byte (ASCII text)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    assert D.locate(url="http://127.0.0.1:9/never-called") == path  # now served from the cache
    assert server.hits == ["/input.txt"]


def test_the_url_and_the_timeout_are_settings(tmp_path, server, monkeypatch):
    monkeypatch.delenv(D.URL_VAR, raising=False)
    monkeypatch.delenv(D.TIMEOUT_VAR, raising=False)
    assert (D.data_url(), D.data_timeout()) == (D.URL, D.DEFAULT_TIMEOUT)
    monkeypatch.setenv(D.TIMEOUT_VAR, "0.25")
    assert D.data_timeout() == 0.25
    for bad in ("0", "-1", "soon", "inf", "nan"):
        monkeypatch.setenv(D.TIMEOUT_VAR, bad)
        with pytest.raises(D.DataError, match=f"ATTNREF_DATA_TIMEOUT must be .* got '{bad}'"):
            D.data_timeout()
    monkeypatch.delenv(D.TIMEOUT_VAR)
    # read when the download happens: locate() with no url downloads from $ATTNREF_DATA_URL
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(D.URL_VAR, f"{server.url}/input.txt")
    assert D.locate() == D.cache_path() and server.hits == ["/input.txt"]


#: each bad answer of a server, and the words of its refusal
BAD_ANSWERS = {
    "/wrong": r"has sha256 [0-9a-f]{12}…, expected 86c4e6aa9db7…; it was not saved",
    "/cut": r": the connection was cut after 371,798 of 1,115,394 bytes;",
    "/cut-chunked": r": the connection was cut after [\d,]+ bytes;",
    "/missing": r": HTTP 404 Not Found;",
}


def refused_in_one_line(e: D.DataError, dest: Path) -> None:
    """The refusal is one line that says how to pass a local copy, and nothing is saved."""
    text = str(e)
    assert "\n" not in text
    assert f"pass a local copy with --data PATH or $ATTNREF_DATA, or put the file at {dest}" in text
    assert not dest.parent.exists() or list(dest.parent.iterdir()) == []


@pytest.mark.parametrize("path", BAD_ANSWERS)
def test_a_bad_answer_is_refused_in_one_line_and_saves_nothing(tmp_path, server, path):
    dest = tmp_path / "cache" / "input.txt"
    seen: list[int] = []
    with pytest.raises(D.DataError, match=BAD_ANSWERS[path]) as e:
        D.download(f"{server.url}{path}", dest, progress=lambda done, total: seen.append(done))
    refused_in_one_line(e.value, dest)
    assert bool(seen) is (path != "/missing")  # bytes came before the refusal, but for a 404


def test_a_cut_connection_is_no_os_error():
    """Why the cut cases need their own except: `http.client` raises `IncompleteRead`, an
    `HTTPException`, for a chunk cut short (and says nothing for a body shorter than its
    ``Content-Length``): before, it escaped the download's ``except OSError`` as a traceback."""
    assert not issubclass(http.client.IncompleteRead, OSError)


def test_no_network_is_refused_in_one_line(tmp_path):
    dest = tmp_path / "cache" / "input.txt"
    with pytest.raises(D.DataError, match=r": the connection was refused: no network") as e:
        D.download(refused_url(), dest)
    refused_in_one_line(e.value, dest)
    with pytest.raises(D.DataError, match=r": the host name does not resolve, no network\?") as e:
        D.download(UNRESOLVABLE_URL, dest)
    refused_in_one_line(e.value, dest)
    with pytest.raises(D.DataError, match=r": not a valid host name;") as e:
        D.download(INVALID_HOST_URL, dest)
    refused_in_one_line(e.value, dest)
    with pytest.raises(D.DataError, match=r": unknown url type: 'nowhere';") as e:
        D.download("nowhere", dest)
    refused_in_one_line(e.value, dest)


def test_a_server_that_never_answers_is_refused_after_the_timeout(tmp_path, server, monkeypatch):
    dest = tmp_path / "cache" / "input.txt"
    monkeypatch.setenv(D.TIMEOUT_VAR, "0.3")  # the setting, read at the download
    t0 = time.perf_counter()
    with silent_url() as url, pytest.raises(D.DataError, match=r"no answer within 0.3 s") as e:
        D.download(url, dest)
    assert time.perf_counter() - t0 < 5
    refused_in_one_line(e.value, dest)
    # one that stops in the middle: what it sent is not kept
    with pytest.raises(
        D.DataError, match=r"sent nothing for 0.2 s after [\d,]+ bytes \(\$ATTNREF_DATA_TIMEOUT"
    ) as e:
        D.download(f"{server.url}/stall", dest, timeout=0.2)
    refused_in_one_line(e.value, dest)


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
