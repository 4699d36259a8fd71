"""Each page's facts, computed once and said in each language.

One module per page (``causal_mask`` for ``docs/causal-mask.md`` and ``docs/causal-mask.pt.md``):
each code block of the page is one call of a function here that takes the page's language
(``print(masked_scores("pt"))``), its words in a table keyed by the language. The English and
the Portuguese page call the same functions in the same order (``tests/book/test_page_code.py``),
so a page cannot compute what its pair does not.
"""
