"""README.md's figures, written from the recordings: its "Measured" table and its Quickstart's.

The table has one row per recording the README cites (``docs/results/``), each as the recording
holds it: what it measured (its headline figures, computed here from the file), the machine,
the date and the commit, or "not recorded" where the file does not say. No history: a new
recording replaces its row, and git keeps the old ones. The Quickstart's lines say how long
``make demo`` and ``make test`` took where they were recorded, and what ``make demo``
downloads.

README.md holds each between its markers (``<!-- measured:start -->`` … ``<!-- measured:end
-->``, ``<!-- quickstart:start -->`` … ``<!-- quickstart:end -->``); ``tests/test_readme.py``
holds them equal to this script's output.

    python tools/readme_measured.py                      # print the table
    python tools/readme_measured.py --block quickstart   # print the Quickstart's lines
    python tools/readme_measured.py --write              # rewrite both blocks of README.md
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout: the package beside it
    sys.path.insert(0, str(ROOT))

from attention_ref.classroom.hosting.server import DEFAULT_WORKERS  # noqa: E402
from attention_ref.experiments.findings import arm_seeds, rows_from_comparison  # noqa: E402
from attention_ref.render import markdown_table  # noqa: E402
from attnref_book.conditions import QUIET_LOAD_PER_CPU, load_reading, load_said  # noqa: E402
from attnref_book.speed_claims import (  # noqa: E402
    latency_claims,
    sampling_claims,
    scaling_claims,
    throughput_claims,
)

#: what a cell says where the recording does not hold the fact
NOT_RECORDED: Final = "not recorded"
#: the README's table block
BLOCK: Final = "measured"
#: where ``benchmarks/install_size.py`` records what ``make demo`` downloads and installs
INSTALL_SIZE: Final = "benchmarks/results/install_size.json"
#: the arms of an ablation by their words (Q03's, then the variants')
ARM_WORDS: Final = {
    "multihead": "with attention",
    "none": "without",
    "uniform": "uniform",
    "mha": "as it is",
    "mqa": "one K/V head",
    "rope": "RoPE",
    "window": "a window",
}


@dataclass(frozen=True)
class Row:
    """One recording: its file (relative to the checkout), what it measured, where and when."""

    path: str
    what: str
    result: str
    machine: str
    date: str
    commit: str

    def cells(self) -> list[str]:
        """The row's cells, the recording linked by its path."""
        link = f"[{self.what}]({self.path})"
        return [link, self.result, self.machine, self.date, self.commit]


def read(root: Path, path: str) -> Any:  # Any: whatever the JSON file holds
    """A recording, parsed."""
    return json.loads((root / path).read_text(encoding="utf-8"))


def short_commit(commit: str | None) -> str:
    """A commit as the table writes it: 7 hex digits, ``+ changes`` for a ``-dirty`` tree."""
    if not commit:
        return NOT_RECORDED
    dirty = commit.endswith("-dirty")
    return f"`{commit.removesuffix('-dirty')[:7]}`" + (" + changes" if dirty else "")


def minutes(seconds: float) -> str:
    """``1821`` → ``"30 min 21 s"``."""
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s"


def bench_machine(doc: Mapping[str, Any]) -> str:
    """A benchmark's machine (`benchmarks/_bench.py`'s ``machine``) in a few words."""
    m = doc["machine"]
    gpu = f", {m['gpu']}" if m.get("gpu") else ""
    return f"{m['cpu']}, {m['cpus']} cores{gpu}, torch {m['torch']}"


