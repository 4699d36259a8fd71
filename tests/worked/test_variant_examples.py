"""The worked examples of today's attention (gqa, rope, window, alibi, kv-cache,
online-softmax): their numbers against seed 000's and against autograd, their words against
the numbers on both sides, and ``explain --backward`` with a ``--grad-output``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from attention_ref import reference as ref
from attention_ref.cli.main import main
from attention_ref.reference import online_softmax as osm
from attention_ref.reference.spec import ROPE_BASE
from attention_ref.render import render
from attention_ref.worked import (
    life_alibi,
    life_gqa,
    life_kv_cache,
    life_online_softmax,
    life_rope,
    life_window,
)
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.registry import (
    EXAMPLES,
    OWN_BACKWARD,
    explain_example,
    explain_example_backward,
)
from attention_ref.worked.trace import t

DOC_OUTPUT = t(life.DOC_LIFE_OUTPUT)


def doc_close(x: torch.Tensor, doc: torch.Tensor) -> bool:
    """Equal to the document's numbers as printed, to 3 decimals."""
    return bool(((x - doc).abs() <= 5e-4 + 1e-12).all())


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# --- the registry -------------------------------------------------------------------------------


def test_every_variant_has_its_own_backward_and_the_others_do_not():
    assert set(EXAMPLES) >= OWN_BACKWARD
    assert {"life-is-awesome", "hello-shiny-sun"}.isdisjoint(OWN_BACKWARD)
    for name in OWN_BACKWARD:
        expl = explain_example_backward(name)
        assert len(expl.sections) > len(explain_example(name).sections)
    with pytest.raises(ValueError, match=r"worked\.gradients"):
        explain_example_backward("life-is-awesome")


# --- gqa ----------------------------------------------------------------------------------------


def test_gqa_heads_1_and_4_are_seed_000s_heads():
    tr = life_gqa.gqa_trace()
    assert (tr.h, tr.g) == (4, 2)
    assert doc_close(tr.H[0], t(life.DOC_LIFE_H[0])) and doc_close(tr.H[3], t(life.DOC_LIFE_H[1]))
    assert life_gqa.same_as_seed_000(tr) == [1, 4]


def test_gqa_words_name_the_equal_heads_only_when_there_are_some():
    text = " ".join(s.text for s in life_gqa.explain().sections)
    assert "Query heads 1 and 4 give seed 000's head outputs exactly" in text
    assert "GQA keeps 2 times fewer than MHA" in text
    # the other side: query heads that ask nothing of seed 000's heads
    W_Q, W_K, W_V, W_O = life_gqa.gqa_weights()
    other = ref.masked_multihead_attention(t(life.LIFE_X), W_Q * 2, W_K, W_V, W_O)
    assert life_gqa.same_as_seed_000(other) == []
    section, _ = life_gqa.savings(other)
    assert "seed 000's head outputs" not in section.text


def test_gqa_backward_json_equals_autograd_and_the_shares_sum_to_the_group():
    doc = life_gqa.explain_backward().data["grads"]
    W_Q, W_K, W_V, W_O = (w.clone().requires_grad_() for w in life_gqa.gqa_weights())
    X = t(life.LIFE_X).requires_grad_()
    ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O).output.sum().backward()
    for j in range(2):
        assert torch.allclose(t(doc["kv_heads"][j]["W_K"]), W_K.grad[j], atol=1e-12)
        assert torch.allclose(t(doc["kv_heads"][j]["W_V"]), W_V.grad[j], atol=1e-12)
        shares = sum(t(doc["heads"][i]["W_K"]) for i in (2 * j, 2 * j + 1))
        assert torch.allclose(shares, W_K.grad[j], atol=1e-12)
    for i in range(4):
        assert torch.allclose(t(doc["heads"][i]["W_Q"]), W_Q.grad[i], atol=1e-12)
    assert torch.allclose(t(doc["X"]), X.grad, atol=1e-12)


# --- rope ---------------------------------------------------------------------------------------


def test_rope_example_rotates_by_position_and_keeps_life():
    tr = life_rope.rope_trace()
    assert tr.d_k == 4 and tr.positions.tolist() == [0.0, 1.0, 2.0]
    assert torch.equal(tr.Q_rot[0, 0], tr.Q[0, 0])  # position 0: not rotated
    assert not torch.allclose(tr.Q_rot[0, 2], tr.Q[0, 2])
    plain = life_rope.rope_trace(rope=False)
    assert torch.equal(plain.Q_rot, plain.Q)


