"""attnref: a tested, step-by-step reference of masked multi-head attention.

Folders, with dependencies pointing one way (reference -> worked -> render;
lm -> experiments -> cli), each rule proven by ``tests/test_layers.py``:

* `attention_ref.reference`: the textbook math, one pure function per formula (torch only);
* `attention_ref.worked`: the documents' worked examples and ``--input`` files;
* `attention_ref.render`: a small document model and its writers (no torch);
* `attention_ref.lm`: the character language model of Q02/Q03 (no mlflow);
* `attention_ref.experiments`: the experiments tracked in MLflow;
* `attention_ref.book`: helpers of the book's build-time code blocks.
* `attention_ref.notebooks`: the book's pages as Jupyter notebooks (no torch).

Importing the package imports neither torch nor mlflow.
"""

__version__ = "0.1.0"
