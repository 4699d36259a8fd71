"""The ``attnref`` command line (Typer); see `attention_ref.cli.main`."""
