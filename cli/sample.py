"""``attnref sample``: text from the model a finished run logged (``model/model.pt``)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from cli.errors import CLIError
from cli.options import TrackingUri, connect_store


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
    connect_store(tracking_uri, None)
    from attention_ref.experiments.results import load_model
    from attention_ref.experiments.store import TrackingError

    try:
        checkpoint = load_model(run_id)
    except TrackingError as e:
        raise CLIError(str(e)) from None
    unknown = checkpoint.vocab.unknown(text)
    if unknown:
        raise CLIError(f"--prompt has characters outside the model's vocabulary: {unknown!r}")
    import torch

    from attention_ref.lm.sampling import generate

    g = torch.Generator().manual_seed(seed)
    idx = torch.tensor([checkpoint.vocab.encode(text)])
    out = generate(
        checkpoint.build_model(), idx, tokens, temperature=temperature, top_k=top_k, generator=g
    )
    sys.stdout.write(checkpoint.vocab.decode(out[0].tolist()) + "\n")
