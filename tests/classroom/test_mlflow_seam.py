"""The seam to MLflow's private names (`attention_ref.classroom.gate.mlflow_seam`): its contract.

Three things hold the class's gate to the MLflow it was tested with:

* no module of the package but the seam touches an underscored name of MLflow's (read from
  each module's syntax tree: an import of ``_x`` from ``mlflow…``, or ``m._x`` on a name bound
  to an MLflow module);
* every private name the seam uses is listed in `PRIVATE_NAMES`, and each exists in MLflow as
  installed;
* each function of the seam does what its docstring says, against MLflow as installed, in a
  process set up as ``mlflow server`` sets up its workers (a sqlite store, basic auth's
  configuration, the artifact destination).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import attention_ref
from attention_ref.classroom.gate import mlflow_seam

PACKAGE = Path(attention_ref.__file__).resolve().parent
SEAM = Path(mlflow_seam.__file__).resolve()


def private_uses(source: str) -> list[str]:
    """``module._name`` of every MLflow private name ``source`` touches."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # a local name -> the MLflow module it is
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mlflow":
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(f"{node.module}.{alias.name}")
                else:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "mlflow":
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{bound[node.value.id]}.{node.attr}")
    return sorted(set(found))


def test_the_reader_finds_a_private_name_however_it_is_reached():
    """The control of the next test: each way of reaching a private name is found."""
    assert private_uses("from mlflow.server.handlers import _get_tracking_store") == [
        "mlflow.server.handlers._get_tracking_store"
    ]
    assert private_uses("from mlflow.server import auth as b\nb._USER_AUTH_CACHE") == [
        "mlflow.server.auth._USER_AUTH_CACHE"
    ]
    assert private_uses("import mlflow.server.auth as a\na._x = 1") == ["mlflow.server.auth._x"]
    assert private_uses("from mlflow.server import auth\nauth.store") == []
    assert private_uses("from os import _exit") == []  # not MLflow's


