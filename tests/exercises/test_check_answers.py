"""Writing an answer without guessing (issue 31 item 4): the statement says how to write a
masked entry and check reads exactly those spellings (naming them, and ``-1e9``, when given
another); every step is named as the statement writes it, its JSON path beside; every error
about a malformed answer is in the exercise's language, decimal commas included."""

from __future__ import annotations

import json
import re

import pytest

from attention_ref.exercises.answer import (
    Problem,
    answer_from_steps,
    answer_text,
    read_answer_text,
)
from attention_ref.exercises.answer_words import MASKED_SPELLINGS, step_label, width
from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.entries import INFINITIES
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.inputs.attention_input import InputError, parse_input
from attention_ref.render import render
from attention_ref.worked.gradients import input_trace

#: seed 5 with d_model 6: S̃⁽¹⁾[1, 2] is masked (−∞)
MASKED = {"seed": 5, "d_model": 6}


def exact_answer(lang: str = "en", keys: tuple[str, ...] = ("S_masked",), **kw: object) -> dict:
    """The exact steps ``keys`` to 3 decimals, as a decoded answer (masked entries "-inf")."""
    prob = Problem.of_exercise(ExerciseOptions(**(MASKED | {"lang": lang} | kw)))  # type: ignore[arg-type]
    doc = answer_from_steps(computed_steps(prob.data()), prob.naming, keys=keys)
    return json.loads(answer_text(doc, 3))


def check(doc: object):
    return check_document(read_answer_text(json.dumps(doc, ensure_ascii=False)))


def refused(doc: object) -> str:
    with pytest.raises(InputError) as e:
        check(doc)
    return str(e.value)


def with_entry(doc: dict, text: str) -> str:
    """The answer's text with S̃⁽¹⁾[1, 2] written as ``text`` (JSON, as a student types it)."""
    doc = json.loads(json.dumps(doc))
    doc["heads"][0]["S_masked"][0][1] = "@@"
    return json.dumps(doc, ensure_ascii=False).replace('"@@"', text)


def refused_text(text: str) -> str:
    with pytest.raises(InputError) as e:
        check_document(read_answer_text(text))
    return str(e.value)


# --- 1. how a masked entry is written ----------------------------------------------------------

SENTENCE = {
    "en": r'Write a masked entry \(−∞\) as the string "-inf" .*?-1e9 is not −∞\.',
    "pt": r'Escreva uma entrada mascarada \(−∞\) como o texto "-inf" .*?-1e9 não é −∞\.',
}


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"variant": "window", "tokens": 4},
        {"variant": "gqa", "heads": 4},
        {"variant": "rope", "heads": 1},
    ],
    ids=["mha", "window", "gqa", "rope"],
)
def test_the_statement_says_how_to_write_a_masked_entry_in_both_languages(lang, kw):
    text = render(make_exercise(ExerciseOptions(seed=2, lang=lang, **kw)).statement, "markdown", 3)
    found = re.search(SENTENCE[lang], text)
    assert found, text[-600:]
    # the spellings it names are the table check reads, no more, no fewer
    assert re.findall(r'"([^"]+)"', found.group()) == list(MASKED_SPELLINGS) == list(INFINITIES)
    # negative control: a problem without a mask has nothing masked to write
    plain = ExerciseOptions(seed=2, lang=lang, causal=False)
    assert not re.search(SENTENCE[lang], render(make_exercise(plain).statement, "markdown", 3))


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_check_reads_exactly_the_documented_spellings(lang):
    doc = exact_answer(lang)
    assert doc["heads"][0]["S_masked"][0][1] == "-inf"
    for spelling in MASKED_SPELLINGS:  # each documented spelling is right, blanks around too
        assert check_document(read_answer_text(with_entry(doc, json.dumps(spelling)))).all_right
        assert check_document(read_answer_text(with_entry(doc, f'" {spelling} "'))).all_right
    where = {
        "en": "S̃⁽¹⁾ (heads[0].S_masked), entry [1, 2], is",
        "pt": "S̃⁽¹⁾ (heads[0].S_masked), entrada [1, 2], é",
    }[lang]
    others = [
        '"-Infinity"',
        '"minus infinity"',
        '"-INF"',
        '"−inf"',
        '"-∞"',
        '"inf"',
        '"∞"',
        '""',
        '"menos infinito"',
    ]
    for text in others:
        message = refused_text(with_entry(doc, text))
        assert message.startswith(where) and all(f'"{s}"' in message for s in MASKED_SPELLINGS)
        assert (
            ("escreva" in message or "escrita" in message)
            if lang == "pt"
            else ("write" in message or "written" in message)
        ), message
    null = refused_text(with_entry(doc, "null"))
    assert null.startswith(where + " null") and '"-inf"' in null
    assert (
        "null deixa de fora um passo inteiro" if lang == "pt" else "null leaves a whole step out"
    ) in null


