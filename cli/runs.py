"""``attnref runs``: the runs of a store, the latest first (a rich table, or JSON).

A local sqlite store is read without importing MLflow (`attention_ref.experiments.local_store`,
the same rows as MLflow's client gives); a server, or a store that reader does not know, goes
through MLflow (`attention_ref.experiments.results.list_runs`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.options import (
    DEFAULT_EXPERIMENT,
    Experiment,
    TrackingUri,
    connect_existing_store,
    existing_store_uri,
)
from attention_ref.render.printable import printable

if TYPE_CHECKING:
    from attention_ref.experiments.local_store import RunRow


class RunsFormat(StrEnum):
    """How ``attnref runs`` prints."""

    RICH = "rich"
    JSON = "json"


def _table(rows: list[RunRow], uri: str, title: str, every_experiment: bool) -> None:
    """The rows as a rich table; with ``--all`` (or rows of several experiments) each row
    names its experiment, beside the run's name: two experiments' runs can look alike. The
    run id (what ``--resume`` and ``sample --run-id`` take), status, steps and best loss are
    never cut (`attention_ref.cli.tables`). Where the terminal is too narrow for the name and the
    attention beside the 32-character id (80 columns), they stand in one cell, one above the other,
    above the id: an ablation's arms are told apart at any width."""
    from attention_ref.cli.tables import Column, console, fit, print_table, say

    show_experiment = every_experiment or len({r.experiment for r in rows}) > 1
    cells, stacked = [], []
    for r in rows:
        heads = "1 head" if r.heads == 1 else f"{r.heads} heads"
        attention = f"{r.attention} ({heads})" if r.heads else r.attention
        best = "" if r.best_val_loss is None else f"{r.best_val_loss:.4f}"
        where = [r.experiment] if show_experiment else []
        cells.append([r.run_id, r.name, *where, attention, r.status, r.steps, best, r.started])
        run = "\n".join([r.name, *where, attention, r.run_id])
        stacked.append([run, r.status, r.steps, best, r.started])
    columns = [Column("run id", keep=True), Column("name", rank=3)]
    columns += [Column("experiment", rank=4)] if show_experiment else []
    columns += [
        Column("attention", rank=2),
        Column("status", keep=True),
        Column("steps", keep=True, justify="right"),
        Column("best val", keep=True, justify="right"),
        Column("started", rank=1),
    ]
    out = console()
    shown = {columns[i].name for i in fit(columns, cells, out.width)}
    if not {"name", "attention"} <= shown:
        head = ["name", *(["experiment"] if show_experiment else []), "attention", "run id"]
        columns = [
            Column(" / ".join(head), keep=True),
            Column("status", keep=True),
            Column("steps", keep=True, justify="right"),
            Column("best val", keep=True, justify="right"),
            Column("started", rank=1),
        ]
        cells = stacked
    every = "attnref runs --format json has every field"
    print_table(out, title, columns, cells, elsewhere=every, lines=cells is stacked)
    say(out, f"store: {uri}")


def _local_rows(uri: str, experiment: str | None) -> list[RunRow] | None:
    """The rows, read from a local sqlite store without MLflow; ``None``: ask MLflow."""
    from attention_ref.experiments.local_store import LocalStore, LocalStoreUnavailableError
    from attention_ref.experiments.store import TrackingError

    store = LocalStore.open(uri)
    if store is None:
        return None
    try:
        with store:
            return store.list_runs(experiment)
    except LocalStoreUnavailableError:
        return None
    except TrackingError as e:
        raise CLIError(str(e)) from None


def runs(
    experiment: Experiment = None,
    all_experiments: Annotated[
        bool, typer.Option("--all", help="The runs of every experiment of the store.")
    ] = False,
    fmt: Annotated[
        RunsFormat, typer.Option("--format", help="rich (a table) or json.", metavar="FORMAT")
    ] = RunsFormat.RICH,
    tracking_uri: TrackingUri = None,
) -> None:
    """List the runs of an experiment, the latest first: id, name, attention, status, steps,
    best validation loss, start time. Reads the store; never creates one."""
    if all_experiments and experiment is not None:
        raise CLIError("--all lists every experiment; leave out --experiment")
    name = None if all_experiments else (experiment or DEFAULT_EXPERIMENT)
    uri = existing_store_uri(tracking_uri)
    rows = _local_rows(uri, name)
    if rows is None:
        uri = connect_existing_store(tracking_uri)
        from attention_ref.experiments.results import list_runs
        from attention_ref.experiments.store import TrackingError

        try:
            rows = list_runs(name)
        except TrackingError as e:
            raise CLIError(str(e)) from None
    if fmt is RunsFormat.JSON:
        doc = {"tracking_uri": uri, "experiment": name, "runs": [asdict(r) for r in rows]}
        sys.stdout.write(printable(json.dumps(doc, indent=1)) + "\n")  # DEL as \u007f
        return
    title = "runs of every experiment" if name is None else f"runs of experiment {name!r}"
    if not rows:
        print(printable(f"no runs in {title.removeprefix('runs of ')} ({uri})"))
        return
    _table(rows, uri, title, every_experiment=name is None)
