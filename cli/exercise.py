"""``attnref exercise``: a seed-000-like problem for a class, its statement, key and JSON; with
``--variant gqa|window|rope``, the same on today's attention."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.errors import CLIError

#: What ``--format`` accepts: the statement or key as a document, or the problem as JSON.
EXERCISE_FORMATS = ("markdown", "latex", "json", "rich")

#: Files ``--out DIR`` writes.
OUT_FILES = ("statement.md", "statement.tex", "key.md", "key.tex", "exercise.json", "answer.json")


def default_heads(variant: str, heads: int | None) -> int:
    """``--heads`` when given, else the variant's default: 4 query heads for ``gqa`` (two K/V
    heads to group), 1 head for ``rope`` (``d_k = 4``: two pairs, so that the pairs' mistakes
    can show), else the homework's 2."""
    if heads is not None:
        return heads
    return {"gqa": 4, "rope": 1}.get(variant, 2)


def exercise(
    seed: Annotated[int, typer.Option(help="Same seed and options, same exercise.")] = 0,
    tokens: Annotated[int, typer.Option("--tokens", help="Number of tokens n (1-8).")] = 3,
    d_model: Annotated[int, typer.Option("--d-model", help="Width of a token (1-8).")] = 4,
    heads: Annotated[
        int | None,
        typer.Option(
            "--heads",
            help="Heads h (query heads with --variant gqa); must divide d_model. Default 2; 4 "
            "with --variant gqa; 1 with --variant rope (d_k = 4: two pairs to turn).",
            show_default=False,
        ),
    ] = None,
    causal: Annotated[
        bool, typer.Option("--causal/--no-causal", help="Causal mask (as the homework).")
    ] = True,
    lang: Annotated[
        str, typer.Option(help="Language of the statement and key: en, pt (decimal commas).")
    ] = "en",
    backward: Annotated[
        bool, typer.Option("--backward", help="Add a gradient question (and its key).")
    ] = False,
    decimals: Annotated[
        int,
        typer.Option(
            "--decimals", help="Decimals the statement asks for (1-6); check grades by them."
        ),
    ] = 3,
    key: Annotated[
        bool, typer.Option("--key", help="Print the solution key (every step), not the statement.")
    ] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="markdown, latex (a whole document for pdflatex), rich, or json: the "
            "problem in the --input format (explain --input takes it; check takes the answer, "
            "answer.json of --out); a variant's problem is in its own format, with its "
            '"variant".',
        ),
    ] = "markdown",
    variant: Annotated[
        str,
        typer.Option(
            "--variant",
            help="mha: the homework's masked multi-head attention; gqa: h query heads sharing "
            "g K/V heads (--kv-heads); window: a causal sliding window of w keys (--window); "
            "rope: rotary positions on Q and K (RoFormer's pairs, base 10000; the statement "
            "gives the angles' cos and sin). The variants ask the forward pass.",
        ),
    ] = "mha",
    kv_heads: Annotated[
        int | None,
        typer.Option(
            "--kv-heads",
            help="gqa: K/V heads g, a divisor of h smaller than h. Default h/2 (2 of the default "
            "4; 1 with --heads 2, multi-query attention).",
            show_default=False,
        ),
    ] = None,
    window: Annotated[
        int | None,
        typer.Option(
            "--window",
            help="window: keys w a token sees, itself included, 1 <= w < tokens. Default 2 (1 "
            "with 2 tokens).",
            show_default=False,
        ),
    ] = None,
    precision: Annotated[
        int | None, typer.Option(help="Decimals of the key (default: --decimals).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=f"Write every document into this folder: {', '.join(OUT_FILES)} (the answer "
            "to fill in, every step null, for attnref check).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Draw an exercise like the homework's: integer X and weights, every step to compute.

    Prints the statement; --key the solution key; --format json the problem; --out all.
    --variant gqa, window or rope asks today's attention instead (attnref check grades it and
    names its typical mistakes).
    """
    if fmt not in EXERCISE_FORMATS:
        raise CLIError(f"unknown format {fmt!r}; choose one of: {', '.join(EXERCISE_FORMATS)}")
    if precision is not None and not 0 <= precision <= 15:
        raise CLIError(f"--precision must be between 0 and 15, got {precision}")
    from attention_ref.exercises.exercise import ExerciseOptions

    try:
        opt = ExerciseOptions(seed=seed, tokens=tokens, d_model=d_model,
                              heads=default_heads(variant, heads),
                              causal=causal, lang=lang, backward=backward,
                              decimals=decimals, variant=variant, kv_heads=kv_heads,
                              window=window)  # fmt: skip
    except ValueError as e:
        raise CLIError(str(e)) from None
    if out is not None and out.exists() and not out.is_dir():
        raise CLIError(f"--out {out} is a file, not a folder")
    from attention_ref.exercises.exercise import make_exercise
    from attention_ref.render import emit, render, to_json

    ex = make_exercise(opt)
    precision = opt.decimals if precision is None else precision
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        docs = {
            # the statement at the decimals it asks (RoPE's table of cosines and sines)
            "statement.md": render(ex.statement, "markdown", opt.decimals),
            "statement.tex": render(ex.statement, "latex", opt.decimals, standalone=True),
            "key.md": render(ex.key, "markdown", precision),
            "key.tex": render(ex.key, "latex", precision, standalone=True),
            "exercise.json": to_json(ex.problem),
            "answer.json": to_json(ex.answer),  # type: ignore[arg-type]
        }
        for name, text in docs.items():
            assert isinstance(text, str)
            (out / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        print(f"wrote {', '.join(OUT_FILES)} to {out}")
        return
    if fmt == "json":
        emit(to_json(ex.problem))
        return
    doc = ex.key if key else ex.statement
    shown = precision if key else opt.decimals  # --precision is the key's
    emit(render(doc, fmt, shown, standalone=fmt == "latex"))
