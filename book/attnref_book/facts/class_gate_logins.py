"""The logins of a class behind one shared address, on the class server's edge-and-gate page
(``docs/class-gate.md``, ``docs/class-gate.pt.md``), computed once and said in each language.

Two functions, two code blocks of the page: the table of the two recorded runs of
``benchmarks/login_lockout.py`` (before issue 57's changes and after), and what they say. The
records name their parts in English, which the Portuguese page translates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from attnref_book.facts.class_gate import UNTRANSLATED, WORDS, decimal, listed
from attnref_book.pages import results, table

# ------------------------------------------------------------ logins from one shared address

#: the recorded parts of the login runs (in English in the record) in each language
PARTS: Final[dict[str, dict[str, str]]] = {
    "en": {},
    "pt": {
        "quiet": "calma",
        "made-up names": "nomes inventados",
        "wrong passwords for s00": "senhas erradas para s00",
    },
}

LOGIN_WORDS: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "header": (
            "commit",
            "part",
            "students' requests refused (429)",
            "median (ms)",
            "worst (ms)",
            "students whose median is within 2× the quiet one",
            "requests answered 200 within 2× the quiet median",
            "newcomers let in at once",
            "attacker's answers",
            "load before",
        ),
        "footer": "\n{label}: commit {r[commit]}, {r[date]}, {r[seconds_per_part]:.0f} s per "
        "part, quiet median {quiet} ms{nomachine}; `{r[command]}`.",
        "nomachine": ", the record names no machine",
        "before": "Before, every password check not served from MLflow's cache drew on the "
        "address's budget, right ones included: the attacks refused {refused}. After, a right "
        "password the server has checked once is never throttled, and a made-up name spends "
        "only its sender's budget for names that do not exist: {now}.",
        "refused": "{n} of the students' requests ({part})",
        "now": "{n} refused ({part})",
        "target": ' The records\' target, "{target}", is met by no student in any part, the quiet '
        "one included: the students with every request answered 200 within it are {after} "
        "after, and {before} before.",
        "count": "{a} of {b} ({part})",
        "medians": " What the per-student medians show, after: the students whose median "
        "stayed within twice the quiet median are {within}, while the share of a student's "
        "requests answered 200 within it ran {spread}; the attacker's process shares the "
        "machine with the server.",
        "range": "from {lo} to {hi} ({part})",
    },
    "pt": {
        "header": (
            "commit",
            "parte",
            "requisições dos alunos recusadas (429)",
            "mediana (ms)",
            "pior (ms)",
            "alunos cuja mediana fica em até 2× a da parte calma",
            "requisições respondidas com 200 em até 2× a mediana da parte calma",
            "recém-chegados admitidos na hora",
            "respostas ao atacante",
            "carga antes",
        ),
        "footer": "\n{label}: commit {r[commit]}, {r[date]}, {r[seconds_per_part]:.0f} s por "
        "parte, mediana da parte calma {quiet} ms{nomachine}; `{r[command]}`.",
        "nomachine": ", o registro não nomeia a máquina",
        "before": "Antes, toda verificação de senha não servida pelo cache do MLflow gastava o "
        "orçamento do endereço, as das senhas certas inclusive: os ataques recusaram {refused}. "
        "Depois, uma senha certa que o servidor já verificou uma vez nunca é limitada, e um nome "
        "inventado gasta só o orçamento de quem o manda para nomes que não existem: {now}.",
        "refused": "{n} das requisições dos alunos ({part})",
        "now": "{n} recusadas ({part})",
        "target": " O alvo dos registros, todas as requisições de cada aluno respondidas em até "
        "2× a mediana da parte calma, não é atingido por aluno nenhum em parte nenhuma, a calma "
        "inclusive: os alunos com toda requisição respondida com 200 dentro dele são {after} "
        "depois, e {before} antes.",
        "count": "{a} de {b} ({part})",
        "medians": " O que as medianas de cada aluno mostram, depois: os alunos cuja mediana "
        "ficou em até duas vezes a mediana da parte calma são {within}, enquanto a parcela das "
        "requisições de um aluno respondidas com 200 dentro disso foi {spread}; o processo do "
        "atacante divide a máquina com o servidor.",
        "range": "de {lo} a {hi} ({part})",
    },
}

#: the two runs of the logins, before issue 57's changes first
LOGIN_RUNS: Final = (("before", "login-lockout-before.json"), ("after", "login-lockout.json"))


def part_name(part: str, lang: str) -> str:
    """A recorded part's name in ``lang`` (`PARTS`); an unknown one marked as English."""
    return PARTS[lang].get(part, UNTRANSLATED[lang].format(part))


