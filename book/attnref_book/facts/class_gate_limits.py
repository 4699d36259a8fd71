"""The bounds of one student on the class server's edge-and-gate page (``docs/class-gate.md``,
``docs/class-gate.pt.md``), computed once and said in each language: an upload that is refused,
grading padded answers, the JSON loader's longest number, and the quotas and bounds.

Each function is one code block of the page and returns what it prints. The recorded runs
(``benchmarks/upload_memory.py``, ``benchmarks/padded_answers.py``) are read from
``docs/results``; each table is followed by what its records hold of their conditions, and say
so where a record holds no date, machine or command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Final

from attention_ref.classroom.gate import request_bounds as b
from attention_ref.classroom.gate.quotas import Quotas, default_run_metrics
from attention_ref.classroom.hosting.edge_config import MIB, EdgeLimits
from attention_ref.inputs.jsonfile import MAX_NUMBER_CHARS
from attention_ref.render import thousands
from attnref_book.facts.class_gate import WORDS, decimal, machine
from attnref_book.pages import results, table

#: the page's words for these blocks, in each language of the book
LIMITS: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "upload_header": (
            "commit",
            "bodies at once",
            "answers",
            "idle (MiB)",
            "peak over idle (MiB)",
            "held after (MiB)",
            "load before",
        ),
        "servers": "{n} application servers",
        "unrecorded": "the record holds no {}",
        "nor": " or ",
        "date": "date",
        "machine": "machine",
        "command": "command",
        "cores": "{cpus} cores, Python {python}",
        "first_parts": "\nThe first parts of the two runs differ in more than the code. Before, "
        "the script sent {b[at_once]} × {b_mib} MiB, not the largest body that commit's edge "
        "let through on `upload-artifact` (the record keeps the body sent, not the edge's "
        "limit; see below), answered {b_answers}. After, it sent {a[at_once]} × {a_mib} MiB, "
        "the edge's largest there, answered {a_answers}: the edge turned away what went past "
        "one student's uploads at once, so that part's peak is that of {a_ok} bodies, against "
        "{b_ok} before.",
        "padded_header": (
            "commit",
            "answers",
            "bytes each",
            "seconds for {students}",
            "graded",
            "refused",
            "load before",
        ),
        "kinds": {"plain": "plain", "padded": "padded"},
        "long_number": "A number written with more than {max} characters is refused by the one "
        "JSON loader, on the student's machine before anything is sent and by the grader: a "
        "padded answer costs what reading its first long number costs.",
        "quota_header": ("what", "default", "counted"),
        "per_student": "per student",
        "per_run": "per run",
        "bounds": (
            ("API body", "{json} MiB", "per request, at the edge"),
            (
                "`upload-artifact` body",
                "{upload} MiB",
                "per request, at the edge (MLflow's own limit)",
            ),
            ("artifact upload through the proxy", "{artifact} MiB", "per request, at the edge"),
            ("search filter", "{filter} characters, {conditions} conditions", "per request"),
            ("ids", "{ids}", "per request"),
            (
                "GraphQL query",
                "{gql} characters, {tokens} tokens, depth {depth}",
                "per request",
            ),
        ),
        "metrics": "\nThe metric values of a run default to ten times the step and evaluation "
        "metrics `attnref train` logs with its defaults ({metrics}); a run's final figures and "
        "MLflow's system metrics count against it too. `attnref server status DIR` shows what "
        "each student stores beside the quotas.",
    },
    "pt": {
        "upload_header": (
            "commit",
            "corpos ao mesmo tempo",
            "respostas",
            "em repouso (MiB)",
            "pico acima do repouso (MiB)",
            "ocupado depois (MiB)",
            "carga antes",
        ),
        "servers": "{n} servidores de aplicação",
        "unrecorded": "o registro não guarda {}",
        "nor": " nem ",
        "date": "data",
        "machine": "máquina",
        "command": "comando",
        "cores": "{cpus} cores, Python {python}",
        "first_parts": "\nAs primeiras partes das duas rodadas diferem em mais do que o código. "
        "Antes, o script mandou {b[at_once]} × {b_mib} MiB, não o maior corpo que a borda "
        "daquele commit deixava passar em `upload-artifact` (o registro guarda o corpo "
        "mandado, não o limite da borda; veja abaixo), respondidos {b_answers}. Depois, mandou "
        "{a[at_once]} × {a_mib} MiB, o maior da borda ali, respondidos {a_answers}: a borda "
        "recusou o que passava dos envios ao mesmo tempo de um aluno, então o pico dessa parte "
        "é o de {a_ok} corpos, contra {b_ok} antes.",
        "padded_header": (
            "commit",
            "respostas",
            "bytes cada",
            "segundos para {students}",
            "corrigidas",
            "recusadas",
            "carga antes",
        ),
        "kinds": {"plain": "simples", "padded": "infladas"},
        "long_number": "Um número escrito com mais de {max} caracteres é recusado pelo único "
        "leitor de JSON, na máquina do aluno antes de qualquer coisa ser enviada e pelo "
        "corretor: uma resposta inflada custa o que custa ler o seu primeiro número longo.",
        "quota_header": ("o quê", "padrão", "contado"),
        "per_student": "por aluno",
        "per_run": "por run",
        "bounds": (
            ("corpo da API", "{json} MiB", "por requisição, na borda"),
            (
                "corpo de `upload-artifact`",
                "{upload} MiB",
                "por requisição, na borda (o limite do próprio MLflow)",
            ),
            ("envio de artefato pelo proxy", "{artifact} MiB", "por requisição, na borda"),
            ("filtro de busca", "{filter} caracteres, {conditions} condições", "por requisição"),
            ("ids", "{ids}", "por requisição"),
            (
                "consulta GraphQL",
                "{gql} caracteres, {tokens} tokens, profundidade {depth}",
                "por requisição",
            ),
        ),
        "metrics": "\nOs valores de métricas de um run são, por padrão, dez vezes as métricas de "
        "passo e de avaliação que `attnref train` registra com os seus padrões ({metrics}); os "
        "números finais de um run e as métricas de sistema do MLflow também contam. `attnref "
        "server status DIR` mostra o que cada aluno guarda ao lado das cotas.",
    },
}

#: the two runs of each benchmark, before issue 57's changes first
UPLOAD_RUNS: Final = (("before", "upload-memory-before.json"), ("after", "upload-memory.json"))
PADDED_RUNS: Final = (("before", "padded-answers-before.json"), ("after", "padded-answers.json"))


def conditions(label: str, r: Mapping[str, Any], lang: str, extra: str = "") -> str:
    """A record's conditions as it holds them: ``label: commit …, date, machine[, extra];
    `command`.``, and which of date, machine and command it does not hold."""
    say = LIMITS[lang]
    said = [f"commit {r['commit']}"]
    if "date" in r:
        said.append(r["date"])
    m = r.get("machine")
    if isinstance(m, Mapping):
        m = say["cores"].format(**m)
    if m:
        said.append(machine(m, lang))
    if extra:
        said.append(extra)
    missing = [say[k] for k in ("date", "machine", "command") if not r.get(k)]
    tail = [f"`{r['command']}`"] if r.get("command") else []
    if missing:
        tail.append(say["unrecorded"].format(say["nor"].join(missing)))
    return f"\n{WORDS[lang][label.capitalize()]}: " + ", ".join(said) + "; " + "; ".join(tail) + "."


def answers_of(part: Mapping[str, Any]) -> str:
    """A part's answers by status: ``2 × 200, 1 × 429``."""
    return ", ".join(f"{n} × {s}" for s, n in part["answers"].items())


