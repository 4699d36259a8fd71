"""``attnref``: the command line of attnref (Typer).

Only option parsing, output and exit codes live here; the math is in :mod:`attention_ref`.
torch and mlflow are imported inside the commands that need them, so ``attnref --help`` starts
fast (a test checks that importing this module leaves both out of ``sys.modules``).

Errors in the user's input never show a traceback: one line on stderr, exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from attention_ref.examples import EXAMPLE_NAMES
from attention_ref.render import FORMATS

app = typer.Typer(
    name="attnref",
    help="A tested, step-by-step reference of masked multi-head attention.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_USAGE = 2


class CLIError(Exception):
    """A problem with the user's input: printed as one line, exit code 2."""


def _emit(result: str | list[Any]) -> None:
    """Print a rendered explanation: plain text as is, rich renderables through a console."""
    if isinstance(result, str):
        sys.stdout.write(result if result.endswith("\n") else result + "\n")
        return
    from rich.console import Console

    console = Console()
    for part in result:
        console.print(part)


def _check_format(fmt: str, precision: int | None) -> None:
    if fmt not in FORMATS:
        raise CLIError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if precision is not None and not 0 <= precision <= 15:
        raise CLIError(f"--precision must be between 0 and 15, got {precision}")


@app.command()
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
    _check_format(fmt, precision)
    if example is not None and input_file is not None:
        raise CLIError("give either --example or --input, not both")
    if input_file is None and example is not None and example not in EXAMPLE_NAMES:
        raise CLIError(f"unknown example {example!r}; choose one of: {', '.join(EXAMPLE_NAMES)}")
    from attention_ref.inputs import InputError, load_input_file

    if input_file is not None:
        try:
            inp = load_input_file(input_file)
        except InputError as e:
            raise CLIError(str(e)) from None
        from attention_ref.explain import explain_input
        from attention_ref.render import render

        _emit(render(explain_input(inp), fmt, precision))
        return
    from attention_ref.explain import explain_example
    from attention_ref.render import render

    _emit(render(explain_example(example or "life-is-awesome"), fmt, precision))


def _parse_heads(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            out.append(int(part))
        except ValueError:
            raise CLIError(f"--heads must be integers separated by commas, got {text!r}") from None
    if not out or len(out) > 64:
        raise CLIError(f"--heads must list between 1 and 64 head counts, got {len(out)}")
    return out


@app.command()
def params(
    d_model: Annotated[int, typer.Option("--d-model", help="Embedding width d_model.")] = 128,
    heads: Annotated[
        str, typer.Option("--heads", help="Head counts to compare, comma-separated.")
    ] = "1,2,4,8",
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="Output format: rich, markdown, json.")
    ] = "rich",
) -> None:
    """Parameter counts of one attention layer and of the default model for several h (seed 003).

    Each head has W_Q⁽ⁱ⁾, W_K⁽ⁱ⁾, W_V⁽ⁱ⁾ of d_model × d_k with d_k = d_model/h, and W_O is
    h·d_v × d_model: the total, 4·d_model² (+ biases), does not depend on h.
    """
    from attention_ref.params import attention_params, model_params

    if fmt not in ("rich", "markdown", "json"):
        raise CLIError(f"unknown format {fmt!r}; choose one of: rich, markdown, json")
    hs = _parse_heads(heads)
    try:
        layers = [attention_params(d_model, h) for h in hs]
        models = [model_params(n_embd=d_model, n_head=h) for h in hs]
    except ValueError as e:
        raise CLIError(str(e)) from None
    rows = [
        {
            "h": p.h,
            "d_k": p.d_k,
            "W_Q^(i), W_K^(i), W_V^(i)": f"{p.h} × ({p.d_model}×{p.d_k})",
            "W_O": f"({p.h * p.d_k})×{p.d_model}",
            "per head": p.per_head,
            "attention layer": p.total,
            "model": m,
        }
        for p, m in zip(layers, models, strict=True)
    ]
    same = len({r["attention layer"] for r in rows}) == 1 and len({r["model"] for r in rows}) == 1
    verdict = (
        "equal for every h: more heads means narrower heads, not more weights"
        if same
        else "NOT equal across h"
    )
    if fmt == "json":
        import json

        doc = {"d_model": d_model, "rows": rows, "equal": same}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return
    cols = list(rows[0])
    if fmt == "markdown":
        lines = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
        lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
        lines += ["", f"d_model = {d_model}; parameter counts {verdict}."]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"One attention layer and the default model (d_model = {d_model}, biases included)"
    )
    for c in cols:
        table.add_column(c, justify="right")
    for r in rows:
        table.add_row(
            *(
                f"{r[c]:,}" if isinstance(r[c], int) and c not in ("h", "d_k") else str(r[c])
                for c in cols
            )
        )
    console = Console()
    console.print(table)
    console.print(f"Parameter counts {verdict}.")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``attnref`` console script; returns the exit code.

    Usage errors (Typer's and ours) become one line on stderr with exit code 2; package
    ``ValueError``/``TypeError`` from bad input are reported the same way.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="attnref", standalone_mode=False)
    except CLIError as e:
        print(f"attnref: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except typer.TyperException as e:
        print(f"attnref: error: {e.format_message()}", file=sys.stderr)
        return int(getattr(e, "exit_code", EXIT_USAGE)) or EXIT_USAGE
    except typer.Exit as e:
        return e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("attnref: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError) as e:
        print(f"attnref: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script wrapper: ``sys.exit(main())``."""
    sys.exit(main())


if __name__ == "__main__":
    run()
