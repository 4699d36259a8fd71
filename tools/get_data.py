"""``make data``: Tiny Shakespeare where attnref and the tests find it, downloaded at most once.

Looks where ``attnref train`` looks (``$ATTNREF_DATA``, then the user cache
``$XDG_CACHE_HOME/attnref/tinyshakespeare.txt``); where neither has it, downloads it into the
cache from ``$ATTNREF_DATA_URL`` (default the public char-rnn URL), verified by its sha256, with
the same progress line and the same one-line refusals as ``attnref train``. The test suite
never downloads: a contributor runs this once.

    python tools/get_data.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from attention_ref.cli.errors import EXIT_USAGE, CLIError  # noqa: E402
from attention_ref.cli.options import load_data  # noqa: E402
from attention_ref.cli.progress import make_console  # noqa: E402


def main() -> int:
    """Find or fetch the data, check its facts, say where it is; a refusal is one line, exit 2."""
    console = make_console()
    try:
        data = load_data(None, console)
    except CLIError as e:
        print(e.line(), file=sys.stderr)
        return EXIT_USAGE
    n = data.train.numel() + data.val.numel()
    console.print(f"Tiny Shakespeare ({n:,} characters, sha256 verified): {data.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
