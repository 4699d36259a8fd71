r"""The KV cache on "Life is awesome": "Life is" cached, "awesome" decoded in one step.

Seed 000's two heads (``W_O = I_4``). The prompt "Life is" fills the cache with its keys and
values (`attention_ref.reference.kv_cache.prefill`); the token "awesome" (position ``t = 2``)
is then decoded by `attention_ref.reference.kv_cache.decode_step`: only its own ``q_t``,
``k_t``, ``v_t`` are computed, its key and value are appended, and its one row of scores runs
over the three cached keys, with no mask:

$$
a_t^{(i)} = \operatorname{softmax}\Big(\frac{q_t^{(i)} K^{(i)\top}}{\sqrt{d_k}}\Big),\qquad
y_t = \operatorname{Concat}(a_t^{(1)} V^{(1)} \mid a_t^{(2)} V^{(2)})\, W_O
$$

The row $y_t$ is the last row of seed 000's output (the explanation checks it, and every row
decoded one token at a time). The backward of the step (``--backward``) shows the gradient of
$y_t$ reaching every cached key and value.
"""

from __future__ import annotations

from typing import Final

import torch

from attention_ref.reference import kv_cache as ref_kv
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, said
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.gradients import check_grad_output, grad_mat
from attention_ref.worked.layout import sup, supT
from attention_ref.worked.trace import L, column_names, t
from attention_ref.worked.words import GRADIENTS, KV_CACHE

#: how many tokens the prompt holds: "Life is"; the next one is decoded
PROMPT: Final = 2


def weights() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Seed 000's ``W_Q``, ``W_K``, ``W_V`` ``(2, 4, 2)`` and ``W_O = I_4``."""
    return t(life.LIFE_W_Q), t(life.LIFE_W_K), t(life.LIFE_W_V), t(life.LIFE_W_O)


def decode() -> tuple[ref_kv.KVCache, ref_kv.DecodeTrace]:
    """The prompt's cache, and the decode step of the next token."""
    X = t(life.LIFE_X)
    W_Q, W_K, W_V, W_O = weights()
    cache = ref_kv.prefill(X[:PROMPT], W_K, W_V)  # (2, PROMPT, 2): keys of "Life", "is"
    step = ref_kv.decode_step(X[PROMPT : PROMPT + 1], cache, W_Q, W_K, W_V, W_O)
    return cache, step


def decoded_rows() -> torch.Tensor:
    """Every row decoded one token at a time from an empty cache, ``(n, d_out)``."""
    X = t(life.LIFE_X)
    W_Q, W_K, W_V, W_O = weights()
    cache = ref_kv.empty_cache(W_K.shape[0], W_K.shape[-1], W_V.shape[-1])
    rows = []
    for i in range(X.shape[0]):
        step = ref_kv.decode_step(X[i : i + 1], cache, W_Q, W_K, W_V, W_O)
        cache = step.cache
        rows.append(step.output)
    return torch.cat(rows, dim=-2)


