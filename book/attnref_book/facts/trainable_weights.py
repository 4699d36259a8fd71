"""The facts of the trainable-weights page (``docs/trainable-weights.md``,
``docs/trainable-weights.pt.md``), computed once and said in each language.

Each function is one code block of the page and returns what it prints: seed 001's code
("Your journey starts with one step") run with the weights it draws, checked against the
context vectors rasbt's chapter 3 notebook prints, and seed 001's mask line run as written.
"""

from __future__ import annotations

from typing import Final

import torch

from attention_ref.render import said
from attention_ref.worked.registry import explain_example
from attention_ref.worked.words_documents import JOURNEY
from attention_ref.worked.your_journey_starts import BOOK_JOURNEY_SELF, journey_numbers
from attnref_book.figures import attention_heatmaps, figure
from attnref_book.pages import check, example
from attnref_book.worked_pt import words_of

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "caption": "The weights A of SelfAttention_v2 on the {n} tokens (no mask): one row per "
        "query token, one column per key token; darker cells are larger weights.",
        "label": "SelfAttention_v2's printed output",
        "detail": "largest difference from the notebook's printed context vectors: {diff} (it "
        "prints 4 decimals: at most half a unit of the 4th, {bound}).",
    },
    "pt": {
        "caption": "Os pesos A de SelfAttention_v2 nos {n} tokens (sem máscara): uma linha por "
        "consulta, uma coluna por chave; quanto mais escura a célula, maior o peso.",
        "label": "a saída impressa de SelfAttention_v2",
        "detail": "maior diferença em relação aos vetores de contexto impressos pelo notebook: "
        "{diff} (ele imprime 4 casas decimais: no máximo meia unidade da 4ª, {bound}).",
    },
}

#: the worked example of seed 001's code (`attnref explain -e your-journey-starts`)
EXAMPLE: Final = "your-journey-starts"
#: the notebook prints 4 decimals: half a unit of the 4th
BOUND: Final = 5e-5


def journey_steps(lang: str) -> str:
    """Every step of `attnref explain -e your-journey-starts` in ``lang``, as the page shows
    them (step headings at level 3)."""
    return example(EXAMPLE, heading=3, words=words_of(explain_example(EXAMPLE, lang)))


def self_attention(lang: str) -> str:
    """SelfAttention_v2 with the weights seed 001's code draws (``torch.manual_seed(789)``,
    ``nn.Linear``): the example's steps up to causal attention, ``Q = X W_query``,
    ``K = X W_key``, ``V = X W_value``, ``A = softmax(Q Kᵀ / √d_k)``, ``Z = A V``; the heatmap
    of A; and the check that Z is the notebook's printed context vectors to within half a unit
    of their 4th decimal."""
    r = journey_numbers()["self"]["trace"]
    want = torch.tensor(BOOK_JOURNEY_SELF, dtype=r.output.dtype)
    diff = float((r.output - want).abs().max())
    w = WORDS[lang]
    steps = journey_steps(lang).split("### " + JOURNEY[lang]["causal"])[0]
    caption = w["caption"].format(n=len(r.tokens))
    heat = figure(attention_heatmaps(r, precision=2, lang=lang), caption)
    detail = w["detail"].format(diff=said(diff, ".2e", lang), bound=said(BOUND, ".1e", lang))
    return "\n".join([steps, heat, check(w["label"], diff < BOUND, detail, lang=lang)])


def mask_line(lang: str) -> str:
    """Seed 001's mask line run as written on the scores of the notebook's CausalAttention:
    the example's step "Seed 001's mask line, run as written", alone."""
    mask_title = "### " + JOURNEY[lang]["mask_title"] + "\n"
    return journey_steps(lang).split(mask_title, 1)[1].split("\n### ", 1)[0]
