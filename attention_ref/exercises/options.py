r"""What defines an exercise: its options (``attnref exercise``'s) and their checks.

An exercise is attention with ``h`` query heads sharing ``g`` K/V heads (``kv_heads``), a mask
(causal, none, or a sliding window of ``window`` keys) and positions (none, or RoPE): the
homework's masked multi-head attention (``variant="mha"``) is :math:`g = h`, causal, no
rotation; ``gqa``, ``window`` and ``rope`` are today's. Every bad option is an `OptionError`
of one line, in English (the CLI's, naming its flags) and in every language of `LANGS`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final

from attention_ref.exercises.feature_table import TABLE, active
from attention_ref.exercises.features import PLAIN, PRESETS, Features, OptionError
from attention_ref.render import LANGS, JSONValue

#: The language an exercise is in when ``--lang`` is not given.
DEFAULT_LANG: Final = LANGS[0]
MAX_TOKENS: Final = 8
MAX_D_MODEL: Final = 8
MAX_DECIMALS: Final = 6
#: The decimals an exercise asks when ``--decimals`` is not given.
DEFAULT_DECIMALS: Final = 3
#: The presets ``--variant`` names: the homework's attention, or one of today's (features
#: joined by ``+`` name their combinations: `attention_ref.exercises.features`).
EXERCISE_VARIANTS: Final = tuple(PRESETS)


@dataclass(frozen=True, kw_only=True)
class ExerciseOptions:
    """What defines an exercise: the seed and the sizes (``attnref exercise`` options).

    ``variant`` (``mha``, ``gqa``, ``window``, ``rope``) picks the attention; ``kv_heads`` is
    ``gqa``'s ``g`` (default ``h/2`` for an even ``h``, else 1: ``h = 2`` gives multi-query
    attention, ``h = 4`` two K/V heads) and ``window`` the sliding window's ``w`` (default 2,
    or 1 with two tokens); both are filled in when left out, so equal exercises are equal.
    """

    seed: int = 0
    tokens: int = 3
    d_model: int = 4
    heads: int = 2
    causal: bool = True
    lang: str = DEFAULT_LANG
    backward: bool = False
    decimals: int = DEFAULT_DECIMALS
    variant: str = PLAIN
    kv_heads: int | None = None
    window: int | None = None

    def __post_init__(self) -> None:
        between = {
            "en": "{flag} must be between {lo} and {hi}, got {got}",
            "pt": "{flag} deve estar entre {lo} e {hi}, veio {got}",
        }
        if not 0 <= self.seed < 2**63:
            raise OptionError(between, flag="--seed", lo=0, hi="2**63 - 1", got=self.seed)
        if not 1 <= self.tokens <= MAX_TOKENS:
            raise OptionError(between, flag="--tokens", lo=1, hi=MAX_TOKENS, got=self.tokens)
        if not 1 <= self.d_model <= MAX_D_MODEL:
            raise OptionError(between, flag="--d-model", lo=1, hi=MAX_D_MODEL, got=self.d_model)
        if self.heads < 1 or self.d_model % self.heads:
            raise OptionError(
                {
                    "en": "--heads must divide --d-model (d_k = d_model / h): d_model = {d}, "
                    "h = {h}",
                    "pt": "--heads deve dividir --d-model (d_k = d_model / h): d_model = {d}, "
                    "h = {h}",
                },
                d=self.d_model,
                h=self.heads,
            )
        if self.lang not in LANGS:
            raise OptionError(
                {
                    "en": "--lang must be one of {langs}, got {got}",
                    "pt": "--lang deve ser um de {langs}, veio {got}",
                },
                langs=", ".join(LANGS),
                got=repr(self.lang)[:40],
            )
        if not 1 <= self.decimals <= MAX_DECIMALS:
            raise OptionError(between, flag="--decimals", lo=1, hi=MAX_DECIMALS, got=self.decimals)
        self._check_variant()

    def _check_variant(self) -> None:
        """The features' own options, checked; ``variant`` written as the features' name
        (``--kv-heads`` alone asks ``gqa``, ``--window`` alone ``window``), ``kv_heads`` and
        ``window`` filled in."""
        f = Features.parse(self.variant) if isinstance(self.variant, str) else None
        if f is None:
            raise OptionError(
                {
                    "en": "--variant must be one of {names}, or features joined by "
                    "+ (gqa+rope), got {got}",
                    "pt": "--variant deve ser um de "
                    "{names}, ou recursos unidos por + (gqa+rope), veio {got}",
                },
                names=", ".join(EXERCISE_VARIANTS),
                got=repr(self.variant)[:60],
            )
        # a feature's option given alone asks the feature (--kv-heads: gqa)
        f = f.with_(*(n for n, feat in TABLE.items() if feat.option and self._given(feat.option)))
        object.__setattr__(self, "variant", f.name)
        for feat in active(f):
            value = feat.checked(self)
            if feat.option is not None:
                object.__setattr__(self, feat.option, value)

    def _given(self, option: str) -> bool:
        return getattr(self, option) is not None

    @property
    def features(self) -> Features:
        """What the problem has beside the homework's attention (`Features`)."""
        f = Features.parse(self.variant)
        assert f is not None  # __post_init__ wrote the name
        return f

    @property
    def d_k(self) -> int:
        """Width of a head: ``d_model / h``."""
        return self.d_model // self.heads

    def to_json(self) -> dict[str, JSONValue]:
        """The options as the ``"exercise"`` object of an answer file: the problem, its
        language (the check reports in it) and the decimals asked (the check grades by them)."""
        out: dict[str, JSONValue] = {
            "seed": self.seed,
            "tokens": self.tokens,
            "d_model": self.d_model,
            "heads": self.heads,
            "causal": self.causal,
            "lang": self.lang,
            "decimals": self.decimals,
        }
        if self.features.any:  # the homework's exercise names no variant (nor its backward:
            out["variant"] = self.variant  # any answer to it may give gradients)
            if self.backward:
                out["backward"] = True
            out |= self.feature_options  # type: ignore[arg-type]
        return out

    @property
    def feature_options(self) -> dict[str, object]:
        """The features' options and their values (``{"kv_heads": 2}``), in `FEATURES`'
        order."""
        return {
            feat.option: getattr(self, feat.option)
            for feat in active(self.features)
            if feat.option is not None
        }

    def answer_json(self) -> dict[str, JSONValue]:
        """The ``"exercise"`` object of answer.json (and of the statement's "How to answer"):
        `to_json`, with ``"backward": true`` for the homework's attention too, so that the
        check draws the same exercise and its report's header prints the whole command
        (`command`). `to_json` stays the stored form the classroom compares (an answer's object
        is read back through it, ``backward`` or not)."""
        out = self.to_json()
        if self.backward:
            out["backward"] = True
        return out

    @property
    def g(self) -> int:
        """The K/V heads: ``kv_heads`` with ``gqa``, else ``h`` (one per query head)."""
        g = [k for feat in active(self.features) if (k := feat.kv_heads(self)) is not None]
        return g[0] if g else self.heads

    @property
    def source(self) -> str:
        """The command that draws the exercise, without ``attnref``."""
        causal = "--causal" if self.causal else "--no-causal"
        return (
            f"exercise --seed {self.seed} --tokens {self.tokens} --d-model {self.d_model} "
            f"--heads {self.heads} {causal}{self.flags}"
        )

    @property
    def command(self) -> str:
        """The whole command that draws the exercise again, every option that shapes it:
        `source`, then ``--decimals`` where it is not the default, ``--backward`` and
        ``--lang`` (the statement's source line and the check report's header both print it)."""
        decimals = f" --decimals {self.decimals}" * (self.decimals != DEFAULT_DECIMALS)
        backward = " --backward" * self.backward
        return f"attnref {self.source}{decimals}{backward}{self.lang_flag}"

    @property
    def lang_flag(self) -> str:
        """``--lang`` on the command line where it is not the default (``""`` in English)."""
        return "" if self.lang == DEFAULT_LANG else f" --lang {self.lang}"

    @property
    def flags(self) -> str:
        """The features' options on the command line (``""`` for ``mha``)."""
        if not self.features.any:
            return ""
        return f" --variant {self.variant}" + "".join(
            f" --{k.replace('_', '-')} {v}" for k, v in self.feature_options.items()
        )


