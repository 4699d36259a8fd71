"""What the student's commands (``explain``, ``exercise``, ``check``, ``report``) say in their
own words, per language: the errors of their options and the lines they print.

One table per language, the same keys and the same fields in each (a test holds them equal);
the commands fill in the names and numbers. What the library says (an answer's errors, a
file's) comes from the library's own tables, in the language the command passes it.
"""

from __future__ import annotations

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
        "check_next": "fill in {answer}, then: attnref check {answer}",
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
        "wrote": "escrito {files} em {out}",
        "check_next": "preencha {answer} e depois: attnref check {answer}",
    },
}


def said(key: str, lang: str, **fields: object) -> str:
    """``WORDS[lang][key]`` with its fields filled in."""
    return WORDS[lang][key].format(**fields)


__all__ = ["WORDS", "said"]
