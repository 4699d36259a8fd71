"""The facts of the class server's edge-and-gate page (``docs/class-gate.md``,
``docs/class-gate.pt.md``), computed once and said in each language: the edge's limits and the
two attacks before the edge and after, with the helpers the page's other modules share.

Each function is one code block of the page and returns what it prints. The recorded runs are
read from ``docs/results`` (`attnref_book.pages.results`); the records name their attacks in
English, which the Portuguese page translates (an unknown name is shown as it is, marked as
English). The logins of a class behind one address are in
`attnref_book.facts.class_gate_logins`; the uploads, the padded answers and the quotas in
`attnref_book.facts.class_gate_limits`; the hidden timing and the whole class in
`attnref_book.facts.class_gate_load`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

from attention_ref.classroom.gate.logins import ThrottleRule
from attention_ref.classroom.hosting.edge_config import EdgeLimits
from attnref_book.pages import prose, results, table


def decimal(text: object, lang: str) -> str:
    """``str(text)`` with every decimal point between two digits written in ``lang``'s mark
    (`attention_ref.render.DECIMAL_MARK`): ``34.7`` stays ``34.7`` in English, ``34,7`` in
    Portuguese."""
    return prose(str(text), lang)


#: a record's machine line (``x86_64, 2 cores, Python 3.11.7``) as each language shows it: the
#: line in code (English), or its words translated and only its Python version in code
MACHINE: Final[dict[str, tuple[str, str, str]]] = {
    "en": ("cores", r"(.+)", r"`\1`"),
    "pt": ("núcleos", r"Python (\S+)", r"`Python \1`"),
}


def run_items(
    runs: Sequence[tuple[str, str]], key: str, lang: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each item of each recorded run's ``key`` list (``runs``: its label in `WORDS` and its
    results file, before then after), with the table's first cell: the run's label on its
    first item (the first run's with its commit), empty on the others."""
    words = WORDS[lang]
    for i, (label, name) in enumerate(runs):
        r = results(name)
        first = f"{words[label]} ({r['commit']})" if i == 0 else words[label]
        for j, item in enumerate(r[key]):
            yield (first if j == 0 else ""), item


def machine(line: str, lang: str) -> str:
    """A record's machine line as ``lang`` shows it (`MACHINE`)."""
    cores, pattern, code = MACHINE[lang]
    return re.sub(pattern, code, line.replace("cores", cores), count=1)


#: a recorded name the language has no word for: as it is (English), or marked as English
UNTRANSLATED: Final = {"en": "{}", "pt": "*{}* (em inglês)"}


def listed(items: Sequence[str], lang: str) -> str:
    """``a, b and c`` in ``lang``'s words."""
    last = WORDS[lang]["and"]
    return items[0] if len(items) < 2 else ", ".join(items[:-1]) + last + items[-1]


#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "and": " and ",
        "of": "of",
        "none": "none",
        "before": "before",
        "after": "after",
        "Before": "Before",
        "After": "After",
    },
    "pt": {
        "and": " e ",
        "of": "de",
        "none": "nenhuma",
        "before": "antes",
        "after": "depois",
        "Before": "Antes",
        "After": "Depois",
    },
}

# ---------------------------------------------------------------------------- the edge

