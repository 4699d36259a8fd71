"""The documents' worked examples as data: inputs, weights and the values they print.

Nothing here computes anything. Plain nested lists of floats (rows of a matrix) keep the
module free of torch; `attention_ref.explain` turns them into tensors and runs the
reference. Each ``DOC_*`` value is copied from the seed as printed there, so a test can compare
the reference with the document.
"""

from __future__ import annotations

from typing import Final

Matrix = list[list[float]]

# --- seed 000: "Life is awesome" (MAE5911 homework, Questão 01) ------------------------------

LIFE_TOKENS: Final = ("Life", "is", "awesome")

#: X in R^{3x4}: one row per token.
LIFE_X: Final[Matrix] = [
    [1, 0, 1, 0],
    [0, 1, 1, 0],
    [1, 1, 0, 1],
]

#: Per-head weights W^(i) in R^{4x2}, i = 1, 2 (the document's "Head 1", "Head 2").
LIFE_W_Q: Final[list[Matrix]] = [
    [[1, 0], [0, 1], [1, 0], [0, 1]],
    [[0, 1], [1, 0], [0, 1], [1, 0]],
]
LIFE_W_K: Final[list[Matrix]] = [
    [[1, 1], [0, 1], [1, 0], [0, 1]],
    [[1, 0], [1, 1], [0, 1], [1, 0]],
]
LIFE_W_V: Final[list[Matrix]] = [
    [[1, 0], [0, 1], [1, 1], [0, 1]],
    [[0, 1], [1, 0], [1, 0], [0, 1]],
]
#: W_O = I_4 "por simplicidade".
LIFE_W_O: Final[Matrix] = [
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0, 0, 0, 1],
]

# What the document prints, per head (index 0 = Head 1).
DOC_LIFE_Q: Final[list[Matrix]] = [
    [[2, 0], [1, 1], [1, 2]],
    [[0, 2], [1, 1], [2, 1]],
]
DOC_LIFE_K: Final[list[Matrix]] = [
    [[2, 1], [1, 1], [1, 3]],
    [[1, 1], [1, 2], [3, 1]],
]
DOC_LIFE_V: Final[list[Matrix]] = [
    [[2, 1], [1, 2], [1, 2]],
    [[1, 1], [2, 0], [1, 2]],
]
#: The document writes S^(i) = (1/sqrt(2)) * [this matrix], i.e. this is Q^(i) K^(i)T.
DOC_LIFE_QKT: Final[list[Matrix]] = [
    [[4, 2, 2], [3, 2, 4], [4, 3, 7]],
    [[2, 4, 2], [2, 3, 4], [3, 4, 7]],
]
#: M with -inf above the diagonal.
DOC_LIFE_M: Final[Matrix] = [
    [0, float("-inf"), float("-inf")],
    [0, 0, float("-inf")],
    [0, 0, 0],
]
DOC_LIFE_A: Final[list[Matrix]] = [
    [[1.000, 0.000, 0.000], [0.670, 0.330, 0.000], [0.102, 0.050, 0.848]],
    [[1.000, 0.000, 0.000], [0.330, 0.670, 0.000], [0.050, 0.102, 0.848]],
]
DOC_LIFE_H: Final[list[Matrix]] = [
    [[2.000, 1.000], [1.670, 1.330], [1.102, 1.898]],
    [[1.000, 1.000], [1.670, 0.330], [1.102, 1.747]],
]
DOC_LIFE_CONCAT: Final[Matrix] = [
    [2.000, 1.000, 1.000, 1.000],
    [1.670, 1.330, 1.670, 0.330],
    [1.102, 1.898, 1.102, 1.747],
]
DOC_LIFE_OUTPUT: Final[Matrix] = DOC_LIFE_CONCAT  # W_O = I_4: the output is the concat

# --- seeds 001 / 004: "Hello shiny sun!" ------------------------------------------------------

HELLO_TOKENS: Final = ("Hello", "shiny", "sun")
HELLO_X: Final[Matrix] = [
    [0.34, 0.22, 0.54],
    [0.53, 0.34, 0.98],
    [0.29, 0.54, 0.93],
]
HELLO_QUERY: Final = "shiny"
#: The document's weighted embeddings: one row per token (Hello, shiny, sun), as printed in
#: "context vector=[0.0779+0.2156+0.1057, 0.0504+0.1382+0.1972, 0.1237+0.3983+0.3390]".
DOC_HELLO_WEIGHTED: Final[Matrix] = [
    [0.0779, 0.0504, 0.1237],
    [0.2156, 0.1382, 0.3983],
    [0.1057, 0.1972, 0.3390],
]
DOC_HELLO_CONTEXT: Final[list[float]] = [0.3992, 0.3858, 0.8610]
#: Decimals the document works with in its intermediate steps.
DOC_HELLO_DECIMALS: Final = 4

