"""The documents' worked examples, computed with the reference and laid out step by step.

One module per example holds its data (inputs, weights, the ``DOC_*`` values the document
prints), its numbers and its sections; `attention_ref.worked.registry` names them for
``attnref explain``; `attention_ref.inputs.attention_input` reads ``--input`` files and
`attention_ref.worked.your_input` explains them; `attention_ref.worked.trace` holds what the
examples share. Importing this package, the registry or ``inputs`` imports no torch.
"""
