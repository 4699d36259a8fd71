"""One name per quantity across the statement, the answer's JSON, the key and the check report,
in both languages (issue 58, item 9).

1. ``"scores"`` is :math:`QK^\\top` (before the division) and ``"S"`` is
   :math:`S = QK^\\top / \\sqrt{d_k}`: the statement's question names them so, and the key's
   numbers, the answer template and the check report agree.
2. The check report's header is the whole command that draws the exercise (``--backward``,
   ``--decimals``, ``--lang`` included), and running it draws the same exercise.
3. With K/V heads of their own (``gqa``), ``K`` and ``V`` carry the K/V head's index ``j``
   (``K⁽ʲ⁾``, ``K_rot⁽ʲ⁾``), never the query head's ``i``.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from pathlib import Path

import pytest

from attention_ref.cli.main import main
from attention_ref.exercises.answer import (
    Problem,
    answer_from_steps,
    answer_text,
    read_answer_text,
)
from attention_ref.exercises.answer_words import step_label
from attention_ref.exercises.chain import computed_steps
from attention_ref.exercises.exercise import ExerciseOptions, make_exercise, options_from_json
from attention_ref.exercises.features import PROBLEMS
from attention_ref.exercises.grader import check_document, report_lines
from attention_ref.exercises.words import TEXT
from attention_ref.render import Explanation, render, to_json

LANGS = ("en", "pt")
#: Every problem: the presets and every combination (issue 59).
VARIANTS = PROBLEMS


def section_texts(doc: Explanation) -> list[tuple[str, str]]:
    """Each section's title and text, as rendered words (no numbers of the matrices)."""
    return [(s.title, s.text or "") for s in doc.sections]


def scores_question(doc: Explanation) -> tuple[str, str]:
    """The question that asks for S (its title, its text)."""
    found = [(t, x) for t, x in section_texts(doc) if "S⁽ⁱ⁾ = " in x and "√d_k" in x]
    assert len(found) == 1, section_texts(doc)
    return found[0]


# --- 1. "scores" is QKᵀ, "S" is QKᵀ / √d_k ---------------------------------------------------

#: The product the question names "scores", and the formula of the S it names "S".
NAMED_SCORES = re.compile(r'(Q\S*⁽ⁱ⁾ K\S*⁽[ⁱʲ]⁾ᵀ) \("scores"\)')
NAMED_S = re.compile(r'S⁽ⁱ⁾ = (Q\S*⁽ⁱ⁾ K\S*⁽[ⁱʲ]⁾ᵀ) / √d_k, [^"]*\("S"\)')


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_question_names_scores_as_qkt_and_s_as_scores_over_root_dk(variant, lang):
    opt = ExerciseOptions(seed=4, variant=variant, lang=lang)
    ex = make_exercise(opt)
    title, text = scores_question(ex.statement)
    scores, s_of = NAMED_SCORES.search(text), NAMED_S.search(text)
    assert scores and s_of, text
    # "scores" is the product itself, and S divides that same product by √d_k
    assert scores.group(1) == s_of.group(1), text
    # the title names both as the JSON does: no "scores divided by √d_k" standing for S
    assert "S = scores / √d_k" in title, title
    assert not re.search(r"^scores divid|^scaled scores", title.split(": ", 1)[1]), title
    # the answer template and the key hold the same two quantities under the same names
    head = ex.answer["heads"][0]  # type: ignore[index]
    assert {"scores", "S"} <= set(head)
    key = ex.key.data["heads"][0]  # type: ignore[index]
    root = math.sqrt(ex.trace.d_k)
    for qk, s in zip(key["scores"], key["S"], strict=True):
        assert s == pytest.approx([x / root for x in qk])
    assert key["scores"] != key["S"]  # the control: the two are not one matrix (d_k > 1 here)
    # the key answers under the question's title, naming the scores as the statement does
    titles = [s.title for s in ex.key.sections]
    assert title in titles
    key_text = ex.key.sections[titles.index(title)].text or ""
    assert scores.group(1) in key_text and f"{TEXT[lang]['q2'].split()[0]} " in key_text


