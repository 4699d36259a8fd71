r"""The catalogue of common mistakes that ``attnref check`` can name: data, not code paths.

Each `Kind` of mistake is a name, its words in English and Portuguese, and how to reproduce it
on a problem: `Kind.instances` gives the `Mistake` objects that exist for that problem (a
transposed weight per head, a permutation of the heads…). A `Mistake` is a change to the chain
of `attention_ref.worked.steps`, of one of three sorts:

* ``stages``: formulas used instead of the chain's, by stage name (``"S"``: no scaling);
* ``written``: how a step is written, the computation unchanged (``"Q"``: you gave Qᵀ);
* ``adjust``: a hook on each computed step that may use the student's numbers (the slip in one
  entry), carried on to the next steps or only written (``adjust_carries``).

A mistake of ``rank`` 1 or more (the slips) is tried only when no mistake of a lower rank
reproduces the answer on its own.

The grader (`attention_ref.worked.check`) knows none of them by name: it walks `CATALOGUE`,
keeps what changes something on the problem (`mistakes_for`) and names a mistake, or two
together, only when recomputing with it reproduces every step the student gave. A variant of
attention (GQA, RoPE, a sliding window) adds its own `Kind` entries over its own stages without
touching the grader.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import torch

from attention_ref.worked.steps import (
    FORWARD,
    Data,
    Env,
    Given,
    Iv,
    Key,
    Run,
    Stage,
    StageFn,
    loosely,
    run_chain,
)

LANGS: Final = ("en", "pt")
#: a hook on each computed step: (key, raw, the student's value, the run's notes, decimals)
Adjust = Callable[[Key, Iv, "Given | None", MutableMapping[str, object], int], Iv]


@dataclass(frozen=True)
class Style:
    """How the grader writes numbers and steps in a language (the slip's words need them)."""

    lang: str
    number: Callable[[float], str]
    step: Callable[[Key], str]
    row: Callable[[Key, int], str]


@dataclass(frozen=True, kw_only=True)
class Mistake:
    """One mistake on one problem: a change to the chain, and its words per language."""

    name: str
    words: Mapping[str, str]
    stages: Mapping[str, StageFn] = field(default_factory=dict)
    written: Mapping[str, Callable[[Iv], Iv]] = field(default_factory=dict)
    adjust: Adjust | None = None
    adjust_carries: bool = True
    rank: int = 0
    #: the words from what the run recorded (``None``: ``words`` as they are)
    describe: Callable[[Mapping[str, object], Style], str] | None = None

    def text(self, notes: Mapping[str, object], style: Style) -> str:
        """The mistake in words, in ``style.lang``."""
        if self.describe is not None:
            return self.describe(notes, style)
        return self.words[style.lang]

    def compatible(self, other: Mistake) -> bool:
        """Whether the two can happen together: they change different stages and writings,
        and at most one looks at the student's numbers."""
        return (not set(self.stages) & set(other.stages)
                and not set(self.written) & set(other.written)
                and (self.adjust is None or other.adjust is None))  # fmt: skip


@dataclass(frozen=True)
class Kind:
    """An entry of the catalogue: a name, its words (templates) and how to reproduce it."""

    name: str
    words: Mapping[str, str]
    instances: Callable[[Data, Kind], Iterable[Mistake]]

    def mistake(self, name: str = "", **kw: object) -> Mistake:
        """A `Mistake` of this kind; the words' ``{fields}`` filled per language from
        ``kw["fields"]`` (a mapping lang -> fields), the rest passed on."""
        fields: Mapping[str, Mapping[str, object]] = kw.pop("fields", {})  # type: ignore[assignment]
        words = {lang: self.words[lang].format(**fields.get(lang, {})) for lang in LANGS}
        return Mistake(name=name or self.name, words=words, **kw)  # type: ignore[arg-type]


def num(x: float, lang: str) -> str:
    """``x`` to 4 significant digits, with a decimal comma in Portuguese."""
    s = f"{x:.4g}"
    return s.replace(".", ",") if lang == "pt" else s


def sup(i: int) -> str:
    """Head ``i`` (0-based) as a superscript: ``⁽¹⁾``."""
    return "⁽" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(i + 1)) + "⁾"


def _one(kind: Kind, **kw: object) -> Iterable[Mistake]:
    return [kind.mistake(**kw)]


# --- the reproductions -------------------------------------------------------------------------


