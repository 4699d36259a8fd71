"""Reading what a user hands in: the one bounded JSON loader (`attention_ref.inputs.jsonfile`),
the validation of a user's numbers for ``explain --input`` (`attention_ref.inputs.
attention_input`, its words per language in `attention_ref.inputs.input_words`) and the
one-line error they raise (`attention_ref.inputs.errors`).

Below everything that reads a file: it imports nothing of the package and no torch.
"""
