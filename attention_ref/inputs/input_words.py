"""The words of an ``--input`` file's errors and of a ``--grad-output`` file's, per language.

`attention_ref.inputs.attention_input` computes what is wrong with a user's numbers once (the
matrix, the row, the shapes) and says it through `WORDS`, in the language of the command
(``attnref explain --lang pt``: a Portuguese student reads Portuguese errors); the JSON file
itself is read by `attention_ref.inputs.jsonfile`, whose table says its own errors. The names
of the matrices, the JSON keys and the symbols (``X``, ``W_Q``, ``d_model``, ``h·d_v``,
``"heads"``) are the same in every language: they are what the file writes.

One table per language, the same keys and the same fields in each (a test holds them equal).
Nothing here imports torch.
"""

from __future__ import annotations

from typing import Final

from attention_ref.inputs.errors import InputError

#: Every message, per language (`error` formats one and returns its `InputError`; the ``hint_``
#: keys are the parenthesis a shape's message ends with, said by `words`).
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        # a matrix or a bias (`attention_ref.inputs.attention_input.matrix`, ``vector``)
        "rows": "{name} must be a list of rows (a list of lists of numbers)",
        "empty": "{name} is empty: it needs at least one row",
        "too_many_rows": "{name} has {rows} rows; at most {limit} are supported",
        "empty_row": "{name} row 1 is empty: it needs at least one column",
        "too_many_cols": "{name} has {cols} columns; at most {limit} are supported",
        "ragged": "{name} is ragged: row {i} has {k} entries but row 1 has {width}",
        "not_number": "{where} is {shown}, not a number",
        "not_finite": "{where} is {value}: only finite numbers are allowed",
        "vector": "{name} must be a list of {length} numbers ({hint})",
        "vector_length": "{name} has {k} entries, expected {length} ({hint})",
        "shape": "{name} has shape {dims}, expected {want} ({hint})",
        # the document (`parse_input`)
        "input_object": '"{key}" must be the JSON object of an --input file (with "X" and '
        '"heads"), got {kind}',
        "not_object": 'the input must be a JSON object with at least "X" and "heads"',
        "variant": "this is the problem of an attnref exercise --variant {variant}, not an "
        "--input file (which has no variants): its key is attnref exercise --variant … --key, "
        "and attnref check grades the answer.json written beside it",
        "unknown_key": "unknown key {key!r}; expected keys: {keys}",
        "missing_X": 'missing "X": the n×d_model matrix of token embeddings (rows = tokens)',
        "b_O_alone": "b_O is given but W_O is not: b_O is the bias of the output projection W_O "
        "(without W_O the output is the concat)",
        "causal": '"causal" must be true or false, got {shown}',
        "tokens_list": '"tokens" must be a list of strings, one per row of X',
        "tokens_count": '"tokens" has {k} names but X has {n} rows',
        # the per-head form
        "missing_heads": 'missing "heads": a list of {{"W_Q", "W_K", "W_V"}} objects, one per head',
        "heads_list": '"heads" must be a non-empty list of {{"W_Q", "W_K", "W_V"}} objects',
        "too_many_heads": '"heads" has {k} entries; at most {limit} are supported',
        "head_object": "{where} must be an object with W_Q, W_K and W_V",
        "head_unknown_key": "{where} has unknown key {key!r}; expected {keys}",
        "head_missing": "{where} is missing {role} (d_model×d, d_model = {d_model})",
        "bias_some_heads": "heads[{i}] has no {role} but heads[{j}] has one: give {role} to "
        "every head or to none",
        # the fused form
        "h_type": '"h" (the number of heads) must be a positive integer, got {shown}',
        "h_range": '"h" must be between 1 and {limit}, got {h}',
        "fused_missing": "missing {role}: the fused d_model×(h·d) matrix",
        "not_divisible": "{role} has {width} columns, which cannot be split into h={h} heads "
        "({width} is not divisible by {h})",
        # what a shape or a bias was expected to be
        "hint_out": "h·d_v × d_out with h={h}, d_v={d_v}",
        "hint_b_O": "d_out = the number of columns of W_O",
        "hint_width": "d_model × {d}, d_model = width of X",
        "hint_head_bias": "{sym} = {width}, a bias per head",
        "hint_fused_bias": "one entry per column of {role}",
        # --grad-output, against the output (`attention_ref.worked.backward_sections`)
        "grad_shape": "--grad-output has shape {r}×{c}, expected {n}×{d_out} (n × d_out, the "
        "shape of the output)",
    },
    "pt": {
        "rows": "{name} deve ser uma lista de linhas (uma lista de listas de números)",
        "empty": "{name} não tem nenhuma linha: precisa de pelo menos uma",
        "too_many_rows": "{name} tem {rows} linhas; no máximo {limit} são aceitas",
        "empty_row": "{name}: a linha 1 está vazia; é preciso pelo menos uma coluna",
        "too_many_cols": "{name} tem {cols} colunas; no máximo {limit} são aceitas",
        "ragged": "{name} tem linhas de tamanhos diferentes: a linha {i} tem {k} entradas, mas a "
        "linha 1 tem {width}",
        "not_number": "{where} é {shown}, não um número",
        "not_finite": "{where} é {value}: só números finitos são aceitos",
        "vector": "{name} deve ser uma lista de {length} números ({hint})",
        "vector_length": "{name} tem {k} entradas, esperadas {length} ({hint})",
        "shape": "{name} tem formato {dims}, esperado {want} ({hint})",
        "input_object": '"{key}" deve ser o objeto JSON de um arquivo de --input (com "X" e '
        '"heads"), veio {kind}',
        "not_object": 'a entrada deve ser um objeto JSON com pelo menos "X" e "heads"',
        "variant": "este é o problema de um attnref exercise --variant {variant}, não um arquivo "
        "de --input (que não tem variantes): o seu gabarito é attnref exercise --variant … "
        "--key, e attnref check corrige o answer.json escrito ao lado dele",
        "unknown_key": "chave desconhecida {key!r}; chaves esperadas: {keys}",
        "missing_X": 'falta "X": a matriz n×d_model dos embeddings dos tokens (linhas = tokens)',
        "b_O_alone": "b_O foi dado, mas W_O não: b_O é o viés da projeção de saída W_O (sem W_O "
        "a saída é a concatenação)",
        "causal": '"causal" deve ser true ou false, veio {shown}',
        "tokens_list": '"tokens" deve ser uma lista de textos, um por linha de X',
        "tokens_count": '"tokens" tem {k} nomes, mas X tem {n} linhas',
        "missing_heads": 'falta "heads": uma lista de objetos {{"W_Q", "W_K", "W_V"}}, um por '
        "cabeça",
        "heads_list": '"heads" deve ser uma lista não vazia de objetos {{"W_Q", "W_K", "W_V"}}',
        "too_many_heads": '"heads" tem {k} entradas; no máximo {limit} são aceitas',
        "head_object": "{where} deve ser um objeto com W_Q, W_K e W_V",
        "head_unknown_key": "{where} tem a chave desconhecida {key!r}; esperadas: {keys}",
        "head_missing": "falta {role} em {where} (d_model×d, d_model = {d_model})",
        "bias_some_heads": "heads[{i}] não tem {role}, mas heads[{j}] tem: dê {role} a todas "
        "as cabeças ou a nenhuma",
        "h_type": '"h" (o número de cabeças) deve ser um inteiro positivo, veio {shown}',
        "h_range": '"h" deve estar entre 1 e {limit}, veio {h}',
        "fused_missing": "falta {role}: a matriz fundida d_model×(h·d)",
        "not_divisible": "{role} tem {width} colunas, que não podem ser divididas em h={h} "
        "cabeças ({width} não é divisível por {h})",
        "hint_out": "h·d_v × d_out com h={h}, d_v={d_v}",
        "hint_b_O": "d_out = o número de colunas de W_O",
        "hint_width": "d_model × {d}, d_model = largura de X",
        "hint_head_bias": "{sym} = {width}, um viés por cabeça",
        "hint_fused_bias": "uma entrada por coluna de {role}",
        "grad_shape": "--grad-output tem formato {r}×{c}, esperado {n}×{d_out} (n × d_out, o "
        "formato da saída)",
    },
}


def known(lang: str) -> str:
    """``lang`` if `WORDS` has its table, else English (the first language)."""
    return lang if lang in WORDS else next(iter(WORDS))


def words(lang: str, key: str, /, **kw: object) -> str:
    """The message ``key`` of `WORDS` in ``lang`` (English for a language it does not know),
    its fields filled in."""
    return WORDS[known(lang)][key].format(**kw)


def error(lang: str, key: str, /, **kw: object) -> InputError:
    """The `InputError` of ``key`` in ``lang``, to raise; it carries its language (the CLI's
    prefix, ``attnref: erro:``, follows it)."""
    return InputError(words(lang, key, **kw), known(lang))


__all__ = ["WORDS", "error", "known", "words"]
