"""``attnref explain --lang en|pt``: the words in the student's language, the same numbers
(issue 42 item 7; the one layout of issue 41 says every step in each language).

Refusals first: an unknown language is one line and exit 2. Then each example, forward and
backward, prints its words from its Portuguese tables, with decimal commas, and the same numbers
as the English one; an ``--input`` file too.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from attention_ref.cli.main import main
from attention_ref.worked import cached
from attention_ref.worked.registry import EXAMPLE_NAMES, explain_example
from attention_ref.worked.words import GRADIENTS, LIFE, TRACE
from attention_ref.worked.words_documents import INPUT, PIZZA

#: a heading both languages write alike: "scores" is the Portuguese homework's own word (seed
#: 000), and the rest of the heading is its formula
KEPT = "## Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, d_k = "


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A cache of this test's own: nothing read from, nor left in, the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "attnref" / "explain"


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--lang", "fr"], "attnref: error: --lang must be en or pt, got 'fr'"),
        (["--lang", "PT"], "--lang must be en or pt, got 'PT'"),
        (["--backward", "--lang", "de"], "--lang must be en or pt, got 'de'"),
        (["-e", "nope", "--lang", "pt"], "exemplo desconhecido 'nope'"),
    ],
)
def test_what_is_not_written_in_a_language_is_one_line_and_exit_2(capsys, args, words):
    code, out, err = run(["explain", *args], capsys)
    assert code == 2 and out == ""
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_unknown_language_is_refused_by_the_registry_too():
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        explain_example("i-want-pizza", "fr")
    assert explain_example("i-want-pizza", "pt").title == PIZZA["pt"]["title"]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_each_example_in_portuguese_says_other_words_and_the_same_numbers(capsys, name):
    code, en, err = run(["explain", "-e", name, "--format", "json"], capsys)
    assert code == 0, err
    code, pt, err = run(["explain", "-e", name, "--format", "json", "--lang", "pt"], capsys)
    assert code == 0, err
    assert json.loads(pt) == json.loads(en)  # the facts, computed once
    code, md_en, _ = run(["explain", "-e", name, "--format", "markdown"], capsys)
    code, md_pt, _ = run(["explain", "-e", name, "--format", "markdown", "--lang", "pt"], capsys)
    assert md_pt != md_en
    titles = lambda md: {line for line in md.splitlines() if line.startswith("#")}  # noqa: E731
    same = {t for t in titles(md_en) & titles(md_pt) if not t.startswith(KEPT)}
    assert not same, f"headings left in English: {same}"


def test_the_homeworks_example_in_portuguese_reads_its_portuguese_words(capsys):
    code, out, err = run(["explain", "--lang", "pt", "--format", "markdown"], capsys)
    assert code == 0, err
    assert out.startswith(f"# {LIFE['pt']['title']}\n")
    assert f"## {TRACE['pt']['softmax']}" in out and TRACE["en"]["softmax"] not in out
    assert "| 0,670 | 0,330 |" in out  # decimal commas in the tables: A⁽¹⁾'s second row
    code, out_en, _ = run(["explain", "--format", "markdown"], capsys)
    assert "| 0.670 | 0.330 |" in out_en and out.count("|") == out_en.count("|")


def test_an_input_file_in_portuguese(tmp_path, capsys):
    doc = {
        "tokens": ["a", "b"],
        "X": [[1, 0], [0, 1]],
        "h": 1,
        "W_Q": [[1, 0], [0, 1]],
        "W_K": [[1, 0], [0, 1]],
        "W_V": [[1, 2], [3, 4]],
        "b_V": [0.5, 0.5],
        "causal": False,
    }
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    outs = {}
    for lang in ("en", "pt"):
        code, outs[lang], err = run(
            ["explain", "-i", str(path), "--lang", lang, "-f", "markdown"], capsys
        )
        assert code == 0, err
        w = INPUT[lang]
        assert outs[lang].startswith(f"# {w['title_plain']}\n")
        assert w["per_head"] not in outs[lang] and w["fused"] in outs[lang]
        assert w["biases"] in outs[lang] and w["no_wo"] in outs[lang]
        assert f"## {TRACE[lang]['no_mask']}" in outs[lang]
    assert outs["en"] != outs["pt"]
    code, js_en, _ = run(["explain", "-i", str(path), "-f", "json"], capsys)
    code, js_pt, _ = run(["explain", "-i", str(path), "-f", "json", "--lang", "pt"], capsys)
    assert json.loads(js_en) == json.loads(js_pt)
    code, bw, err = run(
        ["explain", "-i", str(path), "--backward", "--lang", "pt", "-f", "markdown"], capsys
    )
    assert code == 0, err
    assert f"## {GRADIENTS['pt']['upstream']}" in bw and GRADIENTS["en"]["upstream"] not in bw


def test_each_language_is_cached_apart(cache, capsys):
    """The cache keeps one file per example and language: the Portuguese document never
    answers an English run, and both read back as they were computed."""
    for lang in ("pt", "en", "pt"):
        code, _, err = run(["explain", "-f", "markdown", "--lang", lang], capsys)
        assert code == 0, err
    assert sorted(os.listdir(cache)) == sorted(
        f"life-is-awesome.{lang}-{cached.code_key()}.json" for lang in ("en", "pt")
    )
    for lang in ("en", "pt"):
        assert cached.explain_example_cached("life-is-awesome", lang) == explain_example(
            "life-is-awesome", lang
        )
    assert explain_example("life-is-awesome", "pt") != explain_example("life-is-awesome")


#: English words a Portuguese sentence never needs (the tokens' own words aside)
ENGLISH = re.compile(r"(?<![\w-])(the|of|and|with|is|are|gets|from)(?![\w-])")


def english_left(markdown: str, tokens: tuple[str, ...] = ()) -> list[str]:
    """The lines of a rendered explanation, tables, quoted names and the tokens aside, that
    hold English."""
    prose = [line for line in markdown.splitlines() if line and not line.startswith("|")]
    unquoted = [re.sub(r'"[^"]*"|`[^`]*`|\'[^\']*\'', "", line) for line in prose]
    for token in tokens:
        unquoted = [re.sub(rf"(?<![\w-]){re.escape(token)}(?![\w-])", "", u) for u in unquoted]
    return [line for line in unquoted if ENGLISH.search(line)]


def test_the_judge_of_english_left_can_fail():
    assert english_left("## Pesos: the sum of X\n| with | 1 |") == ["## Pesos: the sum of X"]
    assert english_left('# Atenção: "Life is awesome"\n| with | 1 |') == []
    assert english_left("## Bloco 1: chaves Life, is") == ["## Bloco 1: chaves Life, is"]
    assert english_left("## Bloco 1: chaves Life, is", ("Life", "is")) == []


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_each_example_in_portuguese_leaves_no_english_sentence(capsys, name, backward):
    more = ["--backward"] if backward else []
    code, pt, err = run(["explain", "-e", name, "-f", "markdown", "--lang", "pt", *more], capsys)
    assert code == 0, err
    tokens = tuple(str(t) for t in explain_example(name).data.get("tokens", []))
    assert english_left(pt, tokens) == []
    code, en, err = run(["explain", "-e", name, "-f", "markdown", *more], capsys)
    assert english_left(en), "the control: the English explanation is caught"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_the_backward_in_portuguese_has_the_same_gradients(capsys, name):
    outs = {}
    for lang in ("en", "pt"):
        code, outs[lang], err = run(
            ["explain", "-e", name, "--backward", "-f", "json", "--lang", lang], capsys
        )
        assert code == 0, err
    en, pt = json.loads(outs["en"]), json.loads(outs["pt"])
    assert "grads" in en and pt == en
