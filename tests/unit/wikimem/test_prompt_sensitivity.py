"""Prompt-sensitivity math against hand-computed cases (NER prompt-sensitivity paper, eq. 2-3, §4.1)."""

import math

import pandas as pd
import pytest

from wikimem_platform.splits import halves
from wikimem_platform.wikimem import prompt_sensitivity as ps

# Three in-sample items (a, b, c), two out-of-sample (x, y); two prompts.
CONF = pd.DataFrame(
    {"p1": [0.9, 0.6, 0.3, 0.5, 0.2], "p2": [0.4, 0.8, 0.7, 0.6, 0.9]},
    index=["a", "b", "c", "x", "y"],
)
IS_IN = [True, True, True, False, False]


def test_m_mem_counts_in_above_out_pairs():
    # p1: a>x a>y, b>x b>y, c<x c>y -> 5 of 6 pairs.
    assert ps.m_mem(CONF["p1"], IS_IN) == pytest.approx(5 / 6)
    # p2: a<x a<y, b>x b<y, c>x c<y -> 2 of 6.
    assert ps.m_mem(CONF["p2"], IS_IN) == pytest.approx(2 / 6)
    # A tie counts one half: in {0.5}, out {0.5, 0.1} -> (0.5 + 1) / 2.
    assert ps.m_mem([0.5, 0.5, 0.1], [True, False, False]) == pytest.approx(0.75)
    assert math.isnan(ps.m_mem([0.1, 0.2], [True, True]))


def test_m_mem_within_groups_is_the_mean_of_each_groups_auc():
    # Group g1: in 0.9 vs out 0.5, 0.95 -> 1/2; group g2: in 0.1 vs out 0.0 -> 1; g3 has no in: skipped.
    confidence = [0.9, 0.5, 0.95, 0.1, 0.0, 0.3]
    is_in = [True, False, False, True, False, False]
    groups = ["g1", "g1", "g1", "g2", "g2", "g3"]
    assert ps.m_mem(confidence, is_in, groups) == pytest.approx((0.5 + 1.0) / 2)
    # Pooled, the same numbers compare across groups: in {0.9, 0.1} vs out {0.5, 0.95, 0.0, 0.3} -> 4 of 8.
    assert ps.m_mem(confidence, is_in) == pytest.approx(4 / 8)


def test_sensitivity_is_best_minus_worst_and_population_std():
    scores = pd.Series({"p1": 0.70, "p2": 0.50, "p3": 0.60})
    result = ps.sensitivity(scores)
    assert result["delta"] == pytest.approx(0.20)
    # mean 0.6, deviations 0.1, -0.1, 0 -> sqrt(0.02 / 3)
    assert result["sigma"] == pytest.approx(math.sqrt(0.02 / 3))
    assert (result["best"], result["worst"], result["n_prompts"]) == ("p1", "p2", 3)


def test_kendall_tau_over_shared_prompts():
    a = pd.Series({"p1": 1.0, "p2": 2.0, "p3": 3.0, "p4": 4.0})
    b = pd.Series({"p1": 1.0, "p2": 3.0, "p3": 2.0, "p4": 4.0, "p5": 0.0})
    # 6 pairs over p1..p4, one discordant (p2, p3): (5 - 1) / 6.
    assert ps.kendall_tau(a, b) == pytest.approx(4 / 6)
    assert ps.kendall_tau(a, -a) == pytest.approx(-1.0)
    matrix = ps.kendall_matrix(pd.DataFrame({"m1": a, "m2": b.reindex(a.index)}))
    assert matrix.loc["m1", "m1"] == pytest.approx(1.0) and matrix.loc["m1", "m2"] == pytest.approx(4 / 6)
    assert math.isnan(ps.kendall_tau(a.iloc[:1], b.iloc[:1]))


