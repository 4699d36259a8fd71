r"""How each mistake of the catalogue is reproduced on a problem: the changes to the chain.

One function per family of mistakes, for every problem the chain computes (the homework's
attention is :math:`g = h`, causal, no rotation): the mask (forgotten, on the wrong triangle,
applied after the softmax), the scaling, the softmax (over the columns, one-hot), the order of
the factors (``K Qᵀ``, ``Aᵀ``), a transposed weight or step, the heads (their order, the other
head's ``V``), ``W_O``, a slip in one entry (each feature's own, the K/V groups, the window's
width and side, RoPE's pairs, sign, positions and what it turns, are in its module:
`attention_ref.exercises.feature_gqa`, ``feature_window``, ``feature_rope``). Each gives the
`Mistake` objects that exist on the problem's *shape* (a transposed weight only where it is
square); whether one shows on the numbers is
`attention_ref.exercises.mistakes.changes_something`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import replace
from typing import Final

import numpy as np

from attention_ref.exercises.backward import scaled_back
from attention_ref.exercises.chain import (
    Data,
    Env,
    Given,
    Iv,
    Key,
    Run,
    StageFn,
    key_name,
    output_of,
    project,
    query_name,
    read_group,
)
from attention_ref.exercises.intervals import box, right_at
from attention_ref.exercises.mistakes import LANGS, Kind, Mistake, Style, num, one, sup

Instances = Callable[[Data, Kind], Iterable[Mistake]]


# --- the mask, the scaling, the softmax -------------------------------------------------------


def masked_only(**stages: StageFn) -> Instances:
    """The stages changed, where the problem has a mask."""
    return lambda d, kind: one(kind, stages=stages) if d.trace.M is not None else []


def wrong_triangle(d: Data, e: Env, i: int | None) -> Iv:
    """−∞ on the other side of the diagonal."""
    assert d.trace.M is not None
    return e["S", i].fill(np.isinf(d.trace.M.T), -math.inf)


def after_softmax(zero: bool) -> Instances:
    """The mask applied after the softmax (weights blocked set to 0) or added to it; ``S̃``
    written as ``S`` (the mask left out before the softmax) or as it should be."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if d.trace.M is None:
            return []
        blocked = np.isinf(d.trace.M)

        def A(d: Data, e: Env, i: int | None) -> Iv:
            weights = e["S", i].softmax_rows()
            return weights.fill(blocked, 0.0) if zero else weights + Iv.point(d.trace.M)

        return [
            kind.mistake(stages={"S_masked": lambda d, e, i: e["S", i], "A": A}),
            kind.mistake(stages={"A": A}),
        ]

    return instances


