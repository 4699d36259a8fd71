"""``attnref``: the command line of attnref (Typer).

Only option parsing, output and exit codes live here; the math is in `attention_ref`.
torch and mlflow are imported inside the commands that need them, so ``attnref --help`` starts
fast (a test checks that importing this module leaves both out of ``sys.modules``).

Errors in the user's input never show a traceback: one line on stderr, exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from attention_ref.examples import EXAMPLE_NAMES
from attention_ref.render import FORMATS
from cli.training import config_options

app = typer.Typer(
    name="attnref",
    help="A tested, step-by-step reference of masked multi-head attention.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_USAGE = 2


class CLIError(Exception):
    """A problem with the user's input: printed as one line, exit code 2."""


def _emit(result: str | list[Any]) -> None:
    """Print a rendered explanation: plain text as is, rich renderables through a console."""
    if isinstance(result, str):
        sys.stdout.write(result if result.endswith("\n") else result + "\n")
        return
    from rich.console import Console

    console = Console()
    for part in result:
        console.print(part)


def _check_format(fmt: str, precision: int | None) -> None:
    if fmt not in FORMATS:
        raise CLIError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if precision is not None and not 0 <= precision <= 15:
        raise CLIError(f"--precision must be between 0 and 15, got {precision}")


@app.command()
def explain(
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            "-e",
            help=f"A worked example of the documents: {', '.join(EXAMPLE_NAMES)}.",
            show_default=False,
        ),
    ] = None,
    input_file: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            help='Your own numbers, JSON: {"tokens", "X", "heads": [{"W_Q","W_K","W_V"}...], '
            '"W_O", "causal"}.',
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help=f"Output format: {', '.join(FORMATS)}.")
    ] = "rich",
    precision: Annotated[
        int | None,
        typer.Option(help="Decimals shown (default 3; JSON: full precision unless given)."),
    ] = None,
) -> None:
    """Compute masked multi-head attention step by step and print every matrix.

    Without options it shows the homework's example, life-is-awesome.
    """
    _check_format(fmt, precision)
    if example is not None and input_file is not None:
        raise CLIError("give either --example or --input, not both")
    if input_file is None and example is not None and example not in EXAMPLE_NAMES:
        raise CLIError(f"unknown example {example!r}; choose one of: {', '.join(EXAMPLE_NAMES)}")
    from attention_ref.inputs import InputError, load_input_file

    if input_file is not None:
        try:
            inp = load_input_file(input_file)
        except InputError as e:
            raise CLIError(str(e)) from None
        from attention_ref.explain import explain_input
        from attention_ref.render import render

        _emit(render(explain_input(inp), fmt, precision))
        return
    from attention_ref.explain import explain_example
    from attention_ref.render import render

    _emit(render(explain_example(example or "life-is-awesome"), fmt, precision))


def _parse_heads(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            out.append(int(part))
        except ValueError:
            raise CLIError(f"--heads must be integers separated by commas, got {text!r}") from None
    if not out or len(out) > 64:
        raise CLIError(f"--heads must list between 1 and 64 head counts, got {len(out)}")
    return out


@app.command()
def params(
    d_model: Annotated[int, typer.Option("--d-model", help="Embedding width d_model.")] = 128,
    heads: Annotated[
        str, typer.Option("--heads", help="Head counts to compare, comma-separated.")
    ] = "1,2,4,8",
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="Output format: rich, markdown, json.")
    ] = "rich",
) -> None:
    """Parameter counts of one attention layer and of the default model for several h (seed 003).

    Each head has W_Q⁽ⁱ⁾, W_K⁽ⁱ⁾, W_V⁽ⁱ⁾ of d_model × d_k with d_k = d_model/h, and W_O is
    h·d_v × d_model: the total, 4·d_model² (+ biases), does not depend on h.
    """
    from attention_ref.params import attention_params, model_params

    if fmt not in ("rich", "markdown", "json"):
        raise CLIError(f"unknown format {fmt!r}; choose one of: rich, markdown, json")
    hs = _parse_heads(heads)
    try:
        layers = [attention_params(d_model, h) for h in hs]
        models = [model_params(n_embd=d_model, n_head=h) for h in hs]
    except ValueError as e:
        raise CLIError(str(e)) from None
    rows = [
        {
            "h": p.h,
            "d_k": p.d_k,
            "W_Q^(i), W_K^(i), W_V^(i)": f"{p.h} × ({p.d_model}×{p.d_k})",
            "W_O": f"({p.h * p.d_k})×{p.d_model}",
            "per head": p.per_head,
            "attention layer": p.total,
            "model": m,
        }
        for p, m in zip(layers, models, strict=True)
    ]
    same = len({r["attention layer"] for r in rows}) == 1 and len({r["model"] for r in rows}) == 1
    verdict = (
        "equal for every h: more heads means narrower heads, not more weights"
        if same
        else "NOT equal across h"
    )
    if fmt == "json":
        import json

        doc = {"d_model": d_model, "rows": rows, "equal": same}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return
    cols = list(rows[0])
    if fmt == "markdown":
        lines = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
        lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
        lines += ["", f"d_model = {d_model}; parameter counts {verdict}."]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"One attention layer and the default model (d_model = {d_model}, biases included)"
    )
    for c in cols:
        table.add_column(c, justify="right")
    for r in rows:
        table.add_row(
            *(
                f"{r[c]:,}" if isinstance(r[c], int) and c not in ("h", "d_k") else str(r[c])
                for c in cols
            )
        )
    console = Console()
    console.print(table)
    console.print(f"Parameter counts {verdict}.")


