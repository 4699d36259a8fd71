"""Options shared by the training commands, and the checks that run before any work starts.

* `config_options` gives a command one ``--option`` per field of
  `attention_ref.lm.config.TrainConfig` (defaults ``None``: "not given"), so ``train`` and
  ``ablation`` share them and ``--resume`` can tell which were given.
* The option types (``--data``, ``--out-dir``, ``--tracking-uri``, ``--experiment``,
  ``--log-every``, ``--quick``, ``--preset`` and their `recipe`) are declared once here, with
  the checks that run before any work starts (`check_writable_dir`, `load_data`,
  `connect_store`).

No torch or mlflow import here: ``attnref --help`` stays fast.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.lm.config import CONFIG_HELP, option_defaults

if TYPE_CHECKING:
    from rich.console import Console

    from attention_ref.lm.config import TrainConfig
    from attention_ref.lm.data import CharData

PANEL = "Model and training (defaults: the homework's Q02)"
DEFAULT_EXPERIMENT = "shakespeare"  # the same as attention_ref.experiments.store's

TRACKING_HELP = "MLflow tracking URI. \\[default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db]"
TrackingUri = Annotated[
    str | None,
    typer.Option("--tracking-uri", help=TRACKING_HELP, metavar="URI", show_default=False),
]
DataPath = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Tiny Shakespeare input.txt. "
        "\\[default: $ATTNREF_DATA, else the cache, else a download]",
        show_default=False,
        metavar="FILE",
    ),
]
OutDir = Annotated[
    Path,
    typer.Option("--out-dir", help="Local checkpoints go to OUT_DIR/RUN_ID/.", metavar="DIR"),
]
LogEvery = Annotated[
    int,
    typer.Option(
        "--log-every", help="Steps between log lines when not on a terminal.", metavar="N"
    ),
]

#: ``--quick``: a first run that shows the loss falling and a sample, in about a minute
QUICK: dict[str, Any] = {
    "max_steps": 300,
    "eval_interval": 150,
    "eval_batches": 10,
    "warmup_steps": 30,
}
Quick = Annotated[
    bool,
    typer.Option(
        "--quick",
        help="A first try: 300 steps a run, an evaluation every 150 on 10 batches, 30 warm-up "
        "steps (an option given beside it wins). "
        "\\[default: Q02's 6,000 steps]",
    ),
]
Preset = Annotated[
    str | None,
    typer.Option(
        "--preset",
        help="A whole recipe by name: q02 (the defaults) or nanogpt-shakespeare-char "
        "(nanoGPT's baby GPT: 6 layers, 6 heads, 384 wide, block 256, dropout 0.2, batch "
        "64, 5,000 steps); an option given beside it wins. \\[default: q02]",
        show_default=False,
        metavar="NAME",
    ),
]


def recipe(preset: str | None, quick: bool, overrides: dict[str, Any]) -> TrainConfig:
    """The configuration of ``train`` and ``ablation``: defaults < ``--preset`` < ``--quick``
    < the options given, every value checked here, once (a bad one: one `CLIError` line)."""
    from attention_ref.lm.config import PRESETS, preset_config

    if preset is not None and preset not in PRESETS:
        raise CLIError(f"--preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    return preset_config(preset or "q02", **({**QUICK, **overrides} if quick else overrides))


#: the type names of the help (Typer's own are ``<int>``, ``<str>``, ``<bool>`` on flags too)
TYPE_NAMES: dict[type, str] = {int: "INTEGER", float: "FLOAT", str: "TEXT", Path: "PATH"}


def experiment_option(help_text: str = "MLflow experiment name.") -> Any:
    """``--experiment NAME``; ``None`` when not given (the commands default it)."""
    return Annotated[
        str | None,
        typer.Option(
            "--experiment",
            help=f"{help_text} \\[default: {DEFAULT_EXPERIMENT}]",
            show_default=False,
            metavar="NAME",
        ),
    ]


Experiment = experiment_option()


def config_options(exclude: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Any]:
    """Give a command one option per ``TrainConfig`` option field; it receives them as
    ``config_overrides`` (only those given on the command line)."""
    defaults = {k: v for k, v in option_defaults().items() if k not in exclude}

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != "config_overrides"]
        extra = []
        for name, default in defaults.items():
            option = typer.Option(
                f"--{name.replace('_', '-')}",
                help=f"{CONFIG_HELP[name]} \\[default: {default}]",  # "\\[": not rich markup
                show_default=False,
                rich_help_panel=PANEL,
                metavar=TYPE_NAMES.get(type(default), "TEXT"),
            )
            kind = type(default)
            extra.append(
                inspect.Parameter(
                    name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None,
                    annotation=Annotated[kind | None, option],  # type: ignore[valid-type]
                )
            )

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {n: kwargs.pop(n) for n in defaults if n in kwargs}
            overrides = {k: v for k, v in given.items() if v is not None}
            return func(*args, config_overrides=overrides, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=own + extra)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def check_writable_dir(path: Path) -> Path:
    """``ValueError`` unless ``path`` is a directory we can write, or can be created as one.

    Nothing is created here: the check runs before any work starts.
    """
    p = path.expanduser().absolute()
    probe = p
    while not probe.exists():
        probe = probe.parent
    if probe == p and not p.is_dir():
        raise ValueError(f"--out-dir {path} is not writable (it is a file, not a directory)")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"--out-dir {path} is not writable ({probe} does not allow it)")
    return path


def check_log_every(log_every: int) -> int:
    """``--log-every`` must be a positive integer."""
    if log_every < 1:
        raise CLIError("--log-every must be a positive integer")
    return log_every


def load_data(path: Path | None, console: Console) -> CharData:
    """Tiny Shakespeare from ``--data``, ``$ATTNREF_DATA``, the cache or a download."""
    from attention_ref.cli.progress import download_progress
    from attention_ref.lm.data import DataError, load, locate

    try:
        with download_progress(console) as progress:  # its bar stops however it ends
            found = locate(path, progress=progress)
        return load(found)
    except DataError as e:  # a refusal of one line, that says how to pass a local copy
        raise CLIError(str(e)) from None


def connect_store(tracking_uri: str | None, experiment: str | None) -> None:
    """Point MLflow at the store (and select ``experiment``, unless ``None``: read only)."""
    from attention_ref.experiments.store import TrackingError, connect

    try:
        connect(tracking_uri, experiment)
    except TrackingError as e:
        raise CLIError(str(e)) from None


#: a line that starts an item of a list in a docstring's paragraph: it keeps its line break
LIST_ITEM = re.compile(r"^([-*•] |\d+[.)] )")


def flow_paragraphs(text: str) -> str:
    """A docstring as help text: each paragraph one flowing line (the terminal wraps it at its
    width), paragraphs apart by a blank line, a list item on a line of its own.

    The line breaks of a docstring's source are where its editor wrapped it, not the author's:
    printed as they are, a terminal narrower than the source wraps each line again into ragged
    ones (a long line, then a word alone). Anything after a ``\\f`` line is left as it is.
    """
    head, cut, tail = inspect.cleandoc(text).partition("\f")
    paragraphs = []
    for paragraph in head.strip().split("\n\n"):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if lines and not LIST_ITEM.match(line):
                lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
            else:
                lines.append(line.rstrip())
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs) + (f"\n{cut}{tail}" if cut else "")


def type_name(label: str) -> str:
    """The help's name of a type from Typer's label: ``<str>`` -> ``TEXT``, ``<path>`` ->
    ``PATH``, ``<list[Path]>`` -> ``PATH`` (the ``...`` of the argument says "several")."""
    bare = label.strip("<>")
    if bare.startswith("list[") and bare.endswith("]"):
        bare = bare[5:-1]
    return {"int": "INTEGER", "float": "FLOAT", "str": "TEXT"}.get(bare, bare.upper())


def tidy_help(command: Any) -> Any:
    """The help of ``command`` (a group, its commands and sub-groups) without Typer's
    placeholders, in paragraphs that flow (`flow_paragraphs`).

    Every option gets a type name: flags (``--no-attention``, ``--help``, ``--version``) none;
    any option without a ``metavar`` its type's name (`type_name`), not Typer's ``<str>``. An
    argument shows its type's name too (``PATH``, not ``<path>`` or ``<list[Path]>``), and the
    usage line writes it as click does, ``ANSWER`` or ``ANSWERS...`` (``[NAME]`` when it is
    optional), not Typer's ``{answer}``. Returns ``command``.
    """
    from typer._click.core import Context  # Typer's own copy of click (not the package)
    from typer.core import TyperArgument, TyperOption

    commands, todo = [], [command]
    while todo:  # the group, its commands, and the commands of its sub-groups (server …)
        cmd = todo.pop()
        commands.append(cmd)
        todo += getattr(cmd, "commands", {}).values()
    for cmd in commands:
        if cmd.help:
            cmd.help = flow_paragraphs(cmd.help)
        ctx = Context(cmd, info_name=cmd.name)
        params = list(cmd.params)
        help_option = cmd.get_help_option(ctx)
        if help_option is not None:
            params.append(help_option)
        for param in params:
            if isinstance(param, TyperArgument) and param.metavar is None:
                tidy_argument(param, type_name(param.display_type(ctx)))
            if not isinstance(param, TyperOption) or param.metavar is not None:
                continue
            label = param.display_type(ctx)
            if getattr(param, "is_flag", False) or label == "<bool>":
                param.metavar = ""
            else:
                param.metavar = type_name(label)
    return command


def tidy_argument(param: Any, name: str) -> None:
    """An argument's type column ``name`` and its usage ``ANSWER`` / ``ANSWERS...`` /
    ``[NAME]`` (Typer writes ``<path>`` and ``{answer}``; its methods are replaced on this one
    parameter, a help-only change: parsing never calls them)."""
    usage = param.name.upper() + ("..." if param.nargs != 1 else "")
    usage = usage if param.required else f"[{usage}]"
    param.display_type_rich = lambda ctx: name
    param.get_usage_pieces = lambda ctx: [usage]


def existing_store_uri(tracking_uri: str | None) -> str:
    """The URI of a store that must already exist, checked without MLflow (a sqlite file that
    does not exist is a one-line error: nothing is created)."""
    from attention_ref.experiments.store import TrackingError, require_store

    try:
        return require_store(tracking_uri)
    except TrackingError as e:
        raise CLIError(str(e)) from None


def connect_existing_store(tracking_uri: str | None, lang: str = "en") -> str:
    """Point MLflow at a store that must already exist (commands that only read one).

    A sqlite file that does not exist is a one-line error (in ``lang``): nothing is created.
    """
    from attention_ref.experiments.store import TrackingError, connect, require_store

    try:
        uri = require_store(tracking_uri, lang)
        connect(uri, None)
    except TrackingError as e:
        raise CLIError(str(e), lang) from None
    return uri
