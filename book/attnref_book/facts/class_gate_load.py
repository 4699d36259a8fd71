"""The timings of the class server's edge-and-gate page (``docs/class-gate.md``,
``docs/class-gate.pt.md``), computed once and said in each language: another's thing and no
thing asked for (``benchmarks/hidden_timing.py``), and a whole class submitting at once
(``tools/record_class.py``).

Each function is one code block of the page and returns what it prints; its checks
(`attnref_book.pages.check`) fail the build when a record contradicts the page's words.
"""

from __future__ import annotations

from typing import Any, Final

from attnref_book.claims import made_by
from attnref_book.facts.class_gate import MACHINE, WORDS, decimal, machine, run_items
from attnref_book.pages import check, results, table

#: the page's words for these blocks, in each language of the book
LOAD: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "yes": "yes",
        "no": "no",
        "hidden_header": (
            "server",
            "route",
            "one answer",
            "another's (ms, median)",
            "none (ms, median)",
            "difference (ms)",
            "spread of none (IQR, ms)",
        ),
        "hidden_label": "after: the medians of another's and of none differ by less than the "
        "spread",
        "hidden_detail": "{reps} of each per route, interleaved; the largest difference {most} "
        "ms. The spread is that of one request's time (its IQR), not of a median's: a "
        "difference within it is hidden from one request, not necessarily from many requests "
        "averaged",
        "hidden_footer": "\n{label}: commit {r[commit]}, {r[date]}, {machine}, load {load} and "
        "{busy} cores busy before; `{r[command]}`.",
        "kept_label": "{n} students: nothing lost, no student told what the server contradicts",
        "kept_detail": "{stored} stored by the students' commands, {finished} finished on the "
        "server; {told} commands said it failed while the server holds it; the gradebook equals "
        "the checker for every student whose command said stored ({differ} differ)",
        "patience_label": "{n} students: every submit within the command's patience",
        "patience_detail": "the slowest took {slowest} s; the command gives up after "
        "{patience:.0f} s",
        "failed": "\n{n} students, a command that failed: `{error}`\n",
        "class_header": (
            "students",
            "stored (commands)",
            "finished (server)",
            "lost",
            "command errors",
            "told failed, finished",
            "gradebook ≠ checker",
            "the burst (s)",
            "one submit p50 (s)",
            "p95 (s)",
            "slowest (s)",
            "grading (s)",
            "load before",
        ),
        "late": "\n{n} students: the burst lasted {t[on_time_s]:.0f} s, more than a minute (one "
        "submit took {t[submit_p50_s]:.0f} s at the median), in one run with the students' "
        "processes and the server on the same cores: on such a machine, a class of {n} that all "
        "start submitting in the last minute before the due time would have part of its "
        "submissions stamped late, since the gate stamps a submission when it finishes. How long "
        "the burst lasts where the students submit from their own machines was not measured.",
        "recorded": "\n{n} students: recorded from {m[started]} to {m[ended]}, commit "
        "{m[commit]}, on {machine} (the students' processes and the server on the same cores), "
        "{m[application_servers]} application servers, the command's patience "
        "({m[patience_s]:.0f} s, {m[patience_tries]} tries); {made_by}; the load is the "
        "1-minute load average before the run.",
    },
    "pt": {
        "yes": "sim",
        "no": "não",
        "hidden_header": (
            "servidor",
            "rota",
            "uma só resposta",
            "de outro (ms, mediana)",
            "nenhum (ms, mediana)",
            "diferença (ms)",
            "dispersão de nenhum (IQR, ms)",
        ),
        "hidden_label": "depois: as medianas de um run de outro e de nenhum run diferem menos do "
        "que a dispersão",
        "hidden_detail": "{reps} de cada por rota, intercalados; a maior diferença {most} ms. A "
        "dispersão é a do tempo de uma requisição (o seu IQR), não a de uma mediana: uma "
        "diferença dentro dela fica escondida de uma requisição, não necessariamente de muitas "
        "requisições em média",
        "hidden_footer": "\n{label}: commit {r[commit]}, {r[date]}, {machine}, carga {load} e "
        "{busy} núcleos ocupados antes; `{r[command]}`.",
        "kept_label": "{n} alunos: nada se perdeu, a nenhum aluno se disse o que o servidor "
        "contradiz",
        "kept_detail": "{stored} guardados pelos comandos dos alunos, {finished} terminados no "
        "servidor; {told} comandos disseram que falhou enquanto o servidor o guarda; o diário "
        "de notas é igual ao verificador para cada aluno cujo comando disse guardado ({differ} "
        "diferem)",
        "patience_label": "{n} alunos: cada envio dentro da paciência do comando",
        "patience_detail": "o mais lento levou {slowest} s; o comando desiste depois de "
        "{patience:.0f} s",
        "failed": "\n{n} alunos, um comando que falhou: `{error}`\n",
        "class_header": (
            "alunos",
            "guardados (comandos)",
            "terminados (servidor)",
            "perdidos",
            "erros de comando",
            "disse que falhou, terminado",
            "diário de notas ≠ verificador",
            "a rajada (s)",
            "um envio p50 (s)",
            "p95 (s)",
            "o mais lento (s)",
            "correção (s)",
            "carga antes",
        ),
        "late": "\n{n} alunos: a rajada durou {t[on_time_s]:.0f} s, mais de um minuto (um envio "
        "levou {t[submit_p50_s]:.0f} s na mediana), numa execução com os processos dos alunos e "
        "o servidor nos mesmos núcleos: numa máquina assim, uma turma de {n} em que todos "
        "comecem a enviar no último minuto antes do prazo teria parte dos seus envios marcados "
        "como atrasados, já que o portão marca um envio quando ele termina. Quanto dura a "
        "rajada quando os alunos enviam das suas próprias máquinas não foi medido.",
        "recorded": "\n{n} alunos: gravado de {m[started]} a {m[ended]}, commit {m[commit]}, em "
        "{machine} (os processos dos alunos e o servidor nos mesmos núcleos), "
        "{m[application_servers]} servidores de aplicação, a paciência do comando "
        "({m[patience_s]:.0f} s, {m[patience_tries]} tentativas); {made_by}; a carga é a média "
        "de carga de 1 minuto antes da rodada.",
    },
}

