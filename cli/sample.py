"""``attnref sample``: text from a trained model: a run's, a LoggedModel's, or the latest run's.

A run of a local sqlite store is found and loaded without importing MLflow
(`attention_ref.experiments.local_store`: the store's own database and the run's own
``model/model.pt``) and sampled without importing torch (`attention_ref.lm.numpy_model`, the
same characters as torch's model draws); ``--model`` URIs, servers and artifacts elsewhere go
through MLflow's client (`_checkpoint`) and torch. Either way the same run, the same file and
the same text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attention_ref.cli.errors import CLIError
from attention_ref.cli.options import (
    DEFAULT_EXPERIMENT,
    TrackingUri,
    connect_existing_store,
    existing_store_uri,
    experiment_option,
)

if TYPE_CHECKING:
    from attention_ref.lm.checkpoint import Checkpoint


def _latest_note(name: str, run_id: str) -> None:
    from attention_ref.render.printable import printable

    line = f"attnref: sampling the latest finished run, {name} ({run_id})"
    print(printable(line), file=sys.stderr)  # a run's name: anything its owner chose


def _local_model_file(
    uri: str, run_id: str | None, arm: str | None, experiment: str
) -> Path | None:
    """The ``model.pt`` to sample, read from a local sqlite store without MLflow; ``None``
    when the store (or the run's artifacts) must be read through MLflow's client."""
    from attention_ref.experiments.local_store import LocalStore, LocalStoreUnavailableError
    from attention_ref.experiments.store import TrackingError

    store = LocalStore.open(uri)
    if store is None:
        return None
    try:
        with store:
            if run_id is None:
                run_id, name = store.latest_model_run(experiment)
                try:
                    path = store.model_file(run_id)
                except TrackingError:  # said before the error, as MLflow's path does
                    _latest_note(name, run_id)
                    raise
                _latest_note(name, run_id)
                return path
            return store.model_file(store.resolve_run(run_id, arm))
    except LocalStoreUnavailableError:
        return None
    except TrackingError as e:
        raise CLIError(str(e)) from None


def _checkpoint(
    run_id: str | None, model: str | None, arm: str | None, experiment: str
) -> Checkpoint:
    """The model to sample through MLflow's client, from the first source given: ``--model``,
    ``--run-id``, else the latest finished training run of ``experiment``."""
    from attention_ref.experiments import results
    from attention_ref.experiments.store import TrackingError

    try:
        if model is not None:
            return results.load_model_uri(model)
        if run_id is None:
            run_id = results.latest_model_run(experiment)
            import mlflow

            _latest_note(mlflow.get_run(run_id).info.run_name, run_id)
        return results.load_model(results.resolve_run(run_id, arm))
    except TrackingError as e:
        raise CLIError(str(e)) from None


def sample(
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            help="A finished training run, or an ablation's parent with --arm. "
            "\\[default: the latest finished training run of --experiment]",
            show_default=False,
            metavar="RUN_ID",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="A logged or registered model: models:/m-… or models:/NAME/VERSION "
            "(instead of --run-id). \\[default: none]",
            show_default=False,
            metavar="URI",
        ),
    ] = None,
    arm: Annotated[
        str | None,
        typer.Option(
            "--arm",
            help="With an ablation's or a heads sweep's parent run: which arm (none, 4, …); "
            "without it, the parent's arms are listed. \\[default: no arm]",
            show_default=False,
            metavar="ARM",
        ),
    ] = None,
    prompt: Annotated[
        str, typer.Option("--prompt", help="Text to continue (\\n: a new line).", metavar="TEXT")
    ] = "\\n",
    tokens: Annotated[
        int, typer.Option("--tokens", help="Characters to generate.", metavar="N")
    ] = 300,
    temperature: Annotated[
        float, typer.Option("--temperature", help="Softmax temperature.", metavar="FLOAT")
    ] = 1.0,
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k",
            help="Sample among the k most likely characters only. \\[default: all]",
            show_default=False,
            metavar="K",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.", metavar="N")] = 0,
    experiment: experiment_option("The experiment whose latest run is sampled.") = None,  # type: ignore[valid-type]
    tracking_uri: TrackingUri = None,
) -> None:
    """Generate Shakespeare-like text with a trained model (the latest run's by default)."""
    if not 1 <= tokens <= 100_000:
        raise CLIError(f"--tokens must be between 1 and 100000, got {tokens}")
    if not temperature > 0:
        raise CLIError(f"--temperature must be > 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise CLIError(f"--top-k must be a positive integer, got {top_k}")
    if model is not None and (run_id is not None or arm is not None):
        raise CLIError("--model names the model itself; leave out --run-id and --arm")
    if model is not None and not model.startswith("models:/"):
        raise CLIError(
            f"--model must be a models:/ URI (models:/m-… or models:/NAME/1), got {model!r}"
        )
    text = prompt.replace("\\n", "\n")
    if not text:
        raise CLIError("--prompt must not be empty")
    if run_id is None and arm is not None:
        raise CLIError("--arm picks an arm of the ablation given with --run-id")
    experiment = experiment or DEFAULT_EXPERIMENT
    uri = existing_store_uri(tracking_uri)
    local = None if model is not None else _local_model_file(uri, run_id, arm, experiment)
    if local is not None:
        fast = _sample_without_torch(local, text, tokens, temperature, top_k, seed)
        if fast is not None:
            sys.stdout.write(fast + "\n")
            return
        import pickle

        from attention_ref.lm.checkpoint import Checkpoint

        try:
            checkpoint = Checkpoint.load(local)
        except (OSError, EOFError, RuntimeError, KeyError, pickle.UnpicklingError) as e:
            raise CLIError(f"cannot read the model file {local}: {e!r}") from None
    else:
        connect_existing_store(tracking_uri)
        checkpoint = _checkpoint(run_id, model, arm, experiment)
    unknown = checkpoint.vocab.unknown(text)
    if unknown:
        raise CLIError(f"--prompt has characters outside the model's vocabulary: {unknown!r}")
    from attention_ref.lm.sampling import SampleParams, sample_text

    params = SampleParams(
        max_new_tokens=tokens, temperature=temperature, top_k=top_k or 0, seed=seed
    )
    sys.stdout.write(sample_text(checkpoint, text, params) + "\n")


def _sample_without_torch(
    path: Path, text: str, tokens: int, temperature: float, top_k: int | None, seed: int
) -> str | None:
    """The sampled text computed in numpy (`attention_ref.lm.numpy_model`: no torch to import,
    the same characters); ``None`` when that module does not know the file or the model (then
    torch samples it)."""
    from attention_ref.lm.numpy_model import NumpyCheckpoint, UnsupportedModelError, sample_text

    try:
        checkpoint = NumpyCheckpoint.load(path)
    except UnsupportedModelError:
        return None
    except OSError as e:
        raise CLIError(f"cannot read the model file {path}: {e!r}") from None
    unknown = sorted({c for c in text if c not in checkpoint.chars})
    if unknown:
        raise CLIError(f"--prompt has characters outside the model's vocabulary: {unknown!r}")
    return sample_text(
        checkpoint, text, tokens=tokens, temperature=temperature, top_k=top_k, seed=seed
    )
