r"""The group of a query head: which K/V head it reads, :math:`\gamma(i) = \lfloor i g/h \rfloor`.

Plain Python, no torch: the grouped-query reference (`attention_ref.reference.gqa`), the
worked examples' layout and the exercises' chain all read it from here, and the exercises'
key is written without importing torch.
"""

from __future__ import annotations


# --8<-- [start:kv_group]
def kv_group(i: int, h: int, g: int) -> int:
    r"""The K/V head of query head ``i`` (0-based): $\gamma(i) = \lfloor i g / h \rfloor$.

    ``h = 4``, ``g = 2``: query heads 0, 1 -> K/V head 0; 2, 3 -> K/V head 1.
    """
    if g < 1 or h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    if not 0 <= i < h:
        raise ValueError(f"query head {i} is not one of 0..{h - 1}")
    return i * g // h


# --8<-- [end:kv_group]


__all__ = ["kv_group"]
