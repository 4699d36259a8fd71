"""The ``attnref`` command line (Typer); see `cli.main`."""
