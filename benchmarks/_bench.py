"""Shared by the benchmark scripts: machine description, the load before each timed part,
tables, results files, FLOPs, memory.

The load is read **before** each timed part, never after it (a reading after the work counts
the work itself): `LoadLog.before` records the 1-minute load average and the cores other
processes kept busy while this one slept for a short probe (`busy_cores`), and flags a part
that starts with more than `BUSY_LIMIT` cores busy. The probe is what decides: the 1-minute
average lags (it decays over about a minute), so once a benchmark has run for a while it
counts the benchmark's own previous repetitions; the first part's 1-minute load is the
machine's load before the benchmark.

Nothing here beyond the standard library, torch and attnref.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/x.py` from anywhere
    sys.path.insert(0, str(ROOT))


#: a timed part that starts while other processes keep more cores than this busy is flagged
BUSY_LIMIT = 0.5
#: how long `busy_cores` watches the machine (this process asleep) before a timed part
PROBE_S = 0.5


def load_1min() -> float | None:
    """The 1-minute load average now (``None`` where the OS has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _busy_ticks() -> int | None:
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    # cpu user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait
    values = [int(v) for v in fields[1:9]]
    return sum(values) - values[3] - values[4]


def busy_cores(window: float = PROBE_S) -> float | None:
    r"""Cores kept busy by other processes over ``window`` seconds, this process asleep:
    $\Delta\text{busy ticks} / (\text{ticks per s} \cdot \text{window})$ from
    ``/proc/stat`` (``None`` off Linux)."""
    first = _busy_ticks()
    if first is None:
        return None
    t0 = time.perf_counter()
    time.sleep(window)
    last = _busy_ticks()
    elapsed = time.perf_counter() - t0
    if last is None:
        return None
    return (last - first) / os.sysconf("SC_CLK_TCK") / elapsed


class LoadLog:
    """The load read before each timed part of a benchmark (see the module docstring)."""

    def __init__(self, limit: float = BUSY_LIMIT, window: float = PROBE_S) -> None:
        self.limit, self.window = limit, window
        self.reads: list[dict[str, Any]] = []

    def before(self, part: str) -> bool:
        """Read the load now, before ``part`` runs; ``False`` (flagged) when other processes
        keep more than ``limit`` cores busy (without a probe: the 1-minute load decides)."""
        load = load_1min()
        busy = busy_cores(self.window)
        seen = busy if busy is not None else load
        flagged = seen is not None and seen > self.limit
        self.reads.append({"part": part, "load_1min": load, "busy_cores": busy, "flagged": flagged})
        if flagged:
            print(f"  (flagged: {part} starts with {seen:.2f} cores busy elsewhere)", flush=True)
        return not flagged

    @property
    def first_load(self) -> float | None:
        """The 1-minute load before the first timed part: the machine's before the work."""
        return self.reads[0]["load_1min"] if self.reads else None

    def summary(self) -> dict[str, Any]:
        """What was read, and when: every reading, the first load, the worst, the flags."""
        loads = [r["load_1min"] for r in self.reads if r["load_1min"] is not None]
        busy = [r["busy_cores"] for r in self.reads if r["busy_cores"] is not None]
        return {
            "read": "before each timed part",
            "busy_limit": self.limit,
            "probe_s": self.window,
            "parts": len(self.reads),
            "flagged": sum(r["flagged"] for r in self.reads),
            "first_load_1min": self.first_load,
            "max_load_1min": max(loads, default=None),
            "max_busy_cores": max(busy, default=None),
            "reads": self.reads,
        }


def machine(device: torch.device, loads: LoadLog) -> dict[str, Any]:
    """What the numbers were measured on, and the load read before the timed parts
    (``loadavg_1min``: the 1-minute load before the first; ``load_read``: when)."""
    from attention_ref.experiments.store import git_commit
    from attention_ref.lm.train import CPU_BF16_FLAGS, cpu_flags

    info: dict[str, Any] = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": git_commit(short=True),  # "-dirty" when the tree had changes
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu": _cpu_name(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cpu_bf16_flags": sorted(CPU_BF16_FLAGS & cpu_flags()),
        "loadavg_1min": loads.first_load,
        "load_read": "before",
        "load": loads.summary(),
        "device": str(device),
    }
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


