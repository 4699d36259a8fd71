"""The Q03 report: every sentence follows the numbers (constructed rows on both sides of each
threshold, no MLflow), then the same words checked against a real tiny ablation."""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields
from pathlib import Path

import pytest

from attention_ref.experiments.findings import (
    AGREEMENT_TOLERANCE,
    BASELINE_TOLERANCE,
    PLATEAU_TOLERANCE,
    ArmRow,
    Baselines,
    Part,
    Side,
    comparability,
    cost,
    findings,
    plateau,
    plateau_step,
    recorded_parts,
    rows_from_comparison,
    side,
)
from attention_ref.experiments.names import Metric
from attention_ref.experiments.report import (
    build_report,
    comparability_sentence,
    comparison_markdown,
)
from attention_ref.lm.config import TrainConfig
from attention_ref.lm.train import EvalMetrics, StepMetrics

BASE = Baselines(
    vocab_size=65, unigram=3.347, bigram=2.48, bigram_smoothing=1.0, bigram_fitted_on_val=2.37
)
CONFIG = {k: str(v) for k, v in TrainConfig().to_flat().items()}  # seed 1337, 6000 steps…
SHA = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
TOL, EPS = BASELINE_TOLERANCE, 0.005  # EPS: how far past a threshold a constructed row lands
RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


def arm(
    attention: str,
    best: float,
    n_params: int = 297_216,
    *,
    curve: list[tuple[int, float]] | None = None,
    train: float | None = None,
    tokens_per_sec: float = 40_000.0,
    steps: int = 1000,
    data_sha256: str | None = SHA,
    **options: object,
) -> ArmRow:
    """A finished arm: by default its curve levels off early at ``best``, train = validation."""
    metrics = {m: best for m in ArmRow.METRICS.values()}
    metrics |= {Metric.MEAN_TOKENS_PER_SEC: tokens_per_sec, Metric.WALL_TIME_S: 100.0}
    if train is not None:
        metrics[Metric.FINAL_TRAIN_EVAL_LOSS] = train
    curve = curve or [(250, 3.0), (500, best + 0.01), (750, best), (1000, best)]
    config = CONFIG | {"attention": attention} | {k: str(v) for k, v in options.items()}
    return ArmRow.from_metrics(
        attention,
        f"run-{attention}",
        "FINISHED",
        n_params,
        steps,
        metrics,
        curve,
        config=config,
        data_sha256=data_sha256,
    )


def report(*arms: ArmRow, base: Baselines = BASE) -> str:
    return build_report("e", "ablation run `p`", arms, base)


def bullet(text: str, title: str) -> str:
    """The bullet of the report that starts with ``title``."""
    return next(line for line in text.splitlines() if line.startswith(f"* **{title}"))


def test_the_loop_s_payloads_are_the_metric_names():
    """A renamed field of the loop's payloads fails here, not in a slow end-to-end run."""
    for payload in (StepMetrics, EvalMetrics):
        for f in fields(payload):
            assert Metric(f.name) == f.name


def test_a_row_reads_each_figure_from_its_metric():
    row = ArmRow.from_metrics(
        "none",
        "r",
        "FINISHED",
        10,
        5,
        {
            Metric.BEST_VAL_LOSS: 1.0,
            Metric.FINAL_VAL_LOSS: 2.0,
            Metric.FINAL_TRAIN_EVAL_LOSS: 3.0,
            Metric.MEAN_TOKENS_PER_SEC: 4.0,
            Metric.WALL_TIME_S: 5.0,
        },
        config={"seed": 7, "lr": 0.003},
    )
    assert (row.best_val_loss, row.final_val_loss, row.final_train_loss) == (1.0, 2.0, 3.0)
    assert (row.tokens_per_sec, row.wall_time_s) == (4.0, 5.0)
    assert row.config == {"seed": "7", "lr": "0.003"} and row.seed == "7"  # as MLflow params
    with pytest.raises(KeyError):
        ArmRow.from_metrics("none", "r", "FINISHED", 10, 5, {Metric.BEST_VAL_LOSS: 1.0})


