r"""ALiBi on "Life is awesome": a penalty proportional to the distance, one slope per head.

Seed 000's example (``h = 2`` heads, causal, ``W_O = I_4``) with ALiBi's biases
(`attention_ref.reference.windows.alibi_mask`) added to the scores: head ``i`` subtracts
$m_i$ times the distance,

$$
\tilde S^{(i)}_{tu} = S^{(i)}_{tu} - m_i\,(t - u) + M_{tu},\qquad m_i = 2^{-8i/h}:\
m_1 = 2^{-4},\ m_2 = 2^{-8}
$$

(Press, Smith and Lewis, 2022). With two heads the slopes are small, and the explanation
says, with the numbers, how much each head's weights moved against seed 000's.
"""

from __future__ import annotations

from attention_ref import reference as ref
from attention_ref.reference import windows
from attention_ref.render import Explanation, JSONValue, Matrix, Section, said
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.layout import forward_sections, mask_section
from attention_ref.worked.trace import trace_json
from attention_ref.worked.words_grouped import ALIBI, GROUPED


def alibi_trace() -> ref.AttentionTrace:
    """Seed 000's heads with ALiBi's per-head biases and the causal mask."""
    n, h = len(life.LIFE_TOKENS), len(life.LIFE_W_Q)
    return life.life_trace(windows.alibi_mask(windows.alibi_slopes(h), n))


def weight_shift(tr: ref.AttentionTrace, lang: str = "en") -> tuple[Section, dict[str, JSONValue]]:
    """How far each head's weights moved from seed 000's (no bias), and towards what, in
    ``lang``'s words (`attention_ref.worked.words_grouped.ALIBI`)."""
    say = ALIBI[lang]
    seed = life.life_trace()
    tok = list(tr.tokens)
    slopes = windows.alibi_slopes(tr.h).tolist()
    gaps = [float((tr.A[i] - seed.A[i]).abs().max()) for i in range(tr.h)]
    last = tr.A.shape[-1] - 1
    near = [float(tr.A[i, last, last] - seed.A[i, last, last]) for i in range(tr.h)]
    parts = [
        say["head"].format(
            head=i + 1,
            slope=said(slopes[i], "g", lang),
            gap=said(gaps[i], ".4f", lang),
            last=tok[last],
            sign="+" if near[i] >= 0 else "−",
            near=said(abs(near[i]), ".4f", lang),
        )
        for i in range(tr.h)
    ]
    steeper = max(range(tr.h), key=lambda i: gaps[i])
    text = say["against"].format(heads="; ".join(parts))
    if slopes[steeper] == max(slopes) and gaps[steeper] > min(gaps):
        text += say["steeper"].format(head=steeper + 1)
    if all(v > 0 for v in near):
        text += say["nearest"].format(last=tok[last])
    return Section(title=say["changes"], text=text), {
        "slopes": slopes,
        "largest_weight_change": gaps,
        "self_change": near,
    }


def explain(lang: str = "en") -> Explanation:
    """Seed 000 with ALiBi's biases (slopes 2⁻⁴, 2⁻⁸ for two heads), in ``lang``'s words."""
    say = ALIBI[lang]
    tr = alibi_trace()
    slopes = windows.alibi_slopes(tr.h).tolist()
    slope_text = say["slope_sep"].join(
        f"m_{i + 1} = {said(s, 'g', lang)}" for i, s in enumerate(slopes)
    )
    mask = mask_section(
        tr,
        title=say["mask"],
        text=say["mask_text"].format(slopes=slope_text, h=tr.h),
        per_head=True,
        symbol="B",
    )
    shift, numbers = weight_shift(tr, lang)
    d_out = int(tr.output.shape[-1])
    sections = forward_sections(
        tr, mask=mask, output_note=GROUPED[lang]["concat_note"].format(d_out=d_out), lang=lang
    )
    return Explanation(
        title=say["title"],
        source=say["source"].format(h=tr.h, d_out=d_out),
        sections=[*sections, shift],
        data={**trace_json(tr), **numbers},
        lang=lang,
    )


def explain_backward(G: Matrix | None = None, lang: str = "en") -> Explanation:
    """The example, then its backward: the biases are constants, like the mask."""
    return with_gqa_backward(explain(lang=lang), alibi_trace(), G, lang)
