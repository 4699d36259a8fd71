"""Tiny Shakespeare at the character level: locate or download, verify, encode, split, batch.

Where the text comes from, in order:

1. an explicit path (``attnref train --data PATH``);
2. the environment variable ``ATTNREF_DATA``;
3. the user cache (``$XDG_CACHE_HOME/attnref/tinyshakespeare.txt``, default ``~/.cache``);
4. a download from the public char-rnn URL, verified against its sha256 and written
   atomically into the cache.

Loading asserts the facts of the data set: 1,115,394 characters, 65 distinct, a 90/10 split
into 1,003,854 training and 111,540 validation tokens.
"""

from __future__ import annotations

import hashlib
import http.client
import math
import os
import socket
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
N_CHARS = 1_115_394
VOCAB_SIZE = 65
N_TRAIN = 1_003_854
N_VAL = 111_540
ENV_VAR = "ATTNREF_DATA"
#: the download's address and patience, settings of the environment (`data_url`, `data_timeout`)
URL_VAR = "ATTNREF_DATA_URL"
TIMEOUT_VAR = "ATTNREF_DATA_TIMEOUT"
DEFAULT_TIMEOUT = 30.0
TRAIN_FRACTION = 0.9


class DataError(ValueError):
    """The data cannot be found, fetched or trusted; the message says what to do."""


def cache_path() -> Path:
    """``$XDG_CACHE_HOME/attnref/tinyshakespeare.txt`` (``~/.cache`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnref" / "tinyshakespeare.txt"


def data_url() -> str:
    """Where the download comes from: ``$ATTNREF_DATA_URL``, else the public `URL` (the tests
    stand a server on 127.0.0.1 in for it)."""
    return os.environ.get(URL_VAR) or URL


def data_timeout() -> float:
    """Seconds the download waits for the server to answer or to send more:
    ``$ATTNREF_DATA_TIMEOUT``, else `DEFAULT_TIMEOUT`."""
    value = os.environ.get(TIMEOUT_VAR)
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise DataError(f"{TIMEOUT_VAR} must be a number of seconds above 0, got {value!r}")
    return seconds


def how_to_pass(dest: Path) -> str:
    """The end of every refusal: the ways to hand attnref a copy that is already here."""
    return f"pass a local copy with --data PATH or ${ENV_VAR}, or put the file at {dest}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _reason(e: BaseException, seconds: float) -> str:
    """Why a download failed, in a few words: an HTTP status, no answer in time, a refused
    connection, a host name that does not resolve, or the error's own."""
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {_one_line(str(e.reason))}"
    cause = e.reason if isinstance(e, urllib.error.URLError) else e
    if isinstance(cause, TimeoutError):
        return f"no answer within {seconds:g} s (${TIMEOUT_VAR} sets the wait)"
    if isinstance(cause, ConnectionRefusedError):
        return "the connection was refused: no network, or no server there"
    if isinstance(cause, socket.gaierror):
        return f"the host name does not resolve, no network? ({cause.strerror or cause})"
    if isinstance(cause, UnicodeError):  # a label too long: refused before any look-up
        return "not a valid host name"
    if isinstance(cause, OSError) and cause.strerror:
        return _one_line(cause.strerror)
    return _one_line(str(cause)) or type(cause).__name__


def download(
    url: str | None,
    dest: Path,
    *,
    sha256: str = SHA256,
    timeout: float | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> Path:
    """Fetch ``url`` (``None``: `data_url`) into ``dest`` atomically, verified against
    ``sha256``; wait at most ``timeout`` seconds (``None``: `data_timeout`) for each answer.

    The bytes go to a temporary file beside ``dest`` and are renamed into place only when all
    that the server announced came and the checksum matches, so a refused, cut, late or
    corrupted download never leaves a file behind. Every failure is a `DataError` of one line
    that says how to pass a local copy instead. ``progress(done, total)`` is called as bytes
    arrive.
    """
    url = data_url() if url is None else url
    seconds = data_timeout() if timeout is None else timeout

    def refusal(why: str) -> DataError:
        return DataError(f"cannot download Tiny Shakespeare from {url}: {why}; {how_to_pass(dest)}")

    try:  # the public https URL, $ATTNREF_DATA_URL's, or a test's server
        response = urllib.request.urlopen(url, timeout=seconds)
    except (OSError, http.client.HTTPException, ValueError) as e:  # URLError is an OSError
        raise refusal(_reason(e, seconds)) from None
    with response:
        total = response.headers.get("Content-Length")
        total_n = int(total) if total and total.isdigit() else None
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=".download-", dir=dest.parent)
        except OSError as e:
            raise DataError(
                f"cannot save Tiny Shakespeare in {dest.parent} ({_reason(e, seconds)}); "
                f"pass a local copy with --data PATH or ${ENV_VAR}"
            ) from None
        tmp = Path(tmp_name)
        h = hashlib.sha256()
        done = 0
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := response.read(1 << 16):
                    out.write(chunk)
                    h.update(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total_n)
            if total_n is not None and done < total_n:  # http.client ends early without a word
                raise refusal(f"the connection was cut after {done:,} of {total_n:,} bytes")
            if h.hexdigest() != sha256:
                raise DataError(
                    f"the file downloaded from {url} has sha256 {h.hexdigest()[:12]}…, expected "
                    f"{sha256[:12]}…; it was not saved; {how_to_pass(dest)}"
                )
            os.replace(tmp, dest)
        except TimeoutError:
            why = f"the server sent nothing for {seconds:g} s after {done:,} bytes"
            raise refusal(f"{why} (${TIMEOUT_VAR} sets the wait)") from None
        except (ConnectionError, http.client.IncompleteRead):  # IncompleteRead is no OSError
            raise refusal(f"the connection was cut after {done:,} bytes") from None
        except (OSError, http.client.HTTPException) as e:
            raise refusal(_reason(e, seconds)) from None
        finally:
            tmp.unlink(missing_ok=True)
    return dest


