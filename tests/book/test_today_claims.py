"""The claims of the pages of today's attention (issue 32), each computed here from what the
page reads (the model's own parameters, ``docs/results/*.json``, the reference functions), with
a control on the other side: the sentence the page said before would fail the same test.
"""

from __future__ import annotations

from attention_ref.book.claims import MODEL_PARTS, model_parts
from attention_ref.lm.config import ModelConfig
from attention_ref.lm.model import CharGPT, count_parameters

# ------------------------------------------------------------------ GQA page (item 4)


def test_what_one_kv_head_leaves_of_the_q02_model_is_counted_on_the_model():
    base, mqa = ModelConfig(), ModelConfig(kv_heads=1)
    left, full = model_parts(mqa), model_parts(base)
    assert tuple(left) == MODEL_PARTS
    assert sum(left.values()) == count_parameters(CharGPT(mqa))
    assert sum(full.values()) == count_parameters(CharGPT(base))
    saved = sum(full.values()) - sum(left.values())
    # the saving is attention only: W_K and W_V of the heads taken out, with their biases
    d_k, layers = base.d_k, base.n_layer
    dropped = (base.n_kv_head - mqa.n_kv_head) * 2 * (base.n_embd * d_k + d_k)
    assert saved == layers * dropped == full["attention"] - left["attention"]
    assert {k: v for k, v in left.items() if k != "attention"} == {
        k: v for k, v in full.items() if k != "attention"
    }
    # what stays of attention: W_Q, one K/V head, W_O, each with its bias, in every layer
    d = base.n_embd
    kept = layers * ((d * d + d) + 2 * (d * d_k + d_k) + (d * d + d))
    assert left["attention"] == kept
    # the control: the old sentence ("the rest are embeddings, MLPs, LayerNorms and the head")
    # would need no attention left, and there is some, more than the part taken out
    assert left["attention"] > saved > 0
