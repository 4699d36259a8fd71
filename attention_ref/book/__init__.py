"""The book's build: what the pages' code blocks call and the pages as notebooks.

Outside the library's layers: it may use every folder of `attention_ref`, and no folder of the
library imports it (``tests/test_layers.py``).

* `attention_ref.book.pages`: the page helpers (listings from the source, display math,
  tables, checks that fail the build, the recorded results, numbers as each language writes
  them).
* `attention_ref.book.figures`: the figures, computed by the reference and drawn as SVG.
* `attention_ref.book.module_map`: the API page's map of every module, read from the files.
* `attention_ref.book.notebooks`: each page as a Jupyter notebook (text work, no torch).
* `attention_ref.book.kernel`: what runs in such a notebook (its set-up and API cells).
"""
