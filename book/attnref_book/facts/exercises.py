"""The facts of the exercises page (``docs/exercises.md``, ``docs/exercises.pt.md``): the
checker's listings, a generated exercise with its key and its backward pass, the draws that hide
no mistake, and the answer to fill in.

The page's later sections are in `attnref_book.facts.exercises_check` (grading and diagnoses)
and `attnref_book.facts.exercises_variants` (today's attention); the helpers here
(`listing`, `note`) serve all three.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from collections.abc import Callable
from types import ModuleType
from typing import Final

import torch

from attention_ref.exercises import grader, reproduce
from attention_ref.exercises.answer import parse_answer
from attention_ref.exercises.answer_words import words
from attention_ref.exercises.catalogue import catalogue_of, hidden
from attention_ref.exercises.chain import Data, Iv, carried
from attention_ref.exercises.draw import asked_keys, draw, draw_at, trace_of
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.features import PRESETS, default_shape
from attention_ref.exercises.intervals import box, right_at
from attention_ref.exercises.reproduce import right_scale
from attention_ref.inputs.attention_input import InputError, parse_input
from attention_ref.render import Explanation, to_book
from attention_ref.worked.gradients import explain_input_backward, input_trace
from attention_ref.worked.your_input import explain_input
from attnref_book.pages import check, prose, table

# --- helpers of the page's three modules ------------------------------------------------------


def definition(module: ModuleType, name: str) -> str:
    """The source of the top-level function or class ``name`` of ``module``, its decorators
    included, as `inspect.getsource` gives it: read from the module's source text, so that a
    page lists a module's private helper (``_verdict``) without importing it."""
    text = inspect.getsource(module)
    for node in ast.parse(text).body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return "\n".join(text.splitlines()[first - 1 : node.end_lineno])
    raise LookupError(f"{module.__name__} defines no {name!r}")


def listing(*items: Callable[..., object] | tuple[ModuleType, str]) -> str:
    """A fenced Python listing, as `attnref_book.pages.source` writes it, of functions given
    as objects or as ``(module, name)`` (`definition`: a private name, read, not imported)."""
    parts = [
        definition(*item) if isinstance(item, tuple) else inspect.getsource(item) for item in items
    ]
    code = [textwrap.dedent(p).rstrip() for p in parts]
    return "```python\n" + "\n\n\n".join(code) + "\n```\n"


def note(title: str, text: str) -> str:
    """``text`` folded in a collapsed admonition (``??? note "title"``), each line indented."""
    body = "\n".join("    " + line if line else "" for line in text.splitlines())
    return f'??? note "{title}"\n\n' + body


# --- the words of this module's blocks --------------------------------------------------------

WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "integers": "integer projections",
        "integers_detail": "Q, K, V and Q Kᵀ of both heads are integers.",
        "key": "The solution key (attnref exercise --seed 0 --backward --key)",
        "backward": "Every step of the backward pass (L = Σ output)",
        "exercise": "exercise",
        "again": "seeds of 30 drawn again",
        "named": "named in the statement",
        "none": "none",
        "no_hidden": "no drawn problem hides a mistake",
        "no_hidden_detail": "every mistake of each catalogue changes an asked step on every "
        "problem drawn; the first draw of seed 0's `--variant gqa --d-model 4` stream "
        "(h = 4, d_k = 1), both K/V heads equal, was drawn again.",
        "error": "attnref: error: {e}",
        "one_line": "one line each",
        "one_line_detail": "neither the template nor the exercise is graded as an answer.",
    },
    "pt": {
        "integers": "projeções inteiras",
        "integers_detail": "Q, K, V e Q Kᵀ das duas cabeças são inteiros.",
        "key": "O gabarito (attnref exercise --seed 0 --lang pt --backward --key)",
        "backward": "Cada passo da retropropagação (L = Σ saída)",
        "exercise": "exercício",
        "again": "sementes de 30 sorteadas de novo",
        "named": "nomeados no enunciado",
        "none": "nenhum",
        "no_hidden": "nenhum problema sorteado esconde um erro",
        "no_hidden_detail": "cada erro de cada catálogo muda um passo pedido em todo problema "
        "sorteado; o primeiro sorteio da sequência `--variant gqa --d-model 4` da semente 0 "
        "(h = 4, d_k = 1), com as duas cabeças K/V iguais, foi sorteado de novo.",
        "error": "attnref: erro: {e}",
        "one_line": "uma linha cada",
        "one_line_detail": "nem o modelo de resposta nem o exercício são corrigidos como uma "
        "resposta.",
    },
}


# --- the blocks -------------------------------------------------------------------------------


def grading_source(lang: str) -> str:
    r"""The definition of right (`right_at`), what a written entry carries on (`box`), the
    grade of one step (the grader's ``_verdict``), the interval softmax
    :math:`A_{ij} \in [e^{l_j} / (e^{l_j} + \sum_{k \ne j} e^{h_k}),\ e^{h_j} / (e^{h_j} +
    \sum_{k \ne j} e^{l_k})]` and the rounding a student carries,
    :math:`[\min(l, \lfloor l \rceil), \max(h, \lfloor h \rceil)]`: their installed source
    (the same in every language)."""
    return listing(right_at, box, (grader, "_verdict"), Iv.softmax_rows, carried)


