"""The language a student's command speaks (`attention_ref.cli.language`) and the words it says
(`attention_ref.cli.words`): --lang, else $ATTNREF_LANG, else the locale, else English."""

from __future__ import annotations

import re
import string

import pytest

from attention_ref.cli import language as L
from attention_ref.cli.errors import CLIError
from attention_ref.cli.main import command_lang, main
from attention_ref.cli.words import USAGE, WORDS, said, usage_said
from attention_ref.experiments.store_words import WORDS as STORE_WORDS
from attention_ref.render import LANGS


@pytest.mark.parametrize(
    ("env", "lang"),
    [
        ({"LANG": "pt_BR.UTF-8"}, "pt"),
        ({"LANG": "pt_PT"}, "pt"),
        ({"LANG": "pt"}, "pt"),
        ({"LANG": "pt_BR.UTF-8@euro"}, "pt"),
        ({"LC_ALL": "pt_BR.UTF-8", "LANG": "en_US.UTF-8"}, "pt"),
        ({"LC_MESSAGES": "en_GB.UTF-8", "LANG": "pt_BR.UTF-8"}, "en"),
        ({"LC_ALL": "", "LANG": "pt_BR.UTF-8"}, "pt"),  # set but empty: not set
        # what it must not take for Portuguese: another language, C, nothing set
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({}, "en"),
    ],
)
def test_the_locale_names_the_language(env, lang):
    assert L.from_locale(env) == lang
    assert L.chosen(None, env) == lang  # with no --lang and no setting, the locale decides


def test_the_order_is_lang_then_the_setting_then_the_locale():
    env = {"LANG": "pt_BR.UTF-8"}
    assert L.chosen(None, env) == "pt"
    assert L.chosen(None, env | {L.ENV_VAR: "en"}) == "en"  # the setting over the locale
    assert L.chosen("pt", env | {L.ENV_VAR: "en"}) == "pt"  # --lang over the setting
    assert L.chosen("en", env) == "en"
    assert L.explicit(None, env) is None  # the locale is not a choice the student named
    assert L.explicit(None, env | {L.ENV_VAR: "pt"}) == "pt"
    assert L.from_environment({L.ENV_VAR: "pt", "LANG": "C"}) == "pt"


@pytest.mark.parametrize(
    ("option", "setting", "locale", "words"),
    [
        ("fr", None, "pt_BR.UTF-8", "--lang deve ser en ou pt, não 'fr'"),
        ("fr", None, "C", "--lang must be en or pt, got 'fr'"),
        (None, "de", "pt_BR.UTF-8", "$ATTNREF_LANG deve ser en ou pt, não 'de'"),
        (None, "de", "C", "$ATTNREF_LANG must be en or pt, got 'de'"),
    ],
)
def test_a_language_attnref_does_not_speak_is_refused_in_the_locales(
    option, setting, locale, words
):
    env = {"LANG": locale} | ({L.ENV_VAR: setting} if setting else {})
    with pytest.raises(CLIError) as e:
        L.chosen(option, env)
    assert str(e.value) == words
    assert e.value.lang == L.from_locale(env)


@pytest.mark.parametrize(
    ("argv", "lang"),
    [
        (["explain", "--lang", "pt"], "pt"),
        (["explain", "--lang=pt", "-e", "x"], "pt"),
        (["explain", "--", "--lang", "pt"], None),
        (["explain", "--lang"], None),
        (["explain"], None),
    ],
)
def test_the_lang_of_a_command_line_is_read_before_it_is_parsed(argv, lang):
    assert L.in_argv(argv) == lang


def test_a_command_line_error_speaks_the_students_language_in_student_commands(monkeypatch):
    for name in ("LC_ALL", "LC_MESSAGES", L.ENV_VAR):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    commands = {"explain", "check", "train", "server"}
    assert command_lang(["explain", "--foo"], commands) == "pt"
    assert command_lang(["explain", "--lang", "en", "--foo"], commands) == "en"
    assert command_lang(["nonsense"], commands) == "pt"  # no command yet: the student's
    assert command_lang(["train", "--foo"], commands) == "en"  # the others speak English
    monkeypatch.setenv(L.ENV_VAR, "xx")  # a bad setting: the locale's, as its refusal
    assert command_lang(["check"], commands) == "pt"


def fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


@pytest.mark.parametrize("table", [WORDS, STORE_WORDS], ids=["cli", "store"])
def test_the_words_have_the_same_keys_and_fields_in_every_language(table):
    assert set(table) == set(LANGS) == set(USAGE)
    for lang in LANGS:
        assert set(table[lang]) == set(table["en"]), lang
        for key, text in table[lang].items():
            assert fields(text) == fields(table["en"][key]), (lang, key)
    # the control: a missing field is seen
    assert fields("--lang must be en or pt, got {got!r}") != fields("--lang deve ser en ou pt")


#: command lines whose error is Typer's or click's own (not attnref's), one per kind of error
USAGE_ERRORS = [
    (["explain", "--foo"], "opção desconhecida: --foo"),
    (["explain", "--precison", "3"], "opção desconhecida: --precison (opções possíveis: "),
    (["check"], "falta o argumento 'answer'"),
    (["exercise", "--seed", "abc"], "valor inválido para '--seed': deve ser um número inteiro"),
    (["exercise", "--tokens"], "a opção '--tokens' exige um valor"),
    (["explain", "x"], "argumento(s) a mais: (x)"),
    (["explian"], "comando desconhecido 'explian'; você quis dizer 'explain'?"),
    (["homework", "fetch"], "falta o argumento 'name'"),
]
#: what is left of click's English when a message was not translated
ENGLISH = re.compile(r"No such|Missing|Invalid value|requires an|unexpected extra|error:")


@pytest.mark.parametrize(("argv", "words"), USAGE_ERRORS)
def test_command_line_errors_in_portuguese_and_the_english_control(
    argv, words, monkeypatch, capsys
):
    for name in ("LC_ALL", "LC_MESSAGES", L.ENV_VAR):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("attnref: erro: ") and words in err, err
    assert not ENGLISH.search(err), err
    monkeypatch.setenv("LANG", "C")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("attnref: error: ") and ENGLISH.search(err), err


def test_a_message_no_pattern_knows_stays_as_click_wrote_it():
    assert usage_said("Something click says one day.", "pt") == "Something click says one day."
    assert usage_said("Missing argument 'x'.", "en") == "Missing argument 'x'."  # click's own
    assert usage_said("Missing argument 'x'.", "pt") == "falta o argumento 'x'"
    assert said("out_is_file", "pt", out="ex") == "--out ex é um arquivo, não uma pasta"
