"""``attnref explain``: a worked example (or your own numbers) step by step, in any format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.language import chosen, option_help
from attention_ref.cli.words import said
from attention_ref.render import FORMATS
from attention_ref.worked.registry import (
    DEFAULT_EXAMPLE,
    EXAMPLE_NAMES,
    LANGS,
    OWN_BACKWARD,
    check_example,
)


def _check_options(
    example: str | None,
    input_file: Path | None,
    fmt: str,
    precision: int | None,
    standalone: bool = False,
    fit_width: bool = False,
    lang: str = LANGS[0],
) -> None:
    """One ``CLIError`` line for the first bad option, in ``lang``, before anything heavy is
    imported."""

    def refuse(key: str, **fields: object) -> CLIError:
        return CLIError(said(key, lang, **fields), lang)

    if fmt not in FORMATS:
        raise refuse("bad_format", got=fmt, choices=", ".join(FORMATS))
    if standalone and fmt != "latex":
        raise refuse("standalone", got=fmt)
    if fit_width and fmt != "latex":
        raise refuse("fit_width", got=fmt)
    if precision is not None and not 0 <= precision <= 15:
        raise refuse("precision", got=precision)
    if example is not None and input_file is not None:
        raise refuse("example_and_input")
    if input_file is None:
        try:
            check_example(example or DEFAULT_EXAMPLE, lang)
        except ValueError as e:
            raise CLIError(str(e), lang) from None


def explain(
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            "-e",
            help=f"A worked example of the documents: {', '.join(EXAMPLE_NAMES)}.",
            show_default=False,
        ),
    ] = None,
    input_file: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help='Your own numbers, JSON: {"tokens", "X", "heads": [{"W_Q","W_K","W_V", '
            '"b_Q","b_K","b_V"}...], "W_O", "b_O", "causal"} (biases and W_O optional; no W_O: '
            'the output is the concat), or fused "W_Q","W_K","W_V" with "h". The JSON of '
            '--format json is accepted too (it carries its numbers under "input").',
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help=f"Output format: {', '.join(FORMATS)}.")
    ] = "rich",
    precision: Annotated[
        int | None,
        typer.Option(help="Decimals shown (default 3; JSON: full precision unless given)."),
    ] = None,
    standalone: Annotated[
        bool,
        typer.Option(
            "--standalone",
            help="With --format latex: a whole document for pdflatex, preamble included.",
        ),
    ] = False,
    fit_width: Annotated[
        bool,
        typer.Option(
            "--fit-width",
            help="With --format latex: each matrix in a \\resizebox that shrinks it to the "
            "line when it is wider (needs graphicx); without it, plain display math to paste.",
        ),
    ] = False,
    backward: Annotated[
        bool,
        typer.Option(
            "--backward",
            help="Add the backward pass: every gradient of L = Σ output (G = ∂L/∂output all "
            'ones), step by step; JSON adds "grads".',
        ),
    ] = False,
    grad_output: Annotated[
        Path | None,
        typer.Option(
            "--grad-output",
            help="With --backward: G = ∂L/∂output from a JSON file, an n×d_out matrix.",
            show_default=False,
        ),
    ] = None,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang",
            help=option_help(
                f"The language of the words and errors: {', '.join(LANGS)} (Portuguese prints "
                "decimal commas; the numbers are the same), for every example and --input files."
            ),
            show_default=False,
        ),
    ] = None,
) -> None:
    """Compute masked multi-head attention step by step and print every matrix.

    Without options it shows the homework's example, life-is-awesome.
    """
    lang = chosen(lang)
    _check_options(example, input_file, fmt, precision, standalone, fit_width, lang)
    from attention_ref.render import emit, render

    if grad_output is not None and not backward:
        raise CLIError(said("grad_output", lang), lang)
    if backward and input_file is None and (example or DEFAULT_EXAMPLE) in OWN_BACKWARD:
        from attention_ref.worked.gradients import load_grad_output
        from attention_ref.worked.registry import explain_example_backward

        G = load_grad_output(grad_output, lang) if grad_output is not None else None
        expl = explain_example_backward(example or DEFAULT_EXAMPLE, G, lang)
        emit(render(expl, fmt, precision, standalone=standalone, fit_width=fit_width))
        return
    if backward:  # the forward, then its gradients (bad files: InputError, one line, exit 2)
        from attention_ref.worked.gradients import backward_explanation

        expl = backward_explanation(example or DEFAULT_EXAMPLE, input_file, grad_output, lang)
        emit(render(expl, fmt, precision, standalone=standalone, fit_width=fit_width))
        return

    if input_file is None:  # computed once per version of the code, then read back
        from attention_ref.worked.cached import explain_example_cached

        expl = explain_example_cached(example or DEFAULT_EXAMPLE, lang)
        emit(render(expl, fmt, precision, standalone=standalone, fit_width=fit_width))
        return
    from attention_ref.inputs.attention_input import InputError, load_input_file

    try:
        inp = load_input_file(input_file, lang)
    except InputError as e:
        raise CLIError(str(e), e.lang) from None
    from attention_ref.worked.your_input import explain_input

    expl = explain_input(inp, lang)
    emit(render(expl, fmt, precision, standalone=standalone, fit_width=fit_width))