def test_each_ensemble_rule_by_hand():
    assert ps.ensemble_confidence(CONF, ps.AVERAGE).tolist() == pytest.approx([0.65, 0.7, 0.5, 0.55, 0.55])
    assert ps.ensemble_confidence(CONF, ps.MAXIMUM).tolist() == pytest.approx([0.9, 0.8, 0.7, 0.6, 0.9])
    assert ps.ensemble_confidence(CONF, ps.MINIMUM).tolist() == pytest.approx([0.4, 0.6, 0.3, 0.5, 0.2])
    # Weights 3:1 -> (3 * p1 + p2) / 4.
    weighted = ps.ensemble_confidence(CONF, ps.WEIGHTED, {"p1": 0.75, "p2": 0.25})
    assert weighted.tolist() == pytest.approx([0.775, 0.65, 0.4, 0.525, 0.375])
    with pytest.raises(ValueError, match="weights"):
        ps.ensemble_confidence(CONF, ps.WEIGHTED)
    with pytest.raises(ValueError, match="rule: 'median'"):
        ps.ensemble_confidence(CONF, "median")


def test_majority_vote_decides_each_comparison_by_the_share_of_prompts():
    # Two prompts: a comparison both prompts win -> 1, both lose -> 0, split -> 1/2.
    # (a,x): p1 win p2 lose -> 1/2; (a,y): win, lose -> 1/2; (b,x): win, win -> 1; (b,y): win, lose -> 1/2;
    # (c,x): lose, win -> 1/2; (c,y): win, lose -> 1/2  => 3.5 / 6.
    assert ps.majority_vote_score(CONF, IS_IN) == pytest.approx(3.5 / 6)
    three = CONF.assign(p3=[0.1, 0.1, 0.1, 0.0, 0.0])  # p3 ranks every in above every out
    # Now each comparison has a strict majority: (a,x) 2-1 win, (a,y) 2-1, (b,x) 3-0, (b,y) 2-1, (c,x) 2-1, (c,y) 2-1.
    assert ps.majority_vote_score(three, IS_IN) == pytest.approx(1.0)


def test_ensemble_scores_side_by_side():
    scores = ps.ensemble_scores(CONF, IS_IN, dev_scores=pd.Series({"p1": 0.75, "p2": 0.25}))
    assert list(scores.index) == list(ps.ENSEMBLES)
    # average: in {0.65, 0.7, 0.5} vs out {0.55, 0.55}: a, b beat both, c loses both -> 4/6.
    assert scores[ps.AVERAGE] == pytest.approx(4 / 6)
    # max: in {0.9, 0.8, 0.7} vs out {0.6, 0.9}: a ties y (1/2) beats x; b, c beat x only -> 3.5/6.
    assert scores[ps.MAXIMUM] == pytest.approx(3.5 / 6)
    # min: in {0.4, 0.6, 0.3} vs out {0.5, 0.2}: a 1, b 2, c 1 -> 4/6.
    assert scores[ps.MINIMUM] == pytest.approx(4 / 6)
    # weighted: in {0.775, 0.65, 0.4} vs out {0.525, 0.375}: a 2, b 2, c 1 -> 5/6.
    assert scores[ps.WEIGHTED] == pytest.approx(5 / 6)
    assert scores[ps.MAJORITY_VOTE] == pytest.approx(3.5 / 6)


def test_halves_are_disjoint_seeded_and_stable_when_keys_are_added():
    keys = [f"Q{i}" for i in range(200)]
    dev, test = halves(keys, seed=3)
    assert set(dev).isdisjoint(test) and set(dev) | set(test) == set(keys)
    assert 60 < len(dev) < 140
    more_dev, _ = halves(keys + [f"Q{i}" for i in range(200, 260)], seed=3)
    assert set(dev) <= set(more_dev)
    assert halves(keys, seed=4)[0] != dev


def test_grouped_m_mem_equals_the_mean_of_each_groups_own_auc_ties_included():
    """The vectorized within-group AUC against scikit-learn, one group at a time."""
    import numpy as np

    rng = np.random.default_rng(0)
    confidence = rng.integers(0, 6, 600).astype(float)  # many ties
    is_in = rng.random(600) < 0.3
    groups = rng.integers(0, 40, 600).astype(str)
    one_by_one = [ps.m_mem(confidence[groups == g], is_in[groups == g]) for g in np.unique(groups)]
    assert ps.m_mem(confidence, is_in, groups) == pytest.approx(np.nanmean(one_by_one), rel=1e-12)


def test_weighted_ensemble_is_undefined_without_a_positive_weight():
    scores = ps.ensemble_scores(CONF, IS_IN, dev_scores=pd.Series({"p1": 0.0, "p2": 0.0}))
    assert math.isnan(scores[ps.WEIGHTED]) and scores[ps.AVERAGE] == pytest.approx(4 / 6)
