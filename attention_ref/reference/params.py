r"""Parameter counts by shape (seed 003): why the number of heads does not change them.

Each head ``i`` has ``W_Q^(i), W_K^(i), W_V^(i) ∈ R^{d_model × d_k}`` with
``d_k = d_v = d_model / h``, and ``W_O ∈ R^{h·d_v × d_model}``. So

$$
3 \cdot h \cdot d_{model} \cdot \frac{d_{model}}{h} + h \frac{d_{model}}{h} \cdot d_{model}
= 4\, d_{model}^2
$$

for every ``h`` that divides ``d_model``: more heads means narrower heads, not more weights.
Pure arithmetic on shapes (this module uses no torch, though importing it runs
``attention_ref.reference``, which does); ``tests/`` check the figures against the real
`attention_ref.lm.model.CharGPT`.
"""

from __future__ import annotations

from dataclasses import dataclass

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
