"""attnref: a tested, step-by-step reference of masked multi-head attention.

Folders, with dependencies pointing one way (reference -> worked -> render;
lm -> experiments -> cli), each rule proven by ``tests/test_layers.py``:

* `attention_ref.reference`: the textbook math, one pure function per formula (torch only);
* `attention_ref.worked`: the documents' worked examples and ``--input`` files;
* `attention_ref.render`: a small document model and its writers (no torch);
* `attention_ref.lm`: the character language model of Q02/Q03 (no mlflow);
* `attention_ref.experiments`: the experiments tracked in MLflow;

The book's build (its page helpers, figures, notebooks, the sentences of its recorded claims,
the simulated class) is a package of its own beside this one, ``attnref_book`` in ``book/``:
nothing here imports it, and attnref's wheel does not carry it.

Importing the package imports neither torch nor mlflow.
"""

__version__ = "0.1.0"
