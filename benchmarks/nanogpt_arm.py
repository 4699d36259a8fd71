"""nanoGPT's own ``train.py`` (karpathy/nanoGPT, vendored unmodified in ``benchmarks/nanogpt``)
as an arm of a benchmark: its tokens/s over its own iterations at a given shape and batch.

* the data: nanoGPT's ``data/shakespeare_char/prepare.py`` downloads Tiny Shakespeare; here
  `prepare_shakespeare_char` writes the ``train.bin``, ``val.bin`` and ``meta.pkl`` it would
  write, from a local ``input.txt``, with its encoding (the sorted set of characters, their
  indices as uint16, the first 90 % for training);
* the run: a temporary folder holding a copy of the vendored files and that data (``train.py``
  reads ``configurator.py`` and ``data/`` from its working folder), then
  ``python -u train.py config/train_shakespeare_char.py --n_layer=... ...``: its
  ``shakespeare_char`` recipe at the asked shape and batch, every other setting its own (on a
  GPU: bf16 autocast where the GPU has it, ``compile=True``, fused AdamW); ``eval_iters`` small
  and one evaluation (at iteration 0, before the timing), no checkpoint;
* the timing: ``train.py`` prints ``iter N: ... time ...ms`` every ``log_interval`` (10)
  iterations, after reading the loss (a wait for the GPU). Each line is stamped as it arrives
  (unbuffered); tokens/s = ``(N2 - N1) · batch · block / (t2 - t1)`` between the first printed
  iteration at or after ``skip`` (compilation and warm-up are before it) and the last one. The
  median of the ``time`` it prints for those iterations is kept beside it.
"""

from __future__ import annotations

import pickle
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

NANOGPT = Path(__file__).resolve().parent / "nanogpt"
#: the vendored files ``train.py`` needs in its working folder
FILES = ("train.py", "model.py", "configurator.py", "config/train_shakespeare_char.py")
ITER_LINE = re.compile(r"^iter (\d+): loss [-\d.naninf]+, time ([\d.]+)ms")


def commit() -> str:
    """The nanoGPT commit the vendored files come from (``benchmarks/nanogpt/README.md``)."""
    found = re.search(r"\b([0-9a-f]{40})\b", (NANOGPT / "README.md").read_text())
    return found.group(1) if found else "unknown"


def prepare_shakespeare_char(input_txt: Path, dest: Path) -> int:
    """nanoGPT's ``data/shakespeare_char/prepare.py`` without its download: ``train.bin``,
    ``val.bin`` (uint16 indices into the sorted characters; 90 % / 10 %) and ``meta.pkl``
    (``vocab_size``, ``itos``, ``stoi``) in ``dest``. Returns the vocabulary size."""
    data = input_txt.read_text(encoding="utf-8")
    chars = sorted(set(data))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = dict(enumerate(chars))
    n = len(data)
    dest.mkdir(parents=True, exist_ok=True)
    for name, part in (("train.bin", data[: int(n * 0.9)]), ("val.bin", data[int(n * 0.9) :])):
        np.array([stoi[c] for c in part], dtype=np.uint16).tofile(dest / name)
    with open(dest / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)
    return len(chars)


def arguments(
    *,
    n_layer: int,
    n_head: int,
    n_embd: int,
    block_size: int,
    batch: int,
    iters: int,
    device: str,
    compile: bool,
) -> list[str]:
    """``train.py``'s command line: its shakespeare_char config, the shape, batch and length;
    on the CPU fp32 and no compile (a check that it runs)."""
    args = [
        "config/train_shakespeare_char.py",
        f"--n_layer={n_layer}",
        f"--n_head={n_head}",
        f"--n_embd={n_embd}",
        f"--block_size={block_size}",
        "--dropout=0.0",
        f"--batch_size={batch}",
        f"--max_iters={iters}",
        f"--lr_decay_iters={iters}",
        "--eval_interval=100000000",
        "--eval_iters=5",  # one short evaluation, at iteration 0
    ]
    if not compile:
        args.append("--compile=False")
    if device == "cpu":
        args += ["--device=cpu", "--dtype=float32"]
    return args


EVAL_LINE = re.compile(r"^step (\d+): train loss ([\d.naninf]+), val loss ([\d.naninf]+)")


