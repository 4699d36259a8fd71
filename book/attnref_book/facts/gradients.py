"""The facts of the gradients page (``docs/gradients.md``, ``docs/gradients.pt.md``): the
backward pass of the worked example ("Life is awesome", seed 000), checked and told in each
language of the book.

The formulas are `attention_ref.reference.backward`'s; here they are run on the example and
checked against ``torch.autograd`` and central differences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import Explanation, to_book
from attention_ref.worked import life_is_awesome as ex
from attention_ref.worked.gradients import backward_steps
from attnref_book.pages import check, math_said, matrix, prose, translated
from attnref_book.worked_pt import backward_words

#: the step by which the weights and the input are moved for the central differences (the
#: checks' words say it: ε = 1e-6)
EPS: Final = 1e-6
#: the upstream gradient G of the second look at head 1: only the output entry of "awesome"
#: in column y₁ counts, L = Y_awesome,1
G_AWESOME_Y1: Final = [[0.0] * 4, [0.0] * 4, [1.0, 0.0, 0.0, 0.0]]

WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "autograd": "equal to torch.autograd",
        "autograd_detail": (
            "largest difference over the gradients of X and the weights: {auto:.1e} (float64)."
        ),
        "fd": "finite differences",
        "fd_detail": (
            "all {n} entries of X and the weights; largest difference {fd:.1e} (ε = 1e-6)."
        ),
        "masked": "masked entries",
        "masked_detail": (
            "all {zeros} entries above the diagonal of ∂S̃⁽¹⁾ and ∂S̃⁽²⁾ are exactly 0.0."
        ),
        "constant_row": (
            "With \\(L = \\sum \\text{{output}}\\), \\(\\partial H^{{(1)}}\\) is all ones and "
            "every value row of \\(V^{{(1)}}\\) sums to {row_sum}, so every entry of "
            "\\(\\partial A^{{(1)}} = \\partial H^{{(1)}} V^{{(1)\\top}}\\) is "
            "{dA}: a constant row, which the softmax backward removes "
            "(\\(\\partial \\tilde S^{{(1)}} = 0\\)).\n"
        ),
        "head1": "head 1 now gets a gradient",
        "head1_detail": (
            "largest |∂S̃⁽¹⁾| = {largest:.4f}; its first two rows are 0: "
            "G is 0 in those rows, so ∂H⁽¹⁾ and ∂A⁽¹⁾ are 0 there."
        ),
    },
    "pt": {
        "autograd": "igual ao torch.autograd",
        "autograd_detail": "maior diferença nos gradientes de X e dos pesos: {auto:.1e} (float64).",
        "fd": "diferenças finitas",
        "fd_detail": "as {n} entradas de X e dos pesos; maior diferença {fd:.1e} (ε = 1e-6).",
        "masked": "entradas mascaradas",
        "masked_detail": (
            "as {zeros} entradas acima da diagonal de ∂S̃⁽¹⁾ e ∂S̃⁽²⁾ são exatamente 0.0."
        ),
        "constant_row": (
            "Com \\(L = \\sum \\text{{saída}}\\), \\(\\partial H^{{(1)}}\\) é toda de uns e "
            "cada linha de valores de \\(V^{{(1)}}\\) soma {row_sum}, então cada entrada de "
            "\\(\\partial A^{{(1)}} = \\partial H^{{(1)}} V^{{(1)\\top}}\\) é "
            "{dA}: uma linha constante, que a retropropagação da softmax elimina "
            "(\\(\\partial \\tilde S^{{(1)}} = 0\\)).\n"
        ),
        "head1": "a cabeça 1 agora recebe um gradiente",
        "head1_detail": (
            "maior |∂S̃⁽¹⁾| = {largest:.4f}; as suas duas primeiras "
            "linhas são 0: G é 0 nessas linhas, então ∂H⁽¹⁾ e ∂A⁽¹⁾ são 0 ali."
        ),
    },
}

#: how each language tells the backward steps: English as the package writes them, another
#: language in its words (`attnref_book.pages.translated`)
TOLD: Final[Mapping[str, Callable[[Explanation], Explanation]]] = {
    "en": lambda expl: expl,
    "pt": lambda expl: translated(expl, backward_words()),
}


def _example() -> dict[str, Tensor]:
    """The worked example's input and weights in float64, by the names of the forward's
    arguments (in their order)."""

    def f64(m: list[list[float]]) -> Tensor:
        return torch.tensor(m, dtype=torch.float64)

    return {
        "X": f64(ex.LIFE_X),
        "W_Q": f64(ex.LIFE_W_Q),
        "W_K": f64(ex.LIFE_W_K),
        "W_V": f64(ex.LIFE_W_V),
        "W_O": f64(ex.LIFE_W_O),
    }


def _loss(args: Mapping[str, Tensor]) -> float:
    """L = Σ output of the forward on ``args``."""
    return float(ref.masked_multihead_attention(*args.values()).output.sum())


def backward_checks(lang: str) -> str:
    """Three checks of `attention_ref.reference.attention_backward` on the worked example,
    with L = Σ output: equal to ``torch.autograd`` (float64); equal to the central differences
    ``(L(w + ε) − L(w − ε)) / 2ε`` for every entry of X, W_Q, W_K, W_V and W_O; and every
    masked entry of ∂S̃ (above the diagonal) exactly 0, since ∂S̃ = A ⊙ (∂A − rowsum(∂A ⊙ A))
    carries the factor A = 0 there."""
    w = WORDS[lang]
    args = _example()
    leaves = {k: v.clone().requires_grad_() for k, v in args.items()}
    ref.masked_multihead_attention(*leaves.values()).output.sum().backward()
    by_hand = ref.attention_backward(ref.masked_multihead_attention(*args.values()))
    auto = max(float((getattr(by_hand, k) - v.grad).abs().max()) for k, v in leaves.items())
    fd = 0.0
    for name, value in args.items():
        for ix in torch.cartesian_prod(*(torch.arange(s) for s in value.shape)).reshape(
            -1, value.dim()
        ):
            at = tuple(ix.tolist())
            plus, minus = value.clone(), value.clone()
            plus[at] += EPS
            minus[at] -= EPS
            est = (_loss({**args, name: plus}) - _loss({**args, name: minus})) / (2 * EPS)
            fd = max(fd, abs(est - float(getattr(by_hand, name)[at])))
    n = sum(v.numel() for v in args.values())
    blocked = torch.ones(3, 3, dtype=torch.bool).triu(1)
    zeros = int((by_hand.S_masked[..., blocked] == 0).sum())
    out = [
        check(
            w["autograd"],
            auto < 1e-12,
            prose(w["autograd_detail"].format(auto=auto), lang),
            lang=lang,
        ),
        "",
        check(
            w["fd"],
            fd < 1e-6,
            prose(w["fd_detail"].format(n=n, fd=fd), lang),
            lang=lang,
        ),
        "",
        check(
            w["masked"],
            zeros == by_hand.S_masked[..., blocked].numel(),
            prose(w["masked_detail"].format(zeros=zeros), lang),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def backward_walk(lang: str) -> str:
    """Every step of the backward pass of the worked example with L = Σ output (the steps of
    ``attnref explain --backward``), from ∂W_O = Concatᵀ G down to ∂X, the sum of the query,
    key and value paths."""
    expl = TOLD[lang](backward_steps("life-is-awesome"))
    return to_book(expl, 3, heading=3)


def head_one(lang: str) -> str:
    """Head 1 under two upstream gradients. With L = Σ output, ∂A⁽¹⁾ = ∂H⁽¹⁾ V⁽¹⁾ᵀ is a
    constant (every value row of V⁽¹⁾ has the same sum), and the softmax backward
    ∂S̃ = A ⊙ (∂A − rowsum(∂A ⊙ A)) removes a constant row: ∂S̃⁽¹⁾ = 0 (said only when it
    holds). With G = 1 at (awesome, y₁) only, ∂S̃⁽¹⁾ and ∂X, and the check that head 1 now
    gets a gradient, 0 in the rows where G is 0."""
    w = WORDS[lang]
    out = []
    sums = ex.life_trace().head(0)["V"].sum(1)  # the row sums of V⁽¹⁾
    ones = backward_steps("life-is-awesome").data["grads"]["heads"][0]
    dA1 = torch.tensor(ones["A"])
    flat = float(torch.tensor(ones["S_masked"]).abs().max()) == 0.0
    if bool((sums == sums[0]).all()) and flat:
        row = w["constant_row"].format(row_sum=int(sums[0]), dA=f"{float(dA1[0, 0]):g}")
        out.append(prose(row, lang))
    grads = backward_steps("life-is-awesome", G_AWESOME_Y1).data["grads"]
    dS1 = torch.tensor(grads["heads"][0]["S_masked"])
    out.append(math_said(matrix(r"\partial \tilde S^{(1)}", dS1, 4), lang))
    out.append(math_said(matrix(r"\partial X", grads["X"], 4), lang))
    first_rows_zero = bool((dS1[:2] == 0).all())
    out.append(
        check(
            w["head1"],
            bool(dS1.abs().max() > 0) and first_rows_zero,
            prose(w["head1_detail"].format(largest=float(dS1.abs().max())), lang),
            lang=lang,
        )
    )
    return "\n".join(out)
