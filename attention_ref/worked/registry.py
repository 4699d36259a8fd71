"""The worked examples of ``attnref explain --example``: one registry, name -> module.

Each module (`attention_ref.worked.life_is_awesome`, …) holds its example's data and an
``explain()`` returning an `attention_ref.render.Explanation`. Modules are imported when an
example is explained, so importing this registry imports neither torch nor the reference.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, cast

if TYPE_CHECKING:
    from attention_ref.render import Explanation

#: Example name -> the module that explains it, in the order the CLI lists them.
EXAMPLES: Final[dict[str, str]] = {
    "life-is-awesome": "attention_ref.worked.life_is_awesome",  # seed 000
    "hello-shiny-sun": "attention_ref.worked.hello_shiny_sun",  # seeds 001/004
    "your-journey-starts": "attention_ref.worked.your_journey_starts",  # seed 001 code
    "i-want-pizza": "attention_ref.worked.i_want_pizza",  # seed 002
}

#: Names accepted by ``attnref explain --example``.
EXAMPLE_NAMES: Final = tuple(EXAMPLES)

DEFAULT_EXAMPLE: Final = "life-is-awesome"


def check_example(name: str) -> str:
    """``name`` if it is an example; ``ValueError`` listing the valid names otherwise."""
    if name not in EXAMPLES:
        raise ValueError(f"unknown example {name!r}; choose one of: {', '.join(EXAMPLE_NAMES)}")
    return name


def explain_example(name: str) -> Explanation:
    """The explanation of a named example; ``ValueError`` lists the valid names."""
    module = importlib.import_module(EXAMPLES[check_example(name)])
    explain = cast("Callable[[], Explanation]", module.explain)
    return explain()
