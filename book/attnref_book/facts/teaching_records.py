"""The teaching page's recorded figures (``docs/teaching.md``, ``docs/teaching.pt.md``): the
recorded class doing homework (``class-homework.json``) and the class server's load test
(``class-load.json``), each said in the page's language.

The records name what each student did, and their statuses, in English; the Portuguese page
translates them here (`RECORDED`), and says a phrase it has no words for in English, marked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from attention_ref.render import DECIMAL_MARK
from attnref_book.claims import class_claims, made_by, recorded_on
from attnref_book.pages import check, prose, results, table, thousands

#: what the records say in English, per language: (a regular expression of a recorded
#: phrase, its words), and how a phrase with no entry is shown
RECORDED: dict[str, dict[str, Any]] = {
    "en": {"behaviour": [], "unknown": "{}", "late": [], "status": {}, "machine": []},
    "pt": {
        "behaviour": [
            (r"right", "certa"),
            (
                r"right, after a malformed file the client refused",
                "certa, depois de um arquivo malformado que o cliente recusou",
            ),
            (
                r"rounding carried from earlier steps",
                "arredondamento dos passos anteriores levado adiante",
            ),
            (r"rounded to (\d+) decimals", r"arredondada com \1 casas"),
            (r"a partial answer \((.*)\)", r"uma resposta parcial (\1)"),
            (r"mistake: (.*)", r"erro: \1"),
            (r"an arithmetic slip in the output", "um erro de conta na saída"),
            (r"two mistakes: (.*)", r"dois erros: \1"),
            (r"late, right", "atrasada, certa"),
            (r"late, no mask", "atrasada, sem máscara"),
            (r"resubmitted: no scale, then right", "reenviada: sem escala, depois certa"),
            (
                r"resubmitted: right, then K Qᵀ \(the latest counts\)",
                "reenviada: certa, depois K Qᵀ (vale a última)",
            ),
            (
                r"resubmitted: softmax over columns on time, then right but late",
                "reenviada: softmax nas colunas no prazo, depois certa mas atrasada",
            ),
            (
                r"malformed, pushed past the command over REST",
                "malformada, enviada por fora do comando, pela API REST",
            ),
        ],
        "unknown": "*{}* (em inglês)",
        "late": [("late by", "atrasada em")],
        "status": {"graded": "corrigida", "malformed": "malformada"},
        "machine": [("cores", "núcleos")],
    },
}

#: the page's words per language; ``{…}`` fields are filled from the records
WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "verdicts": "the gradebook equals the checker's own verdict for every student",
        "verdicts_detail": "{students} students, {mismatches} differences, {errors} errors",
        "lost": "nothing lost",
        "lost_detail": "{stored} submissions stored, {finished_runs_on_the_server} finished runs "
        "on the server, {answers_on_disk} answers on disk ({answers_equal_to_what_was_sent} "
        "byte for byte what was sent), {graded_submissions} graded; {refused_by_the_client} "
        "file refused by the client, nothing sent",
        "times": "\n{on_time_students} of the {students} students sent {on_time} submissions "
        "concurrently in {on_time_s} s{only_late}; after the due time the {late} late ones "
        "came in {late_s} s; the teacher graded all {graded} in {grade_s} s (from {started} to "
        "{ended}, commit {commit}, {machine}, 1-minute load {load} before, {servers} "
        "application servers; {made_by}).\n",
        "only_late": " (the other {n}, {names}, sent only after the due time)",
        "and": "and",
        "gradebook": '??? note "The gradebook (`attnref server grades attention-1`)"\n',
        "gradebook_header": [
            "student",
            "what they did",
            "steps right",
            "first wrong step",
            "diagnosis",
            "attempts",
            "late",
            "status",
        ],
        "summary": "{answers} counted answers graded: {all_right} all right ({every_step} with "
        "all {steps} steps right, {partial_all_right} partial with every step given right: "
        "{partial_students}), {few_decimals} short of decimals only, {no_diagnosis} wrong with "
        "no mistake of the catalogue reproducing them; {late} late, {missing} missing, "
        "{malformed} malformed.\n",
        "mistakes_header": ["mistake", "students", "diagnosed as"],
        "not_made": "\nNot made: {never}. {why}\n",
        "first_wrong_header": ["first wrong step", "answers"],
        "load_title": "{runs} concurrent trainings on the class server",
        "load_rows": [
            "runs (students × runs each)",
            "steps per run",
            "metric points logged (all runs; system metrics left out)",
            "artifacts (all runs)",
            "logged models (all runs)",
            "lost",
            "seconds, first start to last finish",
            "machine",
        ],
        "per_run": "{n} ({per_run} per run)",
        "files": "{n} ({files} files)",
        "machine": "{cores} CPU cores (1-minute load average {load} at the end, the {runs} "
        "trainings' own included), {workers} server worker, MLflow `{mlflow}`",
        "one_run": "The seconds are one run on {cores} cores shared by the {runs} training "
        "processes and the server; no run separates the machine's share of them from the "
        "server's.",
    },
    "pt": {
        "verdicts": "o diário de notas é o veredito do verificador para cada aluno",
        "verdicts_detail": "{students} alunos, {mismatches} diferenças, {errors} erros",
        "lost": "nada se perdeu",
        "lost_detail": "{stored} envios guardados, {finished_runs_on_the_server} runs terminados "
        "no servidor, {answers_on_disk} respostas no disco ({answers_equal_to_what_was_sent} "
        "idênticas, byte a byte, ao que foi enviado), {graded_submissions} corrigidas; "
        "{refused_by_the_client} arquivo recusado pelo cliente, nada enviado",
        "times": "\n{on_time_students} dos {students} alunos enviaram {on_time} respostas ao "
        "mesmo tempo em {on_time_s} s{only_late}; depois do prazo, as {late} atrasadas "
        "chegaram em {late_s} s; o professor corrigiu as {graded} em {grade_s} s (de {started} "
        "a {ended}, commit {commit}, {machine}, carga de 1 minuto {load} antes, {servers} "
        "servidores de aplicação; {made_by}).\n",
        "only_late": " (os outros {n}, {names}, só enviaram depois do prazo)",
        "and": "e",
        "gradebook": '??? note "O diário de notas (`attnref server grades attention-1`)"\n',
        "gradebook_header": [
            "aluno",
            "o que fez",
            "passos certos",
            "primeiro passo errado",
            "diagnóstico",
            "tentativas",
            "atraso",
            "situação",
        ],
        "summary": "{answers} respostas contadas corrigidas: {all_right} todas certas "
        "({every_step} com os {steps} passos certos, {partial_all_right} parcial com todos os "
        "passos dados certos: {partial_students}), {few_decimals} só com casas a menos, "
        "{no_diagnosis} erradas sem erro do catálogo que as reproduza; {late} atrasadas, "
        "{missing} faltando, {malformed} malformada.\n",
        "mistakes_header": ["erro", "alunos", "diagnosticado como"],
        "not_made": "\nNinguém cometeu: {never}. {why}\n",
        "first_wrong_header": ["primeiro passo errado", "respostas"],
        "load_title": "{runs} treinamentos simultâneos no servidor da turma",
        "load_rows": [
            "runs (alunos × runs de cada um)",
            "passos por run",
            "pontos de métrica registrados (todos os runs; sem as métricas de sistema)",
            "artefatos (todos os runs)",
            "modelos salvos (todos os runs)",
            "perdidos",
            "segundos, do primeiro início ao último fim",
            "máquina",
        ],
        "per_run": "{n} ({per_run} por run)",
        "files": "{n} ({files} arquivos)",
        "machine": "{cores} núcleos de CPU (média de carga de 1 minuto {load} no fim, contando "
        "os {runs} treinamentos), {workers} worker do servidor, MLflow `{mlflow}`",
        "one_run": "Os segundos são uma só execução em {cores} núcleos divididos pelos {runs} "
        "processos de treino e pelo servidor; nenhuma execução separa a parte da máquina da do "
        "servidor.",
    },
}


def phrase_said(phrase: str, pairs: Sequence[tuple[str, str]], unknown: str) -> str:
    """A recorded phrase in the page's language: the first ``(pattern, words)`` of ``pairs``
    whose pattern matches it whole, else ``unknown`` around it."""
    for pattern, words in pairs:
        if re.fullmatch(pattern, phrase):
            return re.sub(pattern, words, phrase)
    return unknown.format(phrase)


def replaced(text: str, pairs: Sequence[tuple[str, str]]) -> str:
    """``text`` with each ``(old, new)`` of ``pairs`` replaced."""
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def listed(names: Sequence[str], lang: str) -> str:
    """``a, b and c`` in the page's language."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {WORDS[lang]['and']} {names[-1]}"