def step_sections(
    cache: ref_kv.KVCache, step: ref_kv.DecodeTrace, lang: str = "en"
) -> list[Section]:
    """Prefill, the new token's projections, the append, its scores, weights and output, in
    ``lang``'s words (`attention_ref.worked.words.KV_CACHE`)."""
    say = KV_CACHE[lang]
    tok = list(life.LIFE_TOKENS)
    prompt, new, seen = tok[:PROMPT], tok[PROMPT], tok[: PROMPT + 1]
    h = int(step.q.shape[-3])
    d_k = int(step.q.shape[-1])
    cached = [
        m
        for i in range(h)
        for m in (
            Mat(
                symbol=f"K{sup(i)}",
                value=L(cache.K[i]),
                formula=f"X_{{0..{PROMPT - 1}}} W_K{sup(i)}",
                rows=prompt,
            ),
            Mat(
                symbol=f"V{sup(i)}",
                value=L(cache.V[i]),
                formula=f"X_{{0..{PROMPT - 1}}} W_V{sup(i)}",
                rows=prompt,
            ),
        )
    ]
    x = Mat(symbol="x_t", value=L(step.x), rows=[new], cols=column_names("dim ", 4))
    projections = [x] + [
        m
        for i in range(h)
        for m in (
            Mat(symbol=f"q_t{sup(i)}", value=L(step.q[i]), formula=f"x_t W_Q{sup(i)}", rows=[new]),
            Mat(symbol=f"k_t{sup(i)}", value=L(step.k[i]), formula=f"x_t W_K{sup(i)}", rows=[new]),
            Mat(symbol=f"v_t{sup(i)}", value=L(step.v[i]), formula=f"x_t W_V{sup(i)}", rows=[new]),
        )
    ]
    appended = [
        m
        for i in range(h)
        for m in (
            Mat(
                symbol=f"K{sup(i)}",
                value=L(step.cache.K[i]),
                rows=seen,
                formula=f"\\begin{{bmatrix}} K{sup(i)} \\\\ k_t{sup(i)} \\end{{bmatrix}}",
                formula_text=f"[K^({i + 1}); k_t^({i + 1})]",
            ),
            Mat(
                symbol=f"V{sup(i)}",
                value=L(step.cache.V[i]),
                rows=seen,
                formula=f"\\begin{{bmatrix}} V{sup(i)} \\\\ v_t{sup(i)} \\end{{bmatrix}}",
                formula_text=f"[V^({i + 1}); v_t^({i + 1})]",
            ),
        )
    ]
    scores = [
        m
        for i in range(h)
        for m in (
            Mat(
                symbol=f"s_t{sup(i)}",
                value=L(step.S[i]),
                rows=[new],
                cols=seen,
                formula=f"\\frac{{q_t{sup(i)} K^{{({i + 1})\\top}}}}{{\\sqrt{{{d_k}}}}}",
            ),
            Mat(
                symbol=f"a_t{sup(i)}",
                value=L(step.a[i]),
                rows=[new],
                cols=seen,
                formula=f"\\operatorname{{softmax}}(s_t{sup(i)})",
            ),
            Mat(
                symbol=f"h_t{sup(i)}",
                value=L(step.h_t[i]),
                rows=[new],
                formula=f"a_t{sup(i)} V{sup(i)}",
            ),
        )
    ]
    d_out = int(step.output.shape[-1])
    return [
        Section(
            title=say["prefill"].format(prompt=" ".join(prompt)),
            text=say["prefill_text"].format(n=PROMPT),
            items=cached,
        ),
        Section(
            # positions count from 0 here, as the page's x_0 .. x_t; heads from 1
            title=say["decode"].format(new=new, t=step.position),
            text=say["decode_text"],
            items=projections,
        ),
        Section(
            title=say["append"],
            text=say["append_text"].format(length=step.cache.length),
            items=appended,
        ),
        Section(title=say["row"], text=say["row_text"], items=scores),
        Section(
            title=say["output"],
            text=say["output_text"].format(d_out=d_out),
            items=[
                Mat(symbol="\\operatorname{Concat}", value=L(step.concat), rows=[new]),
                Mat(
                    symbol="y_t",
                    value=L(step.output),
                    rows=[new],
                    formula="\\operatorname{Concat} \\cdot W_O",
                    cols=column_names("y", 4),
                ),
            ],
        ),
    ]


def check_section(
    step: ref_kv.DecodeTrace, lang: str = "en"
) -> tuple[Section, dict[str, JSONValue]]:
    """The decoded row against seed 000's last row, and every row decoded token by token, in
    ``lang``'s words (`attention_ref.worked.words.KV_CACHE`)."""
    say = KV_CACHE[lang]
    seed = life.life_trace().output
    row_gap = float((step.output[0] - seed[PROMPT]).abs().max())
    all_gap = float((decoded_rows() - seed).abs().max())
    doc = torch.tensor(life.DOC_LIFE_OUTPUT[PROMPT], dtype=torch.float64)
    doc_gap = float((step.output[0] - doc).abs().max())
    n = len(life.LIFE_TOKENS)
    per_token = 2 * int(step.k.shape[-3]) * int(step.k.shape[-1])
    gaps = {k: said(v, ".1e", lang) for k, v in (("row_gap", row_gap), ("all_gap", all_gap))}
    words = [
        say["row_equal" if row_gap < 1e-12 else "row_differs"].format(
            t=PROMPT, doc_gap=said(doc_gap, ".1e", lang), **gaps
        )
    ]
    if all_gap < 1e-12:
        words.append(say["all_equal"].format(n=n, **gaps))
    length = step.cache.length
    words.append(say["size"].format(per_token=per_token, length=length, held=per_token * length))
    data: dict[str, JSONValue] = {
        "equals_full_row": row_gap < 1e-12,
        "row_difference": row_gap,
        "all_rows_difference": all_gap,
        "document_difference": doc_gap,
        "cache_numbers_per_token": per_token,
    }
    return Section(
        title=say["check"],
        text=" ".join(words),
        items=[
            Mat(
                symbol="\\operatorname{out}_{\\text{full}}",
                text=say["full_label"],
                value=L(seed),
                rows=list(life.LIFE_TOKENS),
                cols=column_names("y", 4),
            )
        ],
    ), data