def ablation(root: Path, folder: str, command_words: str) -> Row:
    """An ablation's export (``comparison.json`` and ``provenance.json`` in ``folder``): each
    arm's best validation loss, the mean over its seeds, and the training's total time."""
    path = f"{folder}/comparison.json"
    doc, prov = read(root, path), read(root, f"{folder}/provenance.json")
    rows = rows_from_comparison(doc)
    arms = arm_seeds(rows)
    seeds = {a.n for a in arms}
    best = ", ".join(f"{ARM_WORDS.get(a.attention, a.attention)} {a.best.mean:.4f}" for a in arms)
    total = math.fsum(r.wall_time_s for r in rows)
    committed = prov.get("tree", {}).get("committed_in")
    commit = short_commit(doc.get("git_commit"))
    if committed and commit != NOT_RECORDED:
        commit += f" (recorded in `{committed}`)"
    n = "/".join(str(s) for s in sorted(seeds))
    return Row(
        path,
        f"`{prov['command']}`",
        f"{command_words}: best validation loss, mean of {n} seeds: {best}; "
        f"{minutes(total)} of training in all",
        prov["machine"],
        f"{prov['date_utc']} UTC",
        commit,
    )


def benchmark(root: Path, name: str, what: str, result: Callable[[Any], str]) -> Row:
    """A benchmark of ``benchmarks/``, recorded in ``docs/results/benchmarks/NAME.json``."""
    path = f"docs/results/benchmarks/{name}.json"
    doc = read(root, path)
    m = doc["machine"]
    date = f"{m['date_utc']} UTC"
    said = result(doc) + quiet_note(name, doc)
    return Row(path, what, said, bench_machine(doc), date, short_commit(m.get("commit")))


def time_to_quality(doc: Mapping[str, Any]) -> str:
    """The recorded target line's first sentence (the level, the times), and the path it
    measured: the benchmark calls ``train()`` itself, without MLflow or the CLI."""
    line = str(doc["target"]["line"]).split("; val")[0]
    flags = ", ".join(doc["machine"].get("cpu_bf16_flags") or ()) or "no bf16 instructions"
    return (
        f"{line} (attnref in {doc['precision']} on a CPU with {flags}; "
        "`train()` called directly: no MLflow, no CLI start-up)"
    )


def throughput(doc: Mapping[str, Any]) -> str:
    """attnref's median at its ``auto`` precision, then the book's ratios, each like with
    like (`attnref_book.speed_claims.throughput_claims`)."""
    arm = doc["arms"]["attnref"]
    claims = " ".join(throughput_claims(doc))
    return (
        f"{arm['median']:,.0f} tokens/s ({doc['precision']}, batch {doc['args']['batch_size']}, "
        f"median of {len(arm['tokens_per_s'])}). {claims} (The baseline: a nanoGPT-style "
        "trainer.)"
    )


def scaling(doc: Mapping[str, Any]) -> str:
    """The time of a step from each axis's smallest value to its largest."""
    parts = []
    for axis in dict.fromkeys(p["axis"] for p in doc["points"]):
        pts = sorted((p for p in doc["points"] if p["axis"] == axis), key=lambda p: p["value"])
        lo, hi = pts[0], pts[-1]
        ratio = hi["ms_per_step"] / lo["ms_per_step"]
        parts.append(f"{axis} {lo['value']} → {hi['value']}: × {ratio:.2f}")
    # one run a point: the repeated Q02 point gives the noise each ratio carries
    noise = scaling_claims(doc)[0].split("a spread of ", 1)[1].split(":", 1)[0]
    return (
        "the time of a training step, "
        + "; ".join(parts)
        + f" (one run a point; the Q02 point, measured 3 times, varies by {noise})"
    )


def sampling(doc: Mapping[str, Any]) -> str:
    said = sampling_claims(doc)[0].rstrip(".")
    return said[0].lower() + said[1:] + f" for {doc['args']['tokens']} characters"


def cli_latency(doc: Mapping[str, Any]) -> str:
    """The count of commands under their targets (called met only on a quiet machine:
    `attnref_book.speed_claims.latency_claims`), and the first command's median with its
    runs."""
    claims = latency_claims(doc)
    count = next(c for c in claims if re.match(r"(\d+ of \d+|Every) ", c))
    first = doc["commands"][0]
    return (
        f"{count.rstrip('.')}; `{first['command']}` {first['median_s']:.2f} s (median; runs "
        f"{first['min_s']:.2f}–{first['max_s']:.2f} s, its target {first['target_s']:g} s)"
    )


