"""Seed 003: the number of heads does not change the number of parameters."""

from __future__ import annotations

import pytest
import torch

from attention_ref.lm.model import CausalSelfAttention, CharGPT, ModelConfig, count_parameters
from attention_ref.reference.params import attention_params, model_params


@pytest.mark.parametrize("d_model", [4, 12, 128, 768])
def test_attention_layer_count_is_independent_of_h(d_model):
    hs = [h for h in (1, 2, 3, 4, 6, 8, 12) if d_model % h == 0]
    totals = {attention_params(d_model, h).total for h in hs}
    assert totals == {4 * d_model * d_model + 4 * d_model}
    assert {attention_params(d_model, h, bias=False).total for h in hs} == {4 * d_model**2}


def test_per_head_shapes_shrink_with_h():
    p1, p4 = attention_params(128, 1), attention_params(128, 4)
    assert p1.shapes()["W_Q^(i)"] == (128, 128)
    assert p4.shapes()["W_Q^(i)"] == (128, 32)
    assert p4.shapes()["W_O"] == (128, 128)
    assert p4.per_head * 4 == p1.per_head


@pytest.mark.parametrize("h", [1, 2, 4, 8])
def test_counts_match_the_real_attention_layer(h):
    layer = CausalSelfAttention(ModelConfig(n_embd=128, n_head=h))
    assert count_parameters(layer) == attention_params(128, h).total


@pytest.mark.parametrize("attention", ["multihead", "none", "uniform"])
@pytest.mark.parametrize(("n_embd", "n_head", "n_layer"), [(128, 2, 2), (64, 4, 3), (30, 3, 1)])
def test_counts_match_the_real_model(attention, n_embd, n_head, n_layer):
    cfg = ModelConfig(n_embd=n_embd, n_head=n_head, n_layer=n_layer, attention=attention)
    with torch.device("meta"):
        model = CharGPT(cfg)
    expected = model_params(
        n_embd=n_embd,
        n_head=n_head,
        n_layer=n_layer,
        attention=attention,
        vocab_size=cfg.vocab_size,
        block_size=cfg.block_size,
    )
    assert count_parameters(model) == expected


def test_real_model_count_is_equal_across_heads():
    counts = set()
    for h in (1, 2, 4, 8):
        with torch.device("meta"):
            counts.add(count_parameters(CharGPT(ModelConfig(n_head=h))))
    assert len(counts) == 1


@pytest.mark.parametrize(("d_model", "h"), [(10, 3), (0, 1), (4, 0), (4, 5)])
def test_invalid_sizes_raise(d_model, h):
    with pytest.raises(ValueError):
        attention_params(d_model, h)


@pytest.mark.parametrize(
    "kwargs",
    [{"n_embd": 10, "n_head": 3}, {"n_layer": 0}, {"dropout": 1.0}, {"attention": "x"}],
)
def test_invalid_model_config_raises(kwargs):
    with pytest.raises(ValueError):
        ModelConfig(**kwargs)


def _bert_like(vocab, positions, types, heads=12):
    from attention_ref.reference.params import EncoderMLMConfig

    return EncoderMLMConfig(
        vocab_size=vocab,
        hidden=768,
        layers=12,
        heads=heads,
        intermediate=3072,
        max_positions=positions,
        type_vocab_size=types,
    )


@pytest.mark.parametrize("h", [1, 4, 12])
def test_roberta_mlm_count_by_parts(h):
    from attention_ref.reference.params import encoder_mlm_params

    c = encoder_mlm_params(_bert_like(50_265, 514, 1, h))
    d, V = 768, 50_265
    # every tensor of RobertaForMaskedLM written out one by one (tied decoder weight once)
    embeddings = [V * d, 514 * d, 1 * d, d, d]  # word, position, token type, LayerNorm w, b
    attention = [d * d, d, d * d, d, d * d, d, d * d, d]  # query, key, value, output dense
    layer = [*attention, d, d, d * 3072, 3072, 3072 * d, d, d, d]  # + LN, intermediate, output
    head = [d * d, d, d, d, V]  # dense, layer_norm, the decoder's bias
    assert c["attention per layer"] == sum(attention) == 2_362_368
    assert c["embeddings"] == sum(embeddings)
    assert c["layer"] == sum(layer)
    assert c["MLM head"] == sum(head)
    assert c["total"] == sum(embeddings) + 12 * sum(layer) + sum(head) == 124_697_433


def test_seed_003_count_is_robertaconfig_defaults_of_its_time():
    from attention_ref.reference.params import encoder_mlm_params

    # RobertaConfig() inherited BertConfig's vocab 30522, 512 positions, 2 token types
    totals = {encoder_mlm_params(_bert_like(30_522, 512, 2, h))["total"] for h in (4, 12)}
    assert totals == {109_514_298}
    # the published roberta-base sizes do not give it; nor does adding a pooler
    assert encoder_mlm_params(_bert_like(50_265, 514, 1))["total"] != 109_514_298
    assert encoder_mlm_params(_bert_like(30_522, 512, 2))["total"] + 768 * 768 + 768 != 109_514_298


def test_roberta_model_without_head_plus_pooler_is_the_published_roberta_base_count():
    from attention_ref.reference.params import encoder_mlm_params

    # RobertaModel (embeddings + layers + pooler) of roberta-base: the well-known 124,645,632
    c = encoder_mlm_params(_bert_like(50_265, 514, 1))
    assert c["embeddings"] + c["layers"] + 768 * 768 + 768 == 124_645_632


def test_encoder_mlm_heads_must_divide_hidden():
    from attention_ref.reference.params import encoder_mlm_params

    with pytest.raises(ValueError, match="not divisible"):
        encoder_mlm_params(_bert_like(50_265, 514, 1, heads=5))
