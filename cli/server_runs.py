"""``attnref server runs``: the class's runs with their owners (the accounts that made them)."""

from __future__ import annotations

from attention_ref.cli.errors import CLIError
from attention_ref.cli.server import (
    AdminPasswordFile,
    ClassExperiment,
    TrackingUri,
    server_app,
    server_url,
    teacher_client,
)


@server_app.command("runs")
def runs(
    tracking_uri: TrackingUri = None,
    experiment: ClassExperiment = "shakespeare",
    admin_password_file: AdminPasswordFile = None,
) -> None:
    """The class's runs with their owners (the account that created each), newest first.

    Reads as $MLFLOW_TRACKING_USERNAME / $MLFLOW_TRACKING_PASSWORD if set, else as admin.
    """
    from attention_ref.classroom.connection.class_client import HomeworkError, class_runs
    from attention_ref.classroom.connection.errors import ServerError
    from attention_ref.cli.tables import Column, console, print_table

    url = server_url(tracking_uri)
    try:
        found = class_runs(teacher_client(url, admin_password_file, reader=True), experiment)
    except (ServerError, HomeworkError) as e:
        raise CLIError(str(e)) from None
    # a run's name is its student's: anything, as long as they like (printed as written, over
    # lines where it must)
    columns = [
        Column("run id", keep=True),
        Column("name", keep=True, wrap=True),
        Column("owner", keep=True),
        Column("status", keep=True),
        Column("started", rank=1),
        Column("best val", keep=True, justify="right"),
    ]
    rows = [
        [
            r.run_id,
            r.name,
            r.owner,
            r.status,
            r.started,
            "" if r.best_val_loss is None else f"{r.best_val_loss:.4f}",
        ]
        for r in found
    ]
    print_table(
        console(),
        f"{experiment} on {url}: {len(found)} runs",
        columns,
        rows,
        elsewhere="a wider terminal shows them",
    )