def test_the_report_states_every_figure_it_is_given():
    arms = [
        arm("multihead", 1.58, 429_824),
        arm("none", 2.486, 297_216),
        arm("uniform", 2.26, 363_776),
    ]
    text = report(*arms)
    assert "| none | 297,216 | 2.4860 |" in text and "ln 65 = 4.174" in text
    assert "(unigram) 3.347" in text and "**bigram baseline** 2.480" in text
    assert "counted on the training split (add-one smoothing)" in text
    assert (
        "It is not a lower bound: the table counted on the validation split itself gives "
        "2.370." in text
    )
    # rows that do not record which parameters are attention: the difference is not called so
    assert (
        "The model with attention has 429,824 parameters, without it 297,216; which of "
        "them are attention is not recorded" in text
    )
    assert "Attention has" not in text
    assert "Runs: multihead `run-multihead`, none `run-none`, uniform `run-uniform`." in text
    assert "floor" not in text.lower()
    assert text == report(*arms)  # pure


# ------------------------------------------------------------------- the bigram baseline


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (-TOL - EPS, Side.BELOW),
        (-TOL + EPS, Side.AT),
        (TOL - EPS, Side.AT),
        (TOL + EPS, Side.ABOVE),
    ],
)
def test_side_of_a_reference(delta, expected):
    assert side(2.48 + delta, 2.48) is expected


@pytest.mark.parametrize(
    ("best", "says", "never"),
    [
        (
            2.553,
            "0.073 nats above the bigram baseline: at these steps it has not learned even "
            "the bigram table",
            "below",
        ),  # the "-0.073 nats below the bigram floor"
        (
            2.48 + TOL - EPS,
            "at the bigram baseline (+0.025 nats, within 0.03): at these steps it "
            "has learned no more than",
            "below the bigram",
        ),
        (
            2.48 - TOL - EPS,
            "0.035 nats below the bigram baseline, but not below the bigram table "
            "counted on the validation split (2.370): these numbers alone do not show",
            "use context",
        ),
        (
            2.37 - TOL - EPS,
            "nats below the bigram baseline, and below even the bigram table "
            "counted on the validation split itself (2.370)",
            "do not show",
        ),
    ],
)
def test_the_sentence_on_attention_follows_the_side_of_the_baseline(best, says, never):
    line = bullet(report(arm("multihead", best)), "With attention")
    assert says in line and never not in line
    assert not re.search(r"-\d+\.\d+ nats (below|above)", line)  # the sign is in the words


def test_context_is_claimed_only_with_the_validation_fitted_table_known():
    base = Baselines(65, 3.347, 2.48)  # no table fitted on validation
    line = bullet(report(arm("multihead", 1.6), base=base), "With attention")
    assert "0.880 nats below the bigram baseline." in line and "context" not in line
    assert "not a lower bound" not in report(arm("none", 2.5), base=base)


def test_not_a_lower_bound_is_said_only_when_it_is_not_one():
    assert "It is not a lower bound" in report(arm("none", 2.5))
    higher = Baselines(65, 3.347, 2.48, bigram_fitted_on_val=2.49)
    text = report(arm("none", 2.5), base=higher)
    assert "not a lower bound" not in text
    assert "The table counted on the validation split itself gives 2.490." in text
    assert "(add-0.5 smoothing)" in report(arm("none", 2.5), base=Baselines(65, 3.3, 2.48, 0.5))


@pytest.mark.parametrize(
    ("best", "says", "never"),
    [
        (
            2.489,
            "reaches 2.489, at the bigram baseline (+0.009 nats, within 0.03): at these steps "
            "mixing context has not helped",
            "below",
        ),  # the "2.489: below the floor"
        (
            2.48 - TOL - EPS,
            "0.035 nats below the bigram baseline, but not below the bigram table",
            "already helps",
        ),
        (
            2.30,
            "0.180 nats below the bigram baseline, and below even the bigram table counted on "
            "the validation split itself (2.370), which no table P(next | current) beats there: "
            "mixing context already helps",
            "not below",
        ),
        (
            2.48 + TOL + EPS,
            "0.035 nats above the bigram baseline: at these steps it has not "
            "learned even the bigram table",
            "helps",
        ),
    ],
)
def test_the_sentence_on_uniform_attention_follows_the_numbers(best, says, never):
    line = bullet(report(arm("uniform", best)), "Uniform attention")
    assert says in line and never not in line


