"""``attnref explain``: a worked example (or your own numbers) step by step, in any format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attention_ref.render import FORMATS
from attention_ref.worked.registry import DEFAULT_EXAMPLE, EXAMPLE_NAMES, check_example
from cli.errors import CLIError


def _check_options(
    example: str | None, input_file: Path | None, fmt: str, precision: int | None
) -> None:
    """One ``CLIError`` line for the first bad option, before anything heavy is imported."""
    if fmt not in FORMATS:
        raise CLIError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if precision is not None and not 0 <= precision <= 15:
        raise CLIError(f"--precision must be between 0 and 15, got {precision}")
    if example is not None and input_file is not None:
        raise CLIError("give either --example or --input, not both")
    if input_file is None and example is not None:
        try:
            check_example(example)
        except ValueError as e:
            raise CLIError(str(e)) from None


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
            help='Your own numbers, JSON: {"tokens", "X", "heads": [{"W_Q","W_K","W_V"}...], '
            '"W_O", "causal"}.',
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
) -> None:
    """Compute masked multi-head attention step by step and print every matrix.

    Without options it shows the homework's example, life-is-awesome.
    """
    _check_options(example, input_file, fmt, precision)
    from attention_ref.render import emit, render

    if input_file is None:
        from attention_ref.worked.registry import explain_example

        emit(render(explain_example(example or DEFAULT_EXAMPLE), fmt, precision))
        return
    from attention_ref.worked.inputs import InputError, load_input_file

    try:
        inp = load_input_file(input_file)
    except InputError as e:
        raise CLIError(str(e)) from None
    from attention_ref.worked.your_input import explain_input

    emit(render(explain_input(inp), fmt, precision))
