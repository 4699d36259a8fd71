"""``--input`` files: biases, ``W_O`` of any width or none, and the round trip of explain's JSON.

Every example's ``explain --format json`` carries its numbers under ``"input"``; fed back
through ``--input`` it gives the example's output again (to 1e-12), and so does the JSON of
an ``--input`` file. Bad biases and ``W_O`` give one line naming the matrix, exit code 2.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from attention_ref.cli.main import main
from attention_ref.inputs.attention_input import InputError, parse_input
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.your_input import explain_input, input_trace

TOL = 1e-12
DT = torch.float64

LIFE_INPUT = {
    "tokens": list(life.LIFE_TOKENS),
    "X": life.LIFE_X,
    "heads": [
        {"W_Q": life.LIFE_W_Q[i], "W_K": life.LIFE_W_K[i], "W_V": life.LIFE_W_V[i]}
        for i in range(2)
    ],
}

#: 2 heads, d_model = 3, d_k = 2, d_v = 1, biases everywhere, W_O (2 x 4): d_out = 4 != 3.
BIASED = {
    "tokens": ["a", "b", "c", "d"],
    "X": [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 1.0, 0.0], [0.0, 0.5, 1.0]],
    "heads": [
        {"W_Q": [[1, 0], [0, 1], [1, 1]], "W_K": [[0.5, 0], [0, 1], [1, -1]],
         "W_V": [[1], [2], [-1]], "b_Q": [0.1, -0.2], "b_K": [0.3, 0.0], "b_V": [1.0]},
        {"W_Q": [[0, 1], [1, 0], [-1, 1]], "W_K": [[1, 1], [0, 0.5], [0, 1]],
         "W_V": [[0], [1], [1]], "b_Q": [0.0, 0.5], "b_K": [-0.1, 0.2], "b_V": [-2.0]},
    ],
    "W_O": [[1, 0, 2, -1], [0, 1, 1, 3]],
    "b_O": [0.5, -0.5, 0.0, 1.0],
    "causal": True,
}  # fmt: skip


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, doc: object, name: str = "in.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def max_diff(a: list, b: list) -> float:
    ta, tb = torch.tensor(a, dtype=DT), torch.tensor(b, dtype=DT)
    assert ta.shape == tb.shape, (ta.shape, tb.shape)
    return float((ta - tb).abs().max())


def by_hand(doc: dict) -> torch.Tensor:
    """The per-head document computed with plain torch, independently of the reference."""
    X = torch.tensor(doc["X"], dtype=DT)
    heads = []
    for hd in doc["heads"]:
        q, k, v = (
            X @ torch.tensor(hd[f"W_{r}"], dtype=DT) + torch.tensor(hd.get(f"b_{r}", 0.0), dtype=DT)
            for r in "QKV"
        )
        s = q @ k.T / math.sqrt(q.shape[1])
        if doc.get("causal", True):
            s = s.masked_fill(torch.ones(len(X), len(X), dtype=torch.bool).triu(1), -math.inf)
        heads.append(torch.softmax(s, dim=-1) @ v)
    concat = torch.cat(heads, dim=1)
    if doc.get("W_O") is None:
        return concat
    return concat @ torch.tensor(doc["W_O"], dtype=DT) + torch.tensor(doc.get("b_O", 0.0), dtype=DT)


# --- the schema -----------------------------------------------------------------------------


def test_biases_and_a_wider_W_O_are_used(tmp_path, capsys):
    code, out, err = run(["explain", "-i", write(tmp_path, BIASED), "-f", "json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert max_diff(res["output"], by_hand(BIASED).tolist()) <= TOL
    assert len(res["output"][0]) == 4  # d_out = 4, d_model = 3
    assert res["b_O"] == BIASED["b_O"] and res["heads"][1]["b_V"] == [-2.0]


def test_without_biases_the_output_moves_by_exactly_their_effect():
    """b_O shifts every row by b_O; b_V shifts H by b_V (rows of A sum to 1), so by b_V W_O."""
    with_b = input_trace(parse_input(BIASED)).output
    no_bO = input_trace(parse_input({k: v for k, v in BIASED.items() if k != "b_O"})).output
    assert torch.allclose(with_b - no_bO, torch.tensor(BIASED["b_O"], dtype=DT), atol=TOL)
    heads = [{k: v for k, v in hd.items() if k != "b_V"} for hd in BIASED["heads"]]
    no_bV = input_trace(parse_input({**BIASED, "heads": heads})).output
    b_V = torch.tensor([hd["b_V"][0] for hd in BIASED["heads"]], dtype=DT)  # [b_V^(1) | b_V^(2)]
    shift = b_V @ torch.tensor(BIASED["W_O"], dtype=DT)
    assert torch.allclose(with_b - no_bV, shift.expand_as(with_b), atol=1e-10)


def test_fused_biases_are_split_like_the_columns():
    per_head = parse_input(BIASED)
    fused = replace(per_head, fused=True).to_json()
    assert fused["h"] == 2 and fused["b_Q"] == [0.1, -0.2, 0.0, 0.5] and "heads" not in fused
    assert fused["W_Q"][2] == [1, 1, -1, 1]  # row 3 of head 1, then row 3 of head 2
    back = parse_input(fused)
    assert back.fused and back.b_Q == per_head.b_Q and back.W_Q == per_head.W_Q
    assert parse_input(per_head.to_json()) == per_head
    out_f, out_h = input_trace(back).output, input_trace(per_head).output
    assert float((out_f - out_h).abs().max()) <= TOL


def test_without_W_O_the_output_is_the_concat_for_any_width(tmp_path, capsys):
    """rasbt's MultiHeadAttentionWrapper: h·d_v = 2 ≠ d_model = 3 and no output projection."""
    doc = {k: v for k, v in BIASED.items() if k not in ("W_O", "b_O")}
    code, out, err = run(["explain", "-i", write(tmp_path, doc), "-f", "json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["W_O"] is None and res["output"] == res["concat"]
    assert len(res["output"][0]) == 2
    code, out, _ = run(["explain", "-i", write(tmp_path, doc), "-f", "markdown"], capsys)
    assert "no output projection" in out and "W_O =" not in out


def test_the_steps_show_the_biases():
    expl = explain_input(parse_input(BIASED))
    symbols = [m.symbol for s in expl.sections for m in s.items if hasattr(m, "symbol")]
    for sym in ("b_Q^{(1)}", "b_K^{(2)}", "b_V^{(2)}", "b_O"):
        assert sym in symbols
    formulas = [m.formula for s in expl.sections for m in s.items if hasattr(m, "formula")]
    assert "X W_Q^{(1)} + b_Q^{(1)}" in formulas
    assert "\\operatorname{Concat} \\cdot W_O + b_O" in formulas
    texts = " ".join(s.text for s in expl.sections)
    assert "d_out = 4" in texts and "to d_out = 4" in texts


def test_life_without_W_O_keeps_its_words():
    """h·d_v = d_model without W_O: no projection, the words say so (not "back to d_model")."""
    expl = explain_input(parse_input(LIFE_INPUT))
    last = expl.sections[-1]
    assert "no output projection" in last.title and "back to d_model" not in last.text
    assert expl.data["output"] == expl.data["concat"]


BAD = {
    "b_O without W_O": ({**LIFE_INPUT, "b_O": [0, 0, 0, 0]}, "b_O is given but W_O is not"),
    "b_O length": ({**BIASED, "b_O": [1, 2]},
                   "b_O has 2 entries, expected 4 (d_out = the number of columns of W_O)"),
    "b_O not a list": ({**BIASED, "b_O": 1}, "b_O must be a list of 4 numbers"),
    "b_O entry": ({**BIASED, "b_O": [1, "x", 0, 0]}, 'b_O[2] is "x", not a number'),
    "head bias length": (
        {**BIASED, "heads": [{**BIASED["heads"][0], "b_Q": [1]}, BIASED["heads"][1]]},
        "heads[0].b_Q has 1 entries, expected 2 (d_k = 2, a bias per head)",
    ),
    "b_V on one head only": (
        {**BIASED, "heads": [BIASED["heads"][0],
                             {k: v for k, v in BIASED["heads"][1].items() if k != "b_V"}]},
        "heads[1] has no b_V but heads[0] has one: give b_V to every head or to none",
    ),
    "fused bias length": (
        {"X": [[1, 0]], "h": 2, "W_Q": [[1, 0]] * 2, "W_K": [[1, 0]] * 2, "W_V": [[1, 0]] * 2,
         "b_K": [1, 2, 3]},
        "b_K has 3 entries, expected 2 (one entry per column of W_K)",
    ),
    "W_O rows": ({**BIASED, "W_O": [[1, 0]] * 3}, "W_O has shape 3×2, expected 2×*"),
    "unknown head key": (
        {**LIFE_INPUT, "heads": [{**LIFE_INPUT["heads"][0], "b_O": [1]}, LIFE_INPUT["heads"][1]]},
        "heads[0] has unknown key 'b_O'",
    ),
    "input not an object": ({"input": [1, 2]}, '"input" must be the JSON object of an --input'),
    "input nested twice": ({"input": {"input": LIFE_INPUT}}, "unknown key 'input'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_biases_and_W_O_give_one_line(tmp_path, capsys, case):
    doc, message = BAD[case]
    code, out, err = run(["explain", "--input", write(tmp_path, doc)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("attnref: error: ")
    assert message in err, err
    with pytest.raises(InputError, match=None):
        parse_input(doc)


@pytest.mark.parametrize("doc", [LIFE_INPUT, BIASED], ids=["life", "biased"])
def test_to_json_reads_back_equal(doc):
    inp = parse_input(doc)
    assert parse_input(json.loads(json.dumps(inp.to_json()))) == inp


# --- the round trip: explain's JSON -> --input -> the same output ------------------------------

#: Where each example's output sits in its JSON, and the rows of --input's output it equals.
EXAMPLE_OUTPUTS = {
    "life-is-awesome": (lambda d: d["output"], lambda out: out),
    "hello-shiny-sun": (lambda d: [d["context"]], lambda out: [out[1]]),  # the "shiny" row
    "your-journey-starts": (lambda d: d["multihead_attention"]["context_vec"], lambda out: out),
    "i-want-pizza": (lambda d: d["output"], lambda out: out),
}


@pytest.mark.parametrize("example", list(EXAMPLE_OUTPUTS))
def test_explain_json_of_every_example_round_trips_through_input(tmp_path, capsys, example):
    code, out, err = run(["explain", "-e", example, "-f", "json"], capsys)
    assert code == 0, err
    printed = json.loads(out)
    assert "input" in printed
    code, again, err = run(["explain", "--input", write(tmp_path, out), "-f", "json"], capsys)
    assert code == 0, err
    pick_example, pick_input = EXAMPLE_OUTPUTS[example]
    assert max_diff(pick_input(json.loads(again)["output"]), pick_example(printed)) <= TOL


@pytest.mark.parametrize("doc", [LIFE_INPUT, BIASED], ids=["life", "biased"])
@pytest.mark.parametrize("fused", [False, True])
def test_explain_json_of_an_input_file_round_trips(tmp_path, capsys, doc, fused):
    if fused:
        doc = replace(parse_input(doc), fused=True).to_json()
    code, first, err = run(["explain", "-i", write(tmp_path, doc), "-f", "json"], capsys)
    assert code == 0, err
    code, second, err = run(
        ["explain", "-i", write(tmp_path, first, "2.json"), "-f", "json"], capsys
    )
    assert code == 0, err
    a, b = json.loads(first), json.loads(second)
    assert max_diff(a["output"], b["output"]) <= TOL
    assert a["input"] == b["input"]  # the numbers it used, carried unchanged


def test_the_input_json_holds_the_weights_the_trace_used():
    tr = life.life_trace()
    data = life.explain().data
    inp = parse_input(data)
    assert torch.equal(torch.tensor(inp.W_Q, dtype=DT), tr.W_Q)
    assert inp.W_O is not None and torch.equal(torch.tensor(inp.W_O, dtype=DT), tr.W_O)
