r"""``attnref explain --format latex`` compiles with pdflatex: every example and an ``--input``
file, as a standalone document and as a fragment pasted into the same preamble.

pdflatex is Debian's TeX Live (texlive-latex-base, texlive-lang-cyrillic), installed by
``make latex`` (a prerequisite of ``make test``); a missing pdflatex fails the test. A compile
counts as clean when pdflatex exits 0 and its log holds no "invalid in math mode" warning
(Cyrillic in math without ``\text``), no "Missing character" and no "Overfull \hbox" (a matrix
or a word past the margin: what a teacher pastes must fit the page); the negative controls below
show each check failing on a document that breaks it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from attention_ref.cli.main import main
from attention_ref.render import PREAMBLE, render
from attention_ref.render.latex import CYRILLIC
from attention_ref.worked.registry import EXAMPLE_NAMES

pytestmark = pytest.mark.slow  # ten pdflatex runs: about 10-15 s on 2 cores

#: A wide input (d_model = 12 > bmatrix's 10 columns), fused weights, numbers with decimals.
D = 12
WIDE_INPUT = {
    "tokens": ["Я", "хочу", "пиццу"],
    "X": [[((i * 7 + j * 3) % 11) / 4 - 1 for j in range(D)] for i in range(3)],
    "W_Q": [[((i + 2 * j) % 5) / 2 - 1 for j in range(D)] for i in range(D)],
    "W_K": [[((2 * i + j) % 7) / 3 - 1 for j in range(D)] for i in range(D)],
    "W_V": [[((i * j) % 4) / 2 for j in range(D)] for i in range(D)],
    "h": 2,
}
SOURCES = [*EXAMPLE_NAMES, "--input"]


def pdflatex_problems(tmp_path: Path, source: str, name: str = "doc") -> list[str]:
    """Compile ``source`` in ``tmp_path``; the error lines and bad warnings of the log."""
    exe = shutil.which("pdflatex")
    if exe is None:
        pytest.fail(
            "pdflatex is missing: run `make latex` (Debian texlive-latex-base, "
            "texlive-lang-cyrillic)"
        )
    (tmp_path / f"{name}.tex").write_text(source, encoding="utf-8")
    proc = subprocess.run(
        [exe, "-halt-on-error", "-interaction=nonstopmode", f"{name}.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
    )
    log_path = tmp_path / f"{name}.log"
    log = log_path.read_bytes().decode("utf-8", "replace") if log_path.exists() else ""
    problems = [
        line
        for line in log.splitlines()
        if line.startswith("!")
        or "invalid in math mode" in line
        or "Missing character" in line
        or line.startswith("Overfull \\hbox")
    ]
    if proc.returncode != 0:
        problems.append(f"pdflatex exit code {proc.returncode}")
    elif not (tmp_path / f"{name}.pdf").is_file():
        problems.append("no PDF")
    return problems


def text_problems(fragment: str) -> list[str]:
    """What the fragment must not hold: an empty ``\\sqrt{}``, a character outside ASCII
    other than the Cyrillic letters the preamble declares (T2A)."""
    problems = [f"empty \\sqrt at {m.start()}" for m in re.finditer(r"\\sqrt\{\s*\}", fragment)]
    problems += [
        f"{c!r} (U+{ord(c):04X})"
        for c in sorted(set(fragment))
        if not c.isascii() and c not in CYRILLIC
    ]
    return problems


def explain_latex(capsys, tmp_path: Path, source: str, *extra: str) -> str:
    """``attnref explain -e SOURCE -f latex EXTRA…`` (or ``--input`` the wide file, with
    ``--fit-width``: its matrices are wider than the page), its stdout."""
    if source == "--input":
        path = tmp_path / "wide.json"
        path.write_text(json.dumps(WIDE_INPUT), encoding="utf-8")
        args = ["explain", "--input", str(path), "-f", "latex", "--fit-width", *extra]
    else:
        args = ["explain", "-e", source, "-f", "latex", *extra]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def wrap(fragment: str) -> str:
    """The fragment pasted into the standalone preamble."""
    return PREAMBLE + "\\begin{document}\n" + fragment + "\n\\end{document}\n"


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("source", SOURCES)
def test_standalone_compiles(capsys, tmp_path, source, backward):
    extra = ("--backward",) if backward else ()
    doc = explain_latex(capsys, tmp_path, source, "--standalone", *extra)
    assert doc.startswith(PREAMBLE + "\\begin{document}")
    assert doc.rstrip().endswith("\\end{document}")
    assert text_problems(doc) == []
    assert pdflatex_problems(tmp_path, doc) == []


@pytest.mark.parametrize("source", SOURCES)
def test_fragment_is_ascii_and_compiles_in_the_preamble(capsys, tmp_path, source):
    fragment = explain_latex(capsys, tmp_path, source)
    assert "\\documentclass" not in fragment and "\\begin{document}" not in fragment
    assert text_problems(fragment) == []
    cyrillic = {c for c in fragment if not c.isascii()}
    first = fragment.splitlines()[0]
    packages = "amsmath,amssymb,graphicx}" if source == "--input" else "amsmath,amssymb}"
    assert first.startswith("% attnref: pdflatex needs \\usepackage{" + packages)
    # a matrix in a \resizebox only when asked (--fit-width): what a teacher pastes is plain
    assert ("\\resizebox" in fragment) == (source == "--input")
    assert ("T2A" in first) == bool(cyrillic)  # the comment names T2A only where it is needed
    if source == "--input":
        assert "\\setcounter{MaxMatrixCols}{12}" in fragment
    assert pdflatex_problems(tmp_path, wrap(fragment)) == []


def test_fit_width_puts_every_matrix_in_a_resizebox(capsys, tmp_path):
    plain = explain_latex(capsys, tmp_path, "gqa")
    fitted = explain_latex(capsys, tmp_path, "gqa", "--fit-width")
    assert "\\resizebox" not in plain and "\\begin{aligned}" in plain  # wide: on two lines
    assert fitted.count("\\resizebox") == fitted.count("\\begin{bmatrix}") > 0
    assert pdflatex_problems(tmp_path, wrap(fitted)) == []


def test_pizza_has_cyrillic_in_text_and_math(capsys, tmp_path):
    fragment = explain_latex(capsys, tmp_path, "i-want-pizza")
    assert "q_{\\text{Пиццу}}" in fragment
    assert "Пиццу" in fragment.split("\\[")[0]  # in the prose too


# --- the checks can fail ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a − b", "Unicode character"),  # a raw minus sign, not declared
        ("K$^{(1)}$ᵀ", "Unicode character"),
        ("$q_{Пиццу}$", "invalid in math mode"),  # Cyrillic in math without \text
        ("\\begin{bmatrix} 1 & 2 \\end{bmatrix}", "Missing $ inserted"),  # math outside math mode
        # a matrix of 40 wide entries, not fitted: past the margin
        (
            "\\setcounter{MaxMatrixCols}{40}$$\\begin{bmatrix} "
            + " & ".join(["0.123"] * 40)
            + " \\end{bmatrix}$$",
            "Overfull",
        ),
    ],
)
def test_the_compile_check_can_fail(tmp_path, body, expected):
    problems = pdflatex_problems(tmp_path, wrap(body))
    assert any(expected in p for p in problems), problems


def test_the_compile_check_passes_a_good_document(tmp_path):
    body = "Пиццу $q_{\\text{Пиццу}} = \\begin{bmatrix} 1 & 0 \\end{bmatrix}$ $\\sqrt{d_k}$"
    assert pdflatex_problems(tmp_path, wrap(body)) == []


def test_a_matrix_wider_than_the_page_is_shrunk_to_fit(tmp_path):
    """The same 40 wide entries as the failing control, written by `fit`: no overfull box;
    and a narrow matrix keeps its natural size (the box is not stretched to the line)."""
    from attention_ref.render.latex import fit

    wide = "\\setcounter{MaxMatrixCols}{40}" + fit(
        "A = \\begin{bmatrix} " + " & ".join(["0.123"] * 40) + " \\end{bmatrix}"
    )
    assert pdflatex_problems(tmp_path, wrap(wide)) == []
    narrow = fit("A = \\begin{bmatrix} 1 & 0 \\end{bmatrix}")
    assert "\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi" in narrow


def test_the_text_check_can_fail():
    assert text_problems("divided by $\\sqrt{}$2") == ["empty \\sqrt at 12"]
    assert text_problems("$\\sqrt{ }$") != []
    assert text_problems("Q Kᵀ −∞ Пиццу") == ["'ᵀ' (U+1D40)", "'−' (U+2212)", "'∞' (U+221E)"]
    assert text_problems("$\\sqrt{2}$ Пиццу") == []


# --- --standalone is a LaTeX option -----------------------------------------------------------


@pytest.mark.parametrize("fmt", ["rich", "markdown", "json"])
def test_fit_width_needs_latex(capsys, fmt):
    code = main(["explain", "-e", "life-is-awesome", "-f", fmt, "--fit-width"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"attnref: error: --fit-width needs --format latex (the format is {fmt!r})\n"


@pytest.mark.parametrize("fmt", ["rich", "markdown", "json"])
def test_standalone_needs_latex(capsys, fmt):
    code = main(["explain", "-e", "life-is-awesome", "-f", fmt, "--standalone"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"attnref: error: --standalone needs --format latex (the format is {fmt!r})\n"


def test_render_refuses_standalone_outside_latex():
    from attention_ref.render import Explanation

    expl = Explanation(title="T", source="S", sections=[], data={})
    with pytest.raises(ValueError, match="standalone is a LaTeX option"):
        render(expl, "markdown", 3, standalone=True)
    assert render(expl, "latex", 3, standalone=True).startswith(PREAMBLE)
