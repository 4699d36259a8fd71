r"""The backward pass of a worked example, step by step (``attnref explain --backward``).

`attention_ref.reference.attention_backward` computes every gradient from a forward trace;
this module lays them out as sections after the forward's (built by
`attention_ref.worked.backward_sections`), in the order the chain rule runs:

$$
G \to \partial W_O,\ \partial \operatorname{Concat} \to \partial H^{(i)} \to
\partial A^{(i)},\ \partial V^{(i)} \to \partial \tilde S^{(i)} = \partial S^{(i)} \to
\partial Q^{(i)},\ \partial K^{(i)} \to \partial W_Q^{(i)},\ \partial W_K^{(i)},\
\partial W_V^{(i)},\ \partial X
$$

By default $L = \sum_{t,j} \operatorname{output}_{tj}$, so $G = \partial L/\partial
\operatorname{output}$ is all ones; ``--grad-output FILE`` gives another $G$. The JSON adds
``"grads"``: ``{"output", "W_O", "b_O" (if present), "concat", "X", "heads": [{"H", "A",
"S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V"}]}``, each the gradient of ``L`` with
respect to that matrix. "Hello shiny sun!" has no weights and no scale; its backward runs the
same formulas on its own steps (``z = α X``, ``α = softmax(ω)``, ``ω = x_shiny Xᵀ``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from attention_ref import reference as ref
from attention_ref.inputs.attention_input import AttentionInput, matrix
from attention_ref.render import Explanation, JSONValue, Matrix, Section
from attention_ref.worked.backward_sections import (
    DEFAULT_DZ,
    DEFAULT_G,
    NOTATION,
    check_grad_output,
    grad_mat,
    gradient_sections,
    grads_to_json,
    head_sup,
    masked_zero_note,
    plain,
    with_backward,
)
from attention_ref.worked.registry import check_example, explain_example
from attention_ref.worked.trace import L, column_names, t
from attention_ref.worked.words import GRADIENTS

__all__ = [
    "DEFAULT_DZ",
    "DEFAULT_G",
    "NOTATION",
    "TRACES",
    "backward_explanation",
    "backward_steps",
    "check_grad_output",
    "explain_example_backward",
    "explain_input_backward",
    "grad_mat",
    "gradient_sections",
    "grads_to_json",
    "head_sup",
    "hello_backward",
    "input_trace",
    "load_grad_output",
    "masked_zero_note",
    "plain",
    "read_json",
    "with_backward",
]


def read_json(path: str | Path, what: str, lang: str = "en") -> object:
    """A JSON file decoded by `attention_ref.inputs.jsonfile.read_json`, the one bounded loader
    of every command: every failure is an `InputError` of one line naming ``what``, in
    ``lang``."""
    from attention_ref.inputs import jsonfile

    return jsonfile.read_json(path, what, lang=lang)


def load_grad_output(path: str | Path, lang: str = "en") -> Matrix:
    """``--grad-output FILE``: a JSON matrix (list of rows of finite numbers), else `InputError`
    in ``lang`` (its ``.lang``).

    Its shape is checked against the output when the forward has run (`check_grad_output`).
    """
    doc = read_json(path, "--grad-output file", lang)
    return matrix(doc, "--grad-output", max_rows=4096, max_cols=4096, lang=lang)


# --- the examples -----------------------------------------------------------------------------


def _life(lang: str = "en") -> tuple[ref.AttentionTrace, str]:
    from attention_ref.worked.life_is_awesome import life_trace

    return life_trace(), ""


def _journey(lang: str = "en") -> tuple[ref.AttentionTrace, str]:
    from attention_ref.worked.your_journey_starts import JOURNEY_TOKENS, JOURNEY_X, journey_numbers

    m = journey_numbers()["multihead"]
    tr = ref.masked_multihead_attention_fused(
        t(JOURNEY_X),
        m["W_query"],
        m["W_key"],
        m["W_value"],
        m["W_O"],
        h=m["trace"].h,
        b_O=m["b_O"],
        tokens=JOURNEY_TOKENS,
    )
    return tr, GRADIENTS[lang]["journey_where"].format(h=tr.h, d_k=tr.d_k)


def _pizza(lang: str = "en") -> tuple[ref.AttentionTrace, str]:
    from attention_ref.worked.i_want_pizza import PIZZA_HEADS, PIZZA_TOKENS, PIZZA_X

    eye = torch.eye(len(PIZZA_X[0]), dtype=torch.float64)
    tr = ref.masked_multihead_attention_fused(
        t(PIZZA_X), eye, eye, eye, eye, h=PIZZA_HEADS, causal=False, tokens=PIZZA_TOKENS
    )
    return tr, GRADIENTS[lang]["pizza_where"].format(h=tr.h)


#: Example name -> its attention trace for the backward pass (single sequence) and a note.
TRACES: dict[str, Callable[..., tuple[ref.AttentionTrace, str]]] = {
    "life-is-awesome": _life,
    "your-journey-starts": _journey,
    "i-want-pizza": _pizza,
}


def hello_backward(
    G: Matrix | None, lang: str = "en"
) -> tuple[list[Section], dict[str, JSONValue]]:
    r"""Seeds 001/004's dot-product attention, backwards, with the same formulas.

    Forward: $\omega = q X^\top$ with $q = x_{shiny}$ (no scale), $\alpha = \operatorname{softmax}
    (\omega)$, $z = \alpha X$. Backward: $\partial \alpha = \partial z X^\top$,
    $\partial \omega = \alpha \odot (\partial \alpha - \operatorname{rowsum}(\partial\alpha
    \odot \alpha))$, and $X$'s three paths: values $\alpha^\top \partial z$, keys
    $\partial\omega^\top q$, the query $\partial \omega X$ (row "shiny" only).
    """
    from attention_ref.worked.hello_shiny_sun import HELLO_QUERY, HELLO_TOKENS, HELLO_X

    tok = list(HELLO_TOKENS)
    X = t(HELLO_X)
    i = tok.index(HELLO_QUERY)
    q = X[i].unsqueeze(0)  # (3,) -> (1, 3)
    alpha = ref.softmax_rows(ref.scores(q, X))
    z = ref.weighted_sum(alpha, X)
    dz = check_grad_output(G, z, lang)
    dalpha = ref.weights_grad(dz, X)  # ∂z Xᵀ
    domega = ref.softmax_rows_backward(alpha, dalpha)
    from_values = ref.value_grad(alpha, dz)  # αᵀ ∂z: (3, 3)
    from_keys = ref.key_grad(domega, q)  # ∂ωᵀ q: (3, 3)
    from_query = torch.zeros_like(X)
    from_query[i] = ref.query_grad(domega, X)[0]  # ∂ω X, into row "shiny"
    dX = from_values + from_keys + from_query
    cols, say = column_names("dim ", 3), GRADIENTS[lang]
    sections = [
        Section(
            title=say["hello_upstream"],
            text=say["default_dz" if G is None else "given_dz"] + " " + say["notation"],
            items=[grad_mat("z", dz, rows=["shiny"], cols=column_names("z", 3))],
        ),
        Section(
            title=say["hello_softmax"],
            text=say["hello_softmax_text"],
            items=[
                grad_mat("\\alpha", dalpha, "\\partial z X^\\top", rows=["shiny"], cols=tok),
                grad_mat(
                    "\\omega",
                    domega,
                    "\\alpha \\odot (\\partial \\alpha - "
                    "\\operatorname{rowsum}(\\partial\\alpha \\odot \\alpha))",
                    rows=["shiny"],
                    cols=tok,
                ),
            ],
        ),
        Section(
            title=say["hello_input"],
            text=say["hello_input_text"],
            items=[
                grad_mat("X_V", from_values, "\\alpha^\\top \\partial z", rows=tok, cols=cols),
                grad_mat("X_K", from_keys, "\\partial\\omega^\\top x_{shiny}", rows=tok, cols=cols),
                grad_mat(
                    "X_q",
                    from_query,
                    "\\partial\\omega X \\text{ (row shiny)}",
                    rows=tok,
                    cols=cols,
                ),
                grad_mat(
                    "X", dX, "\\partial X_V + \\partial X_K + \\partial X_q", rows=tok, cols=cols
                ),
            ],
        ),
    ]
    data: dict[str, JSONValue] = {
        "context": L(dz),
        "weights": L(dalpha),
        "scores": L(domega),
        "X": L(dX),
    }
    return sections, data


def explain_example_backward(name: str, G: Matrix | None = None, lang: str = "en") -> Explanation:
    """``explain --example NAME --backward``: the example, then its backward pass, in ``lang``."""
    forward = explain_example(check_example(name, lang), lang)
    if name == "hello-shiny-sun":
        sections, grads = hello_backward(G, lang)
        return Explanation(
            title=forward.title + GRADIENTS[lang]["with_backward"],
            source=forward.source,
            sections=[*forward.sections, *sections],
            data={**forward.data, "loss": "sum" if G is None else "grad-output", "grads": grads},
            precision=forward.precision,
            lang=lang,
        )
    tr, where = TRACES[name](lang)
    return with_backward(forward, tr, G, where=where, lang=lang)


def input_trace(inp: AttentionInput) -> ref.AttentionTrace:
    """The forward of a validated ``--input`` (optional biases passed when the input has them)."""
    W_O = t(inp.W_O) if inp.W_O is not None else None
    biases = {
        name: t(value)
        for name in ("b_Q", "b_K", "b_V", "b_O")
        if (value := getattr(inp, name, None)) is not None
    }
    return ref.masked_multihead_attention(
        t(inp.X),
        t(inp.W_Q),
        t(inp.W_K),
        t(inp.W_V),
        W_O,
        causal=inp.causal,
        tokens=inp.tokens,
        **biases,
    )


def explain_input_backward(
    inp: AttentionInput, G: Matrix | None = None, lang: str = "en"
) -> Explanation:
    """``explain --input FILE --backward``: the user's numbers, then their backward pass."""
    from attention_ref.worked.your_input import explain_input

    forward = explain_input(inp, lang)
    tr = input_trace(inp)
    shown = forward.data.get("output")
    if shown is not None and L(tr.output) != shown:  # the gradients must be of explain's forward
        raise RuntimeError("the backward's forward differs from explain's: report this bug")
    return with_backward(forward, tr, G, lang=lang)


def backward_explanation(
    example: str,
    input_file: str | Path | None,
    grad_output: str | Path | None,
    lang: str = "en",
) -> Explanation:
    """What ``explain --backward`` shows: ``--input`` if given, else the example; ``G`` from
    ``--grad-output`` if given. Every problem with a file or the example's name is an
    `InputError` of one line, in ``lang``."""
    from attention_ref.inputs.attention_input import load_input_file

    G = load_grad_output(grad_output, lang) if grad_output is not None else None
    if input_file is not None:
        return explain_input_backward(load_input_file(input_file, lang), G, lang)
    return explain_example_backward(example, G, lang)


def backward_steps(name: str, G: Matrix | None = None) -> Explanation:
    """Only the backward sections of an example (the book shows the forward on its own page)."""
    full = explain_example_backward(name, G)
    n_forward = len(explain_example(name).sections)
    return Explanation(
        title=full.title,
        source=full.source,
        sections=full.sections[n_forward:],
        data=full.data,
        precision=full.precision,
    )
