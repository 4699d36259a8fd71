r"""A checker for students: ``attnref check ANSWER.json``.

The answer names its problem (``"exercise": {"seed": …, options…}``, ``"input": FILE`` or
``"example": NAME``) and gives any subset of the steps, in the JSON names of
``attnref explain --format json``: per head ``Q, K, V, scores, S, S_masked, A, H`` (in
``"heads": [{…}, …]``, head 1 first), then ``concat``, ``output``, and gradients under
``"grads"`` (``{"W_O", "b_O", "concat", "X", "heads": [{"H", "A", "S_masked", "S", "Q",
"K", "V", "W_Q", "W_K", "W_V"}]}``, of $L = \sum \text{output}$ unless ``"grad_output"``
gives $G$). Masked entries may be written ``"-inf"``.

Each given step is **right** when every entry is within half a unit of the last decimal the
student wrote in that matrix (``0.670`` → ±0.0005; ``2`` → ±0.5; the most decimals written in
the matrix count for all of it), else **wrong**, with the entries that are off. A step that
is off from the exact value but equals the same formula applied to the student's own earlier
(right, rounded) values is right, with a note: it was computed from rounded inputs.

When a step is wrong, every common mistake of `MISTAKES` is recomputed: the steps are run
again with that one mistake (from the exact inputs, and from the student's own earlier
values), and the mistake is named only when it reproduces **every** step the student gave.
Nothing is guessed: a diagnosis is a recomputation that matches.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.worked.gradients import TRACES, input_trace, read_json
from attention_ref.worked.inputs import InputError, load_input_file, parse_input

#: The steps of one head, in seed 000's order.
HEAD_STEPS: Final = ("Q", "K", "V", "scores", "S", "S_masked", "A", "H")
#: The steps after the heads.
FINAL_STEPS: Final = ("concat", "output")
#: Gradient names: per head, and of the whole.
GRAD_HEAD_STEPS: Final = ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")
GRAD_STEPS: Final = ("output", "W_O", "b_O", "concat", "X")
ANSWER_KEYS: Final = frozenset(
    {"exercise", "input", "example", "heads", "concat", "output", "grads", "grad_output"}
)
INFINITIES: Final[dict[str, float]] = {
    "-inf": -math.inf, "−inf": -math.inf, "-∞": -math.inf, "−∞": -math.inf,
    "inf": math.inf, "+inf": math.inf, "∞": math.inf,
}  # fmt: skip
#: Slack for binary floating point on top of half a unit of the last decimal.
FLOAT_SLACK: Final = 1e-9

#: A step: its name and head (0-based; ``None`` after the heads), e.g. ``("A", 1)``.
Key = tuple[str, int | None]


def label(key: Key, prefix: str = "") -> str:
    """The JSON path of a step in the answer: ``heads[1].A`` (head 2: the list counts from 0),
    ``concat``, ``grads.heads[0].W_Q``."""
    name, head = key
    return prefix + (f"heads[{head}].{name}" if head is not None else name)


def math_name(key: Key, grad: bool = False) -> str:
    """The step as the book writes it: ``A⁽²⁾``, ``∂W_Q⁽¹⁾``, ``concat``."""
    name, head = key
    sym = {"scores": "QKᵀ", "S_masked": "S̃"}.get(name, name)
    sup = "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(head + 1)) if head is not None else ""
    if sup:
        sym = f"Q⁽{sup}⁾K⁽{sup}⁾ᵀ" if name == "scores" else f"{sym}⁽{sup}⁾"
    return ("∂" if grad else "") + sym


# --- the student's numbers -------------------------------------------------------------------


class _Literal(str):
    """A JSON number kept as written, so that its decimals can be counted."""


@dataclass(frozen=True)
class Given:
    """A matrix the student wrote: its values (±inf allowed) and the decimals written."""

    value: Tensor
    decimals: int

    @property
    def tolerance(self) -> float:
        """Half a unit of the last decimal written: ``3`` decimals → ``0.0005``."""
        return 0.5 * 10.0**-self.decimals + FLOAT_SLACK


def _entry(v: object, where: str) -> tuple[float, int]:
    if isinstance(v, bool) or v is None:
        raise InputError(f"{where} is {json.dumps(v)}, not a number")
    if isinstance(v, int):
        return float(v), 0
    if isinstance(v, _Literal):
        try:
            d = Decimal(v)
        except InvalidOperation:
            raise InputError(f"{where} is {v}, not a number") from None
        exponent = d.as_tuple().exponent
        return float(d), max(0, -exponent) if isinstance(exponent, int) else 0
    if isinstance(v, str) and v.strip() in INFINITIES:
        return INFINITIES[v.strip()], 0
    raise InputError(f'{where} is {json.dumps(v)}: write a number, or "-inf" for a masked entry')


def given_matrix(obj: object, where: str) -> Given:
    """A student's matrix (list of rows; a vector is one row), else `InputError`."""
    if isinstance(obj, list) and obj and not any(isinstance(r, list) for r in obj):
        obj = [obj]  # a vector (a bias, b_O) as one row
    if not isinstance(obj, list) or not obj or not all(isinstance(r, list) for r in obj):
        raise InputError(f"{where} must be a non-empty list of rows of numbers")
    width = len(obj[0])
    if width == 0:
        raise InputError(f"{where} row 1 is empty")
    rows, decimals = [], 0
    for i, row in enumerate(obj):
        if len(row) != width:
            raise InputError(
                f"{where} is ragged: row {i + 1} has {len(row)} entries, row 1 {width}"
            )
        values = []
        for j, v in enumerate(row):
            x, d = _entry(v, f"{where}[{i + 1}][{j + 1}]")
            if math.isnan(x):
                raise InputError(f"{where}[{i + 1}][{j + 1}] is not a number")
            values.append(x)
            decimals = max(decimals, d)
        rows.append(values)
    return Given(torch.tensor(rows, dtype=torch.float64), min(decimals, 15))


