r"""The one generator of exercises: the numbers of a problem from a seed, and what it is graded
against (`Problem`).

A problem is drawn from a seed (Python's ``random.Random(seed)``: the same seed and options
give the same exercise on any machine): ``n`` tokens, ``X \in \{0, 1\}^{n \times d_{model}}``
and per-head ``W_Q^{(i)}`` (``h`` query heads), ``W_K^{(j)}, W_V^{(j)}`` (``g`` K/V heads;
with :math:`g = h` one head's three weights after the other, as the homework's)
:math:`\in \{0, 1\}^{d_{model} \times d_k}`, ``d_k = d_{model} / h``, so that ``Q``, ``K`` and
``V`` are integers; no row or column of ``X`` and no column of a weight is all zeros. ``W_O``
is ``I + E`` with ``E`` a 0/1 strictly upper-triangular matrix with at least one 1: not the
identity, not symmetric, so that forgetting ``W_O`` or transposing it changes the output.

**No drawn problem hides a mistake.** The numbers drawn must let every mistake of the
problem's catalogue (`attention_ref.exercises.catalogue`) show: reproduced and written to the
decimals asked, each changes at least one step the answer asks by more than the grading
tolerance (`attention_ref.exercises.catalogue.hidden`). Otherwise the generator draws again,
from the same stream of the seed (a problem that passes on its first draw is the one it always
was). A mistake no problem of the shape can show (`Kind.blind`: no scaling when ``d_k = 1``;
or hidden on each of the first `BLIND_AFTER` draws: with a window of one key, ``A = I``
whatever the scores) is not waited for: the statement names it. After `MAX_DRAWS` draws the
first with the fewest hidden mistakes is kept, and the statement names those.
"""

from __future__ import annotations

import copy
import functools
import random
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

import numpy as np

from attention_ref.exercises.catalogue import Mistake, catalogue_of, hidden, mistake_id
from attention_ref.exercises.chain import Data, Key, Stage
from attention_ref.exercises.feature_table import (
    active,
    features_of,
    forward,
    layout,
    problem_trace,
)
from attention_ref.exercises.features import Features
from attention_ref.exercises.intervals import Array
from attention_ref.exercises.options import DEFAULT_DECIMALS, ExerciseOptions
from attention_ref.exercises.problem import FINAL_STEPS, Layout, ProblemTrace
from attention_ref.render import JSONValue, Matrix

if TYPE_CHECKING:
    from attention_ref.exercises.mistakes import Kind

#: Token names drawn for an exercise, per language.
WORDS: Final[dict[str, tuple[str, ...]]] = {
    "en": ("Life", "is", "awesome", "Cats", "sleep", "Birds", "sing", "Time", "flies", "We",
           "learn", "Stars", "shine", "Rain", "falls", "Ideas", "grow", "slowly", "today",
           "here"),
    "pt": ("A", "vida", "é", "bela", "Gatos", "dormem", "Aves", "cantam", "O", "tempo", "voa",
           "Nós", "aprendemos", "Estrelas", "brilham", "Chove", "hoje", "aqui", "devagar",
           "sempre"),
}  # fmt: skip
#: The most draws of one exercise before the fewest hidden mistakes are kept.
MAX_DRAWS: Final = 60
#: A mistake hidden on each of this many first draws is one the shape cannot show.
BLIND_AFTER: Final = 12


@dataclass(frozen=True)
class Chain:
    """A problem's chain of steps: its features (``name``: ``mha``, ``gqa+rope`` …), its
    stages, the catalogue of its mistakes, and the steps an answer holds (`Layout`)."""

    features: Features
    stages: tuple[Stage, ...]
    catalogue: tuple[Kind, ...]
    layout: Layout

    @property
    def name(self) -> str:
        return self.features.name


def chain_of(f: Features, *, backward: bool = False) -> Chain:
    """The chain of a problem of features ``f`` (``backward``: its gradients too)."""
    stages = forward(f, backward=backward)
    return Chain(f, stages, catalogue_of(f, backward), layout(f, backward))


