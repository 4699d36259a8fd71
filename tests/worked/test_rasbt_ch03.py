"""rasbt's LLMs-from-scratch ch03 classes (seed 001's code), through ``attnref explain --input``.

The four classes are re-typed here as the book has them (``SelfAttention_v2``,
``CausalAttention``, ``MultiHeadAttentionWrapper``, ``MultiHeadAttention``; dropout 0), their
weights drawn with the book's seeds. Their ``nn.Linear`` weights are exported to an
``--input`` file (row convention: ``W = linear.weight.T``, ``b = linear.bias``), run through
``attnref explain --input FILE -f json`` and the output compared with the module's, to 1e-6
(the modules compute in float32, attnref in float64).
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from attention_ref.cli.main import main
from attention_ref.worked import your_journey_starts as journey

TOL = 1e-6


# --- rasbt's ch03 classes, as the book types them --------------------------------------------


class SelfAttention_v2(nn.Module):  # noqa: N801  (the book's name)
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape  # noqa: RUF059  (the book's line)
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = attn_weights @ values
        return context_vec


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape  # noqa: RUF059  (the book's line)
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec


# --- export to the --input format --------------------------------------------------------------


def W(lin: nn.Linear) -> list[list[float]]:
    """Row convention: ``W = linear.weight.T`` (nn.Linear stores ``(d_out, d_in)``)."""
    return lin.weight.detach().T.tolist()


def qkv(module: nn.Module, prefix: str = "") -> dict[str, object]:
    """``W_Q, W_K, W_V`` (and ``b_Q, b_K, b_V`` when the layers have biases) of a module."""
    out: dict[str, object] = {}
    for role, lin in (("Q", module.W_query), ("K", module.W_key), ("V", module.W_value)):
        out[f"{prefix}W_{role}"] = W(lin)
        if lin.bias is not None:
            out[f"{prefix}b_{role}"] = lin.bias.detach().tolist()
    return out


def export(module: nn.Module, x: torch.Tensor) -> dict[str, object]:
    """The ``--input`` document of one of the four modules applied to one sequence ``x``."""
    doc: dict[str, object] = {"X": x.tolist()}
    if isinstance(module, SelfAttention_v2):  # one head, no mask, no W_O (output = context)
        return doc | {"h": 1, **qkv(module), "causal": False}
    if isinstance(module, CausalAttention):
        return doc | {"h": 1, **qkv(module), "causal": True}
    if isinstance(module, MultiHeadAttentionWrapper):  # per head, concat, no W_O
        return doc | {"heads": [qkv(head) for head in module.heads], "causal": True}
    assert isinstance(module, MultiHeadAttention)  # fused, split into num_heads, out_proj
    out_proj = {"W_O": W(module.out_proj), "b_O": module.out_proj.bias.detach().tolist()}
    return doc | {"h": module.num_heads, **qkv(module), **out_proj, "causal": True}


def attnref_output(doc: dict[str, object]) -> torch.Tensor:
    """``attnref explain --input FILE -f json`` (through ``attention_ref.cli.main.main``): its
    ``output``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rasbt.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["explain", "--input", str(path), "-f", "json"])
    assert code == 0, err.getvalue()
    return torch.tensor(json.loads(out.getvalue())["output"], dtype=torch.float64)


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and float((a - b.to(a.dtype)).abs().max()) <= TOL


# --- the book's modules, the book's seeds ------------------------------------------------------

inputs = torch.tensor(journey.JOURNEY_X)  # (6, 3), float32 as in the book
batch = torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)
d_in, d_out, context_length = 3, 2, batch.shape[1]


def build(name: str, qkv_bias: bool) -> nn.Module:
    """The book's construction, seed included (789 for SelfAttention_v2, 123 for the rest)."""
    if name == "SelfAttention_v2":
        torch.manual_seed(789)
        return SelfAttention_v2(d_in, d_out, qkv_bias)
    torch.manual_seed(123)
    if name == "CausalAttention":
        return CausalAttention(d_in, d_out, context_length, 0.0, qkv_bias)
    if name == "MultiHeadAttentionWrapper":
        return MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, 2, qkv_bias)
    return MultiHeadAttention(d_in, d_out, context_length, 0.0, 2, qkv_bias)


NAMES = ("SelfAttention_v2", "CausalAttention", "MultiHeadAttentionWrapper", "MultiHeadAttention")


@pytest.mark.parametrize("qkv_bias", [False, True], ids=["no-bias", "qkv-bias"])
@pytest.mark.parametrize("name", NAMES)
def test_rasbt_module_equals_attnref_explain_input(name: str, qkv_bias: bool):
    module = build(name, qkv_bias).eval()
    with torch.no_grad():
        want = module(inputs) if name == "SelfAttention_v2" else module(batch)[0]
    got = attnref_output(export(module, inputs))
    assert close(got, want), float((got - want.double()).abs().max())
    width = {"MultiHeadAttentionWrapper": 2 * d_out}.get(name, d_out)  # the wrapper concats
    assert got.shape == (6, width)


@pytest.mark.parametrize(
    ("name", "book", "columns"),
    [
        ("SelfAttention_v2", journey.BOOK_JOURNEY_SELF, slice(None)),
        ("CausalAttention", journey.BOOK_JOURNEY_CAUSAL, slice(None)),
        ("MultiHeadAttentionWrapper", journey.BOOK_JOURNEY_CAUSAL, slice(0, 2)),  # head 1
        ("MultiHeadAttention", journey.BOOK_JOURNEY_MULTIHEAD, slice(None)),
    ],
)
def test_the_retyped_classes_print_the_books_numbers(name, book, columns):
    """The re-typed classes are the book's: their outputs are its printed 4-decimal values."""
    module = build(name, False).eval()
    with torch.no_grad():
        out = module(inputs) if name == "SelfAttention_v2" else module(batch)[0]
    assert torch.allclose(out[:, columns], torch.tensor(book), atol=5e-5)


@settings(max_examples=25, deadline=None)
@given(
    d_in=st.integers(1, 5),
    head_dim=st.integers(1, 3),
    num_heads=st.integers(1, 3),
    n=st.integers(1, 6),
    qkv_bias=st.booleans(),
    wrapper=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_random_shapes_through_explain_input(d_in, head_dim, num_heads, n, qkv_bias, wrapper, seed):
    """Any d_in, d_out = num_heads·head_dim (d_out ≠ d_in included), with or without biases."""
    torch.manual_seed(seed)
    d = num_heads * head_dim
    cls = MultiHeadAttentionWrapper if wrapper else MultiHeadAttention
    module = cls(d_in, head_dim if wrapper else d, n, 0.0, num_heads, qkv_bias).eval()
    x = torch.randn(n, d_in)
    with torch.no_grad():
        want = module(x.unsqueeze(0))[0]  # (1, n, d_in) -> (n, d_out)
    got = attnref_output(export(module, x))
    assert close(got, want), float((got - want.double()).abs().max())