@pytest.mark.parametrize(
    ("learned", "says"),
    [
        (
            2.30 - TOL - EPS,
            "Learned attention is 0.035 nats lower (2.265): that difference is "
            "what learning *where to look* is worth here, on one seed.",
        ),
        (
            2.30 - TOL + EPS,
            "It is within 0.03 of learned attention (2.275, +0.025): at these "
            "steps learning where to look has not paid.",
        ),
        (
            2.30 + TOL + EPS,
            "It is 0.035 nats below learned attention (2.335): at these steps "
            "equal weights beat learned ones, on one seed.",
        ),
    ],
)
def test_uniform_against_learned_attention_follows_the_numbers(learned, says):
    line = bullet(report(arm("multihead", learned), arm("uniform", 2.30)), "Uniform attention")
    assert says in line
    assert ("worth" in line) is (learned < 2.30 - TOL)


@pytest.mark.parametrize(
    ("gap", "leak", "learned"),
    [
        (-TOL - EPS, True, False),
        (-TOL + EPS, False, True),
        (TOL - EPS, False, True),
        (TOL + EPS, False, False),
    ],
)
def test_the_leak_of_context_warning_follows_the_numbers(gap, leak, learned):
    line = bullet(report(arm("none", BASE.bigram + gap)), "Without attention")
    said = {
        Side.BELOW: f"{-gap:.3f} nats below the bigram baseline",
        Side.AT: f"at the bigram baseline ({gap:+.3f} nats, within 0.03)",
        Side.ABOVE: f"{gap:.3f} nats above the bigram baseline",
    }
    where = Side.BELOW if gap < -TOL else Side.ABOVE if gap > TOL else Side.AT
    assert [s for s in said.values() if s in line] == [said[where]]
    assert ("look for context leaking" in line) is leak
    assert ("has learned about as much as the bigram table" in line) is learned
    assert ("has not yet learned the bigram table" in line) is (gap > TOL)
    assert "context leaks." not in line  # not below the validation-fitted table


def test_below_even_the_validation_fitted_table_context_leaks():
    line = bullet(report(arm("none", 2.37 - TOL - EPS)), "Without attention")
    assert "look for context leaking" in line and "context leaks." in line
    assert "It is even below the bigram table counted on the validation split (2.370)" in line


# ---------------------------------------------------------------- plateau and more steps


def test_plateau_step():
    assert plateau_step([(1, 3.0), (2, 2.6), (3, 2.51), (4, 2.5)]) == 3
    assert plateau_step([(1, 3.0), (2, 2.0)]) == 2


@pytest.mark.parametrize(
    ("curve", "early", "levelled"),
    [
        ([(0, 3.0), (250, 2.5), (500, 2.49), (750, 2.49), (1000, 2.49)], True, True),
        ([(0, 3.0), (250, 2.7), (500, 2.6), (750, 2.5), (1000, 2.49)], False, True),  # late
        ([(0, 3.0), (500, 2.6), (1000, 2.5 - PLATEAU_TOLERANCE - EPS)], False, False),
        ([(0, 3.0), (500, 2.5 - PLATEAU_TOLERANCE + EPS), (1000, 2.5)], True, True),
    ],
)
def test_the_plateau_words_follow_the_curve(curve, early, levelled):
    p = plateau(curve)
    assert p is not None and (p.early, p.levelled) == (early, levelled)
    line = bullet(report(arm("none", 2.49, curve=curve)), "Without attention")
    assert ("The curve levels off early" in line) is early
    assert ("The curve levels off only late" in line) is (levelled and not early)
    assert ("The curve has not levelled off" in line) is (not levelled)
    assert ("More steps would not help" in line) is early
    assert ("these steps do not show where it stops" in line) is (not levelled)


@pytest.mark.parametrize("apart", [AGREEMENT_TOLERANCE - EPS, AGREEMENT_TOLERANCE + EPS])
def test_more_steps_would_not_help_needs_train_and_validation_to_agree(apart):
    line = bullet(report(arm("none", 2.49, train=2.49 - apart)), "Without attention")
    agree = apart <= AGREEMENT_TOLERANCE
    assert ("More steps would not help" in line) is agree
    assert ("agree within 0.05" in line) is agree and ("differ by more than" in line) is not agree


def test_more_steps_would_not_help_is_said_only_at_the_baseline():
    line = bullet(report(arm("none", 2.48 + TOL + EPS)), "Without attention")
    assert "levels off early" in line and "More steps would not help" not in line


# --------------------------------------------------------------------- ranking and cost


