"""Whether the arms may be compared at all: which of the seed, the number of steps, the data and
the options they share (`SHARED_OPTIONS`) are the same for every arm (`comparability`).

Pure: no MLflow, no torch; a row is anything with steps, data and options (`Compared`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: the options arms must share to be compared, by the words a sentence uses for them (keys of
#: the flat `TrainConfig`, as MLflow params); the seed, the steps and the data come on top
SHARED_OPTIONS: dict[str, tuple[str, ...]] = {
    "model shape": (
        "n_embd",
        "n_layer",
        "n_head",
        "kv_heads",
        "pos",
        "window",
        "block_size",
        "dropout",
    ),
    "schedule": ("batch_size", "lr", "min_lr", "warmup_steps", "weight_decay", "grad_clip"),
    "evaluation": ("eval_interval", "eval_batches"),
}

#: the value a row that does not record an option ran with: these options came after the first
#: recorded runs, whose code had only this behaviour (multi-head, learned positions, no window)
RECORDED_BEFORE: dict[str, str] = {"kv_heads": "0", "pos": "learned", "window": "0"}

#: what a sentence calls each compared key (one aspect may hold several options)
ASPECTS: dict[str, tuple[str, ...]] = {
    "seed": ("seed",),
    "number of steps": ("steps",),
    "data": ("data",),
    **SHARED_OPTIONS,
}


@dataclass(frozen=True)
class Comparability:
    """Which of the seed, steps, data and shared options the arms have in common."""

    same: dict[str, str]  # key -> the one value every arm has
    differ: dict[str, dict[str, str]]  # key -> arm -> value
    unknown: list[str]  # keys some arm does not record

    @property
    def comparable(self) -> bool:
        """Every key recorded, and the same for every arm."""
        return not self.differ and not self.unknown


class Compared(Protocol):
    """What `comparability` reads of a row: its steps, its data and its options."""

    @property
    def steps(self) -> int: ...
    @property
    def data_sha256(self) -> str | None: ...
    @property
    def config(self) -> Mapping[str, str]: ...


#: every key `comparability` compares by default: the seed, steps, data and shared options
COMPARED_KEYS: tuple[str, ...] = tuple(k for keys in ASPECTS.values() for k in keys)


def comparability(
    rows: Sequence[Compared],
    keys: Sequence[str] = COMPARED_KEYS,
    name: Callable[[Any], str] = lambda r: r.attention,
) -> Comparability:
    """Compare the arms' seed, number of steps, data and `SHARED_OPTIONS` (or ``keys``), key by
    key; ``name`` says which arm a row is (its attention mode by default)."""

    def values(key: str) -> dict[str, str | None]:
        if key == "steps":
            return {name(r): str(r.steps) for r in rows}
        if key == "data":
            return {name(r): r.data_sha256 for r in rows}

        def value(r: Compared) -> str | None:
            v = r.config.get(key, RECORDED_BEFORE.get(key))
            return None if v is None else str(v)

        return {name(r): value(r) for r in rows}

    same: dict[str, str] = {}
    differ: dict[str, dict[str, str]] = {}
    unknown: list[str] = []
    for key in keys:
        by_arm = values(key)
        known = {a: v for a, v in by_arm.items() if v is not None}
        if len(set(known.values())) > 1:
            differ[key] = known
        elif len(known) < len(by_arm):
            unknown.append(key)
        elif known:
            same[key] = next(iter(known.values()))
    return Comparability(same, differ, unknown)
