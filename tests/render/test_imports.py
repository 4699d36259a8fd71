"""render/ is a leaf: it imports no torch, no mlflow and nothing of attnref outside render/."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import attention_ref.render

RENDER = Path(attention_ref.render.__file__).parent
MODULES = sorted(p.stem for p in RENDER.glob("*.py") if p.stem != "__init__")


def probe(imports: str) -> list[str]:
    """Modules a fresh interpreter holds after ``imports`` that render/ must not pull in."""
    code = (
        f"import sys; {imports}; "
        "bad = [m for m in sys.modules if m in ('torch', 'mlflow') or "
        "(m.startswith('attention_ref.') and not m.startswith('attention_ref.render'))]; "
        "print(','.join(sorted(bad)) or 'clean')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip().split(",")


def test_importing_render_and_every_writer_is_clean():
    mods = ", ".join(f"attention_ref.render.{m}" for m in MODULES)
    assert len(MODULES) >= 6
    assert probe(f"import attention_ref.render, {mods}") == ["clean"]


def test_the_probe_can_fail():
    assert probe("import attention_ref.worked.trace") != ["clean"]


def test_no_import_statement_leaves_render():
    # lazy imports inside functions count too
    for path in RENDER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                root = name.split(".")[0]
                assert root not in ("torch", "mlflow", "cli"), (path.name, name)
                if root == "attention_ref":
                    assert name.startswith("attention_ref.render"), (path.name, name)