@pytest.mark.parametrize("apart", [TOL - EPS, TOL + EPS])
def test_the_best_arm_is_named_only_when_it_is_clearly_best(apart):
    text = report(arm("multihead", 2.40), arm("uniform", 2.40 + apart), arm("none", 2.49))
    clear = apart > TOL
    assert ("**Lowest validation loss: multihead** (2.400)" in text) is clear
    assert ("**No clear best arm:** multihead (2.400) and uniform" in text) is not clear
    assert findings([arm("none", 2.5)], BASE).clear_lead is None  # one arm: no ranking
    assert "Lowest validation loss" not in report(arm("none", 2.5))


def test_the_lowest_arm_is_the_one_named_whatever_the_order():
    text = report(arm("multihead", 2.6), arm("none", 2.49), arm("uniform", 2.2))
    assert (
        "**Lowest validation loss: uniform** (2.200), 0.290 nats below the next (none, "
        "2.490), on one seed." in text
    )


@pytest.mark.parametrize(
    ("none_tps", "none_best", "buys_back"),
    [(66_000.0, 2.49, True), (30_000.0, 2.49, False), (66_000.0, 2.48 + TOL + EPS, False)],
)
def test_speed_does_not_buy_back_context_only_when_the_numbers_say_so(
    none_tps, none_best, buys_back
):
    text = report(
        arm("multihead", 1.6, 429_824, tokens_per_sec=39_000.0),
        arm("none", none_best, tokens_per_sec=none_tps),
    )
    line = bullet(text, "Cost")
    assert ("speed does not buy back the context" in line) is buys_back
    assert ("× as fast" in line) is (none_tps > 39_000.0)
    assert ("is not faster" in line) is (none_tps <= 39_000.0)


# ----------------------------------------------------------- what attention's parameters are

#: the Q02 model's parameters by part, and the same model without attention (tied to the real
#: model by `test_the_parts_are_read_from_the_model_itself`)
MH_PARTS = {
    Part.EMBEDDINGS: 24_704,
    Part.ATTENTION: 132_096,
    Part.ATTENTION_NORM: 512,
    Part.MLP: 263_424,
    Part.MLP_NORM: 512,
    Part.FINAL_NORM: 256,
    Part.HEAD: 8_320,
}
NONE_PARTS = {p: n for p, n in MH_PARTS.items() if p not in (Part.ATTENTION, Part.ATTENTION_NORM)}


def parted(row: ArmRow, parts: dict[Part, int]) -> ArmRow:
    row.param_groups = {str(p): n for p, n in parts.items()}
    return row


def test_the_parts_are_read_from_the_model_itself():
    """The breakdown is the real model's tensors by name; `attnref params` counts the same
    attention (2 layers of 4 d² + 4 d), and a tensor of no known part is refused."""
    from attention_ref.experiments.model_parts import model_parameter_groups, part_of
    from attention_ref.reference.params import attention_params

    options = {k: str(v) for k, v in TrainConfig().to_flat().items()}
    assert model_parameter_groups(options, 65) == MH_PARTS
    assert model_parameter_groups(options | {"attention": "none"}, 65) == NONE_PARTS
    assert MH_PARTS[Part.ATTENTION] == 2 * attention_params(128, 2).total
    assert sum(MH_PARTS.values()) == 429_824 and sum(NONE_PARTS.values()) == 297_216
    assert part_of("blocks.1.attn.qkv.bias") == Part.ATTENTION
    assert part_of("blocks.0.ln_1.weight") == Part.ATTENTION_NORM
    for name in ("blocks.0.rotary.freqs", "attn.qkv.weight", "blocks.0.attn"):
        with pytest.raises(ValueError, match="belongs to no known part"):
            part_of(name)
    with pytest.raises(ValueError, match="does not record n_layer"):
        model_parameter_groups({k: v for k, v in options.items() if k != "n_layer"}, 65)


def test_attention_s_share_is_its_own_tensors_not_the_difference_of_the_arms():
    """The issue's case: 132,608 is what the arms differ by (the LayerNorms in front of the
    attention included); attention itself is 132,096."""
    mh = parted(arm("multihead", 1.6, 429_824), MH_PARTS)
    no = parted(arm("none", 2.49), NONE_PARTS)
    c = cost(mh, no)
    assert (c.difference, c.attention) == (132_608, 132_096)
    assert c.differing == {Part.ATTENTION: 132_096, Part.ATTENTION_NORM: 512}
    line = bullet(report(mh, no), "Cost")
    assert (
        "Attention has 132,096 of the 429,824 parameters (31%); the arms differ by 132,608: "
        "132,096 in the attention sub-layers and 512 in the LayerNorm before each attention "
        "sub-layer;" in line
    )
    assert "132,608 of the" not in line


