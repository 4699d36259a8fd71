"""The worked examples of ``attnref explain --example``: one registry, name -> module.

Each module (`attention_ref.worked.life_is_awesome`, …) holds its example's data and an
``explain()`` returning an `attention_ref.render.Explanation`. Modules are imported when an
example is explained, so importing this registry imports neither torch nor the reference.

The documents' examples come first; then the attention of today's models on the same
"Life is awesome" numbers (GQA, RoPE, sliding window, ALiBi, the KV cache, FlashAttention's
online softmax), whose modules also explain their own backward pass,
``explain_backward(G)`` (`OWN_BACKWARD`, `explain_example_backward`); the documents'
examples have theirs in `attention_ref.worked.gradients`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, cast

from attention_ref.inputs.errors import InputError
from attention_ref.render import LANGS

if TYPE_CHECKING:
    from attention_ref.render import Explanation, Matrix

#: Example name -> the module that explains it, in the order the CLI lists them.
EXAMPLES: Final[dict[str, str]] = {
    "life-is-awesome": "attention_ref.worked.life_is_awesome",  # seed 000
    "hello-shiny-sun": "attention_ref.worked.hello_shiny_sun",  # seeds 001/004
    "your-journey-starts": "attention_ref.worked.your_journey_starts",  # seed 001 code
    "i-want-pizza": "attention_ref.worked.i_want_pizza",  # seed 002
    # the attention of today's models, on seed 000's numbers (issue 23)
    "gqa": "attention_ref.worked.life_gqa",
    "rope": "attention_ref.worked.life_rope",
    "window": "attention_ref.worked.life_window",
    "alibi": "attention_ref.worked.life_alibi",
    "kv-cache": "attention_ref.worked.life_kv_cache",
    "online-softmax": "attention_ref.worked.life_online_softmax",
}

#: The examples whose module explains its own backward pass, ``explain_backward(G)``.
OWN_BACKWARD: Final = frozenset({"gqa", "rope", "window", "alibi", "kv-cache", "online-softmax"})

#: Old names of examples, refused with the one name (issue 59: one vocabulary, the exercises'
#: ``--variant window`` and ``train --window``).
RENAMED: Final[dict[str, str]] = {"sliding-window": "window"}

#: Names accepted by ``attnref explain --example``.
EXAMPLE_NAMES: Final = tuple(EXAMPLES)

DEFAULT_EXAMPLE: Final = "life-is-awesome"

#: What the registry says about a name it does not know, per language (the same fields in each).
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "unknown_example": "unknown example {name!r}; choose one of: {names}",
        "renamed": "the example {name!r} is called {new!r} now, as in exercise --variant {new}",
    },
    "pt": {
        "unknown_example": "exemplo desconhecido {name!r}; escolha um de: {names}",
        "renamed": "o exemplo {name!r} agora se chama {new!r}, como em exercise --variant {new}",
    },
}


def check_example(name: str, lang: str = LANGS[0]) -> str:
    """``name`` if it is an example; otherwise an `InputError` (a ``ValueError``) listing the
    valid names, in ``lang`` (English for a language without words here), carried as its
    ``.lang``."""
    if name not in EXAMPLES:
        said = lang if lang in WORDS else LANGS[0]
        if name in RENAMED:
            raise InputError(WORDS[said]["renamed"].format(name=name, new=RENAMED[name]), said)
        message = WORDS[said]["unknown_example"].format(name=name, names=", ".join(EXAMPLE_NAMES))
        raise InputError(message, said)
    return name


def check_lang(lang: str) -> str:
    """``lang`` if the examples are written in it (every example is written in every language
    of `attention_ref.render.LANGS`: one writer computes its facts, a table of words per
    language says them, `attention_ref.worked.words`); ``ValueError`` in one line otherwise."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose one of: {', '.join(LANGS)}")
    return lang


def explain_example(name: str, lang: str = LANGS[0]) -> Explanation:
    """The explanation of a named example in ``lang``; ``ValueError`` lists the valid names
    (or the languages)."""
    module = importlib.import_module(EXAMPLES[check_example(name, lang)])
    return cast("Callable[..., Explanation]", module.explain)(lang=check_lang(lang))


def explain_example_backward(
    name: str, G: Matrix | None = None, lang: str = LANGS[0]
) -> Explanation:
    """The explanation of an `OWN_BACKWARD` example followed by its backward pass, in ``lang``;
    ``G`` is the upstream gradient (``None``: all ones). ``ValueError`` for any other name."""
    if check_example(name, lang) not in OWN_BACKWARD:
        raise ValueError(f"{name!r} explains its backward in attention_ref.worked.gradients")
    module = importlib.import_module(EXAMPLES[name])
    explain = cast("Callable[..., Explanation]", module.explain_backward)
    return explain(G, lang=check_lang(lang))
