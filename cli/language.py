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


def from_environment(env: Mapping[str, str] | None = None) -> str:
    """``$ATTNREF_LANG`` if set (refused in the locale's language when it is not one of
    `LANGS`), else the locale's language."""
    env = os.environ if env is None else env
    fallback = from_locale(env)
    setting = env.get(ENV_VAR, "").strip()
    if not setting:
        return fallback
    if setting not in LANGS:
        raise CLIError(said("bad_setting", fallback, var=ENV_VAR, got=setting), fallback)
    return setting


def chosen(option: str | None, env: Mapping[str, str] | None = None) -> str:
    """The command's language: ``--lang`` when given (refused when not one of `LANGS`), else
    `from_environment`."""
    if option is None:
        return from_environment(env)
    if option not in LANGS:
        fallback = from_locale(os.environ if env is None else env)
        raise CLIError(said("bad_lang", fallback, got=option), fallback)
    return option


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


__all__ = ["DEFAULT", "ENV_VAR", "LOCALE_VARS", "chosen", "from_environment", "from_locale", "in_argv"]
