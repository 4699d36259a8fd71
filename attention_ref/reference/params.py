r"""Parameter counts by shape (seed 003): why the number of heads does not change them.

Each head ``i`` has ``W_Q^(i), W_K^(i), W_V^(i) ∈ R^{d_model × d_k}`` with
``d_k = d_v = d_model / h``, and ``W_O ∈ R^{h·d_v × d_model}``. So

$$
3 \cdot h \cdot d_{model} \cdot \frac{d_{model}}{h} + h \frac{d_{model}}{h} \cdot d_{model}
= 4\, d_{model}^2
$$

for every ``h`` that divides ``d_model``: more heads means narrower heads, not more weights.

Grouped-query attention (`attention_ref.reference.gqa`) keeps ``h`` query heads but only
``g`` K/V heads (``g`` divides ``h``; ``g = h`` is MHA, ``g = 1`` is MQA), so ``W_K`` and
``W_V`` shrink to ``d_model × g·d_k`` and every token keeps ``g`` keys and values per layer
in the KV cache (`gqa_params`, `KVCacheParams`):

$$
\underbrace{d_{model} \cdot h d_k}_{W_Q} + \underbrace{2\, d_{model} \cdot g d_k}_{W_K, W_V}
+ \underbrace{h d_k \cdot d_{model}}_{W_O},\qquad
\text{KV bytes per token} = 2 \cdot L \cdot g \cdot d_k \cdot \text{bytes per number}
$$

Pure arithmetic on shapes: this module imports nothing (not even torch: the package's
re-exports are lazy, so ``attnref params`` runs without it); ``tests/`` check the figures
against the real `attention_ref.lm.model.CharGPT` and against the tensors of
`attention_ref.reference.gqa`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MAX_D_MODEL = 1 << 16
MAX_HEADS = 4096


@dataclass(frozen=True)
class AttentionParams:
    """Shapes and counts of one multi-head attention layer with ``h`` heads."""

    d_model: int
    h: int
    bias: bool

    @property
    def d_k(self) -> int:
        """Width of each head, ``d_model / h``."""
        return self.d_model // self.h

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every weight with its shape; per-head matrices listed once with a count ``h``."""
        d, dk, h = self.d_model, self.d_k, self.h
        out: dict[str, tuple[int, ...]] = {
            "W_Q^(i)": (d, dk),
            "W_K^(i)": (d, dk),
            "W_V^(i)": (d, dk),
            "W_O": (h * dk, d),
        }
        if self.bias:
            out |= {"b_Q^(i)": (dk,), "b_K^(i)": (dk,), "b_V^(i)": (dk,), "b_O": (d,)}
        return out

    @property
    def per_head(self) -> int:
        """Weights of one head's ``W_Q^(i), W_K^(i), W_V^(i)`` (and biases)."""
        n = 3 * self.d_model * self.d_k
        return n + 3 * self.d_k if self.bias else n

    @property
    def total(self) -> int:
        """All parameters of the layer: ``h`` heads plus ``W_O`` (and ``b_O``)."""
        w_o = self.h * self.d_k * self.d_model + (self.d_model if self.bias else 0)
        return self.h * self.per_head + w_o


def attention_params(d_model: int, h: int, *, bias: bool = True) -> AttentionParams:
    """Validated `AttentionParams`; ``ValueError`` if ``h`` does not divide ``d_model``."""
    if isinstance(d_model, bool) or not 1 <= d_model <= MAX_D_MODEL:
        raise ValueError(f"d_model must be between 1 and {MAX_D_MODEL}, got {d_model}")
    if isinstance(h, bool) or not 1 <= h <= MAX_HEADS:
        raise ValueError(f"the number of heads must be between 1 and {MAX_HEADS}, got {h}")
    if d_model % h != 0:
        raise ValueError(
            f"d_model={d_model} is not divisible by h={h}: d_k = d_model / h must be an integer"
        )
    return AttentionParams(d_model, h, bias)


def model_params(
    *,
    vocab_size: int = 65,
    block_size: int = 128,
    n_embd: int = 128,
    n_layer: int = 2,
    n_head: int = 2,
    attention: str = "multihead",
) -> int:
    """Parameters of `attention_ref.lm.model.CharGPT`, counted from its shapes.

    Embeddings ``V·d + T·d``; per block: LayerNorms ``2·2d`` (one when there is no attention),
    attention (``4d² + 4d``, or ``2d² + 2d`` for the uniform average: ``W_V``, ``W_O`` only),
    MLP ``d·4d + 4d + 4d·d + d``; final LayerNorm ``2d``; head ``d·V`` (no bias).
    """
    d = n_embd
    attn = {
        "multihead": attention_params(d, n_head).total,
        "uniform": 2 * d * d + 2 * d,
        "none": 0,
    }[attention]
    ln = 2 * d * (2 if attention != "none" else 1)
    mlp = d * 4 * d + 4 * d + 4 * d * d + d
    return vocab_size * d + block_size * d + n_layer * (ln + attn + mlp) + 2 * d + d * vocab_size