def test_rope_claim_on_both_sides():
    tr = life_rope.rope_trace()
    section, data = life_rope.what_rope_changes(tr)
    assert "depends on the distance m − n only" in section.text
    assert f"is {data['score']:.6f};" in section.text  # the entry of Q_rot K_rotᵀ it names
    assert abs(data["score"] - data["shifted_score"]) < 1e-12
    # the other side: a head without RoPE scores the moved tokens differently
    plain = life_rope.rope_trace(rope=False)
    moved = life_rope.shifted_score(plain, 5)  # RoPE applied to vectors that had none
    assert abs(float(plain.QKt[0, 2, 0]) - moved) > 1e-3


def test_rope_backward_json_equals_autograd():
    doc = life_rope.explain_backward().data["grads"]
    W_Q, W_K, W_V, W_O = (w.clone().requires_grad_() for w in life_rope.rope_weights())
    X = t(life.LIFE_X).requires_grad_()
    ref.masked_multihead_attention(
        X, W_Q, W_K, W_V, W_O, rope_base=ROPE_BASE
    ).output.sum().backward()
    assert torch.allclose(t(doc["heads"][0]["W_Q"]), W_Q.grad[0], atol=1e-12)
    assert torch.allclose(t(doc["kv_heads"][0]["W_K"]), W_K.grad[0], atol=1e-12)
    assert torch.allclose(t(doc["X"]), X.grad, atol=1e-12)


# --- sliding window and ALiBi ------------------------------------------------------------------


def test_window_of_two_changes_only_the_last_row():
    tr = life_window.window_trace(2)
    assert life_window.changed_rows(tr) == ([0, 1], [2])
    assert doc_close(tr.output[:2], DOC_OUTPUT[:2]) and not doc_close(tr.output[2], DOC_OUTPUT[2])
    assert float(tr.A[0, 2, 0]) == 0.0  # 'awesome' no longer sees 'Life'


@pytest.mark.parametrize(
    ("w", "said", "not_said"),
    [
        (3, "Rows 'Life', 'is', 'awesome' equal seed 000's", "differ"),
        (2, "Row 'awesome' differs", "Rows 'Life', 'is', 'awesome' equal"),
        (1, "Rows 'is', 'awesome' differ", "Rows 'Life', 'is'"),
    ],
)
def test_window_words_follow_the_rows_that_changed(w, said, not_said):
    text = life_window.explain(w).sections[-1].text
    assert said in text and not_said not in text


@pytest.mark.parametrize(("lang", "name", "other"), [("pt", "jan", "win"), ("en", "win", "jan")])
def test_the_window_mask_has_the_name_of_its_language(lang, name, other):
    """The Portuguese pages and statements write M_jan (``jan``ela), the English M_win."""
    said = str(render(life_window.explain(2, lang=lang), "markdown", None))
    tex = str(render(life_window.explain(2, lang=lang), "latex", None))
    assert f"M_{name}" in said and f"M_{{\\text{{{name}}}}}" in tex
    assert f"M_{other}" not in said + tex and f"text{{{other}}}" not in tex


def test_alibi_slopes_and_words():
    tr = life_alibi.alibi_trace()
    assert tr.M is not None and tr.M.shape == (2, 3, 3)
    assert float(tr.M[0, 2, 0]) == -2 * 2.0**-4 and float(tr.M[1, 2, 0]) == -2 * 2.0**-8
    section, data = life_alibi.weight_shift(tr)
    gaps = data["largest_weight_change"]
    assert gaps[0] > gaps[1] > 0
    assert "The steeper slope moves the weights more (head 1)" in section.text
    assert "gives more weight to itself" in section.text
    # the other side: seed 000's own trace (no bias) moves nothing, so neither claim is made
    same = ref.masked_multihead_attention(
        t(life.LIFE_X), t(life.LIFE_W_Q), t(life.LIFE_W_K), t(life.LIFE_W_V), t(life.LIFE_W_O)
    )
    section, data = life_alibi.weight_shift(same)
    assert data["largest_weight_change"] == [0.0, 0.0]
    assert "steeper" not in section.text and "more weight" not in section.text


# --- the KV cache -------------------------------------------------------------------------------


def test_kv_cache_step_is_the_homeworks_last_row():
    cache, step = life_kv_cache.decode()
    assert cache.length == 2 and step.cache.length == 3 and step.position == 2
    assert doc_close(step.output[0], DOC_OUTPUT[2])
    assert torch.allclose(life_kv_cache.decoded_rows(), life.life_trace().output, atol=1e-15)
    data = life_kv_cache.explain().data
    assert data["check"]["equals_full_row"] is True
    assert data["check"]["cache_numbers_per_token"] == 8