def test_a_difference_that_is_all_attention_is_said_to_be_so():
    mh = parted(arm("multihead", 1.6, 429_824 - 512), {**MH_PARTS, Part.ATTENTION_NORM: 0})
    no = parted(arm("none", 2.49), NONE_PARTS)
    line = bullet(report(mh, no), "Cost")
    assert (
        "Attention has 132,096 of the 429,312 parameters (31%): the whole difference "
        "between the arms;" in line
    )


@pytest.mark.parametrize("off_by", [1, -1])
def test_a_breakdown_that_does_not_add_up_is_not_used(off_by):
    """The control: parts that do not sum to the row's count say nothing about attention."""
    mh = parted(arm("multihead", 1.6, 429_824 + off_by), MH_PARTS)
    no = parted(arm("none", 2.49), NONE_PARTS)
    assert recorded_parts(mh) is None and cost(mh, no).attention is None
    line = bullet(report(mh, no), "Cost")
    assert "which of them are attention is not recorded" in line and "Attention has" not in line
    # the breakdown of the arm without attention missing: attention is said, the parts are not
    line = bullet(
        report(parted(arm("multihead", 1.6, 429_824), MH_PARTS), arm("none", 2.49)), "Cost"
    )
    assert (
        "Attention has 132,096 of the 429,824 parameters (31%); the arms differ by 132,608 "
        "(the other arm's parts are not recorded)" in line
    )


def test_the_committed_rows_record_their_models_parts():
    """docs/results/comparison.json: each arm's parts are those of the model its options
    build, and add up to its recorded count."""
    from attention_ref.experiments.model_parts import model_parameter_groups

    doc = json.loads((RESULTS / "comparison.json").read_text(encoding="utf-8"))
    vocab = doc["baselines"]["vocab_size"]
    for row in rows_from_comparison(doc):
        assert row.param_groups == model_parameter_groups(row.config, vocab), row.attention
        assert recorded_parts(row) is not None, row.attention


def test_a_missing_arm_is_left_out_not_invented():
    text = report(arm("none", 2.49))
    assert "With attention (Q02)" not in text and "Uniform attention" not in text
    assert "Cost." not in text  # needs both arms
    assert "A single arm: nothing to compare it with." in text


# ------------------------------------------------------------------------ comparability


def test_comparable_arms_are_said_to_be_so():
    text = report(arm("multihead", 1.6), arm("none", 2.49))
    assert (
        "Every arm has the same seed (1337), number of steps (1000), data (sha256 "
        "`86c4e6aa9db7…`), model shape, schedule and evaluation." in text
    )
    assert "not comparable" not in text


def test_arms_with_other_seeds_and_steps_are_not_called_comparable():
    """The issue's case: the latest run of each mode, 40 vs 20 steps, seeds 1337 vs 7."""
    rows = [arm("multihead", 2.4, steps=40, seed=1337), arm("none", 2.6, steps=20, seed=7)]
    text = report(*rows)
    assert (
        "**The arms are not comparable as they stand**: they differ in seed (multihead "
        "1337, none 7) and number of steps (multihead 40, none 20)" in text
    )
    assert "Every arm has the same" not in text
    assert not comparability(rows).comparable


def test_each_shared_option_is_compared():
    text = report(arm("multihead", 1.6, lr=0.01), arm("none", 2.49))
    assert f"they differ in lr (multihead 0.01, none {TrainConfig().lr})" in text
    other_data = report(arm("multihead", 1.6, data_sha256="0" * 64), arm("none", 2.49))
    assert "they differ in data (multihead sha256 `000000000000…`, none sha256" in other_data


def test_what_a_row_does_not_record_is_not_claimed():
    text = report(arm("multihead", 1.6, data_sha256=None), arm("none", 2.49))
    assert "the data is not recorded for every arm, so it is not claimed to be the same." in text
    assert "data (sha256" not in text and "Every arm has the same seed (1337)" in text
    bare = [ArmRow(a, "r", "FINISHED", 1, 2.5, 2.5, 2.5, 1.0, 1.0, 10) for a in ("x", "y")]
    c = comparability(bare)
    assert set(c.unknown) >= {"seed", "data", "lr"} and not c.comparable
    assert "Every arm has the same number of steps (10); the seed, data" in report(*bare)


