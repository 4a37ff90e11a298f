"""Table 1 with and without controls, and the cohort gap's bootstrap CI, against hand-computed cases."""

import pandas as pd
import pytest

from wikimem_platform.wikimem import controlled_rates as cr
from wikimem_platform.wikimem.controls import MEMORIZED, NO_EVIDENCE, WEAK


def _memorization():
    # well-known: A (2 facts), B (2 facts); lesser-known: C (2 facts), D (2 facts)
    return pd.DataFrame({
        "subject_qid": ["A", "A", "B", "B", "C", "C", "D", "D"],
        "property": ["P27", "P106"] * 4,
        "M": [1.0, 0.9, 0.8, 0.0, 0.9, 0.0, 0.0, 0.0],
        "cohort": ["well-known"] * 4 + ["lesser-known"] * 4,
    })


def _comparison():
    # compared facts are those with M > 0; C's P27 (M = 0.9) is what anyone with C's facts gets
    return pd.DataFrame({
        "subject_qid": ["A", "A", "B", "C"], "property": ["P27", "P106", "P27", "P27"],
        "verdict": [MEMORIZED, MEMORIZED, WEAK, NO_EVIDENCE], "p_value": [0.05, 0.05, 0.05, 0.5],
        "n_controls": [19, 19, 19, 1], "controls_as_extreme": [0, 0, 0, 1], "alpha": 0.05,
        "controls_M_mean": 0.0, "controls_M_max": [0.0, 0.0, 0.0, 0.9], "M_compared": [1.0, 0.9, 0.8, 0.9],
    })


def test_rates_with_and_without_controls_by_hand():
    pairs = cr.controlled_pairs(_memorization(), _comparison())
    # without controls (M >= 0.8): A P27, A P106, B P27, C P27 -> well-known 3/4, lesser-known 1/4
    # with controls (memorized verdict): A P27, A P106 -> 2/4 and 0/4; beating them: + B P27 (weak) -> 3/4 and 0/4
    assert pairs.loc[pairs["subject_qid"] == "D", "verdict"].eq(NO_EVIDENCE).all()  # not compared: no evidence
    table = cr.rates(pairs).set_index("cohort")
    assert table.loc["well-known", f"{cr.WITHOUT}_pct"] == pytest.approx(75)
    assert table.loc["lesser-known", f"{cr.WITHOUT}_pct"] == pytest.approx(25)
    assert table.loc["well-known", f"{cr.WITH}_pct"] == pytest.approx(50)
    assert table.loc["lesser-known", f"{cr.WITH}_pct"] == pytest.approx(0)
    assert table.loc["well-known", f"{cr.BEATS}_pct"] == pytest.approx(75)
    assert table.loc["all", f"{cr.WITHOUT}_pct"] == pytest.approx(50) and table.loc["all", "pairs"] == 8
    assert table.loc["well-known", "pairs_compared"] == 3 and table.loc["lesser-known", "pairs_compared"] == 1
    assert table.loc["well-known", "M_bar_pct"] == pytest.approx(100 * 2.7 / 4)


def test_the_gap_and_its_bootstrap_ci_by_hand():
    """Resampling people within a cohort: well-known A (2 of 2 with controls) and B (0 of 2), so
    a resample holds A twice (rate 1, p = 1/4), once (1/2, p = 1/2) or never (0, p = 1/4);
    lesser-known C and D are 0 of 2 either way. The gap is 50 points; its 95% CI runs 0 to 100."""
    pairs = cr.controlled_pairs(_memorization(), _comparison())
    gaps = cr.cohort_gap(pairs, n_bootstrap=4000, seed=1).set_index("measure")
    row = gaps.loc[cr.WITH]
    assert row["well_known_pct"] == pytest.approx(50) and row["lesser_known_pct"] == 0 and row["gap_pct"] == pytest.approx(50)
    assert row["ci_low_pct"] == 0 and row["ci_high_pct"] == 100 and row["n_well_known"] == 2
    # without controls: A 2/2, B 1/2 -> 75; C 1/2, D 0/2 -> 25; the gap is 50. Well-known
    # resamples give 100, 75 or 50 and lesser-known 50, 25 or 0: every resampled gap lies in [0, 100]
    row = gaps.loc[cr.WITHOUT]
    assert row["gap_pct"] == pytest.approx(50) and 0 <= row["ci_low_pct"] < 50 < row["ci_high_pct"] <= 100
    # the lenient level both ways: ranked first in some wording (M > 0) A, A, B vs C -> 75 - 25;
    # beating the controls at any M (A's two, B's weak P27) vs none -> 75 - 0
    assert gaps.loc[cr.SOME_WORDING, "gap_pct"] == pytest.approx(50)
    assert (gaps.loc[cr.BEATS, "well_known_pct"], gaps.loc[cr.BEATS, "gap_pct"]) == pytest.approx((75, 75))
    # the same seed, the same CI; one cohort only: no gap
    assert cr.cohort_gap(pairs, n_bootstrap=4000, seed=1).equals(cr.cohort_gap(pairs, n_bootstrap=4000, seed=1))
    assert cr.cohort_gap(pairs[pairs["cohort"] == "well-known"]).empty


def test_a_gap_that_is_all_one_way_has_a_ci_on_that_side():
    """Every well-known person memorized on every fact, no lesser-known one: gap 100, CI [100, 100]."""
    memo = pd.DataFrame({"subject_qid": list("ABCDEF"), "property": "P27", "M": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
                         "cohort": ["well-known"] * 3 + ["lesser-known"] * 3})
    comparison = pd.DataFrame({"subject_qid": list("ABC"), "property": "P27", "verdict": MEMORIZED, "p_value": 0.05,
                               "n_controls": 19, "controls_as_extreme": 0, "alpha": 0.05, "controls_M_mean": 0.0,
                               "controls_M_max": 0.0, "M_compared": 1.0})
    row = cr.cohort_gap(cr.controlled_pairs(memo, comparison)).set_index("measure").loc[cr.WITH]
    assert (row["gap_pct"], row["ci_low_pct"], row["ci_high_pct"]) == (100, 100, 100)


def test_a_groups_share_and_its_ci_over_people_by_hand():
    from wikimem_platform.wikimem.controlled_rates import share_ci

    assert share_ci([(1, 2), (1, 2)]) == (0.5, 0.5, 0.5)  # every resample is the same two people
    share, low, high = share_ci([(3, 3), (0, 3)], n_bootstrap=4000)
    assert share == 0.5 and low == 0.0 and high == 1.0  # a quarter of resamples draw one person twice
    assert share_ci([(0, 3), (1, 3), (2, 3)], seed=1) == share_ci([(0, 3), (1, 3), (2, 3)], seed=1)
    assert all(v != v for v in share_ci([]))  # no people: NaN
