"""What issue 58 item 9 (one name per quantity) changed in the homework's pinned documents,
each as ``(now, before)``: `tests.cli.test_variant_exercise.pinned` puts the words back before
it compares the bytes with the pins of 899fd86 (each must be there, once)."""

from __future__ import annotations

from typing import Final

#: issue 58 item 9, one name per quantity: the scores' question names "scores" (Q Kᵀ) and "S"
#: (Q Kᵀ / √d_k) as answer.json does, where its title called S the (scaled) scores; and a
#: backward exercise's "exercise" object (answer.json's, and the statement's copy of it) names
#: its --backward, so that check draws that exercise and its header prints the whole command
SCORES_NAMED: Final[dict[tuple[str, str], tuple[tuple[str, str], ...]]] = {
    ("statement.md", "en"): (
        ("## Question 2: scores and S = scores / √d_k", "## Question 2: scaled scores"),
        (
            'Compute the scores Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ ("scores") and S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, the scores '
            'divided by √d_k ("S").',
            "Compute Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ and S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k.",
        ),
    ),
    ("statement.md", "pt"): (
        ("## Questão 2: scores e S = scores / √d_k", "## Questão 2: scores divididos por √d_k"),
        (
            'Calcule os scores Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ ("scores") e S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, os scores '
            'divididos por √d_k ("S").',
            "Calcule Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ e S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k.",
        ),
    ),
    ("statement.tex", "en"): (
        (
            "{Question 2: scores and S = scores / $\\sqrt{d_k}$}",
            "{Question 2: scaled scores}",
        ),
        (
            "Compute the scores $Q^{(i)} K^{(i)\\top}$ (``scores'') and $S^{(i)} = Q^{(i)} "
            "K^{(i)\\top} / \\sqrt{d_k}$, the scores divided by $\\sqrt{d_k}$ (``S'').",
            "Compute $Q^{(i)} K^{(i)\\top}$ and $S^{(i)} = Q^{(i)} K^{(i)\\top} / \\sqrt{d_k}$.",
        ),
    ),
    ("statement.tex", "pt"): (
        (
            "{Quest\\~{a}o 2: scores e S = scores / $\\sqrt{d_k}$}",
            "{Quest\\~{a}o 2: scores divididos por $\\sqrt{d_k}$}",
        ),
        (
            "Calcule os scores $Q^{(i)} K^{(i)\\top}$ (``scores'') e $S^{(i)} = Q^{(i)} "
            "K^{(i)\\top} / \\sqrt{d_k}$, os scores divididos por $\\sqrt{d_k}$ (``S'').",
            "Calcule $Q^{(i)} K^{(i)\\top}$ e $S^{(i)} = Q^{(i)} K^{(i)\\top} / \\sqrt{d_k}$.",
        ),
    ),
}
BACKWARD_NAMED: Final[dict[str, tuple[str, str]]] = {
    "answer.json": ('"decimals": 3,\n    "backward": true\n', '"decimals": 3\n'),
    "statement.md": ('"decimals": 3, "backward": true}', '"decimals": 3}'),
    "statement.tex": ("``decimals'': 3, ``backward'': true\\}", "``decimals'': 3\\}"),
}