def upload_memory(lang: str) -> str:
    """Three ``upload-artifact`` requests at once from one student, of the first part's body
    then of 300 MiB, before and after: the answers, and the memory of the application server
    that answered (idle, its peak ``VmHWM`` over idle, what it holds after); then each run's
    conditions, and how the two first parts differ (the body sent, the uploads let in)."""
    say, words = LIMITS[lang], WORDS[lang]
    rows = []
    for label, name in UPLOAD_RUNS:
        r = results(name)
        for part in r["parts"]:
            app = max(part["application_servers"], key=lambda a: a["peak_over_idle_mib"])
            rows.append(
                [
                    f"{words[label]} ({r['commit']})" if part is r["parts"][0] else "",
                    decimal(f"{part['at_once']} × {part['body_mib']:g} MiB", lang),
                    answers_of(part),
                    decimal(app["idle_mib"], lang),
                    decimal(app["peak_over_idle_mib"], lang),
                    decimal(app["after_over_idle_mib"], lang),
                    decimal(part["before"]["load_1min"], lang),
                ]
            )
    out = [table(say["upload_header"], rows)]
    for label, name in UPLOAD_RUNS:
        r = results(name)
        servers = say["servers"].format(n=len(r["parts"][0]["application_servers"]))
        out.append(conditions(label, r, lang, servers))
    before, after = (results(name)["parts"][0] for _, name in UPLOAD_RUNS)
    out.append(
        say["first_parts"].format(
            b=before,
            a=after,
            b_mib=decimal(f"{before['body_mib']:g}", lang),
            a_mib=decimal(f"{after['body_mib']:g}", lang),
            b_answers=answers_of(before),
            a_answers=answers_of(after),
            b_ok=before["answers"].get("200", 0),
            a_ok=after["answers"].get("200", 0),
        )
    )
    return "\n".join(out)


