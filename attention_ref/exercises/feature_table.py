r"""The one table of an exercise's features, and what is composed from it.

`TABLE` has one object per name of `attention_ref.exercises.features.FEATURES`
(`attention_ref.exercises.features.Feature`: its options, steps, numbers, chain stages,
mistakes and words, in its own module). Everything that differs between problems is read
here from a problem's features, in `FEATURES`' order, and no module around decides by one:
`active` (the objects of a problem's features), `features_of` (those a problem's numbers
have), `layout` (the steps an answer holds) and `problem_trace` (a problem's numbers with
its mask and rotation). Adding a feature is its module and its line here.
"""

from __future__ import annotations

from typing import Any, Final

from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.chain import Stage, forward_of
from attention_ref.exercises.feature_alibi import ALIBI
from attention_ref.exercises.feature_gqa import GQA
from attention_ref.exercises.feature_rope import ROPE
from attention_ref.exercises.feature_window import WINDOW
from attention_ref.exercises.features import FEATURES, Feature, Features
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.problem import Layout, ProblemTrace, causal_mask
from attention_ref.exercises.words import SLOTS, TEXT

#: Every feature's object, by its name.
TABLE: Final[dict[str, Feature]] = {f.name: f for f in (GQA, WINDOW, ROPE, ALIBI)}
assert tuple(TABLE) == FEATURES, "one object per feature, in FEATURES' order"

#: The steps of one head after the features' own on the queries, and after the scores'.
_SCORES: Final = ("scores", "S")
_AFTER: Final = ("S_masked", "A", "H")


def active(f: Features) -> tuple[Feature, ...]:
    """The objects of ``f``'s features, in `FEATURES`' order."""
    return tuple(TABLE[n] for n in f.on())


def _extra(f: Features) -> tuple[tuple[str, Stage], ...]:
    return tuple(s for feat in active(f) for s in feat.stages)


def forward(f: Features, *, backward: bool = False) -> tuple[Stage, ...]:
    """The chain of a problem of features ``f``: the homework's stages and the features' own
    (`attention_ref.exercises.chain.forward_of`), then the backward's where asked."""
    return forward_of(_extra(f)) + (BACKWARD if backward else ())


def features_of(trace: ProblemTrace) -> Features:
    """The features a problem's numbers have (``g < h``, a window, a rotation)."""
    return Features(*(n for n, feat in TABLE.items() if feat.in_trace(trace)))


def layout(f: Features, backward: bool | None = None) -> Layout:
    """What an answer to a problem of features ``f`` holds. Per query head: ``Q`` (and the
    features' own, ``Q_rot`` with RoPE), the ``K`` and ``V`` it reads, then ``scores`` …
    ``H``; per K/V head (any feature: the homework's attention has none apart from its heads)
    ``K``, ``V`` (and ``K_rot``). The template asks each step once: where the K/V heads are
    apart (``g < h`` or RoPE: `Feature.separate_kv`) it asks them there and not again per
    query head. Gradients where the problem has a backward (``None``: the homework's
    attention has one, always; a problem with features when its exercise asks it)."""
    on = active(f)
    rot_q = tuple(s for feat in on for s in feat.query_steps)
    after = (*_SCORES, *(s for feat in on for s in feat.score_steps), *_AFTER)
    heads = ("Q", *rot_q, "K", "V", *after)
    kv = ("K", "V", *(s for feat in on for s in feat.kv_steps)) if on else ()
    top = tuple(s for feat in on for s in feat.top_steps)
    grads = not on if backward is None else backward
    if any(feat.separate_kv for feat in on):
        return Layout(heads, kv, ("Q", *rot_q, *after), kv, top, grads)
    return Layout(heads, kv, heads, (), top, grads)


def words_of(f: Features, lang: str, opt: Any) -> dict[str, str]:
    """The statement's and the key's words for a problem of features ``f``: the homework's
    (`attention_ref.exercises.words.TEXT`) with each feature's written over them, the first
    feature's winning (``gqa+rope`` is titled grouped-query attention, with RoPE)."""
    w = dict(TEXT[lang])
    for feat in reversed(active(f)):
        w |= feat.said(lang, opt)
    return w


def gathered(f: Features, key: str, lang: str, opt: Any) -> str:
    """Each feature's own piece ``key`` (``data_more``), in `FEATURES`' order, joined."""
    return "".join(feat.said(lang, opt).get(key, "") for feat in active(f))


def fields_of(f: Features, opt: Any, lang: str) -> dict[str, object]:
    """What the features' words are filled with (`Feature.fields`), and the slots
    (`attention_ref.exercises.words.SLOTS`) as ``f``'s words say them."""
    w = words_of(f, lang, opt)
    out: dict[str, object] = {k: w[k] for k in SLOTS}
    for feat in active(f):
        out |= feat.fields(opt, lang)
    return out


def questions_of(f: Features) -> list[tuple[str, Feature | None]]:
    """The questions of a problem, in order: the homework's (``q1`` … ``q5``, owner ``None``)
    with each feature's in before the one it names."""
    out: list[tuple[str, Feature | None]] = []
    for q in ("q1", "q2", "q3", "q4", "q5"):
        out += [
            (name, feat) for feat in active(f) for before, name in feat.questions if before == q
        ]
        out.append((q, None))
    return out


def problem_trace(
    X: Array,
    W_Q: Array,
    W_K: Array,
    W_V: Array,
    W_O: Array | None,
    features: Features,
    *,
    causal: bool = True,
    options: dict[str, object] | None = None,
    tokens: tuple[str, ...] = (),
) -> ProblemTrace:
    """A problem's numbers: the causal mask (or none), then what each feature sets (the
    window's mask and ``w``, RoPE's base) from its option's value in ``options``
    (``{"window": 2}``)."""
    n = int(X.shape[-2])
    fields: dict[str, object] = {"M": causal_mask(n) if causal else None}
    for feat in active(features):
        fields |= feat.trace_fields(n, int(W_Q.shape[0]), (options or {}).get(feat.option or ""))
    fields["extra"] = _extra(features)
    return ProblemTrace(
        tokens=tokens,
        X=X,
        W_Q=W_Q,
        W_K=W_K,
        W_V=W_V,
        W_O=W_O,
        **fields,  # type: ignore[arg-type]
    )


__all__ = [
    "TABLE",
    "active",
    "features_of",
    "fields_of",
    "forward",
    "gathered",
    "layout",
    "problem_trace",
    "questions_of",
    "words_of",
]