#: the edge's table (`EdgeLimits`' defaults): its header, and each row's words
EDGE: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "header": ("what", "allowed", "past it"),
        "tls": (
            "TLS",
            "the teacher's certificate, or the self-signed one made in `DIR/tls`",
            "HTTPS on any address but loopback (`--tls` or `--tls-cert`); plain HTTP there only "
            "with `--insecure`",
        ),
        "header_row": (
            "a request's header",
            "whole within {e.header_timeout_s} s",
            "a connection that sends nothing is closed; it never reaches the application",
        ),
        "body_row": (
            "a request's body",
            "keeps coming: at most {e.body_timeout_s} s between two reads",
            "the edge holds the whole body before the application sees the request",
        ),
        "connections": (
            "requests at once, per address",
            "{e.connections}",
            "429 with `Retry-After` past it",
        ),
        "rate": (
            "requests a second, per address",
            "{e.rate}; above it, {e.at_once} at once, then more held back to the rate, up to "
            "{e.burst} above it in all",
            "429 with `Retry-After` past them",
        ),
        "bodies": (
            "the largest body",
            "{json} MiB for the API, {upload} MiB for `upload-artifact` (MLflow's own limit), "
            "{artifact} MiB for an artifact upload through the proxy; {e.uploads} uploads at "
            "once",
            "413 past it, before a byte reaches the application",
        ),
        "in_flight": (
            "requests the application works on at once",
            "{e.in_flight} per application server",
            "503 with `Retry-After: {e.retry_after_s}` past it, at once",
        ),
    },
    "pt": {
        "header": ("o quê", "permitido", "além disso"),
        "tls": (
            "TLS",
            "o certificado do professor, ou o autoassinado feito em `DIR/tls`",
            "HTTPS em qualquer endereço que não seja o loopback (`--tls` ou `--tls-cert`); HTTP "
            "simples ali só com `--insecure`",
        ),
        "header_row": (
            "o cabeçalho de uma requisição",
            "inteiro em até {e.header_timeout_s} s",
            "uma conexão que não manda nada é fechada; ela nunca chega à aplicação",
        ),
        "body_row": (
            "o corpo de uma requisição",
            "continua chegando: no máximo {e.body_timeout_s} s entre duas leituras",
            "a borda guarda o corpo inteiro antes de a aplicação ver a requisição",
        ),
        "connections": (
            "requisições ao mesmo tempo, por endereço",
            "{e.connections}",
            "429 com `Retry-After` além disso",
        ),
        "rate": (
            "requisições por segundo, por endereço",
            "{e.rate}; acima disso, {e.at_once} ao mesmo tempo, depois mais, seguradas até "
            "caberem na taxa, até {e.burst} acima dela no total",
            "429 com `Retry-After` além deles",
        ),
        "bodies": (
            "o maior corpo",
            "{json} MiB para a API, {upload} MiB para `upload-artifact` (o limite do próprio "
            "MLflow), {artifact} MiB para um envio de artefato pelo proxy; {e.uploads} envios "
            "ao mesmo tempo",
            "413 além disso, antes de um byte chegar à aplicação",
        ),
        "in_flight": (
            "requisições que a aplicação atende ao mesmo tempo",
            "{e.in_flight} por servidor de aplicação",
            "503 com `Retry-After: {e.retry_after_s}` além disso, na hora",
        ),
    },
}


def edge_limits(lang: str) -> str:
    """The edge's table: what `EdgeLimits`' defaults allow each address and the application
    (timeouts, requests at once and a second, the largest bodies, the application's requests
    at once), and what is answered past each."""
    e, say = EdgeLimits(), EDGE[lang]
    sizes = {
        "json": e.max_json_bytes >> 20,
        "upload": e.max_upload_artifact_bytes >> 20,
        "artifact": e.max_artifact_bytes >> 20,
    }
    keys = ("tls", "header_row", "body_row", "connections", "rate", "bodies", "in_flight")
    rows = [
        [say[k][0], decimal(say[k][1].format(e=e, **sizes), lang), say[k][2].format(e=e)]
        for k in keys
    ]
    return table(say["header"], rows)


# ------------------------------------------------------------- two attacks, before and after

#: the recorded attacks (in English in the record) in each language: (pattern, words)
ATTACKS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "en": ((r".+", r"\g<0>"),),
    "pt": (
        (r"none", "nenhum"),
        (r"(\d+) idle sockets", r"\1 sockets ociosos"),
        (r"(\d+) threads of wrong passwords", r"\1 threads de senhas erradas"),
    ),
}

