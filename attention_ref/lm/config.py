"""What defines a model and a training run: `ModelConfig`, `TrainConfig`, `AttentionMode`.

Imports nothing (no torch, nothing of attnref): the CLI builds its ``--options`` from these
fields at start-up. `TrainConfig` holds a `ModelConfig` (as minGPT composes its configs);
variants are made with `dataclasses.replace`. Each value is validated once, where it enters:
in ``__post_init__``, so a config that exists is a config that can work. The one check that
needs the data (the block must fit in each split) is `TrainConfig.check_fits`.

The flat view (`TrainConfig.to_flat` / `TrainConfig.from_flat`) is the one the CLI options,
the MLflow params, ``config.json`` and the checkpoints use: every option field, by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any


class AttentionMode(StrEnum):
    """The attention sub-layer of every block (Q02 and the ablation of Q03)."""

    MULTIHEAD = "multihead"  # masked multi-head self-attention (Q02)
    NONE = "none"  # no attention sub-layer (Q03)
    UNIFORM = "uniform"  # causal mean of the values: context mixed, nothing learns where to look


ATTENTION_MODES: tuple[str, ...] = tuple(m.value for m in AttentionMode)
#: how the model knows where a character is (``--pos``)
POSITIONS: tuple[str, ...] = ("learned", "rope")
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda", "mps")
#: ``auto``: bf16 autocast on a CPU with avx512_bf16 / amx_bf16 and on a GPU that computes
#: bf16 (``torch.cuda.is_bf16_supported()``), fp32 elsewhere; see
#: `attention_ref.lm.train.resolve_precision`
PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16")
#: ``--cuda-graph``: the whole training step captured in one CUDA graph and replayed. ``auto``
#: and ``on``: on CUDA (``on`` says so where it cannot be), ``off``: the eager step everywhere;
#: see `attention_ref.lm.train.capture_step`
CUDA_GRAPH_MODES: tuple[str, ...] = ("auto", "on", "off")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _positive_ints(obj: object, names: tuple[str, ...]) -> None:
    for name in names:
        v = getattr(obj, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{_option(name)} must be a positive integer, got {v!r}")


@dataclass(frozen=True)
class ModelConfig:
    """Model hyper-parameters; the defaults are the homework's Q02 (128, 2 layers, 2 heads)."""

    vocab_size: int = 65
    block_size: int = 128
    n_embd: int = 128
    n_layer: int = 2
    n_head: int = 2
    dropout: float = 0.0
    attention: AttentionMode = AttentionMode.MULTIHEAD
    #: K/V heads shared by the ``n_head`` query heads (grouped-query attention); 0: one per
    #: query head (multi-head attention, Q02), 1: multi-query attention
    kv_heads: int = 0
    #: positions: "learned" (a trained table added to the tokens, Q02) or "rope" (Q and K
    #: rotated by their positions, RoFormer; no table)
    pos: str = "learned"
    #: sliding-window causal mask: each position sees itself and the ``window - 1`` before it;
    #: 0: every position before it (the causal mask of Q02)
    window: int = 0

    def __post_init__(self) -> None:
        _positive_ints(self, ("vocab_size", "n_embd", "n_layer", "n_head", "block_size"))
        if self.n_embd % self.n_head:
            raise ValueError(
                f"--n-embd {self.n_embd} is not divisible by --n-head {self.n_head}: "
                f"each head needs d_k = n_embd / n_head columns"
            )
        if not 0 <= self.dropout < 1:
            raise ValueError(f"--dropout must be in [0, 1), got {self.dropout}")
        if self.attention not in ATTENTION_MODES:
            raise ValueError(
                f"--attention must be one of {', '.join(ATTENTION_MODES)}, got {self.attention!r}"
            )
        object.__setattr__(self, "attention", AttentionMode(self.attention))
        g = self.kv_heads
        if isinstance(g, bool) or not isinstance(g, int) or g < 0:
            raise ValueError(f"--kv-heads must be an integer >= 0, got {g!r}")
        if g and self.n_head % g:
            raise ValueError(
                f"--kv-heads {g} does not divide --n-head {self.n_head}: each K/V head is shared "
                "by the same number of query heads"
            )
        if g and self.attention is not AttentionMode.MULTIHEAD:
            raise ValueError(
                f"--kv-heads is for multihead attention, not --attention {self.attention}"
            )
        if self.pos not in POSITIONS:
            raise ValueError(f"--pos must be one of {', '.join(POSITIONS)}, got {self.pos!r}")
        w = self.window
        if isinstance(w, bool) or not isinstance(w, int) or w < 0:
            raise ValueError(f"--window must be an integer >= 0, got {w!r}")
        for name, used in (("--pos rope", self.pos == "rope"), ("--window", w > 0)):
            if used and self.attention is not AttentionMode.MULTIHEAD:
                raise ValueError(
                    f"{name} is for multihead attention, not --attention {self.attention}"
                )
        if self.pos == "rope" and self.d_k % 2:
            raise ValueError(
                f"--pos rope rotates pairs of coordinates: the head width d_k = {self.d_k} must "
                "be even"
            )

    @property
    def d_k(self) -> int:
        """Width of each head, ``n_embd / n_head``."""
        return self.n_embd // self.n_head

    @property
    def n_kv_head(self) -> int:
        """The K/V heads: ``kv_heads``, or one per query head (``n_head``) when it is 0."""
        return self.kv_heads or self.n_head


