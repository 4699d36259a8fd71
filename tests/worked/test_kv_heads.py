"""``attnref params --kv-heads`` and ``--preset llama-3-8b``: MHA, GQA and MQA counted from
shapes, the sentence on both sides of each threshold, bad options as one line, and no torch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attention_ref.cli.main import main
from attention_ref.reference.params import gqa_params
from attention_ref.worked.kv_heads import KV_PRESETS, human_bytes, kv_preset_table, kv_table


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_llama_3_8b_preset_is_its_published_configuration():
    p = KV_PRESETS["llama-3-8b"]
    # config.json of meta-llama/Meta-Llama-3-8B: hidden_size, num_attention_heads,
    # num_key_value_heads, num_hidden_layers, max_position_embeddings, torch_dtype
    assert (p.d_model, p.h, p.g, p.layers, p.context, p.dtype) == (
        4096,
        32,
        8,
        32,
        8192,
        "bfloat16",
    )
    assert p.d_k == p.d_model // p.h == 128 and p.bias is False


def test_llama_table_counts():
    doc = kv_preset_table("llama-3-8b").data
    rows = {r["attention"]: r for r in doc["rows"]}
    assert set(rows) == {"MHA", "GQA", "MQA"}
    assert rows["GQA"]["KV bytes per token"] == 2 * 32 * 8 * 128 * 2  # 128 KiB
    assert rows["GQA"]["KV bytes per sequence"] == 2**30  # 1 GiB at 8,192 tokens
    assert rows["MHA"]["weights per layer"] == 4 * 4096 * 4096
    assert rows["GQA"]["weights per layer"] == 2 * 4096 * 4096 + 2 * 4096 * 1024
    assert rows["GQA"]["W_K"] == "4096×1024" and rows["MQA"]["W_V"] == "4096×128"
    assert doc["cache_ratio_vs_mha"] == 4 and doc["fewer_weights_vs_mha"] == 0.375


def test_the_sentence_of_the_llama_preset():
    claim = kv_preset_table("llama-3-8b").claim
    assert claim.startswith(
        "GQA (g = 8) caches 4 times fewer bytes per token than MHA "
        "(128 KiB against 512 KiB; 1 GiB against 4 GiB for 8,192 tokens)"
    )
    assert "37.5% fewer weights per attention layer (41,943,040 against 67,108,864)" in claim
    assert "(1 GiB) is smaller than the attention weights of the 32 layers (2.5 GiB" in claim


@pytest.mark.parametrize(
    ("context", "relation"),
    [(20479, "smaller than"), (20480, "as large as"), (20481, "larger than")],
)
def test_cache_against_weights_on_both_sides(context, relation):
    """32 layers × 41,943,040 weights × 2 bytes = 20,480 tokens × 131,072 bytes per token."""
    table = kv_preset_table("llama-3-8b", context=context)
    assert f"one sequence's KV cache ({human_bytes(context * 131072)}) is {relation}" in table.claim
    assert table.data["cache_larger_than_weights"] is (relation == "larger than")


@pytest.mark.parametrize(
    ("h", "g", "kinds", "said", "not_said"),
    [
        (8, 2, ["MHA", "GQA", "MQA"], "GQA (g = 2) caches 4 times fewer", "this is multi-head"),
        (8, 1, ["MHA", "MQA"], "MQA (g = 1) caches 8 times fewer", "this is multi-head"),
        (8, 8, ["MHA", "MQA"], "g = h = 8: this is multi-head attention", "times fewer"),
        (1, 1, ["MHA"], "g = h = 1: this is multi-head attention", "times fewer"),
    ],
)
def test_rows_and_words_follow_g(h, g, kinds, said, not_said):
    table = kv_table(128, h, g, layers=2, context=128, dtype="float32", bias=True)
    assert [r[0] for r in table.rows] == kinds
    assert said in table.claim and not_said not in table.claim


def test_counts_with_biases_and_g_equal_h_are_seed_003s():
    table = kv_table(128, 4, 4, layers=2, context=128, dtype="float32", bias=True)
    assert table.rows[0][3] == 4 * 128 * 128 + 4 * 128 == gqa_params(128, 4, 4).total


def test_human_bytes():
    assert [human_bytes(n) for n in (512, 1024, 131072, 2**30, 2684354560)] == [
        "512 bytes",
        "1 KiB",
        "128 KiB",
        "1 GiB",
        "2.5 GiB",
    ]


# --- the command --------------------------------------------------------------------------------


def test_params_kv_heads_in_every_format(capsys):
    args = [
        "params",
        "--kv-heads",
        "2",
        "--heads",
        "8",
        "--layers",
        "4",
        "--context",
        "1024",
        "--dtype",
        "bf16",
        "--no-bias",
    ]
    code, out, err = run([*args, "-f", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["h"], doc["g"], doc["d_k"], doc["layers"], doc["context"]) == (8, 2, 16, 4, 1024)
    assert doc["bias"] is False and doc["bytes_per_number"] == 2
    assert doc["rows"][1]["KV bytes per token"] == 2 * 4 * 2 * 16 * 2
    code, out, _ = run([*args, "-f", "markdown"], capsys)
    assert code == 0 and "| GQA | 2 | 2 × (128×32) | 40960 | 512 bytes | 512 KiB |" in out
    code, out, _ = run(args, capsys)
    assert code == 0 and "GQA (g = 2) caches 4 times fewer" in " ".join(out.split())


def test_params_preset_llama_and_its_context(capsys):
    code, out, _ = run(
        ["params", "--preset", "llama-3-8b", "--context", "131072", "-f", "json"], capsys
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["preset"] == "llama-3-8b" and doc["cache_larger_than_weights"] is True
    assert doc["rows"][1]["KV bytes per sequence"] == 16 * 2**30


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kv-heads", "3", "--heads", "8"], "g=3 K/V heads must divide h=8"),
        (["--kv-heads", "2"], "give one --heads value h, got none"),
        (["--kv-heads", "2", "--heads", "4,8"], "give one --heads value h, got '4,8'"),
        (["--kv-heads", "2", "--heads", "8", "--dtype", "int4"], "unknown dtype 'int4'"),
        (["--kv-heads", "2", "--heads", "8", "--context", "0"], "context (tokens) must be"),
        (["--kv-heads", "2", "--heads", "8", "--layers", "-1"], "number of layers must be"),
        (["--kv-heads", "2", "--heads", "6", "--d-model", "100"], "not divisible by h=6"),
        (["--layers", "3"], "--layers is an option of the KV-cache table"),
        (["--dtype", "bf16"], "--dtype is an option of the KV-cache table"),
        (["--preset", "roberta-base", "--kv-heads", "2"], "an encoder keeps no KV cache"),
        (["--preset", "llama-3-8b", "--heads", "4"], "sets --heads itself"),
        (["--preset", "llama-3-8b", "--kv-heads", "4"], "sets --kv-heads itself"),
        (["--preset", "nope"], "choose one of: roberta-base, seed-003, llama-3-8b"),
    ],
)
def test_bad_kv_options_are_one_line(capsys, args, message):
    code, out, err = run(["params", *args], capsys)
    assert code == 2 and out == ""
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "args",
    [
        ["params"],
        ["params", "--preset", "llama-3-8b"],
        ["params", "--kv-heads", "2", "--heads", "8"],
        ["params", "--preset", "roberta-base", "-f", "json"],
    ],
)
def test_params_never_imports_torch(args):
    """Issue 21: the params path is arithmetic; a fresh interpreter running it has no torch."""
    code = (
        f"import sys; from attention_ref.cli.main import main; rc = main({args!r}); "
        "print(rc, 'torch' in sys.modules, 'numpy' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "0 False False"


def test_the_probe_sees_torch_when_a_command_needs_it(tmp_path):
    """Negative control: the same probe on ``explain --backward`` (computed, never cached)
    reports torch."""
    code = (
        "import sys; from attention_ref.cli.main import main; "
        "rc = main(['explain', '-e', 'gqa', '--backward', '-f', 'json']); "
        "print(rc, 'torch' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stderr.strip().splitlines()[-1] == "0 True"


def test_the_portuguese_sentence_says_the_same_numbers():
    """One computation, said in each language: the Portuguese claim carries the English
    claim's numbers, in Portuguese notation, and follows the same side of the comparison."""
    claim = kv_preset_table("llama-3-8b", lang="pt").claim
    assert claim.startswith(
        "a GQA (g = 8) guarda 4 vezes menos bytes por token que a MHA "
        "(128 KiB contra 512 KiB; 1 GiB contra 4 GiB para 8\u202f192 tokens)"
    )
    assert (
        "37,5 % menos pesos por camada de atenção "
        "(41\u202f943\u202f040 contra 67\u202f108\u202f864)" in claim
    )
    assert "(1 GiB) é menor que os pesos de atenção das 32 camadas (2,5 GiB" in claim
    larger = kv_preset_table("llama-3-8b", context=20481, lang="pt").claim
    assert "é maior que os pesos" in larger and "menor que" not in larger
    assert "32 camadas, 8\u202f192 tokens" in kv_preset_table("llama-3-8b", lang="pt").context


def test_human_bytes_in_portuguese():
    assert [human_bytes(n, "pt") for n in (1536, 2684354560, 1000)] == [
        "1,5 KiB",
        "2,5 GiB",
        "1\u202f000 bytes",
    ]
