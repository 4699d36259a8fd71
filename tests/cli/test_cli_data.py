"""The data the way users get it, through the real CLI: no ``$ATTNREF_DATA``, an empty user
cache, and ``$ATTNREF_DATA_URL`` pointing at a real HTTP server on 127.0.0.1 in place of the
public URL (`tests.data_server`).

``attnref train`` downloads Tiny Shakespeare once (its progress line), verifies it, trains, and
reads the cache from then on, the server gone; every way a download goes wrong is one line on
stderr that says how to pass a local copy, exit code 2, no traceback, nothing in the cache and
no run in the store. ``make data`` (`tools/get_data.py`) does the same download alone.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest

from attention_ref.cli.main import main
from attention_ref.lm import data as D
from tests.data_server import UNRESOLVABLE_URL, DataServer, refused_url, silent_url

ROOT = Path(__file__).resolve().parents[2]
ATTNREF = str(Path(sys.executable).with_name("attnref"))
TRAIN = ["train", "--quick", "--max-steps", "2"]
DOWNLOADING = "downloading Tiny Shakespeare (1.1 MB, verified by sha256)…"


@pytest.fixture
def user(store, tmp_path, monkeypatch) -> Path:
    """A user's machine: no ``$ATTNREF_DATA``, an empty cache in ``tmp_path`` (returned), a
    fresh store (the ``store`` fixture), no proxy between attnref and 127.0.0.1."""
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    monkeypatch.delenv(D.TIMEOUT_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("no_proxy", "*")
    return tmp_path / "xdg"


@pytest.fixture
def server(shakespeare_path):
    """A real HTTP server on 127.0.0.1 serving a copy of the data (and the bad cases)."""
    with DataServer(shakespeare_path.read_bytes()) as s:
        yield s


def files_in(folder: Path) -> list[Path]:
    """Every file under ``folder`` (none where it does not exist): attnref's folder of the
    cache (matplotlib keeps its font list in the user cache too)."""
    return sorted(p for p in folder.rglob("*") if p.is_file())


def runs() -> list:
    exp = mlflow.get_experiment_by_name("shakespeare")
    return [] if exp is None else mlflow.search_runs([exp.experiment_id], output_format="list")


def test_train_downloads_once_then_reads_the_cache_without_the_server(
    user, server, monkeypatch, capsys
):
    monkeypatch.setenv(D.URL_VAR, f"{server.url}/input.txt")
    assert main(TRAIN) == 0
    out = capsys.readouterr().out
    assert DOWNLOADING in out.splitlines()
    assert server.hits == ["/input.txt"]  # downloaded once
    cached = user / "attnref" / "tinyshakespeare.txt"
    assert files_in(cached.parent) == [cached]  # the file, and no temporary one beside it
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == D.SHA256
    assert "1,115,394 characters read" in out
    server.stop()  # the second run must not need it
    assert main(TRAIN) == 0
    out = capsys.readouterr().out
    assert DOWNLOADING not in out and "1,115,394 characters read" in out
    assert server.hits == ["/input.txt"]
    assert [r.info.status for r in runs()] == ["FINISHED", "FINISHED"]


#: each way a download goes wrong (a path of `DataServer`, or a URL of its own), and the words
#: of its refusal
REFUSALS = {
    "wrong checksum": ("/wrong", "has sha256 "),
    "cut connection": ("/cut", ": the connection was cut after 371,798 of 1,115,394 bytes;"),
    "cut chunk": ("/cut-chunked", ": the connection was cut after "),
    "HTTP error": ("/missing", ": HTTP 404 Not Found;"),
    "connection refused": (None, ": the connection was refused: no network, or no server there;"),
    "unresolvable host": (UNRESOLVABLE_URL, ": the host name does not resolve, no network? "),
    "timeout": ("silent", ": no answer within 0.5 s ($ATTNREF_DATA_TIMEOUT sets the wait);"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_failed_download_is_one_line_exit_2_and_nothing_cached(
    case, user, server, monkeypatch, capsys
):
    where, words = REFUSALS[case]
    monkeypatch.setenv(D.TIMEOUT_VAR, "0.5")  # the timeout's case waits this long, no more
    with silent_url() as silent:
        url = {"silent": silent, None: refused_url()}.get(where, where)
        if url.startswith("/"):
            url = server.url + url
        monkeypatch.setenv(D.URL_VAR, url)
        code = main(TRAIN)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("attnref: error: ")  # one line
    assert words in err
    cached = user / "attnref" / "tinyshakespeare.txt"
    assert err.endswith(
        f"; pass a local copy with --data PATH or $ATTNREF_DATA, or put the file at {cached}\n"
    )
    assert files_in(cached.parent) == []  # nothing half-written left in the cache
    assert runs() == []  # refused before any run began


def test_a_cut_chunk_through_the_installed_command_shows_no_traceback(tmp_path, server):
    """The case that escaped before (`http.client.IncompleteRead` is no OSError), through the
    console script as a user runs it."""
    env = {k: v for k, v in os.environ.items() if k != D.ENV_VAR}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "no_proxy": "*"}
    env[D.URL_VAR] = f"{server.url}/cut-chunked"
    done = subprocess.run(
        [ATTNREF, *TRAIN, "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert ": the connection was cut after " in done.stderr
    assert files_in(tmp_path / "xdg" / "attnref") == []


def test_make_data_downloads_once_and_says_where(tmp_path, server):
    """``make data`` runs `tools/get_data.py`: the download alone, then the cache from then on;
    a refusal is one line, exit 2."""
    env = {k: v for k, v in os.environ.items() if k != D.ENV_VAR}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "no_proxy": "*"}
    env[D.URL_VAR] = f"{server.url}/input.txt"
    cached = tmp_path / "xdg" / "attnref" / "tinyshakespeare.txt"

    def get_data(url: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "tools" / "get_data.py")],
            env={**env, D.URL_VAR: url},
            capture_output=True,
            text=True,
            timeout=120,
        )

    missing = get_data(f"{server.url}/missing")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert (
        ": HTTP 404 Not Found;" in missing.stderr and f"put the file at {cached}" in missing.stderr
    )
    first = get_data(f"{server.url}/input.txt")
    assert first.returncode == 0, first.stderr
    said = f"Tiny Shakespeare (1,115,394 characters, sha256 verified): {cached}"
    assert DOWNLOADING in first.stdout and said in first.stdout
    server.stop()
    again = get_data(f"{server.url}/input.txt")
    assert again.returncode == 0 and DOWNLOADING not in again.stdout and said in again.stdout
    assert server.hits == ["/missing", "/input.txt"]