def scales(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Scores divided by √d_model or by d_k instead of √d_k; equal factors are one mistake."""
    d_k, d_model = d.trace.d_k, d.trace.d_model
    right = math.sqrt(d_k)
    factors: dict[float, list[str]] = {}
    for value, symbol in ((math.sqrt(d_model), "√d_model"), (float(d_k), "d_k")):
        if not math.isclose(value, right):
            factors.setdefault(round(value, 12), []).append(symbol)
    for value, symbols in factors.items():
        name = "scale_" + "_".join(s.lstrip("√") for s in symbols)
        m = kind.mistake(
            name,
            stages={"S": lambda d, e, i, c=value: e["scores", i] / c},
            fields={
                lang: {
                    "names": " = ".join(symbols),
                    "value": num(value, lang),
                    "right": num(right, lang),
                }
                for lang in LANGS
            },
        )
        yield m
        yield replace(m, stages={**m.stages, **scaled_back(value)}, backward=True)


def right_scale(d: Data) -> dict[str, dict[str, object]]:
    """√d_k in words, per language."""
    return {lang: {"right": num(math.sqrt(d.trace.d_k), lang)} for lang in LANGS}


def one_hot(x: Iv) -> Iv:
    """Each row 1 at its largest entry (the first, on a tie; at the midpoints), 0 elsewhere."""
    mid = np.where(np.isinf(x.lo), x.lo, x.mid)
    hot = np.zeros_like(mid)
    np.put_along_axis(hot, mid.argmax(-1)[:, None], 1.0, -1)
    return Iv.point(hot)


# --- factors in the wrong order, transposed weights and steps -------------------------------------


def k_qt(d: Data, kind: Kind) -> Iterable[Mistake]:
    """``K Qᵀ`` for ``Q Kᵀ`` (the rotated queries with RoPE)."""
    return one(kind, stages={"scores": lambda d, e, i: e["K", i] @ e[query_name(d), i].T})


def transposed_weights(d: Data, kind: Kind) -> Iterable[Mistake]:
    """``X W⁽ⁱ⁾ᵀ`` for a square weight: W_Q of a query head, W_K or W_V of a K/V head."""
    for role, stage in (("Q", "Q"), ("K", "kv.K"), ("V", "kv.V")):
        W = getattr(d.trace, f"W_{role}")
        if W.shape[-1] != W.shape[-2]:
            continue
        for i in range(W.shape[0]):
            symbol = f"W_{role}{sup(i) if W.shape[0] > 1 else ''}"
            turned = W.copy()
            turned[i] = W[i].T
            yield kind.mistake(
                f"transposed_W_{role}",
                stages={stage: project(role, turned)},
                fields={lang: {"sym": symbol} for lang in LANGS},
            )


def transposed_w_o(d: Data, kind: Kind) -> Iterable[Mistake]:
    """``Concat W_Oᵀ`` for a square ``W_O``."""
    W_O = d.trace.W_O
    if W_O is None or W_O.shape[0] != W_O.shape[1]:
        return []
    return one(kind, stages={"output": lambda d, e, i: output_of(e["concat", None], d, W_O.T)})


def gave_transposed(symbol: str, *steps: str) -> Instances:
    """Every one of ``steps`` (``symbol``'s) written transposed (the computation right); ∂W_O
    only where there is a ``W_O``."""
    fields = {lang: {"sym": symbol} for lang in LANGS}

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if steps == ("grad.W_O",) and d.trace.W_O is None:
            return []
        return one(kind, written=dict.fromkeys(steps, lambda v: v.T), fields=fields)

    return instances


# --- the heads ---------------------------------------------------------------------------------


#: Up to this many heads every other order is tried; beyond, two heads swapped and the whole
#: order reversed (8 heads have 40,319 other orders, 28 swaps); any other order is read from
#: the answer (`swapped_read`, `relabelled_read`: `Kind.read`).
EVERY_ORDER_UP_TO: Final = 4


def _orders(d: Data) -> Iterable[tuple[int, ...]]:
    """Every other order of the heads (2 to `EVERY_ORDER_UP_TO` heads); with more, every swap
    of two heads and the reversed order."""
    h = d.trace.h
    same = tuple(range(h))
    if 2 <= h <= EVERY_ORDER_UP_TO:
        yield from (p for p in itertools.permutations(range(h)) if p != same)
    elif h > EVERY_ORDER_UP_TO:
        for i, j in itertools.combinations(range(h), 2):
            swap = list(same)
            swap[i], swap[j] = j, i
            yield tuple(swap)
        yield same[::-1]


def _order_words(perm: tuple[int, ...]) -> dict[str, dict[str, object]]:
    order = " | ".join(f"H{sup(j)}" for j in perm)
    return {lang: {"order": order} for lang in LANGS}


def heads_swapped(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The heads right, the concat in another order: every other order up to
    `EVERY_ORDER_UP_TO` heads; beyond, the swaps and the reversal (any other order is read
    from the concat given: `swapped_read`)."""
    for perm in _orders(d):
        yield _swapped(kind, perm)


def _swapped(kind: Kind, perm: tuple[int, ...]) -> Mistake:
    return kind.mistake(
        stages={"concat": lambda d, e, i, p=perm: Iv.cat([e["H", j] for j in p])},
        fields=_order_words(perm),
    )


def swapped_read(
    d: Data, kind: Kind, given: Mapping[Key, Given], right: Run, decimals: int
) -> Iterable[Mistake]:
    """Beyond `EVERY_ORDER_UP_TO` heads, the order of the concat given, read from it: each of
    its blocks matched to a head's ``H`` (the right chain's concat, rounded as asked)."""
    h, g, band = d.trace.h, given.get(("concat", None)), right.raw.get(("concat", None))
    if h <= EVERY_ORDER_UP_TO or g is None or band is None or g.value.shape != band.shape:
        return []
    width = band.shape[1] // h
    cut = [slice(k * width, (k + 1) * width) for k in range(h)]
    fits = [
        [
            j
            for j in range(h)
            if bool(
                right_at(
                    Given(g.value[:, cut[k]], g.decimals[:, cut[k]]),
                    band.cols(j * width, (j + 1) * width),
                    decimals,
                ).all()
            )
        ]
        for k in range(h)
    ]
    return [_swapped(kind, perm) for perm in _read_order(d, fits)]


def _read_order(d: Data, fits: list[list[int]]) -> list[tuple[int, ...]]:
    """The order in which block ``k`` is one of ``fits[k]``, each head once, when it is not
    the right one nor one `_orders` lists already (``[]`` otherwise)."""
    perm = _matching(fits)
    if perm is None or perm == tuple(range(d.trace.h)) or perm in set(_orders(d)):
        return []
    return [perm]


def _matching(fits: list[list[int]], taken: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """An order in which block ``k`` is one of ``fits[k]``, each head once, another than the
    identity where one fits (depth first: the heads are at most 8)."""
    if len(taken) == len(fits):
        return taken
    found: tuple[int, ...] | None = None
    for j in fits[len(taken)]:
        if j not in taken and (perm := _matching(fits, (*taken, j))) is not None:
            if perm != tuple(range(len(fits))):
                return perm
            found = perm
    return found


def heads_relabelled(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The answer's list of heads (and so its concat) in another order: ``heads[i]`` holds
    query head ``perm[i]``'s steps, each reading its own K/V head."""
    for perm in _orders(d):
        yield _relabelled(d, kind, perm)


def _relabelled(d: Data, kind: Kind, perm: tuple[int, ...]) -> Mistake:
    W_Q = d.trace.W_Q[list(perm)]
    return kind.mistake(
        stages={
            "Q": project("Q", W_Q),
            "K": lambda d, e, i, p=perm: read_group(key_name(d), lambda d, i: d.group(p[i]))(
                d, e, i
            ),
            "V": read_group("kv.V", lambda d, i, p=perm: d.group(p[i])),
        },
        fields=_order_words(perm),
    )


def relabelled_read(
    d: Data, kind: Kind, given: Mapping[Key, Given], right: Run, decimals: int
) -> Iterable[Mistake]:
    """Beyond `EVERY_ORDER_UP_TO` heads, the order the answer's list of heads holds, read from
    it: each head's steps given matched to the true heads' (the right chain rounded as asked),
    one head each, in another order than the right one and than those `_orders` lists."""
    h = d.trace.h
    if h <= EVERY_ORDER_UP_TO:
        return []
    steps = {
        i: [k for k in given if k[1] == i and k[0] in HEAD_STAGES and k in right.raw]
        for i in range(h)
    }
    if not all(steps.values()):
        return []
    fits = [
        [
            j
            for j in range(h)
            if all(
                given[name, i].value.shape == right.raw[name, j].shape
                and bool(right_at(given[name, i], right.raw[name, j], decimals).all())
                for name, _ in steps[i]
            )
        ]
        for i in range(h)
    ]
    return [_relabelled(d, kind, perm) for perm in _read_order(d, fits)]


#: The steps of a query head an answer lists under ``heads`` (its K and V: the ones it reads).
HEAD_STAGES: Final = frozenset({"Q", "Q_rot", "K", "V", "scores", "S", "S_masked", "A", "H"})


def other_heads_v(d: Data, kind: Kind) -> Iterable[Mistake]:
    """With two heads and two K/V heads: H⁽¹⁾ = A⁽¹⁾ V⁽²⁾ and H⁽²⁾ = A⁽²⁾ V⁽¹⁾."""
    if d.trace.h != 2 or d.g != 2:
        return []
    return one(kind, stages={"H": lambda d, e, i: e["A", i] @ e["V", 1 - (i or 0)]})


def no_w_o(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The output given is the concat."""
    if d.trace.W_O is None:
        return []
    return one(kind, stages={"output": lambda d, e, i: e["concat", None]})


# --- a slip in one entry -----------------------------------------------------------------------


def _slip_adjust(
    key: Key, raw: Iv, g: Given | None, notes: MutableMapping[str, object], decimals: int
) -> Iv:
    """At the first step where the student's numbers differ in exactly one entry, take that
    entry as they wrote it (the next steps then follow from it, or not: ``adjust_carries``):
    their written value, or an unrounded one that rounds to it (`box`: a student carries
    either, as at every step given)."""
    if "slip" in notes or g is None or g.value.shape != raw.shape:
        return raw
    off = ~right_at(g, raw, decimals)
    if int(off.sum()) != 1:
        return raw
    r, c = (int(x) for x in np.argwhere(off)[0])
    notes["slip"] = (key, r, c, float(g.value[r, c]), float(raw.mid[r, c]))
    lo, hi = raw.lo.copy(), raw.hi.copy()
    b = box(g, decimals)
    lo[r, c], hi[r, c] = b.lo[r, c], b.hi[r, c]
    return Iv(lo, hi)


def _slip_words(words: Mapping[str, str]) -> Callable[[Mapping[str, object], Style], str]:
    def describe(notes: Mapping[str, object], style: Style) -> str:
        key, r, c, yours, right = notes["slip"]  # type: ignore[misc]
        return words[style.lang].format(
            step=style.step(key),
            row=style.row(key, r),
            col=c + 1,
            yours=style.number(yours),
            right=style.number(right),
        )

    return describe


def slip(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The slip carried on (rank 1), then the slip only written, the rest right (rank 2)."""
    return [
        Mistake(
            name=kind.name,
            words=kind.words,
            adjust=_slip_adjust,
            rank=1 + (not carry),
            adjust_carries=carry,
            describe=_slip_words(kind.words),
        )
        for carry in (True, False)
    ]


__all__ = [
    "Instances",
    "after_softmax",
    "gave_transposed",
    "heads_relabelled",
    "heads_swapped",
    "k_qt",
    "masked_only",
    "no_w_o",
    "one_hot",
    "other_heads_v",
    "right_scale",
    "scales",
    "slip",
    "transposed_w_o",
    "transposed_weights",
    "wrong_triangle",
]
