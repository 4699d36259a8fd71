r"""A student's answer for ``attnref check``: the document, its problem, its numbers as written.

The answer names its problem (``"exercise": {"seed": …, options…}``, ``"input": FILE`` or
``"example": NAME``; ``"lang"`` beside the last two) and gives any subset of the steps, in the
JSON names of ``attnref explain --format json``: per head ``Q, K, V, scores, S, S_masked, A,
H`` (in ``"heads": [{…}, …]``, head 1 first), then ``concat``, ``output``, and gradients under
``"grads"`` (``{"W_O", "b_O", "concat", "X", "heads": [{"H", "A", "S_masked", "S", "Q", "K",
"V", "W_Q", "W_K", "W_V"}]}``, of :math:`L = \sum \text{output}` unless ``"grad_output"`` gives
:math:`G`). A masked entry is written ``"-inf"``; a step left ``null`` is not given yet (the
template that ``attnref exercise --out`` writes has every step ``null``).

An answer to a variant's exercise (``attnref exercise --variant gqa|window|rope``) has the
variant's steps in the names of its ``explain`` example: per query head ``"heads": [{"Q",
"Q_rot", "K", "V", "scores", "S", "S_masked", "A", "H"}]`` and per K/V head ``"kv_heads":
[{"K", "V", "K_rot"}]`` (`attention_ref.worked.variant_steps.LAYOUTS`); its problem carries
the variant's `Chain` (stages, catalogue, layout), and it asks no gradients.

Each number keeps the decimals it was written with (`attention_ref.worked.jsonfile.Literal`),
because the grade depends on them. Every problem with the document is one `InputError` line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import torch
from torch import Tensor

from attention_ref.worked.inputs import InputError, parse_input
from attention_ref.worked.jsonfile import Literal
from attention_ref.worked.steps import Data, Given, Key, Stage

if TYPE_CHECKING:
    from attention_ref import reference as ref
    from attention_ref.worked.exercise import ExerciseOptions
    from attention_ref.worked.mistakes import Kind
    from attention_ref.worked.variant_steps import Layout, VariantTrace

#: The steps of one head, in seed 000's order; the steps after the heads.
HEAD_STEPS: Final = ("Q", "K", "V", "scores", "S", "S_masked", "A", "H")
FINAL_STEPS: Final = ("concat", "output")
#: Gradient names: per head, and of the whole (``"grads"`` of the answer).
GRAD_HEAD_STEPS: Final = ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")
GRAD_STEPS: Final = ("output", "W_O", "b_O", "concat", "X")
NAMING_KEYS: Final = ("exercise", "input", "example")
ANSWER_KEYS: Final = frozenset({*NAMING_KEYS, "lang", "heads", *FINAL_STEPS, "grads",
                                "grad_output"})  # fmt: skip
INFINITIES: Final[dict[str, float]] = {
    "-inf": -math.inf, "−inf": -math.inf, "-∞": -math.inf, "−∞": -math.inf,
    "inf": math.inf, "+inf": math.inf, "∞": math.inf,
}  # fmt: skip
#: The largest matrix an answer may hold, in rows and in columns.
MAX_SIDE: Final = 1024
#: Decimals asked when the problem does not say.
DEFAULT_DECIMALS: Final = 3
#: What to write instead of NaN or Infinity in an answer.
INF_HINT: Final = 'write "-inf" (a string) for a masked entry'
#: What check says when no step is filled in yet, per language of the answer.
NO_STEP: Final = {
    "en": "no step given yet: fill in the steps you computed (each null in the template), e.g. "
    '"heads": [{"Q": [[…], …]}], then run attnref check again',
    "pt": "nenhum passo dado ainda: preencha os passos que você calculou (cada null do modelo), "
    'por exemplo "heads": [{"Q": [[…], …]}], e rode attnref check de novo',
}
#: What check says when it is given a problem instead of an answer.
NOT_AN_ANSWER: Final = (
    "this is the exercise, not an answer: fill in answer.json (written beside it by attnref "
    "exercise --out) with the steps you computed, and check that"
)


def label(key: Key) -> str:
    """The JSON path of a step in the answer: ``heads[1].A``, ``concat``, ``grads.heads[0].W_Q``,
    ``grads.X``, ``kv_heads[0].K`` (heads count from 0, as JSON lists do)."""
    name, head = key
    if name.startswith("kv."):
        return f"kv_heads[{head}].{name[3:]}"
    prefix, name = ("grads.", name[5:]) if name.startswith("grad.") else ("", name)
    return prefix + (f"heads[{head}].{name}" if head is not None else name)


@dataclass(frozen=True)
class Chain:
    """A variant's own chain of steps (`attention_ref.worked.variant_mistakes.variant_chain`):
    its name (``gqa``, ``window``, ``rope``), its stages, the catalogue of its mistakes, and the
    steps an answer holds (`attention_ref.worked.variant_steps.Layout`)."""

    name: str
    stages: tuple[Stage, ...]
    catalogue: tuple[Kind, ...]
    layout: Layout


@dataclass(frozen=True)
class Problem:
    """What the answer is checked against: the problem's trace, the language of the report and
    the decimals asked; ``naming`` is the answer's object that names it."""

    trace: ref.AttentionTrace | VariantTrace
    naming: dict[str, object]
    source: str
    lang: str = "en"
    decimals: int = DEFAULT_DECIMALS
    #: a variant's chain (``None``: the homework's masked multi-head attention)
    chain: Chain | None = None

    def data(self, G: Tensor | None = None) -> Data:
        """What the chain of steps reads (``G``: the upstream gradient, default all ones)."""
        return Data.of(self.trace, G)

    @classmethod
    def of_exercise(cls, opt: ExerciseOptions) -> Problem:
        """An ``attnref exercise`` problem (its tokens in its language)."""
        if opt.variant != "mha":
            from attention_ref.worked.variant_exercise import variant_problem

            return variant_problem(opt)
        from attention_ref.worked.exercise import draw_problem
        from attention_ref.worked.gradients import input_trace

        causal = "--causal" if opt.causal else "--no-causal"
        source = (f"exercise --seed {opt.seed} --tokens {opt.tokens} --d-model {opt.d_model} "
                  f"--heads {opt.heads} {causal}")  # fmt: skip
        return cls(input_trace(parse_input(draw_problem(opt))), {"exercise": opt.to_json()},
                   source, opt.lang, opt.decimals)  # fmt: skip


