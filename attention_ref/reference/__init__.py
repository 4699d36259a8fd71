"""The textbook math: masked multi-head attention one formula at a time, and parameter counts.

`attention_ref.reference.attention` holds one small pure function per formula of seed 000,
`attention_ref.reference.multihead` their one composition (``h`` query heads, ``g`` K/V heads,
the mask, RoPE's positions, the biases, ``W_O``) and `attention_ref.reference.trace` its one
trace, forward and backward; they are re-exported
here, so ``from attention_ref import reference as ref; ref.scores(Q, K)`` reads like the
document; `attention_ref.reference.backward` is the backward pass in the same
style (``ref.attention_backward``). `attention_ref.reference.params` counts weights by shape
(seed 003, and the KV cache of MHA, GQA and MQA). The attention of today's models, in the same
style: `attention_ref.reference.gqa` (grouped-query and multi-query attention),
`attention_ref.reference.rope` (rotary position embeddings), `attention_ref.reference.windows`
(sliding-window masks and ALiBi biases), `attention_ref.reference.kv_cache` (one decode step
against cached K, V) and `attention_ref.reference.online_softmax` (FlashAttention's tiles).
This folder imports torch and nothing else of attnref.

The re-exports are resolved on first use (PEP 562 ``__getattr__``): importing this package,
or `attention_ref.reference.params` alone (``attnref params``), does not import torch; the
first ``ref.scores`` does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below, for type checkers; at run time they come on first use
    from attention_ref.reference.attention import *  # noqa: F403
    from attention_ref.reference.backward import *  # noqa: F403
    from attention_ref.reference.multihead import *  # noqa: F403
    from attention_ref.reference.trace import *  # noqa: F403

#: the modules whose ``__all__`` this package re-exports, in order
_REEXPORTED = (
    "attention_ref.reference.attention",
    "attention_ref.reference.backward",
    "attention_ref.reference.multihead",
    "attention_ref.reference.trace",
)

#: every re-exported name, written out so that ``__all__`` needs no import (a test checks it
#: against the modules' own ``__all__``)
_ATTENTION_ALL = (
    "add_mask",
    "attention_dropout",
    "causal_mask",
    "concat_heads",
    "fuse_heads",
    "merge_heads",
    "output_projection",
    "project",
    "project_heads",
    "scale",
    "scores",
    "softmax_rows",
    "split_heads",
    "unfuse_heads",
    "weighted_sum",
)
_BACKWARD_ALL = (
    "attention_backward",
    "bias_grad",
    "concat_grad",
    "heads_grad",
    "input_grad",
    "input_grad_path",
    "key_grad",
    "mask_backward",
    "output_weight_grad",
    "query_grad",
    "scale_backward",
    "softmax_rows_backward",
    "value_grad",
    "weight_grad_fused",
    "weight_grad_heads",
    "weights_grad",
)
_MULTIHEAD_ALL = (
    "masked_multihead_attention",
    "masked_multihead_attention_fused",
)
_TRACE_ALL = ("AttentionTrace", "GradientTrace")
_HOME = (
    {name: _REEXPORTED[0] for name in _ATTENTION_ALL}
    | {name: _REEXPORTED[1] for name in _BACKWARD_ALL}
    | {name: _REEXPORTED[2] for name in _MULTIHEAD_ALL}
    | {name: _REEXPORTED[3] for name in _TRACE_ALL}
)

__all__ = [*_ATTENTION_ALL, *_BACKWARD_ALL, *_MULTIHEAD_ALL, *_TRACE_ALL]


#: the submodules, reachable as attributes (``ref.rope.apply_rope``) before their first import
_SUBMODULES = (
    "attention",
    "multihead",
    "trace",
    "backward",
    "params",
    "gqa",
    "rope",
    "windows",
    "kv_cache",
    "online_softmax",
)


def __getattr__(name: str) -> Any:  # Any: a function, a class or a submodule
    """``ref.scores`` and the other re-exports, imported from their module on first use;
    ``ref.rope`` and the other submodules likewise."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _HOME:
        value = getattr(importlib.import_module(_HOME[name]), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's names, the lazy re-exports included."""
    return sorted({*globals(), *__all__})