ATTACK_WORDS: Final[dict[str, dict[str, Any]]] = {
    "en": {
        "header": (
            "server",
            "attack",
            "student's requests answered 200",
            "median (ms)",
            "p95 (ms)",
            "wrong passwords checked",
            "load before",
        ),
        "footer": "\n{label}: commit {r[commit]}, {r[date]}, {machine}, "
        "{r[seconds_per_part]:.0f} s per part; `{r[command]}`.",
        "budget": "A flood's wrong passwords reach a password check only while the attacker's "
        "failures last ({rule.failures} per address and account in each worker, one more every "
        "{rule.refill_s:g} s; each application server is one worker; the section below gives "
        "the budgets of a shared address); the rest are refused before any hash, by the gate "
        "(429) or, past the rate, by the edge. Idle sockets cost the edge a connection each, and "
        "the application nothing. The edge costs every request a hop (a connection to nginx, "
        "then one to the application's socket); the quiet rows do not measure it alone: they "
        "are one run each, on two commits that differ in more than the edge.",
    },
    "pt": {
        "header": (
            "servidor",
            "ataque",
            "requisições do aluno respondidas com 200",
            "mediana (ms)",
            "p95 (ms)",
            "senhas erradas verificadas",
            "carga antes",
        ),
        "footer": "\n{label}: commit {r[commit]}, {r[date]}, {machine}, "
        "{r[seconds_per_part]:.0f} s por parte; `{r[command]}`.",
        "budget": "As senhas erradas de uma inundação chegam a uma verificação de senha só "
        "enquanto duram as falhas do atacante ({rule.failures} por endereço e por conta em cada "
        "worker, mais uma a cada {rule.refill_s:g} s; cada servidor de aplicação é um worker; a "
        "seção abaixo dá os orçamentos de um endereço compartilhado); as outras são recusadas "
        "antes de qualquer hash, pelo portão (429) ou, além da taxa, pela borda. Os sockets "
        "ociosos custam à borda uma conexão cada, e à aplicação nada. A borda custa a toda "
        "requisição um salto (uma conexão com o nginx, depois uma com o socket da aplicação); "
        "as linhas sem ataque não o medem sozinho: são uma rodada cada, em dois commits que "
        "diferem em mais do que a borda.",
    },
}

#: the two runs of the attacks, the one before the edge first
ATTACK_RUNS: Final = (("before", "edge-attacks-before.json"), ("after", "edge-attacks.json"))


def attack(name: str, lang: str) -> str:
    """A recorded attack's name in ``lang`` (`ATTACKS`); an unknown one marked as English."""
    for pattern, words in ATTACKS[lang]:
        if re.fullmatch(pattern, name):
            return re.sub(pattern, words, name)
    return UNTRANSLATED[lang].format(name)


def edge_attacks(lang: str) -> str:
    """The student's requests on ``127.0.0.1`` while an attacker holds idle sockets, then
    floods wrong passwords from 8, 30 and 64 threads: before the edge (its commit named) and
    after, with the wrong passwords that reached a check and the load before each part; then
    each run's commit, date, machine and command."""
    say, words = ATTACK_WORDS[lang], WORDS[lang]
    rows = []
    for first, part in run_items(ATTACK_RUNS, "parts", lang):
        rows.append(
            [
                first,
                attack(part["attack"], lang),
                f"{part['answered_200']}/{part['requests']}",
                decimal(part["median_ms"], lang),
                decimal(part["p95_ms"], lang),
                part.get("attacker", {}).get("401", ""),
                decimal(part["before"]["load_1min"], lang),
            ]
        )
    out = [table(say["header"], rows)]
    for label, name in ATTACK_RUNS:
        r = results(name)
        out.append(
            say["footer"].format(
                label=words[label.capitalize()], r=r, machine=machine(r["machine"], lang)
            )
        )
    return "\n".join(out)


def flood_budget(lang: str) -> str:
    """Why a flood's wrong passwords mostly never reach a hash: the gate's failed-login budget
    (`ThrottleRule`: failures per address and account in each worker, one more every
    ``refill_s``), and what the quiet rows of the attacks' table do not measure."""
    return decimal(ATTACK_WORDS[lang]["budget"].format(rule=ThrottleRule()), lang)
