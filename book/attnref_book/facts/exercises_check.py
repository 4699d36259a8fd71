"""The facts of the exercises page's checker (``docs/exercises.md``, ``docs/exercises.pt.md``):
grading by the decimals the exercise asks, a report and its diagnosis, every mistake of the
homework's catalogue diagnosed as itself, and two mistakes at once beside a slip.

The page's other blocks are in `attnref_book.facts.exercises` (its helpers too) and
`attnref_book.facts.exercises_variants`.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import TYPE_CHECKING, Final

import numpy as np
import torch

from attention_ref.exercises.answer import (
    Problem,
    answer_from_steps,
    answer_text,
    parse_answer,
    read_answer_text,
)
from attention_ref.exercises.catalogue import mistakes_for
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.exercise import WORDS as TOKENS
from attention_ref.exercises.exercise import ExerciseOptions
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.verdicts import Report
from attention_ref.render import DECIMAL_MARK
from attnref_book.pages import check, prose, table

if TYPE_CHECKING:
    from attention_ref.reference import AttentionTrace

WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        # grading by the decimals asked
        "right": "right",
        "few_decimals": "give 3 decimals",
        "wrong": "wrong",
        "row_sep": ", ",
        "one_hot": "the one-hot A⁽¹⁾ (row 2 is {row2})",
        "integers": "S⁽¹⁾ as integers ({whole} for {s00:.3f})",
        "two": "A⁽¹⁾ to 2 decimals",
        "three": "A⁽¹⁾ to 3 decimals",
        "zeros": "A⁽¹⁾ to 3 decimals, zeros dropped (0.67)",
        "answer": "answer",
        "verdict": "verdict",
        "exit": "exit code",
        "refused": "refused and accepted",
        "refused_detail": "the one-hot A, the integer S and 2 decimals are not right; 3 "
        "decimals are, trailing zeros dropped or not.",
        "exact": "exact",
        "student": "student",
        "student output": "student output",
        "2 decimals": "2 decimals",
        "answers": "answers (S, A, H, output)",
        "seeds": "seeds",
        "passed": "right",
        "precision": "the precision asked",
        "precision_detail": "every right answer passes; none of the {n} answers to 2 decimals "
        "that differ from 3 does; the rounding carried reached {carried:.4f} on an entry, more "
        "than the ±0.0005 of one rounding.",
        # checking an answer
        "prints": "`attnref check answer.json` prints (exit code 1):\n",
        "head": "Checking your answer",
        "diagnosis": "the diagnosis, in English",
        "diagnosis_detail": "exactly one mistake reproduces the answer: no scaling; the report "
        "uses the statement's tokens ({tokens}) and decimal points.",
        "data": "The report is data too (`Report.to_json()`, for a gradebook):\n",
        # every mistake diagnosed as itself
        "no_output": "(no output: −∞ · 0 is not a number)",
        "heads_given": "(told apart only where the heads' steps are given)",
        "not_shown": "(the output does not show it)",
        "itself": "itself, and no other",
        "none": "none",
        "no_mask": ", no mask",
        "problem": "problem",
        "built_in": "mistake built in",
        "whole": "whole answer: diagnosed as",
        "output_only": "output only: diagnosed as",
        "every": "every mistake diagnosed as itself",
        "every_detail": "{n} rows (a mistake on a problem), each named alone from the whole "
        "answer and from the output where the output shows it.",
        # two mistakes and a slip
        "both": "both named",
        "both_detail": "no mask and no W_O together from the output alone; the slip by its row "
        "and column.",
    },
    "pt": {
        "right": "certo",
        "few_decimals": "dê 3 casas decimais",
        "wrong": "errado",
        "row_sep": "; ",
        "one_hot": "a A⁽¹⁾ one-hot (a linha 2 é {row2})",
        "integers": "S⁽¹⁾ em inteiros ({whole} para {s00:.3f})",
        "two": "A⁽¹⁾ com 2 casas",
        "three": "A⁽¹⁾ com 3 casas",
        "zeros": "A⁽¹⁾ com 3 casas, sem os zeros finais (0.67)",
        "answer": "resposta",
        "verdict": "veredito",
        "exit": "código de saída",
        "refused": "recusadas e aceitas",
        "refused_detail": "a A one-hot, a S inteira e 2 casas não estão certas; 3 casas estão, "
        "com ou sem os zeros finais.",
        "exact": "exatas",
        "student": "do aluno",
        "student output": "do aluno, só a saída",
        "2 decimals": "2 casas",
        "answers": "respostas (S, A, H, saída)",
        "seeds": "sementes",
        "passed": "certas",
        "precision": "as casas pedidas",
        "precision_detail": "toda resposta certa passa; nenhuma das {n} respostas com 2 casas "
        "que diferem das de 3 passa; o arredondamento carregado chegou a {carried:.4f} numa "
        "entrada, mais que os ±0.0005 de um arredondamento.",
        "prints": "`attnref check answer.json` responde em português, com os tokens do "
        "enunciado (código de saída 1):\n",
        "head": "Conferindo a sua resposta",
        "diagnosis": "o diagnóstico, em português",
        "diagnosis_detail": "exatamente um erro reproduz a resposta: sem escala; o relatório "
        "usa os tokens do enunciado ({tokens}) e vírgulas decimais.",
        "data": "O relatório também sai como dados (`Report.to_json()`, para um diário de "
        "notas):\n",
        "no_output": "(sem saída: −∞ · 0 não é um número)",
        "heads_given": "(distinguido só onde os passos das cabeças são dados)",
        "not_shown": "(a saída não o mostra)",
        "itself": "ele mesmo, e nenhum outro",
        "none": "nenhum",
        "no_mask": ", sem máscara",
        "problem": "problema",
        "built_in": "erro embutido",
        "whole": "resposta inteira: diagnóstico",
        "output_only": "só a saída: diagnóstico",
        "every": "cada erro diagnosticado como ele mesmo",
        "every_detail": "{n} linhas (um erro num problema), cada erro nomeado sozinho a partir "
        "da resposta inteira e da saída, onde a saída o mostra.",
        "both": "os dois nomeados",
        "both_detail": "sem máscara e sem W_O juntos, só pela saída; o deslize pela sua linha "
        "e coluna.",
    },
}

#: the answers of the precision table: name, by hand (each step from the rounded ones) or
#: exact, the steps given, the decimals written
ANSWERS: Final = (
    ("exact", False, ("S", "A", "H", "output"), 3),
    ("student", True, ("S", "A", "H", "output"), 3),
    ("student output", True, ("output",), 3),
    ("2 decimals", False, ("S", "A", "H", "output"), 2),
)
#: the seeds of the precision table
SEEDS: Final = 40


def rounded(t: torch.Tensor, p: int = 3) -> torch.Tensor:
    """``t`` rounded to ``p`` decimals, its infinite (masked) entries kept."""
    return torch.where(torch.isinf(t), t, t.round(decimals=p))


def by_hand(tr: AttentionTrace, p: int = 3) -> dict[tuple[str, int | None], torch.Tensor]:
    r"""A student's steps: each computed by hand from the previous ones as written (rounded to
    ``p``): :math:`S = \lfloor\lfloor Q K^\top \rceil / \sqrt{d_k}\rceil`, then
    :math:`A`, :math:`H` and the output, each rounded."""
    out: dict[tuple[str, int | None], torch.Tensor] = {}
    heads = []
    for i in range(tr.h):
        Q, K, V = (rounded(tr.X @ getattr(tr, f"W_{x}")[i], p) for x in "QKV")
        S = rounded(rounded(Q @ K.T, p) / math.sqrt(tr.d_k), p)
        A = rounded(torch.softmax(S + tr.M if tr.M is not None else S, -1), p)
        H = rounded(A @ V, p)
        heads.append(H)
        out |= {("S", i): S, ("A", i): A, ("H", i): H}
    out[("output", None)] = rounded(torch.cat(heads, -1) @ tr.W_O, p)
    return out


def verdicts(report: Report, lang: str) -> str:
    """Each step's verdict in a report, in ``lang``'s words."""
    return "; ".join(f"{v.label}: {WORDS[lang][v.status.value]}" for v in report.verdicts)


def decimals_asked(lang: str) -> str:
    r"""The answers a judge must refuse and accept on ``life-is-awesome`` (the one-hot
    :math:`A`, the integer :math:`S`, 2 decimals; 3 decimals, trailing zeros dropped or not),
    then answers to 3 decimals (exact, or a student's rounded at each step) and to 2 on 40
    generated exercises: every right answer passes, none to 2 decimals does, and the rounding
    carried goes beyond the :math:`\pm 0.0005` of one rounding."""
    w = WORDS[lang]
    life = parse_answer({"example": "life-is-awesome", "output": [[0]]}).problem.trace.reference()
    one_hot = torch.tensor([[1, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=torch.float64)
    row2 = w["row_sep"].join(f"{x:.3f}" for x in life.A[0][1].tolist())
    s00 = life.S[0][0, 0].item()
    cases = [
        (w["one_hot"].format(row2=row2), {"heads": [{"A": one_hot.int().tolist()}]}),
        (
            w["integers"].format(whole=round(s00), s00=s00),
            {"heads": [{"S": life.S[0].round().int().tolist()}]},
        ),
        (w["two"], {"heads": [{"A": rounded(life.A[0], 2).tolist()}]}),
        (w["three"], {"heads": [{"A": rounded(life.A[0]).tolist()}]}),
        (
            w["zeros"],
            {"heads": [{"A": [[round(x, 3) for x in row] for row in life.A[0].tolist()]}]},
        ),
    ]
    rows = []
    for words, doc in cases:
        r = check_document(read_answer_text(json.dumps({"example": "life-is-awesome"} | doc)))
        rows.append([prose(words, lang), verdicts(r, lang), "0" if r.all_right else "1"])
    out = [table([w["answer"], w["verdict"], w["exit"]], rows)]
    ok = [row[2] for row in rows] == ["1", "1", "1", "0", "0"]
    out += [check(w["refused"], ok, w["refused_detail"], lang), ""]

    passed = dict.fromkeys((name for name, *_ in ANSWERS), 0)
    tried = dict.fromkeys(passed, 0)
    carried = 0.0
    for seed in range(SEEDS):
        g = random.Random(seed)
        d_model = g.choice([2, 4, 6])
        opt = ExerciseOptions(
            seed=seed, tokens=g.randint(2, 5), d_model=d_model, heads=g.choice([1, 2])
        )
        prob = Problem.of_exercise(opt)
        exact = {k: torch.as_tensor(v) for k, v in computed_steps(prob.data()).items()}
        mine = by_hand(prob.trace.reference())
        for name, hand, keys, p in ANSWERS:
            steps = mine if hand else exact
            if p == 2 and all(
                torch.equal(rounded(steps[k], 2), rounded(steps[k], 3)) for k in steps
            ):
                continue  # every value has 2 decimals or fewer here: the same answer as to 3
            text = answer_text(answer_from_steps(steps, prob.naming, p, keys=keys), p)
            report = check_document(read_answer_text(text))
            tried[name] += 1
            passed[name] += report.all_right
            carried = max([carried] + [v.carried for v in report.verdicts])
    out.append(
        table(
            [w["answers"], w["seeds"], w["passed"]], [[w[k], tried[k], passed[k]] for k in passed]
        )
    )
    ok = all(passed[k] == tried[k] == SEEDS for k in ("exact", "student", "student output"))
    ok &= passed["2 decimals"] == 0 and tried["2 decimals"] > SEEDS // 2
    detail = w["precision_detail"].format(n=tried["2 decimals"], carried=carried)
    out.append(check(w["precision"], ok, prose(detail, lang), lang))
    return "\n".join(out)


def checking_an_answer(lang: str) -> str:
    r"""A student forgets to divide by :math:`\sqrt{d_k}` (seed 0, in ``lang``): the beginning
    of the answer file, the report ``attnref check`` prints, a check that exactly one mistake
    (no scaling) reproduces it and that the report is in ``lang`` (its head, the statement's
    tokens, ``lang``'s decimal mark and no other), and the report as data."""
    w = WORDS[lang]
    prob = Problem.of_exercise(ExerciseOptions(seed=0, lang=lang))
    d = prob.data()
    mistake = next(m for m in mistakes_for(d) if m.name == "no_scale")
    doc = answer_from_steps(
        computed_steps(d, [mistake]),
        prob.naming,
        keys=("Q", "K", "V", "S", "A", "H", "output"),
    )
    text = answer_text(doc, 3)
    out = ["```json\n" + text[:300] + " …\n```\n"]
    report = check_document(read_answer_text(text))
    out.append(w["prints"])
    lines = report_lines(report)
    out.append("```text\n" + "\n".join(lines) + "\n```\n")
    joined = "\n".join(lines)
    # a decimal mark of another language between two digits: a number not in lang's writing
    others = "".join(sorted(set(DECIMAL_MARK.values()) - {DECIMAL_MARK[lang]}))
    foreign = re.compile(rf"\d[{re.escape(others)}]\d")
    in_lang = (
        report.lang == lang
        and joined.startswith(w["head"])
        and set(prob.trace.tokens) <= set(TOKENS[lang])
        and not foreign.search(joined)
    )
    detail = w["diagnosis_detail"].format(tokens=", ".join(prob.trace.tokens))
    ok = in_lang and report.diagnosis_names == [("no_scale",)]
    out += [check(w["diagnosis"], ok, prose(detail, lang), lang), ""]
    out.append(w["data"])
    data = report.to_json()
    short = {k: data[k] for k in ("steps_given", "steps_right", "first_wrong", "diagnoses")}
    out.append("```json\n" + json.dumps(short) + "\n```\n")
    return "\n".join(out)


def every_mistake(lang: str) -> str:
    """Every mistake of the homework's catalogue but the slip and the gradients', built into an
    answer to 3 decimals on a problem where it shows (two heads with :math:`d_{model} = 6`; one
    head with square weights; no mask), and what the checker names from the whole answer and
    from the output alone: itself, and no other."""
    w = WORDS[lang]
    rows, ok, seen = [], True, set()
    for opt in (
        ExerciseOptions(seed=5, d_model=6, heads=2, lang=lang),
        ExerciseOptions(seed=0, d_model=3, heads=1, lang=lang),
        ExerciseOptions(seed=11, tokens=4, heads=2, causal=False, lang=lang),
    ):
        prob = Problem.of_exercise(opt)
        d = prob.data()
        exact = computed_steps(d)
        for m in mistakes_for(d):
            if m.rank or (m.name, opt.d_model) in seen:
                continue
            seen.add((m.name, opt.d_model))
            steps = {k: v for k, v in computed_steps(d, [m]).items() if not np.isnan(v).any()}
            cells = []
            for keys in (
                ("Q", "K", "V", "scores", "S", "S_masked", "A", "H", "concat", "output"),
                ("output",),
            ):
                out = steps.get(("output", None))
                if keys == ("output",) and out is None:
                    cells.append(w["no_output"])
                    continue
                if m.given and not m.given & set(keys):
                    cells.append(w["heads_given"])
                    continue
                if (
                    keys == ("output",)
                    and out.shape == exact[("output", None)].shape
                    and (abs(out - exact[("output", None)])).max() < 1e-3
                ):
                    cells.append(w["not_shown"])
                    continue
                text = answer_text(answer_from_steps(steps, prob.naming, keys=keys), 3)
                found = check_document(read_answer_text(text)).diagnosis_names
                ok &= found == [(m.name,)]
                cells.append(
                    w["itself"]
                    if found == [(m.name,)]
                    else ", ".join("+".join(n) for n in found) or w["none"]
                )
            problem = f"d_model = {opt.d_model}, h = {opt.heads}" + (
                "" if opt.causal else w["no_mask"]
            )
            rows.append([problem, m.words[lang].replace("|", "\\|"), *cells])
    header = [w["problem"], w["built_in"], w["whole"], w["output_only"]]
    detail = w["every_detail"].format(n=len(rows))
    return "\n".join([table(header, rows), "", check(w["every"], ok, detail, lang)])


def two_mistakes_and_a_slip(lang: str) -> str:
    """Two mistakes at once (no mask and no :math:`W_O`, from the output alone) and a slip in
    one entry of :math:`A^{(2)}` (:math:`+0.1`, :math:`H^{(2)}` computed from it): the last
    lines of each report, and a check that both are named."""
    w = WORDS[lang]
    prob = Problem.of_exercise(ExerciseOptions(seed=5, d_model=6, lang=lang))
    d = prob.data()
    ms = {m.name: m for m in mistakes_for(d)}
    both = computed_steps(d, [ms["no_mask"], ms["no_W_O"]])
    r = check_document(
        read_answer_text(answer_text(answer_from_steps(both, prob.naming, keys=("output",)), 3))
    )
    out = ["```text\n" + "\n".join(report_lines(r)[-3:]) + "\n```\n"]
    steps = computed_steps(d)
    A = steps[("A", 1)].copy()
    A[2, 0] += 0.1
    slipped = {("A", 1): A, ("H", 1): A @ prob.trace.reference().V[1].numpy()}
    s = check_document(read_answer_text(answer_text(answer_from_steps(slipped, prob.naming), 3)))
    out.append("```text\n" + "\n".join(report_lines(s)[-3:]) + "\n```\n")
    ok = r.diagnosis_names == [("no_mask", "no_W_O")] and s.diagnosis_names == [("slip",)]
    out.append(check(w["both"], ok, w["both_detail"], lang))
    return "\n".join(out)
