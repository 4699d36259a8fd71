"""README.md, a newcomer's five minutes (issue 56), held to what it says.

* Its shape: under 200 lines, the Portuguese pointer first, its sections in order, the
  Quickstart's block exactly ``make demo`` and ``make test``.
* Its figures: the Quickstart's lines and the Measured table are what
  ``tools/readme_measured.py`` writes from the recordings (an edited README fails).
* Its commands: every ``attnref …`` line of its code blocks runs for real in a temporary folder
  (never ``--help`` for it), the training ones with a tiny model's options appended and a store
  of their own; the ``python tools/install_torch.py`` line as a dry run; every ``make TARGET``
  it names is a target (``make -n`` succeeds), and every path and link it names exists.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.book.test_named_paths import missing_paths
from tests.configs import TINY_ARGS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ATTNREF = str(Path(sys.executable).with_name("attnref"))
_spec = importlib.util.spec_from_file_location("readme_measured", ROOT / "tools/readme_measured.py")
assert _spec is not None and _spec.loader is not None
measured = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = measured  # its dataclass looks its module up
_spec.loader.exec_module(measured)

#: the README's sections, in the order a newcomer reads them
SECTIONS = [
    "Quickstart",
    "The things people type",
    "Where to read next",
    "Measured",
    "Contributing",
]
#: the commands that train or read trained runs: run last, on a tiny model, in a store of their own
TRAINING = ("train", "ablation")
READING_RUNS = ("report", "sample", "runs")
#: the cheap ones, run as written
AS_WRITTEN = ("explain", "exercise", "check", "params")
#: what a training command gets appended: the tests' tiny model, a few steps
TINY_TAIL = [*TINY_ARGS, "--max-steps", "4", "--eval-interval", "2", "--warmup-steps", "1"]
#: what the commands must not inherit: a server's store, make's jobserver
NOT_INHERITED = ("MLFLOW_TRACKING_URI", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")


def code_blocks(text: str) -> list[list[str]]:
    """The fenced ``bash`` blocks' lines, comments and blank lines left out."""
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)
    return [[ln.split(" #")[0].strip() for ln in b.splitlines() if ln.strip()] for b in blocks]


def commands(text: str, program: str) -> list[list[str]]:
    """Each code-block line that runs ``program``, as its words."""
    lines = [ln for block in code_blocks(text) for ln in block]
    return [shlex.split(ln) for ln in lines if ln.split()[0] == program]


def make_targets(text: str) -> set[str]:
    """Every ``make TARGET`` the README names, in code blocks and in inline code."""
    spans = re.findall(r"`(make [^`]+)`", text)
    lines = [" ".join(w) for w in commands(text, "make")] + spans
    return {ln.split()[1] for ln in lines}


def links(text: str) -> list[str]:
    """The relative links of the README's Markdown (``[words](path)``)."""
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]


def env_without(*names: str, **set_: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names} | set_


