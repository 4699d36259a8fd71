"""What a recorded benchmark ran under, in words computed from what its results file says.

Pure (no torch, no mlflow): each function takes the ``machine`` block (and, for the budget,
the curves) that a script of ``benchmarks/`` wrote, and says only what it records, in the
book's language (``lang``: `WORDS`):

* **when the load was read.** Results recorded before the scripts read the load *before*
  their timed parts (``benchmarks/_bench.py``, ``LoadLog``) have no ``load_read`` key: their
  ``loadavg_1min`` was read after the timed work, so it counts the benchmark itself and says
  nothing about the machine before it; such a recording is never called quiet.
* **whether the machine was quiet**: the 1-minute load before the first timed part at most
  `QUIET_LOAD_PER_CPU` per CPU (0.3 on 2 CPUs, the time-to-quality run's own limit: one
  threshold for every benchmark), no timed part flagged for other processes'
  busy cores, and, where the script judged its own start (``quiet_start``), that judgement.
  A load is written with as many decimals as it takes to fall on its side of that limit
  (`load_said`: 0.3003 is not "0.30 … above the 0.3").
* **how long each arm ran against its budget** (`budget_sentence`): an arm stops at its first
  check after the budget ran out, so it can end a little past it.

``tests/book/test_conditions.py`` puts the numbers on both sides of each threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

#: an arm that ends before this fraction of the budget ended its schedule, not its time
EARLY_FRACTION = 0.95
#: a machine is quiet when its 1-minute load before the timed work is at most this per CPU:
#: ``benchmarks/time_to_quality.py``'s 0.3 on the 2-CPU machine the benchmarks ran on (it was
#: 0.25, so that a load the time-to-quality run refused was called quiet for the others)
QUIET_LOAD_PER_CPU = 0.15

#: how each language says the conditions (``point``: its decimal mark; ``list``: what
#: separates numbers in a list, where a decimal comma would run into a comma)
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "point": ".",
        "list": ", ",
        "machine": "{cpu}, {cpus} CPUs, {flags}",
        "bf16": "bf16: {flags}",
        "no_bf16": "no bf16 instructions",
        "head": "`{benchmark}` ({date} UTC{machine})",
        "no_load": "{head}: no load recorded, so the machine is not claimed to have been quiet.",
        "after": (
            "{head}: 1-minute load {load}, read *after* the timed work, so it counts the "
            "benchmark itself and says nothing of the machine before it: not claimed to have "
            "been quiet."
        ),
        "limit": "{limit} on {cpus} CPUs",
        "before": "{head}: 1-minute load {load} before the first timed part",
        "at_most": " (at most the {limit} of a quiet machine)",
        "above": ", above the {limit} of a quiet machine",
        "flagged": (
            "; {flagged} of its {parts} load readings (one before each timed part, and the "
            "start's where the script takes one) found more than {busy} cores busy with other "
            "work"
        ),
        "script_loaded": "; the script itself judged its start loaded",
        "quiet": ": a quiet machine.",
        "not_quiet": ": not a quiet machine.",
        "machines": " (on {n} machines: the list names each one's)",
        "all_quiet": (
            "Each of the {n} benchmarks below ran on a quiet machine{where}, its load read "
            "before the work."
        ),
        "some_quiet": "{quiet} of the {n} benchmarks below ran on a quiet machine{where}",
        "all_after": (
            "; each one's load was read after its timed work, so how busy the machine was "
            "before it is not known"
        ),
        "some_after": "; the load of {names} was read after the timed work, so it is not known",
        "not_best": ": the others' timings are not claimed to be this machine's best.",
        "arm_end": "{arm} {seconds} s",
        "early_one": "; {arms} finished its schedule before the budget",
        "early_many": "; {arms} finished their schedules before the budget",
        "within": "each arm trains for at most {budget} s of wall time ({listed}){tail}",
        "past": (
            "each arm trains until {budget} s of wall time have passed and stops at its next "
            "check, so it can end a little later ({listed}){tail}"
        ),
    },
    "pt": {
        "point": ",",
        "list": "; ",
        "machine": "{cpu}, {cpus} CPUs, {flags}",
        "bf16": "bf16: {flags}",
        "no_bf16": "sem instruções bf16",
        "head": "`{benchmark}` ({date} UTC{machine})",
        "no_load": (
            "{head}: nenhuma carga registrada, então não se afirma que a máquina estava ociosa."
        ),
        "after": (
            "{head}: carga de 1 minuto {load}, lida *depois* do trabalho cronometrado, então "
            "conta o próprio benchmark e nada diz da máquina antes dele: não se afirma que ela "
            "estava ociosa."
        ),
        "limit": "{limit} em {cpus} CPUs",
        "before": "{head}: carga de 1 minuto {load} antes da primeira parte cronometrada",
        "at_most": " (no máximo os {limit} de uma máquina ociosa)",
        "above": ", acima dos {limit} de uma máquina ociosa",
        "flagged": (
            "; {flagged} das suas {parts} leituras de carga (uma antes de cada parte "
            "cronometrada, e a do início onde o script a faz) acharam mais de {busy} núcleos "
            "ocupados com outro trabalho"
        ),
        "script_loaded": "; o próprio script julgou o seu início carregado",
        "quiet": ": máquina ociosa.",
        "not_quiet": ": máquina não ociosa.",
        "machines": " (em {n} máquinas: a lista diz a de cada um)",
        "all_quiet": (
            "Cada um dos {n} benchmarks abaixo rodou numa máquina ociosa{where}, com a carga "
            "lida antes do trabalho."
        ),
        "some_quiet": "Máquina ociosa em {quiet} dos {n} benchmarks abaixo{where}",
        "all_after": (
            "; a carga de cada um foi lida depois do seu trabalho cronometrado, então não se "
            "sabe quão ocupada a máquina estava antes dele"
        ),
        "some_after": (
            "; a carga de {names} foi lida depois do trabalho cronometrado, então não se sabe"
        ),
        "not_best": ": não se afirma que os tempos dos outros sejam os melhores desta máquina.",
        "arm_end": "{arm} {seconds} s",
        "early_one": "; {arms} terminou o seu cronograma antes do fim do orçamento",
        "early_many": "; {arms} terminaram os seus cronogramas antes do fim do orçamento",
        "within": (
            "cada braço treina por no máximo {budget} s de tempo de relógio ({listed}){tail}"
        ),
        "past": (
            "cada braço treina até passarem {budget} s de tempo de relógio e para na sua "
            "próxima verificação, então pode terminar um pouco depois ({listed}){tail}"
        ),
    },
}


def number(v: float, spec: str, lang: str) -> str:
    """``v`` formatted by ``spec`` with ``lang``'s decimal mark."""
    return format(v, spec).replace(".", WORDS[lang]["point"])


