r"""The solution key of an exercise (``attnref exercise --key``), for every problem.

In English the key is ``attnref explain``'s walk through the steps: the homework's
(`trace_sections`, and `gradient_sections` with ``--backward``), or a variant's
(`attention_ref.worked.grouped_layout.forward_sections`, with RoPE's angles and rotations and a
window's mask). In Portuguese it answers the statement's own questions, in its words and order
(`attention_ref.exercises.words.TEXT`); for the homework's attention:

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
from attention_ref.exercises.options import ExerciseOptions
from attention_ref.exercises.problem import ProblemTrace
from attention_ref.exercises.statement import angle_mats, plural
from attention_ref.exercises.words import TEXT
from attention_ref.reference import gqa as ref_gqa
from attention_ref.render import Explanation, JSONValue, Mat, Section
from attention_ref.worked.gradients import DEFAULT_G, grad_mat
from attention_ref.worked.grouped_backward import backward_sections, grads_json
from attention_ref.worked.grouped_layout import forward_sections, mask_section, trace_json
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
    "q5_kv": "Cada cabeça K/V soma os gradientes que chegam por cada cabeça de consulta do seu "
    "grupo: ∂K⁽ʲ⁾ = Σ ∂K⁽ⁱ⁾, ∂V⁽ʲ⁾ = Σ ∂V⁽ⁱ⁾, e ∂W_K⁽ʲ⁾ = Xᵀ ∂K⁽ʲ⁾.",
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


def grouped_q5_pt(tr: ProblemTrace, gr: ref_gqa.GQAGradientTrace, title: str) -> Section:
    """The statement's gradient question answered in Portuguese, for K/V heads of their own:
    ∂W_O, ∂A⁽¹⁾, ∂S̃⁽¹⁾, ∂W_Q⁽¹⁾ and ∂X of `attention_ref.reference.gqa.gqa_backward`."""
    tok, has_wo = list(tr.tokens), tr.W_O is not None
    items: list[Mat] = []
    if gr.W_O is not None:
        items.append(grad_mat("W_O", gr.W_O, "\\operatorname{Concat}^\\top G"))
    items += [
        grad_mat("A^{(1)}", gr.A[0], "\\partial H^{(1)} V^{(1)\\top}", rows=tok, cols=tok),
        grad_mat("\\tilde S^{(1)}", gr.S_masked[0],
                 "A^{(1)} \\odot (\\partial A^{(1)} - "
                 "\\operatorname{rowsum}(\\partial A^{(1)} \\odot A^{(1)}))", rows=tok, cols=tok),
        grad_mat("W_Q^{(1)}", gr.W_Q[0], "X^\\top \\partial Q^{(1)}"),
        grad_mat("X", gr.X, rows=tok),
    ]  # fmt: skip
    text = KEY_TEXT["q5" if has_wo else "q5_nowo"] + (" " + KEY_TEXT["q5_kv"]) * tr.features.grouped
    return Section(title=title, text=text, items=items)


# --- the key -------------------------------------------------------------------------------------


def _sup(i: int) -> str:
    return f"^{{({i + 1})}}"


def rotated_mats(tr: ProblemTrace, lang: str) -> list[Mat]:
    """``Q_rot`` per query head, ``K_rot`` per K/V head."""
    tok, ref, rows = list(tr.tokens), tr.reference(), TEXT[lang]["row_by_row"]
    items = [Mat(symbol=f"Q_{{\\text{{rot}}}}{_sup(i)}", value=L(ref.Q_rot[i]), rows=tok,
                 formula=f"Q{_sup(i)} R_m^\\top", formula_text=f"Q^({i + 1}) R_mᵀ, {rows}")
             for i in range(tr.h)]  # fmt: skip
    items += [Mat(symbol=f"K_{{\\text{{rot}}}}{_sup(j)}", value=L(ref.K_rot[j]), rows=tok,
                  formula=f"K{_sup(j)} R_m^\\top", formula_text=f"K^({j + 1}) R_mᵀ, {rows}")
              for j in range(tr.g)]  # fmt: skip
    return items


def variant_sections_en(tr: ProblemTrace, has_wo: bool) -> list[Section]:
    """``explain``'s walk through the variant's steps (`attention_ref.worked.grouped_layout`)."""
    v = TEXT["en"]
    after: list[Section] = []
    mask: Section | None = None
    f = tr.features
    if f.rotary:
        pairs = tr.d_k // 2
        text = v["key_rope_text"].format(d_k=tr.d_k, pairs=pairs, s="s" * (pairs != 1))
        items = [*angle_mats(tr, "en"), *rotated_mats(tr, "en")]
        after.append(Section(title=v["key_rope"], text=text, items=items))
    if f.windowed:
        w = tr.window or 1
        mask = mask_section(tr.reference(), title=v["key_window_mask"].format(w=w),
                            text=v["key_window_text"].format(w=w, before=w - 1),
                            symbol="M_{\\text{win}}")  # fmt: skip
    elif tr.M is None:
        mask = Section(title=v["key_nomask"], text=v["key_nomask_text"])
    text = v["key_data_gqa"].format(r=tr.h // tr.g) if f.grouped else ""
    note = v["output_note" if has_wo else "output_note_nowo"]
    return forward_sections(tr.reference(), input_text=text, after_projections=after, mask=mask,
                            output_note=note)  # fmt: skip


def variant_sections_pt(tr: ProblemTrace, statement: Explanation) -> list[Section]:
    """The statement's questions answered in Portuguese, under its own titles."""
    v, f = TEXT["pt"], tr.features
    ref, tok = tr.reference(), list(tr.tokens)
    rope, h, g = f.rotary, tr.h, tr.g
    titles = [s.title for s in statement.sections]
    data = Section(title=titles[0], text=statement.sections[0].text,
                   items=list(statement.sections[0].items))  # fmt: skip
    q1 = [Mat(symbol=f"Q{_sup(i)}", value=L(ref.Q[i]), formula=f"X W_Q{_sup(i)}", rows=tok)
          for i in range(h)]  # fmt: skip
    for j in range(g):
        q1 += [Mat(symbol=f"{r}{_sup(j)}", value=L(getattr(ref, r)[j]), formula=f"X W_{r}{_sup(j)}",
                   rows=tok) for r in ("K", "V")]  # fmt: skip
    sections = [data]
    if rope:
        sections.append(statement.sections[1])  # the table of angles, as given
    sections.append(Section(title=titles[len(sections)], items=q1))
    if rope:
        pairs = tr.d_k // 2
        text = v["key_rope_text"].format(d_k=tr.d_k, pairs=pairs, es="es" * (pairs != 1))
        sections.append(Section(title=titles[len(sections)], text=text,
                                items=rotated_mats(tr, "pt")))  # fmt: skip
    q_scores: list[Mat] = []
    for i in range(h):
        j = tr.group(i)
        qk = (f"Q_{{\\text{{rot}}}}{_sup(i)} K_{{\\text{{rot}}}}^{{({j + 1})\\top}}" if rope
              else f"Q{_sup(i)} K^{{({j + 1})\\top}}")  # fmt: skip
        q_scores += [
            Mat(symbol=qk, value=L(ref.QKt[i]), rows=tok, cols=tok),
            Mat(symbol=f"S{_sup(i)}", value=L(ref.S[i]), rows=tok, cols=tok,
                formula=f"\\frac{{{qk}}}{{\\sqrt{{{tr.d_k}}}}}"),
        ]  # fmt: skip
    scores_text = v["q_scores_rope" if rope else "q_scores_gqa" if f.grouped
                    else "q_scores"].format(d_k=tr.d_k)  # fmt: skip
    sections.append(Section(title=titles[len(sections)], text=scores_text, items=q_scores))
    q_mask: list[Mat] = []
    if tr.M is not None:
        symbol = "M_{\\text{jan}}" if f.windowed else "M"
        q_mask.append(Mat(symbol=symbol, value=L(tr.M), rows=tok, cols=tok))
        q_mask += [Mat(symbol=f"\\tilde S{_sup(i)}", value=L(ref.S_masked[i]), rows=tok,
                       cols=tok, formula=f"S{_sup(i)} + {symbol}") for i in range(h)]  # fmt: skip
    scores = "\\tilde S" if tr.M is not None else "S"
    q_mask += [Mat(symbol=f"A{_sup(i)}", value=L(ref.A[i]), rows=tok, cols=tok,
                   formula=f"\\operatorname{{softmax}}({scores}{_sup(i)})")
               for i in range(h)]  # fmt: skip
    w = tr.window or 1
    if f.windowed:
        mask_text = v["q_window"].format(w=w, before=w - 1, **plural(w - 1, "pt"))
    else:
        mask_text = v["q_mask"] if tr.M is not None else v["q_nomask"]
    sections.append(Section(title=titles[len(sections)], text=mask_text, items=q_mask))
    q_out = [Mat(symbol=f"H{_sup(i)}", value=L(ref.H[i]), rows=tok,
                 formula=f"A{_sup(i)} V{_sup(tr.group(i))}") for i in range(h)]  # fmt: skip
    concat = ("[" + " \\mid ".join(f"H{_sup(i)}" for i in range(h)) + "]" if h <= 2
              else f"[H{_sup(0)} \\mid \\dots \\mid H{_sup(h - 1)}]")  # fmt: skip
    q_out.append(Mat(symbol="\\operatorname{Concat}", value=L(ref.concat), formula=concat,
                     formula_text=None if h <= 2 else f"[H^(1) | … | H^({h})]",
                     rows=tok))  # fmt: skip
    has_wo = tr.W_O is not None
    q_out.append(Mat(symbol="\\operatorname{out}", text=v["output"], value=L(ref.output),
                     formula="\\operatorname{Concat} \\cdot W_O" if has_wo
                     else "\\operatorname{Concat}", rows=tok))  # fmt: skip
    out_text = v["q_out"].format(wo=v["q_out_wo" if has_wo else "q_out_nowo"])
    sections.append(Section(title=titles[len(sections)], text=out_text, items=q_out))
    return sections