def options_from_json(obj: object, lang: str | None = None) -> ExerciseOptions:
    """An answer file's ``"exercise": {"seed": …, "tokens": …, …}``; `InputError` if bad, in
    ``lang`` (``None``: the object's own ``"lang"`` when it is one of `LANGS`, else English)."""
    from attention_ref.exercises.answer_words import error, shown

    say = lang or (obj.get("lang") if isinstance(obj, dict) and obj.get("lang") in LANGS else "en")
    assert isinstance(say, str)
    if not isinstance(obj, dict):
        raise error(say, "ex_object")
    allowed = {f.name for f in fields(ExerciseOptions)}  # the shape, declared once
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise error(say, "ex_unknown", shown=shown(unknown[0]), names=", ".join(sorted(allowed)))
    if "seed" not in obj:
        raise error(say, "ex_seed")
    one_of = {"lang": LANGS, "variant": EXERCISE_VARIANTS}
    for f in fields(ExerciseOptions):  # each value of the type its field declares
        v = obj.get(f.name)
        if v is None and (f.name not in obj or f.type == "int | None"):
            continue
        if f.type in ("int", "int | None") and (isinstance(v, bool) or not isinstance(v, int)):
            raise error(say, "ex_integer", key=f.name, shown=shown(v))
        if f.type == "bool" and not isinstance(v, bool):
            raise error(say, "ex_bool", key=f.name)
        if f.type == "str" and not isinstance(v, str):
            raise error(say, "ex_one_of", key=f.name, names=", ".join(one_of[f.name]))
    try:
        return ExerciseOptions(**obj)
    except OptionError as e:
        raise error(say, "ex_option", text=e.words(say)) from None
    except ValueError as e:
        raise error(say, "ex_option", text=str(e)) from None


__all__ = [
    "EXERCISE_VARIANTS",
    "LANGS",
    "MAX_DECIMALS",
    "MAX_D_MODEL",
    "MAX_TOKENS",
    "ExerciseOptions",
    "OptionError",
    "options_from_json",
]
