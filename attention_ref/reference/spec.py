r"""What the attention's spec fixes, in plain Python (no torch): which K/V head a query head
reads, :math:`\gamma(i) = \lfloor i g/h \rfloor` (`kv_group`), RoPE's base
(`ROPE_BASE`) and ALiBi's slopes (`alibi_slopes`).

The grouped-query reference (`attention_ref.reference.gqa`), RoPE's
(`attention_ref.reference.rope`), the worked examples' layout, the exercises' chain and the
language model's configuration all read them from here, one home each; the exercises' key and
``attnref --help`` import no torch for them.
"""

from __future__ import annotations

import math
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


def alibi_slopes(h: int) -> list[float]:
    r"""ALiBi's slopes, one per head: $m_i = 2^{-8 i / h}$ for $i = 1, \dots, h$.

    For 8 heads: $\tfrac12, \tfrac14, \dots, \tfrac1{256}$. When ``h`` is not a power of 2,
    the paper's rule: the slopes of the power of 2 just below ``h``, then every other slope of
    the power of 2 just above (``ofirpress/attention_with_linear_biases``).
    """
    if isinstance(h, bool) or not isinstance(h, int) or h < 1:
        raise ValueError(f"the number of heads must be a whole number >= 1, got {h!r}")

    def power_of_2(n: int) -> list[float]:
        return [2.0 ** (-8.0 * i / n) for i in range(1, n + 1)]

    low = 2 ** math.floor(math.log2(h))
    return power_of_2(low) + power_of_2(2 * low)[0::2][: h - low]


__all__ = ["ROPE_BASE", "alibi_slopes", "kv_group"]
