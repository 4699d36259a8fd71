"""A user's own numbers (``attnref explain --input FILE``), through seed 000's steps.

`attention_ref.worked.inputs` reads and validates the file (without torch); this module runs
the validated numbers through the reference and lays them out like life-is-awesome.
"""

from __future__ import annotations

from attention_ref import reference as ref
from attention_ref.render import Explanation
from attention_ref.worked.inputs import AttentionInput
from attention_ref.worked.trace import t, trace_sections, trace_to_json


def explain_input(inp: AttentionInput) -> Explanation:
    """A user's own numbers (``--input FILE``), through the same steps as seed 000."""
    X = t(inp.X)
    W_Q, W_K, W_V = t(inp.W_Q), t(inp.W_K), t(inp.W_V)
    W_O = t(inp.W_O) if inp.W_O is not None else None
    trace = ref.masked_multihead_attention(
        X, W_Q, W_K, W_V, W_O, causal=inp.causal, tokens=inp.tokens
    )
    view = "fused matrices split into heads" if inp.fused else "per-head matrices"
    return Explanation(
        title="Masked multi-head attention: your input"
        if inp.causal
        else "Multi-head attention: your input",
        source=f"--input file ({view}, h = {inp.h}, causal = {str(inp.causal).lower()})",
        sections=trace_sections(trace, W_Q, W_K, W_V),
        data=trace_to_json(trace),
    )