def test_kv_cache_backward_reaches_every_cached_token(tmp_path, capsys):
    G = [[1.0, -1.0, 2.0, 0.5]]
    path = tmp_path / "G.json"
    path.write_text(json.dumps(G), encoding="utf-8")
    code, out, err = run(
        ["explain", "-e", "kv-cache", "--backward", "--grad-output", str(path), "-f", "json"],
        capsys,
    )
    assert code == 0, err
    grads = json.loads(out)["grads"]
    assert grads["output"] == G
    # the full causal pass with G on its last row only
    X = t(life.LIFE_X).requires_grad_()
    W = [t(w).requires_grad_() for w in (life.LIFE_W_Q, life.LIFE_W_K, life.LIFE_W_V)]
    out_full = ref.masked_multihead_attention(X, *W, t(life.LIFE_W_O)).output
    (out_full[2] * t(G)[0]).sum().backward()
    assert torch.allclose(t(grads["X"]), X.grad, atol=1e-12)
    for i in range(2):
        assert torch.allclose(t(grads["heads"][i]["W_K"]), W[1].grad[i], atol=1e-12)
    assert all(any(v != 0 for v in row) for row in grads["X"])


def test_kv_cache_grad_output_of_the_wrong_shape_is_one_line(tmp_path, capsys):
    path = tmp_path / "G.json"
    path.write_text(json.dumps([[1.0] * 4] * 3), encoding="utf-8")
    code, out, err = run(
        ["explain", "-e", "kv-cache", "--backward", "--grad-output", str(path)], capsys
    )
    assert code == 2 and out == "" and "expected 1×4" in err and err.count("\n") == 1


# --- the online softmax -------------------------------------------------------------------------


def test_online_softmax_ends_equal_to_the_homework():
    _, trace = life_online_softmax.online_trace()
    assert [(s.start, s.stop) for s in trace.steps] == [(0, 2), (2, 3)]
    assert doc_close(ref.merge_heads(trace.H), DOC_OUTPUT)
    first, second = trace.steps
    assert float(first.P_j[0, 0, 1]) == 0.0  # tile 1 ends inside the mask for 'Life'
    assert float(second.alpha[0, 0, 0]) == 1.0 and float(second.P_j[0, 0, 0]) == 0.0
    assert float(second.alpha[0, 2, 0]) < 1.0  # 'awesome': the maximum grew
    data = life_online_softmax.explain().data
    assert data["check"]["equal"] is True


def test_online_softmax_words_on_both_sides():
    seed, trace = life_online_softmax.online_trace()
    section, data = life_online_softmax.end_section(seed, trace)
    assert "equals seed 000's head outputs" in section.text and data["equal"] is True
    wrong = osm.OnlineSoftmaxTrace(
        Q=trace.Q,
        K=trace.K,
        V=trace.V,
        M=trace.M,
        tile=trace.tile,
        steps=trace.steps,
        m=trace.m,
        ell=trace.ell,
        H=trace.H + 0.01,
        L=trace.L,
    )
    section, data = life_online_softmax.end_section(seed, wrong)
    assert "is NOT seed 000's" in section.text and data["equal"] is False
    words = " ".join(s.text for s in life_online_softmax.explain().sections)
    assert "The tile ends inside the mask for 'Life'" in words
    assert "'is' sees no key of this tile" in words
    assert "'awesome' sees no key" not in words


def test_online_softmax_backward_json_equals_the_ordinary_backward():
    doc = life_online_softmax.explain_backward().data["grads"]
    plain = ref.attention_backward(life.life_trace())
    assert doc["equal_to_ordinary_backward"] is True
    for i in range(2):
        assert torch.allclose(t(doc["heads"][i]["A"]), plain.A[i], atol=1e-12)
        assert torch.allclose(t(doc["heads"][i]["W_K"]), plain.W_K[i], atol=1e-12)
    assert torch.allclose(t(doc["X"]), plain.X, atol=1e-12)


@pytest.mark.parametrize("name", sorted(OWN_BACKWARD))
def test_markdown_of_every_variant_is_complete(name, capsys):
    code, out, err = run(["explain", "-e", name, "--backward", "-f", "markdown"], capsys)
    assert code == 0, err
    assert "nan" not in out.lower() and "L = Σ output" in out


def test_the_modules_exist_for_every_name():
    for name in OWN_BACKWARD:
        assert Path(EXAMPLES[name].replace(".", "/") + ".py").is_file()