def matches(g: Given, value: Tensor) -> bool:
    """Every entry within the tolerance (infinities equal when the same); shapes equal."""
    return g.value.shape == value.shape and bool(_close(g.value, value, g.tolerance).all())


def _close(a: Tensor, b: Tensor, tol: float) -> Tensor:
    both_inf = torch.isinf(a) & torch.isinf(b) & (torch.sign(a) == torch.sign(b))
    finite = torch.isfinite(a) & torch.isfinite(b)
    diff = torch.where(finite, (a - b).abs(), torch.full_like(a, math.inf))
    return both_inf | (diff <= tol)


# --- the problem and its steps ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Mistake:
    """One common mistake, as a change to the steps; ``text`` says it in words."""

    name: str
    text: str
    scale: float | None = None  # S = scores / scale, instead of / √d_k
    kq: bool = False  # K Qᵀ instead of Q Kᵀ
    softmax_columns: bool = False
    mask_below: bool = False  # −∞ below the diagonal instead of above
    mask_after: str = ""  # "zero": A = softmax(S), masked entries set to 0; "inf": + M
    transposed: tuple[str, int | None] | None = None  # ("W_Q", head) or ("W_O", None)
    order: tuple[int, ...] | None = None  # the heads' order in the concat
    no_W_O: bool = False  # noqa: N815


def run_steps(
    tr: ref.AttentionTrace, mistake: Mistake | None = None, given: Mapping[Key, Tensor] = {}
) -> dict[Key, Tensor]:
    r"""Every step of one sequence's attention, with at most one `Mistake`.

    Each step is computed from the previous ones; where ``given`` holds a previous step (the
    student's value), that value is used instead, so a step can be recomputed "from your own
    numbers". With neither, the result equals the forward's trace.
    """
    m = mistake or Mistake(name="", text="")
    out: dict[Key, Tensor] = {}

    def take(key: Key, value: Tensor) -> Tensor:
        out[key] = value
        yours = given.get(key)
        return yours if yours is not None and yours.shape == value.shape else value

    X, d_k = tr.X, tr.d_k
    heads: list[Tensor] = []
    for i in range(tr.h):
        proj = {}
        for role in ("Q", "K", "V"):
            W = getattr(tr, f"W_{role}")[i]
            if m.transposed == (f"W_{role}", i):
                W = W.T
            b = getattr(tr, f"b_{role}")
            proj[role] = take((role, i), ref.project(X, W, b[i] if b is not None else None))
        Q, K, V = proj["Q"], proj["K"], proj["V"]
        scores = take(("scores", i), ref.scores(K, Q) if m.kq else ref.scores(Q, K))
        S = take(("S", i), scores / m.scale if m.scale is not None else ref.scale(scores, d_k))
        M = tr.M  # the trace's causal mask (None: no mask); its transpose masks below
        if M is not None and m.mask_below:
            M = M.T
        S_masked = take(("S_masked", i), ref.add_mask(S, M) if M is not None and
                        not m.mask_after else S)  # fmt: skip
        # softmax over the columns: each column sums to 1
        A = ref.softmax_rows(S_masked.T).T if m.softmax_columns else ref.softmax_rows(S_masked)
        if M is not None and m.mask_after == "zero":
            A = A.masked_fill(torch.isinf(M), 0.0)
        elif M is not None and m.mask_after == "inf":
            A = ref.add_mask(A, M)
        A = take(("A", i), A)
        heads.append(take(("H", i), ref.weighted_sum(A, V)))
    order = m.order or tuple(range(tr.h))
    concat = take(("concat", None), ref.concat_heads([heads[j] for j in order]))
    W_O = tr.W_O
    if W_O is None or m.no_W_O:
        take(("output", None), concat)
    else:
        take(("output", None), ref.output_projection(concat, W_O.T if m.transposed ==
                                                     ("W_O", None) else W_O, tr.b_O))  # fmt: skip
    return out


