"""``attnref report``: Q03 answered in markdown from the measured runs (and ``--export``);
with a heads sweep in the experiment, its section too
(`attention_ref.experiments.heads_report`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.options import (
    DEFAULT_EXPERIMENT,
    DataPath,
    Experiment,
    TrackingUri,
    connect_existing_store,
    load_data,
)


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
) -> None:
    """Q03 answered from the measured runs (markdown): the table, the bigram baseline, the why.

    At a terminal the markdown is shown fitted to its width; to a pipe or --output, as it is."""
    from attention_ref.cli.progress import make_console

    console = make_console()
    name = experiment or DEFAULT_EXPERIMENT
    # the store and its runs first: a folder with no store, or no runs, is one line before the
    # data is looked for (or downloaded)
    connect_existing_store(tracking_uri)  # read only: never create a store or an experiment
    from attention_ref.experiments.export import export_results
    from attention_ref.experiments.report import no_ablation_report
    from attention_ref.experiments.results import (
        NoArmsError,
        find_arms,
        heads_sweep_report,
        q03_report,
    )
    from attention_ref.experiments.store import TrackingError

    try:
        heads = heads_sweep_report(name)
        try:
            arms = find_arms(name)
        except NoArmsError:
            if heads is None or export is not None:
                raise
            arms = None
        dataset = load_data(data, console) if arms is not None or export is not None else None
        if arms is not None and dataset is not None:
            text = q03_report(name, dataset, arms)
        else:
            text = no_ablation_report(name)  # the heads sweep is all there is: say so
        if heads is not None:
            text = text.rstrip("\n") + "\n\n" + heads
        if export is not None and dataset is not None:
            written = export_results(name, dataset, export)
            console.print(f"exported {len(written)} files to {export}")
    except TrackingError as e:
        raise CLIError(str(e)) from None
    except OSError as e:
        raise CLIError(f"cannot write {export}: {e.strerror or e}") from None
    if output is None:
        if console.is_terminal:  # read at a terminal: fitted to its width, nothing cut short
            from attention_ref.cli.tables import print_markdown

            print_markdown(console, text, elsewhere="attnref report -o FILE has every column")
        else:  # a pipe or a file: the markdown itself, whole and copy-pasteable
            sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise CLIError(f"cannot write {output}: {e.strerror or e}") from None
    console.print(f"wrote {output}")
