r"""The arms' models read from the models themselves: which tensors are which part, and the
weights the uniform arm averages with.

`part_of` names the part of `attention_ref.lm.model.CharGPT` a parameter belongs to from its
name (``blocks.0.attn.qkv.weight`` is attention); `model_parameter_groups` counts a model's
parameters by part, the model built from a run's recorded options on PyTorch's ``meta``
device (shapes only, no memory, no arithmetic). `uniform_weights` reads the uniform arm's
$A$ off the layer itself: with $W_V = W_O = I$ and no biases its output on $X = I_n$ is
$A I_n W_V W_O = A$.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import torch

from attention_ref.experiments.findings import ArmRow, Part
from attention_ref.lm.config import ModelConfig
from attention_ref.lm.model import CharGPT, UniformCausalAttention

#: a parameter's name -> its part; a name no pattern matches is refused (`part_of`)
PART_PATTERNS: tuple[tuple[re.Pattern[str], Part], ...] = (
    (re.compile(r"(tok|pos)_emb\.weight"), Part.EMBEDDINGS),
    (re.compile(r"blocks\.\d+\.attn\.\w+\.(weight|bias)"), Part.ATTENTION),
    (re.compile(r"blocks\.\d+\.ln_1\.(weight|bias)"), Part.ATTENTION_NORM),
    (re.compile(r"blocks\.\d+\.mlp\.\w+\.(weight|bias)"), Part.MLP),
    (re.compile(r"blocks\.\d+\.ln_2\.(weight|bias)"), Part.MLP_NORM),
    (re.compile(r"ln_f\.(weight|bias)"), Part.FINAL_NORM),
    (re.compile(r"head\.weight"), Part.HEAD),
)

#: the recorded options (flat `TrainConfig` keys) that shape the model
SHAPE_OPTIONS = ("n_embd", "n_layer", "n_head", "block_size", "attention")


def part_of(name: str) -> Part:
    """The part a parameter of `CharGPT` belongs to; ``ValueError`` for a name not known."""
    for pattern, part in PART_PATTERNS:
        if pattern.fullmatch(name):
            return part
    raise ValueError(f"parameter {name!r} belongs to no known part of the model")


def parameter_groups(named: Iterable[tuple[str, int]]) -> dict[str, int]:
    """``(name, numel)`` pairs summed by `part_of`, in `Part`'s order (parts with none left
    out)."""
    counts: dict[str, int] = {}
    for name, n in named:
        part = part_of(name)
        counts[part] = counts.get(part, 0) + n
    return {p.value: counts[p] for p in Part if p in counts}


def model_parameter_groups(options: Mapping[str, str], vocab_size: int) -> dict[str, int]:
    """The parameters by part of the model a run with these recorded ``options`` (strings, as
    MLflow keeps them) trains on a vocabulary of ``vocab_size``; ``ValueError`` when an option
    that shapes the model is missing."""
    missing = [k for k in SHAPE_OPTIONS if k not in options]
    if missing:
        raise ValueError(f"the run does not record {', '.join(missing)}: no model to count")
    cfg = ModelConfig(
        vocab_size=vocab_size,
        block_size=int(options["block_size"]),
        n_embd=int(options["n_embd"]),
        n_layer=int(options["n_layer"]),
        n_head=int(options["n_head"]),
        attention=options["attention"],  # type: ignore[arg-type]  # checked by ModelConfig
        # today's attention (recorded since these options exist; before, the defaults)
        kv_heads=int(options.get("kv_heads", 0)),
        pos=options.get("pos", "learned"),
        window=int(options.get("window", 0)),
    )
    with torch.device("meta"):
        model = CharGPT(cfg)
    return parameter_groups((n, p.numel()) for n, p in model.named_parameters() if p.requires_grad)


def with_parameter_groups(rows: Sequence[ArmRow], vocab_size: int) -> list[ArmRow]:
    """``rows``, each given the breakdown of its model where it has none and its options say
    what the model is (a row recording too little keeps an empty breakdown)."""
    for r in rows:
        if not r.param_groups and all(k in r.config for k in SHAPE_OPTIONS):
            r.param_groups = model_parameter_groups(r.config, vocab_size)
    return list(rows)


def uniform_weights(n: int) -> list[list[float]]:
    """The uniform arm's $A$ for ``n`` positions, read off `UniformCausalAttention`: ``W_V``
    and ``W_O`` set to the identity, no biases, the input $X = I_n$ (one batch), in float64."""
    layer = UniformCausalAttention(ModelConfig(n_embd=n, n_head=1, block_size=max(n, 1)))
    layer = layer.to(torch.float64).eval()
    with torch.no_grad():
        for lin in (layer.value, layer.proj):
            lin.weight.copy_(torch.eye(n))
            lin.bias.zero_()
        A = layer(torch.eye(n, dtype=torch.float64).unsqueeze(0))[0]  # (1, n, n) -> (n, n)
    return A.tolist()