def mistakes_for(tr: ref.AttentionTrace) -> list[Mistake]:
    """The common mistakes that change some step of this problem, each with its words.

    Scale factors equal to √d_k are left out (no mistake here), and factors equal to each
    other are one mistake naming both (``√d_model = d_k = 2`` when d_model = 4, d_k = 2).
    """
    d_k, d_model = tr.d_k, tr.d_model
    right = math.sqrt(d_k)
    factors: dict[float, list[str]] = {}
    for value, name in ((math.sqrt(d_model), "√d_model"), (float(d_k), "d_k")):
        if not math.isclose(value, right):
            factors.setdefault(round(value, 12), []).append(name)
    out = [
        Mistake(name="no_scale", scale=1.0,
                text=f"no scaling: S = Q Kᵀ was not divided by √d_k = {right:.4g}"),
        *(Mistake(name="scale_" + "_".join(n.strip("√").replace("√", "") for n in names),
                  scale=value,
                  text=f"the scores were divided by {' = '.join(names)} = {value:.4g} instead "
                  f"of √d_k = {right:.4g}")
          for value, names in factors.items()),
        Mistake(name="softmax_columns", softmax_columns=True,
                text="softmax over the columns instead of the rows (each column of A sums to "
                "1, not each row)"),
        Mistake(name="K_Qt", kq=True, text="K Qᵀ instead of Q Kᵀ (the scores transposed)"),
    ]  # fmt: skip
    if tr.M is not None:
        out += [
            Mistake(name="mask_wrong_triangle", mask_below=True,
                    text="the mask on the wrong triangle: −∞ below the diagonal instead of "
                    "above"),
            Mistake(name="mask_after_softmax", mask_after="zero",
                    text="the mask applied after the softmax (masked weights set to 0, so rows "
                    "no longer sum to 1)"),
            Mistake(name="mask_after_softmax", mask_after="inf",
                    text="the mask added after the softmax (A = softmax(S) + M)"),
        ]  # fmt: skip
    for role in ("W_Q", "W_K", "W_V"):
        W = getattr(tr, role)
        for i in range(tr.h):
            if W.shape[-1] == W.shape[-2] and not torch.equal(W[i], W[i].T):
                sym = f"{role}⁽{i + 1}⁾" if tr.h > 1 else role
                out.append(
                    Mistake(
                        name=f"transposed_{role}",
                        transposed=(role, i),
                        text=f"a transposed weight: X {sym}ᵀ instead of X {sym}",
                    )
                )
    if tr.W_O is not None:
        W_O = tr.W_O
        if W_O.shape[0] == W_O.shape[1] and not torch.equal(W_O, W_O.T):
            out.append(
                Mistake(
                    name="transposed_W_O",
                    transposed=("W_O", None),
                    text="a transposed weight: Concat W_Oᵀ instead of Concat W_O",
                )
            )
        out.append(
            Mistake(
                name="no_W_O", no_W_O=True, text="W_O forgotten: the output given is the concat"
            )
        )
    if 2 <= tr.h <= 4:
        for perm in itertools.permutations(range(tr.h)):
            if perm != tuple(range(tr.h)):
                names = " | ".join(f"H⁽{j + 1}⁾" for j in perm)
                out.append(
                    Mistake(
                        name="heads_swapped",
                        order=perm,
                        text=f"the heads in the wrong order in the concat: [{names}]",
                    )
                )
    exact = run_steps(tr)
    return [m for m in out if _changes_something(exact, run_steps(tr, m))]