def class_record(lang: str) -> str:
    """The recorded class (``class-homework.json``): two checks (the gradebook equals the
    checker's verdicts; every submission stored, finished, on disk byte for byte and graded),
    who sent what when (`attnref_book.claims.class_claims`; the students who sent only after
    the due time named), and the gradebook."""
    w, say = WORDS[lang], RECORDED[lang]
    r = results("class-homework.json")
    c, t, cond = r["counts"], r["timings"], r["conditions"]
    out = [
        check(
            w["verdicts"],
            not r["mismatches"] and not r["errors"],
            w["verdicts_detail"].format(
                students=c["students"], mismatches=len(r["mismatches"]), errors=len(r["errors"])
            ),
            lang=lang,
        )
    ]
    kept = (
        c["stored"],
        c["finished_runs_on_the_server"],
        c["answers_on_disk"],
        c["answers_equal_to_what_was_sent"],
        c["graded_submissions"],
    )
    out.append(check(w["lost"], len(set(kept)) == 1, w["lost_detail"].format(**c), lang=lang))
    k = class_claims(r)
    # a student who sent in the on-time phase is one of `on_time_students`; the rest sent late
    only_late = [g["student"] for g in r["gradebook"] if g["attempts"] <= bool(g["late"])]
    if len(only_late) != c["students"] - k.on_time_students:
        raise AssertionError(f"the students who sent only late, {only_late}, do not add up")
    out.append(
        prose(
            w["times"].format(
                on_time_students=k.on_time_students,
                students=c["students"],
                on_time=k.on_time,
                on_time_s=t["on_time_s"],
                only_late=w["only_late"].format(n=len(only_late), names=listed(only_late, lang))
                if only_late
                else "",
                late=k.late,
                late_s=t["late_s"],
                graded=c["graded_submissions"],
                grade_s=t["grade_s"],
                started=cond["started"],
                ended=cond["ended"],
                commit=cond["commit"],
                machine=replaced(cond["machine"], say["machine"]),
                load=cond["load_1min_before"],
                servers=cond["application_servers"],
                made_by=made_by(cond, lang),
            ),
            lang,
        )
    )
    asked = k.steps  # the steps a whole answer has: `attnref server grades` divides by them
    rows = [
        [
            g["student"],
            phrase_said(g["behaviour"], say["behaviour"], say["unknown"]),
            f"{g['steps_right']}/{asked}" if g["status"] == "graded" else "–",
            f"`{g['first_wrong']}`" if g["first_wrong"] else "",
            g["diagnosis"],
            g["attempts"],
            replaced(g["late"], say["late"]),
            say["status"].get(g["status"], g["status"]),
        ]
        for g in r["gradebook"]
    ]
    out.append(w["gradebook"])
    body = table(w["gradebook_header"], rows)
    out.append("\n".join("    " + line for line in body.splitlines()))
    return "\n".join(out)


