"""The ``attnref`` CLI: every command, every format, every bad input (exit 2, one line)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attention_ref.cli.main import app, main
from attention_ref.worked import life_is_awesome as ex
from attention_ref.worked.registry import EXAMPLE_NAMES

ATTNREF = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, doc: object, name: str = "in.json") -> str:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(p)


LIFE_INPUT = {
    "tokens": list(ex.LIFE_TOKENS),
    "X": ex.LIFE_X,
    "heads": [
        {"W_Q": ex.LIFE_W_Q[i], "W_K": ex.LIFE_W_K[i], "W_V": ex.LIFE_W_V[i]} for i in range(2)
    ],
}


# --- start-up ---------------------------------------------------------------------------------


def test_importing_the_cli_leaves_torch_and_mlflow_out():
    code = (
        "import sys, attention_ref.cli.main; "
        "bad = [m for m in ('torch', 'mlflow') if m in sys.modules]; "
        "print(','.join(bad) or 'clean')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "clean"


def test_help_runs_as_console_script():
    out = subprocess.run([ATTNREF, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "explain" in out.stdout and "params" in out.stdout


def test_demo_command_prints_the_worked_example():
    out = subprocess.run(
        [ATTNREF, "explain", "--example", "life-is-awesome", "--format", "markdown"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "| awesome | 1.102 | 1.898 | 1.102 | 1.747 |" in out.stdout


# --- explain: formats -------------------------------------------------------------------------


def test_explain_rich_default_shows_every_step(capsys):
    code, out, err = run(["explain", "--example", "life-is-awesome"], capsys)
    assert code == 0, err
    for step in ("Q^(1) = X W_Q^(1)", "S^(2)", "M", "A^(1)", "H^(2)", "Concat", "W_O", "Output"):
        assert step in out
    for value in ("0.670", "0.848", "1.898", "1.747", "-∞"):
        assert value in out


def test_explain_without_options_is_life_is_awesome(capsys):
    code, out, _ = run(["explain", "-f", "json"], capsys)
    assert code == 0
    assert json.loads(out)["tokens"] == ["Life", "is", "awesome"]


def test_explain_json_shape_and_values(capsys):
    code, out, _ = run(["explain", "-e", "life-is-awesome", "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    for key in ("tokens", "M", "heads", "concat", "W_O", "output"):
        assert key in doc
    assert doc["M"][0] == [0.0, "-inf", "-inf"]
    head = doc["heads"][0]
    assert set(head) == {"Q", "K", "V", "scores", "S", "S_masked", "A", "H"}
    assert head["S_masked"][0][1] == "-inf"
    assert head["scores"] == [[4.0, 2.0, 2.0], [3.0, 2.0, 4.0], [4.0, 3.0, 7.0]]
    assert all(isinstance(v, float) for row in head["A"] for v in row)
    assert math.isclose(head["A"][1][0], 0.670, abs_tol=5e-4)
    assert math.isclose(doc["output"][2][3], 1.747, abs_tol=5e-4)


def test_explain_latex_uses_bmatrix(capsys):
    code, out, _ = run(["explain", "-e", "life-is-awesome", "-f", "latex"], capsys)
    assert code == 0
    assert "\\begin{bmatrix} 1.000 & 0.000 & 0.000 \\\\ 0.670 & 0.330 & 0.000" in out
    assert "-\\infty" in out


def test_explain_precision(capsys):
    code, out, _ = run(["explain", "-f", "markdown", "--precision", "5"], capsys)
    assert code == 0
    assert "0.66976" in out  # A^(1)[is, Life] = 1 / (1 + e^{-1/√2})
    code, out, _ = run(["explain", "-f", "json", "--precision", "2"], capsys)
    assert json.loads(out)["heads"][0]["A"][1][0] == 0.67


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
@pytest.mark.parametrize("fmt", ["rich", "markdown", "latex", "json"])
def test_every_example_in_every_format(capsys, name, fmt):
    code, out, err = run(["explain", "--example", name, "--format", fmt], capsys)
    assert code == 0, err
    assert out.strip()
    if fmt == "json":
        json.loads(out)


def test_explain_choices_are_the_registry(capsys):
    import typer

    command = typer.main.get_command(app).commands["explain"]
    option = next(p for p in command.params if p.name == "example")
    assert option.help == f"A worked example of the documents: {', '.join(EXAMPLE_NAMES)}."
    code, _, err = run(["explain", "-e", "nope"], capsys)
    assert code == 2
    names = ", ".join(EXAMPLE_NAMES)
    assert err == f"attnref: error: unknown example 'nope'; choose one of: {names}\n"


def test_hello_shows_document_and_exact_vectors(capsys):
    code, out, _ = run(["explain", "-e", "hello-shiny-sun", "-f", "markdown"], capsys)
    assert code == 0
    assert "| shiny | 0.3992 | 0.3858 | 0.8610 |" in out  # the document's
    assert "| shiny | 0.3990 | 0.3854 | 0.8610 |" in out  # exact
    assert "rounded" in out


def test_journey_says_how_weights_are_drawn(capsys):
    code, out, _ = run(["explain", "-e", "your-journey-starts", "-f", "markdown"], capsys)
    assert code == 0
    assert "torch.manual_seed(789)" in out and "torch.manual_seed(123)" in out
    assert "Kaiming-uniform" in out
    assert "| Your | -0.0739 | 0.0713 |" in out


def test_pizza_shows_every_shape(capsys):
    code, out, _ = run(["explain", "-e", "i-want-pizza", "-f", "markdown"], capsys)
    assert code == 0
    for shape in (
        "(1, 4, 6) -> (1, 4, 3, 2)",
        "(1, 4, 3, 2) -> (1, 3, 4, 2)",
        "(1, 3, 4, 2) -> (1, 4, 3, 2)",
        "(1, 4, 3, 2) -> (1, 4, 6)",
    ):
        assert shape in out
    assert "| head 1 | 13 | 14 |" in out  # integers print as integers


# --- explain --input --------------------------------------------------------------------------


def test_input_file_reproduces_the_worked_example(tmp_path, capsys):
    code, out, _ = run(["explain", "--input", write(tmp_path, LIFE_INPUT), "-f", "json"], capsys)
    assert code == 0
    mine = json.loads(out)
    main(["explain", "-e", "life-is-awesome", "-f", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert mine["output"] == doc["output"] and mine["heads"] == doc["heads"]


def test_input_file_fused_view_gives_the_same_numbers(tmp_path, capsys):
    fused = {
        "X": ex.LIFE_X,
        "h": 2,
        **{
            role: [W[0][r] + W[1][r] for r in range(4)]
            for role, W in (("W_Q", ex.LIFE_W_Q), ("W_K", ex.LIFE_W_K), ("W_V", ex.LIFE_W_V))
        },
    }
    code, out, err = run(["explain", "-i", write(tmp_path, fused), "-f", "json"], capsys)
    assert code == 0, err
    assert math.isclose(json.loads(out)["output"][2][3], 1.747, abs_tol=5e-4)


def test_input_non_causal_and_explicit_W_O(tmp_path, capsys):
    doc = {
        "X": [[1, 0], [0, 1]],
        "heads": [{"W_Q": [[1], [0]], "W_K": [[1], [0]], "W_V": [[1], [1]]}],
        "W_O": [[2, 0]],
        "causal": False,
    }
    code, out, err = run(["explain", "-i", write(tmp_path, doc), "-f", "json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["M"] == [[0.0, 0.0], [0.0, 0.0]]
    assert res["output"][1][0] == pytest.approx(2.0)  # rows of V are all 1, W_O doubles
    assert res["heads"][0]["A"][1][1] > 0


# --- bad input: one line on stderr, exit code 2, no traceback ---------------------------------

BAD_DOCS = {
    "ragged": ({**LIFE_INPUT, "X": [[1, 0, 1, 0], [0, 1, 1]]}, "X is ragged: row 2 has 3"),
    "non-number": ({**LIFE_INPUT, "X": [[1, 0, "a", 0]] * 3}, 'X[1][3] is "a", not a number'),
    "bool": ({**LIFE_INPUT, "X": [[1, 0, True, 0]] * 3}, "X[1][3] is true, not a number"),
    "wrong W_Q": (
        {**LIFE_INPUT, "heads": [{**LIFE_INPUT["heads"][0], "W_Q": [[1, 0]] * 3}]},
        "heads[0].W_Q has shape 3×2, expected 4×*",
    ),
    "W_K width": (
        {**LIFE_INPUT, "heads": [{**LIFE_INPUT["heads"][0], "W_K": [[1, 0, 0]] * 4}]},
        "heads[0].W_K has shape 4×3, expected 4×2",
    ),
    "wrong W_O": ({**LIFE_INPUT, "W_O": [[1, 0, 0, 0]] * 3}, "W_O has shape 3×4, expected 4×*"),
    "empty X": ({**LIFE_INPUT, "X": []}, "X is empty"),
    "empty heads": ({**LIFE_INPUT, "heads": []}, '"heads" must be a non-empty list'),
    "missing X": ({"heads": LIFE_INPUT["heads"]}, 'missing "X"'),
    "missing W_V": (
        {**LIFE_INPUT, "heads": [{"W_Q": ex.LIFE_W_Q[0], "W_K": ex.LIFE_W_K[0]}]},
        "heads[0] is missing W_V",
    ),
    "tokens count": ({**LIFE_INPUT, "tokens": ["a"]}, '"tokens" has 1 names but X has 3 rows'),
    "causal type": ({**LIFE_INPUT, "causal": "yes"}, '"causal" must be true or false'),
    "unknown key": ({**LIFE_INPUT, "W_0": [[1]]}, "unknown key 'W_0'"),
    "not object": ([1, 2, 3], "must be a JSON object"),
    "b_O without W_O": (
        {
            "X": [[1, 0, 0]],
            "heads": [{"W_Q": [[1]] * 3, "W_K": [[1]] * 3, "W_V": [[1]] * 3}],
            "b_O": [1],
        },
        "b_O is given but W_O is not",
    ),
    "fused not divisible": (
        {
            "X": [[1, 0, 0, 1]],
            "h": 3,
            "W_Q": [[1] * 4] * 4,
            "W_K": [[1] * 4] * 4,
            "W_V": [[1] * 4] * 4,
        },
        "W_Q has 4 columns, which cannot be split into h=3 heads",
    ),
    "fused bad h": (
        {"X": [[1, 0]], "h": 0, "W_Q": [[1, 0]] * 2, "W_K": [[1, 0]] * 2, "W_V": [[1, 0]] * 2},
        '"h" must be between 1 and 64',
    ),
    "absurd n": ({**LIFE_INPUT, "X": [[0.0] * 4] * 5000}, "X has 5000 rows; at most 256"),
    "absurd d_model": ({**LIFE_INPUT, "X": [[0.0] * 5000] * 3}, "X has 5000 columns; at most 1024"),
}


@pytest.mark.parametrize("case", list(BAD_DOCS))
def test_bad_input_documents(tmp_path, capsys, case):
    doc, message = BAD_DOCS[case]
    code, out, err = run(["explain", "--input", write(tmp_path, doc)], capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("attnref: error: ")
    assert message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"X": [[1, 0]],', "is not valid JSON"),
        ('{"X": [[NaN, 0]], "heads": []}', "has NaN at line 1, column 9, which is not JSON"),
        ('{"X": [[Infinity, 0]], "heads": []}', "Infinity at line 1, column 9, which is not"),
        ("", "is not valid JSON"),
    ],
)
def test_bad_json_text(tmp_path, capsys, text, message):
    code, _, err = run(["explain", "-i", write(tmp_path, text)], capsys)
    assert code == 2 and message in err and err.count("\n") == 1


def test_bad_input_files(tmp_path, capsys):
    code, _, err = run(["explain", "-i", str(tmp_path / "nope.json")], capsys)
    assert code == 2 and "input file not found" in err
    code, _, err = run(["explain", "-i", str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 5_000_001)
    code, _, err = run(["explain", "-i", str(big)], capsys)
    assert code == 2 and "limited to" in err
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = run(["explain", "-i", str(binary)], capsys)
    assert code == 2 and "not UTF-8" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explain", "--example", "nope"], "choose one of: life-is-awesome, hello-shiny-sun"),
        (["explain", "--format", "pdf"], "unknown format 'pdf'"),
        (["explain", "--precision", "99"], "--precision must be between 0 and 15"),
        (["explain", "--precision", "x"], "Invalid value for '--precision'"),
        (["explain", "-e", "life-is-awesome", "-i", "f.json"], "either --example or --input"),
        (["explain", "--bogus"], "--bogus"),
        (["nope"], "nope"),
        (["params", "--d-model", "10", "--heads", "3"], "d_model=10 is not divisible by h=3"),
        (["params", "--heads", "1,x"], "--heads must be integers"),
        (["params", "--d-model", "0"], "d_model must be between 1 and 65536"),
        (["params", "--d-model", "100000000000"], "d_model must be between 1 and 65536"),
        (["params", "--heads", "0"], "heads must be between 1 and"),
        (["params", "--format", "latex"], "unknown format 'latex'"),
        (["params", "--preset", "nope"], "unknown preset 'nope'; choose one of: roberta-base"),
        (["params", "--preset", "roberta-base", "--d-model", "12"], "leave out --d-model"),
        (["params", "--preset", "roberta-base", "--heads", "5"], "d_model=768 is not divisible"),
    ],
)
def test_bad_options(capsys, args, message):
    code, out, err = run(args, capsys)
    assert out == ""
    assert code == 2
    assert message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bad_input_through_the_console_script(tmp_path):
    doc = write(tmp_path, {**LIFE_INPUT, "X": [[1, 0, 1, 0], [0, 1, 1]]})
    out = subprocess.run([ATTNREF, "explain", "--input", doc], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip().count("\n") == 0 and "ragged" in out.stderr


# --- params -----------------------------------------------------------------------------------


def test_params_equal_across_heads(capsys):
    code, out, _ = run(["params", "--d-model", "128", "--heads", "1,2,4,8", "-f", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["equal"] is True
    assert [r["h"] for r in doc["rows"]] == [1, 2, 4, 8]
    assert [r["d_k"] for r in doc["rows"]] == [128, 64, 32, 16]
    assert {r["attention layer"] for r in doc["rows"]} == {4 * 128 * 128 + 4 * 128}
    assert doc["rows"][2]["W_Q^(i), W_K^(i), W_V^(i)"] == "4 × (128×32)"


def test_params_rich_and_markdown(capsys):
    code, out, _ = run(["params"], capsys)
    assert code == 0 and "66,048" in out and "equal for every h" in out
    code, out, _ = run(["params", "--d-model", "12", "--heads", "1,3,12", "-f", "markdown"], capsys)
    assert code == 0 and "| 3 | 4 |" in out


@pytest.mark.parametrize(
    ("preset", "total"), [("seed-003", "109,514,298"), ("roberta-base", "124,697,433")]
)
def test_params_preset_counts_roberta_for_masked_lm(capsys, preset, total):
    code, out, _ = run(["params", "--preset", preset, "--heads", "4,12"], capsys)
    assert code == 0 and total in out and "2,362,368" in out
    code, out, _ = run(["params", "--preset", preset, "--heads", "4,12", "-f", "markdown"], capsys)
    plain = total.replace(",", "")
    assert f"| 4 | 192 | 4 × (768×192) | (768)×768 | 442944 | 2362368 | {plain} |" in out
    assert f"| 12 | 64 | 12 × (768×64) | (768)×768 | 147648 | 2362368 | {plain} |" in out
    code, out, _ = run(["params", "--preset", preset, "--heads", "4,12", "-f", "json"], capsys)
    doc = json.loads(out)
    assert doc["preset"] == preset and doc["equal"] is True
    assert {r["model"] for r in doc["rows"]} == {int(total.replace(",", ""))}
    assert doc["seed_003"] is (preset == "seed-003")
