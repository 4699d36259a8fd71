"""Shared test settings: hypothesis profiles and small helpers."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", max_examples=150, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def shakespeare_path():
    """Tiny Shakespeare from ``$ATTNREF_DATA`` (the Makefile points it at ../shared)."""
    from pathlib import Path

    value = os.environ.get("ATTNREF_DATA")
    if not value or not Path(value).is_file():
        pytest.fail("set ATTNREF_DATA to Tiny Shakespeare's input.txt (make test does)")
    return Path(value)


@pytest.fixture(scope="session")
def shakespeare(shakespeare_path):
    """The loaded, verified data set (loaded once per session)."""
    from attention_ref.data import load

    return load(shakespeare_path)
