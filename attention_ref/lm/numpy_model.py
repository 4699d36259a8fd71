r"""The trained model's forward pass and generation in numpy, for ``attnref sample`` (no torch).

Importing torch costs more than a second on a 2-core machine, more than generating 500
characters; a person waits for ``attnref sample``. This module reads a run's ``model.pt`` (the
zip that ``torch.save`` writes: a pickle and one raw file per storage) with a pickle reader that
knows four names and nothing else, and runs `attention_ref.lm.model.CharGPT`'s forward pass on
its weights, in float32, the same formulas in the same order:

$$
x = E_{tok}[c] + E_{pos}[t],\quad
x \leftarrow x + \operatorname{Concat}_i\big(\operatorname{softmax}(Q^{(i)}K^{(i)\top}/\sqrt{d_k}
+ M)V^{(i)}\big)W_O + b_O,\quad
x \leftarrow x + \operatorname{GELU}(\operatorname{LN}_2(x) W_1 + b_1) W_2 + b_2
$$

(pre-LayerNorm: $Q, K, V$ from $\operatorname{LN}_1(x)$; ``W = linear.weight.T``), then
$\operatorname{LN}_f$ and the head. Generation follows `attention_ref.lm.sampling.generate`: a
KV cache while the text fits the block, the whole window again once it slides, each character
drawn by `attention_ref.lm.draw.draw_index`. ``tests/lm/test_numpy_model.py`` holds it to the
torch model: logits within float32 rounding, the same characters for the same seed.

A model this module does not know (a configuration field it has no formula for, weights of
other names or shapes) is `UnsupportedModelError`: the caller samples with torch instead.
"""

from __future__ import annotations

import math
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from attention_ref.lm.config import AttentionMode, ModelConfig, TrainConfig
from attention_ref.lm.draw import draw_index

__all__ = ["NumpyCharGPT", "UnsupportedModelError", "read_torch_file", "sample_text"]

#: ModelConfig fields whose every value this module computes; any other field must keep its
#: default (a later option, e.g. a new position encoding, is sampled with torch)
KNOWN_FIELDS = frozenset(
    {"vocab_size", "block_size", "n_embd", "n_layer", "n_head", "dropout", "attention"}
)
LN_EPS = 1e-5  # torch.nn.LayerNorm's default


class UnsupportedModelError(ValueError):
    """The file or model is not one this module reads or computes; sample with torch."""


# --- reading torch.save's zip without torch ---------------------------------------------------

_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


def _rebuild_tensor_v2(
    storage: np.ndarray, offset: int, size: tuple[int, ...], stride: tuple[int, ...], *_: Any
) -> np.ndarray:
    """``torch._utils._rebuild_tensor_v2``: a view of ``storage`` (elements, not bytes)."""
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(
        storage[offset:], shape=size, strides=[s * item for s in stride]
    )
    return np.ascontiguousarray(view)


