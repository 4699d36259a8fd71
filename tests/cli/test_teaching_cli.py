"""The teaching loop through the CLI: ``explain --backward``, ``exercise``, ``check``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from attention_ref import reference as ref
from attention_ref.cli.main import main
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.registry import EXAMPLE_NAMES

ATTNREF = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))
LIFE_INPUT = {
    "tokens": list(life.LIFE_TOKENS),
    "X": life.LIFE_X,
    "heads": [
        {"W_Q": life.LIFE_W_Q[i], "W_K": life.LIFE_W_K[i], "W_V": life.LIFE_W_V[i]}
        for i in range(2)
    ],
    "W_O": life.LIFE_W_O,
}
HEAD_GRADS = {"H", "A", "S_masked", "S", "Q", "K", "V", "W_Q", "W_K", "W_V"}


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, doc: object) -> str:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def autograd_life(G: torch.Tensor) -> dict[str, torch.Tensor]:
    """The worked example's gradients by torch.autograd, for ⟨G, output⟩."""
    t = lambda m: torch.tensor(m, dtype=torch.float64).requires_grad_()  # noqa: E731
    X, W_Q, W_K, W_V, W_O = (
        t(m) for m in (life.LIFE_X, life.LIFE_W_Q, life.LIFE_W_K, life.LIFE_W_V, life.LIFE_W_O)
    )
    out = ref.masked_multihead_attention(X, W_Q, W_K, W_V, W_O).output
    (out * G).sum().backward()
    return {"X": X.grad, "W_Q": W_Q.grad, "W_O": W_O.grad}


def assert_life_grads(grads: dict, G: torch.Tensor) -> None:
    want = autograd_life(G)
    f64 = lambda m: torch.tensor(m, dtype=torch.float64)  # noqa: E731
    assert torch.allclose(f64(grads["X"]), want["X"], atol=1e-12)
    assert torch.allclose(f64(grads["W_O"]), want["W_O"], atol=1e-12)
    for i in range(2):
        assert torch.allclose(f64(grads["heads"][i]["W_Q"]), want["W_Q"][i], atol=1e-12)


# --- explain --backward ---------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
@pytest.mark.parametrize("fmt", ["rich", "markdown", "latex", "json"])
def test_backward_on_every_example_in_every_format(capsys, name, fmt):
    code, out, err = run(["explain", "-e", name, "--backward", "-f", fmt], capsys)
    assert code == 0, err
    if fmt == "json":
        doc = json.loads(out)
        assert doc["loss"] == "sum" and "grads" in doc
        if name != "hello-shiny-sun":
            assert {"output", "W_O", "concat", "X", "heads"} <= set(doc["grads"])
            assert all(set(h) == HEAD_GRADS for h in doc["grads"]["heads"])
            assert ("b_O" in doc["grads"]) == (name == "your-journey-starts")  # out_proj bias
        else:
            assert set(doc["grads"]) == {"context", "weights", "scores", "X"}
    elif fmt != "latex":
        assert "L = Σ output" in out or "L = Σ z" in out