def quiet_note(name: str, doc: Mapping[str, Any]) -> str:
    """What a benchmark's row says of its machine's load: nothing on a quiet machine
    (`attnref_book.conditions`), else why it was not quiet."""
    r = load_reading(name, doc)
    if r.quiet:
        return ""
    if r.load_1min is None or not r.read_before:
        why = "its load not read before the runs"
    elif r.load_1min > r.quiet_limit:
        why = f"1-minute load {load_said(r.load_1min, r.quiet_limit)}, above {r.quiet_limit:g}"
    else:
        why = f"{r.flagged} of {r.parts} parts started with other processes busy"
    return f" (on a machine that was not quiet: {why})"


def class_homework(root: Path) -> Row:
    """The recorded class (``tools/record_class.py``): students, submissions, the submit's
    95th percentile."""
    path = "docs/results/class-homework.json"
    doc = read(root, path)
    counts, cond, t = doc["counts"], doc["conditions"], doc["timings"]
    return Row(
        path,
        "a class of students doing homework at once",
        f"{counts['students']} students, {counts['stored']} submissions stored, "
        f"{counts['gradebook_rows']} gradebook rows; a submit {t['submit_p95_s']} s "
        "(95th percentile)",
        cond["machine"],
        cond["started"].removesuffix(":00 UTC").rsplit(":", 1)[0] + " UTC",
        short_commit(cond.get("commit")),
    )


def class_load(root: Path) -> Row:
    """The class server's load test: concurrent trainings, what was logged, what was lost."""
    path = "docs/results/class-load.json"
    doc = read(root, path)
    return Row(
        path,
        "trainings into one class server at once",
        f"{doc['runs']} trainings, {doc['points']:,} training metric points (system metrics "
        f"left out), {doc['artifacts']} artifacts, {doc['lost']} lost, in {doc['seconds']:.0f} s",
        f"{doc['cpu_cores']} cores, {doc['server_workers']} server worker"
        + (
            ""
            if doc["server_workers"] == DEFAULT_WORKERS
            else f" (today's default: {DEFAULT_WORKERS})"
        )
        + f", MLflow {doc['mlflow_version']}",
        doc.get("recorded_utc", NOT_RECORDED),
        short_commit(doc.get("commit")),
    )


def suite(root: Path) -> list[Row]:
    """``make test`` and ``make test-soak`` as recorded in ``docs/results/make-test.json``."""
    path = "docs/results/make-test.json"
    doc = read(root, path)
    rows = []
    for r in doc["recordings"]:
        why = f": {r['skipped_why']}" if r.get("skipped_why") else ""
        skipped = f" ({r['skipped']} skipped{why})" if r.get("skipped") else ""
        rows.append(
            Row(
                path,
                f"`{r['command']}`",
                f"{r['passed']:,} passed{skipped} in {r['pytest_s']} s of pytest on "
                f"{r['workers']} workers, {minutes(r['wall_s'])} in all"
                + (f" with {r['wall_includes']}" if r.get("wall_includes") else "")
                + f"; {suite_load(r)}",
                r["machine"],
                r["date"],
                short_commit(r["commit"]),
            )
        )
    return rows


def measured_rows(root: Path = ROOT) -> list[Row]:
    """Every recording the README cites: the install, then in the order of the book's pages."""
    bench: Sequence[tuple[str, str, Callable[[Any], str]]] = (
        ("time_to_quality", "Q02's training against a 5-minute budget", time_to_quality),
        ("throughput", "training speed", throughput),
        ("scaling", "how a training step's cost grows", scaling),
        ("sampling", "`attnref sample`'s KV cache", sampling),
        ("cli_latency", "how fast the commands start", cli_latency),
    )
    return [
        install_size(root),
        ablation(root, "docs/results", "Q03"),
        ablation(root, "docs/results/variants", "Q02's model and its variants"),
        *(benchmark(root, name, what, result) for name, what, result in bench),
        class_homework(root),
        class_load(root),
        *suite(root),
    ]


