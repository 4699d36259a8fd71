r"""How each mistake of the catalogue is reproduced on a problem: the changes to the chain.

One function per family of mistakes, for every problem the chain computes (the homework's
attention is :math:`g = h`, causal, no rotation): the mask (forgotten, on the wrong triangle,
applied after the softmax), the scaling, the softmax (over the columns, one-hot), the order of
the factors (``K Qᵀ``, ``Aᵀ``), a transposed weight or step, the heads (their order, the other
head's ``V``), ``W_O``, a slip in one entry; then today's: the K/V groups, the window's width
and side, RoPE's pairs, sign, positions and what it turns. Each gives the `Mistake` objects
that exist on the problem's *shape* (a transposed weight only where it is square); whether
one shows on the numbers is `attention_ref.exercises.mistakes.changes_something`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import replace
from typing import Final

import torch

from attention_ref.exercises.backward import scaled_back
from attention_ref.exercises.chain import (
    SLACK,
    Data,
    Env,
    Given,
    Iv,
    Key,
    StageFn,
    key_name,
    loosely,
    output_of,
    project,
    query_name,
    read_group,
    rotate,
)
from attention_ref.exercises.mistakes import LANGS, Kind, Mistake, Style, num, one, sup
from attention_ref.reference import windows

Instances = Callable[[Data, Kind], Iterable[Mistake]]


def _n(d: Data) -> int:
    return int(d.trace.X.shape[0])


# --- the mask, the scaling, the softmax -------------------------------------------------------


def masked_only(**stages: StageFn) -> Instances:
    """The stages changed, where the problem has a mask."""
    return lambda d, kind: one(kind, stages=stages) if d.trace.M is not None else []


def wrong_triangle(d: Data, e: Env, i: int | None) -> Iv:
    """−∞ on the other side of the diagonal."""
    assert d.trace.M is not None
    return e["S", i].fill(torch.isinf(d.trace.M.T), -math.inf)


def after_softmax(zero: bool) -> Instances:
    """The mask applied after the softmax (weights blocked set to 0) or added to it; ``S̃``
    written as ``S`` (the mask left out before the softmax) or as it should be."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if d.trace.M is None:
            return []
        blocked = torch.isinf(d.trace.M)

        def A(d: Data, e: Env, i: int | None) -> Iv:
            weights = e["S", i].softmax_rows()
            return weights.fill(blocked, 0.0) if zero else weights + Iv.point(d.trace.M)

        return [kind.mistake(stages={"S_masked": lambda d, e, i: e["S", i], "A": A}),
                kind.mistake(stages={"A": A})]  # fmt: skip

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
            fields={lang: {"names": " = ".join(symbols), "value": num(value, lang),
                           "right": num(right, lang)} for lang in LANGS},
        )  # fmt: skip
        yield m
        yield replace(m, stages={**m.stages, **scaled_back(value)}, backward=True)


def right_scale(d: Data) -> dict[str, dict[str, object]]:
    """√d_k in words, per language."""
    return {lang: {"right": num(math.sqrt(d.trace.d_k), lang)} for lang in LANGS}


def one_hot(x: Iv) -> Iv:
    """Each row 1 at its largest entry (the first, on a tie; at the midpoints), 0 elsewhere."""
    mid = torch.where(torch.isinf(x.lo), x.lo, x.mid)
    hot = torch.zeros_like(mid).scatter_(-1, mid.argmax(-1, keepdim=True), 1.0)
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
            turned = W.clone()
            turned[i] = W[i].T
            yield kind.mistake(f"transposed_W_{role}", stages={stage: project(role, turned)},
                               fields={lang: {"sym": symbol} for lang in LANGS})  # fmt: skip


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
#: order reversed (8 heads have 40,319 other orders, 28 swaps).
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
    """The heads right, the concat in another order."""
    for perm in _orders(d):
        yield kind.mistake(
            stages={"concat": lambda d, e, i, p=perm: Iv.cat([e["H", j] for j in p])},
            fields=_order_words(perm),
        )


