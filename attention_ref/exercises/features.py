r"""What an exercise's attention has beside the homework's: its features, and the presets that
name them.

One problem model: ``h`` query heads sharing ``g`` K/V heads, a mask (causal, none, or a
sliding window of ``w`` keys), positions (none, RoPE) and a bias on the scores (none, ALiBi).
Four features set a problem apart from the homework's masked multi-head attention
(:math:`g = h`, the causal mask, no rotation, no bias):

- ``gqa``: :math:`g < h`, each K/V head shared by :math:`r = h/g` consecutive query heads;
- ``window``: the causal mask narrowed to the last ``w`` keys;
- ``rope``: the queries and the keys rotated by their positions (RoFormer's pairs);
- ``alibi``: each head's scores biased by :math:`-m_i (t - u)` (ALiBi's slopes).

A problem's name is its features joined by ``+`` in that order (``gqa+rope``), or ``mha``
with none: the presets of ``attnref exercise --variant`` (``mha``, ``gqa``, ``window``,
``rope``, ``alibi``) are the names of one feature or none, so their stored forms (an answer's
``"exercise"``, an assignment's definition) are what they were before any combination could
be drawn. Each feature is one object (`Feature`, in its module ``feature_<name>.py``), in the
one table `attention_ref.exercises.feature_table.TABLE`; code decides by a feature's object,
never by its name or a flag: `PRESETS` is the one table of names.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Final

#: The features, in the order a problem's name joins them.
FEATURES: Final = ("gqa", "window", "rope", "alibi")
#: The name of the problem with no feature: the homework's masked multi-head attention.
PLAIN: Final = "mha"


@dataclass(frozen=True, init=False)
class Features:
    """The features of a problem (module docstring): their names, in `FEATURES`' order.

    ``Features("rope", "gqa")`` and ``Features("gqa", "rope")`` are one value. Code decides by
    a feature's object (`attention_ref.exercises.feature_table`), never by these flags:
    `grouped`, `windowed` and `rotary` are for the tests' readability (a test counts them in
    the package, `tests/exercises/test_feature_objects.py`)."""

    names: tuple[str, ...]

    def __init__(self, *names: str) -> None:
        unknown = set(names) - set(FEATURES)
        if unknown:
            raise ValueError(f"no such feature: {sorted(unknown)}")
        object.__setattr__(self, "names", tuple(n for n in FEATURES if n in names))

    def __contains__(self, name: object) -> bool:
        return name in self.names

    @property
    def any(self) -> bool:
        """Whether the problem is not the homework's attention."""
        return bool(self.names)

    def on(self) -> tuple[str, ...]:
        """The names of the features this problem has, in `FEATURES`' order."""
        return self.names

    @property
    def grouped(self) -> bool:
        return "gqa" in self.names

    @property
    def windowed(self) -> bool:
        return "window" in self.names

    @property
    def rotary(self) -> bool:
        return "rope" in self.names

    @property
    def name(self) -> str:
        """``mha``, or the features joined by ``+`` in `FEATURES`' order (``gqa+window``),
        whatever order they were typed in."""
        return "+".join(self.names) or PLAIN

    @classmethod
    def parse(cls, name: str) -> Features | None:
        """The features a name says (``gqa+rope``, in any order; ``mha`` alone for none), or
        ``None`` when it is no such name."""
        if name == PLAIN:
            return cls()
        parts = name.split("+")
        if len(set(parts)) != len(parts) or not set(parts) <= set(FEATURES):
            return None
        return cls(*parts)

    def with_(self, *names: str) -> Features:
        """These features and the ones named."""
        return Features(*self.names, *names)


class OptionError(ValueError):
    """A bad option of an exercise: its message in English (``str``, the CLI's, naming the
    flags) and in every language of `attention_ref.render.LANGS` (`words`), for an answer's
    ``"exercise"``."""

    def __init__(self, texts: dict[str, str], **kw: object) -> None:
        self.texts = {lang: text.format(**kw) for lang, text in texts.items()}
        super().__init__(self.texts["en"])

    def words(self, lang: str) -> str:
        return self.texts.get(lang, self.texts["en"])