def step_json(cache: ref_kv.KVCache, step: ref_kv.DecodeTrace) -> dict[str, JSONValue]:
    """``{"tokens", "prompt", "position", "cache_before": [{"K", "V"}], "heads": [{"q", "k",
    "v", "K", "V", "scores", "S", "A", "H"}], "concat", "W_O", "output"}``."""
    heads: list[JSONValue] = [
        {
            "q": L(step.q[i]),
            "k": L(step.k[i]),
            "v": L(step.v[i]),
            "K": L(step.cache.K[i]),
            "V": L(step.cache.V[i]),
            "scores": L(step.QKt[i]),
            "S": L(step.S[i]),
            "A": L(step.a[i]),
            "H": L(step.h_t[i]),
        }
        for i in range(step.q.shape[-3])
    ]
    return {
        "tokens": list(life.LIFE_TOKENS),
        "prompt": list(life.LIFE_TOKENS[:PROMPT]),
        "position": step.position,
        "cache_before": [{"K": L(cache.K[i]), "V": L(cache.V[i])} for i in range(cache.K.shape[0])],
        "heads": heads,
        "concat": L(step.concat),
        "W_O": L(weights()[3]),
        "output": L(step.output),
    }


def explain(lang: str = "en") -> Explanation:
    """Seed 000: "Life is" in the cache, "awesome" decoded in one step, in ``lang``'s words."""
    cache, step = decode()
    check, numbers = check_section(step, lang)
    h, d_out = int(step.q.shape[-3]), int(step.output.shape[-1])
    return Explanation(
        title=KV_CACHE[lang]["title"],
        source=KV_CACHE[lang]["source"].format(h=h, d_out=d_out),
        sections=[*step_sections(cache, step, lang), check],
        data={**step_json(cache, step), "check": numbers},
        lang=lang,
    )