@dataclass(frozen=True)
class EncoderMLMConfig:
    """The sizes of a BERT/RoBERTa-style encoder with a masked-LM head (``*ForMaskedLM``)."""

    vocab_size: int
    hidden: int  # d_model
    layers: int
    heads: int
    intermediate: int  # the feed-forward width
    max_positions: int
    type_vocab_size: int


def encoder_mlm_params(cfg: EncoderMLMConfig) -> dict[str, int]:
    r"""Parameters of ``RobertaForMaskedLM`` (or ``BertForMaskedLM`` sizes), counted from shapes.

    With ``d = hidden``, ``V = vocab_size``, ``P = max_positions``, ``S = type_vocab_size``,
    ``F = intermediate`` and ``L = layers``, every bias and LayerNorm included:

    $$
    \underbrace{(V + P + S)\,d + 2d}_{\text{embeddings + LayerNorm}}
    + L\,\big(\underbrace{4(d^2 + d)}_{\text{attention}} + 2d
    + \underbrace{dF + F + Fd + d}_{\text{feed-forward}} + 2d\big)
    + \underbrace{d^2 + d + 2d + V}_{\text{MLM head}}
    $$

    Counted: the word, position and token-type embeddings and their LayerNorm; per layer the
    query, key, value and output projections (``d × d`` + bias each: ``4(d² + d)`` for every
    number of heads), the LayerNorm after attention, the feed-forward ``d → F → d`` and its
    LayerNorm; the MLM head's dense ``d × d`` + bias, its LayerNorm and the decoder's own bias
    of ``V``. Not counted: the decoder's weight, which is tied to the word embeddings
    (``model.num_parameters()`` and ``model.parameters()`` count a shared tensor once), and
    the pooler, which ``RobertaForMaskedLM`` does not build. ``heads`` enters only through
    `attention_params`, which checks that it divides ``hidden``.
    """
    d, F = cfg.hidden, cfg.intermediate
    attention = attention_params(d, cfg.heads).total  # 4(d² + d), whatever h
    layer = attention + 2 * d + (d * F + F) + (F * d + d) + 2 * d
    embeddings = (cfg.vocab_size + cfg.max_positions + cfg.type_vocab_size) * d + 2 * d
    mlm_head = d * d + d + 2 * d + cfg.vocab_size
    return {
        "embeddings": embeddings,
        "attention per layer": attention,
        "layer": layer,
        "layers": cfg.layers * layer,
        "MLM head": mlm_head,
        "total": embeddings + cfg.layers * layer + mlm_head,
    }


# --- grouped-query attention and the KV cache -------------------------------------------------

#: bytes per number of each dtype ``attnref params --dtype`` accepts (aliases included)
DTYPE_BYTES: Final[dict[str, int]] = {
    "float64": 8, "fp64": 8,
    "float32": 4, "fp32": 4,
    "bfloat16": 2, "bf16": 2,
    "float16": 2, "fp16": 2,
    "float8": 1, "fp8": 1,
}  # fmt: skip
MAX_LAYERS = 4096
MAX_CONTEXT = 1 << 24


