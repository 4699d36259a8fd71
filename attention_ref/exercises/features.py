r"""What an exercise's attention has beside the homework's: its features, and the presets that
name them.

One problem model: ``h`` query heads sharing ``g`` K/V heads, a mask (causal, none, or a
sliding window of ``w`` keys) and positions (none, or RoPE). Three features set a problem
apart from the homework's masked multi-head attention (:math:`g = h`, the causal mask, no
rotation):

- ``gqa``: :math:`g < h`, each K/V head shared by :math:`r = h/g` consecutive query heads;
- ``window``: the causal mask narrowed to the last ``w`` keys;
- ``rope``: the queries and the keys rotated by their positions (RoFormer's pairs).

A problem's name is its features joined by ``+`` in that order (``gqa+rope``), or ``mha``
with none: the four presets of ``attnref exercise --variant`` (``mha``, ``gqa``, ``window``,
``rope``) are the names of one feature or none, so their stored forms (an answer's
``"exercise"``, an assignment's definition) are what they were before any combination could
be drawn. Code decides by a feature (`Features.grouped`, `Features.windowed`,
`Features.rotary`), never by a name: `PRESETS` is the one table of names.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Final

#: The features, in the order a problem's name joins them.
FEATURES: Final = ("gqa", "window", "rope")
#: The name of the problem with no feature: the homework's masked multi-head attention.
PLAIN: Final = "mha"


@dataclass(frozen=True)
class Features:
    """The features of a problem (module docstring)."""

    grouped: bool = False
    windowed: bool = False
    rotary: bool = False

    @property
    def any(self) -> bool:
        """Whether the problem is not the homework's attention."""
        return self.grouped or self.windowed or self.rotary

    def on(self) -> tuple[str, ...]:
        """The names of the features this problem has, in `FEATURES`' order."""
        has = {"gqa": self.grouped, "window": self.windowed, "rope": self.rotary}
        return tuple(n for n in FEATURES if has[n])

    @property
    def name(self) -> str:
        """``mha``, or the features joined by ``+`` in `FEATURES`' order (``gqa+window``),
        whatever order they were typed in."""
        return "+".join(self.on()) or PLAIN

    @property
    def separate_kv(self) -> bool:
        """Whether an answer writes K/V heads apart from the query heads: ``g < h``, or RoPE
        (the rotated key ``K_rot`` is the K/V head's)."""
        return self.grouped or self.rotary

    @classmethod
    def parse(cls, name: str) -> Features | None:
        """The features a name says (``gqa+rope``, in any order; ``mha`` alone for none), or
        ``None`` when it is no such name."""
        if name == PLAIN:
            return cls()
        parts = name.split("+")
        if len(set(parts)) != len(parts) or not set(parts) <= set(FEATURES):
            return None
        return cls(grouped="gqa" in parts, windowed="window" in parts, rotary="rope" in parts)

    def with_(
        self, *, grouped: bool = False, windowed: bool = False, rotary: bool = False
    ) -> Features:
        """These features and the ones given."""
        return Features(self.grouped or grouped, self.windowed or windowed, self.rotary or rotary)


@dataclass(frozen=True)
class Preset:
    """A name of ``--variant``: its features and the shape ``attnref exercise`` draws by
    default (``d_k = d_model / h``)."""

    features: Features
    heads: int = 2
    d_model: int = 4
    help: str = ""


#: The presets of ``--variant``, and their default shapes: every ``d_k`` at least 2, so that
#: scaling by :math:`\sqrt{d_k}` shows (RoPE: one head of ``d_k = 4``, two pairs to turn; GQA:
#: four query heads on two K/V heads).
PRESETS: Final[dict[str, Preset]] = {
    PLAIN: Preset(Features(), help="the homework's masked multi-head attention"),
    "gqa": Preset(Features(grouped=True), heads=4, d_model=8,
                  help="h query heads sharing g K/V heads (--kv-heads)"),
    "window": Preset(Features(windowed=True), help="a causal sliding window of w keys (--window)"),
    "rope": Preset(Features(rotary=True), heads=1,
                   help="rotary positions on Q and K (RoFormer's pairs, base 10000)"),
}  # fmt: skip


def default_shape(name: str) -> tuple[int, int]:
    """``(heads, d_model)`` that ``--variant NAME`` draws by default: a combination's is that
    of its first feature in `FEATURES`' order (``gqa+rope`` and ``rope+gqa`` alike: gqa's),
    whatever order it was typed in; a name of no problem, the homework's."""
    f = Features.parse(name)
    first = f.on()[0] if f is not None and f.any else PLAIN
    preset = PRESETS[first]
    return preset.heads, preset.d_model


#: Every problem, by its name: the homework's, each feature alone, every combination.
PROBLEMS: Final = (
    PLAIN,
    *("+".join(c) for n in range(1, len(FEATURES) + 1) for c in combinations(FEATURES, n)),
)


__all__ = ["FEATURES", "PLAIN", "PRESETS", "PROBLEMS", "Features", "Preset", "default_shape"]
