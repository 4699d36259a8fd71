"""What ``attnref homework fetch``, ``submit`` and ``status`` say to a student, in the
assignment's language.

One table per language, the same keys in each (a test holds them equal); the commands fill in
the numbers and names. What a student's command says before it knows the assignment (no
account set, no such file) is in the student's language (`attention_ref.cli.language`:
``$ATTNREF_LANG``, else the locale's; ``pt_BR.UTF-8`` is Portuguese), English otherwise.
"""

from __future__ import annotations

from typing import Final

STUDENT: Final[dict[str, dict[str, str]]] = {
    "en": {
        "submitted": "submitted {path} as exercise {k} of {name!r}: attempt {n}, received {when} "
        "by the server, {timing}; submission {run}. Your teacher's grade is computed from the "
        "stored answer.",
        "on_time_due": "on time ({due})",
        "late_due": "LATE by {late} ({due})",
        "fetched": "assignment {name!r} for {student}: {n} exercise{s}, {due}",
        "written": "written",
        "kept": "kept",
        "kept_not_answer": "kept (it is not an answer file: move it away to get the template)",
        "kept_other": "kept (it does not answer your exercise {k}: move it away to get the "
        "template)",
        "fill_in": "fill in the answers, then:\n  attnref homework submit {name} {file}",
        "no_submissions": "{name} for {student}: no submissions yet ({due}); submit with "
        "attnref homework submit {name} {file}",
        "submissions": "{name} for {student}: {n} submission{s}, {due}",
        "wider": "a wider terminal shows them",
        "submission": "submission",
        "exercise": "exercise",
        "received": "received",
        "late": "late",
        "status": "status",
        "grade": "grade",
        "first_wrong": "first wrong step",
        "diagnosis": "diagnosis",
        "counts": "counts",
        "on_time": "no",
        "not_graded": "not graded yet",
        "grade_after": "{steps}, {points} points",
        "held_back": "The check of your answer comes when your teacher releases the grades "
        "(this assignment's feedback policy).",
        "not_released": "not released yet",
        "yes": "yes",
        "no": "no",
        "no_file": "{path}: no such file: attnref homework fetch {name} writes your "
        "answer-K.json files (then fill them in and submit them)",
        "statement_not_answer": "{path} is your exercise's statement, not an answer: fill in "
        "answer-K.json beside it and submit that",
        "no_account": "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to your class "
        "account (your teacher gave you both)",
        "no_url": "--tracking-uri (or $MLFLOW_TRACKING_URI) must be the class server's URL",
        "no_assignment": "no assignment {name!r} for {student!r} on {url} (is the name right? your "
        "teacher makes it with attnref server assign {name})",
        "not_homework": "{experiment!r} is not {student!r}'s homework",
        "not_yours": "the exercises of {name!r} on the server are not {student!r}'s",
    },
    "pt": {
        "submitted": "enviado {path} como exercício {k} de {name!r}: tentativa {n}, recebido "
        "{when} pelo servidor, {timing}; envio {run}. A nota do professor é calculada a partir "
        "da resposta guardada.",
        "on_time_due": "no prazo ({due})",
        "late_due": "ATRASADO {late} ({due})",
        "fetched": "tarefa {name!r} para {student}: {n} exercício{s}, {due}",
        "written": "escrito",
        "kept": "mantido",
        "kept_not_answer": "mantido (não é um arquivo de resposta: tire-o daí para receber o "
        "modelo)",
        "kept_other": "mantido (não responde ao seu exercício {k}: tire-o daí para receber o "
        "modelo)",
        "fill_in": "preencha as respostas e depois:\n  attnref homework submit {name} {file}",
        "no_submissions": "{name} para {student}: nenhum envio ainda ({due}); envie com "
        "attnref homework submit {name} {file}",
        "submissions": "{name} para {student}: {n} envio{s}, {due}",
        "wider": "um terminal mais largo as mostra",
        "submission": "envio",
        "exercise": "exercício",
        "received": "recebido",
        "late": "atraso",
        "status": "situação",
        "grade": "nota",
        "first_wrong": "primeiro passo errado",
        "diagnosis": "diagnóstico",
        "counts": "vale",
        "on_time": "não",
        "not_graded": "ainda sem nota",
        "grade_after": "{steps}, {points} pontos",
        "held_back": "A correção da sua resposta vem quando o professor liberar as notas (a "
        "política de retorno desta tarefa).",
        "not_released": "ainda não liberada",
        "yes": "sim",
        "no": "não",
        "no_file": "{path}: arquivo não encontrado: attnref homework fetch {name} escreve os "
        "seus arquivos answer-K.json (preencha-os e envie-os depois)",
        "statement_not_answer": "{path} é o enunciado do seu exercício, não uma resposta: "
        "preencha o answer-K.json ao lado dele e envie esse",
        "no_account": "defina MLFLOW_TRACKING_USERNAME e MLFLOW_TRACKING_PASSWORD com a sua "
        "conta da turma (o seu professor deu as duas)",
        "no_url": "--tracking-uri (ou $MLFLOW_TRACKING_URI) deve ser o endereço do servidor da "
        "turma",
        "no_assignment": "nenhuma tarefa {name!r} para {student!r} em {url} (o nome está certo? o "
        "seu professor a cria com attnref server assign {name})",
        "not_homework": "{experiment!r} não é a tarefa de {student!r}",
        "not_yours": "os exercícios de {name!r} no servidor não são os de {student!r}",
    },
}


def said(key: str, lang: str, **fields: object) -> str:
    """``STUDENT[lang][key]`` with its fields filled in (``s``: a plural's ending, from ``n``)."""
    if "n" in fields and "s" not in fields:
        fields["s"] = "" if fields["n"] == 1 else "s"
    return STUDENT[lang][key].format(**fields)


__all__ = ["STUDENT", "said"]
