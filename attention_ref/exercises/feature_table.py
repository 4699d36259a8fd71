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

from typing import Final

from attention_ref.exercises.backward import BACKWARD
from attention_ref.exercises.chain import Stage, forward_of
from attention_ref.exercises.feature_gqa import GQA
from attention_ref.exercises.feature_rope import ROPE
from attention_ref.exercises.feature_window import WINDOW
from attention_ref.exercises.features import FEATURES, Feature, Features
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.problem import Layout, ProblemTrace, causal_mask

#: Every feature's object, by its name.
TABLE: Final[dict[str, Feature]] = {f.name: f for f in (GQA, WINDOW, ROPE)}
assert tuple(TABLE) == FEATURES, "one object per feature, in FEATURES' order"

#: The steps of one head before and after the features' own.
_AFTER: Final = ("scores", "S", "S_masked", "A", "H")


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
    heads = ("Q", *rot_q, "K", "V", *_AFTER)
    kv = ("K", "V", *(s for feat in on for s in feat.kv_steps)) if on else ()
    top = tuple(s for feat in on for s in feat.top_steps)
    grads = not on if backward is None else backward
    if any(feat.separate_kv for feat in on):
        return Layout(heads, kv, ("Q", *rot_q, *_AFTER), kv, top, grads)
    return Layout(heads, kv, heads, (), top, grads)


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
        fields |= feat.trace_fields(n, (options or {}).get(feat.option or ""))
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


__all__ = ["TABLE", "active", "features_of", "forward", "layout", "problem_trace"]