def _changes_something(exact: Mapping[Key, Tensor], other: Mapping[Key, Tensor]) -> bool:
    """Whether a mistake changes any step (K Qᵀ changes nothing when Q Kᵀ is symmetric)."""
    return any(
        exact[k].shape != other[k].shape or not bool(_close(exact[k], other[k], 1e-12).all())
        for k in exact
    )


# --- the answer ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """A parsed answer: the problem's trace, the steps given, the gradients given and G."""

    problem: str
    trace: ref.AttentionTrace
    steps: dict[Key, Given]
    grads: dict[Key, Given]
    G: Tensor | None


def _resolve(doc: dict[str, object], base: Path) -> tuple[str, ref.AttentionTrace]:
    """The problem the answer names, as a single-sequence trace."""
    named = [k for k in ("exercise", "input", "example") if k in doc]
    if len(named) != 1:
        raise InputError(
            'the answer must name its problem with exactly one of "exercise": {"seed": …}, '
            f'"input": FILE or "example": NAME (found {len(named)})'
        )
    kind = named[0]
    if kind == "exercise":
        from attention_ref.worked.exercise import draw_problem, options_from_json

        opt = options_from_json(doc["exercise"])
        inp = parse_input(draw_problem(opt))
        what = (f"exercise --seed {opt.seed} (n = {opt.tokens}, d_model = {opt.d_model}, "
                f"h = {opt.heads}, causal = {str(opt.causal).lower()})")  # fmt: skip
        return what, input_trace(inp)
    if kind == "input":
        path = doc["input"]
        if not isinstance(path, str):
            raise InputError('"input" must be the path of an --input JSON file')
        p = Path(path) if Path(path).is_absolute() else base / path
        return f"--input {path}", input_trace(load_input_file(p))
    name = doc["example"]
    if name not in TRACES:
        raise InputError(f'"example" must be one of: {", ".join(TRACES)}; got {name!r}')
    return f"example {name}", TRACES[str(name)]()[0]


def _head_list(obj: object, where: str, names: tuple[str, ...], h: int) -> dict[Key, Given]:
    if not isinstance(obj, list):
        raise InputError(f"{where} must be a list of objects, one per head (head 1 first)")
    if len(obj) > h:
        raise InputError(f"{where} has {len(obj)} entries but the problem has h = {h} heads")
    out: dict[Key, Given] = {}
    for i, head in enumerate(obj):
        if not isinstance(head, dict):
            raise InputError(f"{where}[{i}] must be an object with some of: {', '.join(names)}")
        unknown = sorted(set(head) - set(names))
        if unknown:
            raise InputError(
                f"{where}[{i}] has unknown step {unknown[0]!r}; steps are: {', '.join(names)}"
            )
        for name in names:
            if name in head:
                out[(name, i)] = given_matrix(head[name], f"{where}[{i}].{name}")
    return out


def parse_answer(doc: object, base: Path = Path(".")) -> Answer:
    """Validate a decoded answer (numbers as `_Literal`); `InputError` names what is wrong."""
    if not isinstance(doc, dict):
        raise InputError('the answer must be a JSON object: {"exercise": {…}, "heads": […], …}')
    unknown = sorted(set(doc) - ANSWER_KEYS)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r}; expected: {', '.join(sorted(ANSWER_KEYS))}")
    what, tr = _resolve(doc, base)
    steps = _head_list(doc.get("heads", []), "heads", HEAD_STEPS, tr.h)
    for name in FINAL_STEPS:
        if name in doc:
            steps[(name, None)] = given_matrix(doc[name], name)
    grads: dict[Key, Given] = {}
    if "grads" in doc:
        g = doc["grads"]
        if not isinstance(g, dict):
            raise InputError('"grads" must be an object: {"W_O", "concat", "X", "heads": […]}')
        bad = sorted(set(g) - {*GRAD_STEPS, "heads"})
        if bad:
            raise InputError(f'"grads" has unknown key {bad[0]!r}')
        grads = _head_list(g.get("heads", []), "grads.heads", GRAD_HEAD_STEPS, tr.h)
        for name in GRAD_STEPS:
            if name in g:
                grads[(name, None)] = given_matrix(g[name], f"grads.{name}")
    G = None
    if "grad_output" in doc:
        G = given_matrix(doc["grad_output"], "grad_output").value
        if G.shape != tr.output.shape or not torch.isfinite(G).all():
            raise InputError(
                f"grad_output must be a finite {tr.output.shape[0]}×{tr.output.shape[1]} "
                "matrix (the shape of the output)"
            )
    if not steps and not grads:
        raise InputError('the answer gives no step to check (e.g. "heads": [{"Q": …}])')
    return Answer(what, tr, steps, grads, G)


