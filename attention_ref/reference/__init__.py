"""The textbook math: masked multi-head attention one formula at a time, and parameter counts.

`attention_ref.reference.attention` holds one small pure function per formula of seed 000;
they are re-exported here, so ``from attention_ref import reference as ref; ref.scores(Q, K)``
reads like the document; `attention_ref.reference.backward` is the backward pass in the same
style (``ref.attention_backward``). `attention_ref.reference.params` counts weights by shape
(seed 003). This folder imports torch and nothing else of attnref.
"""

from attention_ref.reference.attention import *  # noqa: F403
from attention_ref.reference.attention import __all__ as _attention_all
from attention_ref.reference.backward import *  # noqa: F403
from attention_ref.reference.backward import __all__ as _backward_all

__all__ = [*_attention_all, *_backward_all]
