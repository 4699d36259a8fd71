r"""One character drawn from the model's last logits: temperature, top-k, inverse CDF.

$$
p_i = \frac{e^{z_i/\tau}}{\sum_j e^{z_j/\tau}}
\quad (\text{top-}k: z_j = -\infty \text{ outside the } k \text{ largest}),
\qquad i^\ast = \min\{\, i : \textstyle\sum_{j \le i} p_j > u \,\}
$$

with ``u`` uniform in [0, 1) from Python's ``random.Random(seed)``: the same seed gives the same
``u`` on every machine, and the draw needs nothing but the logits. `attention_ref.lm.sampling`
(torch) and `attention_ref.lm.numpy_model` (no torch) both draw with `draw_index`, so the same
model and seed give the same characters on either path (`tests/lm/test_numpy_model.py`). Imports
numpy only.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["draw_index", "uniforms"]


def uniforms(seed: int) -> Iterator[float]:
    """The endless stream of ``u`` for ``seed``: ``random.Random(seed).random()``, one per draw."""
    rng = random.Random(seed)
    while True:
        yield rng.random()


def draw_index(logits: ArrayLike, temperature: float, top_k: int | None, u: float) -> int:
    """The index drawn by the inverse CDF of ``softmax(logits / temperature)`` at ``u``.

    Computed in float64 from the logits as given (one row). ``top_k``: only the ``k`` largest
    logits keep their weight (ties with the k-th kept too, as ``torch.topk`` then ``<`` does).
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    z = np.asarray(logits, dtype=np.float64).reshape(-1) / temperature
    if top_k is not None and top_k < z.size:
        kth = np.partition(z, z.size - top_k)[z.size - top_k]  # the k-th largest
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z - z.max())
    cdf = np.cumsum(p)
    i = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
    return min(i, z.size - 1)
