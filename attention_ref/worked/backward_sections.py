r"""The backward pass's sections: the gradient labels and the chain rule laid out step by step.

The pieces `attention_ref.worked.gradients` builds ``explain --backward`` from: the notes on
the upstream gradient, `grad_mat` (a gradient as a labelled matrix), `check_grad_output`,
``"grads"`` in JSON (`grads_to_json`), and `gradient_sections` / `with_backward`, the backward
of a single-sequence multi-head trace, one section per step of the chain rule.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from attention_ref import reference as ref  # its names resolve (and import torch) on first use
from attention_ref.inputs.input_words import error
from attention_ref.render import (
    Explanation,
    JSONValue,
    Mat,
    Matrix,
    Section,
    latex_to_unicode,
    said,
)
from attention_ref.worked.trace import L, column_names, t
from attention_ref.worked.words import GRADIENTS

if TYPE_CHECKING:
    from torch import Tensor

#: What the screen says about the default upstream gradient.
DEFAULT_G = GRADIENTS["en"]["default_g"]
#: The same for hello-shiny-sun, whose output is z (the option keeps its name).
DEFAULT_DZ = GRADIENTS["en"]["default_dz"]
NOTATION = GRADIENTS["en"]["notation"]


def plain(latex: str) -> str:
    r"""The plain-text form of a gradient label: ``\partial`` -> ``∂``, ``\odot`` -> ``⊙``."""
    return latex_to_unicode(re.sub(r"\\partial(?![A-Za-z])\s*", "∂", latex).replace("\\odot", "⊙"))


def grad_mat(
    symbol: str,
    value: Tensor,
    formula: str = "",
    *,
    rows: list[str] | None = None,
    cols: list[str] | None = None,
) -> Mat:
    r"""``\partial symbol = formula = value``; the plain-text writers print ``∂symbol``."""
    return Mat(
        symbol=f"\\partial {symbol}",
        text="∂" + plain(symbol),
        value=L(value),
        formula=formula,
        formula_text=plain(formula),
        rows=rows,
        cols=cols,
    )


def check_grad_output(G: Matrix | None, output: Tensor, lang: str = "en") -> Tensor:
    """``G`` as a tensor of the output's shape (all ones when ``None``), else `InputError` in
    ``lang``."""
    if G is None:
        import torch

        return torch.ones_like(output)
    n, d_out = output.shape
    if (len(G), len(G[0])) != (n, d_out):
        raise error(lang, "grad_shape", r=len(G), c=len(G[0]), n=n, d_out=d_out)
    return t(G)


# --- multi-head attention -----------------------------------------------------------------------


def grads_to_json(g: ref.GradientTrace) -> dict[str, JSONValue]:
    """``{"output", "W_O", "b_O", "concat", "X", "heads": [...]}`` of a single-sequence trace.

    ``W_O``, ``b_O`` and the per-head ``b_Q``, ``b_K``, ``b_V`` appear only when the forward had
    them.
    """
    out: dict[str, JSONValue] = {"output": L(g.output)}
    if g.W_O is not None:
        out["W_O"] = L(g.W_O)
    if g.b_O is not None:
        out["b_O"] = g.b_O.tolist()
    out |= {"concat": L(g.concat), "X": L(g.X)}
    heads: list[JSONValue] = []
    for i in range(g.h):
        hd = g.head(i)
        entry: dict[str, JSONValue] = {
            k: L(hd[k]) for k in ("H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V")
        }
        for role, b in (("b_Q", g.b_Q), ("b_K", g.b_K), ("b_V", g.b_V)):
            if b is not None:
                entry[role] = b[i].tolist()
        heads.append(entry)
    out["heads"] = heads
    return out


def head_sup(i: int) -> str:
    """Head ``i`` (0-based) as the superscript the text writes: ``⁽¹⁾`` for head 0."""
    return "⁽" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(i + 1)) + "⁾"


def masked_zero_note(tr: ref.AttentionTrace, g: ref.GradientTrace, lang: str = "en") -> str:
    """What the numbers show about the masked entries of ∂S̃ and the row sums, in ``lang``."""
    say = GRADIENTS[lang]
    n = tr.X.shape[-2]
    sums = float(g.S_masked.sum(dim=-1).abs().max())
    rows = say["rows_sum_zero"].format(sums=said(sums, ".1e", lang)) if sums < 1e-9 else ""
    rows += "".join(
        say["flat_head"].format(
            head=i + 1,
            sup=head_sup(i),
            largest=said(float(g.S_masked[..., i, :, :].abs().max()), ".1e", lang),
        )
        for i in range(tr.h)
        if float((g.A[..., i, :, :] - g.A[..., i, :, :1]).abs().max()) < 1e-12
    )
    if tr.M is None:
        return say["no_mask"] + rows
    import torch

    blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
    masked = g.S_masked[..., blocked]
    zeros, total = int((masked == 0).sum()), masked.numel()
    if total == 0:
        return say["one_token"] + rows
    if zeros == total:
        return say["masked_all_zero"].format(total=total) + rows
    return say["masked_some_zero"].format(zeros=zeros, total=total) + rows


def gradient_sections(
    tr: ref.AttentionTrace,
    g: ref.GradientTrace,
    *,
    G_note: str,
    where: str = "",
    lang: str = "en",
) -> list[Section]:
    r"""The backward pass of a single-sequence trace, one section per step of the chain rule,
    in ``lang``'s words (`attention_ref.worked.words.GRADIENTS`)."""
    say = GRADIENTS[lang]
    tok, h, d_k = list(tr.tokens), tr.h, tr.d_k
    sup = [f"^{{({i + 1})}}" for i in range(h)]
    supT = [f"^{{({i + 1})\\top}}" for i in range(h)]
    heads = [g.head(i) for i in range(h)]
    first = Section(
        title=say["upstream"],
        text=" ".join(x for x in (where, G_note, say["notation"]) if x),
        items=[
            Mat(
                symbol="G",
                value=L(g.output),
                formula="\\partial L / \\partial \\operatorname{out}",
                formula_text="∂L/∂output",
                rows=tok,
                cols=column_names("y", tr.output.shape[-1]),
            )
        ],
    )
    if g.W_O is not None:
        proj_items = [grad_mat("W_O", g.W_O, "\\operatorname{Concat}^\\top G")]
        title = say["projection"]
        if g.b_O is not None:
            proj_items.append(grad_mat("b_O", g.b_O, "\\sum_t G_t"))
            title += say["projection_bias"]
        proj_items.append(grad_mat("\\operatorname{Concat}", g.concat, "G W_O^\\top", rows=tok))
        proj = Section(
            title=title,
            text=say["projection_text"],
            items=proj_items,
        )
    else:
        proj = Section(
            title=say["no_projection"],
            text=say["no_projection_text"],
            items=[grad_mat("\\operatorname{Concat}", g.concat, "G", rows=tok)],
        )
    weighted = Section(
        title=say["heads"],
        text=say["heads_text"],
        items=[
            m
            for s, st, hd in zip(sup, supT, heads, strict=True)
            for m in (
                grad_mat(f"H{s}", hd["H"], rows=tok),
                grad_mat(f"A{s}", hd["A"], f"\\partial H{s} V{st}", rows=tok, cols=tok),
                grad_mat(f"V{s}", hd["V"], f"A{st} \\partial H{s}", rows=tok),
            )
        ],
    )
    softmax = Section(
        title=say["softmax"],
        text=masked_zero_note(tr, g, lang),
        items=[
            grad_mat(
                f"\\tilde S{s}",
                hd["S_masked"],
                f"A{s} \\odot (\\partial A{s} - \\operatorname{{rowsum}}(\\partial A{s} "
                f"\\odot A{s}))",
                rows=tok,
                cols=tok,
            )
            for s, hd in zip(sup, heads, strict=True)
        ],
    )
    scores = Section(
        title=say["scores"].format(d_k=d_k),
        text=say["scores_text"],
        items=[
            m
            for s, st, hd in zip(sup, supT, heads, strict=True)
            for m in (
                grad_mat(
                    f"Q{s}", hd["Q"], f"\\frac{{\\partial S{s} K{s}}}{{\\sqrt{{{d_k}}}}}", rows=tok
                ),
                grad_mat(
                    f"K{s}", hd["K"], f"\\frac{{\\partial S{st} Q{s}}}{{\\sqrt{{{d_k}}}}}", rows=tok
                ),
            )
        ],
    )
    weight_items: list[Mat] = []
    for i, (s, hd) in enumerate(zip(sup, heads, strict=True)):
        for role in ("Q", "K", "V"):
            weight_items.append(
                grad_mat(f"W_{role}{s}", hd[f"W_{role}"], f"X^\\top \\partial {role}{s}")
            )
        for role, b in (("Q", g.b_Q), ("K", g.b_K), ("V", g.b_V)):
            if b is not None:
                weight_items.append(
                    grad_mat(f"b_{role}{s}", b[i], f"\\sum_t \\partial {role}{s}_t")
                )
    weights = Section(
        title=say["weights"],
        text=say["weights_text"] + (say["weights_bias"] if g.b_Q is not None else ""),
        items=weight_items,
    )
    paths = [
        grad_mat("X_Q", g.X_from_Q, "\\sum_i \\partial Q^{(i)} W_Q^{(i)\\top}", rows=tok),
        grad_mat("X_K", g.X_from_K, "\\sum_i \\partial K^{(i)} W_K^{(i)\\top}", rows=tok),
        grad_mat("X_V", g.X_from_V, "\\sum_i \\partial V^{(i)} W_V^{(i)\\top}", rows=tok),
        grad_mat(
            "X",
            g.X,
            "\\partial X_Q + \\partial X_K + \\partial X_V",
            rows=tok,
            cols=column_names("dim ", tr.X.shape[-1]),
        ),
    ]
    inputs = Section(
        title=say["input"],
        text=say["input_text"],
        items=paths,
    )
    return [first, proj, weighted, softmax, scores, weights, inputs]


def with_backward(
    forward: Explanation,
    tr: ref.AttentionTrace,
    G: Matrix | None,
    *,
    where: str = "",
    lang: str = "en",
) -> Explanation:
    """The forward's explanation followed by the backward of ``tr``, and ``"grads"`` in JSON,
    in the words of ``lang`` (the forward's own language).

    ``tr`` must be a single sequence ``(n, d_model)``; ``G`` ``None`` means all ones.
    """
    if tr.X.dim() != 2:
        raise ValueError(f"the backward explanation needs one sequence, got X {tuple(tr.X.shape)}")
    grads = ref.attention_backward(tr, check_grad_output(G, tr.output, lang))
    say = GRADIENTS[lang]
    note = say["default_g" if G is None else "given_g"]
    sections = gradient_sections(tr, grads, G_note=note, where=where, lang=lang)
    return Explanation(
        title=forward.title + say["with_backward"],
        source=forward.source,
        sections=[*forward.sections, *sections],
        data={
            **forward.data,
            "loss": "sum" if G is None else "grad-output",
            "grads": grads_to_json(grads),
        },
        precision=forward.precision,
        lang=lang,
    )
