r"""Shared by the worked examples: tensors in and out, and seed 000's steps for any trace.

`trace_sections` lays out one single-sequence `attention_ref.reference.AttentionTrace` as
seed 000 develops it (projections, scores, mask, softmax, head outputs, concat and
``W_O``); life-is-awesome and ``--input`` files both go through it. `input_json` writes the
numbers an example used as an ``--input`` document, which every ``explain --format json``
carries under ``"input"`` so that it can be fed back to ``--input``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import JSONValue, Mat, Section
from attention_ref.worked.words import TRACE

DTYPE = torch.float64

#: Numbers nested as the documents print them: a vector, a matrix, a stack of matrices.
Nested: TypeAlias = (
    Sequence[float] | Sequence[Sequence[float]] | Sequence[Sequence[Sequence[float]]]
)


def t(m: Nested) -> Tensor:
    """Nested lists -> float64 tensor."""
    return torch.tensor(m, dtype=DTYPE)


def L(x: Tensor) -> list[list[float]]:
    """A tensor as a list of rows (a vector becomes one row)."""
    x = x.detach().to(DTYPE)
    return (x.unsqueeze(0) if x.dim() == 1 else x).tolist()  # (k,) -> (1, k)


def column_names(prefix: str, k: int) -> list[str]:
    """``dim 1 … dim k``: the column labels of a ``k``-wide matrix (``prefix`` = ``"dim "``)."""
    return [f"{prefix}{j + 1}" for j in range(k)]


def _vec(b: Tensor) -> list[float]:
    """A bias as a plain list of numbers."""
    return b.detach().to(DTYPE).reshape(-1).tolist()


def input_json(
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    tokens: Sequence[str],
    causal: bool,
    h: int | None = None,
    b_Q: Tensor | None = None,
    b_K: Tensor | None = None,
    b_V: Tensor | None = None,
    b_O: Tensor | None = None,
) -> dict[str, JSONValue]:
    """The ``--input`` document of these numbers (`attention_ref.inputs.attention_input` reads it).

    Per-head form when ``h`` is ``None`` (``W_Q`` is ``(h, d_model, d_k)``, ``b_Q`` is
    ``(h, d_k)``), fused form otherwise (``W_Q`` is ``(d_model, h*d_k)``, ``b_Q`` is
    ``(h*d_k,)``). ``X`` is one sequence ``(n, d_model)``. ``W_O`` and the biases are written
    only when given; ``W_O = None`` means no output projection.
    """
    doc: dict[str, JSONValue] = {"tokens": list(tokens), "X": L(X)}
    biases = {"b_Q": b_Q, "b_K": b_K, "b_V": b_V}
    if h is None:
        heads: list[JSONValue] = []
        for i in range(W_Q.shape[0]):
            head: dict[str, JSONValue] = {"W_Q": L(W_Q[i]), "W_K": L(W_K[i]), "W_V": L(W_V[i])}
            head |= {k: _vec(b[i]) for k, b in biases.items() if b is not None}
            heads.append(head)
        doc["heads"] = heads
    else:
        doc |= {"h": h, "W_Q": L(W_Q), "W_K": L(W_K), "W_V": L(W_V)}
        doc |= {k: _vec(b) for k, b in biases.items() if b is not None}
    if W_O is not None:
        doc["W_O"] = L(W_O)
    if b_O is not None:
        doc["b_O"] = _vec(b_O)
    doc["causal"] = causal
    return doc


def trace_input_json(
    trace: ref.AttentionTrace,
    *,
    fused: bool = False,
    sequence: int = 0,
    tokens: Sequence[str] | None = None,
) -> dict[str, JSONValue]:
    """The numbers a trace used, as an ``--input`` document: fed back, the same output.

    Per-head form, or fused (``h`` and ``W_Q = [W_Q^(1) | … | W_Q^(h)]``, `fuse_heads`) with
    ``fused``. A batched trace gives its sequence ``sequence``; ``tokens`` replaces the
    trace's token names (a batched trace has only ``t1 … tn``).
    """
    X = trace.X if trace.X.dim() == 2 else trace.X[sequence]  # (B, n, d_model) -> (n, d_model)
    names = trace.tokens if tokens is None else tokens
    weights, biases = (trace.W_Q, trace.W_K, trace.W_V), (trace.b_Q, trace.b_K, trace.b_V)
    if fused:
        weights = tuple(ref.fuse_heads(W) for W in weights)  # (h, d_model, d) -> (d_model, h*d)
        biases = tuple(b.reshape(-1) if b is not None else None for b in biases)  # (h*d,)
    return input_json(
        X,
        *weights,
        trace.W_O,
        tokens=names,
        causal=trace.M is not None,
        h=trace.h if fused else None,
        b_Q=biases[0],
        b_K=biases[1],
        b_V=biases[2],
        b_O=trace.b_O,
    )


def unscaled_input_json(X: Tensor, tokens: Sequence[str]) -> dict[str, JSONValue]:
    r"""Plain dot-product self-attention of seeds 001/004 as an ``--input`` document.

    Those examples use no weights and no scaling: $A = \operatorname{softmax}(X X^\top)$,
    $Z = A X$. ``--input`` always divides by $\sqrt{d_k}$, so one head with
    $W_Q = \sqrt{d}\, I_d$, $W_K = W_V = I_d$ ($d_k = d$) gives
    $Q K^\top / \sqrt{d} = X X^\top$ (equal up to rounding), no mask and no ``W_O``.
    """
    d = X.shape[-1]
    eye = torch.eye(d, dtype=DTYPE)
    root_d = torch.tensor(float(d), dtype=DTYPE).sqrt()
    # (d, d) -> (1, d, d): one head
    W_Q, W_K, W_V = (root_d * eye).unsqueeze(0), eye.unsqueeze(0), eye.unsqueeze(0)
    return input_json(X, W_Q, W_K, W_V, tokens=tokens, causal=False)


def trace_to_json(trace: ref.AttentionTrace) -> dict[str, JSONValue]:
    """The JSON of ``explain --format json`` for a single-sequence trace.

    ``{"tokens", "M", "heads": [{"Q","K","V","scores","S","S_masked","A","H"}...],
    "concat", "W_O", "output", "input"}``; ``M`` is all zeros when no mask was applied,
    ``W_O`` is ``null`` when there was no output projection (the output is the concat);
    ``b_O`` and each head's ``b_Q``, ``b_K``, ``b_V`` appear when the trace has them.
    ``input`` is `trace_input_json`: fed to ``--input`` it gives this output again.
    """
    n = len(trace.tokens)
    M = trace.M if trace.M is not None else torch.zeros(n, n, dtype=trace.X.dtype)
    heads: list[JSONValue] = []
    for i in range(trace.h):
        hd = trace.head(i)
        head: dict[str, JSONValue] = {
            "Q": L(hd["Q"]),
            "K": L(hd["K"]),
            "V": L(hd["V"]),
            "scores": L(hd["QKt"]),
            "S": L(hd["S"]),
            "S_masked": L(hd["S_masked"]),
            "A": L(hd["A"]),
            "H": L(hd["H"]),
        }
        for role, b in (("b_Q", trace.b_Q), ("b_K", trace.b_K), ("b_V", trace.b_V)):
            if b is not None:
                head[role] = _vec(b[i])
        heads.append(head)
    out: dict[str, JSONValue] = {
        "tokens": list(trace.tokens),
        "causal": trace.M is not None,
        "h": trace.h,
        "d_k": trace.d_k,
        "d_v": trace.d_v,
        "X": L(trace.X),
        "M": L(M),
        "heads": heads,
        "concat": L(trace.concat),
        "W_O": L(trace.W_O) if trace.W_O is not None else None,
    }
    if trace.b_O is not None:
        out["b_O"] = _vec(trace.b_O)
    out["output"] = L(trace.output)
    out["input"] = trace_input_json(trace)
    return out


def _output_section(
    trace: ref.AttentionTrace, sup: list[str], W_O_note: str, lang: str = "en"
) -> Section:
    """Concat, then ``W_O`` (and ``b_O``) when there is an output projection; words to match."""
    w = TRACE[lang]
    tok, d_model, d_out = list(trace.tokens), trace.d_model, trace.d_out
    concat = Mat(
        symbol="\\operatorname{Concat}",
        value=L(trace.concat),
        formula="[" + " \\mid ".join(f"H{s}" for s in sup) + "]",
        rows=tok,
    )
    heads = "Concat(H⁽¹⁾ | … | H⁽ʰ⁾)"
    if trace.W_O is None:
        return Section(
            title=w["concat"].format(heads=heads),
            text=W_O_note or w["concat_text"].format(h=trace.h, d_v=trace.d_v, d_out=d_out),
            items=[
                concat,
                Mat(
                    symbol="\\operatorname{MultiHead}",
                    text=w["output_label"],
                    value=L(trace.output),
                    formula="\\operatorname{Concat}",
                    rows=tok,
                    cols=column_names("y", d_out),
                ),
            ],
        )
    bias = trace.b_O is not None
    where = w["to_d_model"] if d_out == d_model else w["to_d_out"].format(d_out=d_out)
    default = w["output_bias" if bias else "output_text"].format(where=where)
    items = [concat, Mat(symbol="W_O", value=L(trace.W_O))]
    if trace.b_O is not None:
        items.append(Mat(symbol="b_O", value=L(trace.b_O)))
    items.append(
        Mat(
            symbol="\\operatorname{MultiHead}",
            text=w["output_label"],
            value=L(trace.output),
            formula="\\operatorname{Concat} \\cdot W_O" + (" + b_O" if bias else ""),
            rows=tok,
            cols=column_names("y", d_out),
        )
    )
    return Section(
        title=w["output"].format(heads=heads, bias=" + b_O" if bias else ""),
        text=W_O_note or default,
        items=items,
    )


def score_mats(
    sup: Sequence[str], heads: Sequence[dict[str, Tensor]], tok: list[str], d_k: int
) -> list[Mat]:
    r"""Each head's :math:`Q^{(i)} K^{(i)\top}` and :math:`S^{(i)} = Q^{(i)} K^{(i)\top} /
    \sqrt{d_k}`, rows and columns labelled by the tokens (the explanation and the key share it)."""
    out: list[Mat] = []
    for i, (s, hd) in enumerate(zip(sup, heads, strict=True)):
        QKt = f"Q{s} K^{{({i + 1})\\top}}"
        out += [
            Mat(symbol=QKt, value=L(hd["QKt"]), rows=tok, cols=tok),
            Mat(
                symbol=f"S{s}",
                value=L(hd["S"]),
                formula=f"\\frac{{{QKt}}}{{\\sqrt{{{d_k}}}}}",
                rows=tok,
                cols=tok,
            ),
        ]
    return out


def trace_sections(
    trace: ref.AttentionTrace,
    W_Q: Tensor | None = None,
    W_K: Tensor | None = None,
    W_V: Tensor | None = None,
    *,
    W_O_note: str = "",
    lang: str = "en",
) -> list[Section]:
    r"""Every step of seed 000's development for a single-sequence trace, in its order.

    Per head ``i``: ``Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)}`` (and ``K``, ``V``; the biases only
    where the trace has them), ``S^{(i)} = Q^{(i)} K^{(i)\top} / \sqrt{d_k}``,
    ``\tilde S^{(i)} = S^{(i)} + M``, ``A^{(i)} = \operatorname{softmax}(\tilde S^{(i)})``,
    ``H^{(i)} = A^{(i)} V^{(i)}``; then
    ``\operatorname{MultiHead} = \operatorname{Concat}(H^{(1)} \mid … \mid H^{(h)}) W_O + b_O``,
    or the concat itself when the trace has no ``W_O``. ``W_Q`` etc. are the per-head weights,
    ``(h, d_model, d_k)``; by default the trace's own. The words are `TRACE` in ``lang``.
    """
    w = TRACE[lang]
    W_Q = trace.W_Q if W_Q is None else W_Q
    W_K = trace.W_K if W_K is None else W_K
    W_V = trace.W_V if W_V is None else W_V
    tok, h, d_k, d_v = list(trace.tokens), trace.h, trace.d_k, trace.d_v
    n, d_model = trace.X.shape
    sup = [f"^{{({i + 1})}}" for i in range(h)]  # Q^{(1)}: printed Q^(1) in plain text
    heads = [trace.head(i) for i in range(h)]
    biases = {"Q": trace.b_Q, "K": trace.b_K, "V": trace.b_V}
    weights: list[Mat] = [
        Mat(symbol="X", value=L(trace.X), rows=tok, cols=column_names("dim ", d_model))
    ]
    for i in range(h):
        for role, W in (("Q", W_Q), ("K", W_K), ("V", W_V)):
            weights.append(Mat(symbol=f"W_{role}{sup[i]}", value=L(W[i])))
        for role, b in biases.items():
            if b is not None:
                weights.append(Mat(symbol=f"b_{role}{sup[i]}", value=L(b[i])))

    def proj(role: str, s: str) -> str:
        return f"X W_{role}{s}" + (f" + b_{role}{s}" if biases[role] is not None else "")

    projections = [
        Mat(symbol=f"{role}{s}", value=L(hd[role]), formula=proj(role, s), rows=tok)
        for s, hd in zip(sup, heads, strict=True)
        for role in ("Q", "K", "V")
    ]
    proj_title = ", ".join(
        f"{r}⁽ⁱ⁾ = X W_{r}⁽ⁱ⁾" + (f" + b_{r}⁽ⁱ⁾" if biases[r] is not None else "")
        for r in ("Q", "K", "V")
    )
    with_bias = [f"b_{r}⁽ⁱ⁾" for r in ("Q", "K", "V") if biases[r] is not None]
    proj_text = w["proj_bias" if with_bias else "proj_text"].format(biases=", ".join(with_bias))
    shapes = w["shapes"].format(n=n, d_model=d_model, h=h, d_k=d_k, d_v=d_v)
    if trace.d_out != d_model:
        shapes += w["d_out"].format(d_out=trace.d_out)
    scores = score_mats(sup, heads, tok, d_k)
    softmax = [
        Mat(
            symbol=f"A{s}",
            value=L(hd["A"]),
            formula=f"\\operatorname{{softmax}}(\\tilde S{s})",
            rows=tok,
            cols=tok,
        )
        for s, hd in zip(sup, heads, strict=True)
    ]
    outputs = [
        Mat(symbol=f"H{s}", value=L(hd["H"]), formula=f"A{s} V{s}", rows=tok)
        for s, hd in zip(sup, heads, strict=True)
    ]
    if trace.M is not None:
        mask = Section(
            title=w["mask"],
            text=w["mask_text"],
            items=[
                Mat(symbol="M", value=L(trace.M), rows=tok, cols=tok),
                *(
                    Mat(
                        symbol=f"\\tilde S{s}",
                        value=L(hd["S_masked"]),
                        formula=f"S{s} + M",
                        rows=tok,
                        cols=tok,
                    )
                    for s, hd in zip(sup, heads, strict=True)
                ),
            ],
        )
    else:
        mask = Section(title=w["no_mask"], text=w["no_mask_text"])
    return [
        Section(title=w["inputs"], text=w["inputs_text"].format(shapes=shapes), items=weights),
        Section(
            title=w["projections"].format(formulas=proj_title), text=proj_text, items=projections
        ),
        Section(
            title=w["scores"].format(d_k=d_k),
            text=w["scores_text"].format(d_k=d_k),
            items=scores,
        ),
        mask,
        Section(title=w["softmax"], text=w["softmax_text"], items=softmax),
        Section(title=w["heads"], text=w["heads_text"], items=outputs),
        _output_section(trace, sup, W_O_note, lang),
    ]
