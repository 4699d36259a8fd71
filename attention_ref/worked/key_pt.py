r"""The solution key of an exercise in Portuguese (``attnref exercise --lang pt --key``).

The English key is ``attnref explain``'s walk through the steps (`trace_sections`, and
`gradient_sections` with ``--backward``); the Portuguese key answers the statement's own
questions, in its words and order (`attention_ref.worked.exercise.TEXT`):

1. ``Q^{(i)} = X W_Q^{(i)}``, ``K^{(i)}``, ``V^{(i)}``;
2. ``Q^{(i)} K^{(i)\top}`` and ``S^{(i)} = Q^{(i)} K^{(i)\top} / \sqrt{d_k}``;
3. ``\tilde S^{(i)} = S^{(i)} + M`` and ``A^{(i)} = \operatorname{softmax}(\tilde S^{(i)})``;
4. ``H^{(i)} = A^{(i)} V^{(i)}``, the concat and ``\operatorname{Concat} \cdot W_O``;
5. with ``--backward``, for ``L = \sum \text{saída}``: ``\partial W_O``, ``\partial A^{(1)}``,
   ``\partial \tilde S^{(1)}``, ``\partial W_Q^{(1)}``, ``\partial X``.

Every matrix is the trace's (`attention_ref.reference`), the same numbers as the English key
and the same JSON; the document is marked ``lang="pt"``, so the writers print decimal commas.
"""

from __future__ import annotations

from typing import Final

from attention_ref import reference as ref
from attention_ref.render import Mat, Section
from attention_ref.worked.gradients import grad_mat
from attention_ref.worked.trace import L, score_mats

#: The words of the key that the statement does not already have.
KEY_TEXT: Final[dict[str, str]] = {
    "data": "n = {n} tokens, d_model = {d}, h = {h} cabeças, d_k = d_v = {d_k}. Convenção de "
    "linhas: cada token é uma linha de X e Q = X W_Q.",
    "q1": "Cada cabeça projeta todos os tokens com as suas próprias matrizes; com X e os pesos "
    "em {0, 1}, as projeções são inteiras.",
    "q2": "A entrada (i, j) de Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ é q_i · k_j, a consulta do token i contra a chave do "
    "token j; S⁽ⁱ⁾ a divide por √{d_k}.",
    "q3": "M vale 0 na diagonal e abaixo dela e −∞ acima: o token t vê a si mesmo e os tokens "
    "anteriores, nunca os posteriores (j > t). Como e^(−∞) = 0, cada linha de A⁽ⁱ⁾ é uma "
    "distribuição sobre os tokens visíveis, e a primeira linha é (1; 0; …; 0).",
    "q3_nomask": "Sem máscara, S̃⁽ⁱ⁾ = S⁽ⁱ⁾: cada linha de A⁽ⁱ⁾ é uma distribuição sobre todos "
    "os tokens.",
    "q4": "A linha t de H⁽ⁱ⁾ é a média das linhas de V⁽ⁱ⁾ ponderada pela linha t de A⁽ⁱ⁾; as "
    "cabeças lado a lado formam a concatenação, e W_O a projeta na saída.",
    "q4_nowo": "A linha t de H⁽ⁱ⁾ é a média das linhas de V⁽ⁱ⁾ ponderada pela linha t de A⁽ⁱ⁾; "
    "sem W_O, a saída é a concatenação.",
    "q5": "L = Σ saída, logo G = ∂L/∂saída é toda de uns. Cada ∂Z abaixo é ∂L/∂Z, uma matriz "
    "do formato de Z: ∂W_O = Concatᵀ G, ∂H⁽ⁱ⁾ é o bloco da cabeça i em G W_Oᵀ, "
    "∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ⁱ⁾ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾)) (zero nas "
    "entradas mascaradas), ∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k, ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾; ∂X soma os "
    "caminhos da consulta, da chave e do valor.",
    "q5_nowo": "L = Σ saída, logo G = ∂L/∂saída é toda de uns; sem W_O, G é o gradiente da "
    "concatenação. Cada ∂Z abaixo é ∂L/∂Z, uma matriz do formato de Z: ∂H⁽ⁱ⁾ é o bloco da "
    "cabeça i em G, ∂A⁽ⁱ⁾ = ∂H⁽ⁱ⁾ V⁽ⁱ⁾ᵀ, ∂S̃⁽ⁱ⁾ = A⁽ⁱ⁾ ⊙ (∂A⁽ⁱ⁾ − rowsum(∂A⁽ⁱ⁾ ⊙ A⁽ⁱ⁾)) "
    "(zero nas entradas mascaradas), ∂Q⁽ⁱ⁾ = ∂S̃⁽ⁱ⁾ K⁽ⁱ⁾ / √d_k, ∂W_Q⁽ⁱ⁾ = Xᵀ ∂Q⁽ⁱ⁾; ∂X "
    "soma os caminhos da consulta, da chave e do valor.",
    "output": "Saída",
}


