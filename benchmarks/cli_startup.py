"""Wall time of ``attnref --help`` and ``attnref explain`` (median of N runs, subprocesses).

Run: ``.venv/bin/python benchmarks/cli_startup.py [N]``; prints a markdown table to paste into
the README. ``--help`` must stay fast because the CLI imports torch/mlflow lazily.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [
    ["--help"],
    ["params"],
    ["explain", "--example", "life-is-awesome"],
    ["explain", "--example", "your-journey-starts", "--format", "json"],
]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    exe = shutil.which("attnref") or str(Path(sys.executable).with_name("attnref"))
    print(f"| command | median wall time (s), {n} runs |")
    print("|---|---|")
    for args in COMMANDS:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            subprocess.run([exe, *args], check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        print(f"| `attnref {' '.join(args)}` | {statistics.median(times):.2f} |")


if __name__ == "__main__":
    main()
