"""``attnref params``: parameter counts for several head counts (seed 003)."""

from __future__ import annotations

from typing import Annotated

import typer

from attention_ref.render import TABLE_FORMATS
from cli.errors import CLIError


def _parse_heads(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]``; a ``CLIError`` line for anything else."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            out.append(int(part))
        except ValueError:
            raise CLIError(f"--heads must be integers separated by commas, got {text!r}") from None
    if not out or len(out) > 64:
        raise CLIError(f"--heads must list between 1 and 64 head counts, got {len(out)}")
    return out


def params(
    d_model: Annotated[
        int | None,
        typer.Option(
            "--d-model", help="Embedding width d_model (default 128; a preset sets its own)."
        ),
    ] = None,
    heads: Annotated[
        str, typer.Option("--heads", help="Head counts to compare, comma-separated.")
    ] = "1,2,4,8",
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help=f"Output format: {', '.join(TABLE_FORMATS)}."),
    ] = "rich",
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Count a whole model instead of the default one: roberta-base (its published "
            "configuration) or seed-003 (RobertaConfig() as seed 003 ran it).",
        ),
    ] = None,
) -> None:
    """Parameter counts of one attention layer and of the default model for several h (seed 003).

    Each head has W_Q⁽ⁱ⁾, W_K⁽ⁱ⁾, W_V⁽ⁱ⁾ of d_model × d_k with d_k = d_model/h, and W_O is
    h·d_v × d_model: the total, 4·d_model² (+ biases), does not depend on h.

    With --preset, the model column counts RobertaForMaskedLM (tied decoder weight once, no pooler).
    """
    if fmt not in TABLE_FORMATS:
        raise CLIError(f"unknown format {fmt!r}; choose one of: {', '.join(TABLE_FORMATS)}")
    hs = _parse_heads(heads)
    if preset is not None and d_model is not None:
        raise CLIError(f"--preset {preset} sets d_model itself; leave out --d-model")
    from attention_ref.render import emit, render_table
    from attention_ref.worked.roberta_heads import params_table, preset_table

    try:
        if preset is None:
            table = params_table(128 if d_model is None else d_model, hs)
        else:
            table = preset_table(preset, hs)
    except ValueError as e:
        raise CLIError(str(e)) from None
    emit(render_table(table, fmt))