def load_answer(path: str | Path) -> Answer:
    """Read and validate an answer file; every problem is an `InputError` of one line."""
    p = Path(path)
    doc = read_json(p, "answer file", parse_float=_Literal, parse_constant=_no_constant)
    return parse_answer(doc, p.parent)


def _no_constant(name: str) -> object:
    raise InputError(f'the answer contains {name}: write "-inf" (a string) for a masked entry')


# --- the verdicts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One step: right or wrong, what is off, and a note (rounded inputs)."""

    key: Key
    grad: bool
    right: bool
    decimals: int
    off: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def label(self) -> str:
        return label(self.key, "grads." if self.grad else "")


@dataclass(frozen=True)
class Report:
    """Every verdict, the first wrong step and the mistakes that reproduce the answer."""

    problem: str
    verdicts: list[Verdict]
    diagnoses: list[Mistake]

    @property
    def all_right(self) -> bool:
        return all(v.right for v in self.verdicts)

    @property
    def first_wrong(self) -> Verdict | None:
        return next((v for v in self.verdicts if not v.right), None)


def _fmt(x: float, decimals: int) -> str:
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return f"{x:.{max(decimals, 3)}f}"


def _off(g: Given, value: Tensor, tokens: tuple[str, ...], limit: int = 4) -> list[str]:
    if g.value.shape != value.shape:
        r, c = value.shape
        return [f"shape {g.value.shape[0]}×{g.value.shape[1]}, expected {r}×{c}"]
    bad = (~_close(g.value, value, g.tolerance)).nonzero().tolist()
    out = []
    for i, j in bad[:limit]:
        row = tokens[i] if value.shape[0] == len(tokens) else str(i + 1)
        out.append(
            f"[{row}, {j + 1}] yours {_fmt(float(g.value[i, j]), g.decimals)}, "
            f"right {_fmt(float(value[i, j]), g.decimals)}"
        )
    if len(bad) > limit:
        out.append(f"and {len(bad) - limit} more")
    return [f"{len(bad)} of {value.numel()} entries off", *out]


def _order(keys: list[Key], head_names: tuple[str, ...], final: tuple[str, ...]) -> list[Key]:
    """Seed 000's order: a step for every head, then the next step; then the final ones."""
    rank = {name: k for k, name in enumerate(head_names)}
    fin = {name: k for k, name in enumerate(final)}

    def pos(key: Key) -> tuple[int, int]:
        name, head = key
        return (rank[name], head or 0) if head is not None else (len(rank) + fin[name], 0)

    return sorted(keys, key=pos)


def check_answer(ans: Answer) -> Report:
    """Judge every given step, then look for the mistakes that reproduce the answer."""
    tr = ans.trace
    exact = run_steps(tr)
    student = {k: g.value for k, g in ans.steps.items()}
    from_yours = run_steps(tr, given=student)
    verdicts: list[Verdict] = []
    for key in _order(list(ans.steps), HEAD_STEPS, FINAL_STEPS):
        g = ans.steps[key]
        head = key[1]
        earlier_right = all(v.right for v in verdicts if head is None or v.key[1] in (head, None))
        if matches(g, exact[key]):
            verdicts.append(Verdict(key, False, True, g.decimals))
        elif earlier_right and verdicts and matches(g, from_yours[key]):
            gap = float((exact[key] - g.value)[torch.isfinite(g.value)].abs().max())
            verdicts.append(Verdict(key, False, True, g.decimals, note=(
                f"computed from your rounded earlier values: the same formula on them gives "
                f"these numbers (the exact values differ by up to {gap:.2g})")))  # fmt: skip
        else:
            verdicts.append(Verdict(key, False, False, g.decimals, _off(g, exact[key], tr.tokens)))
    diagnoses: list[Mistake] = []
    if not all(v.right for v in verdicts):
        for m in mistakes_for(tr):
            plain, yours = run_steps(tr, m), run_steps(tr, m, given=student)
            reproduced = all(
                matches(g, plain[k]) or matches(g, yours[k]) for k, g in ans.steps.items()
            )
            if reproduced and not any(d.text == m.text for d in diagnoses):
                diagnoses.append(m)
    if ans.grads:
        grads = ref.attention_backward(tr, ans.G)
        whole = {"output": grads.output, "W_O": grads.W_O, "b_O": grads.b_O,
                 "concat": grads.concat, "X": grads.X}  # fmt: skip
        for key in _order(list(ans.grads), GRAD_HEAD_STEPS, GRAD_STEPS):
            name, head = key
            value = whole[name] if head is None else grads.head(head)[name]
            g = ans.grads[key]
            if value is None:
                raise InputError(f"grads.{name}: the problem has no {name}")
            value = value.reshape(1, -1) if value.dim() == 1 else value
            ok = matches(g, value)
            verdicts.append(Verdict(key, True, ok, g.decimals,
                                    [] if ok else _off(g, value, tr.tokens)))  # fmt: skip
    return Report(ans.problem, verdicts, diagnoses)


