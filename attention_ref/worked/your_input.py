"""A user's own numbers (``attnref explain --input FILE``), through seed 000's steps.

`attention_ref.inputs.attention_input` reads and validates the file (without torch); this
module runs the validated numbers through the reference and lays them out like
life-is-awesome. The JSON it prints carries those numbers under ``"input"``, so it is itself a
valid ``--input`` file.
"""

from __future__ import annotations

from torch import Tensor

from attention_ref import reference as ref
from attention_ref.inputs.attention_input import AttentionInput, Matrix
from attention_ref.render import Explanation
from attention_ref.worked.layout import trace_sections
from attention_ref.worked.trace import t, trace_to_json
from attention_ref.worked.words_documents import INPUT


def input_trace(inp: AttentionInput) -> ref.AttentionTrace:
    r"""The validated numbers through `attention_ref.reference.masked_multihead_attention`.

    ``Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)}`` (biases only if given), then seed 000's steps, and
    ``\operatorname{Concat}(H^{(1)} | … | H^{(h)}) W_O + b_O``, or the concat without ``W_O``.
    """

    def opt(m: Matrix | list[float] | None) -> Tensor | None:
        return t(m) if m is not None else None

    return ref.masked_multihead_attention(
        t(inp.X),
        t(inp.W_Q),
        t(inp.W_K),
        t(inp.W_V),
        opt(inp.W_O),
        b_Q=opt(inp.b_Q),
        b_K=opt(inp.b_K),
        b_V=opt(inp.b_V),
        b_O=opt(inp.b_O),
        causal=inp.causal,
        tokens=inp.tokens,
    )


def explain_input(inp: AttentionInput, lang: str = "en") -> Explanation:
    """A user's own numbers (``--input FILE``), through the same steps as seed 000, in the
    words of ``lang`` (`attention_ref.worked.words_documents.INPUT` and ``TRACE``)."""
    trace = input_trace(inp)
    w = INPUT[lang]
    extras = [f"h = {inp.h}", f"causal = {str(inp.causal).lower()}"]
    if inp.W_O is None:
        extras.append(w["no_wo"])
    if any(b is not None for b in (inp.b_Q, inp.b_K, inp.b_V, inp.b_O)):
        extras.append(w["biases"])
    view = w["fused" if inp.fused else "per_head"]
    return Explanation(
        title=w["title_causal" if inp.causal else "title_plain"],
        source=w["source"].format(view=view, extras=", ".join(extras)),
        sections=trace_sections(trace, lang=lang),
        data=trace_to_json(trace),
        lang=lang,
    )
