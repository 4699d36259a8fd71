"""The teaching page's facts (``docs/teaching.md``, ``docs/teaching.pt.md``): the class
server's access table and its recorded HTTP walk, a homework policy's words, the LMS import
steps and the pools of connections, each said in the page's language.

The recorded class (``class-homework.json``) and the load test (``class-load.json``) are in
`attnref_book.facts.teaching_records`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from attention_ref.classroom.coursework.assignment import GRADE
from attention_ref.classroom.coursework.gradebook import SHOWN_COLUMNS, VIEW_TAG
from attention_ref.experiments.report_words import join_words
from attnref_book.claims import ACCESS_PT, ROLE_PT
from attnref_book.pages import check, results, table

#: the page's words per language; ``{…}`` fields are filled from the record or the code
WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "view": "The gradebook's link (printed by `assign` and `grade`) opens MLflow's runs "
        "table in the gradebook's own view: one run per student and exercise, by student, with "
        "the grade's columns first, in this order: {columns} (the experiment keeps that view in "
        'its tag `{tag}`, and MLflow says "You\'re viewing a shared view").',
        "view_tags": {
            "diagnosis": "the diagnosis",
            "first_wrong": "the first wrong step",
            "status": "the status",
        },
        "access": "access",
        "verdicts": {"allow": "yes", "if owner": "their own only", "401": "401", "403": "403"},
        "roles": {},
        "accesses": {},
        "unnamed_role": "{}",
        "unnamed_access": "{}",
        "unnamed_access_cell": "{}",
        "walk": "MLflow `{mlflow_version}` serves **{routes} routes** ({route_keys} once the API "
        "prefixes are merged); {roles} roles; {requests} requests, of which **{refused_by_gate} "
        "refused by the class's gate** ({refused_401} × 401 without an account, {refused_403} "
        "× 403) and {refused_by_mlflow} by MLflow's own checks behind it; a student is refused "
        "{student_refused_keys} of the {route_keys} routes outright.\n",
        "same_table": "the recorded table is the code's table",
        "same_table_detail": "{n} routes, each with the rule `access.py` gives it",
        "own_and_other": "own {own} · other's {other}",
        "whole_table": '??? note "The whole table: every route × role → HTTP status"\n',
        "walk_header": ["route", "paths", "access", "admin", "teacher", "student", "no account"],
        "walk_note": "\n    `paths`: how many served paths the row stands for (its API "
        "prefixes); a student asked twice shows `own … · other's …`; `403*` is MLflow's own "
        "refusal behind the gate; the admin and the teacher are asked about things that do not "
        "exist (so walking the delete routes deletes nothing), hence their 404s.",
        "policy": "`--due 2026-12-01T22:59Z --late-penalty 10 --cutoff 2026-12-03T22:59Z "
        "--attempts 3 --feedback steps` prints on each statement: *{words}* An answer received "
        "{days} day and {hours} hours late loses {penalty}% of its points.",
        "assignment": "attention-1",
        "moodle": "**Moodle** (Grades, Import, CSV file):\n\n```text",
        "canvas": "```\n\n**Canvas** (Grades, Import):\n\n```text",
        "pools": "* requests one server runs at once: {threads}; store connections one request "
        "holds at most: {sessions};\n"
        "* each store's pool (the runs', the accounts'): {store} connections ({kept} kept open "
        "while idle); the runs' locks': {locks};\n"
        "* PostgreSQL's `max_connections` for the default {workers} servers: {max_connections} "
        "(every pool full, plus {reserved} for the class's commands and PostgreSQL's own).",
    },
    "pt": {
        "view": "O link do diário de notas (impresso por `assign` e por `grade`) abre a tabela de "
        "runs do MLflow na visão do próprio diário: um run por aluno e exercício, por aluno, "
        "com as colunas da nota primeiro, nesta ordem: {columns} (o experimento guarda essa "
        'visão na sua tag `{tag}`, e o MLflow avisa "You\'re viewing a shared view").',
        "view_tags": {
            "diagnosis": "o diagnóstico",
            "first_wrong": "o primeiro passo errado",
            "status": "a situação",
        },
        "access": "acesso",
        "verdicts": {"allow": "sim", "if owner": "só o que é seu", "401": "401", "403": "403"},
        "roles": ROLE_PT,
        "accesses": ACCESS_PT,
        "unnamed_role": "*{}*",
        "unnamed_access": "*{}* (em inglês)",
        "unnamed_access_cell": "*{}*",
        "walk": "O MLflow `{mlflow_version}` serve **{routes} rotas** ({route_keys} depois de "
        "juntar os prefixos da API); {roles} papéis; {requests} requisições, das quais "
        "**{refused_by_gate} recusadas pelo portão da turma** ({refused_401} × 401 sem conta, "
        "{refused_403} × 403) e {refused_by_mlflow} pelas verificações do próprio MLflow atrás "
        "dele; um aluno é recusado de saída em {student_refused_keys} das {route_keys} rotas.\n",
        "same_table": "a tabela gravada é a tabela do código",
        "same_table_detail": "{n} rotas, cada uma com a regra que `access.py` lhe dá",
        "own_and_other": "seu {own} · de outro {other}",
        "whole_table": '??? note "A tabela inteira: cada rota × papel → status HTTP"\n',
        "walk_header": ["rota", "caminhos", "acesso", "admin", "professor", "aluno", "sem conta"],
        "walk_note": "\n    `caminhos`: quantos caminhos servidos a linha representa (os "
        "prefixos da API); um aluno perguntado duas vezes mostra `seu … · de outro …`; `403*` é "
        "a recusa do próprio MLflow atrás do portão; o admin e o professor são perguntados sobre "
        "coisas que não existem (assim, percorrer as rotas de exclusão não exclui nada), daí os "
        "seus 404.",
        "policy": "`--due 2026-12-01T22:59Z --late-penalty 10 --cutoff 2026-12-03T22:59Z "
        "--attempts 3 --feedback steps` imprime em cada enunciado: *{words}* Uma resposta "
        "recebida com {days} dia e {hours} horas de atraso perde {penalty}% dos pontos.",
        "assignment": "atencao-1",
        "moodle": "**Moodle** (Notas, Importar, Arquivo CSV):\n\n```text",
        "canvas": "```\n\n**Canvas** (Notas, Importar):\n\n```text",
        "pools": "* requisições que um servidor roda ao mesmo tempo: {threads}; conexões do "
        "armazenamento que uma requisição segura no máximo: {sessions};\n"
        "* o pool de cada armazenamento (o dos runs, o das contas): {store} conexões ({kept} "
        "mantidas abertas quando ociosas); o das travas dos runs: {locks};\n"
        "* o `max_connections` do PostgreSQL para os {workers} servidores padrão: "
        "{max_connections} (todos os pools cheios, mais {reserved} para os comandos da turma e "
        "os do próprio PostgreSQL).",
    },
}


def named(name: str, names: Mapping[str, str], unnamed: str) -> str:
    """``name`` in the page's language: its entry in ``names``, else ``unnamed`` around it
    (the name as the code and its record spell it, marked as such where the page's language
    is another)."""
    return names.get(name, unnamed.format(name))


def gradebook_view(lang: str) -> str:
    """The gradebook's view in MLflow's UI: its columns in the order the view gives them
    (`attention_ref.classroom.coursework.gradebook.SHOWN_COLUMNS`), metrics by their names,
    tags in words."""
    w = WORDS[lang]
    names = []
    for key in SHOWN_COLUMNS:
        kind, name = key.split(".", 1)
        name = name.strip("`").removeprefix(GRADE)
        names.append(f"`{name}`" if kind == "metrics" else w["view_tags"][name])
    return w["view"].format(columns=join_words(names, lang), tag=VIEW_TAG)


def access_table(lang: str) -> str:
    """The class server's access table: each access of
    `attention_ref.classroom.gate.access.Access` × each role, the verdict
    `attention_ref.classroom.gate.access.verdict` gives it, as a Markdown table."""
    from attention_ref.classroom.gate.access import Access, Role, verdict

    w = WORDS[lang]
    roles = " | ".join(named(r.value, w["roles"], w["unnamed_role"]) for r in Role)
    out = [f"| {w['access']} | {roles} |\n|---|" + "---|" * len(Role)]
    for a in Access:
        cells = " | ".join(w["verdicts"][verdict(r, a).value] for r in Role)
        out.append(f"| {named(a.value, w['accesses'], w['unnamed_access'])} | {cells} |")
    return "\n".join(out)


def access_walk(lang: str) -> str:
    """The recorded walk of every route over real HTTP as each role (``class-access.json``):
    its counts, a check that the recorded table is the code's
    (`attention_ref.classroom.gate.access.rules`), and the whole table of HTTP statuses."""
    from attention_ref.classroom.gate.access import rules

    w = WORDS[lang]
    r = results("class-access.json")
    recorded = {row["route"]: row["access"] for row in r["rows"]}
    code = {k: str(v) for k, v in rules().items()}
    out = [w["walk"].format(**r["summary"])]
    detail = w["same_table_detail"].format(n=len(recorded))
    out.append(check(w["same_table"], recorded == code, detail, lang=lang))

    def cell(row: dict[str, Any], role: str) -> str:
        if role == "student":
            own, other = row["cells"].get("student (own)"), row["cells"].get("student (other's)")
            if own is not None:
                return str(w["own_and_other"].format(own=own, other=other))
        return str(row["cells"].get(role, ""))

    rows = [
        [
            f"`{row['route']}`",
            row["paths"],
            named(row["access"], w["accesses"], w["unnamed_access_cell"]),
            *(cell(row, c) for c in ("admin", "teacher", "student", "no account")),
        ]
        for row in r["rows"]
    ]
    out.append(w["whole_table"])
    body = table(w["walk_header"], rows)
    out.append("\n".join("    " + line for line in body.splitlines()))
    out.append(w["walk_note"])
    return "\n".join(out)


def policy_example(lang: str) -> str:
    """A homework policy (a 10 % late penalty a day, a cut-off two days after the due time,
    3 attempts, feedback by steps) as a statement prints it, and the penalty of an answer a
    day and two hours late (`attention_ref.classroom.coursework.policy.Policy.penalty`)."""
    from attention_ref.classroom.coursework.policy import Feedback, Policy

    due = dt.datetime(2026, 12, 1, 22, 59, tzinfo=dt.UTC)
    p = Policy(
        late_penalty=10, cutoff=due + dt.timedelta(days=2), attempts=3, feedback=Feedback.STEPS
    )
    late = dt.timedelta(days=1, hours=2)
    return str(
        WORDS[lang]["policy"].format(
            words=p.words(lang),
            days=late.days,
            hours=late.seconds // 3600,
            penalty=p.penalty(late),
        )
    )


def lms_steps(lang: str) -> str:
    """The steps of importing an assignment of two exercises into Moodle (a roster by
    e-mail) and Canvas (`attention_ref.classroom.coursework.lms.import_steps`), with the
    points its answers can get (`attention_ref.classroom.exchange.grade.steps_asked`)."""
    from attention_ref.classroom.coursework.assignment import Assignment
    from attention_ref.classroom.coursework.lms import import_steps
    from attention_ref.classroom.exchange.grade import steps_asked

    w = WORDS[lang]
    name = w["assignment"]
    points = steps_asked(Assignment(name=name, exercises=2))
    return "\n".join(
        [
            w["moodle"],
            "\n".join(import_steps("moodle", name, points, "email", lang=lang)),
            w["canvas"],
            "\n".join(import_steps("canvas", name, points, lang=lang)),
            "```",
        ]
    )


def pools(lang: str) -> str:
    """The pools of database connections, counted from the requests one application server
    runs at once and the store connections one request holds
    (`attention_ref.classroom.gate.pools`), and PostgreSQL's ``max_connections`` for the
    default number of application servers: every pool full, plus the reserved ones."""
    from attention_ref.classroom.gate import pools as p
    from attention_ref.classroom.hosting.server import DEFAULT_WORKERS

    return str(
        WORDS[lang]["pools"].format(
            threads=p.REQUEST_THREADS,
            sessions=p.STORE_SESSIONS_PER_REQUEST,
            store=p.STORE_CONNECTIONS,
            kept=p.STORE_POOL_SIZE,
            locks=p.LOCK_CONNECTIONS,
            workers=DEFAULT_WORKERS,
            max_connections=p.max_connections(DEFAULT_WORKERS),
            reserved=p.RESERVED_CONNECTIONS,
        )
    )