@dataclass(frozen=True)
class Answer:
    """A parsed answer: its problem, the steps given (keys of `attention_ref.worked.steps`) and
    the upstream gradient ``G`` (``None``: all ones)."""

    problem: Problem
    steps: dict[Key, Given]
    G: Tensor | None = None


def _entry(v: object, where: str) -> tuple[float, int]:
    if isinstance(v, bool) or v is None:
        raise InputError(f"{where} is {json.dumps(v)}, not a number")
    if isinstance(v, int):
        return float(v), 0
    if isinstance(v, Literal):
        return float(v), min(v.decimals, 15)
    if isinstance(v, float):  # a document decoded without Literal: its shortest repr
        return v, min(Literal(repr(v)).decimals, 15) if math.isfinite(v) else 0
    if isinstance(v, str) and v.strip() in INFINITIES:
        return INFINITIES[v.strip()], 15
    shown = json.dumps(v)[:40] if isinstance(v, str | int | float) else type(v).__name__
    raise InputError(f'{where} is {shown}: write a number, or "-inf" for a masked entry')


def given_matrix(obj: object, where: str) -> Given:
    """A student's matrix (list of rows; a vector is one row), else `InputError`."""
    if isinstance(obj, list) and obj and not any(isinstance(r, list) for r in obj):
        obj = [obj]  # a vector (a bias, b_O) as one row
    if not isinstance(obj, list) or not obj or not all(isinstance(r, list) for r in obj):
        raise InputError(f"{where} must be a non-empty list of rows of numbers")
    width = len(obj[0])
    if width == 0:
        raise InputError(f"{where} row 1 is empty")
    if len(obj) > MAX_SIDE or width > MAX_SIDE:
        raise InputError(f"{where} is {len(obj)}×{width}; at most {MAX_SIDE}×{MAX_SIDE}")
    values, decimals = [], []
    for i, row in enumerate(obj):
        if len(row) != width:
            raise InputError(
                f"{where} is ragged: row {i + 1} has {len(row)} entries, row 1 {width}"
            )
        pairs = [_entry(v, f"{where}[{i + 1}][{j + 1}]") for j, v in enumerate(row)]
        values.append([x for x, _ in pairs])
        decimals.append([r for _, r in pairs])
    return Given(torch.tensor(values, dtype=torch.float64), torch.tensor(decimals))