# ----------------------------------------------------------------- the experiments (issue 3)

TRACKING_HELP = "MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)."
TrackingUri = Annotated[str | None, typer.Option("--tracking-uri", help=TRACKING_HELP)]
Experiment = Annotated[str, typer.Option("--experiment", help="MLflow experiment name.")]
DataPath = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Tiny Shakespeare input.txt (default: $ATTNREF_DATA, the cache, else download).",
        show_default=False,
    ),
]
OutDir = Annotated[Path, typer.Option("--out-dir", help="Local checkpoints go to OUT_DIR/RUN_ID/.")]
LogEvery = Annotated[
    int, typer.Option("--log-every", help="Steps between log lines when not on a terminal.")
]


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _load_data(path: Path | None, console: Any) -> Any:
    from attention_ref.data import DataError, load, locate
    from cli.training import download_progress

    try:
        return load(locate(path, progress=download_progress(console)))
    except DataError as e:
        raise CLIError(str(e)) from None


def _training_setup(
    overrides: dict[str, Any], data_path: Path | None, out_dir: Path, tracking_uri: str | None,
    experiment: str, console: Any, log_every: int,
) -> tuple[Any, Any]:  # fmt: skip
    """Everything that can be wrong with the options, checked before any work starts."""
    from attention_ref.config import TrainConfig
    from cli.training import check_writable_dir

    if log_every < 1:
        raise CLIError("--log-every must be a positive integer")
    cfg = TrainConfig(**overrides)
    cfg.validate()
    check_writable_dir(out_dir)
    data = _load_data(data_path, console)
    cfg.validate(min(len(data.train), len(data.val)))
    from attention_ref.train import resolve_device

    resolve_device(cfg.device)
    from attention_ref.tracking import TrackingError, connect

    try:
        connect(tracking_uri, experiment)
    except TrackingError as e:
        raise CLIError(str(e)) from None
    return cfg, data


def _ui_hint(console: Any) -> None:
    from attention_ref.tracking import DEFAULT_TRACKING_URI, current_uri

    uri = current_uri()
    if uri == DEFAULT_TRACKING_URI:
        console.print(
            "browse the runs: mlflow ui --backend-store-uri sqlite:///mlflow.db "
            "(then open http://127.0.0.1:5000)"
        )
    else:
        console.print(f"runs are in {uri}")