class _Unpickler(pickle.Unpickler):
    """Knows ``collections.OrderedDict``, ``torch._utils._rebuild_tensor_v2`` and the typed
    storages; refuses every other global (nothing else is ever constructed)."""

    def __init__(self, file: Any, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(file)
        self.archive, self.prefix = archive, prefix

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if module == "torch" and name in _DTYPES:
            return _DTYPES[name]
        raise UnsupportedModelError(f"the model file holds {module}.{name}")

    def persistent_load(self, pid: Any) -> np.ndarray:
        # ('storage', storage type, key, location, numel)
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise UnsupportedModelError(f"the model file holds a storage {pid!r:.60}")
        dtype, key = pid[1], str(pid[2])
        raw = self.archive.read(f"{self.prefix}data/{key}")
        return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"))


def read_torch_file(path: Path) -> dict[str, Any]:
    """The dict that ``torch.load(path)`` returns, tensors as numpy arrays; only files of
    plain data and tensors (a checkpoint's), else `UnsupportedModelError`."""
    try:
        with zipfile.ZipFile(path) as archive:
            pkl = [n for n in archive.namelist() if n.endswith("/data.pkl")]
            if len(pkl) != 1:
                raise UnsupportedModelError(f"{path} is not a torch.save file")
            prefix = pkl[0][: -len("data.pkl")]
            order = f"{prefix}byteorder"
            if order in archive.namelist() and archive.read(order).strip() != b"little":
                raise UnsupportedModelError(f"{path} is not little-endian")
            with archive.open(pkl[0]) as f:
                state = _Unpickler(f, archive, prefix).load()
    except (zipfile.BadZipFile, KeyError, EOFError, pickle.UnpicklingError) as e:
        raise UnsupportedModelError(f"{path}: {e!r}") from None
    if not isinstance(state, dict):
        raise UnsupportedModelError(f"{path} does not hold a checkpoint")
    return state


# --- the forward pass ---------------------------------------------------------------------------


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    r"""$\operatorname{LN}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + 10^{-5}}} \gamma + \beta$ over the
    last axis ($\sigma^2$ the biased variance, as torch)."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + np.float32(LN_EPS)) * weight + bias


def erf(x: np.ndarray) -> np.ndarray:
    r"""$\operatorname{erf}$, elementwise, in float32 (numpy has none).

    Abramowitz & Stegun 7.1.26: $\operatorname{erf}(x) \approx 1 - (a_1 t + \dots + a_5 t^5)
    e^{-x^2}$, $t = 1/(1 + p|x|)$, odd in $x$; its error is at most $1.5 \cdot 10^{-7}$, and
    evaluated in float32 (in place: this is the costliest step of generation) at most about
    $6 \cdot 10^{-7}$, a few units of float32's rounding of the values it feeds.
    """
    f32 = np.float32
    a = np.abs(x, dtype=np.float32)
    t = a * f32(0.3275911)
    t += f32(1.0)
    np.reciprocal(t, out=t)
    poly = t * f32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += f32(c)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # (a₁t + … + a₅t⁵) e^{-x²}
    np.subtract(f32(1.0), poly, out=poly)
    return np.copysign(poly, x, out=poly)


def gelu(x: np.ndarray) -> np.ndarray:
    r"""$\operatorname{GELU}(x) = \tfrac{x}{2}(1 + \operatorname{erf}(x/\sqrt 2))$ (torch's exact
    form, ``F.gelu``'s default)."""
    return np.float32(0.5) * x * (np.float32(1.0) + erf(x * np.float32(1 / math.sqrt(2))))


def softmax_rows(S: np.ndarray) -> np.ndarray:
    r"""$A_{ij} = e^{S_{ij} - m_i} / \sum_l e^{S_{il} - m_i}$, $m_i = \max_l S_{il}$
    ($-\infty$ gives 0)."""
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@dataclass
class _Layer:
    """One block's weights in the row convention (``W = linear.weight.T``) and its cache."""

    ln1: tuple[np.ndarray, np.ndarray] | None
    W_qkv: np.ndarray | None  # (C, 3C) multihead; (C, C) uniform: W_V
    b_qkv: np.ndarray | None
    W_O: np.ndarray | None
    b_O: np.ndarray | None  # noqa: N815
    ln2: tuple[np.ndarray, np.ndarray]
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    k: np.ndarray | None = None  # cache: (h, past, d_k); uniform: running sum (1, C)
    v: np.ndarray | None = None


class NumpyCharGPT:
    """`attention_ref.lm.model.CharGPT` in eval mode, in numpy, from its state dict."""

    def __init__(self, cfg: ModelConfig, state: dict[str, np.ndarray]) -> None:
        self.cfg = cfg
        for f in fields(cfg):
            if f.name not in KNOWN_FIELDS and getattr(cfg, f.name) != f.default:
                raise UnsupportedModelError(f"{f.name} = {getattr(cfg, f.name)!r}")
        self._expect = dict(state)

        def take(name: str, shape: tuple[int, ...]) -> np.ndarray:
            w = self._expect.pop(name, None)
            if w is None or tuple(w.shape) != shape:
                got = None if w is None else tuple(w.shape)
                raise UnsupportedModelError(f"weight {name}: expected {shape}, got {got}")
            return np.asarray(w, dtype=np.float32)

        C, V, T = cfg.n_embd, cfg.vocab_size, cfg.block_size
        self.tok_emb = take("tok_emb.weight", (V, C))
        self.pos_emb = take("pos_emb.weight", (T, C))
        self.layers: list[_Layer] = []
        mode = AttentionMode(cfg.attention)
        for i in range(cfg.n_layer):
            p = f"blocks.{i}."
            ln1 = W_qkv = b_qkv = W_O = b_O = None
            if mode is not AttentionMode.NONE:
                ln1 = (take(p + "ln_1.weight", (C,)), take(p + "ln_1.bias", (C,)))
                lin = "attn.qkv" if mode is AttentionMode.MULTIHEAD else "attn.value"
                width = 3 * C if mode is AttentionMode.MULTIHEAD else C
                W_qkv = take(p + lin + ".weight", (width, C)).T.copy()
                b_qkv = take(p + lin + ".bias", (width,))
                W_O = take(p + "attn.proj.weight", (C, C)).T.copy()
                b_O = take(p + "attn.proj.bias", (C,))
            self.layers.append(
                _Layer(
                    ln1=ln1,
                    W_qkv=W_qkv,
                    b_qkv=b_qkv,
                    W_O=W_O,
                    b_O=b_O,
                    ln2=(take(p + "ln_2.weight", (C,)), take(p + "ln_2.bias", (C,))),
                    W_1=take(p + "mlp.fc.weight", (4 * C, C)).T.copy(),
                    b_1=take(p + "mlp.fc.bias", (4 * C,)),
                    W_2=take(p + "mlp.proj.weight", (C, 4 * C)).T.copy(),
                    b_2=take(p + "mlp.proj.bias", (C,)),
                )
            )
        self.ln_f = (take("ln_f.weight", (C,)), take("ln_f.bias", (C,)))
        self.W_head = take("head.weight", (V, C)).T.copy()
        if self._expect:
            raise UnsupportedModelError(f"unknown weights: {sorted(self._expect)[:3]}")
        self.mode, self.length = mode, 0

    def reset(self) -> None:
        """Forget the cache (the next `forward` starts at position 0)."""
        self.length = 0
        for layer in self.layers:
            layer.k = layer.v = None

    def _attention(self, layer: _Layer, x: np.ndarray, cache: bool, last_only: bool) -> np.ndarray:
        """``Concat(softmax(Q Kᵀ/√d_k + M) V) W_O + b_O`` for ``x = LN_1(…)`` ``(T, C)``."""
        assert layer.W_qkv is not None and layer.W_O is not None and layer.b_O is not None
        T, C = x.shape
        past = self.length if cache else 0
        if self.mode is AttentionMode.UNIFORM:
            sums = np.cumsum(x @ layer.W_qkv + layer.b_qkv, axis=0)  # (T, C)
            if cache:
                if layer.v is not None:
                    sums = sums + layer.v
                layer.v = sums[-1:]
            y = sums / np.arange(past + 1, past + T + 1, dtype=np.float32)[:, None]
            return (y[-1:] if last_only else y) @ layer.W_O + layer.b_O
        h = self.cfg.n_head
        d_k = C // h
        qkv = x @ layer.W_qkv + layer.b_qkv  # (T, 3C)
        # (T, C) -> (T, h, d_k) -> (h, T, d_k)
        q, k, v = (
            qkv[:, j * C : (j + 1) * C].reshape(T, h, d_k).transpose(1, 0, 2) for j in range(3)
        )
        if last_only:
            q = q[:, -1:]  # (h, T, d_k) -> (h, 1, d_k): the last query sees every key
        if cache:
            if layer.k is not None and layer.v is not None:
                k = np.concatenate([layer.k, k], axis=1)  # (h, past + T, d_k)
                v = np.concatenate([layer.v, v], axis=1)
            layer.k, layer.v = k, v
        S = q @ k.transpose(0, 2, 1) / np.float32(math.sqrt(d_k))  # (h, T_q, past + T)
        if not last_only:
            T_q = q.shape[1]
            blocked = np.arange(k.shape[1])[None, :] > (past + np.arange(T_q))[:, None]
            S = np.where(blocked, np.float32(-np.inf), S)  # + M
        y = softmax_rows(S) @ v  # (h, T_q, d_k)
        y = y.transpose(1, 0, 2).reshape(y.shape[1], C)  # (h, T_q, d_k) -> (T_q, C)
        return y @ layer.W_O + layer.b_O

    def forward(
        self, idx: list[int], *, cache: bool = False, last_only: bool = False
    ) -> np.ndarray:
        """Logits ``(T, vocab)`` of the positions ``idx`` (``last_only``: ``(1, vocab)``).

        ``cache``: ``idx`` continues the cached positions (`CharGPT.forward` with a
        ``KVCache``); otherwise it is a whole window from position 0.
        """
        start = self.length if cache else 0
        T = len(idx)
        if start + T > self.cfg.block_size:
            raise ValueError(f"sequence of length {start + T} exceeds {self.cfg.block_size}")
        x = self.tok_emb[idx] + self.pos_emb[start : start + T]  # (T, C)
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            only = last_only and i == last
            if layer.ln1 is not None:
                a = self._attention(layer, layer_norm(x, *layer.ln1), cache, only)
                x = (x[-1:] if only else x) + a  # x + MultiHead(LN_1(x))
            elif only:
                x = x[-1:]
            hidden = gelu(layer_norm(x, *layer.ln2) @ layer.W_1 + layer.b_1)
            x = x + (hidden @ layer.W_2 + layer.b_2)  # x + MLP(LN_2(x))
        if cache:
            self.length = start + T
        return layer_norm(x, *self.ln_f) @ self.W_head  # (T, vocab)

    def generate(
        self,
        idx: list[int],
        new_tokens: int,
        *,
        temperature: float,
        top_k: int | None,
        u: Iterator[float],
    ) -> list[int]:
        """``idx`` and ``new_tokens`` characters drawn after it, as
        `attention_ref.lm.sampling.generate` does with ``uniforms``."""
        block = self.cfg.block_size
        out = list(idx)
        fresh = out[-block:]
        self.reset()
        for _ in range(new_tokens):
            if len(out) <= block:  # the text fits: extend the cache
                logits = self.forward(fresh, cache=True)
            else:  # the window slides: every position changes, compute it again
                logits = self.forward(out[-block:], last_only=True)
            nxt = draw_index(logits[-1], temperature, top_k, next(u))
            out.append(nxt)
            fresh = [nxt]
        return out


@dataclass(frozen=True)
class NumpyCheckpoint:
    """A run's ``model.pt`` read without torch: the model, its vocabulary and its config."""

    config: TrainConfig
    chars: tuple[str, ...]
    model: NumpyCharGPT

    @classmethod
    def load(cls, path: Path) -> NumpyCheckpoint:
        """Read ``path``; `UnsupportedModelError` for anything this module cannot compute."""
        state = read_torch_file(path)
        try:
            config = TrainConfig.from_flat(state["config"])
            chars = tuple(state["chars"])
            weights = state["model"]
        except (KeyError, TypeError, ValueError) as e:
            raise UnsupportedModelError(f"{path} is not an attnref checkpoint: {e!r}") from None
        if not isinstance(weights, dict) or not all(isinstance(c, str) for c in chars):
            raise UnsupportedModelError(f"{path} is not an attnref checkpoint")
        cfg = config.model
        model_cfg = ModelConfig(
            **{f.name: getattr(cfg, f.name) for f in fields(ModelConfig) if f.name != "vocab_size"},
            vocab_size=len(chars),
        )
        return cls(config, chars, NumpyCharGPT(model_cfg, weights))


def sample_text(
    checkpoint: NumpyCheckpoint,
    prompt: str,
    *,
    tokens: int,
    temperature: float,
    top_k: int | None,
    seed: int,
) -> str:
    """``prompt`` continued by ``tokens`` characters: `attention_ref.lm.sampling.sample_text`
    without torch (the same characters for the same model and settings)."""
    from attention_ref.lm.draw import uniforms

    stoi = {c: i for i, c in enumerate(checkpoint.chars)}
    unknown = sorted({c for c in prompt if c not in stoi})
    if not prompt or unknown:
        raise ValueError(
            f"a prompt needs at least one character, all in the model's vocabulary; "
            f"{prompt!r} has {unknown!r}"
        )
    out = checkpoint.model.generate(
        [stoi[c] for c in prompt],
        tokens,
        temperature=temperature,
        top_k=top_k,
        u=uniforms(seed),
    )
    return "".join(checkpoint.chars[i] for i in out)