def class_summary(lang: str) -> str:
    """The recorded class's summary (``attnref server grades --summary``): the counted
    answers, how many students each mistake of the catalogue reproduces (and what it was
    diagnosed as), why the mistakes no one made were not made
    (`attnref_book.simulated.class_record.absent_on_the_class`), the first wrong steps."""
    from attnref_book.simulated.class_record import absent_on_the_class

    w = WORDS[lang]
    r = results("class-homework.json")
    s, k = r["summary"], class_claims(r)
    figures: Mapping[str, Any] = {
        **s,
        "every_step": k.every_step,
        "steps": k.steps,
        "partial_all_right": k.partial_all_right,
        "partial_students": ", ".join(k.partial_students),
    }
    never = [m["mistake"] for m in s["mistakes"] if not m["students"]]
    made = [
        [m["mistake"], m["students"], ", ".join(x for x in m["as"] if x != m["mistake"])]
        for m in s["mistakes"]
        if m["students"]
    ]
    first = [[f"`{f['step']}`", f["answers"]] for f in s["first_wrong"]]
    return "\n".join(
        [
            w["summary"].format(**figures),
            table(w["mistakes_header"], made),
            w["not_made"].format(never=", ".join(never), why=absent_on_the_class(r, never, lang)),
            table(w["first_wrong_header"], first),
        ]
    )


def load_figures(lang: str) -> str:
    """The load test (``class-load.json``): when and on what it ran
    (`attnref_book.claims.recorded_on`), concurrent trainings into one class server, what they
    logged and what was lost, and what its seconds are: one run, on cores the trainings and
    the server shared."""
    w = WORDS[lang]
    r = results("class-load.json")
    mark = DECIMAL_MARK[lang]
    names = w["load_rows"]
    values = [
        f"{r['runs']} ({r['students']} × {r['runs'] // r['students']})",
        r["steps_per_run"],
        w["per_run"].format(n=thousands(r["points"], lang), per_run=r["points_per_run"]),
        w["per_run"].format(n=r["artifacts"], per_run=r["artifacts_per_run"]),
        w["files"].format(n=r["models"], files=r["model_files"]),
        r["lost"],
        str(r["seconds"]).replace(".", mark),
        w["machine"].format(
            cores=r["cpu_cores"],
            load=str(r["load_average_after"]).replace(".", mark),
            runs=r["runs"],
            workers=r["server_workers"],
            mlflow=r["mlflow_version"],
        ),
    ]
    rows = [[name, value] for name, value in zip(names, values, strict=True)]
    return "\n".join(
        [
            recorded_on(r, lang) + "\n",
            table([w["load_title"].format(runs=r["runs"]), ""], rows),
            w["one_run"].format(cores=r["cpu_cores"], runs=r["runs"]),
        ]
    )