def test_the_portuguese_sentence_is_the_same_judgement_in_portuguese():
    """One comparison, said in each language (the Portuguese Q03 page prints it): the same
    side of each condition, the same values."""
    same = [arm("multihead", 1.6), arm("none", 2.49)]
    assert comparability_sentence(comparability(same), 2, "pt") == (
        "Todos os braços têm a mesma semente (1337), o mesmo número de passos (1000), os mesmos "
        "dados (sha256 `86c4e6aa9db7…`), a mesma forma do modelo, o mesmo cronograma de "
        "otimização e a mesma avaliação."
    )
    differ = [arm("multihead", 2.4, steps=40, seed=1337), arm("none", 2.6, steps=20, seed=7)]
    text = comparability_sentence(comparability(differ), 2, "pt")
    assert text.startswith(
        "**Os braços não são comparáveis como estão**: diferem em semente (multihead 1337, "
        "none 7) e número de passos (multihead 40, none 20)"
    )
    missing = [arm("multihead", 1.6, data_sha256=None), arm("none", 2.49)]
    text = comparability_sentence(comparability(missing), 2, "pt")
    assert "; não há registro de dados para todos os braços, então não se afirma que seja" in text
    assert comparability_sentence(comparability(same), 1, "pt").startswith("Um só braço")


# --------------------------------------------------------------- tables and exported rows


def test_comparison_table_has_one_line_per_arm_and_the_baseline():
    md = comparison_markdown([arm("multihead", 1.5), arm("none", 2.5)], 2.48)
    assert md.count("\n| ") == 2 and md.rstrip().endswith("training split): 2.4800 nats")
    assert "Bigram baseline (validation cross-entropy of the bigram model" in md


def test_rows_from_an_export_take_the_shared_options_of_the_parent():
    doc = {
        "params": {
            "seed": "1337",
            "max_steps": "2600",
            "arms": "multihead,none",
            "bigram_floor": "2.479788",
        },
        "rows": [
            {
                "attention": "multihead",
                "run_id": "a",
                "status": "FINISHED",
                "n_params": 1,
                "best_val_loss": 1.5,
                "final_val_loss": 1.5,
                "final_train_loss": 1.4,
                "tokens_per_sec": 1.0,
                "wall_time_s": 1.0,
                "steps": 2600,
            },
            {
                "attention": "none",
                "run_id": "b",
                "status": "FINISHED",
                "n_params": 1,
                "best_val_loss": 2.5,
                "final_val_loss": 2.5,
                "final_train_loss": 2.5,
                "tokens_per_sec": 1.0,
                "wall_time_s": 1.0,
                "steps": 2600,
                "config": {"seed": 7},
                "data_sha256": SHA,
            },
        ],
        "curves": {"multihead": {"val_loss": [[250, 2.0], [2600, 1.5]]}},
    }
    mh, no = rows_from_comparison(doc)
    assert mh.config == {"seed": "1337", "max_steps": "2600"} and mh.data_sha256 is None
    assert mh.val_curve == [(250, 2.0), (2600, 1.5)] and no.val_curve == []
    assert no.config == {"seed": "7"} and no.data_sha256 == SHA


def test_the_committed_report_is_the_one_its_numbers_give():
    """docs/results/q03-report.md is what `build_report` writes from docs/results (regenerate
    with `attention_ref.experiments.export.refresh_report` when the words change)."""
    doc = json.loads((RESULTS / "comparison.json").read_text(encoding="utf-8"))
    base = Baselines(**doc["baselines"])
    text = build_report(doc["experiment"], doc["source"], rows_from_comparison(doc), base)
    assert (RESULTS / "q03-report.md").read_text(encoding="utf-8") == text
    assert doc["bigram_floor"] == base.bigram


# ------------------------------------------------------------------ a real tiny ablation


def _claims_match(text: str, rows: list[ArmRow], base: Baselines) -> None:
    """Each arm's side of the baseline, computed here, is the one the words give."""
    for r in rows:
        gap = r.best_val_loss - base.bigram
        if gap < -BASELINE_TOLERANCE:
            assert f"{r.best_val_loss:.3f}, {-gap:.3f} nats below the bigram baseline" in text
        elif gap > BASELINE_TOLERANCE:
            assert f"{r.best_val_loss:.3f}, {gap:.3f} nats above the bigram baseline" in text
        else:
            assert f"{r.best_val_loss:.3f}, at the bigram baseline ({gap:+.3f} nats" in text
    assert not re.search(r"-\d+\.\d+ nats (below|above)", text)
    ranked = sorted(rows, key=lambda r: r.best_val_loss)
    if ranked[1].best_val_loss - ranked[0].best_val_loss > BASELINE_TOLERANCE:
        assert f"**Lowest validation loss: {ranked[0].attention}**" in text
    else:
        assert "**No clear best arm:**" in text


