"""What a recorded benchmark ran under, in words computed from what its results file says.

Pure (no torch, no mlflow): each function takes the ``machine`` block (and, for the budget,
the curves) that a script of ``benchmarks/`` wrote, and says only what it records:

* **when the load was read.** Results recorded before the scripts read the load *before*
  their timed parts (``benchmarks/_bench.py``, ``LoadLog``) have no ``load_read`` key: their
  ``loadavg_1min`` was read after the timed work, so it counts the benchmark itself and says
  nothing about the machine before it; such a recording is never called quiet.
* **whether the machine was quiet**: the 1-minute load before the first timed part at most
  `QUIET_LOAD_PER_CPU` per CPU (0.3 on 2 CPUs, the time-to-quality run's own limit: one
  threshold for every benchmark), no timed part flagged for other processes'
  busy cores, and, where the script judged its own start (``quiet_start``), that judgement.
* **how long each arm ran against its budget** (`budget_sentence`): an arm stops at its first
  check after the budget ran out, so it can end a little past it.

``tests/experiments/test_conditions.py`` puts the numbers on both sides of each threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: an arm that ends before this fraction of the budget ended its schedule, not its time
EARLY_FRACTION = 0.95
#: a machine is quiet when its 1-minute load before the timed work is at most this per CPU:
#: ``benchmarks/time_to_quality.py``'s 0.3 on the 2-CPU machine the benchmarks ran on (it was
#: 0.25, so that a load the time-to-quality run refused was called quiet for the others)
QUIET_LOAD_PER_CPU = 0.15


@dataclass(frozen=True)
class LoadReading:
    """The load a recording states, and when it was read."""

    benchmark: str
    date_utc: str
    cpus: int
    read_before: bool  # read before the timed work (False: after it, the benchmark included)
    load_1min: float | None  # before the first timed part, or (read_before False) after all
    parts: int | None  # timed parts the load was read before (None: not recorded)
    flagged: int | None  # of those, started with other processes' cores busy
    busy_limit: float | None  # the busy cores above which a part is flagged
    #: the script's own verdict on its start (time_to_quality's ``quiet_start``), if any
    script_quiet: bool | None = None
    #: the processor it ran on and its bf16 instructions, as the script recorded them
    cpu: str = ""
    bf16: tuple[str, ...] = ()

    @property
    def machine(self) -> str:
        """``AMD EPYC, 2 CPUs, bf16: avx512_bf16`` (what two recordings must share to be read
        as one machine's); empty when the recording names no processor."""
        if not self.cpu:
            return ""
        flags = f"bf16: {', '.join(self.bf16)}" if self.bf16 else "no bf16 instructions"
        return f"{self.cpu}, {self.cpus} CPUs, {flags}"

    @property
    def quiet_limit(self) -> float:
        """The largest 1-minute load of a quiet machine with this many CPUs."""
        return QUIET_LOAD_PER_CPU * self.cpus

    @property
    def quiet(self) -> bool:
        """Read before the work, at most `quiet_limit`, no part flagged, and not judged
        otherwise by the script itself."""
        return (
            self.read_before
            and self.load_1min is not None
            and self.load_1min <= self.quiet_limit
            and not self.flagged
            and self.script_quiet is not False
        )


def load_reading(benchmark: str, results: Mapping[str, Any]) -> LoadReading:
    """The `LoadReading` of a results file (``throughput.json``, …) as the script wrote it."""
    m = results["machine"]
    before = m.get("load_read") == "before"
    summary = m.get("load") if before else None
    start = results.get("quiet_start")
    return LoadReading(
        benchmark=benchmark,
        date_utc=m["date_utc"],
        cpus=int(m["cpus"]),
        read_before=before,
        load_1min=m.get("loadavg_1min"),
        parts=summary["parts"] if summary else None,
        flagged=summary["flagged"] if summary else None,
        busy_limit=summary["busy_limit"] if summary else None,
        script_quiet=start["quiet"] if isinstance(start, Mapping) else None,
        cpu=str(m.get("cpu", "")),
        bf16=tuple(m.get("cpu_bf16_flags") or ()),
    )


def load_sentence(r: LoadReading) -> str:
    """When the load was read, its value, and whether that makes a quiet machine."""
    head = f"`{r.benchmark}` ({r.date_utc} UTC{', ' + r.machine if r.machine else ''})"
    if r.load_1min is None:
        return f"{head}: no load recorded, so the machine is not claimed to have been quiet."
    if not r.read_before:
        return (
            f"{head}: 1-minute load {r.load_1min:.2f}, read *after* the timed work, so it counts "
            "the benchmark itself and says nothing of the machine before it: not claimed to "
            "have been quiet."
        )
    limit = f"{r.quiet_limit:g} on {r.cpus} CPUs"
    text = f"{head}: 1-minute load {r.load_1min:.2f} before the first timed part"
    text += (
        f" (at most the {limit} of a quiet machine)"
        if r.load_1min <= r.quiet_limit
        else f", above the {limit} of a quiet machine"
    )
    if r.parts is not None and r.flagged is not None and r.busy_limit is not None:
        text += (
            f"; {r.flagged} of {r.parts} timed parts started with more than {r.busy_limit:g} "
            "cores busy with other work"
        )
    if r.script_quiet is False:
        text += "; the script itself judged its start loaded"
    return text + (": a quiet machine." if r.quiet else ": not a quiet machine.")


def quiet_summary(readings: Sequence[LoadReading]) -> str:
    """One sentence over every recording: how many ran on a quiet machine, and on how many
    machines when they are not one."""
    quiet = [r.benchmark for r in readings if r.quiet]
    machines = {r.machine for r in readings if r.machine}  # a record naming none: not counted
    where = (
        "" if len(machines) < 2 else f" (on {len(machines)} machines: the list names each one's)"
    )
    if readings and len(quiet) == len(readings):
        return (
            f"Each of the {len(readings)} benchmarks below ran on a quiet machine{where}, its "
            "load read before the work."
        )
    after = [r.benchmark for r in readings if not r.read_before]
    text = f"{len(quiet)} of the {len(readings)} benchmarks below ran on a quiet machine{where}"
    if after and len(after) == len(readings):
        text += "; each one's load was read after its timed work, so how busy the machine was "
        text += "before it is not known"
    elif after:
        names = ", ".join(f"`{b}`" for b in after)
        text += f"; the load of {names} was read after the timed work, so it is not known"
    return text + ": their timings are not claimed to be this machine's best."


def budget_sentence(budget: float, ends: Mapping[str, float]) -> str:
    """How long each arm ran against ``budget`` seconds (``ends``: arm -> its last second)."""
    over = {a: s for a, s in ends.items() if s > budget}
    listed = ", ".join(f"{a} {s:.1f} s" for a, s in ends.items())
    # an arm that stopped well before the budget ran out of steps, not of time: say so
    early = [a for a, s in ends.items() if s < EARLY_FRACTION * budget]
    tail = ""
    if early:
        whose = "its schedule" if len(early) == 1 else "their schedules"
        tail = f"; {', '.join(early)} finished {whose} before the budget"
    if not over:
        return f"each arm trains for at most {budget:.0f} s of wall time ({listed}){tail}"
    return (
        f"each arm trains until {budget:.0f} s of wall time have passed and stops at its next "
        f"check, so it can end a little later ({listed}){tail}"
    )
