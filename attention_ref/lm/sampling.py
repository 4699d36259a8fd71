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

On a GPU each character of `generate` is a few dozen small kernels and a wait for the host's
draw: launch-bound. `WindowSampler` draws the same characters with nothing but fixed tensors on
the device (the window in a buffer of ``block_size``, padded after its last character: the
causal mask keeps the padding out of every position that is read), the draw made on the device
from noise drawn beforehand on the host by the same generator (`multinomial_noise`: what
``torch.multinomial`` draws with), and on CUDA one step captured as a CUDA graph and replayed
once per character; the characters are read back once, at the end.
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

__all__ = [
    "SampleParams",
    "WindowSampler",
    "generate",
    "multinomial_noise",
    "one_thread_for",
    "sample_text",
]


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


def multinomial_noise(
    generator: torch.Generator | None, shape: tuple[int, int], draws: int
) -> Tensor:
    r"""The exponential noise ``(draws, B, V)`` (float32, on the CPU) that ``draws`` calls of
    ``torch.multinomial(probs, 1, generator=generator)`` on ``(B, V)`` CPU probabilities make,
    in order: for one sample torch draws $q \sim \operatorname{Exp}(1)$ of ``probs``' shape and
    takes $\arg\max_i p_i / q_i$ (aten's path for one sample; `_next_token`'s draws, equal
    to the bit in ``tests/lm/test_window_sampler.py``). ``None``: torch's default CPU
    generator, as ``torch.multinomial`` takes it."""
    noise = torch.empty((draws, *shape), dtype=torch.float32)
    for i in range(draws):  # one call per draw: the generator advances as multinomial's does
        noise[i] = torch.empty(shape, dtype=torch.float32).exponential_(1, generator=generator)
    return noise


class WindowSampler:
    r"""`generate`'s characters (the window's last ``block_size`` characters, temperature,
    top-k, ``torch.multinomial``'s draw) from fixed tensors on the model's device; on CUDA the
    step of one character is one CUDA graph (``graph=True``, captured here), replayed.

    * the window lives in ``buf`` ``(B, block)``: the prompt's last ``block`` characters, then
      zeros; ``pos`` (a device index) is the position of its last character. The model runs on
      the whole buffer and the logits of ``pos`` are drawn from; the padding after ``pos``
      reaches no position up to ``pos`` (every attention mode is causal). When the buffer is
      full it shifts by one, the positions move as `generate`'s sliding window moves them;
    * the draw is ``argmax(probs / q)`` with ``q`` from `multinomial_noise`: the character
      ``torch.multinomial`` draws from the same probabilities and generator; the noise goes to
      the device once per call and the characters come back once;
    * the logits come from a forward over ``block`` positions where `generate` computes the
      new one alone (the KV cache): another order of the same sums, so the probabilities can
      differ in the last bits and a draw with two nearly equal ``p_i / q_i`` could go the
      other way (``tests/lm/test_window_sampler.py`` checks the characters, and on CUDA the
      margin of every draw).

    Runs the model in fp32 and eval mode, as `generate` does; ``max_tokens`` bounds a call.
    """

    def __init__(
        self,
        model: CharGPT,
        max_tokens: int,
        *,
        batch_size: int = 1,
        temperature: float = 1.0,
        top_k: int | None = None,
        graph: bool = False,
    ) -> None:
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        device = next(model.parameters()).device
        if graph and device.type != "cuda":
            raise ValueError(f"a CUDA graph needs a CUDA device, not {device.type}")
        self.model, self.device = model, device
        self.max_tokens, self.temperature, self.top_k = max_tokens, temperature, top_k
        self.block, vocab = model.cfg.block_size, model.cfg.vocab_size
        self.shape = (batch_size, vocab)
        self.buf = torch.zeros((batch_size, self.block), dtype=torch.long, device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)  # the last character's
        self.step = torch.zeros(1, dtype=torch.long, device=device)  # the draw being made
        self.noise = torch.ones((max_tokens, batch_size, vocab), device=device)
        self.out = torch.zeros((batch_size, max_tokens), dtype=torch.long, device=device)
        self.graph: Any = None
        if graph:
            self.graph = self._capture()

    @torch.no_grad()
    def _advance(self) -> None:
        """Draw one character per row into ``out``, append it to the window."""
        logits, _ = self.model(self.buf)  # (B, block, V)
        z = logits.index_select(1, self.pos).squeeze(1) / self.temperature  # (B, V)
        if self.top_k is not None:
            kth = torch.topk(z, min(self.top_k, z.size(-1))).values[:, -1:]
            z = z.masked_fill(z < kth, float("-inf"))
        probs = torch.softmax(z.float(), dim=-1)  # (B, V)
        q = self.noise.index_select(0, self.step).squeeze(0)  # (steps, B, V) -> (B, V)
        nxt = torch.argmax(probs / q, dim=-1, keepdim=True)  # (B, 1): multinomial's draw
        self.out.index_copy_(1, self.step, nxt)
        full = self.pos == self.block - 1  # (1,): the window slides
        buf = torch.where(full, self.buf.roll(-1, dims=1), self.buf)  # (B, block)
        nxt_pos = (self.pos + 1).clamp(max=self.block - 1)
        self.buf.copy_(buf.index_copy(1, nxt_pos, nxt))
        self.pos.copy_(nxt_pos)
        self.step.add_(1)

    def _capture(self) -> Any:
        """`_advance` as one CUDA graph, after two warm-up steps on a side stream."""
        was_training = self.model.training
        self.model.eval()
        try:
            side = torch.cuda.Stream(self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side):
                for _ in range(2):
                    self.step.zero_()
                    self._advance()
            torch.cuda.current_stream(self.device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self._advance()
        finally:
            self.model.train(was_training)
        return graph

    @torch.no_grad()
    def __call__(
        self, idx: Tensor, new_tokens: int, generator: torch.Generator | None = None
    ) -> Tensor:
        """``idx`` ``(B, T)`` and ``new_tokens`` characters after it, ``(B, T + new)`` on the
        model's device, drawn as `generate` draws them with ``generator`` (a CPU one)."""
        if not 0 <= new_tokens <= self.max_tokens:
            raise ValueError(f"new_tokens must be in [0, {self.max_tokens}], got {new_tokens}")
        if idx.dim() != 2 or idx.size(0) != self.shape[0] or idx.size(1) < 1:
            raise ValueError(f"idx must be ({self.shape[0]}, T >= 1), got {tuple(idx.shape)}")
        idx = idx.to(self.device)
        window = idx[:, -self.block :]  # (B, T) -> (B, w), w <= block
        self.buf.zero_()
        self.buf[:, : window.size(1)] = window
        self.pos.fill_(window.size(1) - 1)
        self.step.zero_()
        self.noise[:new_tokens].copy_(multinomial_noise(generator, self.shape, new_tokens))
        was_training = self.model.training
        self.model.eval()
        try:
            for _ in range(new_tokens):
                if self.graph is not None:
                    self.graph.replay()
                else:
                    self._advance()
        finally:
            self.model.train(was_training)
        return torch.cat([idx, self.out[:, :new_tokens]], dim=1)  # (B, T) -> (B, T + new)


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
        checkpoint.build_model(),
        idx,
        p.max_new_tokens,
        temperature=p.temperature,
        top_k=p.top_k or None,
        u=uniforms(p.seed),
    )
    return checkpoint.vocab.decode(out[0].tolist())
