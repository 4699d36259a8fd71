"""attnref: a tested, step-by-step reference of masked multi-head attention.

Modules: :mod:`~attention_ref.reference` (the formulas), :mod:`~attention_ref.examples`
(the documents' numbers), :mod:`~attention_ref.explain` and :mod:`~attention_ref.render`
(step-by-step output), :mod:`~attention_ref.inputs` (a user's JSON),
:mod:`~attention_ref.params` (parameter counts), :mod:`~attention_ref.model` (the char GPT).

Importing the package imports neither torch nor mlflow.
"""

__version__ = "0.1.0"
