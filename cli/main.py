"""``attnref``: the command line of attnref (Typer). One module per command; this one only
builds the app and turns errors into exit codes.

torch and mlflow are imported inside the commands that need them, so ``attnref --help`` starts
fast (a test checks that importing this module leaves both out of ``sys.modules``).

Errors in the user's input never show a traceback: one line on stderr, exit code 2. The line
is `printable` (`attention_ref.render.printable`): a message may quote what a student wrote,
or what a server relayed of it, and no control character of it reaches the terminal.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Collection, Sequence
from typing import Annotated, Any

import typer

from attention_ref.cli import roster, server_runs  # noqa: F401  (`server add-students`, `runs`)
from attention_ref.cli.ablation import ablation
from attention_ref.cli.assignments import assign, grade
from attention_ref.cli.check import check
from attention_ref.cli.errors import EXIT_USAGE, CLIError
from attention_ref.cli.exercise import exercise
from attention_ref.cli.explain import explain
from attention_ref.cli.grades import grades
from attention_ref.cli.homework import fetch, homework_app, status, submit
from attention_ref.cli.language import DEFAULT, from_environment, in_argv
from attention_ref.cli.options import tidy_help
from attention_ref.cli.params import params
from attention_ref.cli.report import report
from attention_ref.cli.runs import runs
from attention_ref.cli.sample import sample
from attention_ref.cli.server import server_app
from attention_ref.cli.train import train
from attention_ref.cli.words import usage_said
from attention_ref.render import LANGS
from attention_ref.render.printable import printable

app = typer.Typer(
    name="attnref",
    help="A tested, step-by-step reference of masked multi-head attention.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def summary(command: Any) -> str:
    """The first paragraph of a command's docstring, as one line: what ``attnref --help`` lists
    beside the command (given as is, it keeps the docstring's line breaks mid-sentence)."""
    first = inspect.cleandoc(command.__doc__ or "").split("\n\n", 1)[0]
    return " ".join(first.split())


for _command in (explain, params, train, ablation, report, sample, exercise, check, runs):
    app.command(short_help=summary(_command))(_command)
for _command in (assign, grade, grades):
    server_app.command(short_help=summary(_command))(_command)
for _command in (fetch, submit, status):
    homework_app.command(short_help=summary(_command))(_command)
app.add_typer(server_app)
app.add_typer(homework_app)


def _version(value: bool) -> None:
    if value:
        from attention_ref import __version__

        print(f"attnref {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_version
        ),
    ] = False,
) -> None:
    """A tested, step-by-step reference of masked multi-head attention."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``attnref`` console script; returns the exit code.

    Usage errors (Typer's and ours) become one line on stderr with exit code 2; package
    ``ValueError``/``TypeError`` from bad input are reported the same way.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = tidy_help(typer.main.get_command(app))
    try:
        result = command.main(args=args, prog_name="attnref", standalone_mode=False)
    except CLIError as e:
        _error(e.line())
        return EXIT_USAGE
    except typer.TyperException as e:
        lang = command_lang(args, getattr(command, "commands", {}))
        _error(CLIError(usage_said(e.format_message(), lang), lang).line())
        return int(getattr(e, "exit_code", EXIT_USAGE)) or EXIT_USAGE
    except typer.Exit as e:
        return e.exit_code
    except (typer.Abort, KeyboardInterrupt) as e:
        _interrupted(e)
        return 130
    except (ValueError, TypeError) as e:
        # an answer's error is in the answer's language (`InputError.lang`): so is its prefix
        _error(CLIError(str(e), getattr(e, "lang", "en")).line())
        return EXIT_USAGE
    except Exception as e:
        if not _from_a_store(e):
            raise
        _error(f"attnref: error: {_first_line(e)}")
        return EXIT_USAGE
    return result if isinstance(result, int) else 0


#: the commands a student runs: they speak the student's language (`attention_ref.cli.language`),
#: errors in their own command line included; the others (training, the teacher's) English
STUDENT_COMMANDS = frozenset({"explain", "exercise", "check", "report", "homework"})


def command_lang(args: Sequence[str], commands: Collection[str]) -> str:
    """The language of an error in the command line ``args`` itself (read before it is
    parsed): a student command's ``--lang`` when it names a language, else the student's
    (``$ATTNREF_LANG``, the locale); English for the other ``commands`` (the app's)."""
    if args and args[0] in commands and args[0] not in STUDENT_COMMANDS:
        return DEFAULT
    given = in_argv(args)
    if given in LANGS:
        return given
    try:
        return from_environment()
    except CLIError as e:  # a bad $ATTNREF_LANG: the locale's, which that refusal speaks
        return e.lang


def _interrupted(e: BaseException) -> None:
    """One line for a Ctrl-C that stopped a command at once, with what it kept when it says.

    Typer turns a Ctrl-C inside a command into a silent exit 130, so a command that has
    something to say catches it itself (``attnref train``:
    `attention_ref.cli.train.interrupted`)."""
    said = str(e) if isinstance(e, KeyboardInterrupt) else ""
    _error(f"attnref: interrupted{': ' + said if said else ''}")


def _error(line: str) -> None:
    """``line`` on stderr, `printable`."""
    print(printable(line), file=sys.stderr)


def _from_a_store(e: BaseException) -> bool:
    """MLflow's errors and the network's (a tracking server that refused, or went away, in
    the middle of a command): one line, never a traceback. Checked without importing either
    (the CLI starts without them)."""
    mlflow_errors = sys.modules.get("mlflow.exceptions")
    if mlflow_errors is not None and isinstance(e, mlflow_errors.MlflowException):
        return True
    requests_errors = sys.modules.get("requests.exceptions")
    return requests_errors is not None and isinstance(e, requests_errors.RequestException)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def run() -> None:
    """Console-script wrapper: ``sys.exit(main())``."""
    sys.exit(main())


if __name__ == "__main__":
    run()