@app.command()
@config_options()
def train(
    no_attention: Annotated[
        bool,
        typer.Option(
            "--no-attention", help="Q03: remove the attention sub-layer (same as --attention none)."
        ),
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", help="Continue an interrupted run (its MLflow run id).", show_default=False
        ),
    ] = None,
    run_name: Annotated[str | None, typer.Option("--run-name", help="MLflow run name.")] = None,
    data: DataPath = None,
    out_dir: OutDir = Path("runs"),
    tracking_uri: TrackingUri = None,
    experiment: Experiment = "shakespeare",
    log_every: LogEvery = 100,
    config_overrides: dict[str, Any] | None = None,
) -> None:
    """Q02: train the character GPT on Shakespeare, tracked in MLflow.

    Ctrl-C or SIGTERM saves a checkpoint, marks the run KILLED; --resume RUN_ID continues it.

    A NaN/inf loss stops the run, marks it FAILED and says at which step.
    """
    from cli.training import Reporter, StopFlag

    overrides = dict(config_overrides or {})
    if no_attention:
        if overrides.get("attention", "none") != "none":
            raise CLIError("--no-attention contradicts --attention " + overrides["attention"])
        overrides["attention"] = "none"
    console = _console()
    if resume is not None:
        allowed = {"device", "threads"}
        extra = sorted(set(overrides) - allowed)
        if extra:
            names = ", ".join("--" + e.replace("_", "-") for e in extra)
            raise CLIError(f"--resume continues the run's own configuration; leave out {names}")
    base = {} if resume else overrides
    cfg, dataset = _training_setup(
        {**base, **{k: overrides[k] for k in ("device", "threads") if k in overrides}}, data,
        out_dir, tracking_uri, experiment, console, log_every,
    )  # fmt: skip
    from attention_ref.tracking import TrackingError, run_training

    stop = StopFlag(console)
    with stop, Reporter(console, cfg.attention, cfg.max_steps, log_every) as rep:
        try:
            outcome = run_training(
                cfg, dataset, out_root=out_dir, run_name=run_name, callbacks=rep.callbacks(),
                should_stop=stop, resume_run_id=resume,
            )  # fmt: skip
        except TrackingError as e:
            raise CLIError(str(e)) from None
    _finish(outcome, stop, console)


def _finish(outcome: Any, stop: Any, console: Any) -> None:
    if outcome.status == "FAILED":
        print(
            f"attnref: error: {outcome.error} (MLflow run {outcome.run_id} marked FAILED)",
            file=sys.stderr,
        )
        raise typer.Exit(1)
    if outcome.status == "KILLED":
        console.print(
            f"interrupted at step {outcome.result.steps_done}; checkpoint saved in "
            f"{outcome.out_dir}/last.pt and in the run's artifacts; MLflow run {outcome.run_id} "
            f"marked KILLED. Continue with: attnref train --resume {outcome.run_id}"
        )
        raise typer.Exit(stop.exit_code)
    r = outcome.result
    console.print(
        f"run {outcome.run_id} finished: {r.steps_done} steps, best val loss "
        f"{r.best_val_loss:.4f}, final val {r.final_val_loss:.4f}, train {r.final_train_loss:.4f}, "
        f"{r.n_params:,} parameters, {r.tokens_per_sec:,.0f} tokens/s, {r.wall_time_s:.0f} s"
    )
    console.print(f"sample it: attnref sample --run-id {outcome.run_id}")
    _ui_hint(console)


@app.command()
@config_options(exclude=("attention",))
def ablation(
    arms: Annotated[
        str, typer.Option("--arms", help="Attention modes to compare, comma-separated.")
    ] = "multihead,none,uniform",
    data: DataPath = None,
    out_dir: OutDir = Path("runs"),
    tracking_uri: TrackingUri = None,
    experiment: Experiment = "shakespeare",
    log_every: LogEvery = 100,
    config_overrides: dict[str, Any] | None = None,
) -> None:
    """Q03: the same model, seed and steps with attention, without it, and with uniform weights.

    One parent MLflow run with a nested run per arm; at the end a comparison table and the
    overlaid loss curves, printed and logged to the parent.
    """
    from attention_ref.config import ATTENTION_MODES
    from cli.training import Reporter, StopFlag

    names = [a.strip() for a in arms.split(",") if a.strip()]
    bad = [a for a in names if a not in ATTENTION_MODES]
    if not names or bad or len(set(names)) != len(names):
        raise CLIError(
            f"--arms must list distinct modes among {', '.join(ATTENTION_MODES)}, got {arms!r}"
        )
    console = _console()
    cfg, dataset = _training_setup(
        dict(config_overrides or {}), data, out_dir, tracking_uri, experiment, console, log_every
    )
    from attention_ref.tracking import comparison_markdown, run_ablation

    stop = StopFlag(console)
    reporters: list[Any] = []

    def callbacks_for(arm: str) -> Any:
        if reporters:
            reporters[-1].__exit__(None, None, None)
        rep = Reporter(console, arm, cfg.max_steps, log_every).__enter__()
        reporters.append(rep)
        return rep.callbacks()

    with stop:
        try:
            outcome = run_ablation(
                cfg, dataset, arms=names, out_root=out_dir, callbacks_for=callbacks_for,
                should_stop=stop,
            )  # fmt: skip
        finally:
            if reporters:
                reporters[-1].__exit__(None, None, None)
    if outcome.rows:
        table = comparison_markdown(outcome.rows, outcome.bigram_floor)
        if console.is_terminal:
            from rich.markdown import Markdown

            console.print(Markdown(table))
        else:  # logs and pipes get the markdown itself, whole and copy-pasteable
            sys.stdout.write(table)
    if outcome.status != "FINISHED":
        console.print(f"ablation {outcome.parent_run_id} {outcome.status}: {outcome.failed}")
        raise typer.Exit(stop.exit_code if stop() else 1)
    console.print(
        f"ablation run {outcome.parent_run_id}: comparison.md and plots/loss_curves.png logged; "
        "write the Q03 answer with: attnref report"
    )
    _ui_hint(console)


