r"""What the attention's spec fixes, in plain Python (no torch): which K/V head a query head
reads, :math:`\gamma(i) = \lfloor i g/h \rfloor` (`kv_group`), and RoPE's base
(`ROPE_BASE`).

The grouped-query reference (`attention_ref.reference.gqa`), RoPE's
(`attention_ref.reference.rope`), the worked examples' layout, the exercises' chain and the
language model's configuration all read them from here, one home each; the exercises' key and
``attnref --help`` import no torch for them.
"""

from __future__ import annotations

from typing import Final

#: RoFormer's base: pair :math:`p` turns by :math:`\text{base}^{-2p/d_k}` radians per position
#: (Llama 3's is 500000.0, ``rope_theta`` in its configuration).
ROPE_BASE: Final = 10000.0


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


__all__ = ["ROPE_BASE", "kv_group"]