def dtype_bytes(dtype: str) -> int:
    """Bytes per number of ``dtype`` (`DTYPE_BYTES`); ``ValueError`` listing the names otherwise."""
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of: {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[dtype]


@dataclass(frozen=True)
class GQAParams:
    r"""Shapes and counts of one grouped-query attention layer: ``h`` query heads of width
    ``d_k``, ``g`` K/V heads of the same width, query head ``i`` reading K/V head
    $\lfloor i g / h \rfloor$.

    ``d_k`` is its own number (Llama 3 8B: ``d_model = 4096``, ``h = 32``, ``d_k = 128``); with
    ``d_k = d_model / h`` and ``g = h`` the counts are `AttentionParams`' (a test checks it).
    """

    d_model: int
    h: int
    g: int
    d_k: int
    bias: bool

    @property
    def group_size(self) -> int:
        """Query heads per K/V head, ``h / g``."""
        return self.h // self.g

    @property
    def kind(self) -> str:
        """``MHA`` (``g = h``), ``MQA`` (``g = 1``) or ``GQA`` (in between)."""
        return "MHA" if self.g == self.h else "MQA" if self.g == 1 else "GQA"

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every weight with its shape, in the fused view: ``W_K`` is ``d_model × g·d_k``."""
        d, h, g, dk = self.d_model, self.h, self.g, self.d_k
        out: dict[str, tuple[int, ...]] = {
            "W_Q": (d, h * dk),
            "W_K": (d, g * dk),
            "W_V": (d, g * dk),
            "W_O": (h * dk, d),
        }
        if self.bias:
            out |= {"b_Q": (h * dk,), "b_K": (g * dk,), "b_V": (g * dk,), "b_O": (d,)}
        return out

    @property
    def query_output(self) -> int:
        """Weights of ``W_Q`` and ``W_O`` (and their biases): the part ``g`` does not change."""
        s = self.shapes()
        return sum(_count(s[k]) for k in ("W_Q", "W_O", "b_Q", "b_O") if k in s)

    @property
    def key_value(self) -> int:
        """Weights of ``W_K`` and ``W_V`` (and their biases): ``g`` times one K/V head's."""
        s = self.shapes()
        return sum(_count(s[k]) for k in ("W_K", "W_V", "b_K", "b_V") if k in s)

    @property
    def total(self) -> int:
        """All parameters of the layer."""
        return self.query_output + self.key_value


def _count(shape: tuple[int, ...]) -> int:
    """The number of entries of a tensor of ``shape``."""
    n = 1
    for s in shape:
        n *= s
    return n


def _positive(name: str, value: int, top: int) -> None:
    """``ValueError`` unless ``1 <= value <= top`` (a bool is not a size)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise ValueError(f"{name} must be between 1 and {top}, got {value}")


def gqa_params(
    d_model: int, h: int, g: int, *, d_k: int | None = None, bias: bool = True
) -> GQAParams:
    """Validated `GQAParams`; ``d_k`` defaults to ``d_model / h``.

    ``ValueError`` when a size is out of range, ``g`` does not divide ``h`` (every K/V head
    serves ``h / g`` query heads) or, without ``d_k``, ``h`` does not divide ``d_model``.
    """
    _positive("d_model", d_model, MAX_D_MODEL)
    _positive("the number of heads h", h, MAX_HEADS)
    _positive("the number of K/V heads g", g, MAX_HEADS)
    if h % g != 0:
        raise ValueError(
            f"g={g} K/V heads must divide h={h} query heads: each K/V head serves h/g of them"
        )
    if d_k is None:
        if d_model % h != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by h={h}: d_k = d_model / h must be an "
                "integer (or give d_k)"
            )
        d_k = d_model // h
    _positive("the head width d_k", d_k, MAX_D_MODEL)
    return GQAParams(d_model, h, g, d_k, bias)


@dataclass(frozen=True)
class KVCacheParams:
    r"""The KV cache of a decoder: every layer keeps, for every past token, its ``g`` keys and
    ``g`` values of width ``d_k``:

    $$
    \text{bytes per token} = 2 \cdot L \cdot g \cdot d_k \cdot b,\qquad
    \text{bytes of a sequence} = \text{context} \cdot \text{bytes per token}
    $$

    (``L`` layers, ``b`` bytes per number of ``dtype``; one sequence, batch 1).
    """

    layer: GQAParams
    layers: int
    context: int
    dtype: str

    @property
    def numbers_per_token(self) -> int:
        """Keys and values one token leaves in the cache, all layers: ``2·L·g·d_k``."""
        return 2 * self.layers * self.layer.g * self.layer.d_k

    @property
    def bytes_per_token(self) -> int:
        """`numbers_per_token` × the bytes of one number of ``dtype``."""
        return self.numbers_per_token * dtype_bytes(self.dtype)

    @property
    def bytes_per_sequence(self) -> int:
        """The cache of one sequence of ``context`` tokens."""
        return self.context * self.bytes_per_token

    @property
    def weight_bytes(self) -> int:
        """The attention weights of all ``L`` layers in ``dtype``, for comparison."""
        return self.layers * self.layer.total * dtype_bytes(self.dtype)


def kv_cache_params(layer: GQAParams, *, layers: int, context: int, dtype: str) -> KVCacheParams:
    """Validated `KVCacheParams` (``ValueError`` for an unknown dtype or a size out of range)."""
    _positive("the number of layers", layers, MAX_LAYERS)
    _positive("the context (tokens)", context, MAX_CONTEXT)
    dtype_bytes(dtype)
    return KVCacheParams(layer, layers, context, dtype)
