"""An ``--input`` file's errors in the command's language (issue 56): a Portuguese student reads
every error about the file in Portuguese, ``attnref: erro:`` included (`InputError.lang`).

The words are tables (`attention_ref.inputs.input_words.WORDS`, the JSON loader's
`attention_ref.inputs.jsonfile.WORDS`): the same keys and the same fields in each language. Each
bad file of the English tests (`tests.cli.test_cli.BAD_DOCS`, `tests.inputs.test_inputs.BAD`)
and a few more, one for each message, gives its English line with ``lang="en"`` and its
Portuguese line with ``lang="pt"``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path

import pytest

from attention_ref.inputs import attention_input, input_words, jsonfile
from attention_ref.inputs.attention_input import InputError, load_input_file, parse_input
from tests.cli.test_cli import BAD_DOCS, LIFE_INPUT
from tests.inputs.test_inputs import BAD

TABLES = {"input_words": input_words.WORDS, "jsonfile": jsonfile.WORDS}


def fields(text: str) -> set[tuple[str, str | None, str]]:
    """The fields of a message: (name, conversion, format spec)."""
    return {(f, conv, spec or "") for _, f, spec, conv in string.Formatter().parse(text) if f}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_language_has_the_same_messages_with_the_same_fields(name):
    table = TABLES[name]
    assert set(table) == {"en", "pt"}
    assert set(table["en"]) == set(table["pt"]), set(table["en"]) ^ set(table["pt"])
    for key, en in table["en"].items():
        assert fields(en) == fields(table["pt"][key]), key
        assert en != table["pt"][key], key  # said in Portuguese


def test_the_field_judge_can_fail():
    assert fields("{a} {b!r} {c:,}") == {("a", None, ""), ("b", "r", ""), ("c", None, ",")}
    assert fields("{a!r}") != fields("{a}")


#: The Portuguese line of each of the English tests' bad documents, by the same case names.
PT_DOCS = {
    "ragged": "X tem linhas de tamanhos diferentes: a linha 2 tem 3 entradas, mas a linha 1 tem 4",
    "non-number": 'X[1][3] é "a", não um número',
    "bool": "X[1][3] é true, não um número",
    "wrong W_Q": "heads[0].W_Q tem formato 3×2, esperado 4×* (d_model × d_k, d_model = largura "
    "de X)",
    "W_K width": "heads[0].W_K tem formato 4×3, esperado 4×2 (d_model × d_k, d_model = largura "
    "de X)",
    "wrong W_O": "W_O tem formato 3×4, esperado 4×* (h·d_v × d_out com h=2, d_v=2)",
    "empty X": "X não tem nenhuma linha: precisa de pelo menos uma",
    "empty heads": '"heads" deve ser uma lista não vazia de objetos {"W_Q", "W_K", "W_V"}',
    "missing X": 'falta "X": a matriz n×d_model dos embeddings dos tokens (linhas = tokens)',
    "missing W_V": "falta W_V em heads[0] (d_model×d, d_model = 4)",
    "tokens count": '"tokens" tem 1 nomes, mas X tem 3 linhas',
    "causal type": '"causal" deve ser true ou false, veio "yes"',
    "unknown key": "chave desconhecida 'W_0'; chaves esperadas: W_O, X, b_O, causal, heads, tokens",
    "not object": 'a entrada deve ser um objeto JSON com pelo menos "X" e "heads"',
    "b_O without W_O": "b_O foi dado, mas W_O não: b_O é o viés da projeção de saída W_O (sem "
    "W_O a saída é a concatenação)",
    "fused not divisible": "W_Q tem 4 colunas, que não podem ser divididas em h=3 cabeças (4 não "
    "é divisível por 3)",
    "fused bad h": '"h" deve estar entre 1 e 64, veio 0',
    "absurd n": "X tem 5000 linhas; no máximo 256 são aceitas",
    "absurd d_model": "X tem 5000 colunas; no máximo 1024 são aceitas",
}
PT_BAD = {
    "b_O without W_O": "b_O foi dado, mas W_O não",
    "b_O length": "b_O tem 2 entradas, esperadas 4 (d_out = o número de colunas de W_O)",
    "b_O not a list": "b_O deve ser uma lista de 4 números (d_out = o número de colunas de W_O)",
    "b_O entry": 'b_O[2] é "x", não um número',
    "head bias length": "heads[0].b_Q tem 1 entradas, esperadas 2 (d_k = 2, um viés por cabeça)",
    "b_V on one head only": "heads[1] não tem b_V, mas heads[0] tem: dê b_V a todas as cabeças "
    "ou a nenhuma",
    "fused bias length": "b_K tem 3 entradas, esperadas 2 (uma entrada por coluna de W_K)",
    "W_O rows": "W_O tem formato 3×2, esperado 2×* (h·d_v × d_out com h=2, d_v=1)",
    "unknown head key": "heads[0] tem a chave desconhecida 'b_O'; esperadas: W_Q, W_K, W_V, b_Q, "
    "b_K, b_V",
    "input not an object": '"input" deve ser o objeto JSON de um arquivo de --input (com "X" e '
    '"heads"), veio list',
    "input nested twice": "chave desconhecida 'input'; chaves esperadas: ",
}

HEAD = {"W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}
#: The messages no English test reached: (document, English line, Portuguese line).
MORE = {
    "X not rows": (
        {"X": [1, 2], "heads": [HEAD]},
        "X must be a list of rows (a list of lists of numbers)",
        "X deve ser uma lista de linhas (uma lista de listas de números)",
    ),
    "empty row": (
        {"X": [[]], "heads": [HEAD]},
        "X row 1 is empty: it needs at least one column",
        "X: a linha 1 está vazia; é preciso pelo menos uma coluna",
    ),
    "infinite entry": (
        {"X": [[1.0, float("inf")]], "heads": [HEAD]},
        "X[1][2] is inf: only finite numbers are allowed",
        "X[1][2] é inf: só números finitos são aceitos",
    ),
    "infinite bias": (
        {"X": [[1]], "heads": [HEAD], "W_O": [[1]], "b_O": [float("-inf")]},
        "b_O[1] is -inf: only finite numbers are allowed",
        "b_O[1] é -inf: só números finitos são aceitos",
    ),
    "exercise variant": (
        {"variant": "gqa", "X": [[1]]},
        "this is the problem of an attnref exercise --variant gqa, not an "
        "--input file (which has no variants): its key is attnref exercise "
        "--variant … --key",
        "este é o problema de um attnref exercise --variant gqa, não um arquivo "
        "de --input (que não tem variantes): o seu gabarito é attnref exercise "
        "--variant … --key, e attnref check corrige o answer.json escrito ao "
        "lado dele",
    ),
    "tokens not strings": (
        {**LIFE_INPUT, "tokens": [1, 2, 3]},
        '"tokens" must be a list of strings, one per row of X',
        '"tokens" deve ser uma lista de textos, um por linha de X',
    ),
    "missing heads": (
        {"X": [[1]]},
        'missing "heads": a list of {"W_Q", "W_K", "W_V"} objects, one per head',
        'falta "heads": uma lista de objetos {"W_Q", "W_K", "W_V"}, um por cabeça',
    ),
    "too many heads": (
        {"X": [[1]], "heads": [HEAD] * 65},
        '"heads" has 65 entries; at most 64 are supported',
        '"heads" tem 65 entradas; no máximo 64 são aceitas',
    ),
    "head not an object": (
        {"X": [[1]], "heads": [1]},
        "heads[0] must be an object with W_Q, W_K and W_V",
        "heads[0] deve ser um objeto com W_Q, W_K e W_V",
    ),
    "h not an integer": (
        {"X": [[1]], "h": "2", "W_Q": [[1]]},
        '"h" (the number of heads) must be a positive integer, got "2"',
        '"h" (o número de cabeças) deve ser um inteiro positivo, veio "2"',
    ),
    "fused W_K missing": (
        {"X": [[1, 0]], "h": 1, "W_Q": [[1], [0]]},
        "missing W_K: the fused d_model×(h·d) matrix",
        "falta W_K: a matriz fundida d_model×(h·d)",
    ),
    "fused W_Q rows": (
        {"X": [[1, 0]], "h": 1, "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]},
        "W_Q has shape 1×1, expected 2×* (d_model × h·d_k, d_model = width of X)",
        "W_Q tem formato 1×1, esperado 2×* (d_model × h·d_k, d_model = largura de X)",
    ),
}

#: Every bad document: (document, English line, Portuguese line).
CASES = {
    **{f"cli: {k}": (doc, en, PT_DOCS[k]) for k, (doc, en) in BAD_DOCS.items()},
    **{f"inputs: {k}": (doc, en, PT_BAD[k]) for k, (doc, en) in BAD.items()},
    **MORE,
}


def in_json(doc: object) -> bool:
    """Whether JSON can hold ``doc`` (it has no infinity: the loader refuses one first)."""
    try:
        json.dumps(doc, allow_nan=False)
    except ValueError:
        return False
    return True


#: The cases a JSON file can hold.
IN_A_FILE = [k for k, (doc, _, _) in CASES.items() if in_json(doc)]


def test_every_english_case_has_its_portuguese_line():
    assert set(PT_DOCS) == set(BAD_DOCS) and set(PT_BAD) == set(BAD)


def refusal(read: Callable[[str], object], lang: str) -> InputError:
    """The `InputError` that reading gives in ``lang`` (``read`` takes the language)."""
    with pytest.raises(InputError) as e:
        read(lang)
    return e.value


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_document_in_each_language(case):
    doc, en, pt = CASES[case]
    said = {lang: refusal(lambda lang: parse_input(doc, lang), lang) for lang in ("en", "pt")}
    assert en in str(said["en"]) and said["en"].lang == "en"
    assert pt in str(said["pt"]) and said["pt"].lang == "pt"
    assert str(said["en"]) != str(said["pt"])
    assert str(refusal(lambda _: parse_input(doc), "en")) == str(said["en"])  # the default
    assert str(said["pt"]).count("\n") == 0


@pytest.mark.parametrize("case", IN_A_FILE)
def test_each_bad_input_file_in_each_language(tmp_path, case):
    doc, en, pt = CASES[case]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for lang, words in (("en", en), ("pt", pt)):
        e = refusal(lambda lang: load_input_file(path, lang), lang)
        assert words in str(e) and e.lang == lang, str(e)


def test_every_message_is_reached_by_a_case(monkeypatch):
    """Each key of the table (but the one `attention_ref.worked` says) is said by some case:
    its Portuguese words are tested above."""
    said: set[str] = set()

    def error(lang: str, key: str, /, **kw: object) -> InputError:
        said.add(key)
        return input_words.error(lang, key, **kw)

    def words(lang: str, key: str, /, **kw: object) -> str:
        said.add(key)
        return input_words.words(lang, key, **kw)

    monkeypatch.setattr(attention_input, "error", error)
    monkeypatch.setattr(attention_input, "words", words)
    for doc, _, _ in CASES.values():
        with pytest.raises(InputError):
            parse_input(doc, "pt")
    elsewhere = {"grad_shape"}  # --grad-output against the output: tests/worked
    assert said == set(input_words.WORDS["en"]) - elsewhere


#: The JSON loader's refusals of an input file (`tests.cli.test_cli.test_bad_json_text`,
#: ``test_bad_input_files``): (what the file holds, English words, Portuguese words).
FILES = {
    "not JSON": ('{"X": [[1, 0]],', "is not valid JSON", "não é JSON válido"),
    "empty": ("", "is not valid JSON: Expecting value", "não é JSON válido: esperava um valor"),
    "NaN": (
        '{"X": [[NaN, 0]], "heads": []}',
        "has NaN at line 1, column 9, which is not JSON",
        "tem NaN na linha 1, coluna 9, o que não é JSON",
    ),
    "Infinity": (
        '{"X": [[Infinity, 0]], "heads": []}',
        "Infinity at line 1, column 9",
        "Infinity na linha 1, coluna 9",
    ),
    "missing": (None, "input file not found: ", "arquivo de entrada não encontrado: "),
    "directory": ("/", "is a directory, not a JSON file", "é uma pasta, não um arquivo JSON"),
    "large": (
        " " * 5_000_001,
        "is too large: files are limited to 5,000,000 bytes",
        "é grande demais: o limite é de 5,000,000 bytes",
    ),
    "binary": (b"\xff\xfe\x00", "is not UTF-8 text (byte 1)", "não é texto UTF-8 (byte 1)"),
}


@pytest.mark.parametrize("case", list(FILES))
def test_each_bad_json_file_in_each_language(tmp_path, case):
    held, en, pt = FILES[case]
    path: Path = tmp_path / "in.json"
    if held == "/":
        path = tmp_path
    elif isinstance(held, bytes):
        path.write_bytes(held)
    elif held is not None:
        path.write_text(held, encoding="utf-8")
    said = {lang: refusal(lambda lang: load_input_file(path, lang), lang) for lang in ("en", "pt")}
    assert en in str(said["en"]) and str(said["en"]).startswith("input file")
    assert pt in str(said["pt"]) and str(said["pt"]).startswith("arquivo de entrada")
    assert (said["en"].lang, said["pt"].lang) == ("en", "pt")


def test_a_language_without_words_speaks_english():
    e = refusal(lambda lang: parse_input([1], lang), "fr")
    assert str(e) == 'the input must be a JSON object with at least "X" and "heads"'
    assert e.lang == "en"  # the CLI's prefix: "attnref: error: "
