"""A store of a test module's own, for the runs its tests share (a module-scoped fixture)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from attention_ref.experiments.store import connect


@contextmanager
def module_store(migrated_store: Path, root: Path) -> Iterator[tuple[str, pytest.MonkeyPatch]]:
    """A copy of the migrated store in ``root``: the working directory and
    ``MLFLOW_TRACKING_URI`` point at it and it is connected, until the block ends (then all is
    undone). Yields its URI and the monkeypatch, for what else the module sets."""
    shutil.copy(migrated_store, root / "mlflow.db")
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(root)
        uri = f"sqlite:///{root / 'mlflow.db'}"
        mp.setenv("MLFLOW_TRACKING_URI", uri)
        connect(uri)
        yield uri, mp
    finally:
        mp.undo()