def report_lines(r: Report) -> list[str]:
    """The report as lines of text: one per step, then the first wrong step and diagnoses."""
    width = max(len(v.label) for v in r.verdicts)
    lines = [f"Checking your answer to {r.problem}: {len(r.verdicts)} steps given."]
    for v in r.verdicts:
        places = "decimal" if v.decimals == 1 else "decimals"
        tol = f"(±{0.5 * 10.0**-v.decimals:g}, from the {v.decimals} {places} you wrote)"
        if v.right:
            lines.append(f"  {v.label:<{width}}  right {tol}" + (f"; {v.note}" if v.note else ""))
        else:
            lines.append(f"  {v.label:<{width}}  WRONG {tol}: " + "; ".join(v.off))
    first = r.first_wrong
    if first is None:
        lines.append("Every step you gave is right.")
        return lines
    lines.append(f"First wrong step: {first.label}, i.e. {math_name(first.key, first.grad)}.")
    if r.diagnoses:
        texts = [d.text for d in r.diagnoses]
        lead = "Diagnosis" if len(texts) == 1 else "Diagnosis (each of these reproduces it)"
        lines.append(f"{lead}: " + "; or ".join(texts) + ".")
        lines.append("Recomputing with this mistake reproduces every step you gave.")
    elif any(not v.grad and not v.right for v in r.verdicts):
        lines.append(
            "No single common mistake (scaling, softmax direction, mask, K Qᵀ, a transposed "
            "weight, the heads' order, W_O) reproduces your numbers: check the arithmetic of "
            "the first wrong step."
        )
    return lines


def answer_from_steps(
    steps: Mapping[Key, Tensor],
    names: dict[str, object],
    decimals: int = 3,
    *,
    keys: tuple[str, ...] = HEAD_STEPS + FINAL_STEPS,
) -> dict[str, object]:
    """An answer document from computed steps, each rounded to ``decimals`` (masked: "-inf").

    ``names`` is the problem (``{"exercise": {...}}``); ``keys`` the step names to include.
    """

    def written(t: Tensor) -> list[list[object]]:
        return [[("-inf" if x < 0 else "inf") if math.isinf(x) else round(x, decimals)
                 for x in row] for row in t.tolist()]  # fmt: skip

    doc: dict[str, object] = dict(names)
    heads: dict[int, dict[str, object]] = {}
    for (name, head), value in steps.items():
        if name not in keys:
            continue
        if head is None:
            doc[name] = written(value)
        else:
            heads.setdefault(head, {})[name] = written(value)
    if heads:
        doc["heads"] = [heads[i] for i in sorted(heads)]
    return doc


def answer_text(doc: object, decimals: int = 3) -> str:
    """An answer document as JSON text with every float written to ``decimals`` places
    (``0.670``, not ``0.67``), as a student who works to 3 decimals writes it."""
    if isinstance(doc, float):
        return f"{doc:.{decimals}f}"
    if isinstance(doc, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {answer_text(v, decimals)}"
                               for k, v in doc.items()) + "}"  # fmt: skip
    if isinstance(doc, list):
        return "[" + ", ".join(answer_text(v, decimals) for v in doc) + "]"
    return json.dumps(doc, ensure_ascii=False)


__all__ = [
    "Answer",
    "Given",
    "Mistake",
    "Report",
    "Verdict",
    "answer_from_steps",
    "answer_text",
    "check_answer",
    "load_answer",
    "mistakes_for",
    "parse_answer",
    "report_lines",
    "run_steps",
]