def attnref(words: list[str], cwd: Path, env: dict[str, str]) -> str:
    """``attnref WORDS`` run in ``cwd``; it must succeed, with no traceback."""
    done = subprocess.run(
        [ATTNREF, *words[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in said, (words, said[-3000:])
    return said


def fill_first_step(folder: Path) -> None:
    """A student's first step, by hand: ``Q`` of the first head, ``X @ W_Q``."""
    problem = json.loads((folder / "exercise.json").read_text(encoding="utf-8"))
    X, W = problem["X"], problem["heads"][0]["W_Q"]
    answer = json.loads((folder / "answer.json").read_text(encoding="utf-8"))
    answer["heads"][0]["Q"] = [
        [sum(x * w for x, w in zip(r, c, strict=True)) for c in zip(*W, strict=True)] for r in X
    ]
    (folder / "answer.json").write_text(json.dumps(answer), encoding="utf-8")


# --- shape ----------------------------------------------------------------------------------


def test_the_readme_is_under_200_lines_with_the_portuguese_pointer_first():
    lines = README.splitlines()
    assert len(lines) < 200
    assert lines[0] == "# attnref" and lines[2].startswith("Leia em português: [")


def test_the_sections_are_in_a_newcomers_order():
    assert re.findall(r"^## (.+)$", README, re.M) == SECTIONS


def test_the_quickstart_is_make_demo_and_make_test():
    quick = README.split("## Quickstart\n", 1)[1]
    assert code_blocks(quick)[0] == ["make demo", "make test"]


# --- figures --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(measured.BLOCKS))
def test_the_readmes_blocks_are_what_the_script_writes(name):
    written = measured.BLOCKS[name](ROOT)
    assert measured.block(README, name) == written
    # the control: a README with one figure changed is not what the script writes
    edited = re.sub(r"\d(?=\D*$)", lambda m: str((int(m[0]) + 1) % 10), written, count=1)
    assert measured.block(measured.with_block(README, edited, name), name) != written


def test_the_table_has_a_row_per_recording_each_saying_where_and_when():
    rows = measured.measured_rows()
    assert len({r.path for r in rows}) >= 10 and all((ROOT / r.path).is_file() for r in rows)
    assert all(r.machine and r.date and r.commit for r in rows)
    table = measured.measured_table()
    assert len(table.splitlines()) == len(rows) + 2


def test_a_recording_without_a_commit_says_so(tmp_path):
    doc = json.loads((ROOT / "docs/results/benchmarks/sampling.json").read_text("utf-8"))
    (tmp_path / "docs/results/benchmarks").mkdir(parents=True)
    (tmp_path / "docs/results/benchmarks/sampling.json").write_text(json.dumps(doc), "utf-8")
    row = measured.benchmark(tmp_path, "sampling", "sampling", measured.sampling)
    assert row.commit == measured.NOT_RECORDED and row.date.endswith(" UTC")
    assert measured.short_commit("0123456789abcdef-dirty") == "`0123456` + changes"
    assert measured.short_commit(None) == measured.NOT_RECORDED


def test_a_block_is_rewritten_alone_and_a_missing_one_is_refused():
    text = "a\n<!-- measured:start -->\nold\n<!-- measured:end -->\nb\n"
    assert measured.with_block(text, "new\n") == text.replace("old", "new")
    with pytest.raises(ValueError, match="found 0"):
        measured.block("no markers")
    with pytest.raises(ValueError, match="found 2"):
        measured.with_block(text + text, "new\n")


# --- commands, targets, paths ----------------------------------------------------------------


def test_no_command_stands_in_with_help():
    shown = commands(README, "attnref")
    assert len(shown) >= 10 and not [c for c in shown if {"--help", "-h"} & set(c)]
    # every code block is a bash block these tests read: no command hides in another fence
    fences = re.findall(r"^```(.*)$", README, re.M)
    assert set(fences[::2]) == {"bash"} and set(fences[1::2]) == {""}
    known = (*AS_WRITTEN, *TRAINING, *READING_RUNS)
    assert [c for c in shown if c[1] not in known] == []  # each has a plan below


def test_the_cheap_commands_run_as_written(tmp_path):
    env = env_without(*NOT_INHERITED)
    ran = 0
    for words in commands(README, "attnref"):
        if words[1] not in AS_WRITTEN:
            continue
        if words[1] == "check":
            fill_first_step((tmp_path / words[2]).parent)
        said = attnref(words, tmp_path, env)
        ran += 1
        if "--lang" in words:
            assert "Atenção" in said or "atenção" in said, said[:500]
    assert ran >= 5


@pytest.mark.slow
def test_the_training_commands_run_on_a_tiny_model(tmp_path, migrated_store, shakespeare_path):
    """train, ablation on the tests' tiny model (a few steps), then report, sample and runs on
    what they recorded: about a minute on 2 cores."""
    shutil.copy(migrated_store, tmp_path / "mlflow.db")  # the default store, already migrated
    env = env_without(*NOT_INHERITED, ATTNREF_DATA=str(shakespeare_path))
    shown = [c for c in commands(README, "attnref") if c[1] in (*TRAINING, *READING_RUNS)]
    assert [c[1] for c in shown] == ["train", "train", "ablation", "report", "sample", "runs"]
    for words in shown:
        tail = TINY_TAIL if words[1] in TRAINING else []
        said = attnref([*words, *tail], tmp_path, env)
        if words[1] == "runs":
            assert "q03-none" in said and "FINISHED" in said.upper(), said[-2000:]


def test_the_install_line_runs_as_a_dry_run():
    (line,) = commands(README, "python")
    assert line[1] == "tools/install_torch.py"
    done = subprocess.run(
        [sys.executable, *line[1:], "--dry-run"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0 and "install_torch: installing torch" in done.stdout, done


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_every_make_target_named_is_a_target():
    targets = make_targets(README)
    assert {"demo", "test", "test-soak", "lint", "ui", "docs"} <= targets
    env = env_without(*NOT_INHERITED)
    for target in sorted(targets):
        done = subprocess.run(["make", "-n", target], cwd=ROOT, env=env, capture_output=True)
        assert done.returncode == 0, (target, done.stderr.decode()[-500:])
    # the control: a target that is not there fails the same check
    assert subprocess.run(
        ["make", "-n", "no-such-target"], cwd=ROOT, capture_output=True
    ).returncode


def test_every_path_and_link_named_exists():
    assert missing_paths(README) == []
    named = links(README)
    assert "docs/api.md" in named and all((ROOT / t.split("#")[0]).exists() for t in named)
    # the control: a page that is not there is found
    assert missing_paths("see `docs/nowhere.md`") == ["docs/nowhere.md"]
    assert not (ROOT / links("[x](docs/nowhere.md)")[0]).exists()
