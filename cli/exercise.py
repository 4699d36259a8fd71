"""``attnref exercise``: a seed-000-like problem for a class, its statement, key and JSON; with
``--variant gqa|window|rope`` (or several joined by ``+``), the same on today's attention. The
shape's options are `attention_ref.cli.exercise_shape`'s, shared with ``attnref server assign``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attention_ref.cli import exercise_shape as opts
from attention_ref.cli.errors import CLIError
from attention_ref.cli.language import chosen, option_help
from attention_ref.cli.words import said
from attention_ref.exercises.answer_words import ANSWER_FILE
from attention_ref.exercises.features import PLAIN

#: What ``--format`` accepts: the statement or key as a document, or the problem as JSON.
EXERCISE_FORMATS = ("markdown", "latex", "json", "rich")

#: Files ``--out DIR`` writes.
OUT_FILES = ("statement.md", "statement.tex", "key.md", "key.tex", "exercise.json", ANSWER_FILE)


def exercise(
    seed: Annotated[int, typer.Option(help="Same seed and options, same exercise.")] = 0,
    tokens: opts.Tokens = 3,
    d_model: opts.DModel = None,
    heads: opts.Heads = None,
    causal: opts.Causal = True,
    lang: Annotated[
        str | None,
        typer.Option(
            help=option_help("Language of the statement, key and errors: en, pt (decimal commas)."),
            show_default=False,
        ),
    ] = None,
    backward: Annotated[
        bool, typer.Option("--backward", help="Add a gradient question (and its key).")
    ] = False,
    decimals: opts.Decimals = 3,
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
    variant: opts.Variant = PLAIN,
    kv_heads: opts.KvHeads = None,
    window: opts.Window = None,
    pos: opts.Pos = "none",
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
    --variant asks today's attention instead, one feature (listed under --variant) or
    several joined by + (or --kv-heads, --window, --pos rope): attnref check grades it and
    names each feature's typical mistakes.
    """
    lang = chosen(lang)
    if fmt not in EXERCISE_FORMATS:
        choices = ", ".join(EXERCISE_FORMATS)
        raise CLIError(said("bad_format", lang, got=fmt, choices=choices), lang)
    if precision is not None and not 0 <= precision <= 15:
        raise CLIError(said("precision", lang, got=precision), lang)
    from attention_ref.exercises.exercise import ExerciseOptions, OptionError

    variant, heads, d_model = opts.shape(variant, pos, heads, d_model, lang)
    try:
        opt = ExerciseOptions(
            seed=seed,
            tokens=tokens,
            d_model=d_model,
            heads=heads,
            causal=causal,
            lang=lang,
            backward=backward,
            decimals=decimals,
            variant=variant,
            kv_heads=kv_heads,
            window=window,
        )
    except OptionError as e:
        raise CLIError(e.words(lang), lang) from None
    except ValueError as e:
        raise CLIError(str(e), lang) from None
    if out is not None and out.exists() and not out.is_dir():
        raise CLIError(said("out_is_file", lang, out=out), lang)
    from attention_ref.cli.tables import echo, terminal_columns, wrap_markdown
    from attention_ref.exercises.exercise import make_exercise
    from attention_ref.render import emit, render, to_json

    answer = out / ANSWER_FILE if out is not None else Path(ANSWER_FILE)
    ex = make_exercise(opt, str(answer))
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
            ANSWER_FILE: to_json(ex.answer),  # type: ignore[arg-type]
        }
        for name, text in docs.items():
            assert isinstance(text, str)
            (out / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        echo(said("wrote", lang, files=", ".join(OUT_FILES), out=out))  # at its width
        echo(said("check_next", lang, answer=answer))  # the command on a line of its own
        return
    if fmt == "json":
        emit(to_json(ex.problem))
        return
    doc = ex.key if key else ex.statement
    shown = precision if key else opt.decimals  # --precision is the key's
    text = render(doc, fmt, shown, standalone=fmt == "latex")
    columns = terminal_columns()
    if fmt == "markdown" and columns is not None and isinstance(text, str):
        text = wrap_markdown(text, columns)  # a terminal: paragraphs at its width
    emit(text)