def _lang(obj: object) -> str:
    if obj not in ("en", "pt"):
        raise InputError(f'"lang" must be "en" or "pt", got {json.dumps(obj)[:40]}')
    return str(obj)


def resolve(doc: dict[str, object], base: Path | None) -> Problem:
    """The problem the answer names; ``base`` is the folder of ``"input"`` files (``None``:
    files may not be read)."""
    if "X" in doc or isinstance(doc.get("input"), dict):
        raise InputError(NOT_AN_ANSWER)
    named = [k for k in NAMING_KEYS if k in doc]
    if len(named) != 1:
        raise InputError(
            'the answer must name its problem with exactly one of "exercise": {"seed": …}, '
            f'"input": FILE or "example": NAME (found {len(named)})'
        )
    kind = named[0]
    if kind == "exercise":
        if "lang" in doc:
            raise InputError('"lang" goes inside "exercise": {"seed": …, "lang": "pt"}')
        from attention_ref.worked.exercise import options_from_json

        return Problem.of_exercise(options_from_json(doc["exercise"]))
    lang = _lang(doc.get("lang", "en"))
    if kind == "input":
        path = doc["input"]
        if not isinstance(path, str) or not path:
            raise InputError('"input" must be the path of an --input JSON file')
        if base is None:
            raise InputError('"input": FILE names a file; this check reads no files')
        from attention_ref.worked.gradients import input_trace
        from attention_ref.worked.inputs import load_input_file

        p = Path(path) if Path(path).is_absolute() else base / path
        trace = input_trace(load_input_file(p))
        return Problem(trace, {"input": path}, f"--input {path}", lang)
    from attention_ref.worked.gradients import TRACES

    name = doc["example"]
    if not isinstance(name, str) or name not in TRACES:
        raise InputError(f'"example" must be one of: {", ".join(TRACES)}; got '
                         f"{json.dumps(name)[:40]}")  # fmt: skip
    return Problem(TRACES[name]()[0], {"example": name}, f"example {name}", lang)


def _head_list(obj: object, where: str, names: tuple[str, ...], h: int, prefix: str
               ) -> dict[Key, Given]:  # fmt: skip
    if obj is None:
        return {}
    if not isinstance(obj, list):
        raise InputError(f"{where} must be a list of objects, one per head (head 1 first)")
    if len(obj) > h:
        what = f"g = {h} K/V heads" if prefix == "kv." else f"h = {h} heads"
        raise InputError(f"{where} has {len(obj)} entries but the problem has {what}")
    out: dict[Key, Given] = {}
    for i, head in enumerate(obj):
        if head is None:
            continue
        if not isinstance(head, dict):
            raise InputError(f"{where}[{i}] must be an object with some of: {', '.join(names)}")
        unknown = sorted(set(head) - set(names))
        if unknown:
            raise InputError(f"{where}[{i}] has unknown step {json.dumps(unknown[0])[:40]}; "
                             f"steps are: {', '.join(names)}")  # fmt: skip
        for name in names:
            if head.get(name) is not None:
                out[(prefix + name, i)] = given_matrix(head[name], f"{where}[{i}].{name}")
    return out


