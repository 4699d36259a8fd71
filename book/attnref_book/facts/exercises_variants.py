"""The facts of the exercises page's today's attention (``docs/exercises.md``,
``docs/exercises.pt.md``): the table of features, RoPE's statement table and a GQA answer, every
variant's mistakes diagnosed as themselves, and a GQA answer with the K/V heads in turn.

The page's other blocks are in `attnref_book.facts.exercises` and
`attnref_book.facts.exercises_check`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from attention_ref.exercises.answer import (
    Problem,
    answer_from_steps,
    answer_text,
    read_answer_text,
)
from attention_ref.exercises.catalogue import mistakes_for
from attention_ref.exercises.chain import Key, computed_steps
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise
from attention_ref.exercises.feature_table import TABLE
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.verdicts import Report
from attention_ref.render import Explanation, to_book
from attnref_book.pages import check, table

WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        # the table of features
        "feature": "feature",
        "module": "module",
        "option": "option",
        "adds": "steps it adds",
        "mistakes": "its mistakes",
        "question": "its question",
        "no_step": "none",
        "no_question": "none",
        # every variant mistake diagnosed as itself
        "not_shown": "(the output does not show it)",
        "itself": "itself, and no other",
        "same_output": " (the same output)",
        "exercise": "exercise",
        "built_in": "mistake built in",
        "whole": "whole answer: diagnosed as",
        "output_only": "output only: diagnosed as",
        "every": "every variant mistake of the forward diagnosed as itself",
        "every_detail": "{n} mistakes, each named alone from the whole answer, and from the "
        "output where the output shows it: alone, or with those whose output is the same; the "
        "variants' mistakes of the backward ({names}) are checked by "
        "`tests/exercises/test_grouped_backward.py`, not here.",
        "right": "right answers",
        "right_detail": "the key to 3 decimals is right on all {n} exercises (10 seeds of each "
        "variant), every step given.",
        # the K/V heads in turn
        "diagnosis": "the diagnosis",
        "diagnosis_detail": "the K/V heads right, the groups read in the wrong order: named, and "
        "no other.",
    },
    "pt": {
        "feature": "recurso",
        "module": "módulo",
        "option": "opção",
        "adds": "passos que acrescenta",
        "mistakes": "os seus erros",
        "question": "a sua questão",
        "no_step": "nenhum",
        "no_question": "nenhuma",
        "not_shown": "(a saída não o mostra)",
        "itself": "ele mesmo, e nenhum outro",
        "same_output": " (a mesma saída)",
        "exercise": "exercício",
        "built_in": "erro embutido",
        "whole": "resposta inteira: diagnóstico",
        "output_only": "só a saída: diagnóstico",
        "every": "cada erro das variantes no cálculo direto, nomeado sozinho",
        "every_detail": "{n} erros, cada um nomeado sozinho a partir da resposta inteira, e a "
        "partir da saída, onde a saída o mostra: sozinho, ou com os que dão a mesma saída; os "
        "erros das variantes no cálculo dos gradientes ({names}) são conferidos por "
        "`tests/exercises/test_grouped_backward.py`, não aqui.",
        "right": "respostas certas",
        "right_detail": "o gabarito com 3 casas está certo nos {n} exercícios (10 sementes de "
        "cada variante), com todos os passos.",
        "diagnosis": "o diagnóstico",
        "diagnosis_detail": "as cabeças K/V certas, os grupos lidos na ordem errada: nomeado, e "
        "nenhum outro.",
    },
}

#: every step an answer of a variant may give
ALL: Final = (
    "Q",
    "Q_rot",
    "K",
    "V",
    "kv.K",
    "kv.V",
    "kv.K_rot",
    "scores",
    "S",
    "B",
    "S_masked",
    "A",
    "H",
    "concat",
    "output",
)
#: the variants' own mistakes of the forward (the gradient not turned back through RoPE: the
#: backward's)
OWN: Final = frozenset(k.name for f in TABLE.values() for k in f.kinds if not k.backward_only)
#: the variants' shapes of the mistakes table (seed 3)
SHAPES: Final = (
    ("gqa", {"heads": 4}),
    ("window", {"tokens": 4}),
    ("rope", {"heads": 1}),
    ("alibi", {"tokens": 4}),
)
#: the variants' shapes of the right answers (10 seeds each)
RIGHT_SHAPES: Final = (
    ("gqa", {"heads": 4}),
    ("window", {"tokens": 4}),
    ("rope", {"heads": 1}),
    ("alibi", {}),
)


def feature_table(lang: str) -> str:
    """The one table of features (`attention_ref.exercises.feature_table.TABLE`): each
    feature's module, option, the steps it adds, how many mistakes it has, its question."""
    w = WORDS[lang]
    rows = [
        [
            f"`{name}`",
            f"`feature_{name}.py`",
            f"`--{f.option.replace('_', '-')}`" if f.option else "",
            ", ".join(f"`{s}`" for s in (*f.query_steps, *f.kv_steps, *f.top_steps))
            or w["no_step"],
            len(f.kinds),
            ", ".join(f"`{n}`" for _, n in f.questions) or w["no_question"],
        ]
        for name, f in TABLE.items()
    ]
    header = [w["feature"], w["module"], w["option"], w["adds"], w["mistakes"], w["question"]]
    return table(header, rows)


