"""Where a mistake shows: shared by the exercises' tests of the catalogue."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from attention_ref.exercises.chain import Data, Key, chain_keys


def shown_steps(
    d: Data, exact: dict[Key, np.ndarray], wrong: dict[Key, np.ndarray], names: Collection
) -> list[Key]:
    """The steps named in ``names`` where ``wrong`` differs from ``exact`` at 3 decimals (or in
    shape), in the order of the computation."""
    return [
        k
        for k in chain_keys(d, d.forward)
        if k[0] in names
        and k in wrong
        and (
            wrong[k].shape != exact[k].shape
            or not np.allclose(wrong[k], exact[k], atol=1e-3, equal_nan=True)
        )
    ]
