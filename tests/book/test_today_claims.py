"""The claims of the pages of today's attention (issue 32), each computed here from what the
page reads (the model's own parameters, ``docs/results/*.json``, the reference functions), with
a control on the other side: the sentence the page said before would fail the same test.
"""

from __future__ import annotations

import dataclasses

from attention_ref.experiments.findings import ArmRow
from attention_ref.experiments.variants_report import kv_cache_bytes, variant_facts
from attention_ref.lm.config import ModelConfig
from attention_ref.lm.model import CharGPT, count_parameters
from attention_ref.worked.kv_heads import KV_PRESETS
from attnref_book.claims import (
    KV_CONTEXTS,
    MODEL_PARTS,
    beyond_context,
    class_claims,
    decode_check,
    model_parts,
    recorded_precision,
    two_recordings,
)
from attnref_book.pages import RESULTS, results

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


# --------------------------------------------------------------- KV-cache page (items 5, 10)


def test_the_decode_step_is_compared_with_the_row_it_decodes():
    c = decode_check()
    assert c.decode_gap < 1e-12  # decoded rows = the full windowed causal pass
    assert c.windowed_sdpa_gap < 1e-12  # SDPA with the step's window mask = the decoded row
    assert c.is_causal_sees_key_0 and c.is_causal_off > 1  # is_causal=True: a wrong row
    # the control: SDPA with no mask over every cached key is another row (the model has a
    # window of w < n), so the page's old comparison point was not the decoded row
    assert c.w < c.cached_tokens and c.no_mask_off > 1
    old = old_is_causal_figure()
    assert f"{old:.2f}" != f"{c.is_causal_off:.2f}"


def old_is_causal_figure() -> float:
    """What the page printed before: ``is_causal=True`` against SDPA with no mask at all."""
    import torch
    import torch.nn.functional as F

    from attention_ref.reference import kv_cache

    gen = torch.Generator().manual_seed(0)
    n, d_model, h, g, d_k, w = 8, 6, 4, 2, 4, 3
    X = torch.randn(n, d_model, generator=gen, dtype=torch.float64)
    W_Q = torch.randn(h, d_model, d_k, generator=gen, dtype=torch.float64)
    W_K, W_V = (torch.randn(g, d_model, d_k, generator=gen, dtype=torch.float64) for _ in range(2))
    cache = kv_cache.empty_cache(g, d_k, d_k)
    for s in range(n):
        step = kv_cache.decode_step(X[s : s + 1], cache, W_Q, W_K, W_V, rope_base=10000.0, window=w)
        cache = step.cache
    right = F.scaled_dot_product_attention(step.q, cache.K, cache.V, enable_gqa=True)
    wrong = F.scaled_dot_product_attention(
        step.q, cache.K, cache.V, enable_gqa=True, is_causal=True
    )
    return float((wrong - right).abs().max())


def test_the_contexts_beyond_llama_3_8b_are_said_to_be():
    context = KV_PRESETS["llama-3-8b"].context
    beyond = [c for c in KV_CONTEXTS if beyond_context(c)]
    assert beyond == [c for c in KV_CONTEXTS if c > context] != []
    assert context in KV_CONTEXTS and not beyond_context(context)
    # the control: the old table called 131,072 tokens "Llama 3 8B"; it reads 8,192
    assert beyond_context(131_072) and max(KV_CONTEXTS) == 131_072


# ------------------------------------------------------------ the recorded class (items 6, 7)


def test_the_timed_phases_count_their_own_submissions():
    r = results("class-homework.json")
    k, c = class_claims(r), r["counts"]
    assert k.on_time + k.late == c["stored"] == sum(g["attempts"] for g in r["gradebook"])
    assert k.late == sum(bool(g["late"]) for g in r["gradebook"]) == r["summary"]["late"] > 0
    # the control: the 16.29 s phase is not the one that stored every submission
    assert k.on_time != c["stored"]
    # the first phase's senders: each student with a submission besides a late one; the ones
    # who only sent late are not among them (the control: not every student of the class)
    sent_first = [g for g in r["gradebook"] if g["attempts"] - bool(g["late"]) > 0]
    only_late = [g for g in r["gradebook"] if g["attempts"] == 1 and g["late"]]
    assert k.on_time_students == len(sent_first) == c["students"] - len(only_late)
    assert only_late and k.on_time_students < c["students"]


def test_all_right_splits_into_every_step_and_a_partial_answer():
    r = results("class-homework.json")
    k, s = class_claims(r), r["summary"]
    assert k.every_step + k.partial_all_right == s["all_right"]
    rows = {g["student"]: g for g in r["gradebook"]}
    assert all(rows[n]["steps_right"] == k.steps for n in k.every_step_students)
    assert all(rows[n]["steps_given"] < k.steps for n in k.partial_students)
    # the control: "9 all right" is not 9 students with every step right
    assert k.partial_all_right > 0 and k.every_step != s["all_right"]


# --------------------------------------------------------------- variants page (items 2, 3)


def test_one_seed_recorded_three_times_agrees_where_the_precision_does():
    """Page 7 and the variants sweep recorded seed 1337's multihead run in bf16 on this CPU:
    the same figure to the digit; page 7's first recording, in fp32 on another CPU (kept in
    docs/results/earlier-fp32), is as far from it as the arms are from each other."""
    again = two_recordings(RESULTS)
    assert again.same and (again.here_precision, again.there_precision) == ("bf16", "bf16")
    assert again.here == again.there and round(again.gap, 4) == 0
    two = two_recordings(RESULTS, "earlier-fp32")
    assert two.same and two.differ == ()
    assert (two.here_precision, two.there_precision) == ("bf16", "fp32")
    facts = {
        f.name: f
        for f in variant_facts([ArmRow(**r) for r in results("variants/comparison.json")["rows"]])
    }
    # the gaps the page used to rank are within what one seed gave twice
    assert two.within(facts["mqa"].val_change) and two.within(facts["rope"].val_change)
    assert not two.within(facts["window"].val_change)  # the one that is not
    # the control: were the two recordings equal, the same gaps would be called larger
    same = dataclasses.replace(two, there=two.here)
    assert not same.within(facts["mqa"].val_change)


def test_the_precision_is_read_off_the_recorded_machine():
    assert recorded_precision("auto", "AMD EPYC, 2 threads, bf16 instructions: avx512_bf16") == (
        "bf16"
    )
    assert recorded_precision("auto", "AMD EPYC, 2 CPUs, bf16 instructions: none") == "fp32"
    assert recorded_precision("fp32", "x, bf16 instructions: amx_bf16") == "fp32"


def test_the_window_arm_keeps_the_cache_a_window_could_shrink():
    rows = {r["attention"]: r for r in results("variants/comparison.json")["rows"]}
    window, mha = rows["window"]["config"], rows["mha"]["config"]
    w, block = int(window["window"]), int(window["block_size"])
    per_char = kv_cache_bytes(window)
    assert per_char == kv_cache_bytes(mha)  # the same cache per character, as the page says
    # the control: over a whole context the window could keep w keys, not block_size
    assert w * per_char < block * per_char
