"""Comparing computed numbers with the numbers a document prints."""

from __future__ import annotations

import torch

DOC_3 = 0.5e-3 + 1e-12  # "matches to 3 decimals": |computed - printed| <= half a unit of 1e-3


def assert_doc(computed: torch.Tensor, printed: list, tol: float = DOC_3) -> None:
    """Computed values equal the printed ones to the document's decimals."""
    expected = torch.tensor(printed, dtype=torch.float64)
    assert computed.shape == expected.shape
    err = (computed - expected).abs().max().item()
    assert err <= tol, f"max deviation {err:.2e} from the document\n{computed}\nvs\n{expected}"
