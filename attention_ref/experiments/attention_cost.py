"""What attention costs: the parameters the arm with attention and the arm without it differ by,
part by part (`Part`, `recorded_parts`), and the speed (`Cost`, `cost`).

Pure: no MLflow, no torch; the parts of a model are read off the model itself by
`attention_ref.experiments.model_parts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from attention_ref.experiments.arm_rows import ArmRow


class Part(StrEnum):
    """The parts of the character GPT its parameters belong to (a `ArmRow.param_groups` key)."""

    EMBEDDINGS = "embeddings"  # token and position embeddings
    ATTENTION = "attention"  # each block's attention sub-layer: W_Q, W_K, W_V, W_O, biases
    ATTENTION_NORM = "attention LayerNorm"  # each block's LayerNorm before its attention
    MLP = "MLP"
    MLP_NORM = "MLP LayerNorm"  # each block's LayerNorm before its MLP
    FINAL_NORM = "final LayerNorm"
    HEAD = "output head"


def recorded_parts(row: ArmRow) -> dict[str, int] | None:
    """The row's parameters by part, when recorded and adding up to its ``n_params``; else
    ``None`` (a breakdown that does not add up says nothing about which are attention)."""
    groups = row.param_groups
    if not groups or sum(groups.values()) != row.n_params:
        return None
    return dict(groups)


@dataclass(frozen=True)
class Cost:
    """What attention costs: the parameters the arms differ by, and the speed."""

    with_attention: ArmRow
    without: ArmRow
    difference: int  # n_params with attention - n_params without
    #: the parameters of the attention sub-layers of the arm with attention (None: its
    #: breakdown is not recorded)
    attention: int | None
    #: part -> how many more parameters the arm with attention has there (None: a breakdown
    #: is missing); the parts that do not differ are left out
    differing: dict[str, int] | None
    #: tokens/s without attention / with it
    speedup: float

    @property
    def faster(self) -> bool:
        """The model without attention trains at more tokens/s."""
        return self.without.tokens_per_sec > self.with_attention.tokens_per_sec


def cost(mh: ArmRow, no: ArmRow) -> Cost:
    """The parameters and the speed of the arm with attention against the arm without it,
    each part read from the rows' breakdowns (`recorded_parts`)."""
    mine, theirs = recorded_parts(mh), recorded_parts(no)
    differing = None
    if mine is not None and theirs is not None:
        parts = [p for p in Part if p in mine or p in theirs]
        parts += sorted((set(mine) | set(theirs)) - set(parts))  # a part this code does not name
        differing = {p: mine.get(p, 0) - theirs.get(p, 0) for p in parts}
        differing = {p: d for p, d in differing.items() if d}
    return Cost(
        with_attention=mh,
        without=no,
        difference=mh.n_params - no.n_params,
        attention=None if mine is None else mine.get(Part.ATTENTION, 0),
        differing=differing,
        speedup=no.tokens_per_sec / mh.tokens_per_sec,
    )