class Feature:
    """One feature's object: all that sets its problems apart from the homework's attention,
    in one module (`attention_ref.exercises.feature_gqa`, ``feature_window``,
    ``feature_rope``), one line of `attention_ref.exercises.feature_table.TABLE`.

    Each hook's default is "nothing": a feature that leaves it alone changes nothing there.
    The code around iterates over a problem's features in `FEATURES`' order and decides by
    none of them."""

    #: its name in `FEATURES`
    name: str = ""
    #: its option: an `attention_ref.exercises.options.ExerciseOptions` field, and
    #: ``--flag`` (``kv_heads``: ``--kv-heads``); given alone, the option asks the feature
    option: str | None = None
    #: whether an answer writes the K/V heads apart from the query heads
    separate_kv: bool = False
    #: the steps it adds: per query head after ``Q``, per K/V head after ``K`` and ``V``, and
    #: of the whole problem (``"M"``)
    #: whether several query heads read one K/V head (its gradient comes through each)
    shared_kv: bool = False
    query_steps: tuple[str, ...] = ()
    #: the steps it adds per query head between ``S`` and ``S̃`` (ALiBi's ``B``)
    score_steps: tuple[str, ...] = ()
    kv_steps: tuple[str, ...] = ()
    top_steps: tuple[str, ...] = ()
    #: its stages of the chain, each ``(before, stage)``: in before the homework's stage
    #: ``before`` (`attention_ref.exercises.chain.Stage`)
    stages: tuple[tuple[str, Any], ...] = ()
    #: its mistakes (`attention_ref.exercises.mistakes.Kind`), tried before the homework's;
    #: the homework's it drops (names): its own say them better
    kinds: tuple[Any, ...] = ()
    drops: frozenset[str] = frozenset()
    #: its mistakes in a few words, per language (what a check that names none says it tried)
    kinds_words: dict[str, str] = {}  # noqa: RUF012 (read only)
    #: its steps' names in words, per language (``{"en": {"M": "M_win"}}``)
    step_words: dict[str, dict[str, str]] = {}  # noqa: RUF012 (read only)

    #: its words, per language (`said`): what it writes over the homework's words
    #: (`attention_ref.exercises.words.TEXT`, the first feature's win: ``title``, the
    #: `attention_ref.exercises.words.SLOTS`), and its own pieces, each feature's in turn
    #: (``data_more``, ``q5_more``, ``key_q5_more``)
    words: dict[str, dict[str, str]] = {}  # noqa: RUF012 (read only)
    #: the questions it asks, each ``(before, name)``: in before the homework's question
    #: ``before``, titled by its words' ``name``, asking ``name + "_text"``
    questions: tuple[tuple[str, str], ...] = ()

    def said(self, lang: str, opt: Any) -> dict[str, str]:
        """Its words in ``lang`` for the exercise ``opt``."""
        return self.words.get(lang, {})

    def fields(self, opt: Any, lang: str) -> dict[str, object]:
        """What its words are filled with for ``opt`` (``{w}``, ``{pairs}``)."""
        return {}

    def data_sections(self, tr: Any, lang: str) -> list[Any]:
        """Sections it adds after the statement's data (RoPE's table of angles)."""
        return []

    def key_answer(self, name: str, tr: Any, numbers: Any, lang: str) -> tuple[str, list[Any]]:
        """The key's answer to its question ``name``: the text and the matrices."""
        raise NotImplementedError(name)

    def key_json(self, tr: Any, data: dict[str, Any]) -> dict[str, Any]:
        """The key's JSON with what it adds (``"window"``, ALiBi's ``"B"`` per head)."""
        return data

    def checked(self, opt: Any) -> object:
        """The feature's option of ``opt`` filled in (``None``: it has none); `OptionError`
        where the other options do not suit it."""
        return None

    def kv_heads(self, opt: Any) -> int | None:
        """The K/V heads ``g`` it sets (``None``: one per query head)."""
        return None

    def problem_json(self, opt: Any) -> dict[str, Any]:
        """The keys it adds to a drawn problem's JSON (``"window"``, ``"rope"``)."""
        return {}

    def trace_fields(self, n: int, h: int, value: object) -> dict[str, Any]:
        """The `attention_ref.exercises.problem.ProblemTrace` fields it sets, for ``n`` tokens,
        ``h`` query heads and its option's ``value``."""
        return {}

    def in_trace(self, trace: Any) -> bool:
        """Whether a problem's numbers have it."""
        raise NotImplementedError


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
    "gqa": Preset(Features("gqa"), heads=4, d_model=8,
                  help="h query heads sharing g K/V heads (--kv-heads)"),
    "window": Preset(Features("window"), help="a causal sliding window of w keys (--window)"),
    "rope": Preset(Features("rope"), heads=1,
                   help="rotary positions on Q and K (RoFormer's pairs, base 10000)"),
    "alibi": Preset(Features("alibi"),
                    help="a linear bias on each head's scores, one slope per head"),
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


__all__ = [
    "FEATURES",
    "PLAIN",
    "PRESETS",
    "PROBLEMS",
    "Feature",
    "Features",
    "OptionError",
    "Preset",
    "default_shape",
]
