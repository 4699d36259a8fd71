r"""Grouped-query attention as an exercise's feature (``gqa``): :math:`h` query heads sharing
:math:`g < h` K/V heads, query head :math:`i` reading K/V head :math:`\gamma(i) = \lfloor i
g/h \rfloor` (`attention_ref.reference.spec.kv_group`); :math:`g = 1` is multi-query
attention. Its option is ``--kv-heads`` (default :math:`h/2` for an even :math:`h`, else 1).

Its mistakes: query head :math:`i` (0-based) reads K/V head
:math:`\gamma(i) = \lfloor i / r \rfloor`, :math:`r = h/g`: consecutive query heads share one
(``repeat_interleave``, PyTorch's ``enable_gqa``, Llama's ``repeat_kv``). Students repeat the
K/V heads the other way, in turn, :math:`i \bmod g` (``K.repeat``'s order 1, 2, 1, 2:
``gqa_interleaved``), or give every query head the first K/V head (``gqa_one_kv``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from attention_ref.exercises.chain import Data, StageFn, key_name
from attention_ref.exercises.features import Feature, OptionError
from attention_ref.exercises.mistakes import LANGS, Kind, Mistake, one

# --- its mistakes: the K/V heads read in the wrong order, or one for all -------------------------


def _heads_list(heads: Iterable[int]) -> str:
    return ", ".join(str(j + 1) for j in heads)


def _reads(pick: Callable[[int], int]) -> dict[str, StageFn]:
    """Every query head ``i`` reads K/V head ``pick(i)`` (its K and its V)."""
    return {
        "K": lambda d, e, i: e[key_name(d), pick(i or 0)],
        "V": lambda d, e, i: e["kv.V", pick(i or 0)],
    }


def _group_fields(d: Data, wrong: list[int]) -> dict[str, dict[str, object]]:
    h, g = d.trace.h, d.g
    right = [d.group(i) for i in range(h)]
    return {
        lang: {
            "h": h,
            "g": g,
            "r": h // g,
            "wrong": _heads_list(wrong),
            "right": _heads_list(right),
        }
        for lang in LANGS
    }


def interleaved(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Query head ``i`` reads K/V head ``i mod g`` (needs ``1 < g < h``)."""
    g = d.g
    if not 1 < g < d.trace.h:
        return []
    wrong = [i % g for i in range(d.trace.h)]
    return one(kind, stages=_reads(lambda i: i % g), fields=_group_fields(d, wrong))