def heads_relabelled(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The answer's list of heads (and so its concat) in another order: ``heads[i]`` holds
    query head ``perm[i]``'s steps, each reading its own K/V head."""
    for perm in _orders(d):
        W_Q = d.trace.W_Q[list(perm)]
        yield kind.mistake(
            stages={"Q": project("Q", W_Q),
                    "K": lambda d, e, i, p=perm: read_group(
                        key_name(d), lambda d, i: d.group(p[i]))(d, e, i),
                    "V": read_group("kv.V", lambda d, i, p=perm: d.group(p[i]))},
            fields=_order_words(perm),
        )  # fmt: skip


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
    their written value, or an unrounded one that rounds to it, strictly inside its half unit
    (a student carries either, as at every step given)."""
    if "slip" in notes or g is None or g.value.shape != raw.shape or g.value.numel() < 2:
        return raw
    off = ~loosely(g, raw, decimals)
    if int(off.sum()) != 1:
        return raw
    r, c = (int(x) for x in off.nonzero()[0])
    notes["slip"] = (key, r, c, float(g.value[r, c]), float(raw.mid[r, c]))
    lo, hi = raw.lo.clone(), raw.hi.clone()
    x = g.value[r, c]
    h = max(float(g.half_unit(15)[r, c]) - 10 * SLACK * (1 + min(abs(float(x)), 1e6)), 0.0)
    lo[r, c], hi[r, c] = x - h, x + h
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
    return [Mistake(name=kind.name, words=kind.words, adjust=_slip_adjust, rank=1 + (not carry),
                    adjust_carries=carry, describe=_slip_words(kind.words))
            for carry in (True, False)]  # fmt: skip


# --- grouped-query attention ---------------------------------------------------------------------


def _heads_list(heads: Iterable[int]) -> str:
    return ", ".join(str(j + 1) for j in heads)


def _reads(pick: Callable[[int], int]) -> dict[str, StageFn]:
    """Every query head ``i`` reads K/V head ``pick(i)`` (its K and its V)."""
    return {"K": lambda d, e, i: e[key_name(d), pick(i or 0)],
            "V": lambda d, e, i: e["kv.V", pick(i or 0)]}  # fmt: skip


def _group_fields(d: Data, wrong: list[int]) -> dict[str, dict[str, object]]:
    h, g = d.trace.h, d.g
    right = [d.group(i) for i in range(h)]
    return {lang: {"h": h, "g": g, "r": h // g, "wrong": _heads_list(wrong),
                   "right": _heads_list(right)} for lang in LANGS}  # fmt: skip


def interleaved(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Query head ``i`` reads K/V head ``i mod g`` (needs ``1 < g < h``)."""
    g = d.g
    if not 1 < g < d.trace.h:
        return []
    wrong = [i % g for i in range(d.trace.h)]
    return one(kind, stages=_reads(lambda i: i % g), fields=_group_fields(d, wrong))


def one_kv(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Every query head reads K/V head 1 (needs ``1 < g < h``)."""
    if not 1 < d.g < d.trace.h:
        return []
    return one(kind, stages=_reads(lambda i: 0), fields=_group_fields(d, [0] * d.trace.h))


# --- the sliding window -------------------------------------------------------------------------


def _window(d: Data) -> int | None:
    return d.trace.window


def _masked_by(blocked: torch.Tensor) -> dict[str, StageFn]:
    """The window's mask ``M`` and ``S̃ = S + M`` with another band ``blocked``."""
    M = torch.zeros(blocked.shape, dtype=torch.float64).masked_fill(blocked, float("-inf"))
    return {"M": lambda d, e, i: Iv.point(M),
            "S_masked": lambda d, e, i: e["S", i].fill(blocked, float("-inf"))}  # fmt: skip


def _seen(keys: int, lang: str) -> dict[str, str]:
    """``keys`` keys in words: how many (``3 keys``) and which (``itself and the 2 before
    it``, ``only itself``)."""
    if lang == "pt":
        count = f"{keys} chave{'s' * (keys != 1)}"
        which = "só ele mesmo" if keys == 1 else f"ele mesmo e os {keys - 1} anteriores"
        if keys == 2:
            which = "ele mesmo e o anterior"
    else:
        count = f"{keys} key{'s' * (keys != 1)}"
        which = "only itself" if keys == 1 else f"itself and the {keys - 1} before it"
    return {"keys": count, "which": which}


def width(delta: int) -> Instances:
    """A window of ``w + delta`` keys, when that is a window (``1 <= w + delta < n``)."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        n, w = _n(d), _window(d)
        if w is None or not 1 <= w + delta < n:
            return []
        blocked = ~windows.window_allowed(n, w + delta)
        fields = {lang: {"w": w, **_seen(w + delta, lang)} for lang in LANGS}
        return one(kind, stages=_masked_by(blocked), fields=fields)

    return instances


def window_causal(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The causal mask instead of the window."""
    n, w = _n(d), _window(d)
    if w is None:
        return []
    blocked = ~windows.window_allowed(n, n)  # w >= n: the causal mask
    return one(kind, stages=_masked_by(blocked),
               fields={lang: {"w": w} for lang in LANGS})  # fmt: skip


def window_ahead(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The band on the other side of the diagonal: token t sees t .. t + w − 1."""
    n, w = _n(d), _window(d)
    if w is None:
        return []
    blocked = ~windows.window_allowed(n, w).T
    k = w - 1
    fields = {
        "en": {"which": "the token after it instead of the one before it" if k == 1
               else f"the {k} tokens after it instead of the {k} before it"},
        "pt": {"which": "o token seguinte em vez do anterior" if k == 1
               else f"os {k} tokens seguintes em vez dos {k} anteriores"},
    }  # fmt: skip
    return one(kind, stages=_masked_by(blocked), fields=fields)


# --- RoPE ---------------------------------------------------------------------------------------


def flip(x: Iv) -> Iv:
    """The columns in the reverse order (pair p takes pair d/2 − 1 − p's angle)."""
    return Iv(x.lo.flip(-1), x.hi.flip(-1))


def neg(x: Iv) -> Iv:
    """``−x``."""
    return Iv(-x.hi, -x.lo)


Turn = Callable[[Iv, Iv, Iv], Iv]


def _turned(turn: Turn) -> dict[str, StageFn]:
    """Q and K rotated by ``turn(x, cos, sin)`` instead of RoPE's rotation."""
    return {
        "Q_rot": lambda d, e, i: turn(e["Q", i], e["cos", None], e["sin", None]),
        "kv.K_rot": lambda d, e, i: turn(e["kv.K", i], e["cos", None], e["sin", None]),
    }


def rope_only(turn: Turn, *, pairs: int = 1) -> Instances:
    """The rotation replaced by ``turn``, when the head has at least ``pairs`` pairs."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if not d.rope or d.trace.d_k // 2 < pairs:
            return []
        last = d.trace.d_k // 2 - 1
        fields = {lang: {"last": last, "theta": f"θ_{last}"} for lang in LANGS}
        return one(kind, stages=_turned(turn), fields=fields)

    return instances


def rope_stages(**stages: StageFn) -> Instances:
    """The stages changed, with RoPE."""
    return lambda d, kind: one(kind, stages=stages) if d.rope else []


def rope_on_v(d: Data, kind: Kind) -> Iterable[Mistake]:
    """V rotated too: written rotated on the K/V heads, or only used rotated in H."""
    if not d.rope:
        return []

    def kv_v(d: Data, e: Env, j: int | None) -> Iv:
        return rotate(project("V")(d, e, j), e["cos", None], e["sin", None])

    def read_v(d: Data, e: Env, i: int | None) -> Iv:
        assert i is not None
        return rotate(e["kv.V", d.group(i)], e["cos", None], e["sin", None])

    return [kind.mistake(stages={"kv.V": kv_v}), kind.mistake(stages={"V": read_v})]


def _from_one(part: str) -> StageFn:
    """cos or sin of the angles at positions counted from 1: ``(m + 1) θ_p``."""

    def fn(d: Data, e: Env, i: int | None) -> Iv:
        angles = d.trace.angles + d.trace.theta
        return Iv.point(torch.cos(angles) if part == "cos" else torch.sin(angles))

    return fn


#: RoPE's positions counted from 1 (the first token turns too).
POSITIONS_FROM_ONE: Final = {"cos": _from_one("cos"), "sin": _from_one("sin")}


__all__ = ["POSITIONS_FROM_ONE", "after_softmax", "flip", "gave_transposed", "heads_relabelled",
           "heads_swapped", "interleaved", "k_qt", "masked_only", "neg", "no_w_o", "one_hot",
           "one_kv", "other_heads_v", "right_scale", "rope_on_v", "rope_only", "rope_stages",
           "scales", "slip", "transposed_w_o", "transposed_weights", "width", "window_ahead",
           "window_causal", "wrong_triangle"]  # fmt: skip