@dataclass(frozen=True)
class Problem:
    """What an answer is checked against: the problem's numbers, the language of the report
    and the decimals asked; ``naming`` is the answer's object that names it; ``chain`` its
    chain (default: the features' of ``trace``, with the backward where the problem has
    one)."""

    trace: ProblemTrace
    naming: dict[str, object]
    source: str
    lang: str = "en"
    decimals: int = DEFAULT_DECIMALS
    chain: Chain = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.chain is None:
            f = features_of(self.trace)
            object.__setattr__(self, "chain", chain_of(f, backward=not f.any))

    def data(self, G: Array | None = None) -> Data:
        """What the chain of steps reads (``G``: the upstream gradient, default all ones)."""
        return Data.of(self.trace, G)

    @classmethod
    def of_exercise(cls, opt: ExerciseOptions, draws: int | None = None) -> Problem:
        """An ``attnref exercise`` problem (its tokens in its language); ``draws``: the draw
        the generator kept (`Drawn.kept`, which answer.json carries as ``"draw"``), taken
        without redoing its search (``None``: the search, as ``attnref exercise`` runs it)."""
        problem = draw(opt).problem if draws is None else draw_at(opt, draws)
        return problem_of(opt, problem)


# --- the numbers --------------------------------------------------------------------------------


def _binary(rng: random.Random, rows: int, cols: int, *, nonzero_rows: bool) -> Matrix:
    """A 0/1 matrix with no all-zero column (and, if asked, no all-zero row).

    With ``X`` and ``W`` both so drawn, no column of ``Q = X W`` is all zeros either: each
    column of ``W`` picks at least one column of ``X``, which has a 1 somewhere.
    """
    while True:
        m = [[float(rng.random() < 0.5) for _ in range(cols)] for _ in range(rows)]
        lines = [list(c) for c in zip(*m, strict=True)] + (m if nonzero_rows else [])
        if all(any(v for v in line) for line in lines):
            return m


def _output_weight(rng: random.Random, d: int) -> Matrix:
    """``I + E``, ``E`` 0/1 strictly upper triangular with at least one 1 (needs ``d >= 2``)."""
    while True:
        W = [[float(i == j or (j > i and rng.random() < 0.3)) for j in range(d)] for i in range(d)]
        if any(W[i][j] for i in range(d) for j in range(d) if j > i):
            return W


def _numbers(rng: random.Random, opt: ExerciseOptions) -> dict[str, JSONValue]:
    """One draw: the homework's ``--input`` format, with ``"variant"`` (the features' name),
    ``"kv_heads"``, ``"window"`` or ``"rope"`` for today's attention."""
    n, d, h, d_k, f = opt.tokens, opt.d_model, opt.heads, opt.d_k, opt.features
    problem: dict[str, JSONValue] = {"variant": opt.variant} if f.any else {}
    problem["tokens"] = rng.sample(list(WORDS[opt.lang]), n)
    problem["X"] = _binary(rng, n, d, nonzero_rows=True)
    roles = ("W_Q", "W_K", "W_V") if opt.g == h else ("W_Q",)
    problem["heads"] = [
        {r: _binary(rng, d, d_k, nonzero_rows=False) for r in roles} for _ in range(h)
    ]
    if opt.g != h:
        problem["kv_heads"] = [
            {r: _binary(rng, d, d_k, nonzero_rows=False) for r in ("W_K", "W_V")}
            for _ in range(opt.g)
        ]
    if d >= 2:  # with one column there is no non-identity I + E: the output is the concat
        problem["W_O"] = _output_weight(rng, d)
    problem["causal"] = opt.causal
    for feat in active(f):
        problem |= feat.problem_json(opt)
    return problem


def trace_of(opt: ExerciseOptions, problem: dict[str, JSONValue]) -> ProblemTrace:
    """The numbers of a drawn problem, as the chain reads them."""

    def t(rows: object) -> Array:
        return np.asarray(rows, dtype=np.float64)

    heads: list[dict[str, Matrix]] = problem["heads"]  # type: ignore[assignment]
    kv: list[dict[str, Matrix]] = problem.get("kv_heads", heads)  # type: ignore[assignment]
    W_O = t(problem["W_O"]) if "W_O" in problem else None  # type: ignore[arg-type]
    return problem_trace(
        t(problem["X"]),
        t([hd["W_Q"] for hd in heads]),  # type: ignore[arg-type]
        t([hd["W_K"] for hd in kv]),
        t([hd["W_V"] for hd in kv]),
        W_O,
        opt.features,
        causal=opt.causal,
        options=opt.feature_options,
        tokens=tuple(str(x) for x in problem["tokens"]),  # type: ignore[union-attr]
    )


def problem_of(opt: ExerciseOptions, problem: dict[str, JSONValue]) -> Problem:
    """What ``check`` grades an answer to the drawn ``problem`` against."""
    f = opt.features
    chain = chain_of(f, backward=opt.backward or not f.any)
    return Problem(
        trace_of(opt, problem),
        {"exercise": opt.to_json()},
        opt.command,  # the report's header: the whole command, --backward included
        opt.lang,
        opt.decimals,
        chain,
    )