def one_kv(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Every query head reads K/V head 1 (needs ``1 < g < h``)."""
    if not 1 < d.g < d.trace.h:
        return []
    return one(kind, stages=_reads(lambda i: 0), fields=_group_fields(d, [0] * d.trace.h))


GQA_KINDS: Final[tuple[Kind, ...]] = (
    Kind("gqa_interleaved", {
        "en": "the K/V heads repeated in the wrong order: query heads 1 to {h} read K/V heads "
        "{wrong} (i mod g, in turn: the order of K.repeat) instead of {right} (each K/V head "
        "shared by {r} consecutive query heads)",
        "pt": "as cabeças K/V repetidas na ordem errada: as cabeças de consulta 1 a {h} leram "
        "as cabeças K/V {wrong} (i mod g, alternadas: a ordem de K.repeat) em vez de {right} "
        "(cada cabeça K/V compartilhada por {r} cabeças de consulta consecutivas)",
    }, interleaved),
    Kind("gqa_one_kv", {
        "en": "every query head read K/V head 1, as in multi-query attention, instead of its "
        "group's: K/V heads {right} for query heads 1 to {h}",
        "pt": "toda cabeça de consulta leu a cabeça K/V 1, como na atenção multi-consulta, em "
        "vez da do seu grupo: cabeças K/V {right} para as cabeças de consulta 1 a {h}",
    }, one_kv),
)  # fmt: skip


#: Its words, per language: what it writes over the homework's (the first feature's win),
#: and its own pieces.
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Exercise {seed}: grouped-query attention{with} by hand",
        "title_mqa": "Exercise {seed}: multi-query attention{with} by hand",
        "along": "grouped K/V heads",
        "data_heads": " Grouped-query attention: h = {h} query heads share g = {g} K/V "
        "head{s}{mqa}, d_k = d_v = d_model / h = {d_k}. The query heads are grouped in order, r "
        "= h / g = {r} per K/V head: query heads 1 … r read K/V head 1, query heads r + 1 … 2r "
        "read K/V head 2, and so on (the order of PyTorch's repeat_interleave and enable_gqa). "
        "Row convention: Q = X W_Q.",
        "mqa": " (one K/V head for all: multi-query attention)",
        "q1_text": "Compute Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ for the h = {h} query heads, and K⁽ʲ⁾ = X W_K⁽ʲ⁾ "
        "and V⁽ʲ⁾ = X W_V⁽ʲ⁾ for the g = {g} K/V head{s} (integers).",
        "q4_text": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j the K/V head of query head i's group), the "
        "concat [H⁽¹⁾ | … | H⁽ʰ⁾] and the output Concat · W_O.",
        "q4_nowo": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j the K/V head of query head i's group) and the "
        "output, the concat [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "lead": "For each query head i, with j the K/V head of its group, compute",
        "kv": "⁽ʲ⁾",
        "q_each": " (each query head i)",
        "k_of": "of ",
        "kv_each": " (each K/V head j)",
        "in_head": " in head i",
        "in_group": " in K/V head j of its group",
        "names_kv_note": "one per K/V head",
        "names_heads_note": ' (one per query head; "K" and "V" there, if you write them, are '
        "the key and value that head reads)",
        "key_q1": "The K/V heads are computed once each; each serves r = {r} consecutive query "
        "heads. With X and the weights in {{0, 1}}, the projections are integers.",
        "key_q5_more": " Each K/V head adds the gradients that reach it through each query head "
        "of its group: ∂K⁽ʲ⁾ = Σ ∂K⁽ⁱ⁾, ∂V⁽ʲ⁾ = Σ ∂V⁽ⁱ⁾, and ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾.",
    },
    "pt": {
        "title": "Exercício {seed}: atenção com consultas agrupadas (GQA){with} à mão",
        "title_mqa": "Exercício {seed}: atenção multi-consulta (MQA){with} à mão",
        "along": "cabeças K/V agrupadas",
        "data_heads": " Atenção com consultas agrupadas: h = {h} cabeças de consulta "
        "compartilham g = {g} cabeça{s} K/V{mqa}, d_k = d_v = d_model / h = {d_k}. As cabeças "
        "de consulta se agrupam em ordem, r = h / g = {r} por cabeça K/V: as cabeças de "
        "consulta 1 … r leem a cabeça K/V 1, as cabeças de consulta r + 1 … 2r leem a cabeça "
        "K/V 2, e assim por diante (a ordem do repeat_interleave e do enable_gqa do PyTorch). "
        "Convenção de linhas: Q = X W_Q.",
        "mqa": " (uma cabeça K/V para todas: atenção multi-consulta)",
        "q1_text": "Calcule Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ para as h = {h} cabeças de consulta, e K⁽ʲ⁾ = X "
        "W_K⁽ʲ⁾ e V⁽ʲ⁾ = X W_V⁽ʲ⁾ para a{s} g = {g} cabeça{s} K/V (inteiros).",
        "q4_text": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j a cabeça K/V do grupo da cabeça de consulta i), "
        "a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾] e a saída Concat · W_O.",
        "q4_nowo": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ʲ⁾ (j a cabeça K/V do grupo da cabeça de consulta i) "
        "e a saída, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "lead": "Para cada cabeça de consulta i, com j a cabeça K/V do seu grupo, calcule",
        "kv": "⁽ʲ⁾",
        "q_each": " (cada cabeça de consulta i)",
        "k_of": "",
        "kv_each": " (cada cabeça K/V j)",
        "in_head": " na cabeça i",
        "in_group": " na cabeça K/V j do seu grupo",
        "names_kv_note": "uma por cabeça K/V",
        "names_heads_note": ' (uma por cabeça de consulta; "K" e "V" ali, se você os escrever, '
        "são a chave e o valor que essa cabeça lê)",
        "key_q1": "As cabeças K/V são calculadas uma vez cada; cada uma serve r = {r} cabeças "
        "de consulta consecutivas. Com X e os pesos em {{0, 1}}, as projeções são inteiras.",
        "key_q5_more": " Cada cabeça K/V soma os gradientes que chegam por cada cabeça de "
        "consulta do seu grupo: ∂K⁽ʲ⁾ = Σ ∂K⁽ⁱ⁾, ∂V⁽ʲ⁾ = Σ ∂V⁽ⁱ⁾, e ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾.",
    },
}  # fmt: skip


class Grouped(Feature):
    """``gqa`` (module docstring)."""

    name = "gqa"
    option = "kv_heads"
    separate_kv = True
    shared_kv = True
    kinds = GQA_KINDS
    words = WORDS
    kinds_words = {  # noqa: RUF012
        "en": "the order of the K/V groups, one K/V head for all",
        "pt": "a ordem dos grupos K/V, uma cabeça K/V para todas",
    }
    #: a query head's K and V relabelled are its group's read another way (gqa_interleaved)
    drops = frozenset({"heads_relabelled"})

    def checked(self, opt: Any) -> object:
        h = opt.heads
        if h < 2:
            raise OptionError(
                {
                    "en": "--variant gqa needs h >= 2 query heads (--heads) to "
                    "share K/V heads, got h = 1",
                    "pt": "--variant gqa precisa "
                    "de h >= 2 cabeças de consulta (--heads) para compartilhar "
                    "cabeças K/V, veio h = 1",
                }
            )
        g = opt.kv_heads if opt.kv_heads is not None else (h // 2 if h % 2 == 0 else 1)
        if not 1 <= g < h or h % g:
            raise OptionError(
                {
                    "en": "--kv-heads must divide --heads and be fewer (g = h is --variant "
                    "mha): h = {h}, g = {g}",
                    "pt": "--kv-heads deve dividir --heads e ser "
                    "menor (g = h é --variant mha): h = {h}, g = {g}",
                },
                h=h,
                g=g,
            )
        return g

    def said(self, lang: str, opt: Any) -> dict[str, str]:
        w = WORDS[lang]
        return w | {"title": w["title_mqa"]} if opt.g == 1 else w

    def fields(self, opt: Any, lang: str) -> dict[str, object]:
        return {"mqa": WORDS[lang]["mqa"] if opt.g == 1 else ""}

    def kv_heads(self, opt: Any) -> int | None:
        return int(opt.kv_heads)

    def in_trace(self, trace: Any) -> bool:
        return bool(trace.g < trace.h)


GQA = Grouped()

__all__ = ["GQA", "GQA_KINDS", "Grouped", "interleaved", "one_kv"]