def test_no_module_but_the_seam_touches_mlflows_private_names():
    found = {
        str(path.relative_to(PACKAGE.parent)): uses
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.resolve() != SEAM and (uses := private_uses(path.read_text(encoding="utf-8")))
    }
    cli = PACKAGE.parent / "cli"
    found |= {
        str(path.relative_to(PACKAGE.parent)): uses
        for path in sorted(cli.rglob("*.py"))
        if (uses := private_uses(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_seam_lists_every_private_name_it_uses_and_each_is_in_mlflow():
    listed = sorted(f"{m}.{n}" for m, names in mlflow_seam.PRIVATE_NAMES.items() for n in names)
    assert private_uses(SEAM.read_text(encoding="utf-8")) == listed
    # each exists in MLflow as installed (basic auth reads its configuration at import)
    script = "import importlib, json, sys\n" + textwrap.dedent(
        f"""
        listed = {json.dumps(mlflow_seam.PRIVATE_NAMES)}
        missing = [f"{{m}}.{{n}}" for m, names in listed.items()
                   for n in names if not hasattr(importlib.import_module(m), n)]
        print(json.dumps(missing))
        """
    )
    out = _in_a_worker(script)
    assert json.loads(out.splitlines()[-1]) == []


def _in_a_worker(script: str, tmp: Path | None = None) -> str:
    """Run ``script`` in a process set up as ``mlflow server`` sets up a worker: a sqlite
    tracking store, basic auth's configuration (accounts in sqlite, the credentials' cache on),
    the artifact proxy's destination; its stdout."""
    import tempfile

    from mlflow.server import (
        ARTIFACT_ROOT_ENV_VAR,
        ARTIFACTS_DESTINATION_ENV_VAR,
        BACKEND_STORE_URI_ENV_VAR,
        SERVE_ARTIFACTS_ENV_VAR,
    )

    where = Path(tmp or tempfile.mkdtemp(prefix="attnref-seam-"))
    (where / "artifacts").mkdir(exist_ok=True)
    config = where / "basic_auth.ini"
    config.write_text(
        "[mlflow]\ndefault_permission = NO_PERMISSIONS\n"
        f"database_uri = sqlite:///{where / 'auth.db'}\nadmin_username = admin\n"
        "admin_password = password1234\nauthorization_function = "
        "mlflow.server.auth:authenticate_request_basic_auth\nauth_cache_ttl_seconds = 60\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env |= {
        BACKEND_STORE_URI_ENV_VAR: f"sqlite:///{where / 'mlflow.db'}",
        ARTIFACTS_DESTINATION_ENV_VAR: str(where / "artifacts"),
        ARTIFACT_ROOT_ENV_VAR: "mlflow-artifacts:/",
        SERVE_ARTIFACTS_ENV_VAR: "true",
        "MLFLOW_AUTH_CONFIG_PATH": str(config),
    }
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.slow
def test_each_function_of_the_seam_does_what_it_says(tmp_path):
    script = textwrap.dedent(
        """
        import json
        from pathlib import Path
        from mlflow.server import auth as basic
        from attention_ref.classroom.gate import mlflow_seam as seam

        said = {}
        store = seam.tracking_store()
        said["same_store"] = store is seam.tracking_store()
        exp = store.create_experiment("seam")
        said["store_reads_back"] = store.get_experiment(exp).name == "seam"
        with seam.sql_session() as session:
            model = seam.sql_model("SqlExperiment")
            said["sql_counts"] = session.query(model).filter(model.name == "seam").count()
        said["artifact_root"] = str(seam.artifact_root())
        repo = seam.artifact_repo()
        said["same_repo"] = repo is seam.artifact_repo()
        seam.replace_artifact_repo("fenced")
        said["repo_replaced"] = seam.artifact_repo() == "fenced"
        seam.replace_artifact_repo(repo)
        basic.store.init_db(basic.auth_config.database_uri)  # as create_app does
        user = basic.store.create_user("ana", "a-password-of-ana")
        said["not_cached"] = seam.cached_user("ana", "a-password-of-ana") is None
        seam.cache_user("ana", "a-password-of-ana", user)
        said["cached"] = seam.cached_user("ana", "a-password-of-ana").username
        said["other_password"] = seam.cached_user("ana", "wrong") is None
        said["legacy"] = seam.legacy_admin_login_refused("ana", "a-password-of-ana", user)
        said["reads_before"] = seam.can_read_experiment(exp, "ana")
        basic.store.create_experiment_permission(exp, "ana", "READ")
        said["reads_after"] = seam.can_read_experiment(exp, "ana")
        bridge = seam.fastapi_bridge()
        said["bridge_callable"] = callable(bridge)
        seam.replace_fastapi_bridge(len)
        said["bridge_replaced"] = basic._authenticate_custom_for_fastapi is len
        print(json.dumps(said))
        """
    )
    said = json.loads(_in_a_worker(script, tmp_path).splitlines()[-1])
    assert said == {
        "same_store": True,
        "store_reads_back": True,
        "sql_counts": 1,
        "artifact_root": str(tmp_path / "artifacts"),
        "same_repo": True,
        "repo_replaced": True,
        "not_cached": True,
        "cached": "ana",
        "other_password": True,
        "legacy": False,
        "reads_before": False,
        "reads_after": True,
        "bridge_callable": True,
        "bridge_replaced": True,
    }


def test_the_server_extra_pins_the_mlflow_the_contract_was_tested_with():
    """The class server's extra names one MLflow minor version: the one installed here, which
    the tests above hold to the contract."""
    import re
    import tomllib
    from importlib.metadata import version

    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    server = project["project"]["optional-dependencies"]["server"]
    pins = [d for d in server if d.replace(" ", "").startswith("mlflow[auth]")]
    assert len(pins) == 1, server
    m = re.fullmatch(r"mlflow\[auth\]==(\d+)\.(\d+)\.\*", pins[0].replace(" ", ""))
    assert m is not None, pins[0]
    assert tuple(version("mlflow").split(".")[:2]) == m.groups()
    assert importlib.import_module("mlflow")
