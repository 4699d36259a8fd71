"""The options of an exercise's shape, declared once for ``attnref exercise`` and ``attnref
server assign``: the sizes, the mask, the decimals and the attention (a preset of
`attention_ref.exercises.features.PRESETS`, features joined by ``+``, or the features' own
options ``--kv-heads``, ``--window``, ``--pos rope``). `shape` resolves the defaults a preset
gives; `attention_ref.exercises.options.ExerciseOptions` checks the rest.

No torch import here: ``attnref --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.words import said
from attention_ref.exercises.features import PRESETS, Features, default_shape

#: ``--pos``: the positions of the queries and keys.
POSITIONS = ("none", "rope")

_PRESETS_HELP = "; ".join(f"{name}: {p.help}" for name, p in PRESETS.items())

Tokens = Annotated[int, typer.Option("--tokens", help="Number of tokens n (1-8).")]
DModel = Annotated[
    int | None,
    typer.Option(
        "--d-model",
        help="Width of a token (1-8). Default 4; 8 with --variant gqa (d_k = 2, so that "
        "scaling by √d_k shows).",
        show_default=False,
    ),
]
Heads = Annotated[
    int | None,
    typer.Option(
        "--heads",
        help="Query heads h (each with K/V heads of its own, unless --variant gqa or "
        "--kv-heads); must divide d_model. Default "
        "2; 4 with --variant gqa; 1 with --variant rope (d_k = 4: two pairs to turn).",
        show_default=False,
    ),
]
Causal = Annotated[
    bool, typer.Option("--causal/--no-causal", help="Causal mask (as the homework).")
]
Decimals = Annotated[
    int, typer.Option("--decimals", help="Decimals asked (1-6); check grades by them.")
]
Variant = Annotated[
    str,
    typer.Option(
        "--variant",
        help=f"The attention: {_PRESETS_HELP}. Join features with + for several "
        "(gqa+window+rope). --backward asks the gradients of every one.",
    ),
]
KvHeads = Annotated[
    int | None,
    typer.Option(
        "--kv-heads",
        help="K/V heads g, a divisor of h smaller than h (asks gqa). Default h/2 with gqa "
        "(1 with --heads 2: multi-query attention).",
        show_default=False,
    ),
]
Window = Annotated[
    int | None,
    typer.Option(
        "--window",
        help="Keys w a token sees, itself included, 1 <= w < tokens (asks window). Default 2 "
        "with window (1 with 2 tokens).",
        show_default=False,
    ),
]
Pos = Annotated[
    str,
    typer.Option(
        "--pos", help="Positions: none, or rope (rotary, on Q and K; the same as adding +rope)."
    ),
]


def shape(
    variant: str, pos: str, heads: int | None, d_model: int | None, lang: str = "en"
) -> tuple[str, int, int]:
    """``(variant, heads, d_model)``: ``--pos rope`` joined to the variant (named in the
    features' order), and the sizes its first feature's preset draws by default where they
    were not given (`default_shape`); ``lang``: the language of a refusal."""
    if pos not in POSITIONS:
        raise CLIError(said("bad_pos", lang, choices=", ".join(POSITIONS), got=pos), lang)
    f = Features.parse(variant)
    if f is not None:  # its name, whatever order the features were typed in
        variant = (f.with_(pos) if pos != "none" else f).name  # --pos NAME: a feature
    h, d = default_shape(variant)
    return variant, h if heads is None else heads, d if d_model is None else d_model


#: the options of assign that draw the exercises, by the Assignment field each sets (``--pos``
#: sets the variant); given again for an existing assignment, each must be what it holds
SHAPE_OPTIONS = {
    "exercises": "exercises",
    "tokens": "tokens",
    "d_model": "d_model",
    "heads": "heads",
    "causal": "causal",
    "lang": "lang",
    "backward": "backward",
    "decimals": "decimals",
    "variant": "variant",
    "pos": "variant",
    "kv_heads": "kv_heads",
    "window": "window",
}


def given_options(ctx: typer.Context) -> set[str]:
    """The Assignment fields whose option the teacher typed on the command line (a default,
    or one the CLI filled in itself, is not given)."""

    def source(option: str) -> str:  # by name: typer may bring its own click's enum
        found = ctx.get_parameter_source(option)
        return getattr(found, "name", "")

    return {field for option, field in SHAPE_OPTIONS.items() if source(option) == "COMMANDLINE"}


__all__ = [
    "POSITIONS",
    "SHAPE_OPTIONS",
    "Causal",
    "DModel",
    "Decimals",
    "Heads",
    "KvHeads",
    "Pos",
    "Tokens",
    "Variant",
    "Window",
    "given_options",
    "shape",
]
