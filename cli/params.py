"""``attnref params``: parameter counts for several head counts (seed 003), and with
``--kv-heads`` the weights and KV-cache bytes of MHA, GQA and MQA.

Nothing here, nor in what it calls, imports torch: the counts are arithmetic on shapes.
"""

from __future__ import annotations

from typing import Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.render import TABLE_FORMATS
from attention_ref.worked.kv_heads import KV_PRESETS
from attention_ref.worked.roberta_heads import ROBERTA_PRESETS

#: every ``--preset``, in the order the help and the errors list them
PRESETS = (*ROBERTA_PRESETS, *KV_PRESETS)
#: the defaults of the KV-cache table: the homework's Q02 model (2 layers, 128 positions)
KV_DEFAULTS = {"d_model": 128, "layers": 2, "context": 128, "dtype": "float32"}


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
        str | None,
        typer.Option(
            "--heads",
            help="Head counts to compare, comma-separated (default 1,2,4,8); with --kv-heads, "
            "the one number h of query heads.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help=f"Output format: {', '.join(TABLE_FORMATS)}."),
    ] = "rich",
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Count a published model instead: roberta-base (its published configuration), "
            "seed-003 (RobertaConfig() as seed 003 ran it), or llama-3-8b (a GQA model: "
            "MHA, GQA and MQA at its sizes, with its KV cache).",
        ),
    ] = None,
    kv_heads: Annotated[
        int | None,
        typer.Option(
            "--kv-heads",
            help="g K/V heads (g divides h): compare the weights and the KV cache of MHA "
            "(g = h), this GQA and MQA (g = 1).",
            show_default=False,
        ),
    ] = None,
    head_dim: Annotated[
        int | None,
        typer.Option(
            "--head-dim",
            help="With --kv-heads: the head width d_k (default d_model / h).",
            show_default=False,
        ),
    ] = None,
    layers: Annotated[
        int | None,
        typer.Option(
            "--layers",
            help="With --kv-heads: layers in the KV cache (default 2).",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        int | None,
        typer.Option(
            "--context",
            help="With --kv-heads or a GQA preset: tokens in the cache "
            "(default 128, a preset's: its context).",
            show_default=False,
        ),
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype",
            help="With --kv-heads or a GQA preset: the numbers' type, "
            "float32, bfloat16, float16, float64, float8 (default float32).",
            show_default=False,
        ),
    ] = None,
    bias: Annotated[
        bool | None,
        typer.Option(
            "--bias/--no-bias",
            help="With --kv-heads: count the biases (default: yes).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Parameter counts of one attention layer and of the default model for several h (seed 003).

    Each head has W_Q⁽ⁱ⁾, W_K⁽ⁱ⁾, W_V⁽ⁱ⁾ of d_model × d_k with d_k = d_model/h, and W_O is
    h·d_v × d_model: the total, 4·d_model² (+ biases), does not depend on h.

    With --preset roberta-base or seed-003, the model column counts RobertaForMaskedLM (tied
    decoder weight once, no pooler). With --kv-heads G (or --preset llama-3-8b): MHA, GQA and
    MQA side by side, the weights of one layer and the KV cache's bytes (2·layers·g·d_k
    numbers per token), and the sentence their numbers support.
    """
    if fmt not in TABLE_FORMATS:
        raise CLIError(f"unknown format {fmt!r}; choose one of: {', '.join(TABLE_FORMATS)}")
    if preset is not None and preset not in PRESETS:
        raise CLIError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    kv_options = {
        "--head-dim": head_dim,
        "--layers": layers,
        "--context": context,
        "--dtype": dtype,
        "--bias/--no-bias": bias,
    }
    from attention_ref.render import emit, render_table

    if kv_heads is None and preset not in KV_PRESETS:
        given = [name for name, value in kv_options.items() if value is not None]
        if given:
            raise CLIError(
                f"{given[0]} is an option of the KV-cache table: add --kv-heads G "
                "(or --preset llama-3-8b)"
            )
        hs = _parse_heads("1,2,4,8" if heads is None else heads)
        if preset is not None and d_model is not None:
            raise CLIError(f"--preset {preset} sets d_model itself; leave out --d-model")
        from attention_ref.worked.roberta_heads import params_table, preset_table

        try:
            if preset is None:
                table = params_table(128 if d_model is None else d_model, hs)
            else:
                table = preset_table(preset, hs)
        except ValueError as e:
            raise CLIError(str(e)) from None
        emit(render_table(table, fmt))
        return

    from attention_ref.worked.kv_heads import kv_preset_table, kv_table

    if preset in ROBERTA_PRESETS:
        raise CLIError(
            f"--kv-heads does not apply to --preset {preset}: an encoder keeps no KV cache"
        )
    try:
        if preset is not None:
            fixed = {
                "--d-model": d_model,
                "--heads": heads,
                "--kv-heads": kv_heads,
                "--head-dim": head_dim,
                "--layers": layers,
                "--bias/--no-bias": bias,
            }
            given = [name for name, value in fixed.items() if value is not None]
            if given:
                raise CLIError(f"--preset {preset} sets {given[0]} itself; leave it out")
            table = kv_preset_table(preset, context=context, dtype=dtype)
        else:
            assert kv_heads is not None
            hs = _parse_heads(heads) if heads is not None else []
            if len(hs) != 1:
                got = "none" if heads is None else repr(heads)
                raise CLIError(
                    "--kv-heads compares MHA, GQA and MQA for one number of query heads: give "
                    f"one --heads value h, got {got}"
                )
            table = kv_table(
                KV_DEFAULTS["d_model"] if d_model is None else d_model,
                hs[0],
                kv_heads,
                d_k=head_dim,
                layers=KV_DEFAULTS["layers"] if layers is None else layers,
                context=KV_DEFAULTS["context"] if context is None else context,
                dtype=KV_DEFAULTS["dtype"] if dtype is None else dtype,
                bias=True if bias is None else bias,
            )
    except ValueError as e:
        raise CLIError(str(e)) from None
    emit(render_table(table, fmt))
