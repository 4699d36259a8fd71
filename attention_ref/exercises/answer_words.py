r"""The words of ``attnref check`` about an answer, in English and Portuguese (no torch).

* How a masked entry (:math:`-\infty`) is written: `MASKED_SPELLINGS`, the one table that the
  statement prints (`attention_ref.exercises.exercise.TEXT`) and that the answer's reader accepts
  (`attention_ref.exercises.answer`); any other spelling, ``null`` in a matrix, or a large number
  standing in for :math:`-\infty` (``-1e9``) is refused with these words.
* How a step is named: as the statement writes it, ``Q⁽¹⁾``, ``S̃⁽²⁾``, ``∂L/∂W_Q⁽¹⁾``
  (`step_name`), with its JSON path beside, ``Q⁽¹⁾ (heads[0].Q)`` (`step_label`; the path alone
  is `label`, what a gradebook stores); `math_name` is the book's name of a step inside a
  sentence (``the concat``, ``the K query head 3 reads``).
* Every error about a malformed answer (`MESSAGES`, raised by `error`), in the language of the
  answer's exercise (`answer_lang`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TYPE_CHECKING, Final

from attention_ref.exercises.features import Features
from attention_ref.inputs.errors import InputError
from attention_ref.render import LANGS

if TYPE_CHECKING:
    from attention_ref.exercises.chain import Key


#: The spellings of a masked entry (−∞) that an answer may use: the statement says them, the
#: check reads exactly these (around them, blanks are ignored), and names them when given another.
MASKED_SPELLINGS: Final = ("-inf", "−∞")
#: The answer's file as ``attnref exercise --out`` writes it (the statement names it where it is).
ANSWER_FILE: Final = "answer.json"
#: A written number at most this, where the entry is not that number, stands for −∞ (-1e9, -1e4,
#: -65504, -3.4e38: what code writes for a mask), and is refused with what to write instead.
STAND_IN: Final = -1e3


def spellings(sep: str = ", ") -> str:
    """The accepted spellings, quoted: ``"-inf", "−∞"``."""
    return sep.join(f'"{s}"' for s in MASKED_SPELLINGS)


#: The homework's attention: no feature.
PLAIN: Final = Features()

# --- step names ---------------------------------------------------------------------------------


def sup(i: int) -> str:
    """Head ``i`` (0-based) as a superscript: ``⁽¹⁾``."""
    return "⁽" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(i + 1)) + "⁾"


def label(key: Key) -> str:
    """The JSON path of a step in the answer: ``heads[1].A``, ``concat``, ``grads.heads[0].W_Q``,
    ``grads.X``, ``kv_heads[0].K`` (heads count from 0, as JSON lists do)."""
    name, head = key
    prefix, name = ("grads.", name[5:]) if name.startswith("grad.") else ("", name)
    if name.startswith("kv."):
        return f"{prefix}kv_heads[{head}].{name[3:]}"
    return prefix + (f"heads[{head}].{name}" if head is not None else name)


#: The steps without a symbol, in words.
STEP_WORDS: Final = {
    "en": {"concat": "the concat", "output": "the output"},
    "pt": {"concat": "a concatenação", "output": "a saída"},
}
#: The same, as the name of a step in a list (the statement's words without the article).
SHORT_WORDS: Final = {
    "en": {"concat": "concat", "output": "output"},
    "pt": {"concat": "concatenação", "output": "saída"},
}
#: A query head's key and value in grouped-query attention and RoPE, where ``K⁽ⁱ⁾`` would
#: name a K/V head: the one the query head reads (its group's, rotated with RoPE).
READ_WORDS: Final = {
    "en": "the {name} query head {i} reads",
    "pt": "o {name} que a cabeça de consulta {i} lê",
}
#: A query head's share of its K/V head's gradient, in grouped-query attention.
THROUGH_WORDS: Final = {"en": "(through query head {i})", "pt": "(pela cabeça de consulta {i})"}
#: The key of a query head's scores in grouped-query attention (its group's).
GROUP_WORDS: Final = {
    "en": "(the {k} query head {i} reads)",
    "pt": "(o {k} que a cabeça de consulta {i} lê)",
}


def math_name(key: Key, lang: str = "en", features: Features = PLAIN) -> str:
    """The step as the book writes it: ``A⁽²⁾``, ``∂W_Q⁽¹⁾``, ``the concat``; with features,
    ``K⁽¹⁾`` for K/V head 1 (``kv_heads[0].K``), ``Q_rot⁽¹⁾``, ``K_rot⁽¹⁾``, and where the K/V
    heads are apart (``g < h`` or RoPE) the key and value a query head reads in words."""
    from attention_ref.exercises.feature_table import active  # numpy: not at the CLI's start

    on = active(features)
    apart = any(feat.separate_kv for feat in on)  # the K/V heads written apart
    shared = any(feat.shared_kv for feat in on)  # several query heads read one K/V head
    name, head = key
    if name.startswith("kv."):
        name = name[3:]
    elif apart and name in ("K", "V") and head is not None:
        return READ_WORDS[lang].format(name=name, i=head + 1)
    own = next(
        (feat.step_words[lang][name] for feat in on if name in feat.step_words.get(lang, {})), None
    )
    if own is not None:
        return own
    grad = name.startswith("grad.")
    name = name[5:] if grad else name
    if grad and name.startswith("kv."):  # a K/V head's gradient: its group's sum
        return f"∂{name[3:]}{sup(head or 0)}"
    if grad and shared and name in ("K", "V", "W_K", "W_V") and head is not None:
        return f"∂{name}{sup(head)} " + THROUGH_WORDS[lang].format(i=head + 1)
    sym = {"scores": "QKᵀ", "S_masked": "S̃"}.get(name, name)
    if name == "scores" and apart and head is not None:
        s = sup(head)  # the queries and keys the scores read: the last the features write
        q = ("Q", *(x for feat in on for x in feat.query_steps))[-1]
        k = ("K", *(x for feat in on for x in feat.kv_steps if x.startswith("K")))[-1]
        if not shared:
            return f"{q}{s}{k}{s}ᵀ"  # g = h: head i's own key
        return f"{q}{s}{k}ᵀ " + GROUP_WORDS[lang].format(k=k, i=head + 1)
    if not grad and name in STEP_WORDS[lang]:
        return STEP_WORDS[lang][name]
    if head is not None:
        s = sup(head)
        sym = f"Q{s}K{s}ᵀ" if name == "scores" else f"{sym}{s}"
    return ("∂" if grad else "") + sym


def step_name(key: Key, lang: str = "en", features: Features = PLAIN) -> str:
    """The step as the statement writes it: ``Q⁽¹⁾``, ``S̃⁽²⁾``, ``Q⁽¹⁾K⁽¹⁾ᵀ``, ``∂L/∂W_Q⁽¹⁾``,
    ``concat`` (``concatenação``), ``output`` (``saída``); where the K/V heads are apart, the
    key a query head reads in words (`math_name`)."""
    name, head = key
    if name.startswith("grad."):
        short = name[5:]
        if head is None and short in ("concat", "output"):
            return "∂L/∂" + ("Concat" if short == "concat" else SHORT_WORDS[lang]["output"])
        return "∂L/∂" + math_name(key, lang, features)[1:]
    if head is None and name in SHORT_WORDS[lang]:
        return SHORT_WORDS[lang][name]
    return math_name(key, lang, features)


def step_label(key: Key, lang: str = "en", features: Features = PLAIN) -> str:
    """The step's name with its JSON path beside: ``Q⁽¹⁾ (heads[0].Q)``; the name alone where
    they are the same (``output``); a name's own note after the path (``Q⁽²⁾Kᵀ
    (heads[1].scores; the K query head 2 reads)``)."""
    name, path = step_name(key, lang, features), label(key)
    if name == path:
        return name
    if name.endswith(")") and " (" in name:
        symbol, _, note = name[:-1].partition(" (")
        return f"{symbol} ({path}; {note})"
    return f"{name} ({path})"


def width(text: str) -> int:
    """Columns that ``text`` takes on a terminal: combining marks (the tilde of S̃) take none."""
    return sum(not unicodedata.combining(c) for c in text)


def pad(text: str, columns: int) -> str:
    """``text`` padded with blanks to ``columns`` terminal columns."""
    return text + " " * max(0, columns - width(text))


# --- the language of an answer ------------------------------------------------------------------

_LANG_IN_TEXT = re.compile(r'"lang"\s*:\s*"(en|pt)"')


def answer_lang(doc: object, fallback: str = "en") -> str:
    """The language of a decoded answer: its ``"exercise": {"lang": …}``, else (an ``"input"``
    or ``"example"`` answer) its ``"lang"``, else ``fallback``; a value that is not a language
    is left to the answer's checks to refuse."""
    if isinstance(doc, dict):
        ex = doc.get("exercise")
        if isinstance(ex, dict):
            return str(ex["lang"]) if ex.get("lang") in LANGS else fallback
        if doc.get("lang") in LANGS:
            return str(doc["lang"])
    return fallback


