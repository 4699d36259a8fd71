"""`mistake_words`: a catalogue entry in a few words (the class's summary, a grade's sentences),
one entry's words never another's."""

from __future__ import annotations

from collections import Counter

import pytest

from attention_ref.exercises.catalogue import CATALOGUES, mistake_words


def names() -> list[str]:
    return sorted({k.name for catalogue in CATALOGUES.values() for k in catalogue})


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_no_two_entries_read_the_same(lang):
    said = Counter(mistake_words(n, lang) for n in names())
    assert [w for w, n in said.items() if n > 1] == []
    assert all("{" not in mistake_words(n, lang) for n in names())  # no field left unfilled
    # the control: the words up to their colon, which the summary showed, collide
    heads = Counter(mistake_words(n, lang).split(":")[0] for n in names())
    assert heads[mistake_words("transposed_W", lang).split(":")[0]] == 2


def test_a_short_head_stays_short_and_an_unknown_name_is_itself():
    assert mistake_words("no_mask") == "no causal mask"
    assert mistake_words("transposed_W_O") == (
        "a transposed weight: Concat W_Oᵀ instead of Concat W_O"
    )
    assert mistake_words("not_in_any_catalogue") == "not_in_any_catalogue"