@pytest.mark.parametrize("written", ["-1e9", "-1000000000", "-1e4", "-3.4e38", "-65504"])
def test_a_large_number_for_minus_infinity_is_named(written):
    en, pt = exact_answer("en"), exact_answer("pt")
    message = refused_text(with_entry(en, written))
    assert message == (
        f"S̃⁽¹⁾ (heads[0].S_masked), entry [1, 2]: {written} is a large number, not −∞: "
        'write "-inf" for a masked entry (check reads "-inf", "−∞")'
    )
    assert f'{written} é um número grande, não −∞: escreva "-inf"' in refused_text(
        with_entry(pt, written)
    )
    # controls: a small wrong number there is graded, not refused; "-inf" is right
    wrong = check_document(read_answer_text(with_entry(en, "-100")))
    assert not wrong.all_right and wrong.first_wrong.label == "heads[0].S_masked"
    assert check_document(read_answer_text(with_entry(en, '"-inf"'))).all_right


def test_a_large_number_that_is_the_value_is_right():
    """A problem whose Q has -2000: written -2000 is right; -1e9 there is a wrong number (Q has
    no masked entry: a stand-in for −∞ is refused only where a −∞ belongs)."""
    inp = parse_input(
        {
            "X": [[-2000, 1], [1, 1]],
            "heads": [{"W_Q": [[1], [0]], "W_K": [[1], [0]], "W_V": [[1], [1]]}],
        }
    )
    prob = Problem(
        ProblemTrace.of_attention(input_trace(inp)), {"input": "big.json"}, "--input big.json"
    )
    assert check_document(read_answer_text('{"heads": [{"Q": [[-2000], [1]]}]}'), prob).all_right
    wrong = check_document(read_answer_text('{"heads": [{"Q": [[-1e9], [1]]}]}'), prob)
    assert wrong.first_wrong is not None and wrong.first_wrong.key == ("Q", 0)


# --- 2. the steps as the statement names them ---------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_report_names_each_step_as_the_statement_with_its_json_path(lang):
    opt = ExerciseOptions(seed=9, lang=lang, backward=True)
    prob = Problem.of_exercise(opt)
    steps = computed_steps(prob.data(), (), prob.data().forward + BACKWARD)
    steps[("A", 1)] = steps[("A", 1)].copy()
    steps[("A", 1)][2, 1] += 0.2
    keys = ("Q", "scores", "S_masked", "A", "concat", "output", "grad.W_O", "grad.W_Q", "grad.X")
    doc = answer_from_steps(steps, prob.naming, keys=keys)
    report = check_document(read_answer_text(answer_text(doc, 3)))
    lines = report_lines(report)
    text = "\n".join(lines)
    names = [
        "Q⁽¹⁾ (heads[0].Q)",
        "Q⁽¹⁾K⁽¹⁾ᵀ (heads[0].scores)",
        "S̃⁽²⁾ (heads[1].S_masked)",
        "A⁽²⁾ (heads[1].A)",
        "∂L/∂W_O (grads.W_O)",
        "∂L/∂W_Q⁽¹⁾ (grads.heads[0].W_Q)",
        "∂L/∂X (grads.X)",
    ]
    names += (
        ["concatenação (concat)", "saída (output)"] if lang == "pt" else ["concat  ", "output  "]
    )
    for name in names:
        assert f"  {name}" in text, name
    first = {
        "en": "First wrong step: A⁽²⁾ (heads[1].A).",
        "pt": "Primeiro passo errado: A⁽²⁾ (heads[1].A).",
    }[lang]
    assert first in lines
    # the gradients are the statement's own words: ∂L/∂W_O, ∂L/∂W_Q⁽¹⁾, ∂L/∂X
    statement = render(make_exercise(opt).statement, "markdown", 3)
    for key in (("grad.W_O", None), ("grad.W_Q", 0), ("grad.X", None), ("grad.S_masked", 0)):
        assert step_label(key, lang).split(" (")[0] in statement, key
    # control: the gradebook's JSON keeps the bare paths, and the old "path, i.e." is gone
    assert report.to_json()["first_wrong"] == "heads[1].A"
    assert [v["step"] for v in report.to_json()["verdicts"]][:2] == ["heads[0].Q", "heads[1].Q"]
    assert "i.e." not in text and "isto é" not in text


