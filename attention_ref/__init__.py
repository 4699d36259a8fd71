"""attnref: a tested, step-by-step reference of masked multi-head attention.

Folders, with dependencies pointing one way (reference -> worked -> render;
lm -> experiments -> cli), each rule proven by ``tests/test_layers.py``:

* `attention_ref.reference`: the textbook math, one pure function per formula (torch only);
* `attention_ref.worked`: the documents' worked examples and ``--input`` files;
* `attention_ref.render`: a small document model and its writers (no torch);
* `attention_ref.lm`: the character language model of Q02/Q03 (no mlflow);
* `attention_ref.experiments`: the experiments tracked in MLflow;
* `attention_ref.book`: the book's build, outside the layers (none of them imports it): the
  page helpers and figures of its build-time code blocks, its pages as Jupyter notebooks.

Importing the package imports neither torch nor mlflow.
"""

__version__ = "0.1.0"