def parse_answer(doc: object, base: Path | None = None, problem: Problem | None = None) -> Answer:
    """Validate a decoded answer; ``problem``, when given, is what it answers (the document may
    then leave out its naming key, or must name the same problem)."""
    if not isinstance(doc, dict):
        raise InputError('the answer must be a JSON object: {"exercise": {…}, "heads": […], …}')
    if "X" in doc or isinstance(doc.get("input"), dict):
        raise InputError(NOT_AN_ANSWER)
    unknown = sorted(set(doc) - ANSWER_KEYS - {"kv_heads"})
    if unknown:
        raise InputError(f"unknown key {json.dumps(unknown[0])[:40]}; expected: "
                         f"{', '.join(sorted(ANSWER_KEYS))}")  # fmt: skip
    if problem is None:
        problem = resolve(doc, base)
    elif any(k in doc for k in NAMING_KEYS) and resolve(doc, base).naming != problem.naming:
        raise InputError("the answer names another problem than the one it is checked against")
    if problem.chain is not None:
        return _parse_variant(doc, problem, problem.chain)
    if "kv_heads" in doc:
        raise InputError(f'unknown key "kv_heads"; expected: {", ".join(sorted(ANSWER_KEYS))} '
                         "(K/V heads are for the --variant gqa and rope exercises)")  # fmt: skip
    tr = problem.trace
    steps = _head_list(doc.get("heads"), "heads", HEAD_STEPS, tr.h, "")
    for name in FINAL_STEPS:
        if doc.get(name) is not None:
            steps[(name, None)] = given_matrix(doc[name], name)
    g = doc.get("grads")
    if g is not None:
        if not isinstance(g, dict):
            raise InputError('"grads" must be an object: {"W_O", "concat", "X", "heads": […]}')
        bad = sorted(set(g) - {*GRAD_STEPS, "heads"})
        if bad:
            raise InputError(f'"grads" has unknown key {json.dumps(bad[0])[:40]}')
        steps |= _head_list(g.get("heads"), "grads.heads", GRAD_HEAD_STEPS, tr.h, "grad.")
        for name in GRAD_STEPS:
            if g.get(name) is not None:
                if name in ("W_O", "b_O") and getattr(tr, name) is None:
                    raise InputError(f"grads.{name}: the problem has no {name}")
                steps[(f"grad.{name}", None)] = given_matrix(g[name], f"grads.{name}")
    G = None
    if doc.get("grad_output") is not None:
        G = given_matrix(doc["grad_output"], "grad_output").value
        if G.shape != tr.output.shape or not torch.isfinite(G).all():
            raise InputError(
                f"grad_output must be a finite {tr.output.shape[0]}×{tr.output.shape[1]} "
                "matrix (the shape of the output)"
            )
    if not steps:
        raise InputError(NO_STEP[problem.lang])
    return Answer(problem, steps, G)


def _parse_variant(doc: Mapping[str, object], problem: Problem, chain: Chain) -> Answer:
    """The steps of an answer to a variant's exercise (forward only)."""
    for key in ("grads", "grad_output"):
        if key in doc:
            raise InputError(f'"{key}": the --variant {chain.name} exercise asks no gradients '
                             "(its steps are the forward pass)")  # fmt: skip
    tr = problem.trace
    steps = _head_list(doc.get("heads"), "heads", chain.layout.heads, tr.h, "")
    g = int(getattr(tr, "g", tr.h))
    steps |= _head_list(doc.get("kv_heads"), "kv_heads", chain.layout.kv_heads, g, "kv.")
    for name in FINAL_STEPS:
        if doc.get(name) is not None:
            steps[(name, None)] = given_matrix(doc[name], name)
    if not steps:
        raise InputError(NO_STEP[problem.lang])
    return Answer(problem, steps)


def load_answer(path: str | Path) -> Answer:
    """Read and validate an answer file; every problem is an `InputError` of one line."""
    from attention_ref.worked.jsonfile import read_json

    p = Path(path)
    doc = read_json(p, "answer file", exact=True, hint=INF_HINT)
    if isinstance(doc, dict) and ("X" in doc or isinstance(doc.get("input"), dict)):
        beside = p.parent / "answer.json"
        where = "answer.json beside it" if beside.exists() else "an answer naming it"
        raise InputError(
            f"{p.name} is the exercise (its numbers), not an answer: fill in {where} "
            '(attnref exercise --out writes one; or write {"input": "' + p.name + '", "heads": '
            '[{"A": …}]}) and check that'
        )
    return parse_answer(doc, p.parent)