def _scales(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Scores divided by √d_model or by d_k instead of √d_k; equal factors are one mistake."""
    d_k, d_model = d.trace.d_k, d.trace.d_model
    right = math.sqrt(d_k)
    factors: dict[float, list[str]] = {}
    for value, symbol in ((math.sqrt(d_model), "√d_model"), (float(d_k), "d_k")):
        if not math.isclose(value, right):
            factors.setdefault(round(value, 12), []).append(symbol)
    for value, symbols in factors.items():
        name = "scale_" + "_".join(s.lstrip("√") for s in symbols)
        yield kind.mistake(
            name,
            stages={"S": lambda d, e, i, c=value: e["scores", i] / c},
            fields={lang: {"names": " = ".join(symbols), "value": num(value, lang),
                           "right": num(right, lang)} for lang in LANGS},
        )  # fmt: skip


def _right_scale(d: Data) -> dict[str, dict[str, object]]:
    return {lang: {"right": num(math.sqrt(d.trace.d_k), lang)} for lang in LANGS}


def _after_softmax(zero: bool) -> Callable[[Data, Kind], Iterable[Mistake]]:
    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if d.trace.M is None:
            return []
        blocked = torch.isinf(d.trace.M)

        def A(d: Data, e: Env, i: int | None) -> Iv:
            weights = e["S", i].softmax_rows()
            if zero:
                return weights.fill(blocked, 0.0)
            return weights + Iv.point(d.trace.M)

        return _one(kind, stages={"S_masked": lambda d, e, i: e["S", i], "A": A})

    return instances


def _causal_only(**stages: StageFn) -> Callable[[Data, Kind], Iterable[Mistake]]:
    return lambda d, kind: _one(kind, stages=stages) if d.trace.M is not None else []


def _wrong_triangle(d: Data, e: Env, i: int | None) -> Iv:
    assert d.trace.M is not None
    return e["S", i].fill(torch.isinf(d.trace.M.T), -math.inf)


def _transposed_weights(d: Data, kind: Kind) -> Iterable[Mistake]:
    """X W⁽ⁱ⁾ᵀ for a square, non-symmetric weight of one head."""
    for role in ("Q", "K", "V"):
        W = getattr(d.trace, f"W_{role}")
        for i in range(d.trace.h):
            if W.shape[-1] != W.shape[-2] or torch.equal(W[i], W[i].T):
                continue
            symbol = f"W_{role}{sup(i) if d.trace.h > 1 else ''}"

            def project(d: Data, e: Env, j: int | None, role: str = role, i: int = i) -> Iv:
                W = getattr(d.trace, f"W_{role}")[j]
                out = Iv.point(d.trace.X) @ Iv.point(W.T if j == i else W)
                b = getattr(d.trace, f"b_{role}")
                return out + Iv.point(b[j].expand_as(out.lo)) if b is not None else out

            yield kind.mistake(f"transposed_W_{role}", stages={role: project},
                               fields={lang: {"sym": symbol} for lang in LANGS})  # fmt: skip


def _transposed_W_O(d: Data, kind: Kind) -> Iterable[Mistake]:
    W_O = d.trace.W_O
    if W_O is None or W_O.shape[0] != W_O.shape[1] or torch.equal(W_O, W_O.T):
        return []

    def output(d: Data, e: Env, i: int | None) -> Iv:
        assert d.trace.W_O is not None
        out = e["concat", None] @ Iv.point(d.trace.W_O.T)
        b = d.trace.b_O
        return out + Iv.point(b.expand_as(out.lo)) if b is not None else out

    return _one(kind, stages={"output": output})


def _gave_transposed(step: str, symbol: str) -> Callable[[Data, Kind], Iterable[Mistake]]:
    """The step written transposed (the computation right); for ∂W_O only with gradients."""

    def instances(d: Data, kind: Kind) -> Iterable[Mistake]:
        if step == "grad.W_O" and d.trace.W_O is None:
            return []
        return _one(kind, written={step: lambda v: v.T},
                    fields={lang: {"sym": symbol} for lang in LANGS})  # fmt: skip

    return instances


def _heads_swapped(d: Data, kind: Kind) -> Iterable[Mistake]:
    """Every other order of the heads in the concat (2 to 4 heads)."""
    h = d.trace.h
    if not 2 <= h <= 4:
        return
    for perm in itertools.permutations(range(h)):
        if perm == tuple(range(h)):
            continue
        order = " | ".join(f"H{sup(j)}" for j in perm)
        yield kind.mistake(
            stages={"concat": lambda d, e, i, p=perm: Iv.cat([e["H", j] for j in p])},
            fields={lang: {"order": order} for lang in LANGS},
        )


def _other_heads_V(d: Data, kind: Kind) -> Iterable[Mistake]:
    """With two heads: H⁽¹⁾ = A⁽¹⁾ V⁽²⁾ and H⁽²⁾ = A⁽²⁾ V⁽¹⁾."""
    if d.trace.h != 2:
        return []
    return _one(kind, stages={"H": lambda d, e, i: e["A", i] @ e["V", 1 - (i or 0)]})


def _no_W_O(d: Data, kind: Kind) -> Iterable[Mistake]:
    if d.trace.W_O is None:
        return []
    return _one(kind, stages={"output": lambda d, e, i: e["concat", None]})


def _slip_adjust(
    key: Key, raw: Iv, g: Given | None, notes: MutableMapping[str, object], decimals: int
) -> Iv:
    """At the first step where the student's numbers differ in exactly one entry, take that
    entry as they wrote it (the next steps then follow from it, or not: ``adjust_carries``)."""
    if "slip" in notes or g is None or g.value.shape != raw.shape or g.value.numel() < 2:
        return raw
    off = ~loosely(g, raw, decimals)
    if int(off.sum()) != 1:
        return raw
    r, c = (int(x) for x in off.nonzero()[0])
    notes["slip"] = (key, r, c, float(g.value[r, c]), float(raw.mid[r, c]))
    lo, hi = raw.lo.clone(), raw.hi.clone()
    lo[r, c] = hi[r, c] = g.value[r, c]
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


def _slip(d: Data, kind: Kind) -> Iterable[Mistake]:
    """The slip carried on (rank 1), then the slip only written, the rest right (rank 2)."""
    return [Mistake(name=kind.name, words=kind.words, adjust=_slip_adjust, rank=1 + (not carry),
                    adjust_carries=carry, describe=_slip_words(kind.words))
            for carry in (True, False)]  # fmt: skip


# --- the catalogue -----------------------------------------------------------------------------

CATALOGUE: Final[tuple[Kind, ...]] = (
    Kind("no_mask", {
        "en": "no causal mask: S̃ = S, so each token also sees the tokens after it",
        "pt": "sem a máscara causal: S̃ = S, e cada token vê também os tokens depois dele",
    }, _causal_only(S_masked=lambda d, e, i: e["S", i])),
    Kind("mask_wrong_triangle", {
        "en": "the mask on the wrong triangle: −∞ below the diagonal instead of above",
        "pt": "a máscara no triângulo errado: −∞ abaixo da diagonal em vez de acima",
    }, _causal_only(S_masked=_wrong_triangle)),
    Kind("mask_after_softmax", {
        "en": "the mask applied after the softmax (masked weights set to 0, so rows no longer "
        "sum to 1)",
        "pt": "a máscara aplicada depois da softmax (pesos mascarados zerados, e as linhas não "
        "somam mais 1)",
    }, _after_softmax(zero=True)),
    Kind("mask_added_after_softmax", {
        "en": "the mask added after the softmax (A = softmax(S) + M)",
        "pt": "a máscara somada depois da softmax (A = softmax(S) + M)",
    }, _after_softmax(zero=False)),
    Kind("no_scale", {
        "en": "no scaling: S = Q Kᵀ was not divided by √d_k = {right}",
        "pt": "sem escala: S = Q Kᵀ não foi dividido por √d_k = {right}",
    }, lambda d, kind: _one(kind, stages={"S": lambda d, e, i: e["scores", i]},
                            fields=_right_scale(d))),
    Kind("scale", {
        "en": "the scores were divided by {names} = {value} instead of √d_k = {right}",
        "pt": "os scores foram divididos por {names} = {value} em vez de √d_k = {right}",
    }, _scales),
    Kind("softmax_columns", {
        "en": "softmax over the columns instead of the rows (each column of A sums to 1, not "
        "each row)",
        "pt": "softmax pelas colunas em vez das linhas (cada coluna de A soma 1, não cada linha)",
    }, lambda d, kind: _one(kind, stages={"A": lambda d, e, i: e["S_masked", i].T
                                          .softmax_rows().T})),
    Kind("K_Qt", {
        "en": "K Qᵀ instead of Q Kᵀ (the scores transposed)",
        "pt": "K Qᵀ em vez de Q Kᵀ (os scores transpostos)",
    }, lambda d, kind: _one(kind, stages={"scores": lambda d, e, i: e["K", i] @ e["Q", i].T})),
    Kind("transposed_W", {
        "en": "a transposed weight: X {sym}ᵀ instead of X {sym}",
        "pt": "um peso transposto: X {sym}ᵀ em vez de X {sym}",
    }, _transposed_weights),
    Kind("transposed_W_O", {
        "en": "a transposed weight: Concat W_Oᵀ instead of Concat W_O",
        "pt": "um peso transposto: Concat W_Oᵀ em vez de Concat W_O",
    }, _transposed_W_O),
    *(Kind(f"gave_{role}t", {
        "en": "you gave {sym}ᵀ, the transpose of {sym}, instead of {sym}",
        "pt": "você deu {sym}ᵀ, a transposta de {sym}, em vez de {sym}",
    }, _gave_transposed(role, role)) for role in ("Q", "K", "V")),
    Kind("gave_dW_Ot", {
        "en": "you gave (∂W_O)ᵀ, the transpose of ∂W_O, instead of ∂W_O",
        "pt": "você deu (∂W_O)ᵀ, a transposta de ∂W_O, em vez de ∂W_O",
    }, _gave_transposed("grad.W_O", "∂W_O")),
    Kind("heads_swapped", {
        "en": "the heads in the wrong order in the concat: [{order}]",
        "pt": "as cabeças na ordem errada na concatenação: [{order}]",
    }, _heads_swapped),
    Kind("other_heads_V", {
        "en": "each head used the other head's V: H⁽¹⁾ = A⁽¹⁾ V⁽²⁾ and H⁽²⁾ = A⁽²⁾ V⁽¹⁾",
        "pt": "cada cabeça usou o V da outra: H⁽¹⁾ = A⁽¹⁾ V⁽²⁾ e H⁽²⁾ = A⁽²⁾ V⁽¹⁾",
    }, _other_heads_V),
    Kind("no_W_O", {
        "en": "W_O forgotten: the output given is the concat",
        "pt": "W_O esquecida: a saída dada é a concatenação",
    }, _no_W_O),
    Kind("slip", {
        "en": "an arithmetic slip in one entry: {step} at [{row}, {col}] is {yours} where "
        "{right} is right",
        "pt": "um erro de conta em uma entrada: {step} em [{row}, {col}] vale {yours} onde o "
        "certo é {right}",
    }, _slip),
)  # fmt: skip


def changes_something(
    d: Data,
    m: Mistake,
    stages: Sequence[Stage],
    decimals: int,
    right: Run | None = None,
    exact: Run | None = None,
) -> bool:
    """Whether the mistake, written to ``decimals`` places, differs somewhere from what the
    exact computation accepts (a mistake that changes nothing cannot be told apart); a
    mistake of rank 1 or more depends on the answer, so it is kept. ``right``: the exact run."""
    if m.rank:
        return True
    right = right or run_chain(d, stages, decimals=decimals, asked=decimals)
    exact = exact or run_chain(d, stages, decimals=None, asked=decimals)
    wrong = run_chain(d, stages, decimals=None, asked=decimals, mistakes=[m], base=exact)
    for key, band in right.raw.items():
        value = wrong.raw[key].lo
        if value.shape != band.shape or bool(torch.isnan(value).any()):
            return True
        rounded = torch.where(torch.isinf(value), value, value.round(decimals=decimals))
        if not bool(loosely(Given(rounded, torch.full(value.shape, decimals)), band, decimals)
                    .all()):  # fmt: skip
            return True
    return False


def mistakes_for(
    d: Data,
    stages: Sequence[Stage] = FORWARD,
    decimals: int = 3,
    catalogue: Sequence[Kind] = CATALOGUE,
) -> list[Mistake]:
    """The catalogue's mistakes that exist for this problem and change something on it."""
    right = run_chain(d, stages, decimals=decimals, asked=decimals)
    exact = run_chain(d, stages, decimals=None, asked=decimals)
    return [m for kind in catalogue for m in kind.instances(d, kind)
            if changes_something(d, m, stages, decimals, right, exact)]  # fmt: skip


__all__ = ["CATALOGUE", "LANGS", "Kind", "Mistake", "Style", "changes_something",
           "mistakes_for", "num", "sup"]  # fmt: skip
