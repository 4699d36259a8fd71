"""The book's build: what the pages' code blocks call and the pages as notebooks.

A distribution of its own (``book/pyproject.toml``), beside attnref: attnref's wheel carries
only what its users run (``tests/test_packaging.py``). It may use every folder of
`attention_ref`, and no module of attnref imports it (``tests/test_layers.py``).

* `attnref_book.pages`: the page helpers (listings from the source, display math,
  tables, checks that fail the build, the recorded results, numbers as each language writes
  them).
* `attnref_book.figures`: the figures, computed by the reference and drawn as SVG.
* `attnref_book.module_map`: the API page's map of every module, read from the files.
* `attnref_book.notebooks`: each page as a Jupyter notebook (text work, no torch).
* `attnref_book.kernel`: what runs in such a notebook (its set-up and API cells).
* `attnref_book.claims`, `.speed_claims`, `.gpu_claims`, `.conditions`, `.recorded_run`: the
  sentences the pages write about recorded runs, each from the numbers it states.
* `attnref_book.worked_pt`: the worked examples' Portuguese words.
* `attnref_book.simulated`: a simulated class and its record (the teaching page's figures).
"""