# --- writing answers (templates, and answers built from computed steps) -----------------------


def template(
    naming: Mapping[str, object], h: int, *, backward: bool = False, has_w_o: bool = True
) -> dict[str, object]:
    """An answer to fill in: the problem's name and every step ``null`` (not given yet); with
    ``backward``, the gradients the statement asks (∂W_O, ∂A⁽¹⁾, ∂S̃⁽¹⁾, ∂W_Q⁽¹⁾, ∂X)."""
    doc: dict[str, object] = dict(naming)
    doc["heads"] = [dict.fromkeys(HEAD_STEPS) for _ in range(h)]
    doc |= dict.fromkeys(FINAL_STEPS)
    if backward:
        grads: dict[str, object] = {"W_O": None} if has_w_o else {}
        doc["grads"] = grads | {"X": None, "heads": [{"A": None, "S_masked": None, "W_Q": None}]}
    return doc


def chain_template(naming: Mapping[str, object], layout: Layout, h: int, g: int
                   ) -> dict[str, object]:  # fmt: skip
    """A variant's answer to fill in: the problem's name, then every step the layout asks
    ``null``, the K/V heads' first (they come first in the computation)."""
    doc: dict[str, object] = dict(naming)
    if layout.template_kv_heads:
        doc["kv_heads"] = [dict.fromkeys(layout.template_kv_heads) for _ in range(g)]
    doc["heads"] = [dict.fromkeys(layout.template_heads) for _ in range(h)]
    return doc | dict.fromkeys(FINAL_STEPS)


def answer_from_steps(
    steps: Mapping[Key, Tensor],
    naming: Mapping[str, object],
    decimals: int = DEFAULT_DECIMALS,
    *,
    keys: tuple[str, ...] = HEAD_STEPS + FINAL_STEPS,
) -> dict[str, object]:
    """An answer document from computed steps, each rounded to ``decimals`` (masked: "-inf");
    ``keys``: the step names to include (gradients: ``"grad.W_Q"``…; K/V heads: ``"kv.K"``…,
    written under ``"kv_heads"``)."""

    def written(t: Tensor) -> list[list[object]]:
        t = t.reshape(1, -1) if t.dim() == 1 else t
        return [[("-inf" if x < 0 else "inf") if math.isinf(x) else round(x, decimals)
                 for x in row] for row in t.tolist()]  # fmt: skip

    doc: dict[str, object] = dict(naming)
    for (name, head), value in steps.items():
        if name not in keys:
            continue
        grad, kv = name.startswith("grad."), name.startswith("kv.")
        where: dict[str, object] = doc.setdefault("grads", {}) if grad else doc  # type: ignore[assignment]
        short = name[5:] if grad else name[3:] if kv else name
        if head is None:
            where[short] = written(value)
        else:
            listed = "kv_heads" if kv else "heads"
            heads: list[dict[str, object]] = where.setdefault(listed, [])  # type: ignore[assignment]
            while len(heads) <= head:
                heads.append({})
            heads[head][short] = written(value)
    return doc


def answer_text(doc: object, decimals: int = DEFAULT_DECIMALS) -> str:
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


def read_answer_text(text: str) -> object:
    """Answer text decoded as `load_answer` decodes a file (numbers kept as written)."""
    from attention_ref.worked.jsonfile import loads

    return loads(text, "answer", exact=True, hint=INF_HINT)


__all__ = ["ANSWER_KEYS", "FINAL_STEPS", "GRAD_HEAD_STEPS", "GRAD_STEPS", "HEAD_STEPS",
           "Answer", "Chain", "Problem", "answer_from_steps", "answer_text", "chain_template",
           "given_matrix", "label", "load_answer", "parse_answer", "read_answer_text", "resolve",
           "template"]  # fmt: skip