# --- the invariant ------------------------------------------------------------------------------


def asked_keys(opt: ExerciseOptions, has_w_o: bool) -> list[Key]:
    """The steps the answer asks (its template's), as the chain's keys."""
    lay = layout(opt.features)
    keys: list[Key] = [(n, i) for i in range(opt.heads) for n in lay.template_heads]
    keys += [(f"kv.{n}", j) for j in range(opt.g) for n in lay.template_kv_heads]
    if opt.backward:
        keys += [("grad.W_O", None)] * has_w_o + [("grad.X", None)]
        keys += [(f"grad.{n}", 0) for n in ("A", "S_masked", "W_Q")]
    return keys + [(n, None) for n in FINAL_STEPS]


def _stages(opt: ExerciseOptions) -> tuple[Stage, ...]:
    return forward(opt.features, backward=opt.backward)


@dataclass(frozen=True)
class Drawn:
    """A drawn problem (the ``--input`` format), the draws it took, the mistakes it cannot
    tell apart from the right numbers (none but `Kind.blind`'s, unless `MAX_DRAWS` ran out),
    and which draw of the seed's stream it is (``kept``, from 1: `draw_at` draws it again
    without the search; answer.json carries it as ``"draw"``)."""

    problem: dict[str, JSONValue]
    draws: int
    hidden: tuple[Mistake, ...]
    kept: int


def draw(opt: ExerciseOptions) -> Drawn:
    """The exercise's numbers: the first draw of the seed's stream that hides no mistake of
    its catalogue (the module docstring). A mistake hidden on each of the first
    `BLIND_AFTER` draws is one the shape cannot show: it is no longer waited for. The same
    options give the same problem (a fresh copy each time; the draw is done once)."""
    found = _draw(opt)
    return replace(found, problem=copy.deepcopy(found.problem))


@functools.lru_cache(maxsize=256)
def _draw(opt: ExerciseOptions) -> Drawn:
    rng = random.Random(opt.seed)
    f = opt.features
    catalogue, stages = catalogue_of(f, opt.backward or not f.any), _stages(opt)

    def look(
        problem: dict[str, JSONValue],
        *,
        skip: frozenset[str] = frozenset(),
        watch: frozenset[str] = frozenset(),
        first: bool = False,
    ) -> tuple[list[Mistake], list[Mistake]]:
        d = Data.of(trace_of(opt, problem))
        return hidden(
            d,
            stages,
            opt.decimals,
            asked_keys(opt, "W_O" in problem),
            catalogue,
            skip=skip,
            watch=watch,
            first=first,
        )

    skip: frozenset[str] = frozenset()
    watch: frozenset[str] | None = None  # hidden on every draw so far
    fewest: tuple[int, int, dict[str, JSONValue]] | None = None
    for count in range(1, MAX_DRAWS + 1):
        problem = _numbers(rng, opt)
        drawn, blind = look(problem, skip=skip, watch=watch or frozenset(), first=count > 1)
        if not drawn:
            return Drawn(problem, count, tuple(blind), kept=count)
        ids = frozenset(mistake_id(m) for m in drawn)
        watch = ids if watch is None else watch & ids
        if count == BLIND_AFTER:
            skip, watch = watch, frozenset()
        if fewest is None or len(drawn) < fewest[0]:
            fewest = (len(drawn), count, problem)
    assert fewest is not None
    _, kept, problem = fewest
    drawn, blind = look(problem, skip=skip)
    return Drawn(problem, MAX_DRAWS, tuple(drawn + blind), kept=kept)


def draw_at(opt: ExerciseOptions, draws: int) -> dict[str, JSONValue]:
    """The numbers of the ``draws``-th draw of the seed's stream (1 to `MAX_DRAWS`), without
    the search: what `draw` keeps when ``draws`` is its `Drawn.kept`."""
    if not 1 <= draws <= MAX_DRAWS:
        raise ValueError(f"draws must be between 1 and {MAX_DRAWS}, got {draws}")
    rng = random.Random(opt.seed)
    for _ in range(draws - 1):
        _numbers(rng, opt)
    return _numbers(rng, opt)


def draw_problem(opt: ExerciseOptions) -> dict[str, JSONValue]:
    """The exercise's numbers in the ``--input`` format (a variant's with its own keys)."""
    return draw(opt).problem


__all__ = [
    "MAX_DRAWS",
    "WORDS",
    "Chain",
    "Drawn",
    "Problem",
    "asked_keys",
    "chain_of",
    "draw",
    "draw_at",
    "draw_problem",
    "problem_of",
    "trace_of",
]
