"""A worked example has one writer: its facts computed once, said through a table of words per
language (`attention_ref.worked.words`). The Portuguese page reads that writer, not a copy of its
logic (`attnref_book.worked_pt`)."""

from __future__ import annotations

import importlib
import string
from dataclasses import replace

import pytest

from attention_ref.render import Explanation, Mat
from attention_ref.worked import online_tiles, words, words_grouped
from attention_ref.worked.registry import EXAMPLES as MODULES
from attention_ref.worked.registry import OWN_BACKWARD
from attnref_book.pages import translated
from attnref_book.worked_pt import kv_cache_words, online_softmax_words, words_of

#: today's examples and the homework's (the other documents' own keep their English words,
#: pinned by their tests)
EXAMPLES = {
    name: importlib.import_module(MODULES[name]) for name in [*OWN_BACKWARD, "life-is-awesome"]
}
life_kv_cache, life_online_softmax = EXAMPLES["kv-cache"], EXAMPLES["online-softmax"]
life_gqa, life_rope = EXAMPLES["gqa"], EXAMPLES["rope"]
life_window, life_alibi = EXAMPLES["window"], EXAMPLES["alibi"]
TABLES = {
    "kv-cache": words.KV_CACHE,
    "online-softmax": words.ONLINE_SOFTMAX,
    "gradients": words.GRADIENTS,
    "grouped layout": words_grouped.GROUPED,
    "gqa": words_grouped.GQA,
    "rope": words_grouped.ROPE,
    "window": words_grouped.SLIDING_WINDOW,
    "alibi": words_grouped.ALIBI,
    "trace": words.TRACE,
    "life-is-awesome": words.LIFE,
}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_language_says_the_same_facts(name):
    """Every phrase in every language, with the same blanks: a translation cannot drop a
    number or a verdict the English phrase carries."""
    table = TABLES[name]
    assert set(table) == {"en", "pt"}
    assert set(table["en"]) == set(table["pt"]), set(table["en"]) ^ set(table["pt"])
    for key, en in table["en"].items():
        assert _fields(en) == _fields(table["pt"][key]), key


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_one_writer_gives_both_languages_the_same_numbers(name):
    en, pt = EXAMPLES[name].explain(), EXAMPLES[name].explain(lang="pt")
    assert (en.lang, pt.lang) == ("en", "pt")
    assert en.data == pt.data  # the facts, computed once
    assert len(en.sections) == len(pt.sections)
    for a, b in zip(en.sections, pt.sections, strict=True):
        # the same symbols, but for the one that is a word of its language (the window's mask)
        named = {words_grouped.WINDOW_SYMBOL["pt"]: words_grouped.WINDOW_SYMBOL["en"]}
        assert [(m.symbol, m.value) for m in a.items if isinstance(m, Mat)] == [
            (named.get(m.symbol, m.symbol), m.value) for m in b.items if isinstance(m, Mat)
        ]
        assert (a.title, a.text) != (b.title, b.text), a.title  # said in another language
    # each step's words carry the English step's numbers (the Portuguese page's own check)
    translated(en, words_of(pt))


def test_the_portuguese_pages_words_are_the_examples_own():
    from attnref_book import worked_pt

    assert kv_cache_words() == words_of(life_kv_cache.explain("pt"))
    assert worked_pt.life_words() == words_of(EXAMPLES["life-is-awesome"].explain("pt"))
    for name, module in (
        ("gqa", life_gqa),
        ("rope", life_rope),
        ("window", life_window),
        ("alibi", life_alibi),
    ):
        assert getattr(worked_pt, f"{name}_words")() == words_of(module.explain(lang="pt"))
    online = online_softmax_words()
    assert online.steps == words_of(life_online_softmax.explain("pt")).steps
    assert online.math  # the words inside the matrices' LaTeX


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_verdict_is_one_fact_in_both_languages(lang):
    """The same comparison decides the sentence in each language: a decoded row moved by 0.01
    is said to differ, and the online softmax's H moved by 0.01 too."""
    _, step = life_kv_cache.decode()
    right, _ = life_kv_cache.check_section(step, lang)
    moved, facts = life_kv_cache.check_section(replace(step, output=step.output + 0.01), lang)
    assert facts["equals_full_row"] is False
    differs = words.KV_CACHE[lang]["row_differs"].split("{")[0]
    assert differs not in right.text and moved.text.startswith(differs)
    seed, trace = online_tiles.online_trace()
    end, facts = online_tiles.end_section(seed, replace(trace, H=trace.H + 0.01), lang)
    assert facts["equal"] is False
    assert end.text.startswith(words.ONLINE_SOFTMAX[lang]["end_differs"].split("{")[0])