def rope_table_and_gqa_answer(lang: str) -> str:
    r"""The rotation's table of ``attnref exercise --variant rope --heads 1 --seed 0`` in
    ``lang`` (:math:`\theta_p`, the angles :math:`m\theta_p`, their cosines and sines), and
    the beginning of ``answer.json`` of ``--variant gqa --seed 3 --d-model 4``, the K/V heads'
    steps named apart."""
    ex = make_exercise(ExerciseOptions(seed=0, variant="rope", heads=1, lang=lang))
    rope = ex.statement.sections[1]
    one = Explanation(
        title=rope.title, source=ex.statement.source, sections=[rope], data={}, lang=lang
    )
    gqa = make_exercise(ExerciseOptions(seed=3, variant="gqa", heads=4, lang=lang))
    answer = "```json\n" + json.dumps(gqa.answer)[:330] + " …\n```\n"
    return "\n".join([to_book(one, 3, heading=4), answer])


def checked(prob: Problem, steps: Mapping[Key, Array], keys: tuple[str, ...] = ALL) -> Report:
    """The report on an answer to 3 decimals giving ``keys`` of ``steps``."""
    text = answer_text(answer_from_steps(steps, prob.naming, keys=keys), 3)
    return check_document(read_answer_text(text))


def variant_mistakes(lang: str) -> str:
    """Each variant's own mistakes (seed 3 of gqa, window, rope and alibi), built into an
    answer to 3 decimals, and what the checker names from the whole answer and from the output
    alone (alone, or with the mistakes whose output is the same to :math:`10^{-12}`); then the
    key of 10 seeds of each variant, every step given, graded right."""
    w = WORDS[lang]
    rows, ok, seen = [], True, set()
    for variant, kw in SHAPES:
        opt = ExerciseOptions(seed=3, variant=variant, lang=lang, **kw)
        prob = Problem.of_exercise(opt)
        d = prob.data()
        exact = computed_steps(d, ())
        found_on = mistakes_for(d, d.forward, 3, prob.chain.catalogue)
        outputs = {m.name: computed_steps(d, [m])[("output", None)] for m in found_on}
        for m in found_on:
            if m.name not in OWN or m.name in seen:
                continue
            seen.add(m.name)
            steps = computed_steps(d, [m])
            # the mistakes whose output is this one's to 1e-12: the output alone cannot tell them
            same = {n for n, out in outputs.items() if abs(out - outputs[m.name]).max() < 1e-12}
            cells = []
            for keys in (ALL, ("output",)):
                gap = abs(steps[("output", None)] - exact[("output", None)]).max()
                if keys == ("output",) and gap < 1e-3:
                    cells.append(w["not_shown"])
                    continue
                found = checked(prob, steps, keys).diagnosis_names
                alone = found == [(m.name,)]
                ok &= alone or (keys == ("output",) and {n for (n,) in found} == same)
                cells.append(
                    w["itself"]
                    if alone
                    else ", ".join("+".join(n) for n in found) + w["same_output"]
                )
            rows.append([f"`{opt.flags.strip()}`", m.words[lang].replace("|", "\\|"), *cells])
    header = [w["exercise"], w["built_in"], w["whole"], w["output_only"]]
    out = [table(header, rows), ""]
    backward = [k.name for f in TABLE.values() for k in f.kinds if k.backward_only]
    detail = w["every_detail"].format(n=len(rows), names=", ".join(f"`{n}`" for n in backward))
    out += [check(w["every"], ok and seen == OWN, detail, lang), ""]
    right = tried = 0
    for variant, kw in RIGHT_SHAPES:
        for seed in range(10):
            prob = Problem.of_exercise(ExerciseOptions(seed=seed, variant=variant, lang=lang, **kw))
            tried += 1
            right += checked(prob, computed_steps(prob.data(), ())).all_right
    detail = w["right_detail"].format(n=tried)
    out.append(check(w["right"], right == tried, detail, lang))
    return "\n".join(out)


def heads_in_turn(lang: str) -> str:
    """A student repeats the K/V heads in turn (``K.repeat``'s 1, 2, 1, 2; seed 3 of
    ``--variant gqa --heads 4``): the report ``attnref check`` prints, and a check that the
    mistake ``gqa_interleaved`` is named, and no other."""
    w = WORDS[lang]
    prob = Problem.of_exercise(ExerciseOptions(seed=3, variant="gqa", heads=4, lang=lang))
    d = prob.data()
    m = next(
        m
        for m in mistakes_for(d, d.forward, 3, prob.chain.catalogue)
        if m.name == "gqa_interleaved"
    )
    doc = answer_from_steps(
        computed_steps(d, [m]), prob.naming, keys=("kv.K", "kv.V", "scores", "A", "output")
    )
    report = check_document(read_answer_text(answer_text(doc, 3)))
    out = ["```text\n" + "\n".join(report_lines(report)) + "\n```\n"]
    ok = report.diagnosis_names == [("gqa_interleaved",)]
    out.append(check(w["diagnosis"], ok, w["diagnosis_detail"], lang))
    return "\n".join(out)
