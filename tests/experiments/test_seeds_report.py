"""Arms over seeds: the spread (mean, min–max, 95 % t-interval) and every sentence that orders
two arms, with constructed rows on both sides of the threshold (a gap beyond the spread, a gap
within it). Pure: no MLflow, no torch."""

from __future__ import annotations

import math

import pytest

from attention_ref.experiments.findings import ArmRow, arm_seeds, findings
from attention_ref.experiments.report import build_report, comparison_markdown
from attention_ref.experiments.spread import (
    Side,
    compare,
    spread,
    spread_cells,
    t_quantile_975,
)
from tests.experiments.test_report import BASE, arm


def seeds(attention: str, bests: list[float], first_seed: int = 7, **kw: object) -> list[ArmRow]:
    """One arm's runs on seeds ``first_seed``, ``first_seed + 1``, … with these best losses."""
    rows = []
    for i, b in enumerate(bests):
        r = arm(attention, b, seed=first_seed + i, **kw)  # type: ignore[arg-type]
        r.run_id = f"{attention}-{first_seed + i}"
        rows.append(r)
    return rows


# --------------------------------------------------------------------------- the spread


def test_the_t_quantiles_are_student_s():
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 4, 9, 29, 30, 31, 40, 60, 120, 1000):
        assert t_quantile_975(df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=1e-4)
    with pytest.raises(ValueError, match="at least 1 degree"):
        t_quantile_975(0)


def test_a_spread_has_a_range_from_two_seeds_and_an_interval_from_three():
    one, two, three = spread([1.5]), spread([1.5, 1.6]), spread([1.5, 1.6, 1.7])
    assert (one.mean, one.lo, one.hi, one.sd, one.interval, one.band) == (
        1.5,
        1.5,
        1.5,
        None,
        None,
        (1.5, 1.5),
    )
    assert two.interval is None and two.band == (1.5, 1.6) and two.measure == "range"
    lo, hi = three.interval  # type: ignore[misc]
    half = 4.3027 * 0.1 / math.sqrt(3)  # s = 0.1, df = 2
    assert (lo, hi) == (pytest.approx(1.6 - half), pytest.approx(1.6 + half))
    assert three.band == three.interval and three.measure == "95 % interval"
    assert spread_cells(one) == ("1.5000", "–", "–")
    assert spread_cells(two) == ("1.5500", "1.5000–1.6000", "–")
    assert spread_cells(three)[2] == f"{1.6 - half:.4f}–{1.6 + half:.4f}"
    with pytest.raises(ValueError):
        spread([])


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1.50, 1.52], [1.53, 1.55], Side.BELOW),  # ranges apart: beyond the spread
        ([1.50, 1.54], [1.53, 1.55], Side.AT),  # ranges overlap: within
        ([1.60, 1.61], [1.50, 1.52], Side.ABOVE),
        ([1.50, 1.51, 1.52], [1.53, 1.54, 1.55], Side.AT),  # ranges apart, intervals overlap
        ([1.500, 1.501, 1.502], [1.530, 1.531, 1.532], Side.BELOW),  # intervals apart
        ([1.50], [1.54], Side.BELOW),  # one seed each: by the tolerance (0.03)
        ([1.50], [1.52], Side.AT),
    ],
)
def test_two_arms_are_ordered_only_beyond_their_spread(a, b, expected):
    g = compare(spread(a), spread(b), 0.03)
    assert g.side == expected
    assert g.one_seed is (len(a) == len(b) == 1)
    words = g.qualifier()
    if g.one_seed:
        assert words.endswith("on one seed")
    else:
        assert (
            words
            == ("within" if expected == Side.AT else "beyond") + f" the spread of {len(a)} seeds"
        )


def test_rows_group_by_arm_and_the_mean_row_averages_the_seeds():
    rows = [*seeds("none", [2.50, 2.48]), *seeds("multihead", [1.6, 1.5, 1.7])]
    by = {g.attention: g for g in arm_seeds(list(reversed(rows)))}
    assert list(by) == ["multihead", "none"] and by["none"].seeds == ["7", "8"]
    m = by["multihead"].mean_row
    assert m.best_val_loss == pytest.approx(1.6) and m.config["seed"] == "7, 8, 9"
    assert (
        m.config["lr"] == rows[0].config["lr"]
        and m.run_id == "multihead-7, multihead-8, multihead-9"
    )
    assert [s for s, _ in m.val_curve] == [250, 500, 750, 1000]
    assert by["none"].mean_row.val_curve[-1][1] == pytest.approx(2.49)
    only = arm("none", 2.5)
    assert arm_seeds([only])[0].mean_row is only  # one seed: the row itself


# ----------------------------------------------------------------------- the table


