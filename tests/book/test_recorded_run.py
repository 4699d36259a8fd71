"""Page 7's "recorded run" table (`attnref_book.recorded_run`): one reading of the
recording, said in each language; a ``-dirty`` commit is said only with what git confirms of
the tree (the commit that added the recording, the code it changed, the training's code the same
at both commits)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from attnref_book.recorded_run import (
    TRAINING_CODE,
    commit_cell,
    machine_parts,
    recorded_run_rows,
    today_path,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"


def recording() -> tuple[dict, dict]:
    read = lambda name: json.loads((RESULTS / name).read_text(encoding="utf-8"))  # noqa: E731
    return read("comparison.json"), read("provenance.json")


def test_a_dirty_commit_with_nothing_said_of_its_tree_is_refused():
    with pytest.raises(ValueError, match="says nothing of its tree"):
        commit_cell("fd8c5922a3a051f3c14310d4af6bc492d58c0175-dirty", None, "en")
    with pytest.raises(ValueError, match="is not 'CPU, N threads"):
        machine_parts("AMD EPYC, bf16 instructions: avx512_bf16")  # no thread count
    # a clean commit needs nothing more
    assert commit_cell("fd8c592", None, "pt") == "`fd8c592`"


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def tree_facts(start: str, end: str) -> tuple[set[str], bool]:
    """What git says between two commits: the code files (outside ``tests/``) that differ, and
    whether the training's code (`TRAINING_CODE`) is the same at both."""
    names = git("diff", "--name-only", start, end, "--", "*.py", ":!tests").stdout.split()
    same = git("diff", "--quiet", start, end, "--", *TRAINING_CODE).returncode == 0
    return set(names), same


def test_what_the_page_says_of_the_dirty_tree_is_what_git_says():
    doc, about = recording()
    start = doc["git_commit"].removesuffix("-dirty")
    if git("cat-file", "-e", f"{start}^{{commit}}").returncode != 0:
        pytest.skip(f"this clone does not hold {start[:7]} (a shallow clone)")
    tree = about["tree"]
    # the commit that added the recording is the first to hold its parent run's id
    where = ("--", "docs/results/comparison.json")
    added = git("log", "--format=%h", "--abbrev=7", "-S", doc["parent_run_id"], *where)
    added = added.stdout.split()
    assert added[-1] == tree["committed_in"], added
    assert tree_facts(start, tree["committed_in"]) == (set(tree["code_changed"]), True)
    # the control: from the recording to today the training's code changed, and it is seen
    changed, same = tree_facts(start, "HEAD")
    assert not same and any(c.startswith("attention_ref/lm/") for c in changed)


def test_the_table_says_the_same_recording_in_both_languages():
    doc, about = recording()
    (en_head, _), en = recorded_run_rows(doc, about, "en")
    (pt_head, _), pt = recorded_run_rows(doc, about, "pt")
    assert (en_head, pt_head) == ("recorded run", "execução registrada")
    assert len(en) == len(pt)
    for (_, e), (_, p) in zip(en, pt, strict=True):
        # the same code spans (ids, commands, files) in the same order in each language
        assert e.split("`")[1::2] == p.split("`")[1::2], (e, p)
    when_en, when_pt = en[2][1], pt[2][1]
    load = about["load_1min_before"]
    assert f"load {load:.2f} before" in when_en and f"{load:.2f}".replace(".", ",") in when_pt
    # --precision auto on a CPU with bf16 instructions is bf16, and the row says so
    assert "avx512_bf16" in about["machine"] and "so in bf16 (`--precision auto`)" in when_en
    commit = en[3][1]
    assert commit.startswith(f"`{doc['git_commit']}`") and "86e840b" in commit
    # each file the commit changed, by its path today (the recording keeps the paths of then)
    assert all(f"`{today_path(f)}`" in commit for f in about["tree"]["code_changed"])
    assert all((ROOT / today_path(f)).exists() for f in about["tree"]["code_changed"])
    moved = [f for f in about["tree"]["code_changed"] if today_path(f) != f]
    assert ("it has moved since" in commit) == bool(moved)
    assert today_path("attention_ref/book/claims.py") == "book/attnref_book/claims.py"
    assert today_path("attention_ref/lm/model.py") == "attention_ref/lm/model.py"
    # the control: a recording made on a CPU without bf16 instructions says fp32
    fp32 = dict(about, machine="AMD EPYC, 2 threads, bf16 instructions: none")
    assert "so in fp32" in recorded_run_rows(doc, fp32, "en")[1][2][1]
