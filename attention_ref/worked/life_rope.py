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

from attention_ref import reference as ref
from attention_ref.reference import rope as ref_rope
from attention_ref.reference.spec import ROPE_BASE
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, said
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.layout import forward_sections
from attention_ref.worked.trace import L, t, trace_json
from attention_ref.worked.words_grouped import ROPE

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


def rope_trace(rope: bool = True) -> ref.AttentionTrace:
    """The example with RoPE (``rope=False``: the same head without it, for comparison)."""
    return ref.masked_multihead_attention(
        t(life.LIFE_X),
        *rope_weights(),
        rope_base=ROPE_BASE if rope else None,
        tokens=life.LIFE_TOKENS,
    )


def shifted_score(tr: ref.AttentionTrace, shift: int) -> float:
    r"""The score of query ``SHIFT_QUERY`` and key ``SHIFT_KEY`` with both tokens moved
    ``shift`` positions on: $(R_{m+s} q) \cdot (R_{n+s} k)$."""
    q, k = tr.Q[0, SHIFT_QUERY : SHIFT_QUERY + 1], tr.K[0, SHIFT_KEY : SHIFT_KEY + 1]
    m = torch.tensor([float(SHIFT_QUERY + shift)])
    n = torch.tensor([float(SHIFT_KEY + shift)])
    return float(ref_rope.apply_rope(q, m, ROPE_BASE) @ ref_rope.apply_rope(k, n, ROPE_BASE).T)


def rotation_norm_gap(tr: ref.AttentionTrace) -> float:
    """The largest change of a query's or a key's norm under the rotation (a rotation keeps
    lengths: rounding only)."""
    gap = float((tr.Q_rot.norm(dim=-1) - tr.Q.norm(dim=-1)).abs().max())
    return max(gap, float((tr.K_rot.norm(dim=-1) - tr.K.norm(dim=-1)).abs().max()))


def rope_sections(tr: ref.AttentionTrace, lang: str = "en") -> list[Section]:
    """The angles $m\theta_i$, their cosines and sines, and the rotated ``Q``, ``K``, in
    ``lang``'s words (`attention_ref.worked.words_grouped.ROPE`)."""
    say = ROPE[lang]
    tok = list(tr.tokens)
    d = tr.d_k
    theta = ref_rope.rope_frequencies(d, ROPE_BASE)
    angles = ref_rope.rope_angles(tr.positions, theta)
    rows = [f"{w} (m = {int(m)})" for w, m in zip(tok, tr.positions.tolist(), strict=True)]
    pairs = [f"pair {i}" for i in range(d // 2)]
    positions = [int(m) for m in tr.positions.tolist()]
    angles_text = say["angles_text"].format(
        d=d,
        pairs_n=d // 2,
        pairs=", ".join(f"(x_{2 * i}, x_{2 * i + 1})" for i in range(d // 2)),
        base=f"{ROPE_BASE:g}",
        theta=say["theta_sep"].join(
            f"θ_{i} = {said(v, 'g', lang)}" for i, v in enumerate(theta.tolist())
        ),
        positions=", ".join(map(str, positions)),
    )
    rotate_text = say["rotate_text"].format(
        first=tok[0], m=positions[0], gap=said(rotation_norm_gap(tr), ".1e", lang)
    )
    return [
        Section(
            title=say["angles"],
            text=angles_text,
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
            title=say["rotate"],
            text=rotate_text,
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


def what_rope_changes(
    tr: ref.AttentionTrace, lang: str = "en"
) -> tuple[Section, dict[str, JSONValue]]:
    """The scores without RoPE, and the shift check, with the numbers that support the words,
    in ``lang``'s words (`attention_ref.worked.words_grouped.ROPE`)."""
    say = ROPE[lang]
    tok = list(tr.tokens)
    plain = rope_trace(rope=False)
    s0 = float(tr.QKt[0, SHIFT_QUERY, SHIFT_KEY])
    s_shift = shifted_score(tr, SHIFT)
    gap = abs(s0 - s_shift)
    same = gap < 1e-9
    text = (
        say["changes_text"].format(
            q=tok[SHIFT_QUERY],
            m=SHIFT_QUERY,
            k=tok[SHIFT_KEY],
            n=SHIFT_KEY,
            score=said(s0, ".6f", lang),
            m_moved=SHIFT_QUERY + SHIFT,
            n_moved=SHIFT_KEY + SHIFT,
            moved=said(s_shift, ".6f", lang),
            gap=said(gap, ".1e", lang),
        )
        + say["changes_same" if same else "changes_differ"]
    )
    section = Section(
        title=say["changes"],
        text=text,
        items=[
            Mat(
                symbol="Q K^\\top",
                text=say["plain_label"],
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


def explain(lang: str = "en") -> Explanation:
    """RoPE on one head of width 4, seed 000's numbers, positions 0, 1, 2, in ``lang``'s
    words."""
    say = ROPE[lang]
    tr = rope_trace()
    changes, numbers = what_rope_changes(tr, lang)
    sections = forward_sections(
        tr,
        input_text=say["input_text"].format(d=tr.d_k),
        after_projections=rope_sections(tr, lang),
        output_note=say["output_note"].format(d=tr.d_k),
        lang=lang,
    )
    theta = ref_rope.rope_frequencies(tr.d_k, ROPE_BASE)
    return Explanation(
        title=say["title"],
        source=say["source"].format(d=tr.d_k, base=f"{ROPE_BASE:g}"),
        sections=[*sections, changes],
        data={**trace_json(tr), "theta": theta.tolist(), "check": numbers},
        lang=lang,
    )


def explain_backward(G: Matrix | None = None, lang: str = "en") -> Explanation:
    """The example, then its backward: RoPE's gradient is the rotation's transpose."""
    return with_gqa_backward(explain(lang=lang), rope_trace(), G, lang)