# --- seed 001 code: "Your journey starts with one step" (rasbt LLMs-from-scratch ch03) --------

JOURNEY_TOKENS: Final = ("Your", "journey", "starts", "with", "one", "step")
JOURNEY_X: Final[Matrix] = [
    [0.43, 0.15, 0.89],
    [0.55, 0.87, 0.66],
    [0.57, 0.85, 0.64],
    [0.22, 0.58, 0.33],
    [0.77, 0.25, 0.10],
    [0.05, 0.80, 0.55],
]
JOURNEY_D_IN: Final = 3
JOURNEY_D_OUT: Final = 2
#: Seeds of the document's code: ``torch.manual_seed(789)`` before ``SelfAttention_v2``,
#: ``torch.manual_seed(123)`` before ``CausalAttention`` and before ``MultiHeadAttention``.
JOURNEY_SEED_SELF: Final = 789
JOURNEY_SEED_CAUSAL: Final = 123
JOURNEY_SEED_MULTIHEAD: Final = 123
JOURNEY_HEADS: Final = 2
#: What that code prints in rasbt's ch03 notebook (the seed quotes the code, not its output;
#: these are the notebook's printed values, 4 decimals). Row i = token i.
BOOK_JOURNEY_SELF: Final[Matrix] = [
    [-0.0739, 0.0713],
    [-0.0748, 0.0703],
    [-0.0749, 0.0702],
    [-0.0760, 0.0685],
    [-0.0763, 0.0679],
    [-0.0754, 0.0693],
]
BOOK_JOURNEY_CAUSAL: Final[Matrix] = [
    [-0.4519, 0.2216],
    [-0.5874, 0.0058],
    [-0.6300, -0.0632],
    [-0.5675, -0.0843],
    [-0.5526, -0.0981],
    [-0.5299, -0.1081],
]
BOOK_JOURNEY_MULTIHEAD: Final[Matrix] = [
    [0.3190, 0.4858],
    [0.2943, 0.3897],
    [0.2856, 0.3593],
    [0.2693, 0.3873],
    [0.2639, 0.3928],
    [0.2575, 0.4028],
]

# --- seed 002: "Я хочу пиццу <eos>" (shapes walkthrough) --------------------------------------

PIZZA_TOKENS: Final = ("Я", "Хочу", "Пиццу", "<eos>")
PIZZA_BATCH: Final = 1
PIZZA_SEQ_LEN: Final = 4
PIZZA_D_MODEL: Final = 6
PIZZA_HEADS: Final = 3
#: The document's picture 2 numbers the entries of Q row by row: token t (0-based) holds
#: 6t+1 .. 6t+6, so "Пиццу" (t = 2) is [13..18]. With W_Q = I this X gives that Q.
PIZZA_X: Final[Matrix] = [[float(6 * t + j + 1) for j in range(6)] for t in range(4)]
DOC_PIZZA_TOKEN: Final = "Пиццу"
DOC_PIZZA_ROW: Final[list[float]] = [13, 14, 15, 16, 17, 18]
DOC_PIZZA_SPLIT: Final[Matrix] = [[13, 14], [15, 16], [17, 18]]
#: The shapes the document lists, in its order.
DOC_PIZZA_SHAPES: Final[dict[str, tuple[int, ...]]] = {
    "X": (1, 4, 6),
    "W": (6, 6),
    "Q": (1, 4, 6),
    "Q after reshape": (1, 4, 3, 2),
    "Q after swap": (1, 3, 4, 2),
    "head output": (1, 3, 4, 2),
    "after swap back": (1, 4, 3, 2),
    "after reshape back": (1, 4, 6),
    "W_O": (6, 6),
    "final output": (1, 4, 6),
}

# --- seed 003: RoBERTa with 4 and 12 heads ----------------------------------------------------

DOC_ROBERTA_PARAMS: Final = 109_514_298  # both head counts, as the document prints

#: Names accepted by ``attnref explain --example``.
EXAMPLE_NAMES: Final = ("life-is-awesome", "hello-shiny-sun", "your-journey-starts", "i-want-pizza")
