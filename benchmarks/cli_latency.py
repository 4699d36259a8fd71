"""CLI latency: wall time from the shell of the commands a person runs a hundred times.

Run (one command; a quiet machine)::

    .venv/bin/python benchmarks/cli_latency.py --out docs/results/benchmarks
    .venv/bin/python benchmarks/cli_latency.py --tracking-uri sqlite:////path/mlflow.db --reps 9
    .venv/bin/python benchmarks/cli_latency.py --reps 1 --probe 0.1      # a smoke run

Each command runs as a subprocess of ``.venv/bin/attnref``, as a person types it, against a
store holding one finished training run of the Q02 shape (``--tracking-uri``; without it a
temporary store is made first, with a one-step run: the sampling time depends on the model's
shape, not on its training). Every command runs once untimed (files in the page cache), then
``--reps`` interleaved repetitions, the order rotated each time. Before each timed run the
load is read (`_bench.LoadLog`): a run that starts while other processes keep more than
``--busy-limit`` cores busy is flagged and left out of the median (the table says how many
were kept). Each command has its target (issue 21; `TARGETS`): the verdict is "met" when
every kept run is under it (`attnref_book.speed_claims.latency_met`, the book's
rule), "met by the median only" when the median is and the slowest kept run is not, "no quiet
run" when none was kept.

``exercise --seed 0`` and ``check`` of its answer with one step filled in (`make_answer`) are
the student's loop (issue 41): neither imports torch (the grader computes in numpy). ``exercise
--out`` is timed too: the folder holds the key, whose numbers come from the grader's own float64
chain since issue 59 (no torch either; held equal to the reference by
``tests/exercises/test_key_without_torch.py``).

``explain`` computes a worked example once per version of the code and reads it back after
that (`attention_ref.worked.cached`): it is timed both ways, as the hundredth run (the cache
filled by the untimed run) and as the first run of a new version (an empty cache each time).

Then the import-time breakdown (``python -X importtime``) of the slowest command: where its
start-up goes, by top-level package (each module's own import time, so the parts add up).
Writes ``cli_latency.{json,md}`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _bench
import torch

ATTNREF = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))
#: the wall-time targets of issue 21 on a quiet 2-core machine, seconds
TARGETS = {"help": 0.35, "params": 0.5, "runs": 2.0, "sample": 2.0, "explain": 1.5}
#: issue 41: a student runs `check` after every step they fill in
TARGETS |= {"exercise": 1.5, "check": 1.0}
#: issue 59: the key without torch, `exercise --out` under a second
TARGETS |= {"exercise_out": 1.0}
#: the exercise timed, and the answer `check` grades: its template with one step filled in
EXERCISE = ("exercise", "--seed", "0")
ANSWER = "ex/answer.json"


@dataclass(frozen=True)
class Command:
    """A command line of ``attnref`` and the target it is held to."""

    name: str  # the key of its target in TARGETS
    args: tuple[str, ...]
    fresh_cache: bool = False  # run with an empty user cache (explain's first run)

    @property
    def label(self) -> str:
        first = " (first run of this code)" if self.fresh_cache else ""
        return " ".join(["attnref", *self.args]) + first

    @property
    def target(self) -> float:
        return TARGETS[self.name]


def commands(run_id: str, tokens: int, model_uri: str) -> list[Command]:
    """The commands timed, in the order of the table. ``sample`` three ways: the latest run and
    a run by id, both read from the local store without torch (numpy), and the same run's
    LoggedModel (``--model models:/m-…``), through MLflow's client and torch."""
    return [
        Command("help", ("--help",)),
        Command("params", ("params",)),
        Command("runs", ("runs",)),
        Command("sample", ("sample", "--tokens", str(tokens))),
        Command("sample", ("sample", "--run-id", run_id, "--tokens", str(tokens))),
        Command("sample", ("sample", "--model", model_uri, "--tokens", str(tokens))),
        Command("explain", ("explain", "-e", "life-is-awesome")),
        Command("explain", ("explain", "-e", "life-is-awesome"), fresh_cache=True),
        Command("exercise", EXERCISE),
        Command("exercise_out", (*EXERCISE, "--out", "ex-timed")),
        Command("check", ("check", ANSWER)),
    ]


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per command (5)")
    p.add_argument("--tokens", type=int, default=500, help="characters sampled (500)")
    p.add_argument(
        "--tracking-uri",
        default=None,
        help="a store with a finished training run (default: a temporary one, made first)",
    )
    p.add_argument("--run-id", default=None, help="the run to sample (default: the latest)")
    p.add_argument("--data", type=Path, default=None, help="Tiny Shakespeare, for that run")
    p.add_argument(
        "--busy-limit",
        type=float,
        default=_bench.BUSY_LIMIT,
        help=f"flag a run started with more cores busy elsewhere ({_bench.BUSY_LIMIT})",
    )
    p.add_argument(
        "--probe", type=float, default=_bench.PROBE_S, help="seconds of load probe per run"
    )
    p.add_argument(
        "--settle",
        type=float,
        default=120.0,
        help="after the set-up and the untimed runs, wait up to this many seconds for the "
        "1-minute load to fall to 0.25 per CPU before timing (120; 0: no wait)",
    )
    p.add_argument("--out", type=Path, default=None, help="write cli_latency.{json,md} here")
    return p.parse_args()