def load_said(load: float, limit: float, lang: str = "en") -> str:
    """A 1-minute load with two decimals, or as many more as it takes for the number shown to
    fall on the load's side of ``limit``: 0.3003 against 0.3 is ``0.3003``, not ``0.30``
    (which would read as the limit itself, beside "above the 0.3")."""
    places = 2
    while places < 10 and (float(f"{load:.{places}f}") <= limit) is not (load <= limit):
        places += 1
    return number(load, f".{places}f", lang)


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
        return self.machine_in("en")

    def machine_in(self, lang: str) -> str:
        """`machine` in ``lang``'s words."""
        if not self.cpu:
            return ""
        w = WORDS[lang]
        flags = w["bf16"].format(flags=", ".join(self.bf16)) if self.bf16 else w["no_bf16"]
        return w["machine"].format(cpu=self.cpu, cpus=self.cpus, flags=flags)

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


def quiet_limit_said(r: LoadReading, lang: str = "en") -> str:
    """``0.3 on 2 CPUs``: the largest load of a quiet machine, in ``lang``."""
    return WORDS[lang]["limit"].format(limit=number(r.quiet_limit, "g", lang), cpus=r.cpus)


def load_sentence(r: LoadReading, lang: str = "en") -> str:
    """When the load was read, its value, and whether that makes a quiet machine."""
    w = WORDS[lang]
    machine = r.machine_in(lang)
    head = w["head"].format(
        benchmark=r.benchmark, date=r.date_utc, machine=f", {machine}" if machine else ""
    )
    if r.load_1min is None:
        return w["no_load"].format(head=head)
    if not r.read_before:
        return w["after"].format(head=head, load=number(r.load_1min, ".2f", lang))
    limit = quiet_limit_said(r, lang)
    text = w["before"].format(head=head, load=load_said(r.load_1min, r.quiet_limit, lang))
    text += (w["at_most"] if r.load_1min <= r.quiet_limit else w["above"]).format(limit=limit)
    if r.parts is not None and r.flagged is not None and r.busy_limit is not None:
        text += w["flagged"].format(
            flagged=r.flagged, parts=r.parts, busy=number(r.busy_limit, "g", lang)
        )
    if r.script_quiet is False:
        text += w["script_loaded"]
    return text + (w["quiet"] if r.quiet else w["not_quiet"])


def quiet_summary(readings: Sequence[LoadReading], lang: str = "en") -> str:
    """One sentence over every recording: how many ran on a quiet machine, and on how many
    machines when they are not one."""
    w = WORDS[lang]
    quiet = [r.benchmark for r in readings if r.quiet]
    machines = {r.machine for r in readings if r.machine}  # a record naming none: not counted
    where = "" if len(machines) < 2 else w["machines"].format(n=len(machines))
    if readings and len(quiet) == len(readings):
        return w["all_quiet"].format(n=len(readings), where=where)
    after = [r.benchmark for r in readings if not r.read_before]
    text = w["some_quiet"].format(quiet=len(quiet), n=len(readings), where=where)
    if after and len(after) == len(readings):
        text += w["all_after"]
    elif after:
        text += w["some_after"].format(names=", ".join(f"`{b}`" for b in after))
    return text + w["not_best"]


def budget_sentence(budget: float, ends: Mapping[str, float], lang: str = "en") -> str:
    """How long each arm ran against ``budget`` seconds (``ends``: arm -> its last second)."""
    w = WORDS[lang]
    over = {a: s for a, s in ends.items() if s > budget}
    listed = w["list"].join(
        w["arm_end"].format(arm=a, seconds=number(s, ".1f", lang)) for a, s in ends.items()
    )
    # an arm that stopped well before the budget ran out of steps, not of time: say so
    early = [a for a, s in ends.items() if s < EARLY_FRACTION * budget]
    tail = ""
    if early:
        tail = (w["early_one"] if len(early) == 1 else w["early_many"]).format(
            arms=", ".join(early)
        )
    said = number(budget, ".0f", lang)
    return (w["past"] if over else w["within"]).format(budget=said, listed=listed, tail=tail)
