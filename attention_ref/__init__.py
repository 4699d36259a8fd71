"""attnref: a tested, step-by-step reference of masked multi-head attention.

Modules: `attention_ref.reference` (the formulas), `attention_ref.examples`
(the documents' numbers), `attention_ref.explain` and `attention_ref.render`
(step-by-step output), `attention_ref.inputs` (a user's JSON),
`attention_ref.params` (parameter counts), `attention_ref.model` (the char GPT).

Importing the package imports neither torch nor mlflow.
"""

__version__ = "0.1.0"