#: the model fields a user chooses (the vocabulary comes from the data)
MODEL_OPTIONS: tuple[str, ...] = (
    "n_embd",
    "n_layer",
    "n_head",
    "kv_heads",
    "pos",
    "window",
    "block_size",
    "dropout",
    "attention",
)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a run: the model, then the optimisation and the bookkeeping."""

    model: ModelConfig = field(default_factory=ModelConfig)
    # tuned for the Q02 shape (benchmarks/RESULTS.md, "Q02 recipe"): 16 sequences a step learn
    # more per character than 32, and bear a higher peak rate; 6000 steps of 16 x 128
    # characters reach 1.5444 on a 409,600-character validation sample (2600 of 32 at 3e-3:
    # 1.5744)
    batch_size: int = 16
    max_steps: int = 6000
    lr: float = 5e-3
    min_lr: float = 1e-4
    warmup_steps: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_interval: int = 500
    eval_batches: int = 40  # 40 x 16 windows: the 640 of 20 x 32 before, at the same cost
    sample_tokens: int = 200
    seed: int = 1337
    device: str = "auto"
    threads: int = 0  # torch intra-op threads; 0 = torch's default
    precision: str = "auto"  # auto | fp32 | bf16 (autocast of the forward pass)
    #: auto | on | off: the step as one CUDA graph (CUDA only; the CPU runs the same step eagerly)
    cuda_graph: str = "auto"

    def __post_init__(self) -> None:
        _positive_ints(self, ("batch_size", "max_steps", "eval_interval", "eval_batches"))
        for name in ("warmup_steps", "sample_tokens", "threads"):
            v = getattr(self, name)
            if v < 0:
                raise ValueError(f"{_option(name)} must be >= 0, got {v}")
        if not (self.lr > 0 and 0 <= self.min_lr <= self.lr):
            raise ValueError(
                f"need 0 < --lr and 0 <= --min-lr <= --lr, got {self.lr} and {self.min_lr}"
            )
        if self.grad_clip <= 0 or self.weight_decay < 0:
            raise ValueError("--grad-clip must be > 0 and --weight-decay >= 0")
        if self.device not in DEVICES:
            raise ValueError(f"unknown device {self.device!r}; choose one of: {', '.join(DEVICES)}")
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"--precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}"
            )
        if self.cuda_graph not in CUDA_GRAPH_MODES:
            raise ValueError(
                f"--cuda-graph must be one of {', '.join(CUDA_GRAPH_MODES)}, "
                f"got {self.cuda_graph!r}"
            )

    @property
    def attention(self) -> AttentionMode:
        """The model's attention mode (the ablation's arm)."""
        return self.model.attention

    def check_fits(self, data_tokens: int) -> None:
        """``ValueError`` unless a block (plus its next-character target) fits in the split."""
        if self.model.block_size >= data_tokens:
            raise ValueError(
                f"--block-size {self.model.block_size} is larger than the data split "
                f"({data_tokens} tokens)"
            )

    def with_options(self, **changes: Any) -> TrainConfig:
        """A copy with option fields changed by flat name (model fields included)."""
        model = {k: v for k, v in changes.items() if k in MODEL_OPTIONS}
        own = {k: v for k, v in changes.items() if k not in MODEL_OPTIONS}
        unknown = sorted(set(own) - {f.name for f in fields(self)} - {"model"})
        if unknown:
            raise ValueError(f"unknown option(s): {', '.join(map(_option, unknown))}")
        return replace(self, model=replace(self.model, **model), **own)

    def to_flat(self) -> dict[str, Any]:
        """Every option field by name, in option order (MLflow params, ``config.json``)."""
        out: dict[str, Any] = {k: getattr(self.model, k) for k in MODEL_OPTIONS}
        out["attention"] = str(self.model.attention)
        out |= {f.name: getattr(self, f.name) for f in fields(self) if f.name != "model"}
        return out

    @classmethod
    def from_flat(cls, d: dict[str, Any]) -> TrainConfig:
        """Inverse of `to_flat`, ignoring unknown keys (``vocab_size`` is kept if present)."""
        own = {f.name for f in fields(cls)} - {"model"}
        model_keys = {*MODEL_OPTIONS, "vocab_size"}
        return cls(
            model=ModelConfig(**{k: v for k, v in d.items() if k in model_keys}),
            **{k: v for k, v in d.items() if k in own},
        )


#: the longest warm-up, as a fraction of ``max_steps`` (`fit_warmup`)
MAX_WARMUP_FRACTION = 0.5


def fit_warmup(cfg: TrainConfig, *, given: bool = True) -> tuple[TrainConfig, str | None]:
    r"""``cfg`` with its warm-up cut to `MAX_WARMUP_FRACTION` of its steps, and the line that
    says so (``None``: nothing changed).

    The schedule (`attention_ref.lm.train.lr_at`) rises linearly for ``warmup_steps`` steps,
    then decays along a cosine until ``max_steps``. With ``--max-steps 60`` and the default
    100 warm-up steps the run would end with the rate still rising, never decayed; the cut
    gives the decay at least the other half of the run:
    $w \leftarrow \min(w, \lfloor f \cdot \mathrm{max\_steps} \rfloor)$ with $f = 0.5$.
    For new runs only: a resumed run keeps the schedule it started with. The line names
    ``--warmup-steps`` as the user's only when they ``given`` it; else it says it is the default.
    """
    limit = int(cfg.max_steps * MAX_WARMUP_FRACTION)
    if cfg.warmup_steps <= limit:
        return cfg, None
    what = (
        f"--warmup-steps {cfg.warmup_steps}"
        if given
        else f"the default warm-up of {cfg.warmup_steps} steps"
    )
    note = (
        f"{what} is more than {MAX_WARMUP_FRACTION:.0%} of "
        f"--max-steps {cfg.max_steps}: warming up for {limit} steps, then the cosine decay "
        f"over the other {cfg.max_steps - limit}"
    )
    return replace(cfg, warmup_steps=limit), note


def option_defaults() -> dict[str, Any]:
    """Each option field with its default, in option order (the CLI's ``--options``)."""
    return TrainConfig().to_flat()


#: one line per option field: the CLI's option help and the book's table
CONFIG_HELP: dict[str, str] = {
    "n_embd": "Embedding width d_model (Q02: 128).",
    "n_layer": "Number of transformer blocks (Q02: 2).",
    "n_head": "Attention heads per block; d_k = n_embd / n_head (Q02: 2).",
    "kv_heads": "K/V heads shared by the query heads (grouped-query attention; 1: multi-query; "
    "0: one per head, Q02).",
    "pos": "learned (a position table, Q02) or rope (rotary: Q and K rotated by position).",
    "window": "Sliding-window mask: each character sees itself and the window - 1 before it "
    "(0: all before it, Q02).",
    "block_size": "Context length T in characters.",
    "dropout": "Dropout on attention weights, residual branches and embeddings.",
    "attention": "multihead (Q02), none (Q03: no attention sub-layer) or uniform (causal mean).",
    "batch_size": "Sequences per step.",
    "max_steps": "Optimizer steps; the cosine schedule ends here.",
    "lr": "Peak learning rate (AdamW) after warm-up.",
    "min_lr": "Learning rate at the end of the cosine decay.",
    "warmup_steps": "Linear warm-up steps (at most half of --max-steps: a longer one is cut, "
    "and said).",
    "weight_decay": "AdamW weight decay on matrices (not on biases, LayerNorm gains).",
    "grad_clip": "Clip the global gradient L2 norm to this value.",
    "eval_interval": "Evaluate (and sample) every this many steps.",
    "eval_batches": "Fixed batches per evaluation, for each split.",
    "sample_tokens": "Characters sampled at each evaluation.",
    "seed": "Seed of initialisation, batches, dropout and samples.",
    "device": "auto (cuda, then mps, then cpu), cpu, cuda or mps.",
    "threads": "torch CPU threads (0: torch's default).",
    "precision": "auto (bf16 autocast on a CPU with bf16 instructions or a GPU with bf16, else "
    "fp32), fp32 or bf16.",
    "cuda_graph": "auto or on (on CUDA the whole step is one CUDA graph, replayed), or off.",
}


#: ``attnref train --preset NAME``: a whole recipe by name (options given beside it win).
#: ``q02`` is the defaults (the homework's Q02); ``nanogpt-shakespeare-char`` is nanoGPT's
#: published "baby GPT" on Shakespeare (karpathy/nanoGPT, ``config/train_shakespeare_char.py``:
#: 6 layers, 6 heads, 384 wide, block 256, dropout 0.2, batch 64, lr 1e-3 to 1e-4 over 5,000
#: steps after 100 of warm-up, AdamW betas (0.9, 0.99), weight decay 0.1, clip 1.0, an
#: evaluation of 200 batches every 250 steps). What stays attnref's own: the model's biases,
#: its untied head and torch's default initialisation (nanoGPT ties the head to the token
#: embedding, has no biases and draws weights with std 0.02), and the evaluation's batches,
#: drawn once and kept (nanoGPT draws new ones at each evaluation).
PRESETS: dict[str, dict[str, Any]] = {
    "q02": {},
    "nanogpt-shakespeare-char": {
        "n_layer": 6,
        "n_head": 6,
        "n_embd": 384,
        "block_size": 256,
        "dropout": 0.2,
        "batch_size": 64,
        "max_steps": 5000,
        "lr": 1e-3,
        "min_lr": 1e-4,
        "warmup_steps": 100,
        "weight_decay": 0.1,
        "grad_clip": 1.0,
        "eval_interval": 250,
        "eval_batches": 200,
    },
}

#: one line per preset: ``--preset``'s help and the book
PRESET_HELP: dict[str, str] = {
    "q02": "the homework's Q02 (the defaults: 128 wide, 2 layers, 2 heads, block 128)",
    "nanogpt-shakespeare-char": "nanoGPT's baby GPT on Shakespeare (6 layers, 6 heads, 384 "
    "wide, block 256, dropout 0.2, batch 64, 5,000 steps)",
}


def preset_config(name: str, **options: Any) -> TrainConfig:
    """The `TrainConfig` of preset ``name`` with ``options`` (flat names) on top of it:
    defaults < preset < options. ``ValueError`` for a name not in `PRESETS`."""
    if name not in PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(PRESETS)}, got {name!r}")
    return TrainConfig().with_options(**{**PRESETS[name], **options})
