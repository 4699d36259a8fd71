"""The ``attnref`` command line (Typer); see :mod:`cli.main`."""
