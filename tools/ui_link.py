"""The link ``make ui`` prints: the MLflow UI's page of the runs, not its GenAI home.

MLflow 3's UI opens on its GenAI home (and an experiment on its traces) unless a link asks for
the runs: ``#/experiments/<id>?workflowType=machine_learning`` (the UI reads
``workflowType`` from the link, else from the browser's storage, default GenAI; there is no
server setting). The experiment's id is read from the sqlite store itself (no MLflow import);
without the store or the experiment, the experiments list in the same view.

    python tools/ui_link.py [STORE.db] [BASE_URL] [EXPERIMENT]
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from attention_ref.experiments.names import UI_RUNS_QUERY, ui_experiment_url  # noqa: E402


def runs_page(
    store: Path, base: str = "http://127.0.0.1:5000", experiment: str = "shakespeare"
) -> str:
    """The UI's page of ``experiment``'s runs in the sqlite file ``store``."""
    row = None
    if store.is_file():
        try:
            with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
                row = db.execute(
                    "SELECT experiment_id FROM experiments WHERE name = ? "
                    "AND lifecycle_stage = 'active'",
                    (experiment,),
                ).fetchone()
        except sqlite3.Error:
            row = None
    if row is None:
        return f"{base.rstrip('/')}/#/experiments?{UI_RUNS_QUERY}"
    return ui_experiment_url(base, str(row[0]))


def main(argv: list[str]) -> int:
    store = Path(argv[0]) if argv else Path("mlflow.db")
    base = argv[1] if len(argv) > 1 else "http://127.0.0.1:5000"
    experiment = argv[2] if len(argv) > 2 else "shakespeare"
    print(runs_page(store, base, experiment))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
