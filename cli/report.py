"""``attnref report``: Q03 answered in markdown from the measured runs (and ``--export``);
with a heads sweep in the experiment, its section too
(`attention_ref.experiments.heads_report`). In the language ``--lang`` chooses (else
``$ATTNREF_LANG``, else the locale's: `attention_ref.cli.language.chosen`): the report and the
command's own lines; the store's errors keep their English words after the prefix of it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.language import chosen, option_help
from attention_ref.cli.options import (
    DEFAULT_EXPERIMENT,
    DataPath,
    Experiment,
    TrackingUri,
    connect_existing_store,
    load_data,
)
from attention_ref.cli.words import said
from attention_ref.render import LANGS
from attention_ref.render.printable import printable


def report(
    experiment: Experiment = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the markdown here. \\[default: stdout]",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Also copy the figures, samples and table the book shows, and the "
            "attention explorer's model (docs/results) into this folder. \\[default: no export]",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    data: DataPath = None,
    tracking_uri: TrackingUri = None,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang",
            help=option_help(
                f"The language of the report and its lines: {', '.join(LANGS)} (Portuguese "
                "writes decimal commas; the numbers are the same)."
            ),
            show_default=False,
        ),
    ] = None,
) -> None:
    """Q03 answered from the measured runs (markdown): the table, the bigram baseline, the why.

    At a terminal the markdown is shown fitted to its width; to a pipe or --output, as it is."""
    lang = chosen(lang)
    from attention_ref.cli.progress import make_console

    console = make_console()
    name = experiment or DEFAULT_EXPERIMENT
    # the store and its runs first: a folder with no store, or no runs, is one line before the
    # data is looked for (or downloaded)
    connect_existing_store(tracking_uri, lang)  # read only: never create a store or an experiment
    from attention_ref.experiments.export import export_results
    from attention_ref.experiments.report import best_column, no_ablation_report
    from attention_ref.experiments.results import (
        NoArmsError,
        find_arms,
        heads_sweep_report,
        q03_report,
    )
    from attention_ref.experiments.store import TrackingError

    try:
        heads = heads_sweep_report(name, lang)
        try:
            arms = find_arms(name, lang)
        except NoArmsError:
            if heads is None or export is not None:
                raise
            arms = None
        dataset = load_data(data, console) if arms is not None or export is not None else None
        if arms is not None and dataset is not None:
            text = q03_report(name, dataset, arms, lang)
        else:
            text = no_ablation_report(name, lang)  # the heads sweep is all there is: say so
        if heads is not None:
            text = text.rstrip("\n") + "\n\n" + heads
        if export is not None and dataset is not None:
            written = export_results(name, dataset, export)
            console.print(said("report_exported", lang, n=len(written), dest=export))
    except TrackingError as e:  # what is missing said in ``lang`` (the store's other errors:
        # English words, after the prefix in ``lang``)
        raise CLIError(str(e), lang) from None
    except OSError as e:
        why = e.strerror or e
        raise CLIError(said("report_cannot_write", lang, path=export, why=why), lang) from None
    if output is None:
        if console.is_terminal:  # read at a terminal: fitted to its width, nothing cut short
            from attention_ref.cli.tables import print_markdown

            print_markdown(
                console,
                text,
                elsewhere=said("report_every_column", lang),
                lang=lang,
                kept=best_column(lang),
            )
        else:  # a pipe or a file: the markdown itself, whole and copy-pasteable
            sys.stdout.write(printable(text))
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        why = e.strerror or e
        raise CLIError(said("report_cannot_write", lang, path=output, why=why), lang) from None
    console.print(said("report_wrote", lang, path=output))