def test_the_backwards_words_are_one_writer_on_every_shape():
    """The documents' example and shapes the Portuguese words never had (no mask, no W_O, a
    bias, one token): both languages from `gradient_sections`, the same numbers step by step."""
    import torch

    from attention_ref import reference as ref
    from attention_ref.worked.backward_sections import gradient_sections
    from attention_ref.worked.life_is_awesome import life_trace
    from attnref_book.worked_pt import backward_words

    gen = torch.Generator().manual_seed(0)
    X, W = torch.randn(3, 4, generator=gen, dtype=torch.float64), torch.eye(4).double()
    shapes = {
        "life": life_trace(),
        "no mask, no W_O": ref.masked_multihead_attention_fused(
            X, W, W, W, None, h=2, causal=False
        ),
        "b_O": ref.masked_multihead_attention_fused(X, W, W, W, W, h=2, b_O=torch.ones(4).double()),
        "one token": ref.masked_multihead_attention_fused(X[:1], W, W, W, W, h=2),
    }
    for name, tr in shapes.items():
        g = ref.attention_backward(tr)
        en = gradient_sections(tr, g, G_note=words.GRADIENTS["en"]["default_g"])
        pt = backward_words(tr, source="s")
        assert len(pt.steps) == len(en), name
        for sec, (title, text) in zip(en, pt.steps, strict=True):
            assert (title, text) != (sec.title, sec.text), name
        expl = Explanation(title="t", source="s", sections=en, data={})
        translated(expl, pt)  # the same numbers in every step's words


def test_the_grouped_layouts_words_follow_every_shape_in_both_languages():
    """Shapes none of the Portuguese examples has (one head without RoPE, g = 1 with RoPE, a
    window with g < h): the same facts pick the phrase in each language. The Portuguese once
    said "its own keys" of a single head; it now says what the English says."""
    import torch

    from attention_ref import reference as ref
    from attention_ref.reference import windows
    from attention_ref.worked.layout import forward_sections

    gen = torch.Generator().manual_seed(1)

    def weights(heads: int, width: int) -> torch.Tensor:
        return torch.randn(heads, 4, width, generator=gen, dtype=torch.float64)

    X = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    shapes = {
        "one head": ref.masked_multihead_attention(X, weights(1, 2), weights(1, 2), weights(1, 2)),
        "g = 1, RoPE": ref.masked_multihead_attention(
            X, weights(2, 2), weights(1, 2), weights(1, 2), rope_base=10000.0
        ),
        "g < h, window": ref.masked_multihead_attention(
            X, weights(4, 2), weights(2, 2), weights(2, 2), M=windows.sliding_window_mask(3, 2)
        ),
    }
    for name, tr in shapes.items():
        en, pt = forward_sections(tr), forward_sections(tr, lang="pt")
        for a, b in zip(en, pt, strict=True):
            assert (a.title, a.text) != (b.title, b.text), (name, a.title)
        expl = Explanation(title="t", source="s", sections=en, data={})
        translated(expl, words_of(replace(expl, sections=pt, lang="pt")))
    one = forward_sections(shapes["one head"], lang="pt")
    assert "compara as suas consultas com as chaves." in " ".join(s.text for s in one)


@pytest.mark.parametrize(
    "shape",
    [
        dict(causal=False, bias=True, W_O="none"),  # no mask, biases, the concat as output
        dict(causal=True, bias=True, W_O="wide"),  # b_O, d_out != d_model
        dict(causal=False, bias=False, W_O="square"),
    ],
)
def test_the_trace_layout_says_each_shape_in_both_languages(shape):
    """`trace_sections` on shapes the homework's example does not have: each language gets the
    same matrices, and each step's words the English step's numbers (h·d_v, d_out)."""
    import torch

    from attention_ref import reference as ref
    from attention_ref.render import Explanation
    from attention_ref.worked.layout import trace_sections

    g = torch.Generator().manual_seed(3)

    def r(*size):
        return torch.randint(-2, 3, size, generator=g).double()

    h, n, d, d_k = 2, 3, 4, 2
    d_out = {"none": None, "wide": 5, "square": d}[shape["W_O"]]
    b = shape["bias"]
    trace = ref.masked_multihead_attention(
        r(n, d),
        r(h, d, d_k),
        r(h, d, d_k),
        r(h, d, d_k),
        r(h * d_k, d_out) if d_out else None,
        b_Q=r(h, d_k) if b else None,
        b_K=r(h, d_k) if b else None,
        b_V=r(h, d_k) if b else None,
        b_O=r(d_out) if b and d_out else None,
        causal=shape["causal"],
        tokens=("a", "b", "c"),
    )
    en, pt = (
        Explanation(
            title="t", source="s", sections=trace_sections(trace, lang=lang), data={}, lang=lang
        )
        for lang in ("en", "pt")
    )
    for a, c in zip(en.sections, pt.sections, strict=True):
        assert [(m.symbol, m.value) for m in a.items if isinstance(m, Mat)] == [
            (m.symbol, m.value) for m in c.items if isinstance(m, Mat)
        ]
        assert (a.title, a.text) != (c.title, c.text), a.title
    translated(en, words_of(pt))
