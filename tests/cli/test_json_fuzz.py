"""No JSON makes a traceback: every command that reads a JSON file, fed arbitrary JSON.

The commands (``check``, ``explain --input``, ``explain --backward --input``, ``explain
--backward --grad-output``) read their files through one loader
(`attention_ref.inputs.jsonfile`). Whatever the file holds (deep nesting, 1e999, NaN, bytes
that are not UTF-8, huge arrays, a wrong type at any key of a valid document), the command
answers in one line on stderr with exit code 2: through the real CLI entry point, and through
the console script for the cases that used to crash it.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attention_ref.cli.errors import PREFIX
from attention_ref.cli.main import main
from attention_ref.exercises.entries import INFINITIES
from attention_ref.inputs.jsonfile import MAX_DEPTH

ATTNREF = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))
FILE = "doc.json"
#: each command that reads JSON, with the path of the file in its arguments
COMMANDS = {
    "check": ["check", FILE],
    "explain --input": ["explain", "--input", FILE],
    "explain --backward --input": ["explain", "--backward", "--input", FILE],
    "explain --backward --grad-output": ["explain", "--backward", "--grad-output", FILE],
}
#: a valid document for each (its keys are where wrong types go)
VALID = {
    "check": {
        "exercise": {"seed": 3, "tokens": 3, "d_model": 4, "heads": 2, "lang": "pt"},
        "heads": [
            {"Q": [[1, 0], [1, 1], [2, 1]], "A": [[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]}
        ],
        "output": [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]],
        "grads": {
            "X": [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]],
            "heads": [{"W_Q": [[1, 0], [0, 1], [1, 1], [0, 0]]}],
        },
    },
    "explain --input": {
        "tokens": ["a", "b", "c"],
        "X": [[1, 0], [0, 1], [1, 1]],
        "heads": [{"W_Q": [[1], [0]], "W_K": [[0], [1]], "W_V": [[1], [1]], "b_Q": [0.5]}],
        "W_O": [[2, 0]],
        "causal": False,
    },
    "explain --backward --grad-output": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]],
}
VALID["explain --backward --input"] = VALID["explain --input"]


def run_bytes(tmp: Path, command: str, data: bytes) -> tuple[int, str, str]:
    """The command on a file holding ``data``, through the CLI's entry point."""
    path = tmp / FILE
    path.write_bytes(data)
    args = [str(path) if a == FILE else a for a in COMMANDS[command]]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def assert_one_line(code: int, out: str, err: str) -> None:
    assert code == 2, (code, out[-300:], err)
    # the prefix in the answer's language (`attention_ref.cli.errors.PREFIX`: "erro" in Portuguese)
    assert out == "" and err.count("\n") == 1 and err.startswith(tuple(PREFIX.values())), err
    assert "Traceback" not in err


def test_the_valid_documents_are_valid(tmp_path):
    """Negative control: the documents the wrong types go into pass, so a refusal below is the
    wrong type's doing."""
    for command, doc in VALID.items():
        code, out, err = run_bytes(tmp_path, command, json.dumps(doc).encode())
        assert code in (0, 1) and err == "" and out, (command, err)


FUZZ = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


@FUZZ
@given(doc=json_values, command=st.sampled_from(sorted(COMMANDS)))
def test_arbitrary_json_is_one_line_and_exit_2(tmp_path, doc, command):
    """Any JSON value (NaN and ±Infinity included, as Python writes them) is refused."""
    assert_one_line(*run_bytes(tmp_path, command, json.dumps(doc).encode()))


def paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    """Every key and index of a document, as a path from its root."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, (*prefix, i))
    return out


def at(doc: object, path: tuple) -> object:
    for step in path:
        doc = doc[step]  # type: ignore[index]
    return doc


def replaced(doc: object, path: tuple, value: object) -> object:
    doc = json.loads(json.dumps(doc))
    node = doc
    for step in path[:-1]:
        node = node[step]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]
    return doc


def json_type(v: object) -> str:
    return {
        bool: "bool",
        int: "number",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }[type(v)]


WRONG = (
    st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4).filter(lambda s: s.strip() not in INFINITIES)
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)


@FUZZ
@given(data=st.data(), command=st.sampled_from(sorted(COMMANDS)))
def test_a_wrong_type_at_any_key_is_one_line_and_exit_2(tmp_path, data, command):
    doc = VALID[command]
    path = data.draw(st.sampled_from(paths(doc)))
    old = at(doc, path)
    value = data.draw(WRONG.filter(lambda v: json_type(v) != json_type(old)))
    assert_one_line(*run_bytes(tmp_path, command, json.dumps(replaced(doc, path, value)).encode()))


@FUZZ
@given(
    depth=st.integers(MAX_DEPTH + 1, 6000),
    opener=st.sampled_from(["[", '{"a":']),
    command=st.sampled_from(sorted(COMMANDS)),
)
def test_deep_nesting_is_one_line_and_exit_2(tmp_path, depth, opener, command):
    closer = "]" if opener == "[" else "}"
    code, out, err = run_bytes(tmp_path, command, (opener * depth + "1" + closer * depth).encode())
    assert_one_line(code, out, err)
    assert f"nests arrays/objects {depth} deep; the limit is {MAX_DEPTH}" in err


@FUZZ
@given(data=st.binary(min_size=1, max_size=40), command=st.sampled_from(sorted(COMMANDS)))
def test_bytes_that_are_not_utf8_are_one_line_and_exit_2(tmp_path, data, command):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        data = b"\xff" + data  # never the start of a UTF-8 character
    code, out, err = run_bytes(tmp_path, command, data)
    assert_one_line(code, out, err)
    assert "is not UTF-8 text" in err


#: the words of the loader's errors in Portuguese (`attention_ref.inputs.jsonfile.WORDS`)
IN_PORTUGUESE = {
    "too large for a float": "grande demais para um float",
    "has NaN at line": "tem NaN na linha",
    "-Infinity at line": "-Infinity na linha",
    "an integer of 40 digits": "um inteiro de 40 dígitos",
    "a number written with 4003 characters": "um número escrito com 4003 caracteres",
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("1e999", "too large for a float"),
        ("-1e400", "too large for a float"),
        ("NaN", "has NaN at line"),
        ("-Infinity", "-Infinity at line"),
        ("1" * 40, "an integer of 40 digits"),
        ("0.1" + "0" * 4000, "a number written with 4003 characters"),  # a padded answer
        ('"\\ud800"', "U+D800"),
        ('"a\\u0000"', "U+0000"),
    ],
)
def test_numbers_and_strings_json_should_not_hold(tmp_path, command, number, message):
    """Each put where a valid document has a number (the first entry of its first matrix); the
    answer that check reads is to an exercise in Portuguese, so its errors are Portuguese."""
    if command == "check":
        message = IN_PORTUGUESE.get(message, message)
    doc = VALID[command]
    first = next(
        p for p in paths(doc) if isinstance(p[-1], int) and json_type(at(doc, p)) == "number"
    )
    text = json.dumps(replaced(doc, first, "@@")).replace('"@@"', number)
    code, out, err = run_bytes(tmp_path, command, text.encode())
    assert_one_line(code, out, err)
    assert message in err, err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_huge_files_and_arrays_are_one_line_and_exit_2(tmp_path, command):
    code, out, err = run_bytes(tmp_path, command, b"[" + b"0," * 2_600_000 + b"0]")
    assert_one_line(code, out, err)
    assert "too large: files are limited to 5,000,000 bytes" in err
    wide = {
        "check": {"exercise": {"seed": 1}, "output": [[0] * 2000] * 3},
        "explain --input": {"X": [[0] * 2000], "heads": []},
        "explain --backward --input": {"X": [[0] * 3] * 300, "heads": []},
        "explain --backward --grad-output": [[0] * 5000],
    }[command]
    code, out, err = run_bytes(tmp_path, command, json.dumps(wide).encode())
    assert_one_line(code, out, err)
    assert any(w in err for w in ("at most", "supported", "expected 3×4")), err


def test_the_console_script_answers_in_one_line_too(tmp_path):
    """The file that used to give a RecursionError traceback (3,000 nested "[")."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 3000 + "]" * 3000, encoding="utf-8")
    for args in (["check"], ["explain", "--input"], ["explain", "--backward", "--grad-output"]):
        done = subprocess.run(
            [ATTNREF, *args, str(path)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr[-500:])
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "nests arrays/objects 3000 deep" in done.stderr
    fifo = tmp_path / "fifo.json"
    __import__("os").mkfifo(fifo)
    done = subprocess.run([ATTNREF, "check", str(fifo)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "is not a regular file" in done.stderr


def test_a_number_of_the_longest_length_is_read():
    """The control of the padded number: `MAX_NUMBER_CHARS` characters are read as a number."""
    from attention_ref.inputs.jsonfile import MAX_NUMBER_CHARS, loads

    longest = "0." + "1" * (MAX_NUMBER_CHARS - 2)
    assert loads(f"[{longest}]", "x", exact=True) == [longest]
    with pytest.raises(ValueError, match=f"{MAX_NUMBER_CHARS + 1} characters"):
        loads(f"[{longest}1]", "x", exact=True)