def key(
    opt: ExerciseOptions,
    problem: dict[str, JSONValue],
    statement: Explanation,
    tr: ProblemTrace,
) -> Explanation:
    """The key of the drawn ``problem`` (its numbers ``tr``): its JSON (``data``) the same in
    every language, its sections explain's steps in English, the statement's questions
    answered in Portuguese."""
    lang = opt.lang
    if opt.features.any:
        has_wo = "W_O" in problem
        sections = (variant_sections_pt(tr, statement) if lang == "pt"
                    else variant_sections_en(tr, has_wo))  # fmt: skip
        ref_tr = tr.reference()
        data: dict[str, JSONValue] = {**trace_json(ref_tr)}
        if tr.window is not None:
            data["window"] = tr.window
        if opt.backward:  # L = Σ output: G all ones
            gr = ref_gqa.gqa_backward(ref_tr)
            if lang == "pt":  # under the statement's own title of the question
                sections.append(grouped_q5_pt(tr, gr, statement.sections[len(sections)].title))
            else:
                sections += backward_sections(ref_tr, gr, G_note=DEFAULT_G)
            data |= {"loss": "sum", "grads": grads_json(ref_tr, gr)}
        precision = opt.decimals
    else:
        from attention_ref.inputs.attention_input import parse_input
        from attention_ref.worked.gradients import explain_input_backward, input_trace
        from attention_ref.worked.your_input import explain_input

        inp = parse_input(problem)
        forward = explain_input_backward(inp) if opt.backward else explain_input(inp)
        if lang == "pt":
            titles = dict(zip(("data", "q1", "q2", "q3", "q4", "q5"),
                              (s.title for s in statement.sections), strict=False))  # fmt: skip
            sections = key_sections_pt(input_trace(inp), titles, backward=opt.backward)
        else:
            sections = forward.sections
        data, precision = forward.data, forward.precision  # type: ignore[assignment]
    return Explanation(
        title=TEXT[lang]["key_title"].format(seed=opt.seed),
        source=statement.source + (" --backward" if opt.backward else ""),
        sections=sections,
        data=data,
        precision=precision,
        lang=lang,
    )


__all__ = [
    "KEY_TEXT",
    "key",
    "key_sections_pt",
    "rotated_mats",
    "variant_sections_en",
    "variant_sections_pt",
]