def settle(seconds: float, per_cpu: float = 0.25) -> None:
    """Wait until the 1-minute load is at most ``per_cpu`` per CPU, or ``seconds`` have passed.

    The set-up (a one-step training run) and the untimed first runs raise the 1-minute load
    themselves; the load read before the first timed part should say how busy the machine is,
    not how busy the benchmark just was."""
    limit, end = per_cpu * (os.cpu_count() or 1), time.monotonic() + seconds
    while (load := _bench.load_1min()) is not None and load > limit and time.monotonic() < end:
        time.sleep(2)
    said = "unknown" if load is None else f"{load:.2f}"
    state = "settled" if load is not None and load <= limit else f"still above {limit:g}"
    print(f"cli latency: 1-minute load {said} before timing ({state})", flush=True)


def env_for(cmd: Command | list[str], cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment of one run: an empty user cache for a first-run command."""
    if isinstance(cmd, Command) and cmd.fresh_cache:
        return {**env, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="cache-", dir=cwd)}
    return env


def run(cmd: Command | list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Wall time of one command (stdout and stderr read, as a terminal would), its stderr;
    ``SystemExit(2)`` with its last line when it fails."""
    args = list(cmd.args) if isinstance(cmd, Command) else cmd
    env = env_for(cmd, cwd, env)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [ATTNREF, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"error: `attnref {' '.join(args)}` failed: {last}", file=sys.stderr)
        raise SystemExit(2)
    return seconds, proc.stderr


def make_store(root: Path, env: dict[str, str], data: Path | None) -> None:
    """A store in ``root`` with one finished training run of the Q02 shape (one step)."""
    print("making a store with a one-step run of the Q02 shape…", flush=True)
    args = [
        "train",
        "--max-steps",
        "1",
        "--eval-interval",
        "1",
        "--eval-batches",
        "1",
        "--sample-tokens",
        "1",
        "--out-dir",
        str(root / "runs"),
    ]
    if data is not None:
        args += ["--data", str(data)]
    run(args, root, env)


def latest_run(root: Path, env: dict[str, str]) -> str:
    """The latest finished training run of the store (what ``sample`` picks by default)."""
    proc = subprocess.run(
        [ATTNREF, "runs", "--format", "json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = [
        r["run_id"]
        for r in json.loads(proc.stdout)["runs"]
        if r["kind"] == "train" and r["status"] == "FINISHED"
    ]
    if not found:
        print("error: the store has no finished training run; train one", file=sys.stderr)
        raise SystemExit(2)
    return found[0]


def logged_model(uri: str, run_id: str) -> str:
    """The LoggedModel the run logged (``models:/m-…``: what ``sample --model`` takes)."""
    import mlflow

    mlflow.set_tracking_uri(uri)
    experiment = mlflow.get_run(run_id).info.experiment_id
    found = mlflow.search_logged_models(
        experiment_ids=[experiment],
        filter_string=f"source_run_id = '{run_id}'",
        output_format="list",
    )
    if not found:
        print(f"error: run {run_id} logged no model", file=sys.stderr)
        raise SystemExit(2)
    return f"models:/{found[0].model_id}"


def make_answer(root: Path, env: dict[str, str]) -> None:
    """`ANSWER`: the template of `EXERCISE` (``--out``, so it carries the draw ``check`` takes)
    with ``Q⁽¹⁾ = X W_Q⁽¹⁾`` filled in (integers, from exercise.json): a student's answer
    after one step."""
    out = root / Path(ANSWER).parent
    run([*EXERCISE, "--out", str(out)], root, env)
    problem = json.loads((out / "exercise.json").read_text(encoding="utf-8"))
    X, W = problem["X"], problem["heads"][0]["W_Q"]
    Q = [
        [sum(x * w for x, w in zip(row, col, strict=True)) for col in zip(*W, strict=True)]
        for row in X
    ]
    doc = json.loads((root / ANSWER).read_text(encoding="utf-8"))
    doc["heads"][0]["Q"] = Q
    (root / ANSWER).write_text(json.dumps(doc), encoding="utf-8")


def summarise(cmd: Command, times: list[dict[str, Any]]) -> dict[str, Any]:
    """Median and range of the runs kept (not flagged), against the command's target."""
    kept = [t["seconds"] for t in times if not t["flagged"]]
    every = [t["seconds"] for t in times]
    from attnref_book.speed_claims import latency_met

    med = _bench.median(kept) if kept else None
    judged = {"kept": len(kept), "max_s": max(kept, default=None), "target_s": cmd.target}
    verdict = (
        "no quiet run"
        if med is None
        else "met"
        if latency_met(judged)
        else "met by the median only"
        if med < cmd.target
        else "not met"
    )
    return {
        "command": cmd.label,
        "name": cmd.name,
        "target_s": cmd.target,
        "kept": len(kept),
        "reps": len(times),
        "median_s": med,
        "min_s": min(kept) if kept else None,
        "max_s": max(kept) if kept else None,
        "median_all_s": _bench.median(every),
        "verdict": verdict,
        "times": times,
    }


def import_breakdown(cmd: Command, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """``python -X importtime`` of one command: each module's own import time summed by
    top-level package (they add up to the whole), and the wall time of that run."""
    env = {**env_for(cmd, cwd, env), "PYTHONPATH": str(_bench.ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "attention_ref.cli.main", *cmd.args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    own: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        own[name.strip().split(".")[0]] += int(self_us) / 1e6
    total = sum(own.values())
    top = sorted(own.items(), key=lambda kv: -kv[1])
    return {
        "command": cmd.label,
        "wall_s": wall,
        "import_s": total,
        "packages": [{"package": k, "seconds": v, "share": v / total} for k, v in top[:10]],
        "others_s": sum(v for _, v in top[10:]),
    }


def main() -> None:
    args = parse()
    if args.reps < 1 or args.tokens < 1 or args.probe <= 0:
        print("error: --reps and --tokens must be >= 1, --probe > 0", file=sys.stderr)
        raise SystemExit(2)
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    with tempfile.TemporaryDirectory(prefix="attnref-latency-") as tmp:
        root = Path(tmp)
        if args.tracking_uri is None:
            make_store(root, env, args.data)
            uri = f"sqlite:///{root / 'mlflow.db'}"
        else:
            uri = args.tracking_uri
        env["MLFLOW_TRACKING_URI"] = uri
        env["XDG_CACHE_HOME"] = str(root / "cache")  # explain's cache: this run's own
        run_id = args.run_id or latest_run(root, env)
        make_answer(root, env)
        cmds = commands(run_id, args.tokens, logged_model(uri, run_id))
        print(f"cli latency: {len(cmds)} commands, {args.reps} reps, store {uri}", flush=True)
        for cmd in cmds:  # once each, untimed: the files in the page cache
            run(cmd, root, env)
        settle(args.settle)
        loads = _bench.LoadLog(args.busy_limit, args.probe)
        times: dict[str, list[dict[str, Any]]] = {c.label: [] for c in cmds}
        for rep in range(args.reps):
            for cmd in cmds[rep % len(cmds) :] + cmds[: rep % len(cmds)]:
                quiet = loads.before(f"rep {rep + 1} {cmd.label}")
                seconds, _ = run(cmd, root, env)
                times[cmd.label].append({"rep": rep + 1, "seconds": seconds, "flagged": not quiet})
                print(f"  rep {rep + 1}/{args.reps}  {seconds:6.2f} s  {cmd.label}", flush=True)
        results = [summarise(c, times[c.label]) for c in cmds]
        slowest = max(cmds, key=lambda c: _bench.median([t["seconds"] for t in times[c.label]]))
        breakdown = import_breakdown(slowest, root, env)
    header = ["command", "target s", "median s", "min-max s", "runs kept", "verdict"]
    rows = [
        [
            f"`{r['command']}`",
            f"{r['target_s']:g}",
            "-" if r["median_s"] is None else f"{r['median_s']:.2f}",
            "-" if r["min_s"] is None else f"{r['min_s']:.2f}-{r['max_s']:.2f}",
            f"{r['kept']} of {r['reps']}",
            r["verdict"],
        ]
        for r in results
    ]
    b = breakdown
    b_rows = [[p["package"], f"{p['seconds']:.3f}", f"{p['share']:.0%}"] for p in b["packages"]]
    b_rows.append(["(the others)", f"{b['others_s']:.3f}", ""])
    print("\n" + _bench.text_table(header, rows))
    print(f"\nimports of `{b['command']}`: {b['import_s']:.2f} s of a {b['wall_s']:.2f} s run")
    print(_bench.text_table(["package", "own import s", "share"], b_rows))
    machine = _bench.machine(torch.device("cpu"), loads)
    md = "\n".join(
        [
            f"### CLI latency — `benchmarks/cli_latency.py` ({machine['date_utc']} UTC)",
            "",
            f"{_bench.describe(machine)}. Wall time of each command as a subprocess, "
            f"{args.reps} interleaved repetition{'s' if args.reps != 1 else ''} after one "
            "untimed run; the median of the runs not flagged.",
            "",
            _bench.markdown_table(header, rows),
            "",
            f"Where the start-up of the slowest, `{b['command']}`, goes (`python -X "
            f"importtime`, each module's own time by top-level package): {b['import_s']:.2f} s "
            f"of imports in a {b['wall_s']:.2f} s run.",
            "",
            _bench.markdown_table(["package", "own import s", "share"], b_rows),
        ]
    )
    payload = {
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "machine": machine,
        "targets": TARGETS,
        "commands": results,
        "import_breakdown": breakdown,
    }
    _bench.write_results(args.out, "cli_latency", payload, md)


if __name__ == "__main__":
    main()