def test_the_verdicts_line_up_on_the_terminal_whatever_the_tilde():
    """S̃ is S and a combining tilde: padded by len(), its line would be one column short."""
    doc = exact_answer("en", keys=("S", "S_masked"))
    lines = report_lines(check(doc))[1:-1]
    assert any("S̃" in line for line in lines) and len(lines) == 4
    columns = {width(line[: line.index("right")]) for line in lines}
    assert len(columns) == 1, lines
    assert len({len(line[: line.index("right")]) for line in lines}) == 2  # the control


def test_errors_name_the_step_as_the_statement_with_its_json_path():
    base = {"exercise": {"seed": 1, "backward": True}}
    cases = [
        ({"heads": [{"Q": [[1, 2], [3]]}]}, "Q⁽¹⁾ (heads[0].Q) is ragged"),
        ({"heads": [None, {"A": [[1, None]]}]}, "A⁽²⁾ (heads[1].A), entry [1, 2], is null"),
        ({"grads": {"heads": [{"W_Q": [["x"]]}]}}, "∂L/∂W_Q⁽¹⁾ (grads.heads[0].W_Q), entry [1, 1]"),
        ({"output": [[True]]}, "output, entry [1, 1], is true"),
    ]
    for doc, message in cases:
        assert refused(base | doc).startswith(message), (doc, refused(base | doc))
    gqa = {"exercise": {"seed": 1, "variant": "gqa", "heads": 4}}
    assert refused(gqa | {"kv_heads": [None, {"K": [["-"]]}]}).startswith(
        "K⁽²⁾ (kv_heads[1].K), entry [1, 1]"
    )


# --- 3. the errors in the exercise's language --------------------------------------------------

#: answers with one thing wrong (the exercise's "lang" is added), and words of the message
MALFORMED = [
    ({"heads": [{"Q": [[1, "x"]]}]}, "write a number", "escreva um número"),
    ({"heads": [{"Q": [[1, 2], [3]]}]}, "is ragged", "tem linhas de tamanhos diferentes"),
    ({"heads": [{"Q": []}]}, "must be a non-empty list", "deve ser uma lista não vazia"),
    ({"nope": 1}, 'unknown key "nope"', 'chave desconhecida "nope"'),
    ({}, "no step given yet", "nenhum passo dado ainda"),
    ({"heads": [{}, {}, {}]}, "h = 2 heads", "h = 2 cabeças"),
    ({"heads": [{"Z": [[1]]}]}, 'unknown step "Z"', 'passo desconhecido "Z"'),
    ({"heads": "x"}, "must be a list of objects", "deve ser uma lista de objetos"),
    ({"heads": [3]}, "must be an object with some of", "deve ser um objeto com alguns de"),
    ({"grads": 3}, '"grads" must be an object', '"grads" deve ser um objeto'),
    ({"grads": {"Y": [[1]]}}, 'unknown key "Y"', 'chave desconhecida "Y"'),
    ({"output": [[1]], "grad_output": [[1]]}, "grad_output must be a finite",
     "grad_output deve ser uma matriz finita"),
    ({"kv_heads": [], "output": [[1]]}, 'unknown key "kv_heads"', 'chave desconhecida "kv_heads"'),
    ({"example": "life-is-awesome", "output": [[1]]}, "exactly one of", "exatamente um de"),
    ({"X": [[1]], "heads": []}, "this is the exercise, not an answer", "isto é o exercício"),
    ({"exercise": {"heads": 3}, "output": [[1]]}, "--heads must divide", "--heads deve dividir"),
    ({"exercise": {"tokens": "3"}, "output": [[1]]}, "must be an integer", "deve ser um inteiro"),
    ({"exercise": {"causal": 1}, "output": [[1]]}, "must be true or false", "deve ser true ou"),
    ({"exercise": {"bogus": 1}, "output": [[1]]}, '"exercise" has unknown key',
     '"exercise" tem a chave desconhecida'),
    ({"exercise": {"variant": "gqa", "heads": 1}, "output": [[1]]}, "needs h >= 2",
     "precisa de h >= 2"),
    ({"exercise": {"variant": "window"}, "grads": {}}, "asks no gradients",
     "não pede gradientes"),
    ({"exercise": {"variant": "gqa", "heads": 4}, "kv_heads": [{}, {}, {}]}, "g = 2 K/V heads",
     "g = 2 cabeças K/V"),
    ({"exercise": {"decimals": 0}, "output": [[1]]}, "--decimals must be between",
     "--decimals deve estar entre"),
]  # fmt: skip


def in_lang(doc: dict, lang: str) -> dict:
    exercise = {"seed": 1} | doc.get("exercise", {}) | {"lang": lang}
    return {"exercise": exercise} | {k: v for k, v in doc.items() if k != "exercise"}


@pytest.mark.parametrize(("doc", "en", "pt"), MALFORMED, ids=[m[1] for m in MALFORMED])
def test_every_malformed_answer_error_is_in_the_exercises_language(doc, en, pt):
    assert en in refused(in_lang(doc, "en"))  # the control: in English, the English words
    message = refused(in_lang(doc, "pt"))
    assert pt in message and en not in message, message


