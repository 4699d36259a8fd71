r"""Rotary position embeddings on "Life is awesome": one head of width 4, rotated by position.

Seed 000's ``X`` with its two heads' matrices side by side as one head of width ``d_k = 4``
($W_Q = [W_Q^{(1)} \mid W_Q^{(2)}]$, and ``W_K``, ``W_V`` alike; ``W_O = I_4``), so that
RoPE has two pairs to turn: with RoFormer's base 10000, $\theta_0 = 1$ and $\theta_1 =
10000^{-1/2} = 0.01$ radian per position. The tokens sit at positions 0, 1, 2 ("Life" is not
rotated). The explanation shows the angles, the rotated queries and keys, the attention on
them, and checks with the numbers that a score depends on the positions only through their
difference.
"""

from __future__ import annotations

from typing import Final

import torch

from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference import rope as ref_rope
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.grouped_layout import forward_sections, trace_json
from attention_ref.worked.trace import L, t

ROPE_BASE: Final = ref_rope.DEFAULT_BASE
#: the pair (query "awesome", key "Life") whose score the shift check moves, and the shift
SHIFT_QUERY: Final = 2
SHIFT_KEY: Final = 0
SHIFT: Final = 5


def rope_weights() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One head of width 4: seed 000's two heads side by side, ``(1, 4, 4)`` each; ``W_O = I_4``."""

    def side_by_side(heads: list[Matrix]) -> torch.Tensor:
        # (2, 4, 2) -> (4, 2, 2) -> (4, 4) -> (1, 4, 4): columns of head 1, then of head 2
        return t(heads).permute(1, 0, 2).reshape(4, 4).unsqueeze(0)

    W = [side_by_side(W) for W in (life.LIFE_W_Q, life.LIFE_W_K, life.LIFE_W_V)]
    return W[0], W[1], W[2], torch.eye(4, dtype=torch.float64)


def rope_trace(rope: bool = True) -> ref_gqa.GQATrace:
    """The example with RoPE (``rope=False``: the same head without it, for comparison)."""
    return ref_gqa.grouped_query_attention(
        t(life.LIFE_X),
        *rope_weights(),
        rope_base=ROPE_BASE if rope else None,
        tokens=life.LIFE_TOKENS,
    )


def shifted_score(tr: ref_gqa.GQATrace, shift: int) -> float:
    r"""The score of query ``SHIFT_QUERY`` and key ``SHIFT_KEY`` with both tokens moved
    ``shift`` positions on: $(R_{m+s} q) \cdot (R_{n+s} k)$."""
    q, k = tr.Q[0, SHIFT_QUERY : SHIFT_QUERY + 1], tr.K[0, SHIFT_KEY : SHIFT_KEY + 1]
    m = torch.tensor([float(SHIFT_QUERY + shift)])
    n = torch.tensor([float(SHIFT_KEY + shift)])
    return float(ref_rope.apply_rope(q, m, ROPE_BASE) @ ref_rope.apply_rope(k, n, ROPE_BASE).T)


def rotation_norm_gap(tr: ref_gqa.GQATrace) -> float:
    """The largest change of a query's or a key's norm under the rotation (a rotation keeps
    lengths: rounding only)."""
    gap = float((tr.Q_rot.norm(dim=-1) - tr.Q.norm(dim=-1)).abs().max())
    return max(gap, float((tr.K_rot.norm(dim=-1) - tr.K.norm(dim=-1)).abs().max()))


