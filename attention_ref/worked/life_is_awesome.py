r"""Seed 000 (MAE5911 homework, Questão 01): masked multi-head attention on "Life is awesome".

``d_model = 4``, ``h = 2`` heads with the given ``W_Q^{(i)}, W_K^{(i)}, W_V^{(i)} ∈ R^{4×2}``,
causal mask, ``W_O = I_4``. The data is the document's; each ``DOC_*`` value is copied from it
as printed, so a test can compare the reference with the document. `notation_notes` flags,
with the computed shapes, where the document's notation says something other than its numbers:
``MultiHead(Q, K, V)`` while it projects ``X``, the result labelled ``Attention(Q, K, V)``, and
a stray ``∈ H ∈``.
"""

from __future__ import annotations

from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import Explanation, Matrix, Section
from attention_ref.worked.layout import trace_sections
from attention_ref.worked.trace import t, trace_to_json
from attention_ref.worked.words import LIFE

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


def life_trace(M: Tensor | None = None) -> ref.AttentionTrace:
    r"""The document's numbers through `attention_ref.reference.masked_multihead_attention`.

    ``\operatorname{MultiHead}(X) = \operatorname{Concat}(H^{(1)} | H^{(2)}) W_O`` with
    ``H^{(i)} = \operatorname{softmax}(Q^{(i)} K^{(i)\top} / \sqrt{2} + M) V^{(i)}``; ``M`` is
    the causal mask, or the additive mask given (today's window and ALiBi start from here).
    """
    return ref.masked_multihead_attention(
        t(LIFE_X), t(LIFE_W_Q), t(LIFE_W_K), t(LIFE_W_V), t(LIFE_W_O), M=M, tokens=LIFE_TOKENS
    )


def notation_notes(trace: ref.AttentionTrace, lang: str = "en") -> list[str]:
    """The document's three notation slips, each with the computed fact that settles it.

    ``lang`` is ``"en"`` (the explanation, the English page) or ``"pt"`` (the Portuguese page).
    """
    X = trace.X
    projects_x = all(
        torch.equal(trace.head(i)["Q"], X @ t(LIFE_W_Q)[i]) for i in range(len(LIFE_W_Q))
    )
    n, d = (int(v) for v in trace.output.shape)
    head_shape = tuple(int(v) for v in trace.head(0)["H"].shape)
    w = LIFE[lang]
    return [
        w["multihead"].format(projects=w["projects" if projects_x else "not_projects"]),
        w["label"].format(shape=(n, d), head_shape=head_shape),
        w["stray"].format(n=n, d=d),
    ]


def explain(lang: str = "en") -> Explanation:
    """Seed 000: "Life is awesome", d_model = 4, h = 2, causal mask, W_O = I_4; the words are
    `attention_ref.worked.words.LIFE` and `attention_ref.worked.words.TRACE` in ``lang``."""
    trace = life_trace()
    w = LIFE[lang]
    shape = {"d": trace.d_model, "h": trace.h}
    sections = trace_sections(trace, W_O_note=w["wo_note"].format(**shape), lang=lang)
    sections.append(Section(title=w["notation"], text=" ".join(notation_notes(trace, lang))))
    return Explanation(
        title=w["title"],
        source=w["source"].format(**shape),
        sections=sections,
        data=trace_to_json(trace),
        lang=lang,
    )