def launch(input_txt: Path, args: list[str], *, timeout_s: float = 180.0) -> dict[str, Any]:
    """``python -u train.py ARGS`` in a temporary folder holding the vendored files and the
    data; each printed iteration and evaluation stamped as it arrives, in seconds from the
    launch. Never raises for the run itself: a failure is in ``error`` (and the last lines of
    its output in ``tail``). ``iters``: ``(iteration, seconds, printed ms)``; ``evals``:
    ``(step, train loss, val loss, seconds)``."""
    row: dict[str, Any] = {"commit": commit(), "args": args}
    iters: list[tuple[int, float, float]] = []
    evals: list[tuple[int, float, float, float]] = []
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="nanogpt-") as tmp:
        work = Path(tmp)
        for name in FILES:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(NANOGPT / name, work / name)
        prepare_shakespeare_char(input_txt, work / "data" / "shakespeare_char")
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-u", "train.py", *args],
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        stopped: list[bool] = []

        def stop() -> None:  # the watchdog: a hung compile prints nothing for a long time
            stopped.append(True)
            proc.kill()

        watchdog = threading.Timer(timeout_s, stop)
        watchdog.start()
        try:
            for line in proc.stdout:
                lines.append(line.rstrip())
                now = time.perf_counter() - t0
                if m := ITER_LINE.match(line):
                    iters.append((int(m.group(1)), now, float(m.group(2))))
                elif m := EVAL_LINE.match(line):
                    evals.append((int(m.group(1)), float(m.group(2)), float(m.group(3)), now))
            proc.wait()
        finally:
            watchdog.cancel()
        if stopped:
            row["error"] = f"stopped after {timeout_s:.0f} s"
        row["wall_s"] = time.perf_counter() - t0
        row["returncode"] = proc.returncode
    row |= {"tail": lines[-12:], "iters": iters, "evals": evals}
    if iters:
        row["to_first_iter_s"] = iters[0][1]  # start, compilation, the first evaluation
    if proc.returncode != 0 and "error" not in row:
        row["error"] = (
            f"train.py exited with {proc.returncode}: "
            + next((x for x in reversed(lines) if x.strip()), "")[:200]
        )
    return row


def run(
    input_txt: Path,
    *,
    batch: int = 32,
    iters: int = 600,
    skip: int = 100,
    n_layer: int = 2,
    n_head: int = 2,
    n_embd: int = 128,
    block_size: int = 128,
    device: str = "cuda",
    compile: bool = True,
    timeout_s: float = 180.0,
) -> dict[str, Any]:
    """One run of nanoGPT's ``train.py``; its tokens/s between iterations ``skip`` and
    ``iters`` (both printed: multiples of its ``log_interval``, 10). Never raises for the run
    itself: a failure is in ``error`` (and the last lines of its output in ``tail``)."""
    args = arguments(
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        block_size=block_size,
        batch=batch,
        iters=iters,
        device=device,
        compile=compile,
    )
    row: dict[str, Any] = {
        "arm": "nanoGPT train.py",
        "batch": batch,
        "iters": iters,
        "skip": skip,
        "compile": compile,
        "device": device,
    }
    launched = launch(input_txt, args, timeout_s=timeout_s)
    stamps = launched.pop("iters")
    launched.pop("evals")
    launched.pop("to_first_iter_s", None)
    row |= launched
    timed = [s for s in stamps if s[0] >= skip]
    if len(timed) < 2:
        row.setdefault("error", f"fewer than two printed iterations at or after {skip}")
        return row
    (n1, t1, _), (n2, t2, _) = timed[0], timed[-1]
    row.update(
        {
            "first_iter": n1,
            "last_iter": n2,
            "timed_s": t2 - t1,
            "to_first_iter_s": t1,  # start, compilation, warm-up
            "ms_per_step": 1e3 * (t2 - t1) / (n2 - n1),
            "tokens_per_s": (n2 - n1) * batch * block_size / (t2 - t1),
            "printed_ms_median": statistics.median(ms for _, _, ms in timed[1:] or timed),
        }
    )
    return row


if __name__ == "__main__":  # a check by hand: python benchmarks/nanogpt_arm.py input.txt [cpu]
    on_cpu = len(sys.argv) > 2 and sys.argv[2] == "cpu"
    shape: dict[str, Any] = {"iters": 40, "skip": 10, "batch": 4} if on_cpu else {}
    print(run(Path(sys.argv[1]), device="cpu" if on_cpu else "cuda", compile=not on_cpu, **shape))