def rope_sections(tr: ref_gqa.GQATrace) -> list[Section]:
    """The angles $m\theta_i$, their cosines and sines, and the rotated ``Q``, ``K``."""
    tok = list(tr.tokens)
    d = tr.d_k
    theta = ref_rope.rope_frequencies(d, ROPE_BASE)
    angles = ref_rope.rope_angles(tr.positions, theta)
    rows = [f"{w} (m = {int(m)})" for w, m in zip(tok, tr.positions.tolist(), strict=True)]
    pairs = [f"pair {i}" for i in range(d // 2)]
    norm_gap = rotation_norm_gap(tr)
    theta_text = ", ".join(f"θ_{i} = {v:g}" for i, v in enumerate(theta.tolist()))
    return [
        Section(
            title="RoPE's angles: θ_i = base^(−2i/d_k), and m θ_i for the token at position m",
            text=f"d_k = {d}: {d // 2} pairs of coordinates (x_0, x_1), (x_2, x_3); base "
            f"{ROPE_BASE:g}, so {theta_text} radian per position. The positions are 0, 1, 2.",
            items=[
                Mat(symbol="\\theta", value=L(theta), cols=pairs),
                Mat(symbol="m \\theta_i", value=L(angles), rows=rows, cols=pairs),
                Mat(
                    symbol="\\cos m\\theta_i",
                    text="cos mθ_i",
                    value=L(torch.cos(angles)),
                    rows=rows,
                    cols=pairs,
                ),
                Mat(
                    symbol="\\sin m\\theta_i",
                    text="sin mθ_i",
                    value=L(torch.sin(angles)),
                    rows=rows,
                    cols=pairs,
                ),
            ],
        ),
        Section(
            title="Rotate each pair: x'_2i = x_2i cos mθ_i − x_2i+1 sin mθ_i, "
            "x'_2i+1 = x_2i sin mθ_i + x_2i+1 cos mθ_i",
            text="The queries and keys are rotated; the values are not. Row m turns by its own "
            "angles, so 'Life' (m = 0) is unchanged. A rotation keeps lengths: every row has "
            f"its norm (largest change {norm_gap:.1e}).",
            items=[
                Mat(
                    symbol="Q_{\\text{rot}}",
                    value=L(tr.Q_rot[0]),
                    rows=tok,
                    formula="Q R_m^\\top",
                    formula_text="Q R_mᵀ, row by row",
                ),
                Mat(
                    symbol="K_{\\text{rot}}",
                    value=L(tr.K_rot[0]),
                    rows=tok,
                    formula="K R_m^\\top",
                    formula_text="K R_mᵀ, row by row",
                ),
            ],
        ),
    ]


def what_rope_changes(tr: ref_gqa.GQATrace) -> tuple[Section, dict[str, JSONValue]]:
    """The scores without RoPE, and the shift check, with the numbers that support the words."""
    tok = list(tr.tokens)
    plain = rope_trace(rope=False)
    s0 = float(tr.QKt[0, SHIFT_QUERY, SHIFT_KEY])
    s_shift = shifted_score(tr, SHIFT)
    gap = abs(s0 - s_shift)
    same = gap < 1e-9
    q, k = tok[SHIFT_QUERY], tok[SHIFT_KEY]
    text = (
        f"Without RoPE the head scores Q Kᵀ above. With it, the score of '{q}' (m = "
        f"{SHIFT_QUERY}) against '{k}' (n = {SHIFT_KEY}) is {s0:.6f}; the same two tokens "
        f"moved to positions {SHIFT_QUERY + SHIFT} and {SHIFT_KEY + SHIFT} score "
        f"{s_shift:.6f} "
        + (
            f"(difference {gap:.1e}): the score depends on the distance m − n only."
            if same
            else f"(difference {gap:.1e}): NOT the same score."
        )
    )
    section = Section(
        title="What RoPE changes: the scores, which now depend on m − n",
        text=text,
        items=[
            Mat(
                symbol="Q K^\\top",
                text="Q Kᵀ without RoPE",
                value=L(plain.QKt[0]),
                rows=tok,
                cols=tok,
            )
        ],
    )
    data: dict[str, JSONValue] = {
        "score": s0,
        "shift": SHIFT,
        "shifted_score": s_shift,
        "QKt_without_rope": L(plain.QKt[0]),
    }
    return section, data


def explain() -> Explanation:
    """RoPE on one head of width 4, seed 000's numbers, positions 0, 1, 2."""
    tr = rope_trace()
    changes, numbers = what_rope_changes(tr)
    sections = forward_sections(
        tr,
        input_text="One head of width 4: seed 000's two heads side by side (W_Q = "
        "[W_Q⁽¹⁾ | W_Q⁽²⁾], and W_K, W_V alike).",
        after_projections=rope_sections(tr),
        output_note="W_O = I_4, so the output is the head's output.",
    )
    theta = ref_rope.rope_frequencies(tr.d_k, ROPE_BASE)
    return Explanation(
        title='Rotary position embeddings (RoPE): "Life is awesome"',
        source=f"seed 000's X and weights as one head of width 4; RoFormer's RoPE, base "
        f"{ROPE_BASE:g}, pairs (2i, 2i+1)",
        sections=[*sections, changes],
        data={**trace_json(tr), "theta": theta.tolist(), "check": numbers},
    )


def explain_backward(G: Matrix | None = None) -> Explanation:
    """The example, then its backward: RoPE's gradient is the rotation's transpose."""
    return with_gqa_backward(explain(), rope_trace(), G)