@app.command()
def report(
    experiment: Experiment = "shakespeare",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the markdown here instead of stdout.", show_default=False
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Also copy the figures, samples and table the book shows "
            "(docs/results) into this folder.",
            show_default=False,
        ),
    ] = None,
    data: DataPath = None,
    tracking_uri: TrackingUri = None,
) -> None:
    """Q03 answered from the measured runs (markdown): the table, the bigram floor, the why."""
    console = _console()
    dataset = _load_data(data, console)
    from attention_ref.tracking import TrackingError, build_report, connect, export_results

    try:
        connect(tracking_uri, None)  # read only: never create the experiment
        text = build_report(experiment, dataset)
        if export is not None:
            written = export_results(experiment, dataset, export)
            console.print(f"exported {len(written)} files to {export}")
    except TrackingError as e:
        raise CLIError(str(e)) from None
    except OSError as e:
        raise CLIError(f"cannot write {export}: {e.strerror or e}") from None
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise CLIError(f"cannot write {output}: {e.strerror or e}") from None
    console.print(f"wrote {output}")


@app.command()
def sample(
    run_id: Annotated[str, typer.Option("--run-id", help="A finished training run.")],
    prompt: Annotated[str, typer.Option("--prompt", help="Text to continue.")] = "\n",
    tokens: Annotated[int, typer.Option("--tokens", help="Characters to generate.")] = 300,
    temperature: Annotated[float, typer.Option("--temperature", help="Softmax temperature.")] = 1.0,
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k", help="Sample among the k most likely characters only.", show_default=False
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    tracking_uri: TrackingUri = None,
) -> None:
    """Generate Shakespeare-like text with the model a run logged (model/model.pt)."""
    if not 1 <= tokens <= 100_000:
        raise CLIError(f"--tokens must be between 1 and 100000, got {tokens}")
    if not temperature > 0:
        raise CLIError(f"--temperature must be > 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise CLIError(f"--top-k must be a positive integer, got {top_k}")
    text = prompt.replace("\\n", "\n")
    if not text:
        raise CLIError("--prompt must not be empty")
    from attention_ref.tracking import TrackingError, connect, load_model

    try:
        connect(tracking_uri, None)
        model, _, chars = load_model(run_id)
    except TrackingError as e:
        raise CLIError(str(e)) from None
    stoi = {c: i for i, c in enumerate(chars)}
    unknown = sorted({c for c in text if c not in stoi})
    if unknown:
        raise CLIError(f"--prompt has characters outside the model's vocabulary: {unknown!r}")
    import torch

    from attention_ref.train import generate

    g = torch.Generator().manual_seed(seed)
    idx = torch.tensor([[stoi[c] for c in text]])
    out = generate(model, idx, tokens, temperature=temperature, top_k=top_k, generator=g)
    sys.stdout.write("".join(chars[i] for i in out[0].tolist()) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``attnref`` console script; returns the exit code.

    Usage errors (Typer's and ours) become one line on stderr with exit code 2; package
    ``ValueError``/``TypeError`` from bad input are reported the same way.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="attnref", standalone_mode=False)
    except CLIError as e:
        print(f"attnref: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except typer.TyperException as e:
        print(f"attnref: error: {e.format_message()}", file=sys.stderr)
        return int(getattr(e, "exit_code", EXIT_USAGE)) or EXIT_USAGE
    except typer.Exit as e:
        return e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("attnref: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError) as e:
        print(f"attnref: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script wrapper: ``sys.exit(main())``."""
    sys.exit(main())


if __name__ == "__main__":
    run()
