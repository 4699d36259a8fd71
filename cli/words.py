"""What the student's commands (``explain``, ``exercise``, ``check``, ``report``) say in their
own words, per language: the errors of their options and the lines they print.

One table per language, the same keys and the same fields in each (a test holds them equal);
the commands fill in the names and numbers. What the library says (an answer's errors, a
file's) comes from the library's own tables, in the language the command passes it.
"""

from __future__ import annotations

import re
from typing import Final

WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "bad_lang": "--lang must be en or pt, got {got!r}",
        "bad_setting": "${var} must be en or pt, got {got!r}",
        "bad_format": "unknown format {got!r}; choose one of: {choices}",
        "standalone": "--standalone needs --format latex (the format is {got!r})",
        "fit_width": "--fit-width needs --format latex (the format is {got!r})",
        "precision": "--precision must be between 0 and 15, got {got}",
        "example_and_input": "give either --example or --input, not both",
        "grad_output": "--grad-output needs --backward",
        "out_is_file": "--out {out} is a file, not a folder",
        "wrote": "wrote {files} to {out}",
        "check_next": "fill in {answer}, then:\n  attnref check {answer}",
        "report_wrote": "wrote {path}",
        "report_exported": "exported {n} files to {dest}",
        "report_cannot_write": "cannot write {path}: {why}",
        "report_every_column": "attnref report -o FILE has every column",
        "bad_pos": "--pos must be one of {choices}, got {got!r}",
        "cannot_write": "cannot write into {out}: {why}",
        "cannot_read": "cannot read {path}: {why}",
    },
    "pt": {
        "bad_lang": "--lang deve ser en ou pt, não {got!r}",
        "bad_setting": "${var} deve ser en ou pt, não {got!r}",
        "bad_format": "formato desconhecido {got!r}; escolha um de: {choices}",
        "standalone": "--standalone exige --format latex (o formato é {got!r})",
        "fit_width": "--fit-width exige --format latex (o formato é {got!r})",
        "precision": "--precision deve estar entre 0 e 15, não {got}",
        "example_and_input": "dê --example ou --input, não os dois",
        "grad_output": "--grad-output exige --backward",
        "out_is_file": "--out {out} é um arquivo, não uma pasta",
        "wrote": "escritos em {out}: {files}",
        "check_next": "preencha {answer} e depois:\n  attnref check {answer}",
        "report_wrote": "arquivo escrito: {path}",
        "report_exported": "{n} arquivos exportados para {dest}",
        "report_cannot_write": "não foi possível escrever {path}: {why}",
        "report_every_column": "attnref report -o ARQUIVO tem todas as colunas",
        "bad_pos": "--pos deve ser um de {choices}, não {got!r}",
        "cannot_write": "não foi possível escrever em {out}: {why}",
        "cannot_read": "não foi possível ler {path}: {why}",
    },
}


def said(key: str, lang: str, **fields: object) -> str:
    """``WORDS[lang][key]`` with its fields filled in."""
    return WORDS[lang][key].format(**fields)


#: Typer's and click's own command-line errors (written in English), said in each language:
#: a pattern of the English message and its words (the English table is empty: click's own).
#: A message no pattern matches stays in English, after the prefix of the command's language.
USAGE: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "en": (),
    "pt": (
        (r"No such option: (?P<opt>\S+) \(Possible options: (?P<maybe>.+)\)",
         "opção desconhecida: {opt} (opções possíveis: {maybe})"),
        (r"No such option: (?P<opt>\S+)", "opção desconhecida: {opt}"),
        (r"No such command '(?P<cmd>.+)'\. Did you mean '(?P<maybe>.+)'\?",
         "comando desconhecido '{cmd}'; você quis dizer '{maybe}'?"),
        (r"No such command '(?P<cmd>.+)'\.", "comando desconhecido '{cmd}'"),
        (r"Missing argument '(?P<what>.+)'\.", "falta o argumento '{what}'"),
        (r"Missing option '(?P<what>.+)'\.", "falta a opção '{what}'"),
        (r"Option '(?P<opt>.+)' requires an argument\.", "a opção '{opt}' exige um valor"),
        (r"Got unexpected extra argument(?:s|\(s\))? \((?P<args>.*)\)",
         "argumento(s) a mais: ({args})"),
        (r"Invalid value for '(?P<what>.+)': Input should be a valid integer.*",
         "valor inválido para '{what}': deve ser um número inteiro"),
        (r"Invalid value for '(?P<what>.+)': Input should be a valid number.*",
         "valor inválido para '{what}': deve ser um número"),
        (r"Invalid value for '(?P<what>.+)': '(?P<got>.*)' is not a valid (?:integer|float)\.",
         "valor inválido para '{what}': '{got}' não é um número"),
        (r"Invalid value for '(?P<what>.+)': (?P<why>.+)",
         "valor inválido para '{what}': {why}"),
    ),
}  # fmt: skip


def usage_said(message: str, lang: str) -> str:
    """A command-line error of Typer's or click's (``message``, in English) in ``lang``: the
    words of the first `USAGE` pattern that matches the whole message, else the message."""
    for pattern, words in USAGE[lang]:
        m = re.fullmatch(pattern, message)
        if m:
            return words.format(**m.groupdict())
    return message


__all__ = ["USAGE", "WORDS", "said", "usage_said"]
