"""The worked examples in Portuguese: each example's own writer, in its Portuguese words.

The Portuguese pages show the English pages' worked examples (`attnref explain -e …`): the
same matrices, told in Portuguese (`attnref_book.pages.example` with ``words=``). Each
example's writer (``explain(lang)``, `attention_ref.worked.backward_sections.gradient_sections`)
computes its facts once and says them through its table of words per language
(`attention_ref.worked.words`, `attention_ref.worked.words_grouped`); this module only hands
those words to the page. `attnref_book.pages.translated` still checks that every step's
words carry the English step's numbers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from attnref_book.pages import Words

if TYPE_CHECKING:
    from attention_ref import reference as ref
    from attention_ref.render import Explanation

__all__ = [
    "alibi_words",
    "backward_words",
    "gqa_words",
    "kv_cache_words",
    "life_words",
    "online_softmax_words",
    "rope_words",
    "window_words",
    "words_of",
]


def words_of(expl: Explanation) -> Words:
    """An explanation written in another language (``explain(lang)``) as the `Words` of its
    steps: the English example's matrices stay, and `attnref_book.pages.translated`
    still checks that each step carries the English step's numbers."""
    return Words(
        lang=expl.lang, source=expl.source, steps=[(s.title, s.text) for s in expl.sections]
    )


def life_words() -> Words:
    """`attnref explain -e life-is-awesome` (the homework's Questão 01) in Portuguese: the
    example's own writer, in its Portuguese words (`attention_ref.worked.words.LIFE`,
    `attention_ref.worked.words.TRACE`)."""
    from attention_ref.worked.life_is_awesome import explain

    return words_of(explain("pt"))


def kv_cache_words() -> Words:
    """`attnref explain -e kv-cache` in Portuguese: the example's own writer, in its
    Portuguese words (`attention_ref.worked.words.KV_CACHE`)."""
    from attention_ref.worked.life_kv_cache import explain

    return words_of(explain("pt"))


def online_softmax_words() -> Words:
    """`attnref explain -e online-softmax` in Portuguese: the example's own writer, in its
    Portuguese words (`attention_ref.worked.words.ONLINE_SOFTMAX`), and the words inside its
    matrices' LaTeX."""
    from attention_ref.worked.life_online_softmax import explain
    from attention_ref.worked.words import ONLINE_SOFTMAX as WORDS

    so_far = {r"\text{" + WORDS["en"]["so_far"] + "}": r"\text{" + WORDS["pt"]["so_far"] + "}"}
    return replace(words_of(explain("pt")), math=so_far)


def backward_words(tr: ref.AttentionTrace | None = None, source: str | None = None) -> Words:
    """The backward steps of `attnref explain -e life-is-awesome --backward` (L = Σ saída) in
    Portuguese: `attention_ref.worked.backward_sections.gradient_sections`, the English steps'
    own writer, in its Portuguese words (`attention_ref.worked.words.GRADIENTS`); ``tr``:
    another trace (an exercise's), ``source`` its source line."""
    from attention_ref.reference import attention_backward
    from attention_ref.worked.backward_sections import gradient_sections
    from attention_ref.worked.life_is_awesome import life_trace
    from attention_ref.worked.words import GRADIENTS

    tr = life_trace() if tr is None else tr
    sections = gradient_sections(
        tr, attention_backward(tr), G_note=GRADIENTS["pt"]["default_g"], lang="pt"
    )
    if source is None:
        mask = ", máscara causal" if tr.M is not None else ""
        wo = f", W_O = I_{int(tr.W_O.shape[-1])}" if tr.W_O is not None else ""
        source = (
            f"seed 000, lista de MAE5911, Questão 01 (d_model = {int(tr.X.shape[-1])}, "
            f"h = {tr.h}{mask}{wo})"
        )
    return Words(lang="pt", source=source, steps=[(s.title, s.text) for s in sections])


def gqa_words() -> Words:
    """`attnref explain -e gqa` in Portuguese (`attention_ref.worked.words_grouped.GQA`)."""
    from attention_ref.worked.life_gqa import explain

    return words_of(explain("pt"))


def rope_words() -> Words:
    """`attnref explain -e rope` in Portuguese (`attention_ref.worked.words_grouped.ROPE`)."""
    from attention_ref.worked.life_rope import explain

    return words_of(explain("pt"))


def window_words() -> Words:
    """`attnref explain -e window` in Portuguese
    (`attention_ref.worked.words_grouped.SLIDING_WINDOW`)."""
    from attention_ref.worked.life_window import explain

    return words_of(explain(lang="pt"))


def alibi_words() -> Words:
    """`attnref explain -e alibi` in Portuguese (`attention_ref.worked.words_grouped.ALIBI`)."""
    from attention_ref.worked.life_alibi import explain

    return words_of(explain("pt"))