def test_a_real_ablation_reads_as_its_numbers(store, shakespeare, tmp_path):
    from attention_ref.experiments import export, results
    from attention_ref.experiments.ablation import run_sweep
    from attention_ref.experiments.store import connect
    from attention_ref.experiments.sweep import ablation_sweep
    from tests.configs import tiny

    connect(store)
    cfg = tiny(max_steps=60, eval_interval=20)
    o = run_sweep(
        ablation_sweep(cfg), shakespeare, out_root=tmp_path / "runs", log_system_metrics=False
    )
    text = results.q03_report("shakespeare", shakespeare)
    base = results.baselines(shakespeare)
    rows = results.find_arms("shakespeare").rows
    assert [r.best_val_loss for r in rows] == [r.best_val_loss for r in o.rows]
    _claims_match(text, rows, base)
    assert (
        f"Every arm has the same seed ({cfg.seed}), number of steps ({cfg.max_steps}), data "
        f"(sha256 `{shakespeare.text_sha256[:12]}…`), model shape, schedule and evaluation."
    ) in text
    assert f"**bigram baseline** {base.bigram:.3f}" in text and "floor" not in text.lower()
    assert f"validation split itself gives {base.bigram_fitted_on_val:.3f}." in text
    # the rows as logged equal the rows read back (options as strings), so the export's
    # comparison.json rewrites into the same report without MLflow
    assert [r.config for r in o.rows] == [r.config for r in rows]
    dest = tmp_path / "results"
    export.export_results("shakespeare", shakespeare, dest)
    exported = (dest / "q03-report.md").read_text(encoding="utf-8")
    export.refresh_report(dest, shakespeare)
    assert (dest / "q03-report.md").read_text(encoding="utf-8") == exported == text
    doc = json.loads((dest / "comparison.json").read_text(encoding="utf-8"))
    assert math.isclose(doc["baselines"]["bigram"], base.bigram)


def test_the_latest_runs_of_each_mode_are_not_called_comparable(store, shakespeare, tmp_path):
    """No ablation: the report falls back to the latest run of each mode, here with other
    seeds and steps, and says so instead of calling them comparable."""
    from attention_ref.experiments import results
    from attention_ref.experiments.runs import run_training
    from attention_ref.experiments.store import connect
    from tests.configs import tiny

    connect(store)
    for attention, steps, seed in (("multihead", 40, 1337), ("none", 20, 7)):
        cfg = tiny(attention=attention, max_steps=steps, eval_interval=20, seed=seed)
        run_training(cfg, shakespeare, out_root=tmp_path / "runs", log_system_metrics=False)
    text = results.q03_report("shakespeare", shakespeare)
    assert "the latest finished single run of each mode" in text
    assert (
        "**The arms are not comparable as they stand**: they differ in seed (multihead 1337, "
        "none 7) and number of steps (multihead 40, none 20)"
    ) in text
    assert "Every arm has the same" not in text
    _claims_match(text, results.find_arms("shakespeare").rows, results.baselines(shakespeare))


