"""Every route MLflow's class server serves, read from MLflow itself.

``mlflow server --app-name basic-auth`` (uvicorn, MLflow's default) serves a FastAPI app: a
few native routers (OpenTelemetry traces, jobs, the AI gateway, the assistant, artifact
upload/download, MCP servers, server info) in front of MLflow's Flask app, to which the
basic-auth app adds its accounts, roles and permissions. `served_routes` builds that app the
way the server does (``mlflow.server.auth.create_app`` under uvicorn) in a child process with
a throwaway sqlite store, and lists each route once per method: Flask's ``url_map`` and the
FastAPI app's own routes (the mounted Flask app is not one of them).

The tests compare this list with `attention_ref.classroom.gate.access.TABLE`: a route MLflow adds
in an upgrade has no rule, and the test that walks the list fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from attention_ref.classroom.gate.access import route_key

#: what the child process runs: build the app as ``mlflow server`` does, print its routes
_LIST_ROUTES = r"""
import json, sys
from mlflow.server import app as flask_app
from mlflow.server.auth import create_app
from starlette.routing import Mount

fastapi_app = create_app(flask_app)
routes = []
for rule in flask_app.url_map.iter_rules():
    for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
        routes.append(["flask", method, rule.rule])
for route in fastapi_app.routes:
    if isinstance(route, Mount):
        continue  # the Flask app itself
    # FastAPI >= 0.120 wraps included routers; older ones list the routes themselves
    contexts = getattr(route, "effective_route_contexts", None)
    found = contexts() if contexts is not None else [route]
    for r in found:
        for method in sorted(set(r.methods or ()) - {"HEAD", "OPTIONS"}):
            routes.append(["fastapi", method, r.path])
json.dump(routes, sys.stdout)
"""


@dataclass(frozen=True, order=True)
class Route:
    """One route MLflow serves, for one method: where (``flask`` or ``fastapi``) and its rule."""

    method: str
    template: str
    app: str

    @property
    def key(self) -> str:
        """Its key in the access table (`attention_ref.classroom.gate.access.route_key`)."""
        return route_key(self.method, self.template)


def served_routes() -> list[Route]:
    """MLflow's routes under the class server's configuration, sorted; read from MLflow."""
    with tempfile.TemporaryDirectory(prefix="attnref-routes-") as tmp:
        root = Path(tmp)
        config = root / "basic_auth.ini"
        config.write_text(
            "[mlflow]\ndefault_permission = NO_PERMISSIONS\n"
            f"database_uri = sqlite:///{root / 'auth.db'}\nadmin_username = admin\n"
            "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n",
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
        env |= {
            "MLFLOW_AUTH_CONFIG_PATH": str(config),
            "MLFLOW_AUTH_ADMIN_PASSWORD": "routes-only-" + os.urandom(8).hex(),
            "MLFLOW_FLASK_SERVER_SECRET_KEY": os.urandom(16).hex(),
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
            "_MLFLOW_SGI_NAME": "uvicorn",  # as `mlflow server` runs it: the FastAPI app
            "_MLFLOW_SERVER_FILE_STORE": f"sqlite:///{root / 'mlflow.db'}",
            "_MLFLOW_SERVER_ARTIFACT_DESTINATION": str(root / "artifacts"),
        }
        out = subprocess.run(
            [sys.executable, "-c", _LIST_ROUTES],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
            timeout=300,
        )
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"could not list MLflow's routes: {last}")
    return sorted({Route(m, t, a) for a, m, t in json.loads(out.stdout)})