def measured_table(root: Path = ROOT) -> str:
    """The README's table, Markdown."""
    header = ["recording", "what it found", "machine", "date", "commit"]
    return "\n".join(markdown_table(header, [r.cells() for r in measured_rows(root)])) + "\n"


def megabytes(n: float) -> str:
    """Bytes in decimal megabytes (gigabytes from 1,000 MB), as pip and the JSON count them."""
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def install_size(root: Path) -> Row:
    """What ``make demo``'s set-up downloads and leaves on disk (``benchmarks/install_size.py``):
    torch's CPU wheel, the rest of the dependencies, the fresh ``.venv``."""
    doc = read(root, INSTALL_SIZE)
    m, venv = doc["machine"], doc["fresh_venv_after_make_setup"]
    commit = short_commit(doc.get("commit")) + (" + changes" if doc["working_tree_changed"] else "")
    return Row(
        INSTALL_SIZE,
        "what `make demo`'s set-up downloads",
        f"torch's CPU wheel {megabytes(doc['torch_cpu_wheel']['bytes'])}, the rest "
        f"{megabytes(doc['rest_of_pip_install_e']['bytes'])} "
        f"({doc['rest_of_pip_install_e']['files']} files); the `.venv` "
        f"{megabytes(venv['bytes'])}, set up in {minutes(venv['make_setup_seconds'])}",
        f"{m['distribution']}, {m['cpus']} cores, Python {m['python']}, pip {m['pip']}",
        f"{doc['date_utc']} UTC",
        commit,
    )


def quickstart(root: Path = ROOT) -> str:
    """The Quickstart's lines: what each command does, how long it took where recorded, what
    ``make demo`` downloads (`INSTALL_SIZE`)."""
    from attention_ref.lm import data as D

    rows = rows_from_comparison(read(root, "docs/results/comparison.json"))
    # one seed's training: the three arms of that seed, one after the other
    by_seed: dict[str, float] = {}
    for r in rows:
        key = r.seed or "?"
        by_seed[key] = by_seed.get(key, 0.0) + r.wall_time_s
    one_seed = math.fsum(by_seed.values()) / len(by_seed)
    spread = (
        f"the mean of {len(by_seed)} recorded seeds, {minutes(min(by_seed.values()))} to "
        f"{minutes(max(by_seed.values()))}"
        if len(by_seed) > 1
        else "one recorded seed"
    )
    suite_runs = {r["command"]: r for r in read(root, "docs/results/make-test.json")["recordings"]}
    steps = "/".join(f"{s:,}" for s in sorted({r.steps for r in rows}))
    size = read(root, INSTALL_SIZE)
    torch_b, rest_b = size["torch_cpu_wheel"]["bytes"], size["rest_of_pip_install_e"]["bytes"]
    venv = size["fresh_venv_after_make_setup"]
    sm = size["machine"]
    size_machine = f"{sm['distribution']}, {sm['cpus']} cores"
    prov = read(root, "docs/results/provenance.json")
    precision = "/".join(sorted({r.precision or "precision not recorded" for r in rows}))
    data_mb = D.N_CHARS / 1e6  # one byte a character: the file is ASCII
    return (
        "- **`make demo`** sets up `.venv` (torch's CPU build, then attnref and its "
        "dependencies, by pip), prints the homework's worked example (`attnref explain "
        "--example life-is-awesome`), trains Q02's model with attention, without it and with "
        f"uniform weights ({steps} steps each) into `sqlite:///mlflow.db`, writes Q03's answer "
        "to `q03-report.md` and prints how to open the MLflow UI. Two recordings (the Measured "
        f"table): the set-up took {minutes(venv['make_setup_seconds'])} ({size_machine}, "
        f"{size['date_utc']} UTC, right after pip had downloaded the same wheels: the time of "
        f"the download is not in it) and the training {minutes(one_seed)} (the ablation's "
        f"three arms of one seed: {spread}; {precision} on {prov['machine']}, "
        f"{prov['date_utc']} UTC). It downloads "
        f"{megabytes(torch_b + rest_b)}: torch's CPU wheel ({megabytes(torch_b)}) and the "
        f"rest ({megabytes(rest_b)}), a `.venv` of {megabytes(venv['bytes'])}; and, where no "
        f"copy is at hand, Tiny Shakespeare ({data_mb:.1f} MB, once, verified).\n"
        "- **`make test`** installs the dev extras, KaTeX and, with apt-get, Chromium, TeX Live, "
        "PostgreSQL and nginx where missing, then runs ruff, the book's strict build and the "
        f"suite but its soak tests: {suite_said(suite_runs['make test'])}; `make test-soak`: "
        f"{suite_said(suite_runs['make test-soak'])}, recorded apart.\n"
    )