def within_twice(p: Mapping[str, Any], twice: float) -> int:
    """The students of part ``p`` whose median is at most ``twice`` (2× the quiet median)."""
    return sum(1 for s in p["each"].values() if s["median_ms"] <= twice)


def login_lockout(lang: str) -> str:
    """The 30 students behind one address, quiet and under the two attacks, before and after:
    their requests refused, the median and worst, the students whose median is within 2× the
    quiet median, the requests answered 200 within it (the per-student shares weighted by
    their requests), the newcomers let in, the attacker's answers, the load; then each run's
    conditions as its record holds them."""
    say, words = LOGIN_WORDS[lang], WORDS[lang]
    rows = []
    for label, name in LOGIN_RUNS:
        r = results(name)
        loads = {x["part"]: x["load_1min"] for x in r["load"]["reads"]}
        twice = 2 * r["quiet_median_ms"]
        for part, p in r["parts"].items():
            each = p["each"].values()
            first = p.get("newcomers_first", {})
            refused_new = sum(1 for s in first.values() if s != 200)
            answers = p.get("attacker", {}).items()
            attacker = ", ".join(f"{n} × {s}" for s, n in answers) or words["none"]
            share = sum(s["within_2x_quiet_median"] * s["requests"] for s in each) / p["requests"]
            rows.append(
                [
                    f"{words[label]} ({r['commit']})" if part == "quiet" else "",
                    part_name(part, lang),
                    f"{p['refused_429']} {words['of']} {p['requests']}",
                    decimal(p["median_ms"], lang),
                    decimal(p["worst_ms"], lang),
                    f"{within_twice(p, twice)} {words['of']} {p['students']}",
                    decimal(f"{share:.1%}", lang),
                    f"{len(first) - refused_new} {words['of']} {len(first)}" if first else "",
                    attacker,
                    decimal(f"{loads.get(part, 0):.2f}", lang),
                ]
            )
    out = [table(say["header"], rows)]
    for label, name in LOGIN_RUNS:
        r = results(name)
        out.append(
            say["footer"].format(
                label=words[label.capitalize()],
                r=r,
                quiet=decimal(r["quiet_median_ms"], lang),
                nomachine="" if "machine" in r else say["nomachine"],
            )
        )
    return "\n".join(out)


def login_findings(lang: str) -> str:
    """What the login runs say: the students' requests the attacks had refused before and
    refuse after; that the records' target (every student's requests within 2× the quiet
    median) is met by no student in any part (``ValueError`` if a record says otherwise, the
    words being wrong then); and, after, the students whose median stays within 2× the quiet
    median and the range of the per-student shares within it, per part."""
    say = LOGIN_WORDS[lang]
    before, after = results(LOGIN_RUNS[0][1]), results(LOGIN_RUNS[1][1])
    attacks = [k for k in after["parts"] if k != "quiet"]
    refused = [
        say["refused"].format(n=p["refused_429"], part=part_name(k, lang))
        for k, p in before["parts"].items()
        if k != "quiet"
    ]
    now = [
        say["now"].format(n=after["parts"][k]["refused_429"], part=part_name(k, lang))
        for k in attacks
    ]
    out = say["before"].format(
        refused=WORDS[lang]["and"].join(refused), now=WORDS[lang]["and"].join(now)
    )
    met = {r["target"] for r in (before, after)}
    if any(p["students_all_within_2x"] for r in (before, after) for p in r["parts"].values()):
        raise ValueError("a login record has a student who met its target; the words say none")
    if len(met) != 1:
        raise ValueError(f"the login records state different targets: {sorted(met)}")

    def counts(r: Mapping[str, Any], quiet: float | None = None) -> str:
        """Per part: the students with every request within the target, or (``quiet``: the
        quiet median) those whose median is within twice it."""
        return listed(
            [
                say["count"].format(
                    a=p["students_all_within_2x"] if quiet is None else within_twice(p, 2 * quiet),
                    b=p["students"],
                    part=part_name(k, lang),
                )
                for k, p in r["parts"].items()
            ],
            lang,
        )

    out += say["target"].format(target=met.pop(), after=counts(after), before=counts(before))
    spread = []
    for k, p in after["parts"].items():
        shares = [s["within_2x_quiet_median"] for s in p["each"].values()]
        lo, hi = (decimal(f"{x:.1%}", lang) for x in (min(shares), max(shares)))
        spread.append(say["range"].format(lo=lo, hi=hi, part=part_name(k, lang)))
    return out + say["medians"].format(
        within=counts(after, after["quiet_median_ms"]), spread=listed(spread, lang)
    )
