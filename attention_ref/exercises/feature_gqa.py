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


class Grouped(Feature):
    """``gqa`` (module docstring)."""

    name = "gqa"
    option = "kv_heads"
    separate_kv = True
    shared_kv = True
    kinds = GQA_KINDS
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

    def kv_heads(self, opt: Any) -> int | None:
        return int(opt.kv_heads)

    def in_trace(self, trace: Any) -> bool:
        return bool(trace.g < trace.h)


GQA = Grouped()

__all__ = ["GQA", "GQA_KINDS", "Grouped", "interleaved", "one_kv"]