def locate(
    path: str | Path | None = None,
    *,
    url: str | None = None,
    allow_download: bool = True,
    progress: Callable[[int, int | None], None] | None = None,
) -> Path:
    """The data file: ``path``, else ``$ATTNREF_DATA``, else the cache, else a download from
    ``url`` (``None``: `data_url`)."""
    for given, origin in ((path, "--data"), (os.environ.get(ENV_VAR), ENV_VAR)):
        if given:
            p = Path(given).expanduser()
            if not p.is_file():
                raise DataError(f"{origin} points to {p}, which is not a file")
            return p
    cached = cache_path()
    if cached.is_file():
        return cached
    if not allow_download:
        raise DataError(f"Tiny Shakespeare is not in the cache; {how_to_pass(cached)}")
    return download(url, cached, progress=progress)


@dataclass(frozen=True)
class Vocab:
    """The characters of the text, sorted: index ``i`` is ``chars[i]``."""

    chars: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stoi", {c: i for i, c in enumerate(self.chars)})

    def __len__(self) -> int:
        return len(self.chars)

    def unknown(self, s: str) -> list[str]:
        """The characters of ``s`` outside the vocabulary, sorted."""
        stoi: dict[str, int] = self._stoi  # type: ignore[attr-defined]
        return sorted({c for c in s if c not in stoi})

    def encode(self, s: str) -> list[int]:
        """Characters -> indices; ``ValueError`` for a character outside the vocabulary."""
        unknown = self.unknown(s)
        if unknown:
            raise ValueError(f"characters not in the Shakespeare vocabulary: {unknown!r}")
        stoi: dict[str, int] = self._stoi  # type: ignore[attr-defined]
        return [stoi[c] for c in s]

    def decode(self, ids: list[int]) -> str:
        """Indices -> characters."""
        return "".join(self.chars[i] for i in ids)


@dataclass(frozen=True)
class CharData:
    """The encoded text, its vocabulary and the 90/10 split."""

    text_sha256: str
    vocab: Vocab
    train: Tensor  # (N_TRAIN,) int64
    val: Tensor  # (N_VAL,) int64
    source: str

    @property
    def vocab_size(self) -> int:
        """Number of distinct characters (65)."""
        return len(self.vocab)

    @property
    def smallest_split(self) -> int:
        """Tokens in the smaller split: a block must fit in it."""
        return min(len(self.train), len(self.val))