def suite_load(r: Mapping[str, Any]) -> str:
    """A suite recording's 1-minute load before it, and "not quiet" where it was above a quiet
    machine's (`QUIET_LOAD_PER_CPU` per core)."""
    load = r.get("load_before_1min")
    if load is None:
        return "its load not recorded"
    cpus = int(re.search(r"(\d+) cores", r["machine"]).group(1))  # type: ignore[union-attr]
    limit = QUIET_LOAD_PER_CPU * cpus
    said = f"1-minute load {load:g} before it"
    return f"not quiet: {said}, above {limit:g}" if load > limit else said


def suite_said(r: Mapping[str, Any]) -> str:
    """One recording of the suite: how long, at which commit, when, on what, with what set-up,
    and its load (`suite_load`)."""
    quiet = suite_load(r)
    return (
        f"{minutes(r['wall_s'])} at commit {r['commit']}, {r['date']} ({r['machine']}; "
        f"with {r.get('wall_includes', 'the set-up of .venv')}; {quiet})"
    )


#: each block of the README and what writes it
BLOCKS: Final[dict[str, Callable[[Path], str]]] = {BLOCK: measured_table, "quickstart": quickstart}


def markers(name: str) -> tuple[str, str]:
    """A block's start and end comments."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def block(text: str, name: str = BLOCK) -> str:
    """What ``text`` holds between a block's markers; `ValueError` without exactly one pair."""
    start, end = markers(name)
    found = re.findall(re.escape(start) + r"\n(.*?)" + re.escape(end), text, re.S)
    if len(found) != 1:
        raise ValueError(f"README.md: expected one {start} … {end} block, found {len(found)}")
    return found[0]


def with_block(text: str, body: str, name: str = BLOCK) -> str:
    """``text`` with its block ``name`` holding ``body``."""
    start, end = markers(name)
    block(text, name)  # exactly one
    return re.sub(
        re.escape(start) + r"\n.*?" + re.escape(end),
        lambda _: f"{start}\n{body}{end}",
        text,
        flags=re.S,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--block", choices=sorted(BLOCKS), default=BLOCK, help="which to print")
    parser.add_argument("--write", action="store_true", help="rewrite README.md's blocks")
    args = parser.parse_args(argv)
    if not args.write:
        sys.stdout.write(BLOCKS[args.block](ROOT))
        return 0
    readme = ROOT / "README.md"
    text = new = readme.read_text(encoding="utf-8")
    for name, write in BLOCKS.items():
        new = with_block(new, write(ROOT), name)
    if new != text:
        readme.write_text(new, encoding="utf-8")
    print("README.md: " + ("blocks rewritten" if new != text else "blocks already current"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