def key_sections_pt(
    trace: ref.AttentionTrace, titles: dict[str, str], *, backward: bool
) -> list[Section]:
    """The key's sections: the data, then one section per question of the statement.

    ``titles`` are the statement's section titles (``TEXT["pt"]``: ``"data"``, ``"q1"`` …
    ``"q5"``), so that the key answers under the questions' own names.
    """
    tok, h, d_k = list(trace.tokens), trace.h, trace.d_k
    n, d_model = trace.X.shape
    sup = [f"^{{({i + 1})}}" for i in range(h)]  # Q^{(1)}
    heads = [trace.head(i) for i in range(h)]
    has_wo = trace.W_O is not None

    data: list[Mat] = [Mat(symbol="X", value=L(trace.X), rows=tok)]
    for i in range(h):
        for role, W in (("Q", trace.W_Q), ("K", trace.W_K), ("V", trace.W_V)):
            data.append(Mat(symbol=f"W_{role}{sup[i]}", value=L(W[i])))
    if trace.W_O is not None:
        data.append(Mat(symbol="W_O", value=L(trace.W_O)))

    q1 = [
        Mat(symbol=f"{role}{s}", value=L(hd[role]), formula=f"X W_{role}{s}", rows=tok)
        for s, hd in zip(sup, heads, strict=True)
        for role in ("Q", "K", "V")
    ]
    q2 = score_mats(sup, heads, tok, d_k)
    q3: list[Mat] = []
    if trace.M is not None:
        q3.append(Mat(symbol="M", value=L(trace.M), rows=tok, cols=tok))
        q3 += [
            Mat(symbol=f"\\tilde S{s}", value=L(hd["S_masked"]), formula=f"S{s} + M",
                rows=tok, cols=tok)
            for s, hd in zip(sup, heads, strict=True)
        ]  # fmt: skip
    scores = "\\tilde S" if trace.M is not None else "S"
    q3 += [
        Mat(symbol=f"A{s}", value=L(hd["A"]),
            formula=f"\\operatorname{{softmax}}({scores}{s})", rows=tok, cols=tok)
        for s, hd in zip(sup, heads, strict=True)
    ]  # fmt: skip
    q4 = [
        Mat(symbol=f"H{s}", value=L(hd["H"]), formula=f"A{s} V{s}", rows=tok)
        for s, hd in zip(sup, heads, strict=True)
    ]
    concat = "[" + " \\mid ".join(f"H{s}" for s in sup) + "]"
    q4.append(Mat(symbol="\\operatorname{Concat}", value=L(trace.concat), formula=concat,
                  rows=tok))  # fmt: skip
    q4.append(
        Mat(symbol="\\operatorname{MultiHead}", text=KEY_TEXT["output"], value=L(trace.output),
            formula="\\operatorname{Concat} \\cdot W_O" if has_wo else "\\operatorname{Concat}",
            rows=tok)
    )  # fmt: skip

    shapes = {"n": n, "d": d_model, "h": h, "d_k": d_k}
    sections = [
        Section(title=titles["data"], text=KEY_TEXT["data"].format(**shapes), items=data),
        Section(title=titles["q1"], text=KEY_TEXT["q1"], items=q1),
        Section(title=titles["q2"], text=KEY_TEXT["q2"].format(d_k=d_k), items=q2),
        Section(title=titles["q3"],
                text=KEY_TEXT["q3"] if trace.M is not None else KEY_TEXT["q3_nomask"], items=q3),
        Section(title=titles["q4"], text=KEY_TEXT["q4" if has_wo else "q4_nowo"], items=q4),
    ]  # fmt: skip
    if backward:
        g = ref.attention_backward(trace)  # G = ones: L = Σ saída
        g1 = g.head(0)
        q5: list[Mat] = []
        if g.W_O is not None:
            q5.append(grad_mat("W_O", g.W_O, "\\operatorname{Concat}^\\top G"))
        q5 += [
            grad_mat("A^{(1)}", g1["A"], "\\partial H^{(1)} V^{(1)\\top}", rows=tok, cols=tok),
            grad_mat("\\tilde S^{(1)}", g1["S_masked"],
                     "A^{(1)} \\odot (\\partial A^{(1)} - "
                     "\\operatorname{rowsum}(\\partial A^{(1)} \\odot A^{(1)}))",
                     rows=tok, cols=tok),
            grad_mat("W_Q^{(1)}", g1["W_Q"], "X^\\top \\partial Q^{(1)}"),
            grad_mat("X", g.X, rows=tok),
        ]  # fmt: skip
        sections.append(
            Section(title=titles["q5"], text=KEY_TEXT["q5" if has_wo else "q5_nowo"], items=q5)
        )
    return sections
