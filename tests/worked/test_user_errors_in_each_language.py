"""What ``attnref explain`` says about a user's files and example names, in the command's
language (issue 56): the ``--grad-output`` file (read, then held against the output), an
``--input`` file under ``--backward``, and an unknown example name. Each error is one
`InputError` (a ``ValueError``) whose ``.lang`` is the language it speaks, so the CLI's prefix
(``attnref: erro:``) follows it.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

from attention_ref.inputs.errors import InputError
from attention_ref.worked import registry
from attention_ref.worked.cached import explain_example_cached
from attention_ref.worked.gradients import backward_explanation, load_grad_output
from attention_ref.worked.registry import (
    EXAMPLE_NAMES,
    OWN_BACKWARD,
    check_example,
    explain_example,
    explain_example_backward,
)

NAMES = ", ".join(EXAMPLE_NAMES)


def fields(text: str) -> set[tuple[str, str | None, str]]:
    """The fields of a message: (name, conversion, format spec)."""
    return {(f, conv, spec or "") for _, f, spec, conv in string.Formatter().parse(text) if f}


def test_the_registrys_words_have_the_same_fields_in_each_language():
    table = registry.WORDS
    assert set(table) == {"en", "pt"} and set(table["en"]) == set(table["pt"])
    for key, en in table["en"].items():
        assert fields(en) == fields(table["pt"][key]) and en != table["pt"][key], key


# --- an example's name --------------------------------------------------------------------------

UNKNOWN = {
    "en": f"unknown example 'nope'; choose one of: {NAMES}",
    "pt": f"exemplo desconhecido 'nope'; escolha um de: {NAMES}",
    "fr": f"unknown example 'nope'; choose one of: {NAMES}",  # no words in French: English
}
SPOKEN = {"en": "en", "pt": "pt", "fr": "en"}


@pytest.mark.parametrize("lang", list(UNKNOWN))
def test_an_unknown_example_in_each_language(lang):
    for refuse in (
        lambda: check_example("nope", lang),
        lambda: explain_example("nope", lang),
        lambda: explain_example_backward("nope", None, lang),
        lambda: backward_explanation("nope", None, None, lang),
    ):
        with pytest.raises(ValueError) as e:
            refuse()
        assert isinstance(e.value, InputError)
        assert (str(e.value), e.value.lang) == (UNKNOWN[lang], SPOKEN[lang])
    assert check_example("gqa", lang) == "gqa"


def test_the_cache_refuses_an_unknown_example_in_portuguese(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(InputError, match=r"^exemplo desconhecido 'nope'"):
        explain_example_cached("nope", "pt")
    assert not any(tmp_path.rglob("*.json"))  # refused before anything was computed


# --- the --grad-output file ---------------------------------------------------------------------


def write(tmp_path: Path, held: object) -> Path:
    path = tmp_path / "G.json"
    path.write_text(held if isinstance(held, str) else json.dumps(held), encoding="utf-8")
    return path


#: A bad --grad-output file: (what it holds, English words, Portuguese words).
GRAD_FILES = {
    "missing": (
        None,
        "--grad-output file not found: ",
        "arquivo de --grad-output não encontrado: ",
    ),
    "not JSON": ("[[1, 0],", "--grad-output file ", "arquivo de --grad-output "),
    "NaN": (
        "[[NaN]]",
        "has NaN at line 1, column 3, which is not JSON",
        "tem NaN na linha 1, coluna 3, o que não é JSON",
    ),
    "ragged": (
        [[1, 0], [1]],
        "--grad-output is ragged: row 2 has 1 entries but row 1 has 2",
        "--grad-output tem linhas de tamanhos diferentes: a linha 2 tem 1 entradas, mas a "
        "linha 1 tem 2",
    ),
    "not a number": (
        [[1, "x"]],
        '--grad-output[1][2] is "x", not a number',
        '--grad-output[1][2] é "x", não um número',
    ),
    "not rows": (
        {"G": 1},
        "--grad-output must be a list of rows",
        "--grad-output deve ser uma lista de linhas",
    ),
}


@pytest.mark.parametrize("case", list(GRAD_FILES))
def test_each_bad_grad_output_file_in_each_language(tmp_path, case):
    held, en, pt = GRAD_FILES[case]
    path = tmp_path / "G.json" if held is None else write(tmp_path, held)
    for lang, words in (("en", en), ("pt", pt)):
        for read in (
            lambda lang: load_grad_output(path, lang),
            lambda lang: backward_explanation("life-is-awesome", None, path, lang),
        ):
            with pytest.raises(InputError) as e:
                read(lang)
            assert words in str(e.value) and e.value.lang == lang, str(e.value)
            assert str(e.value).count("\n") == 0
    with pytest.raises(InputError, match=None) as e:
        load_grad_output(path)
    assert e.value.lang == "en" and en in str(e.value)  # the default


#: Where each example's backward holds G against its output: (n, d_out) of the output.
SHAPES = {
    "life-is-awesome": (3, 4),
    "hello-shiny-sun": (1, 3),
    "gqa": (3, 8),  # h = 4 query heads of d_v = 2
    "kv-cache": (1, 4),
    "online-softmax": (3, 4),
}
SHAPE_WORDS = {
    "en": "--grad-output has shape 2×2, expected {n}×{d} (n × d_out, the shape of the output)",
    "pt": "--grad-output tem formato 2×2, esperado {n}×{d} (n × d_out, o formato da saída)",
}


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("lang", list(SHAPE_WORDS))
def test_a_grad_output_of_the_wrong_shape_in_each_language(tmp_path, name, lang):
    path = write(tmp_path, [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(InputError) as e:
        if name in OWN_BACKWARD:  # what the CLI calls for these
            explain_example_backward(name, load_grad_output(path, lang), lang)
        else:
            backward_explanation(name, None, path, lang)
    n, d = SHAPES[name]
    assert (str(e.value), e.value.lang) == (SHAPE_WORDS[lang].format(n=n, d=d), lang)


def test_a_bad_input_file_under_backward_in_each_language(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"X": [[1, 0], [0]], "heads": []}), encoding="utf-8")
    said = {}
    for lang in ("en", "pt"):
        with pytest.raises(InputError) as e:
            backward_explanation("life-is-awesome", path, None, lang)
        said[lang] = e.value
    assert str(said["en"]) == "X is ragged: row 2 has 1 entries but row 1 has 2"
    assert str(said["pt"]) == (
        "X tem linhas de tamanhos diferentes: a linha 2 tem 1 entradas, mas a linha 1 tem 2"
    )
    assert (said["en"].lang, said["pt"].lang) == ("en", "pt")
    with pytest.raises(InputError, match=r"^arquivo de entrada não encontrado: "):
        backward_explanation("life-is-awesome", tmp_path / "nope.json", None, "pt")
