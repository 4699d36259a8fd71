r"""A student's answer for ``attnref check``: the document, its problem, its numbers as written.

The answer names its problem (``"exercise": {"seed": …, options…}``, ``"input": FILE`` or
``"example": NAME``; ``"lang"`` beside the last two) and gives any subset of the steps, in the
JSON names of ``attnref explain --format json``: per head ``Q, K, V, scores, S, S_masked, A,
H`` (in ``"heads": [{…}, …]``, head 1 first), then ``concat``, ``output``, and gradients under
``"grads"`` (``{"W_O", "b_O", "concat", "X", "heads": [{"H", "A", "S_masked", "S", "Q", "K",
"V", "W_Q", "W_K", "W_V"}]}``, of :math:`L = \sum \text{output}` unless ``"grad_output"`` gives
:math:`G`). A masked entry is written ``"-inf"``; a step left ``null`` is not given yet (the
template that ``attnref exercise --out`` writes has every step ``null``). The spellings of a
masked entry are `attention_ref.exercises.answer_words.MASKED_SPELLINGS`, which the statement
prints; another spelling, ``null`` in a matrix, a number in quotes or with a decimal comma
(``"1,0"``), and a large number standing in for −∞ (``-1e9``) are refused with what to write.

An answer to a problem with features (``attnref exercise --variant gqa|window|rope``, or
several: ``gqa+rope``) has their steps in the names of its ``explain`` example: per query head
``"heads": [{"Q", "Q_rot", "K", "V", "scores", "S", "S_masked", "A", "H"}]``, per K/V head
``"kv_heads": [{"K", "V", "K_rot"}]``, the window's ``"M"``
(`attention_ref.exercises.feature_table.layout`); every problem carries its `Chain` (stages,
catalogue, layout), and one with a feature asks no gradients.

Each number keeps the decimals it was written with (`attention_ref.inputs.jsonfile.Literal`),
because the grade depends on them. Every problem with the document is one `InputError` line,
in the language of the answer's exercise (`attention_ref.exercises.answer_words.answer_lang`, or
the one asked), with each step named as the statement writes it and its JSON path beside
(``Q⁽¹⁾ (heads[0].Q)``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

import numpy as np

from attention_ref.exercises.answer_words import (
    ANSWER_FILE,
    LANGS,
    answer_lang,
    error,
    label,
    shown,
    spellings,
    step_label,
    text_lang,
    words,
)
from attention_ref.exercises.chain import Given, Key
from attention_ref.exercises.draw import DEFAULT_DECIMALS, MAX_DRAWS, WORDS, Chain, Problem
from attention_ref.exercises.entries import given_matrix, written_matrix
from attention_ref.exercises.features import Features
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.options import options_from_json
from attention_ref.exercises.problem import (
    FINAL_STEPS,
    GRAD_HEAD_STEPS,
    GRAD_KV_STEPS,
    GRAD_STEPS,
    HEAD_STEPS,
    Layout,
    ProblemTrace,
)
from attention_ref.inputs.errors import InputError
from attention_ref.inputs.jsonfile import loads, read_text

NAMING_KEYS: Final = ("exercise", "input", "example")
ANSWER_KEYS: Final = frozenset(
    {*NAMING_KEYS, "draw", "lang", "heads", *FINAL_STEPS, "grads", "grad_output"}
)
#: What to write instead of NaN or Infinity in an answer.
INF_HINT: Final = words("en", "inf_hint", spellings=spellings())
#: What check says when no step is filled in yet, per language of the answer.
NO_STEP: Final = {lang: words(lang, "no_step") for lang in LANGS}
#: What check says when it is given a problem instead of an answer.
NOT_AN_ANSWER: Final = words("en", "not_an_answer")


@dataclass(frozen=True)
class Answer:
    """A parsed answer: its problem, the steps given (keys of `attention_ref.exercises.chain`) and
    the upstream gradient ``G`` (``None``: all ones); ``large``: per step, the entries written
    at most `attention_ref.exercises.answer_words.STAND_IN` (row, column: as written), which the
    check refuses where they are not the entry's value (``-1e9`` for −∞)."""

    problem: Problem
    steps: dict[Key, Given]
    G: Array | None = None
    large: dict[Key, dict[tuple[int, int], str]] = field(default_factory=dict)


def _lang(obj: object, lang: str) -> str:
    if obj not in LANGS:
        raise error(lang, "lang", shown=shown(obj))
    return str(obj)