def padded_answers(lang: str) -> str:
    """The grader's ``check_answer`` on the recorded right answers, plain and with every
    number padded by zeros, before and after: the bytes of each answer, the seconds for all,
    the graded and the refused, the load; then each run's conditions."""
    say, words = LIMITS[lang], WORDS[lang]
    rows = []
    students = set()
    for label, name in PADDED_RUNS:
        r = results(name)
        students.add(r["students"])
        for kind in ("plain", "padded"):
            p = r[kind]
            rows.append(
                [
                    f"{words[label]} ({r['commit']})" if kind == "plain" else "",
                    say["kinds"][kind],
                    thousands(r["answer_bytes"][kind], lang),
                    decimal(p["seconds"], lang),
                    p["graded"],
                    p["refused"],
                    decimal(f"{p['load_1m']:.2f}", lang),
                ]
            )
    (count,) = students  # the header names it: the two runs graded as many answers
    header = [h.format(students=count) for h in say["padded_header"]]
    out = [table(header, rows)]
    out += [conditions(label, results(name), lang) for label, name in PADDED_RUNS]
    return "\n".join(out)


def long_number(lang: str) -> str:
    """The longest number the one JSON loader reads (`MAX_NUMBER_CHARS`), on the student's
    machine and in the grader."""
    return LIMITS[lang]["long_number"].format(max=MAX_NUMBER_CHARS)


def quotas_and_bounds(lang: str) -> str:
    """What one student may store and ask: `Quotas`' defaults (per student or per run), the
    edge's body limits (`EdgeLimits`) and the request bounds (`request_bounds`), then the
    default metric values of a run (`default_run_metrics`)."""
    say = LIMITS[lang]
    q, e = Quotas(), EdgeLimits()
    rows: list[list[object]] = [
        [
            f"`--quota {k.replace('_', '-')}`",
            thousands(v, lang),
            say["per_student"] if k in ("runs", "artifact_mib") else say["per_run"],
        ]
        for k, v in asdict(q).items()
    ]
    values = {
        "json": e.max_json_bytes // MIB,
        "upload": e.max_upload_artifact_bytes // MIB,
        "artifact": e.max_artifact_bytes // MIB,
        "filter": thousands(b.MAX_FILTER_CHARS, lang),
        "conditions": b.MAX_FILTER_CONDITIONS,
        "ids": b.MAX_IDS,
        "gql": thousands(b.MAX_GRAPHQL_CHARS, lang),
        "tokens": thousands(b.MAX_GRAPHQL_TOKENS, lang),
        "depth": b.MAX_GRAPHQL_DEPTH,
    }
    rows += [[what, default.format(**values), counted] for what, default, counted in say["bounds"]]
    out = [table(say["quota_header"], rows)]
    out.append(say["metrics"].format(metrics=thousands(default_run_metrics(), lang)))
    return "\n".join(out)