def text_lang(text: str, fallback: str = "en") -> str:
    """The language of an answer's text that could not be decoded (``"lang": "pt"`` in it)."""
    m = _LANG_IN_TEXT.search(text)
    return m.group(1) if m else fallback


# --- the errors ---------------------------------------------------------------------------------

#: Every error about a malformed answer, per language (`error` formats and raises them).
MESSAGES: Final[dict[str, dict[str, str]]] = {
    "null": {
        "en": '{where} is null: write a number, or a masked entry (−∞) as "-inf" (null leaves '
        "a whole step out, not an entry)",
        "pt": '{where} é null: escreva um número, ou uma entrada mascarada (−∞) como "-inf" '
        "(null deixa de fora um passo inteiro, não uma entrada)",
    },
    "bool": {
        "en": '{where} is {shown}, not a number: write a number, or "-inf" for a masked entry',
        "pt": '{where} é {shown}, não um número: escreva um número, ou "-inf" para uma entrada '
        "mascarada",
    },
    "spelling": {
        "en": "{where} is {shown}, which check does not read: write a number, or a masked entry "
        "(−∞) as one of {spellings} (a string, in quotes)",
        "pt": "{where} é {shown}, que o check não lê: escreva um número, ou uma entrada "
        "mascarada (−∞) como um de {spellings} (um texto, entre aspas)",
    },
    "plus_inf": {
        "en": "{where} is {shown}, +∞: no step has +∞; a masked entry is −∞, written {spellings}",
        "pt": "{where} é {shown}, +∞: nenhum passo tem +∞; uma entrada mascarada é −∞, escrita "
        "{spellings}",
    },
    "quoted": {
        "en": "{where} is {shown}, a number in quotes: write it without quotes, {plain}",
        "pt": "{where} é {shown}, um número entre aspas: escreva-o sem aspas, {plain}",
    },
    "comma": {
        "en": "{where} is {shown}, a number with a decimal comma: JSON writes numbers with a "
        "decimal point and no quotes, {plain}",
        "pt": "{where} é {shown}, um número com vírgula decimal: em JSON os números se escrevem "
        "com ponto decimal e sem aspas, {plain} (a vírgula separa as entradas)",
    },
    "not_number": {
        "en": '{where} is {shown}: write a number, or "-inf" for a masked entry',
        "pt": '{where} é {shown}: escreva um número, ou "-inf" para uma entrada mascarada',
    },
    "stand_in": {
        "en": '{where}: {shown} is a large number, not −∞: write "-inf" for a masked entry '
        "(check reads {spellings})",
        "pt": '{where}: {shown} é um número grande, não −∞: escreva "-inf" para uma entrada '
        "mascarada (o check lê {spellings})",
    },
    "entry": {"en": "{step}, entry [{row}, {col}],", "pt": "{step}, entrada [{row}, {col}],"},
    "rows": {
        "en": "{where} must be a non-empty list of rows of numbers",
        "pt": "{where} deve ser uma lista não vazia de linhas de números",
    },
    "empty_row": {"en": "{where} row 1 is empty", "pt": "{where}: a linha 1 está vazia"},
    "too_big": {
        "en": "{where} is {r}×{c}; at most {m}×{m}",
        "pt": "{where} é {r}×{c}; no máximo {m}×{m}",
    },
    "ragged": {
        "en": "{where} is ragged: row {i} has {k} entries, row 1 {w}{hint}",
        "pt": "{where} tem linhas de tamanhos diferentes: a linha {i} tem {k} entradas, a "
        "linha 1, {w}{hint}",
    },
    "comma_hint": {
        "en": "",
        "pt": " (números com vírgula decimal? Em JSON a vírgula separa as entradas: escreva "
        "0.670, com ponto)",
    },
    "lang": {
        "en": '"lang" must be "en" or "pt", got {shown}',
        "pt": '"lang" deve ser "en" ou "pt", veio {shown}',
    },
    "not_an_answer": {
        "en": "this is the exercise, not an answer: fill in answer.json (written beside it by "
        "attnref exercise --out) with the steps you computed, and check that",
        "pt": "isto é o exercício, não uma resposta: preencha answer.json (escrito ao lado dele "
        "por attnref exercise --out) com os passos que você calculou e confira esse arquivo",
    },
    "exercise_file": {
        "en": "{name} is the exercise (its numbers), not an answer: fill in {where} (attnref "
        'exercise --out writes one; or write {{"input": "{name}", "heads": [{{"A": …}}]}}) and '
        "check that",
        "pt": "{name} é o exercício (os seus números), não uma resposta: preencha {where} "
        '(attnref exercise --out escreve um; ou escreva {{"input": "{name}", "heads": [{{"A": '
        "…}}]}}) e confira esse arquivo",
    },
    "beside": {"en": "answer.json beside it", "pt": "o answer.json ao lado dele"},
    "naming_it": {"en": "an answer naming it", "pt": "uma resposta que o nomeie"},
    "naming": {
        "en": 'the answer must name its problem with exactly one of "exercise": {{"seed": …}}, '
        '"input": FILE or "example": NAME (found {n})',
        "pt": 'a resposta deve nomear o seu problema com exatamente um de "exercise": '
        '{{"seed": …}}, "input": ARQUIVO ou "example": NOME (encontrados: {n})',
    },
    "lang_inside": {
        "en": '"lang" goes inside "exercise": {{"seed": …, "lang": "pt"}}',
        "pt": '"lang" vai dentro de "exercise": {{"seed": …, "lang": "pt"}}',
    },
    "draw": {
        "en": '"draw" is the number attnref exercise wrote beside "exercise" (1 to {m}), got '
        "{shown}: copy it from the template, or leave it out",
        "pt": '"draw" é o número que attnref exercise escreveu ao lado de "exercise" (1 a {m}), '
        "veio {shown}: copie-o do modelo, ou tire-o",
    },
    "draw_alone": {
        "en": '"draw" goes with "exercise": an "input" or "example" answer has none',
        "pt": '"draw" vai com "exercise": uma resposta com "input" ou "example" não o tem',
    },
    "input_path": {
        "en": '"input" must be the path of an --input JSON file',
        "pt": '"input" deve ser o caminho de um arquivo JSON de --input',
    },
    "no_files": {
        "en": '"input": FILE names a file; this check reads no files',
        "pt": '"input": ARQUIVO nomeia um arquivo; esta conferência não lê arquivos',
    },
    "example": {
        "en": '"example" must be one of: {names}; got {shown}',
        "pt": '"example" deve ser um de: {names}; veio {shown}',
    },
    "head_list": {
        "en": "{where} must be a list of objects, one per head (head 1 first)",
        "pt": "{where} deve ser uma lista de objetos, um por cabeça (a cabeça 1 primeiro)",
    },
    "too_many_heads": {
        "en": "{where} has {k} entries but the problem has {what}",
        "pt": "{where} tem {k} entradas, mas o problema tem {what}",
    },
    "kv_heads_count": {"en": "g = {h} K/V heads", "pt": "g = {h} cabeças K/V"},
    "heads_count": {"en": "h = {h} heads", "pt": "h = {h} cabeças"},
    "head_object": {
        "en": "{where} must be an object with some of: {names}",
        "pt": "{where} deve ser um objeto com alguns de: {names}",
    },
    "unknown_step": {
        "en": "{where} has unknown step {shown}; steps are: {names}",
        "pt": "{where} tem o passo desconhecido {shown}; os passos são: {names}",
    },
    "json_object": {
        "en": 'the answer must be a JSON object: {{"exercise": {{…}}, "heads": […], …}}',
        "pt": 'a resposta deve ser um objeto JSON: {{"exercise": {{…}}, "heads": […], …}}',
    },
    "unknown_key": {
        "en": "unknown key {shown}; expected: {names}",
        "pt": "chave desconhecida {shown}; esperadas: {names}",
    },
    "kv_heads": {
        "en": 'unknown key "kv_heads"; expected: {names} (K/V heads are for the --variant gqa '
        "and rope exercises)",
        "pt": 'chave desconhecida "kv_heads"; esperadas: {names} (cabeças K/V são dos '
        "exercícios --variant gqa e rope)",
    },
    "another_problem": {
        "en": "the answer names another problem than the one it is checked against",
        "pt": "a resposta nomeia outro problema que não aquele contra o qual é conferida",
    },
    "grads_object": {
        "en": '"grads" must be an object: {{"W_O", "concat", "X", "heads": […]}}',
        "pt": '"grads" deve ser um objeto: {{"W_O", "concat", "X", "heads": […]}}',
    },
    "grads_key": {
        "en": '"grads" has unknown key {shown}',
        "pt": '"grads" tem a chave desconhecida {shown}',
    },
    "no_such_weight": {
        "en": "{where}: the problem has no {name}",
        "pt": "{where}: o problema não tem {name}",
    },
    "grad_output": {
        "en": "grad_output must be a finite {r}×{c} matrix (the shape of the output)",
        "pt": "grad_output deve ser uma matriz finita {r}×{c} (o formato da saída)",
    },
    "no_gradients": {
        "en": '"{key}": the --variant {name} exercise asks no gradients (its steps are the '
        "forward pass)",
        "pt": '"{key}": o exercício --variant {name} não pede gradientes (os seus passos são a '
        "passagem direta)",
    },
    "inf_hint": {
        "en": 'write "-inf" (a string, in quotes) for a masked entry (check reads {spellings})',
        "pt": 'escreva "-inf" (um texto, entre aspas) para uma entrada mascarada (o check lê '
        "{spellings})",
    },
    "no_step": {
        "en": "no step given yet: fill in the steps you computed (each null in the template), "
        'e.g. "heads": [{{"Q": [[…], …]}}], then run attnref check again',
        "pt": "nenhum passo dado ainda: preencha os passos que você calculou (cada null do "
        'modelo), por exemplo "heads": [{{"Q": [[…], …]}}], e rode attnref check de novo',
    },
    # "exercise": {…} (`attention_ref.exercises.exercise.options_from_json`)
    "ex_object": {
        "en": '"exercise" must be an object: {{"seed": …, "tokens": …, …}}',
        "pt": '"exercise" deve ser um objeto: {{"seed": …, "tokens": …, …}}',
    },
    "ex_unknown": {
        "en": '"exercise" has unknown key {shown}; expected {names}',
        "pt": '"exercise" tem a chave desconhecida {shown}; esperadas: {names}',
    },
    "ex_seed": {"en": '"exercise" needs "seed"', "pt": '"exercise" precisa de "seed"'},
    "ex_integer": {
        "en": '"exercise"."{key}" must be an integer, got {shown}',
        "pt": '"exercise"."{key}" deve ser um inteiro, veio {shown}',
    },
    "ex_bool": {
        "en": '"exercise"."{key}" must be true or false',
        "pt": '"exercise"."{key}" deve ser true ou false',
    },
    "ex_one_of": {
        "en": '"exercise"."{key}" must be one of {names}',
        "pt": '"exercise"."{key}" deve ser um de {names}',
    },
    "ex_option": {"en": '"exercise": {text}', "pt": '"exercise": {text}'},
}


def shown(v: object) -> str:
    """A value as the answer wrote it, cut to 40 characters."""
    if isinstance(v, str | int | float | bool) or v is None:
        return json.dumps(v, ensure_ascii=False)[:40]
    return type(v).__name__


def words(lang: str, message: str, /, **kw: object) -> str:
    """The ``message`` of `MESSAGES` in ``lang`` (English for a language it does not know)."""
    table = MESSAGES[message]
    return table.get(lang, table["en"]).format(**kw)


def error(lang: str, message: str, /, **kw: object) -> InputError:
    """The `InputError` of ``message`` in ``lang``, to raise."""
    return InputError(words(lang, message, **kw), lang)


__all__ = [
    "ANSWER_FILE",
    "LANGS",
    "MASKED_SPELLINGS",
    "MESSAGES",
    "STAND_IN",
    "STEP_WORDS",
    "answer_lang",
    "error",
    "label",
    "math_name",
    "pad",
    "shown",
    "spellings",
    "step_label",
    "step_name",
    "sup",
    "text_lang",
    "width",
    "words",
]