def drawn_lang(doc: object, fallback: str = "en") -> str:
    """The language of an exercise's own file (``exercise.json`` has no ``"lang"``), read from
    its tokens: the generator draws them from one language's words (`WORDS`); ``fallback``
    when they are not all one language's."""
    tokens = doc.get("tokens") if isinstance(doc, dict) else None
    if isinstance(tokens, list) and tokens:
        for lang, words in WORDS.items():
            if all(isinstance(t, str) and t in words for t in tokens):
                return lang
    return fallback


def resolve(
    doc: dict[str, object], base: Path | None, lang: str | None = None, fallback: str = "en"
) -> Problem:
    """The problem the answer names; ``base`` is the folder of ``"input"`` files (``None``:
    files may not be read); ``lang``: the language of the errors (``None``: the answer's, or
    the exercise file's own, `drawn_lang`, else ``fallback``: the student's)."""
    say = lang or answer_lang(doc, drawn_lang(doc, fallback))
    if "X" in doc or isinstance(doc.get("input"), dict):
        raise error(say, "not_an_answer")
    named = [k for k in NAMING_KEYS if k in doc]
    if len(named) != 1:
        raise error(say, "naming", n=len(named))
    kind = named[0]
    if kind == "exercise":
        if "lang" in doc:
            raise error(say, "lang_inside")
        return Problem.of_exercise(options_from_json(doc["exercise"], say), _draws(doc, say))
    if "draw" in doc:
        raise error(say, "draw_alone")
    lang = _lang(doc.get("lang", fallback), say)
    if kind == "input":
        path = doc["input"]
        if not isinstance(path, str) or not path:
            raise error(say, "input_path")
        if base is None:
            raise error(say, "no_files")
        from attention_ref.inputs.attention_input import load_input_file
        from attention_ref.worked.gradients import input_trace

        p = Path(path) if Path(path).is_absolute() else base / path
        trace = ProblemTrace.of_attention(input_trace(load_input_file(p, say)))
        return Problem(trace, {"input": path}, f"--input {path}", lang)
    from attention_ref.worked.gradients import TRACES

    name = doc["example"]
    if not isinstance(name, str) or name not in TRACES:
        raise error(say, "example", names=", ".join(TRACES), shown=shown(name))
    trace = ProblemTrace.of_attention(TRACES[name]()[0])
    return Problem(trace, {"example": name}, f"example {name}", lang)


def _draws(doc: dict[str, object], lang: str) -> int | None:
    """The draw an exercise's answer carries (``"draw"``, written by ``attnref exercise``: the
    problem is drawn again without the generator's search), ``None`` where it has none."""
    k = doc.get("draw")
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_DRAWS:
        raise error(lang, "draw", m=MAX_DRAWS, shown=shown(k))
    return k


def _naming(doc: dict[str, object], base: Path | None, lang: str) -> dict[str, object]:
    """The naming object of the problem the answer names, as `resolve` writes it; an
    exercise's from its options alone (nothing drawn)."""
    if [k for k in NAMING_KEYS if k in doc] == ["exercise"] and "lang" not in doc:
        return {"exercise": options_from_json(doc["exercise"], lang).to_json()}
    return resolve(doc, base, lang).naming


class _Reader:
    """Reads the steps of one answer: the errors' language, the problem's features (the steps'
    names) and the large entries found so far."""

    def __init__(self, lang: str, features: Features) -> None:
        self.lang, self.features = lang, features
        self.large: dict[Key, dict[tuple[int, int], str]] = {}

    def matrix(self, obj: object, key: Key) -> Given:
        g, large = written_matrix(obj, step_label(key, self.lang, self.features), self.lang)
        if large:
            self.large[key] = large
        return g

    def heads(
        self, obj: object, where: str, names: tuple[str, ...], h: int, prefix: str
    ) -> dict[Key, Given]:
        if obj is None:
            return {}
        lang = self.lang
        if not isinstance(obj, list):
            raise error(lang, "head_list", where=where)
        if len(obj) > h:
            what = words(lang, "kv_heads_count" if prefix == "kv." else "heads_count", h=h)
            raise error(lang, "too_many_heads", where=where, k=len(obj), what=what)
        out: dict[Key, Given] = {}
        for i, head in enumerate(obj):
            if head is None:
                continue
            if not isinstance(head, dict):
                raise error(lang, "head_object", where=f"{where}[{i}]", names=", ".join(names))
            unknown = sorted(set(head) - set(names))
            if unknown:
                raise error(
                    lang,
                    "unknown_step",
                    where=f"{where}[{i}]",
                    shown=shown(unknown[0]),
                    names=", ".join(names),
                )
            for name in names:
                if head.get(name) is not None:
                    out[(prefix + name, i)] = self.matrix(head[name], (prefix + name, i))
        return out