def catalogue_source(lang: str) -> str:
    r"""The catalogue's data at work: the :math:`\sqrt{d_k}` the words of no scaling quote
    (`right_scale`) and how the slip takes the one entry the student wrote differently (the
    reproducer's ``_slip_adjust``): their installed source."""
    return listing(right_scale, (reproduce, "_slip_adjust"))


def generated_exercise(lang: str) -> str:
    r"""``attnref exercise --seed 0 --backward`` in ``lang``: the statement, a check that
    :math:`Q`, :math:`K`, :math:`V` and :math:`Q K^\top` are integers, and the solution key
    folded in a note."""
    w = WORDS[lang]
    ex = make_exercise(ExerciseOptions(seed=0, lang=lang, backward=True))
    out = [to_book(ex.statement, 3, heading=4)]
    tr = input_trace(parse_input(ex.problem))
    ints = all(torch.equal(t, t.round()) for t in (tr.Q, tr.K, tr.V, tr.QKt))
    out.append(check(w["integers"], ints, prose(w["integers_detail"], lang), lang))
    out.append("")
    out.append(note(w["key"], to_book(ex.key, 3, heading=4)))
    return "\n".join(out)


def backward_steps(lang: str) -> str:
    r"""Every step of the backward pass of seed 0's exercise (:math:`L = \sum` output), as
    ``attnref explain --input exercise.json --backward`` writes it in ``lang`` (its forward's
    steps left out: the key answers them), folded in a note."""
    inp = parse_input(make_exercise(ExerciseOptions(seed=0, backward=True)).problem)
    full = explain_input_backward(inp, lang=lang)
    n = len(explain_input(inp, lang).sections)  # the forward's steps: the key answers them
    back = Explanation(
        title=full.title,
        source=full.source,
        sections=full.sections[n:],
        data=full.data,
        precision=full.precision,
        lang=full.lang,
    )
    return note(WORDS[lang]["backward"], to_book(back, 3, heading=4))


def no_hidden_mistake(lang: str) -> str:
    """On the first 30 seeds of every preset's default shape (`PRESETS`: each ``--variant``
    alone, and the homework's) and two combinations: how many
    seeds were drawn again, the mistakes the statements name, and a check that no drawn problem
    hides a mistake of its catalogue (the first draw of seed 0's gqa stream, both K/V heads
    equal, drawn again)."""
    w = WORDS[lang]
    # each preset's default shape (and two combinations), as attnref exercise --variant draws it
    shapes = []
    for name in (*PRESETS, "gqa+rope", "gqa+window"):
        h, d = default_shape(name)
        label = (
            "attnref exercise" if name == "mha" else f"--variant {name} (h = {h}, d_k = {d // h})"
        )
        shapes.append((label, {"variant": name, "heads": h, "d_model": d}))
    rows, ok = [], True
    for label, kw in shapes:
        again, named = 0, set()
        for seed in range(30):
            opt = ExerciseOptions(seed=seed, lang=lang, **kw)
            drawn = draw(opt)
            again += drawn.draws > 1
            named |= {m.words[lang] for m in drawn.hidden}
            d = Data.of(trace_of(opt, drawn.problem))
            keys = asked_keys(opt, True)
            shown, _ = hidden(d, d.forward, 3, keys, catalogue_of(opt.features))
            ok &= not shown
        rows.append([f"`{label}`", again, "; ".join(sorted(named)) or w["none"]])
    out = [table([w["exercise"], w["again"], w["named"]], rows), ""]
    gqa = ExerciseOptions(seed=0, variant="gqa", heads=4, d_model=4, lang=lang)
    first = trace_of(gqa, draw_at(gqa, 1)).reference()
    same = bool((first.K[0] == first.K[1]).all() and (first.V[0] == first.V[1]).all())
    same &= draw(gqa).draws > 1  # and it was drawn again
    out.append(check(w["no_hidden"], ok and same, w["no_hidden_detail"], lang))
    return "\n".join(out)


def answer_template(lang: str) -> str:
    """The beginning of seed 0's ``answer.json`` in ``lang`` (every step ``null``), and what
    ``attnref check`` says, in one line each, of it unfilled and of the exercise file itself."""
    w = WORDS[lang]
    ex = make_exercise(ExerciseOptions(seed=0, lang=lang))
    out = ["```json\n" + json.dumps(ex.answer, ensure_ascii=False)[:230] + " …\n```\n"]
    messages = []
    for doc in (ex.answer, ex.problem):
        try:
            parse_answer(doc)
        except InputError as e:
            messages.append(w["error"].format(e=e))
    out.append("```text\n" + "\n".join(messages) + "\n```\n")
    refused = words(lang, "not_an_answer")  # the exercise itself: the refusal in its language
    ok = len(messages) == 2 and messages[1].endswith(refused)
    out.append(check(w["one_line"], ok, w["one_line_detail"], lang))
    return "\n".join(out)