def describe_load(load: dict[str, Any]) -> str:
    """The load of `LoadLog.summary` in words: read when, the first, the worst, the flags."""

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    return (
        f"load read before each timed part: 1-minute load {num(load['first_load_1min'])} "
        f"before the first (at most {num(load['max_load_1min'])}), other processes' busy "
        f"cores at most {num(load['max_busy_cores'])}; {load['flagged']} of {load['parts']} "
        f"parts started above {load['busy_limit']:g} busy cores"
    )


def describe(info: dict[str, Any]) -> str:
    """`machine` in one line for the markdown results."""
    gpu = f" ({info['gpu']})" if "gpu" in info else ""
    return (
        f"{info['cpu']}, {info['cpus']} CPUs, torch {info['torch']} "
        f"({info['torch_threads']} threads), device {info['device']}{gpu}, bf16 CPU flags: "
        f"{', '.join(info['cpu_bf16_flags']) or 'none'}; {describe_load(info['load'])}"
    )


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def pick_device(name: str) -> torch.device:
    """``auto``/``cpu``/``cuda``/``mps`` through attnref's own rule (ValueError if unavailable)."""
    from attention_ref.lm.train import resolve_device

    return resolve_device(name)


def sync(device: torch.device) -> None:
    """Wait for the device (timings on a GPU must not stop the clock before the work ends)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def now(device: torch.device) -> float:
    """``perf_counter`` after the device has finished what it was given."""
    sync(device)
    return time.perf_counter()


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident memory in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def flops_per_token(n_params: int, n_layer: int, block_size: int, n_embd: int) -> int:
    """Training FLOPs per token, PaLM/nanoGPT convention: ``6·N + 12·L·T·C``.

    ``N`` counts the parameters that take part in matrix products (embeddings excluded, the
    output head included); ``12·L·T·C`` is attention's QKᵀ and AV, forward and backward,
    without discounting the causal mask (the convention, not the kernel's actual work).
    """
    return 6 * n_params + 12 * n_layer * block_size * n_embd


def split_batches(
    split: torch.Tensor, block_size: int, batch_size: int = 64
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The whole split as non-overlapping windows of ``block_size + 1`` characters (inputs and
    next-character targets), in order, ``batch_size`` windows a batch: a validation loss that
    depends on no random draw and no training batch size (the split's tail shorter than one
    window is left out)."""
    n = (len(split) - 1) // block_size
    x = split[: n * block_size].view(n, block_size)
    y = split[1 : n * block_size + 1].view(n, block_size)
    return [(x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, n, batch_size)]


@torch.no_grad()
def split_loss(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """Mean cross-entropy (nats) per character over `split_batches`, weighted by batch size
    (``model(x, y)`` returns ``(logits, loss)``, as attnref's and the baseline's models do)."""
    was = model.training
    model.eval()
    total = sum(float(model(x, y)[1]) * x.numel() for x, y in batches)
    model.train(was)
    return total / sum(x.numel() for x, _ in batches)


def matmul_params(model: torch.nn.Module) -> int:
    """Parameters outside the embedding tables (see `flops_per_token`)."""
    emb = {
        id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()
    }
    return sum(p.numel() for p in model.parameters() if id(p) not in emb)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table (the same rows the terminal shows)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned table for the terminal."""
    cells = [list(map(str, header)), *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def write_results(out: Path | None, name: str, payload: dict[str, Any], markdown: str) -> None:
    """``OUT/NAME.json`` (every measurement) and ``OUT/NAME.md`` (the tables), if ``out``."""
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    (out / f"{name}.md").write_text(markdown + "\n")
    print(f"\nwrote {out / (name + '.json')} and {out / (name + '.md')}")


def fmt(x: float, digits: int = 0) -> str:
    """Thousands separators; ``-`` for a missing value."""
    if x is None or x != x:
        return "-"
    return f"{x:,.{digits}f}"