def parse_answer(
    doc: object,
    base: Path | None = None,
    problem: Problem | None = None,
    *,
    lang: str | None = None,
    fallback: str = "en",
) -> Answer:
    """Validate a decoded answer; ``problem``, when given, is what it answers (the document may
    then leave out its naming key, or must name the same problem). ``lang`` (``en``, ``pt``):
    the language of the errors and of the report; ``None``: the problem's, else the answer's,
    else ``fallback`` (the student's, where the answer names no language)."""
    say = lang or (
        problem.lang if problem is not None else answer_lang(doc, drawn_lang(doc, fallback))
    )
    if not isinstance(doc, dict):
        raise error(say, "json_object")
    if "X" in doc or isinstance(doc.get("input"), dict):
        raise error(say, "not_an_answer")
    unknown = sorted(set(doc) - ANSWER_KEYS - {"kv_heads", "M"})
    if unknown:
        raise error(
            say, "unknown_key", shown=shown(unknown[0]), names=", ".join(sorted(ANSWER_KEYS))
        )
    if problem is None:
        problem = resolve(doc, base, lang, say)
    elif any(k in doc for k in NAMING_KEYS) and _naming(doc, base, say) != problem.naming:
        raise error(say, "another_problem")
    else:  # the problem given is what is graded: a draw the answer carries is judged, not read
        _draws(doc, say)
    if lang is not None and lang != problem.lang:
        problem = replace(problem, lang=lang)
    say = problem.lang
    chain = problem.chain
    lay = chain.layout
    if "M" in doc and "M" not in lay.top:
        raise error(say, "unknown_key", shown=shown("M"), names=", ".join(sorted(ANSWER_KEYS)))
    if "kv_heads" in doc and not lay.kv_heads:
        raise error(say, "kv_heads", names=", ".join(sorted(ANSWER_KEYS)))
    if not lay.grads:
        for key in ("grads", "grad_output"):
            if key in doc:
                raise error(say, "no_gradients", key=key, name=chain.name)
    tr = problem.trace
    read = _Reader(say, chain.features)
    steps = read.heads(doc.get("heads"), "heads", lay.heads, tr.h, "")
    steps |= read.heads(doc.get("kv_heads"), "kv_heads", lay.kv_heads, tr.g, "kv.")
    for name in (*lay.top, *FINAL_STEPS):
        if doc.get(name) is not None:
            steps[(name, None)] = read.matrix(doc[name], (name, None))
    g = doc.get("grads")
    if g is not None:
        if not isinstance(g, dict):
            raise error(say, "grads_object")
        bad = sorted(set(g) - {*GRAD_STEPS, "heads", *("kv_heads",) * bool(lay.kv_heads)})
        if bad:
            raise error(say, "grads_key", shown=shown(bad[0]))
        steps |= read.heads(g.get("heads"), "grads.heads", GRAD_HEAD_STEPS, tr.h, "grad.")
        steps |= read.heads(g.get("kv_heads"), "grads.kv_heads", GRAD_KV_STEPS, tr.g, "grad.kv.")
        for name in GRAD_STEPS:
            if g.get(name) is not None:
                key = (f"grad.{name}", None)
                if name in ("W_O", "b_O") and getattr(tr, name) is None:
                    raise error(say, "no_such_weight", where=step_label(key, say), name=name)
                steps[key] = read.matrix(g[name], key)
    G = None
    if doc.get("grad_output") is not None:
        G = given_matrix(doc["grad_output"], "grad_output", say).value
        if tuple(G.shape) != tr.output_shape or not np.isfinite(G).all():
            raise error(say, "grad_output", r=tr.output_shape[0], c=tr.output_shape[1])
    if not steps:
        raise InputError(NO_STEP[say], say)
    return Answer(problem, steps, G, read.large)


def load_answer(path: str | Path, lang: str | None = None, fallback: str = "en") -> Answer:
    """Read and validate an answer file; every problem is an `InputError` of one line, in
    ``lang`` (``None``: the answer's language, ``fallback`` where the file cannot be read or
    names no language: the student's)."""
    p = Path(path)
    text = read_text(p, "answer file", lang=lang or fallback)
    doc = loads_answer(text, f"answer file {p}", lang, fallback)
    say = lang or answer_lang(doc, drawn_lang(doc, fallback))
    if isinstance(doc, dict) and ("X" in doc or isinstance(doc.get("input"), dict)):
        beside = p.parent / ANSWER_FILE
        where = words(say, "beside" if beside.exists() else "naming_it")
        raise error(say, "exercise_file", name=p.name, where=where)
    return parse_answer(doc, p.parent, lang=lang, fallback=fallback)