@pytest.mark.parametrize("lang", LANGS)
def test_the_check_grades_qkt_under_scores_and_names_it_as_the_statement(lang):
    """The report labels ``heads[0].scores`` with the statement's product, and grades QKᵀ
    there right and QKᵀ / √d_k there wrong (the control: the name is not a mere label)."""
    opt = ExerciseOptions(seed=4, lang=lang)
    prob = Problem.of_exercise(opt)
    steps = computed_steps(prob.data())
    label = step_label(("scores", 0), lang)
    assert label.startswith("Q⁽¹⁾K⁽¹⁾ᵀ (heads[0].scores)"), label
    _, text = scores_question(make_exercise(opt).statement)
    product = NAMED_SCORES.search(text)
    assert product and product.group(1).replace("ⁱ", "¹").replace(" ", "") == "Q⁽¹⁾K⁽¹⁾ᵀ"

    def report(scores: object) -> list[str]:
        doc = answer_from_steps(steps, prob.naming, keys=("scores", "S"))
        doc["heads"][0]["scores"] = scores  # type: ignore[index]
        return report_lines(check_document(read_answer_text(answer_text(doc, 3))))

    right = report(steps[("scores", 0)].tolist())
    assert not any("heads[0].scores" in x and ("WRONG" in x or "ERRADO" in x) for x in right)
    scaled = steps[("S", 0)].tolist()
    wrong = report(scaled)
    assert any(x.lstrip().startswith(label) and ("WRONG" in x or "ERRADO" in x) for x in wrong)


# --- 2. the report's header: the whole command -----------------------------------------------

SHAPES = [
    {"seed": 3, "backward": True},
    {"seed": 3, "backward": True, "decimals": 2},
    {"seed": 5, "backward": True, "variant": "gqa+rope"},
    {"seed": 6, "backward": True, "variant": "window", "tokens": 4, "causal": True},
    {"seed": 2, "backward": False, "variant": "gqa"},
]


#: The report's first line, in either language, up to the command's colon.
HEADER = re.compile(r"^(?:Checking your answer to|Conferindo a sua resposta a) (attnref .+?): ")


def header_command(lines: list[str]) -> str:
    """The command the report's first line names (between "to"/"a" and the colon)."""
    m = re.match(
        r"^(?:Checking your answer to|Conferindo a sua resposta a) (attnref .+?): ", lines[0]
    )
    assert m, lines[0]
    return m.group(1)


def filled(ex_answer: dict[str, object], prob: Problem) -> str:
    """The exercise's answer.json with Q⁽¹⁾ filled in (right)."""
    doc = json.loads(json.dumps(ex_answer))
    doc["heads"][0]["Q"] = computed_steps(prob.data())[("Q", 0)].tolist()
    return json.dumps(doc)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(f"{k}{v}" for k, v in s.items()))
def test_the_reports_header_is_the_command_that_draws_the_exercise_again(
    shape, lang, tmp_path, capsys, monkeypatch
):
    opt = ExerciseOptions(lang=lang, **shape)  # type: ignore[arg-type]
    ex = make_exercise(opt)
    prob = Problem.of_exercise(opt)
    report = check_document(read_answer_text(filled(ex.answer, prob)))
    command = header_command(report_lines(report))
    assert command == ex.statement.source  # the statement's source line, word for word
    assert ("--backward" in command.split()) is opt.backward
    assert ("--decimals" in command.split()) is (opt.decimals != 3)
    assert ("--lang" in command.split()) is (lang != "en")
    # the command draws the same exercise: the same problem, the same "exercise" object
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[0] == "attnref"
    assert main([*argv[1:], "--out", "again"]) == 0, capsys.readouterr()
    again = json.loads(Path("again/answer.json").read_text(encoding="utf-8"))
    assert again["exercise"] == ex.answer["exercise"] == opt.answer_json()
    assert (
        Path("again/exercise.json").read_text(encoding="utf-8").strip()
        == str(to_json(ex.problem)).strip()
    )
    assert ("backward" in again["exercise"]) is opt.backward  # the JSON names it too
    # and it is the object check reads back: the same options, so the same header
    assert options_from_json(again["exercise"]) == opt