def test_the_table_of_several_seeds_gives_mean_spread_and_precision():
    rows = [
        *seeds("multihead", [1.50, 1.52, 1.55], precision="bf16"),
        *seeds("none", [2.48, 2.49], precision="fp32"),
    ]
    for r in rows:  # `arm` puts unknown keywords in config; the precision is the row's own
        r.precision = r.config.pop("precision")
    md = comparison_markdown(rows, 2.48)
    header = md.splitlines()[0]
    assert header.startswith(
        "| attention | seeds | precision | parameters | best val loss "
        "(mean) | min–max | 95 % interval |"
    )
    mh = next(line for line in md.splitlines() if line.startswith("| multihead"))
    s = spread([1.50, 1.52, 1.55])
    lo, hi = s.interval  # type: ignore[misc]
    cells = f"| multihead | 3 | bf16 | 297,216 | {s.mean:.4f} | 1.5000–1.5500 | {lo:.4f}–{hi:.4f} |"
    assert cells in mh
    assert "| none | 2 | fp32 | 297,216 | 2.4850 | 2.4800–2.4900 | – |" in md
    assert "Each arm's figures are means over its 2 and 3 seeds" in md


def test_the_table_of_one_seed_is_the_table_of_before():
    md = comparison_markdown([arm("multihead", 1.5), arm("none", 2.5)], 2.48)
    assert md.splitlines()[0] == (
        "| attention | parameters | best val loss | final val loss | final train loss | "
        "tokens/s | wall time (s) | steps |"
    )
    assert "seeds" not in md and "precision" not in md


# ---------------------------------------------------------------- the sentences


def report(*rows: ArmRow) -> str:
    return build_report("e", "ablation run `p`", rows, BASE)


def bullet(text: str, title: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"* **{title}"))


def test_a_gap_beyond_the_spread_is_ranked():
    text = report(*seeds("multihead", [1.50, 1.51, 1.52]), *seeds("uniform", [2.20, 2.21, 2.22]))
    assert bullet(text, "Lowest validation loss: multihead").endswith(
        "0.700 nats below the next (uniform, 2.210), beyond the spread of 3 seeds."
    )
    line = bullet(text, "Uniform attention")
    assert "Learned attention is 0.700 nats lower (1.510), beyond the spread of 3 seeds" in line
    assert "Each arm was trained on 3 seeds (multihead 7, 8, 9, uniform 7, 8, 9)" in text
    assert "Every arm has the same seeds (7, 8, 9)" in text
    assert "Runs: multihead `multihead-7` (seed 7), `multihead-8` (seed 8)" in text


def test_a_gap_within_the_spread_is_not_ranked():
    # means 1.500 and 1.540: 0.04 apart, more than the one-seed tolerance, but the 95 %
    # intervals of three seeds overlap
    text = report(*seeds("multihead", [1.46, 1.50, 1.54]), *seeds("uniform", [1.50, 1.54, 1.58]))
    assert "Lowest validation loss" not in text
    assert bullet(text, "No clear best arm") == (
        "* **No clear best arm:** multihead (1.500) and uniform (1.540) are within the spread "
        "of 3 seeds."
    )
    line = bullet(text, "Uniform attention")
    assert "It is +0.040 nats from learned attention (1.500), within the spread of 3 seeds" in line
    assert "worth" not in line and "beat learned ones" not in line
    f = findings(
        [*seeds("multihead", [1.46, 1.50, 1.54]), *seeds("uniform", [1.50, 1.54, 1.58])], BASE
    )
    assert f.clear_lead is False and f.gap("uniform", "multihead").side == Side.AT


def test_two_seeds_order_by_their_ranges():
    apart = report(*seeds("multihead", [1.50, 1.52]), *seeds("uniform", [1.56, 1.58]))
    assert "beyond the spread of 2 seeds" in bullet(apart, "Lowest validation loss")
    touching = report(*seeds("multihead", [1.50, 1.56]), *seeds("uniform", [1.55, 1.60]))
    assert "within the spread of 2 seeds" in bullet(touching, "No clear best arm")


def test_one_seed_says_the_order_rests_on_it():
    text = report(arm("multihead", 1.5), arm("uniform", 2.2))
    assert bullet(text, "Lowest validation loss").endswith(", on one seed.")
    assert "Each arm was trained on" not in text


def test_speed_buys_back_context_only_beyond_the_spread():
    fast = {"tokens_per_sec": 66_000.0}
    beyond = report(
        *seeds("multihead", [1.60, 1.61, 1.62], 429_824, tokens_per_sec=39_000.0),
        *seeds("none", [2.48, 2.49, 2.50], **fast),
    )
    assert "speed does not buy back the context" in bullet(beyond, "Cost")
    assert "(beyond the spread of 3 seeds)" in bullet(beyond, "Cost")