def explain_backward(G: Matrix | None = None, lang: str = "en") -> Explanation:
    """The decode step, then its backward: the gradient of y_t reaches every cached token; the
    words of ``lang`` (`attention_ref.worked.words.KV_CACHE`, ``GRADIENTS``)."""
    forward, say, grad_words = explain(lang), KV_CACHE[lang], GRADIENTS[lang]
    _, step = decode()
    X = t(life.LIFE_X)[: PROMPT + 1]
    W_Q, W_K, W_V, W_O = weights()
    grads = ref_kv.decode_step_backward(
        step, X, W_Q, W_K, W_V, W_O, G=check_grad_output(G, step.output, lang)
    )
    tok = list(life.LIFE_TOKENS)
    new, seen = tok[PROMPT], tok[: PROMPT + 1]
    h, d_k = int(step.q.shape[-3]), int(step.q.shape[-1])
    reached = [tok[r] for r in range(X.shape[0]) if float(grads.X[r].abs().max()) > 0]
    heads = [
        m
        for i in range(h)
        for m in (
            grad_mat(f"h_t{sup(i)}", grads.h_t[i], rows=[new]),
            grad_mat(
                f"a_t{sup(i)}",
                grads.a[i],
                f"\\partial h_t{sup(i)} V{supT(i)}",
                rows=[new],
                cols=seen,
            ),
            grad_mat(
                f"s_t{sup(i)}",
                grads.S_masked[i],
                f"a_t{sup(i)} \\odot (\\partial a_t{sup(i)}"
                f" - \\operatorname{{rowsum}}(\\partial a_t{sup(i)} \\odot a_t{sup(i)}))",
                rows=[new],
                cols=seen,
            ),
            grad_mat(
                f"q_t{sup(i)}",
                grads.q[i],
                f"\\frac{{\\partial s_t{sup(i)} K{sup(i)}}}{{\\sqrt{{{d_k}}}}}",
                rows=[new],
            ),
            grad_mat(
                f"K{sup(i)}",
                grads.K[i],
                f"\\frac{{\\partial s_t^{{({i + 1})\\top}} q_t{sup(i)}}}{{\\sqrt{{{d_k}}}}}",
                rows=seen,
            ),
            grad_mat(
                f"V{sup(i)}", grads.V[i], f"a_t^{{({i + 1})\\top}} \\partial h_t{sup(i)}", rows=seen
            ),
        )
    ]
    weights_items = [
        m
        for i in range(h)
        for m in (
            grad_mat(f"W_Q{sup(i)}", grads.W_Q[i], f"x_t^\\top \\partial q_t{sup(i)}"),
            grad_mat(f"W_K{sup(i)}", grads.W_K[i], f"X^\\top \\partial K{sup(i)}"),
            grad_mat(f"W_V{sup(i)}", grads.W_V[i], f"X^\\top \\partial V{sup(i)}"),
        )
    ]
    weights_items.append(
        grad_mat(
            "X",
            grads.X,
            "\\partial K W_K^\\top + \\partial V W_V^\\top "
            "+ \\partial q_t W_Q^\\top \\text{ (row t)}",
            rows=seen,
            cols=column_names("dim ", 4),
        )
    )
    note = say["bw_default_g"] if G is None else grad_words["given_g"]
    into = []
    if all(bool((grads.V[i].abs().sum(-1) > 0).all()) for i in range(h)):
        into.append(say["bw_values"])
    for i in range(h):
        if float(grads.S_masked[i].abs().max()) < 1e-12:
            into.append(say["bw_flat"].format(head=i + 1))
        elif bool((grads.K[i].abs().sum(-1) > 0).all()):
            into.append(say["bw_keys"].format(head=i + 1))
    sections = [
        Section(
            title=say["bw_upstream"],
            text=f"{note} {grad_words['notation']}" + say["bw_upstream_text"],
            items=[grad_mat("y_t", grads.output, rows=[new], cols=column_names("y", 4))],
        ),
        Section(
            title=grad_words["projection"],
            text=say["bw_projection_text"],
            items=[
                grad_mat("W_O", grads.W_O, "\\operatorname{Concat}^\\top G"),
                grad_mat("\\operatorname{Concat}", grads.concat, "G W_O^\\top", rows=[new]),
            ],
        ),
        Section(
            title=say["bw_cache"],
            text=" ".join(into),
            items=heads,
        ),
        Section(
            title=say["bw_weights"],
            text=say["bw_weights_text"].format(tokens=", ".join(repr(w) for w in reached)),
            items=weights_items,
        ),
    ]
    grads_json: dict[str, JSONValue] = {
        "output": L(grads.output),
        "W_O": L(grads.W_O) if grads.W_O is not None else None,
        "concat": L(grads.concat),
        "X": L(grads.X),
        "heads": [
            {
                "H": L(grads.h_t[i]),
                "A": L(grads.a[i]),
                "S_masked": L(grads.S_masked[i]),
                "S": L(grads.S_masked[i]),
                "Q": L(grads.q[i]),
                "K": L(grads.K[i]),
                "V": L(grads.V[i]),
                "W_Q": L(grads.W_Q[i]),
                "W_K": L(grads.W_K[i]),
                "W_V": L(grads.W_V[i]),
            }
            for i in range(h)
        ],
    }
    return Explanation(
        title=forward.title + grad_words["with_backward"],
        source=forward.source,
        sections=[*forward.sections, *sections],
        data={**forward.data, "loss": "sum" if G is None else "grad-output", "grads": grads_json},
        precision=forward.precision,
        lang=lang,
    )
