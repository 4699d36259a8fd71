r"""Sampling characters from the model: temperature and top-k, one character at a time.

Generation keeps a `attention_ref.lm.model.KVCache`: while the text fits in the block, each
new character runs the model on that one position (its keys and values join the cache); the
positions already seen are not computed again. Once the text is longer than ``block_size`` the
window slides, every kept character moves to a new (learned, absolute) position, and the model
defines the next distribution on the last ``block_size`` characters: that window is computed
again, as the uncached loop does, except that the last block computes its last position alone
(``last_only``: the only logits drawn from; a third of the window's work at the Q02 shape).
``use_cache=False`` is the plain loop, every position of the window through every block (the
slow twin that ``tests/lm/test_sampling.py`` compares token for token).

A single sequence on the CPU is too small to share among threads: the synchronisation costs
more than it saves, and on a busy machine much more. `generate` runs batch-1 CPU generation on
one thread and restores the thread count afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from attention_ref.lm.draw import draw_index, uniforms
from attention_ref.lm.model import CharGPT, KVCache

if TYPE_CHECKING:
    from attention_ref.lm.checkpoint import Checkpoint

__all__ = ["SampleParams", "generate", "one_thread_for", "sample_text"]


@contextmanager
def one_thread_for(idx: Tensor) -> Iterator[None]:
    """Run the block on one intra-op thread when ``idx`` is a single sequence on the CPU."""
    before = torch.get_num_threads()
    single = idx.device.type == "cpu" and idx.size(0) == 1 and before != 1
    if single:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if single:
            torch.set_num_threads(before)


def _next_token(
    logits: Tensor, temperature: float, top_k: int | None, generator: torch.Generator | None
) -> Tensor:
    """One draw from ``softmax(z / τ)`` (top-k restricted) for each row of ``logits`` ``(B, V)``."""
    logits = logits / temperature  # (B, vocab)
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits.float(), dim=-1)
    return torch.multinomial(probs.cpu(), 1, generator=generator)  # (B, 1)


@torch.no_grad()
def generate(
    model: CharGPT,
    idx: Tensor,
    new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    u: Iterator[float] | None = None,
) -> Tensor:
    r"""Sample ``new_tokens`` characters after ``idx`` ``(1, T)``; returns ``(1, T + new)``.

    At each step $p = \operatorname{softmax}(z_T / \tau)$ over the last position's logits
    $z_T$, restricted to the ``top_k`` largest when given. ``use_cache`` (the default) reuses
    the keys and values of the positions already computed; ``False`` recomputes the whole
    window at every step. Both draw the same characters for the same ``generator``. With ``u``
    (a stream of uniforms, one batch-1 sequence) each character is drawn by
    `attention_ref.lm.draw.draw_index` instead of ``torch.multinomial``: what ``attnref
    sample`` does, with or without torch (`attention_ref.lm.numpy_model`).
    """
    if u is not None and idx.size(0) != 1:
        raise ValueError(f"u draws for one sequence; idx holds {idx.size(0)}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    block = model.cfg.block_size
    was_training = model.training
    model.eval()
    try:
        with one_thread_for(idx):
            cache: KVCache | None = None
            fresh = idx[:, -block:]  # what the next forward pass has not seen yet
            for _ in range(new_tokens):
                if not use_cache:
                    logits, _ = model(idx[:, -block:])
                elif idx.size(1) <= block:  # the text still fits: extend the cache
                    if cache is None:
                        cache = model.new_cache()
                    logits, _ = model(fresh, cache=cache)
                else:  # the window slides: every position changes, compute it again
                    logits, _ = model(idx[:, -block:], last_only=True)
                if u is None:
                    nxt = _next_token(logits[:, -1, :], temperature, top_k, generator)
                else:
                    row = logits[0, -1].float().cpu().numpy()
                    nxt = torch.tensor([[draw_index(row, temperature, top_k, next(u))]])
                nxt = nxt.to(idx.device)
                idx = torch.cat([idx, nxt], dim=1)  # (1, T) -> (1, T + 1)
                fresh = nxt
    finally:
        model.train(was_training)
    return idx


@dataclass(frozen=True)
class SampleParams:
    """How ``attnref sample`` and the LoggedModel's ``predict``
    (`attention_ref.experiments.logged_model.CharSampler`) sample; each field is a param of
    the model's signature."""

    max_new_tokens: int = 200
    temperature: float = 1.0
    top_k: int = 0  # 0: all characters (a signature's params cannot be None)
    seed: int = 0

    @classmethod
    def from_params(cls, params: dict[str, Any] | None) -> SampleParams:
        """The sampling settings of a ``predict`` call (missing ones keep their default)."""
        given = {k: v for k, v in (params or {}).items() if k in cls.__dataclass_fields__}
        p = cls(**given)
        if not 0 <= p.max_new_tokens <= 100_000:
            raise ValueError(f"max_new_tokens must be in [0, 100000], got {p.max_new_tokens}")
        if not p.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {p.temperature}")
        if p.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0: no cut), got {p.top_k}")
        return p


def sample_text(checkpoint: Checkpoint, prompt: str, p: SampleParams) -> str:
    """``prompt`` continued by ``p.max_new_tokens`` characters sampled from ``checkpoint``,
    each drawn with ``u`` from ``random.Random(p.seed)`` (`attention_ref.lm.draw`): the text
    that `attention_ref.lm.numpy_model.sample_text` writes without torch."""
    unknown = checkpoint.vocab.unknown(prompt)
    if not prompt or unknown:
        raise ValueError(
            f"a prompt needs at least one character, all in the model's vocabulary; "
            f"{prompt!r} has {unknown!r}"
        )
    idx = torch.tensor([checkpoint.vocab.encode(prompt)])
    out = generate(
        checkpoint.build_model(), idx, p.max_new_tokens, temperature=p.temperature,
        top_k=p.top_k or None, u=uniforms(p.seed),
    )  # fmt: skip
    return checkpoint.vocab.decode(out[0].tolist())