def loads_answer(
    text: str, what: str = "answer", lang: str | None = None, fallback: str = "en"
) -> object:
    """Answer text decoded as `load_answer` decodes a file (numbers kept as written); its
    errors in ``lang`` (``None``: the language the text names, else ``fallback``)."""
    say = lang or text_lang(text, fallback)
    return loads(
        text, what, exact=True, lang=say, hint=words(say, "inf_hint", spellings=spellings())
    )


# --- writing answers (templates, and answers built from computed steps) -----------------------


def template(
    naming: Mapping[str, object],
    layout: Layout,
    h: int,
    g: int,
    *,
    backward: bool = False,
    has_w_o: bool = True,
) -> dict[str, object]:
    """An answer to fill in: the problem's name, then every step the layout asks ``null`` (not
    given yet): the window's mask, the K/V heads (they come first in the computation), the
    query heads, the concat and the output; with ``backward``, the gradients the statement
    asks (∂W_O, ∂A⁽¹⁾, ∂S̃⁽¹⁾, ∂W_Q⁽¹⁾, ∂X)."""
    doc: dict[str, object] = dict(naming) | dict.fromkeys(layout.top)
    if layout.template_kv_heads:
        doc["kv_heads"] = [dict.fromkeys(layout.template_kv_heads) for _ in range(g)]
    doc["heads"] = [dict.fromkeys(layout.template_heads) for _ in range(h)]
    doc |= dict.fromkeys(FINAL_STEPS)
    if backward:
        grads: dict[str, object] = {"W_O": None} if has_w_o else {}
        doc["grads"] = grads | {"X": None, "heads": [{"A": None, "S_masked": None, "W_Q": None}]}
    return doc


def answer_from_steps(
    steps: Mapping[Key, Array],
    naming: Mapping[str, object],
    decimals: int = DEFAULT_DECIMALS,
    *,
    keys: tuple[str, ...] = HEAD_STEPS + FINAL_STEPS,
) -> dict[str, object]:
    """An answer document from computed steps, each rounded to ``decimals`` (masked: "-inf");
    ``keys``: the step names to include (gradients: ``"grad.W_Q"``…; K/V heads: ``"kv.K"``…,
    written under ``"kv_heads"``)."""

    def written(t: Array) -> list[list[object]]:
        t = t.reshape(1, -1) if t.ndim == 1 else t
        return [
            # + 0.0: a zero written as a student writes it, never "-0.000" (a product that is 0
            # exactly in the reference may come out as -1e-17 from another CPU kernel)
            [
                ("-inf" if x < 0 else "inf") if math.isinf(x) else round(x, decimals) + 0.0
                for x in row
            ]
            for row in t.tolist()
        ]

    doc: dict[str, object] = dict(naming)
    for (name, head), value in steps.items():
        if name not in keys:
            continue
        grad = name.startswith("grad.")
        where: dict[str, object] = doc.setdefault("grads", {}) if grad else doc  # type: ignore[assignment]
        short = name[5:] if grad else name
        kv = short.startswith("kv.")
        short = short[3:] if kv else short
        if head is None:
            where[short] = written(value)
        else:
            listed = "kv_heads" if kv else "heads"
            heads: list[dict[str, object]] = where.setdefault(listed, [])  # type: ignore[assignment]
            while len(heads) <= head:
                heads.append({})
            heads[head][short] = written(value)
    return doc


def answer_text(doc: object, decimals: int = DEFAULT_DECIMALS) -> str:
    """An answer document as JSON text with every float written to ``decimals`` places
    (``0.670``, not ``0.67``), as a student who works to 3 decimals writes it."""
    if isinstance(doc, float):
        return f"{doc:.{decimals}f}"
    if isinstance(doc, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(k)}: {answer_text(v, decimals)}" for k, v in doc.items())
            + "}"
        )
    if isinstance(doc, list):
        return "[" + ", ".join(answer_text(v, decimals) for v in doc) + "]"
    return json.dumps(doc, ensure_ascii=False)


def read_answer_text(text: str, lang: str | None = None) -> object:
    """Answer text decoded as `load_answer` decodes a file (numbers kept as written); its
    errors in ``lang`` (``None``: the language the text names, else English)."""
    return loads_answer(text, "answer", lang)


__all__ = [
    "ANSWER_KEYS",
    "FINAL_STEPS",
    "GRAD_HEAD_STEPS",
    "GRAD_STEPS",
    "HEAD_STEPS",
    "Answer",
    "Chain",
    "Problem",
    "answer_from_steps",
    "answer_text",
    "label",
    "load_answer",
    "loads_answer",
    "parse_answer",
    "read_answer_text",
    "resolve",
    "template",
]