def load(path: Path, *, verify: bool = True) -> CharData:
    """Read, check and encode Tiny Shakespeare; the first 90 % trains, the last 10 % validates.

    ``verify`` asserts the data set's facts (sha256, length, vocabulary, split sizes); tests
    pass ``verify=False`` to use a small text of their own.
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read {path} ({e.strerror or e})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{path} is not Tiny Shakespeare: not UTF-8 text") from None
    digest = hashlib.sha256(raw).hexdigest()
    vocab = Vocab(tuple(sorted(set(text))))
    ids = torch.tensor(vocab.encode(text), dtype=torch.long)
    n_train = int(TRAIN_FRACTION * len(ids))
    data = CharData(digest, vocab, ids[:n_train], ids[n_train:], str(path))
    if verify:
        facts = {
            "sha256": (digest, SHA256),
            "characters": (len(text), N_CHARS),
            "vocabulary": (len(vocab), VOCAB_SIZE),
            "training tokens": (len(data.train), N_TRAIN),
            "validation tokens": (len(data.val), N_VAL),
        }
        for name, (got, want) in facts.items():
            if got != want:
                raise DataError(f"{path} is not Tiny Shakespeare: {name} {got}, expected {want}")
    return data


def get_batch(
    split: Tensor, batch_size: int, block_size: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """``batch_size`` random windows: inputs ``x[t]`` and next-character targets ``x[t+1]``."""
    starts = torch.randint(len(split) - block_size, (batch_size,), generator=generator)
    x = torch.stack([split[s : s + block_size] for s in starts.tolist()])  # (B, T)
    y = torch.stack([split[s + 1 : s + 1 + block_size] for s in starts.tolist()])  # (B, T)
    return x, y


#: the add-k of `bigram_val_loss`: add-one (Laplace) smoothing over the whole table
BIGRAM_SMOOTHING = 1.0


def bigram_counts(tokens: Tensor, vocab_size: int) -> Tensor:
    """``C[a, b]``: how often character ``b`` follows ``a`` in ``tokens``; (V, V), float64."""
    counts = torch.zeros(vocab_size, vocab_size, dtype=torch.float64)
    counts.index_put_(
        (tokens[:-1], tokens[1:]),
        torch.ones(len(tokens) - 1, dtype=torch.float64),
        accumulate=True,
    )
    return counts


def bigram_table(counts: Tensor, smoothing: float = BIGRAM_SMOOTHING) -> Tensor:
    r"""The bigram model ``P(b | a)`` from counts, add-``k`` smoothed (``k > 0``: rows sum to 1).

    $$
    P(b \mid a) = \frac{C[a, b] + k}{\sum_{b'} C[a, b'] + k V}
    $$

    ``k = smoothing`` is added to every cell of the table, seen or not, so with ``k > 0`` each
    row is a probability distribution over the ``V`` characters. With ``k = 0`` it is the
    maximum-likelihood table: a pair never counted has probability 0, and a character never
    followed by anything keeps a row of zeros (no distribution; nothing can be scored with it).
    """
    if not smoothing >= 0:
        raise ValueError(f"smoothing must be >= 0, got {smoothing}")
    smoothed = counts + smoothing
    totals = smoothed.sum(dim=1, keepdim=True)  # (V, V) -> (V, 1)
    empty = totals == 0  # only with k = 0: a character never followed by anything
    return torch.where(empty, 0.0, smoothed / torch.where(empty, 1.0, totals))


def bigram_cross_entropy(
    fit: Tensor, evaluate: Tensor, vocab_size: int, smoothing: float = BIGRAM_SMOOTHING
) -> float:
    r"""Cross-entropy (nats/char) on ``evaluate`` of the bigram table counted on ``fit``.

    $$
    -\frac{1}{N-1} \sum_{t=1}^{N-1} \ln P(x_t \mid x_{t-1})
    $$

    with ``P`` = `bigram_table` of the counts of ``fit``. Infinite when ``smoothing = 0`` and
    ``evaluate`` holds a pair that ``fit`` never has.
    """
    probs = bigram_table(bigram_counts(fit, vocab_size), smoothing)
    return float(-torch.log(probs[evaluate[:-1], evaluate[1:]]).mean())


def bigram_val_loss(data: CharData, smoothing: float = BIGRAM_SMOOTHING) -> float:
    """The **bigram baseline**: validation cross-entropy (nats/char) of the bigram model
    counted on the training split.

    ``P(b | a) = (C_train[a, b] + k) / (C_train[a] + k V)`` (`bigram_table`) with add-one
    (Laplace) smoothing, ``k = 1``: every pair, seen or not, gets one more count, so the pairs
    never seen in training (Tiny Shakespeare's validation split has some) get a probability and
    every row still sums to 1. The choice of ``k`` matters little: between 0.1 and 1 it moves
    the value by less than 0.003 nats (tested).

    What it is: the cross-entropy that a model which sees only the current character can at
    best approach by learning the same table from the training split. What it is not: a lower
    bound. The table counted on the validation split itself (`bigram_val_entropy`) does better.
    """
    if smoothing <= 0:
        raise ValueError(
            f"smoothing must be > 0 (pairs never seen in training would cost infinity), "
            f"got {smoothing}"
        )
    return bigram_cross_entropy(data.train, data.val, data.vocab_size, smoothing)


def bigram_val_entropy(data: CharData) -> float:
    """Validation cross-entropy of the bigram table counted on the validation split itself.

    ``P(b | a) = C_val[a, b] / C_val[a]`` (no smoothing: every pair of the split is counted in
    it), so this is the conditional entropy ``H(next | current)`` of the validation split: the
    lowest cross-entropy any table ``P(next | current)`` reaches there (Gibbs' inequality), so
    never above `bigram_val_loss`: that one is a baseline to approach, not a bound.
    """
    return bigram_cross_entropy(data.val, data.val, data.vocab_size, smoothing=0.0)


def unigram_val_loss(data: CharData) -> float:
    """Validation cross-entropy (nats) of character frequencies counted on the training split.

    ``P(b) = count(b) / N_train``: what a model that ignores even the current character can do.
    """
    counts = torch.bincount(data.train, minlength=data.vocab_size).double()
    p = counts / counts.sum()
    return float(-(torch.log(p[data.val])).mean())