def test_backward_json_equals_autograd(capsys):
    code, out, _ = run(["explain", "--backward", "-f", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["tokens"] == list(life.LIFE_TOKENS)
    assert doc["grads"]["output"] == [[1.0] * 4] * 3
    assert_life_grads(doc["grads"], torch.ones(3, 4, dtype=torch.float64))
    assert doc["grads"]["heads"][0]["S_masked"][0][1] == 0.0  # masked: exactly zero


def test_grad_output_file_sets_G(tmp_path, capsys):
    G = [[1.0, -2.0, 0.5, 0.0], [0.0, 1.0, 3.0, -1.0], [2.0, 0.0, -0.5, 1.0]]
    args = ["explain", "--backward", "--grad-output", write(tmp_path / "G.json", G), "-f"]
    code, out, err = run([*args, "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["loss"] == "grad-output" and doc["grads"]["output"] == G
    assert_life_grads(doc["grads"], torch.tensor(G, dtype=torch.float64))
    code, out, _ = run([*args, "markdown"], capsys)
    assert code == 0 and "G is the matrix of --grad-output" in out and "all ones" not in out


def test_backward_of_an_input_file_equals_the_example(tmp_path, capsys):
    path = write(tmp_path / "in.json", LIFE_INPUT)
    code, out, err = run(["explain", "-i", path, "--backward", "-f", "json"], capsys)
    assert code == 0, err
    mine = json.loads(out)["grads"]
    code, out, _ = run(["explain", "-e", "life-is-awesome", "--backward", "-f", "json"], capsys)
    assert mine == json.loads(out)["grads"]


@pytest.mark.parametrize(
    ("args", "G", "message"),
    [
        (["--backward"], [[1, 2], [3, 4]], "--grad-output has shape 2×2, expected 3×4"),
        (["--backward"], "{not json", "is not valid JSON"),
        (["--backward"], [[1, "a"]], "not a number"),
        ([], [[1] * 4] * 3, "--grad-output needs --backward"),
    ],
)
def test_bad_grad_output_is_one_line_exit_2(tmp_path, capsys, args, G, message):
    path = write(tmp_path / "G.json", G)
    code, out, err = run(["explain", *args, "--grad-output", path], capsys)
    assert code == 2 and out == ""
    assert err.startswith("attnref: error: ") and message in err and err.count("\n") == 1


# --- exercise -------------------------------------------------------------------------------


def test_exercise_prints_the_statement_and_the_key(capsys):
    code, out, err = run(["exercise", "--seed", "4"], capsys)
    assert code == 0, err
    assert out.startswith("# Exercise 4: masked multi-head attention by hand")
    code, key, _ = run(["exercise", "--seed", "4", "--key"], capsys)
    assert code == 0 and key.startswith("# Solution key of exercise 4") and "A^(2)" in key
    code, again, _ = run(["exercise", "--seed", "4"], capsys)
    assert again == out  # same seed, same exercise


def test_exercise_json_is_an_input_file_for_explain(tmp_path, capsys):
    code, out, _ = run(
        ["exercise", "--seed", "5", "--tokens", "4", "--no-causal", "-f", "json"], capsys
    )
    assert code == 0
    problem = json.loads(out)
    assert problem["causal"] is False and len(problem["X"]) == 4
    path = write(tmp_path / "ex.json", out)
    code, explained, err = run(["explain", "-i", path, "-f", "json"], capsys)
    assert code == 0, err
    code, key, _ = run(
        ["exercise", "--seed", "5", "--tokens", "4", "--no-causal", "--key", "-f", "rich"], capsys
    )
    assert code == 0 and "Output" in key
    from attention_ref.exercises.exercise import ExerciseOptions, make_exercise

    ex = make_exercise(ExerciseOptions(seed=5, tokens=4, causal=False))
    assert json.loads(explained)["output"] == ex.key.data["output"]


def test_exercise_out_writes_every_document_and_the_latex_compiles(tmp_path, capsys):
    code, _, err = run(
        ["exercise", "--seed", "6", "--backward", "--lang", "pt", "--out", str(tmp_path / "ex")],
        capsys,
    )
    assert code == 0, err
    files = sorted(p.name for p in (tmp_path / "ex").iterdir())
    assert files == sorted(
        ["statement.md", "statement.tex", "key.md", "key.tex", "exercise.json", "answer.json"]
    )
    key = json.loads((tmp_path / "ex" / "exercise.json").read_text(encoding="utf-8"))
    assert key["tokens"] and "heads" in key
    from attention_ref.exercises.exercise import ExerciseOptions, make_exercise

    H = make_exercise(ExerciseOptions(seed=6)).key.data["heads"][0]["H"]
    answer = write(tmp_path / "ex" / "a.json", {"input": "exercise.json", "heads": [{"H": H}]})
    code, out, err = run(["check", answer], capsys)  # the exercise's JSON, named by "input"
    assert code == 0, (out, err)
    tex = (tmp_path / "ex" / "statement.tex").read_text(encoding="utf-8")
    assert tex.startswith("\\documentclass") and "Quest\\~{a}o 5" in tex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    for name in ("statement.tex", "key.tex"):
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name],
            cwd=tmp_path / "ex",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--heads", "3"], "--heads must divide --d-model"),
        (["--lang", "fr"], "--lang must be en or pt, got 'fr'"),
        (["--format", "pdf"], "unknown format 'pdf'"),
        (["--tokens", "20"], "--tokens must be between 1 and 8"),
    ],
)
def test_bad_exercise_options(capsys, args, message):
    code, out, err = run(["exercise", *args], capsys)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


# --- check ----------------------------------------------------------------------------------


def exercise_answer(tmp_path: Path, capsys, *, mistake: str | None, lang: str = "en") -> str:
    """The key of exercise 9 as an answer (3 decimals), optionally with the scale forgotten."""
    from attention_ref.exercises.answer import Problem, answer_from_steps, answer_text
    from attention_ref.exercises.catalogue import mistakes_for
    from attention_ref.exercises.chain import computed_steps
    from attention_ref.exercises.exercise import ExerciseOptions

    prob = Problem.of_exercise(ExerciseOptions(seed=9, lang=lang))
    d = prob.data()
    ms = [m for m in mistakes_for(d) if m.name == mistake]
    doc = answer_from_steps(computed_steps(d, ms), prob.naming)
    return write(tmp_path / "answer.json", answer_text(doc, 3))


def test_check_a_right_answer_exits_0(tmp_path, capsys):
    code, out, err = run(["check", exercise_answer(tmp_path, capsys, mistake=None)], capsys)
    assert code == 0, err
    assert "WRONG" not in out and out.rstrip().endswith("Every step you gave is right.")


def test_check_a_mistake_exits_1_with_its_diagnosis(tmp_path, capsys):
    path = exercise_answer(tmp_path, capsys, mistake="no_scale")
    code, out, err = run(["check", path], capsys)
    assert code == 1 and err == ""
    assert "First wrong step: S⁽¹⁾ (heads[0].S)." in out
    assert "Diagnosis: no scaling: S = Q Kᵀ was not divided by √d_k = 1.414." in out
    done = subprocess.run([ATTNREF, "check", path], capture_output=True, text=True)
    assert done.returncode == 1 and "Diagnosis: no scaling" in done.stdout


def test_check_an_input_file_relative_to_the_answer(tmp_path, capsys):
    write(tmp_path / "life.json", LIFE_INPUT)
    A = [[1.0, 0.0, 0.0], [0.67, 0.33, 0.0], [0.102, 0.05, 0.848]]
    answer = write(tmp_path / "a.json", {"input": "life.json", "heads": [{"A": A}]})
    code, out, err = run(["check", answer], capsys)
    assert code == 0, (out, err)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "is not valid JSON"),
        ('{"exercise": {"seed": 1}}', "no step given yet"),
        ('{"X": [[1]], "heads": []}', "a.json is the exercise (its numbers), not an answer"),
        ('{"input": "missing.json", "output": [[1]]}', "input file not found"),
        ('{"exercise": {"seed": 1}, "output": [[1, 2], [3]]}', "ragged"),
    ],
)
def test_check_a_bad_file_exits_2_in_one_line(tmp_path, capsys, text, message):
    code, out, err = run(["check", write(tmp_path / "a.json", text)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("attnref: error: ") and message in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_the_answer_template_then_the_filled_answer_in_portuguese(tmp_path, capsys):
    """exercise --out writes answer.json (every step null): check says to fill it in, one line,
    exit 2; exercise.json itself is refused in one line; filled in, the report is Portuguese."""
    out = tmp_path / "ex"
    code, _, err = run(["exercise", "--seed", "9", "--lang", "pt", "--out", str(out)], capsys)
    assert code == 0, err
    template = json.loads((out / "answer.json").read_text(encoding="utf-8"))
    assert template["exercise"]["lang"] == "pt" and template["exercise"]["decimals"] == 3
    assert template["heads"][0] == dict.fromkeys(
        ["Q", "K", "V", "scores", "S", "S_masked", "A", "H"]
    )
    code, stdout, err = run(["check", str(out / "answer.json")], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1
    assert err.startswith("attnref: erro: nenhum passo dado ainda: preencha os passos")
    code, stdout, err = run(["check", str(out / "exercise.json")], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1
    # a Portuguese exercise's file says so in Portuguese: its tokens are the language's words
    assert err.startswith(
        "attnref: erro: exercise.json é o exercício (os seus números), não uma resposta: "
        "preencha o answer.json ao lado dele"
    ), err
    from attention_ref.exercises.exercise import ExerciseOptions, make_exercise

    key = make_exercise(ExerciseOptions(seed=9, lang="pt")).key.data
    template["heads"][1]["A"] = [[round(x, 3) for x in row] for row in key["heads"][1]["A"]]
    template["output"] = [[round(x, 3) for x in row] for row in key["output"]]
    write(out / "answer.json", template)
    code, stdout, err = run(["check", str(out / "answer.json")], capsys)
    assert code == 0, (stdout, err)
    assert (
        stdout.startswith("Conferindo a sua resposta a attnref exercise --seed 9")
        and "2 passos dados" in stdout
    )
    assert stdout.rstrip().endswith("Todos os passos que você deu estão certos.")
    # negative control: the same answer to 2 decimals is short of decimals, exit 1
    template["output"] = [[round(x, 2) for x in row] for row in key["output"]]
    write(out / "answer.json", template)
    code, stdout, _ = run(["check", str(out / "answer.json")], capsys)
    assert code == 1 and "dê 3 casas decimais" in stdout


def test_check_help_states_the_grading_rule(capsys):
    code, out, _ = run(["check", "--help"], capsys)
    assert code == 0
    flat = " ".join(w for w in out.split() if w != "│")  # the help's box drawn around text
    for words in (
        "graded at the decimals the exercise asks (3 unless it says otherwise)",
        "the exact value rounded as asked",
        "give 3 decimals",
        "0.67 as 0.670",
        "2 for 2.000",
        "exercise.json) is refused",
    ):
        assert words in flat, words


def test_an_exercise_asking_two_decimals(tmp_path, capsys):
    code, out, _ = run(["exercise", "--seed", "3", "--decimals", "2"], capsys)
    assert code == 0 and "Give decimals to 2 places" in out and '"decimals": 2' in out
    code, _, err = run(["exercise", "--decimals", "0"], capsys)
    assert code == 2 and "--decimals must be between 1 and 6" in err


def test_check_a_missing_file_through_the_console_script(tmp_path):
    done = subprocess.run(
        [ATTNREF, "check", str(tmp_path / "nope.json")], capture_output=True, text=True
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("attnref: error: answer file not found")


def test_backward_of_hello_equals_autograd(capsys):
    """Seeds 001/004 (no weights, no scale): ∂X of L = Σ z through all three paths."""
    from attention_ref.worked.hello_shiny_sun import HELLO_QUERY, HELLO_TOKENS, HELLO_X

    code, out, _ = run(["explain", "-e", "hello-shiny-sun", "--backward", "-f", "json"], capsys)
    assert code == 0
    X = torch.tensor(HELLO_X, dtype=torch.float64, requires_grad=True)
    q = X[HELLO_TOKENS.index(HELLO_QUERY)]
    z = torch.softmax(X @ q, dim=0) @ X  # ω_j = q · x_j, α = softmax(ω), z = Σ α_j x_j
    z.sum().backward()
    got = torch.tensor(json.loads(out)["grads"]["X"], dtype=torch.float64)
    assert torch.allclose(got, X.grad, atol=1e-12)


def test_backward_with_biases_and_a_narrower_output(tmp_path, capsys):
    """Biases b_Q, b_K, b_V, b_O (fused form) and W_O of width d_out = 3 ≠ h·d_v = 2."""
    doc = {
        "X": [[1, 0, 1], [0, 1, 1]],
        "h": 1,
        "W_Q": [[1], [0], [1]],
        "W_K": [[0], [1], [1]],
        "W_V": [[1, 0], [0, 1], [1, 1]],
        "b_Q": [0.5],
        "b_K": [-1.0],
        "b_V": [1.0, 2.0],
        "W_O": [[1, 2, 0], [0, 1, 1]],
        "b_O": [1, 1, 1],
    }
    code, out, err = run(
        ["explain", "-i", write(tmp_path / "b.json", doc), "--backward", "-f", "json"], capsys
    )
    assert code == 0, err
    grads = json.loads(out)["grads"]
    f64 = lambda m: torch.tensor(m, dtype=torch.float64, requires_grad=True)  # noqa: E731
    leaves = {k: f64(doc[k]) for k in ("X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")}
    tr = ref.masked_multihead_attention_fused(
        leaves["X"],
        leaves["W_Q"],
        leaves["W_K"],
        leaves["W_V"],
        leaves["W_O"],
        h=1,
        b_Q=leaves["b_Q"],
        b_K=leaves["b_K"],
        b_V=leaves["b_V"],
        b_O=leaves["b_O"],
    )
    tr.output.sum().backward()
    assert torch.allclose(torch.tensor(grads["b_O"], dtype=torch.float64), leaves["b_O"].grad)
    assert torch.allclose(torch.tensor(grads["X"], dtype=torch.float64), leaves["X"].grad)
    for role in ("b_Q", "b_K", "b_V"):
        mine = torch.tensor(grads["heads"][0][role], dtype=torch.float64)
        assert torch.allclose(mine, leaves[role].grad, atol=1e-12), role
