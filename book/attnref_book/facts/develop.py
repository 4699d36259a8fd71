"""The develop page's facts (``docs/develop.md``, ``docs/develop.pt.md``): how long the two
tiers of tests took where they were recorded (``docs/results/make-test.json``), said in the
page's language.

The record says in English what each wall time holds and how it was written
(``tools/record_suite.py``); the Portuguese page translates those phrases here (`RECORDED`),
and shows one it has no words for in English, marked.
"""

from __future__ import annotations

import re
from typing import Any

from attention_ref.render.document import said
from attnref_book.conditions import QUIET_LOAD_PER_CPU
from attnref_book.facts.teaching_records import phrase_said
from attnref_book.pages import results, thousands

#: what the record says in English, per language: (a regular expression of a recorded
#: phrase, its words), and how a phrase with no entry is shown
RECORDED: dict[str, dict[str, Any]] = {
    "en": {
        "includes": [],
        "source": [
            (r"(\S+), from the output of each run", r"written by `\1` from the output of each run")
        ],
        "unknown": "{}",
        "machine": [],
    },
    "pt": {
        # the phrases `tools/record_suite.py` writes (its ``set_up``)
        "includes": [
            (r"no set-up, \.venv already there", "sem a preparação, com o `.venv` já pronto"),
            (r"the set-up of \.venv", "com a preparação do `.venv`"),
            (
                r"the set-up of \.venv \(no Debian package to install; pip's downloads not told "
                r"apart from its cache\)",
                "com a preparação do `.venv` (nenhum pacote Debian a instalar; os downloads do "
                "pip não separados do seu cache)",
            ),
            (
                r"the set-up of \.venv \(Debian packages installed; pip's downloads not told "
                r"apart from its cache\)",
                "com a preparação do `.venv` (pacotes Debian instalados; os downloads do pip não "
                "separados do seu cache)",
            ),
        ],
        "source": [
            (
                r"(\S+), from the output of each run",
                r"escrito por `\1` a partir da saída de cada execução",
            )
        ],
        "unknown": "*{}* (em inglês)",
        "machine": [("cores", "núcleos")],
    },
}

#: the page's words per language; ``{…}`` fields are filled from the record
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "run": "- `{command}` at `{commit}` ({date}; {machine}): {passed} passed ({skipped} "
        "skipped) in {pytest_s} s of pytest on {workers} workers, {minutes} min {seconds} s in "
        "all",
        "includes": " with {}",
        "load": "; the 1-minute load before it: {load}",
        "loaded": ", above a quiet machine's {limit}: not quiet",
        "no_load": "; its load not recorded",
        "source": "\nAs recorded in `docs/results/make-test.json` ({source}); the earlier timings "
        "are in the history of `README.md`.",
    },
    "pt": {
        "run": "- `{command}` em `{commit}` ({date}; {machine}): {passed} testes passaram "
        "({skipped} pulados) em {pytest_s} s de pytest em {workers} workers, {minutes} min "
        "{seconds} s no total",
        "includes": ", {}",
        "load": "; a carga de 1 minuto antes dela: {load}",
        "loaded": ", acima dos {limit} de uma máquina quieta: não quieta",
        "no_load": "; a sua carga não foi registrada",
        "source": "\nComo registrado em `docs/results/make-test.json` ({source}); os tempos "
        "anteriores estão no histórico do `README.md`.",
    },
}


def suite_timings(lang: str) -> str:
    """``make test`` and ``make test-soak`` as ``docs/results/make-test.json`` records them
    (each run's commit, date, machine, tests passed, pytest's seconds and the wall time, with
    what the wall time holds), and how the record was written (its ``source``)."""
    w, say = WORDS[lang], RECORDED[lang]
    doc = results("make-test.json")
    out = []
    for r in doc["recordings"]:
        minutes, seconds = divmod(r["wall_s"], 60)
        machine = r["machine"]
        for old, new in say["machine"]:
            machine = machine.replace(old, new)
        line = w["run"].format(
            command=r["command"],
            commit=r["commit"],
            date=r["date"],
            machine=machine,
            passed=thousands(r["passed"], lang),
            skipped=r.get("skipped", 0),
            pytest_s=r["pytest_s"],
            workers=r["workers"],
            minutes=minutes,
            seconds=seconds,
        )
        if "wall_includes" in r:
            line += w["includes"].format(
                phrase_said(r["wall_includes"], say["includes"], say["unknown"])
            )
        load = r.get("load_before_1min")
        if load is None:
            line += w["no_load"]
        else:
            cpus = int(re.search(r"(\d+) cores", r["machine"]).group(1))  # type: ignore[union-attr]
            limit = QUIET_LOAD_PER_CPU * cpus
            line += w["load"].format(load=said(load, "g", lang))
            if load > limit:
                line += w["loaded"].format(limit=said(limit, "g", lang))
        out.append(line + ".")
    out.append(w["source"].format(source=phrase_said(doc["source"], say["source"], say["unknown"])))
    return "\n".join(out)
