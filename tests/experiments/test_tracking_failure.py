"""`tracking_failure`: what a refused or failed write means, read from the status MLflow wrote."""

from __future__ import annotations

from mlflow.exceptions import MlflowException

from attention_ref.experiments.runs import tracking_failure

ENDPOINT = "API request to endpoint /api/2.0/mlflow/runs/log-batch failed with error code"


def test_a_401_is_the_account():
    e = MlflowException(f"{ENDPOINT} 401 != 200. Response body: 'You are not authenticated.'")
    assert tracking_failure(e).startswith("the tracking server refused the account")


def test_a_403_is_a_refused_write():
    e = MlflowException(f"{ENDPOINT} 403 != 200. Response body: 'Permission denied'")
    assert tracking_failure(e).startswith("the tracking server refused a write")


def test_the_digits_401_elsewhere_are_not_the_account():
    """A run id, a port or a step may hold 401: a store that is away is not a refused account."""
    e = MlflowException(
        "API request to http://127.0.0.1:54013/api/2.0/mlflow/runs/get?run_id=a4011f0 failed "
        "with exception HTTPConnectionPool: Max retries exceeded (too many 503 error responses)"
    )
    said = tracking_failure(e)
    assert said.startswith("the tracking store failed (") and "refused" not in said