@pytest.mark.parametrize(
    ("text", "en", "pt"),
    [
        (
            '{"exercise": {"seed": 1, "lang": "%s"}, "output": [[1,]]}',
            "is not valid JSON: Expecting value at line 1",
            "não é JSON válido: esperava um valor na linha 1",
        ),
        (
            '{"exercise": {"seed": 1, "lang": "%s"}, "output": [[NaN]]}',
            "has NaN at line 1",
            "tem NaN na linha 1",
        ),
        (
            '{"exercise": {"seed": 1, "lang": "%s"}, "output": [[1e999]]}',
            "too large for a float",
            "grande demais para um float",
        ),
    ],
)
def test_an_answer_that_is_not_json_is_told_so_in_its_language(text, en, pt):
    with pytest.raises(InputError, match=re.escape(en)):
        read_answer_text(text % "en")
    with pytest.raises(InputError, match=re.escape(pt)):
        read_answer_text(text % "pt")
    with pytest.raises(InputError, match=re.escape(pt)):  # asked in Portuguese
        read_answer_text(text % "en", "pt")


def test_an_example_answer_in_portuguese_says_its_errors_in_portuguese():
    doc = {"example": "life-is-awesome", "lang": "pt", "heads": [{"Q": [[1, "x"]]}]}
    assert "escreva um número" in refused(doc)
    assert "write a number" in refused(doc | {"lang": "en"})


def test_decimal_commas_in_a_portuguese_answer_are_refused_in_portuguese():
    """Refused, not read: in JSON 0,670 unquoted is two entries, so "a point in answer.json" is
    the one rule; the statement in Portuguese says it."""
    doc = exact_answer("pt", keys=("A",))
    doc["heads"][0]["A"][1][0] = "0,670"
    message = refused(doc)
    assert message == (
        'A⁽¹⁾ (heads[0].A), entrada [2, 1], é "0,670", um número com vírgula '
        "decimal: em JSON os números se escrevem com ponto decimal e sem aspas, "
        "0.670 (a vírgula separa as entradas)"
    )
    doc["heads"][0]["A"][1][0] = "0.670"
    assert "escreva-o sem aspas, 0.670" in refused(doc)
    # the unquoted comma: two entries where there was one
    marked = exact_answer("pt", keys=("A",))
    marked["heads"][0]["A"][1] = "@@"
    ragged = json.dumps(marked).replace('"@@"', "[0,670, 0,330, 0]")
    assert "(números com vírgula decimal? Em JSON a vírgula separa as entradas: escreva 0.670" in (
        refused_text(ragged)
    )
    wide = json.loads(ragged)
    wide["heads"][0]["A"] = [[1, 0, 0, 0, 0], [0, 670, 0, 330, 0], [0, 50, 0, 450, 0]]
    text = "\n".join(report_lines(check(wide)))
    assert "formato 3×5, esperado 3×3 (números com vírgula decimal?" in text
    # controls: an English answer is told in English, with no word of commas as entries
    en = exact_answer("en", keys=("A",))
    en["heads"][0]["A"][1][0] = "0,670"
    assert refused(en).endswith(
        "a number with a decimal comma: JSON writes numbers with a "
        "decimal point and no quotes, 0.670"
    )
    en["heads"][0]["A"] = wide["heads"][0]["A"]
    assert "shape 3×5, expected 3×3\n" in "\n".join(report_lines(check(en))) + "\n"
    pt_statement = render(
        make_exercise(ExerciseOptions(seed=2, lang="pt")).statement, "markdown", 3
    )
    assert (
        "No arquivo de resposta, os números levam ponto decimal e vão sem aspas (`0.670`"
        in pt_statement
    )
    en_statement = render(make_exercise(ExerciseOptions(seed=2)).statement, "markdown", 3)
    assert "0,670" not in en_statement and "decimal point" not in en_statement


def test_the_language_asked_overrides_the_answers():
    doc = exact_answer("en", keys=("A",))
    doc["heads"][0]["A"][1][0] = None
    assert "is null" in refused(doc)
    with pytest.raises(InputError, match="é null"):
        check_document(read_answer_text(json.dumps(doc)), lang="pt")
    good = exact_answer("en", keys=("A",))
    good["heads"][0]["A"][1][0] += 0.25
    report = check_document(read_answer_text(json.dumps(good)), lang="pt")
    assert report.lang == "pt" and "Primeiro passo errado: A⁽¹⁾ (heads[0].A)." in report_lines(
        report
    )
    assert check(good).lang == "en"  # the control: the answer's own language