def test_check_prints_the_backward_command_in_each_language(tmp_path, capsys, monkeypatch):
    """Through the CLI: ``exercise --backward --out``, one step filled in, ``check``: the
    header's command has --backward (and the answer's --lang); the control, the same exercise
    without --backward, has none."""
    monkeypatch.chdir(tmp_path)
    for lang, backward in (("en", True), ("pt", True), ("pt", False)):
        folder = f"ex-{lang}-{backward}"
        flags = ["--backward"] * backward
        assert main(["exercise", "--seed", "7", "--lang", lang, *flags, "--out", folder]) == 0
        capsys.readouterr()
        opt = ExerciseOptions(seed=7, lang=lang, backward=backward)
        path = Path(folder) / "answer.json"
        text = filled(json.loads(path.read_text(encoding="utf-8")), Problem.of_exercise(opt))
        path.write_text(text, encoding="utf-8")
        main(["check", str(path)])
        out = capsys.readouterr().out
        command = header_command([" ".join(out.split("\n\n")[0].split())])
        assert ("--backward" in command.split()) is backward, out
        assert command.endswith(f"--lang {lang}") if lang != "en" else "--lang" not in command
        assert command == opt.command


# --- 3. K⁽ʲ⁾ where the K/V heads are j ----------------------------------------------------------

#: K or V (rotated or not) with the query head's index: not a K/V head's name.
QUERY_INDEXED_KV = re.compile(r"(?<!∂)\b[KV](?:_rot)?⁽ⁱ⁾")
GROUPED = [
    {"variant": "gqa"},
    {"variant": "gqa", "heads": 2},  # one K/V head: multi-query attention
    {"variant": "gqa+rope"},
    {"variant": "gqa+window"},
    {"variant": "gqa+window+rope"},
]


def prose(doc: Explanation) -> str:
    """The document's words: every section's title and text (``markdown``, the matrices out)."""
    return "\n".join(f"{t}\n{x}" for t, x in section_texts(doc))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("shape", GROUPED, ids=lambda s: "-".join(map(str, s.values())))
def test_grouped_statements_and_keys_name_k_and_v_by_their_own_heads(shape, lang):
    opt = ExerciseOptions(seed=3, lang=lang, backward=True, **shape)  # type: ignore[arg-type]
    ex = make_exercise(opt)
    for name, doc in (("statement", ex.statement), ("key", ex.key)):
        words = prose(doc)
        assert not QUERY_INDEXED_KV.findall(words), (name, QUERY_INDEXED_KV.findall(words))
        assert "K⁽ʲ⁾" in words or "K_rot⁽ʲ⁾" in words, name  # they are named, by j
    rendered = render(ex.statement, "markdown", 3)
    assert isinstance(rendered, str) and not QUERY_INDEXED_KV.search(rendered)
    if opt.features.rotary:  # the rotations' question rotates the K/V heads' keys
        rot = next(x for t, x in section_texts(ex.statement) if "Q_rot⁽ⁱ⁾" in x and "V" in x)
        assert "K⁽ʲ⁾" in rot and "K_rot⁽ʲ⁾" in rot, rot


@pytest.mark.parametrize("lang", LANGS)
def test_with_one_kv_head_per_query_head_k_keeps_i(lang):
    """The control: where g = h (the homework's attention, RoPE alone) head i reads K⁽ⁱ⁾, and
    the statement says so (the regex above does find it)."""
    for variant in ("mha", "rope", "window+rope"):
        opt = ExerciseOptions(seed=3, lang=lang, backward=True, variant=variant)
        words = prose(make_exercise(opt).statement)
        assert QUERY_INDEXED_KV.search(words), variant
        assert "⁽ʲ⁾" not in words, variant
