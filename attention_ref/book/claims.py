"""What the pages of today's attention claim, computed where the pages and the tests can both
call it: the parts of Q02's model a change of attention leaves (GQA page), the decode-step
checks of the KV-cache page, the recorded class's counts (teaching page), the two recordings
of one seed (variants page). Each function returns numbers; the pages put them in words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention_ref.lm.config import ModelConfig

#: the parts `model_parts` reports, the two LayerNorms of each block and the final one as one
MODEL_PARTS = ("embeddings", "attention", "MLP", "LayerNorm", "output head")


def model_parts(cfg: ModelConfig) -> dict[str, int]:
    """The parameters of the character GPT built from ``cfg``, by part (`MODEL_PARTS`), read
    off the model itself (`attention_ref.experiments.model_parts.part_of` names each tensor)."""
    import torch

    from attention_ref.experiments.model_parts import parameter_groups
    from attention_ref.lm.model import CharGPT

    with torch.device("meta"):  # shapes only
        model = CharGPT(cfg)
    groups = parameter_groups((n, p.numel()) for n, p in model.named_parameters())
    out = dict.fromkeys(MODEL_PARTS, 0)
    for part, n in groups.items():
        out["LayerNorm" if "LayerNorm" in part else part] += n
    return out
