"""The language a student's command speaks, chosen once for every command.

In order: the command's ``--lang``; else the project's setting ``$ATTNREF_LANG`` (``en`` or
``pt``: say it once, for every command); else the locale, the first of ``LC_ALL``,
``LC_MESSAGES``, ``LANG`` that is set, by its language code (``pt_BR.UTF-8`` and ``pt_PT`` are
Portuguese; ``C``, ``POSIX`` and a language attnref does not speak are English); else English.

A ``--lang`` or ``$ATTNREF_LANG`` that names no language attnref speaks is refused (one line,
exit 2), in the language the rest of the environment chose: a typo is not silently English.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Final

from attention_ref.cli.errors import CLIError
from attention_ref.cli.words import said
from attention_ref.render import LANGS

#: the project's setting: the language of every student command, said once
ENV_VAR: Final = "ATTNREF_LANG"
#: the locale's variables, in the order POSIX gives them precedence
LOCALE_VARS: Final = ("LC_ALL", "LC_MESSAGES", "LANG")
#: the language when nothing names one
DEFAULT: Final = LANGS[0]
#: where a command's language comes from without --lang, as its help says it
DEFAULT_HELP: Final = f"${ENV_VAR}, else the locale's (LANG=pt_BR.UTF-8: pt), else {DEFAULT}"


def option_help(what: str, default: str = DEFAULT_HELP) -> str:
    """The help of a command's ``--lang``: ``what`` it sets, then where it comes from without
    it (``default``)."""
    return f"{what} \\[default: {default}]"


def from_locale(env: Mapping[str, str] | None = None) -> str:
    """The locale's language: the first of `LOCALE_VARS` that is set, by its code
    (``pt_BR.UTF-8`` → ``pt``); `DEFAULT` when none is set or it names another language."""
    env = os.environ if env is None else env
    for name in LOCALE_VARS:
        value = env.get(name)
        if value:
            code = value.split(".")[0].split("@")[0].split("_")[0].lower()
            return code if code in LANGS else DEFAULT
    return DEFAULT


def explicit(option: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The language the student named: ``--lang`` (``option``), else ``$ATTNREF_LANG``;
    ``None`` when neither is given. A value that is not one of `LANGS` is refused, in the
    locale's language."""
    env = os.environ if env is None else env
    for given, key in ((option, "bad_lang"), (env.get(ENV_VAR), "bad_setting")):
        value = (given or "").strip()
        if not value:
            continue
        if value not in LANGS:
            fallback = from_locale(env)
            raise CLIError(said(key, fallback, var=ENV_VAR, got=value), fallback)
        return value
    return None


def chosen(option: str | None, env: Mapping[str, str] | None = None) -> str:
    """The command's language: `explicit` (``--lang``, else ``$ATTNREF_LANG``), else the
    locale's (`from_locale`)."""
    return explicit(option, env) or from_locale(env)


def from_environment(env: Mapping[str, str] | None = None) -> str:
    """The language of a command with no ``--lang``: ``$ATTNREF_LANG``, else the locale's."""
    return chosen(None, env)


def in_argv(argv: Sequence[str]) -> str | None:
    """The ``--lang`` an argument list gives (``--lang pt`` or ``--lang=pt``), read before the
    command line is parsed: the language of an error in the command line itself."""
    for i, arg in enumerate(argv):
        if arg == "--":
            return None
        if arg.startswith("--lang="):
            return arg.partition("=")[2]
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
    return None


__all__ = [
    "DEFAULT",
    "DEFAULT_HELP",
    "ENV_VAR",
    "LOCALE_VARS",
    "chosen",
    "explicit",
    "from_environment",
    "from_locale",
    "in_argv",
    "option_help",
]