#: the two runs of the hidden timing, the one before the gate's reads first
HIDDEN_RUNS: Final = (("before", "hidden-timing-before.json"), ("after", "hidden-timing.json"))
#: a hidden-timing row's times, in the table's order
TIMED: Final = ("median_ms_anothers", "median_ms_none", "difference_ms", "iqr_ms_none")
#: a recorded class's timings, in the table's order
TIMINGS: Final = ("on_time_s", "submit_p50_s", "submit_p95_s", "submit_max_s", "grade_s")
#: the recorded classes, by their students
CLASSES: Final = (300, 1000)


def hidden_timing(lang: str) -> str:
    """Another's run and no run asked for, interleaved, before and after: one answer or not,
    each's median, their difference and the spread (IQR) of one request's time for none; the
    check that after each route's difference is within that spread, |Δ median| < IQR; then
    each run's conditions."""
    say, words = LOAD[lang], WORDS[lang]
    rows = [
        [
            first,
            row["route"],
            say["yes"] if row["same_answer"] else say["no"],
            *(decimal(row[k], lang) for k in TIMED),
        ]
        for first, row in run_items(HIDDEN_RUNS, "rows", lang)
    ]
    out = [table(say["hidden_header"], rows)]
    after = results(HIDDEN_RUNS[1][1])
    most = max(abs(r["difference_ms"]) for r in after["rows"])
    out.append(
        check(
            say["hidden_label"],
            all(
                abs(r["difference_ms"]) < r["iqr_ms_none"] and r["same_answer"]
                for r in after["rows"]
            ),
            say["hidden_detail"].format(reps=after["reps"], most=decimal(most, lang)),
            lang=lang,
        )
    )
    for label, name in HIDDEN_RUNS:
        r = results(name)
        out.append(
            say["hidden_footer"].format(
                label=words[label.capitalize()],
                r=r,
                machine=machine(r["machine"], lang),
                load=decimal(r["load_1min_before"], lang),
                busy=decimal(r["busy_cores_before"], lang),
            )
        )
    return "\n".join(out)


def whole_class(lang: str) -> str:
    """A class of 300 and one of 1000 submitting at once: the checks that nothing was lost,
    no student was told what the server contradicts (lost = stored − finished on the server)
    and every submit ended within the command's patience; the failed commands; the counts and
    timings; the burst past a minute, if any; each recording's conditions."""
    say = LOAD[lang]
    rows = []
    out = []
    for n in CLASSES:
        r = results(f"class-submit-{n}.json")
        c, t, m = r["counts"], r["timings"], r["conditions"]
        lost = c["stored"] - c["finished_runs_on_the_server"]
        erred = {e.split(":")[0] for e in r["errors"]}
        # the gradebook against the checker, for every student whose command said it was stored
        differ = {x.split(" (")[0].split(":")[0] for x in r["mismatches"]} - erred
        told = c["told_failed_but_finished"]
        rows.append(
            [
                r["students"],
                c["stored"],
                c["finished_runs_on_the_server"],
                lost,
                c["client_errors"],
                told,
                len(differ),
                *(decimal(t[k], lang) for k in TIMINGS),
                decimal(m["load_1min_before"], lang),
            ]
        )
        out.append(
            check(
                say["kept_label"].format(n=n),
                lost == 0 and told == 0 and not differ,
                say["kept_detail"].format(
                    stored=c["stored"],
                    finished=c["finished_runs_on_the_server"],
                    told=told,
                    differ=len(differ),
                ),
                lang=lang,
            )
        )
        out.append(
            check(
                say["patience_label"].format(n=n),
                t["submit_max_s"] < m["patience_s"],
                say["patience_detail"].format(
                    slowest=decimal(t["submit_max_s"], lang), patience=m["patience_s"]
                ),
                lang=lang,
            )
        )
        out += [say["failed"].format(n=n, error=e) for e in r["errors"]]
    out.append(table(say["class_header"], rows))
    for n in CLASSES:
        t = results(f"class-submit-{n}.json")["timings"]
        if t["on_time_s"] > 60:  # the gate stamps a submission's receipt when it finishes
            out.append(say["late"].format(n=n, t=t))
    for n in CLASSES:
        m = results(f"class-submit-{n}.json")["conditions"]
        out.append(
            say["recorded"].format(
                n=n,
                m=m,
                machine=m["machine"].replace("cores", MACHINE[lang][0]),
                made_by=made_by(m, lang),
            )
        )
    return "\n".join(out)
