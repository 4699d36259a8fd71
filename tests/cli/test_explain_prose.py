"""What explain prints names only options that exist, and numbers heads as they are.

Every worked example, forward and ``--backward``, printed through the CLI: each ``--option`` its
text names must be an option of ``attnref explain`` (the issue's ``--grad-z``, made by a string
replace of "output" by "z", was not). The sentence about a head whose ∂A rows are equal names
that head's superscript, computed from the gradients beside it.
"""

from __future__ import annotations

import re

import pytest
import torch
import typer

from attention_ref import reference as ref
from attention_ref.cli.main import app, main
from attention_ref.worked import gradients
from attention_ref.worked.registry import EXAMPLE_NAMES

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def explain_options() -> set[str]:
    """Every option name ``attnref explain`` accepts (long and short)."""
    command = typer.main.get_command(app).commands["explain"]  # type: ignore[attr-defined]
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


def unknown_options(text: str, known: set[str]) -> set[str]:
    """The ``--options`` named in ``text`` that are not in ``known``."""
    return set(OPTION.findall(text)) - known


def test_the_judge_refuses_an_option_that_does_not_exist():
    """The control: the issue's sentence is refused, its corrected form passes."""
    known = explain_options()
    assert "--grad-output" in known and "--backward" in known
    old = "L = Σ z, so ∂z = ∂L/∂z is all ones (--grad-z FILE gives another G)."
    assert unknown_options(old, known) == {"--grad-z"}
    assert unknown_options(gradients.DEFAULT_DZ, known) == set()
    assert "output" not in gradients.DEFAULT_DZ.replace("--grad-output", "")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """explain's user cache in a folder of this test (not the user's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "400")  # rich does not fold a line inside an option's name


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_option_explain_names_exists(name, cache, capsys):
    known = explain_options()
    named: set[str] = set()
    for extra in ([], ["--backward"]):
        for fmt in ("rich", "markdown"):
            assert main(["explain", "-e", name, "--format", fmt, *extra]) == 0, (name, extra)
            out = capsys.readouterr().out
            named |= set(OPTION.findall(out))
            assert unknown_options(out, known) == set(), (name, extra, fmt)
    assert "--grad-output" in named  # each backward says how to give another G


def _life_backward(G: torch.Tensor | None = None) -> tuple[ref.AttentionTrace, ref.GradientTrace]:
    tr, _ = gradients._life()
    return tr, ref.attention_backward(tr, G if G is not None else torch.ones_like(tr.output))


def _equal_rows(g: ref.GradientTrace, i: int) -> bool:
    A = g.A[..., i, :, :]
    return float((A - A[..., :1]).abs().max()) < 1e-12


def test_the_head_whose_rows_are_equal_is_named_by_its_number():
    tr, g = _life_backward()
    note = gradients.masked_zero_note(tr, g)
    assert "⁽ⁱ⁾ has equal entries" not in note and "∂S̃⁽ⁱ⁾ = 0" not in note
    equal = [i for i in range(tr.h) if _equal_rows(g, i)]
    assert equal, "the all-ones G with W_O = I gives some head equal rows of ∂A"
    for i in range(tr.h):
        sup = gradients.head_sup(i)
        said = f"In head {i + 1} every row of ∂A{sup} has equal entries, so ∂S̃{sup} = 0" in note
        assert said is (i in equal), i


def test_no_head_is_named_when_no_rows_are_equal():
    """The control: a G that is not constant along the output's columns."""
    tr, _ = _life_backward()
    G = torch.arange(tr.output.numel(), dtype=tr.output.dtype).reshape(tr.output.shape) ** 2
    _, g = _life_backward(G)
    assert not any(_equal_rows(g, i) for i in range(tr.h))
    assert "every row of ∂A" not in gradients.masked_zero_note(tr, g)


def test_head_superscripts():
    assert [gradients.head_sup(i) for i in (0, 1, 9, 11)] == ["⁽¹⁾", "⁽²⁾", "⁽¹⁰⁾", "⁽¹²⁾"]