def test_refreshing_refuses_results_of_other_data(tmp_path, shakespeare):
    from attention_ref.experiments.export import refresh_report

    doc = json.loads((RESULTS / "comparison.json").read_text(encoding="utf-8"))
    doc["rows"][0]["data_sha256"] = "0" * 64
    (tmp_path / "comparison.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="measured on data with sha256 000000000000"):
        refresh_report(tmp_path, shakespeare)
    assert not (tmp_path / "q03-report.md").exists()


def test_a_heads_sweep_is_not_taken_for_the_ablation(store, shakespeare, tmp_path, capsys):
    """No ablation in the store: the h = 2 arm of a heads sweep is not "With attention (Q02)";
    the report says nothing answers Q03 (the sweep's section stays), and a single run of
    `attnref train` is the one picked once there is one."""
    from attention_ref.cli.main import main
    from attention_ref.experiments import results
    from attention_ref.experiments.ablation import run_sweep
    from attention_ref.experiments.runs import run_training
    from attention_ref.experiments.store import connect
    from attention_ref.experiments.sweep import heads_sweep
    from tests.configs import tiny

    connect(store)
    cfg = tiny(max_steps=20, eval_interval=20)
    run_sweep(
        heads_sweep(cfg, (1, 2)), shakespeare, out_root=tmp_path / "runs", log_system_metrics=False
    )
    with pytest.raises(results.NoArmsError, match="no finished ablation and no finished single"):
        results.find_arms("shakespeare")
    assert main(["report"]) == 0
    text = capsys.readouterr().out
    assert "has no finished ablation and no finished single training run" in text
    assert "With attention (Q02)" not in text and "## Heads sweep" in text
    assert main(["report", "--export", "x"]) == 2
    assert "no finished ablation" in capsys.readouterr().err
    single = run_training(cfg, shakespeare, out_root=tmp_path / "runs", log_system_metrics=False)
    arms = results.find_arms("shakespeare")
    assert [r.run_id for r in arms.rows] == [single.run_id]
    assert arms.rows[0].param_groups[Part.ATTENTION] > 0  # read back with its parts


def test_a_report_of_one_arm_says_what_q03_still_needs():
    """A single `attnref train` run: the report says which run answers Q03 next (issue 42, item
    10); with both arms, nothing more is said."""
    alone = report(arm("multihead", 1.55))
    assert "**To answer Q03**" in alone and "`attnref train --no-attention`" in alone
    without = report(arm("none", 2.48))
    assert "the same model with attention: `attnref train`" in without
    uniform = report(arm("uniform", 2.2))
    assert "`attnref train` and `attnref train --no-attention`" in uniform
    assert "To answer Q03" not in report(arm("multihead", 1.55), arm("none", 2.48))


def test_the_summary_says_each_line_only_where_the_findings_support_it_in_each_language():
    """The experiments page's summary, once in code for both books (issue 60): attention below
    every bigram table, no attention stuck at the baseline (or a leak below it), uniform
    weights below every table and what learning adds; each on both sides of its condition."""
    from attention_ref.experiments.report import summary_lines

    def said(*arms: ArmRow, lang: str = "en") -> list[str]:
        return summary_lines(findings(list(arms), BASE), lang)

    good = said(arm("multihead", 1.50), arm("none", BASE.bigram), arm("uniform", 2.20))
    assert good[0].startswith("With attention, the model reads the previous characters")
    assert good[1].startswith("Without attention, each prediction sees only its own character")
    assert "levels off at the bigram baseline from step 500 of 1000" in good[1]
    assert good[2] == (
        "Equal weights over the past (uniform) already beat every bigram table; learning where "
        "to look is what closes the rest of the gap (on one seed)."
    )
    pt = said(arm("multihead", 1.50), arm("none", BASE.bigram), arm("uniform", 2.20), lang="pt")
    assert pt[0].startswith("Com atenção") and "a partir do passo 500 de 1000" in pt[1]
    assert pt[2].endswith("fecha o resto da diferença (numa semente).")
    # the controls: attention above the tables, no attention below the baseline, uniform above
    worse = said(arm("multihead", 2.60), arm("none", BASE.bigram - TOL - EPS), arm("uniform", 2.6))
    assert worse == [
        "Without attention, the loss is below the bigram baseline: look for a leak of context."
    ]
    # uniform below the tables but learned attention no better: no claim of what learning adds
    tied = said(arm("multihead", 2.20), arm("uniform", 2.20))
    assert tied[-1] == "Equal weights over the past (uniform) already beat every bigram table."


def test_the_speed_up_without_attention_is_said_with_its_runs_spread():
    """The fact-check of issue 60: "2.4× as fast" was said bare over 3 seeds whose per-run
    ratios go from 2.26 to 2.69. Several seeds: the ratio's range; one seed each: none."""
    rows = [
        arm("multihead", 1.5, tokens_per_sec=40_000.0, seed="1"),
        arm("multihead", 1.5, tokens_per_sec=44_000.0, seed="2"),
        arm("none", 2.48, n_params=165_000, tokens_per_sec=96_000.0, seed="1"),
        arm("none", 2.48, n_params=165_000, tokens_per_sec=100_000.0, seed="2"),
    ]
    cost = bullet(report(*rows), "Cost")
    assert "(2.3× as fast; runs 2.18–2.50)" in cost
    one = bullet(report(rows[0], rows[2]), "Cost")
    assert "(2.4× as fast)" in one and "runs" not in one
