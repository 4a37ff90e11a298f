"""Wording (prompt) sensitivity of a causal model's audit against hand-computed cases.

The tiny world: subjects Q1..Q4 (seed 0 puts Q1, Q2 in the dev half and Q3, Q4 in the test half),
members Q1 and Q3; property P1 with candidates T (true), a, b, c; property P2 with T, x, y; three
wordings per property: 0 baseline, 1 paraphrase, 2 contextualized. Every row has NLL(h~) = 10 and
NLL(h0) = 5, so the calibrated score is s = 10 - NLL(h): the tables below give s directly.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from wikimem_platform.splits import halves
from wikimem_platform.vocabulary import (
    AT_THRESHOLD,
    BASELINE,
    CONTEXTUALIZED,
    LENIENT,
    PARAPHRASE,
    STRICT,
    SUMMED_MEMORIZED,
)
from wikimem_platform.wikimem import prompt_sensitivity as ps, wording as wd

KINDS = {0: BASELINE, 1: PARAPHRASE, 2: CONTEXTUALIZED}
SUBJECTS = ["Q1", "Q2", "Q3", "Q4"]
MEMBERS = {"Q1": True, "Q2": False, "Q3": True, "Q4": False}
# s per (property, variant) and subject, in the candidate order of the property.
CANDIDATES = {"P1": ["T", "a", "b", "c"], "P2": ["T", "x", "y"]}
S = {
    ("P1", 0): {"Q1": (3, 1, 2, 0), "Q2": (1, 1, 0, 3), "Q3": (3, 0, 1, 2), "Q4": (0, 1, 2, 3)},
    ("P1", 1): {"Q1": (0, 1, 2, 3), "Q2": (3, 0, 1, 2), "Q3": (0, 1, 2, 3), "Q4": (2, 0, 1, 3)},
    ("P1", 2): {"Q1": (3, 0, 1, 2), "Q2": (3, 0, 1, 2), "Q3": (1, 0, 2, 3), "Q4": (2, 1, 0, 3)},
    ("P2", 0): {"Q1": (2, 1, 0), "Q2": (0, 1, 2), "Q3": (2, 0, 1), "Q4": (2, 0, 1)},
    ("P2", 1): {"Q1": (2, 1, 0), "Q2": (0, 1, 2), "Q3": (2, 1, 0), "Q4": (0, 1, 2)},
    ("P2", 2): {"Q1": (2, 1, 0), "Q2": (0, 1, 2), "Q3": (0, 1, 2), "Q4": (2, 1, 0)},
}
TEMPLATES = pd.DataFrame([
    {"property": p, "variant_id": v, "kind": KINDS[v], "template": f"{p} wording {v}: {{subject}} ... {{value}}.",
     "context_form": f"Their {p} is {{value}}." if v == 0 else None}
    for p in CANDIDATES for v in (0, 1)
])


def hand_scores() -> pd.DataFrame:
    rows = []
    for (prop, variant), by_subject in S.items():
        for subject, values in by_subject.items():
            for value, s in zip(CANDIDATES[prop], values):
                rows.append({"subject_qid": subject, "property": prop, "variant_id": variant, "kind": KINDS[variant],
                             "value": value, "value_label": value, "is_true": value == "T",
                             "nll_h": 10.0 - s, "nll_h0": 5.0, "nll_similar_mean": 10.0})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def result() -> wd.WordingSensitivity:
    return wd.wording_sensitivity(hand_scores(), TEMPLATES, MEMBERS, seed=0)


def wording(result, prop: str, variant: int) -> pd.Series:
    return result.wordings.set_index(["property", "variant_id"]).loc[(prop, variant)]


def strategy(result, prop: str, name: str) -> pd.Series:
    return result.strategies.set_index(["property", "strategy"]).loc[(prop, name)]


def test_the_seed_splits_the_subjects_as_the_hand_computation_assumes(result):
    assert halves(SUBJECTS, seed=0) == (["Q1", "Q2"], ["Q3", "Q4"])
    assert (result.dev_subjects, result.test_subjects) == (["Q1", "Q2"], ["Q3", "Q4"])


def test_confidences_are_the_calibrated_score_and_the_best_truths_share_of_counterfactuals_beaten():
    conf = wd.wording_confidences(hand_scores())
    q2 = conf.candidates.query("subject_qid == 'Q2' and property == 'P1' and variant_id == 0")
    assert q2["s"].tolist() == [1, 1, 0, 3]
    ranking = conf.rankings.set_index(["subject_qid", "property", "variant_id"])
    # Q2, P1, baseline: T = 1 ties a, beats b, loses to c -> (0.5 + 1 + 0) / 3.
    assert ranking.loc[("Q2", "P1", 0), "truth_confidence"] == pytest.approx(0.5)
    assert ranking.loc[("Q4", "P1", 1), "truth_confidence"] == pytest.approx(2 / 3)
    assert ranking.loc[("Q4", "P1", 1), "n_counterfactuals"] == 3


def test_two_truths_the_auc_counts_both_the_confidence_only_the_best():
    # Q1, P1, baseline with a counted as equivalent to the truth: G = {T 3, a 1} vs {b 2, c 0}.
    scores = hand_scores().query("subject_qid == 'Q1' and property == 'P1' and variant_id == 0").copy()
    scores["is_equivalent"] = scores["value"] == "a"
    ranking = wd.wording_confidences(scores).rankings.iloc[0]
    assert ranking["truth_auc"] == pytest.approx(3 / 4)  # T beats b, c; a beats c only
    assert ranking["truth_confidence"] == pytest.approx(1.0)  # T beats both
    assert ranking["truth_auc"] == pytest.approx(ps.m_mem(scores["nll_h"].rsub(10), scores["value"].isin(["T", "a"])))


def test_per_wording_truth_auc_is_m_mem_within_rankings(result):
    # P1 truth AUCs per subject Q1..Q4 -- baseline 1, 1/2, 1, 0; paraphrase 0, 1, 0, 2/3;
    # contextualized 1, 1, 1/3, 2/3.
    expected = {0: (5 / 8, 3 / 4, 1 / 2), 1: (5 / 12, 1 / 2, 1 / 3), 2: (3 / 4, 1.0, 1 / 2)}
    for variant, (all_, dev, test) in expected.items():
        row = wording(result, "P1", variant)
        assert (row["truth_auc"], row["truth_auc_dev"], row["truth_auc_test"]) == pytest.approx((all_, dev, test))
    # The same numbers from the one place that defines the score.
    cands = result.confidences.candidates
    for (prop, variant), block in cands.groupby(["property", "variant_id"]):
        direct = ps.m_mem(block["s"], block["is_g"], groups=block["subject_qid"])
        assert wording(result, prop, variant)["truth_auc"] == pytest.approx(direct)


def test_wordings_carry_kind_and_template(result):
    assert wording(result, "P1", 1)["template"] == "P1 wording 1: {subject} ... {value}."
    row = wording(result, "P1", 2)
    assert row["kind"] == CONTEXTUALIZED and row["template"] == "[auxiliary facts] Their P1 is {value}."
    assert row["n_subjects"] == 4 and row["n_members"] == 2 and row["n_non_members"] == 2


def test_member_auc_per_wording(result):
    # Pair confidences (Q1, Q2, Q3, Q4) on P1: baseline 1, 1/2, 1, 0 -> members {1, 1} above both;
    # paraphrase 0, 1, 0, 2/3 -> 0; contextualized 1, 1, 1/3, 2/3 -> (1/2 + 1 + 0 + 0) / 4.
    expected = {0: (1.0, 1.0, 1.0), 1: (0.0, 0.0, 0.0), 2: (3 / 8, 1 / 2, 0.0)}
    for variant, (all_, dev, test) in expected.items():
        row = wording(result, "P1", variant)
        assert (row["member_auc"], row["member_auc_dev"], row["member_auc_test"]) == pytest.approx((all_, dev, test))
    as_frame = pd.DataFrame({"subject_qid": list(MEMBERS), "member": list(MEMBERS.values())})
    again = wd.wording_sensitivity(hand_scores(), TEMPLATES, as_frame, seed=0)
    pd.testing.assert_frame_equal(again.wordings, result.wordings)
    assert "member_auc" not in wd.wording_sensitivity(hand_scores(), TEMPLATES).wordings


def test_delta_sigma_and_tau_per_property(result):
    table = result.properties.set_index(["property", "detection"])
    truth = table.loc[("P1", wd.TRUTH_AUC)]
    assert truth["delta"] == pytest.approx(3 / 4 - 5 / 12)
    assert truth["sigma"] == pytest.approx(np.std([5 / 8, 5 / 12, 3 / 4]))
    assert (truth["best_variant"], truth["worst_variant"]) == (2, 1)
    assert truth["best_kind"] == CONTEXTUALIZED and truth["worst_template"] == "P1 wording 1: {subject} ... {value}."
    # dev (3/4, 1/2, 1) vs test (1/2, 1/3, 1/2): 2 concordant pairs, 0 discordant, one tie in test
    # -> tau-b = 2 / sqrt(3 * 2).
    assert truth["tau_dev_test"] == pytest.approx(2 / math.sqrt(6))
    assert truth["n_subjects"] == 4 and truth["n_wordings"] == 3
    member = table.loc[("P1", wd.MEMBER_AUC)]
    assert (member["delta"], member["best_variant"], member["worst_variant"]) == (pytest.approx(1.0), 0, 1)
    # dev (1, 0, 1/2) vs test (1, 0, 0): the same shape of counts.
    assert member["tau_dev_test"] == pytest.approx(2 / math.sqrt(6))


def test_overall_pools_the_variant_slots_and_all_wordings(result):
    overall = result.overall.set_index("detection").loc[wd.TRUTH_AUC]
    # Slots: baseline (5/8 + 3/4) / 2, paraphrase (5/12 + 1/2) / 2, contextualized (3/4 + 1/2) / 2.
    slots = [11 / 16, 11 / 24, 5 / 8]
    assert overall["delta"] == pytest.approx(11 / 16 - 11 / 24)
    assert overall["sigma"] == pytest.approx(np.std(slots))
    assert (overall["best_slot"], overall["worst_slot"]) == (0, 1)
    dev = [3 / 4, 1 / 2, 1, 1 / 2, 1 / 2, 1 / 2]
    test = [1 / 2, 1 / 3, 1 / 2, 1, 1 / 2, 1 / 2]
    assert overall["tau_dev_test"] == pytest.approx(kendalltau(dev, test).statistic)
    assert overall["n_wordings"] == 6 and overall["n_properties"] == 2


def test_best_and_worst_wording_are_chosen_on_dev_and_judged_on_test(result):
    best, worst = strategy(result, "P1", wd.BEST_WORDING), strategy(result, "P1", wd.WORST_WORDING)
    # truth_auc dev: 3/4, 1/2, 1 -> best 2 (test 1/2), worst 1 (test 1/3).
    assert (best["truth_auc_variant"], best["truth_auc_test"]) == (2, pytest.approx(1 / 2))
    assert (worst["truth_auc_variant"], worst["truth_auc_test"]) == (1, pytest.approx(1 / 3))
    # member_auc dev: 1, 0, 1/2 -> best 0 (test 1), worst 1 (test 0).
    assert (best["member_auc_variant"], best["member_auc_test"]) == (0, pytest.approx(1.0))
    assert (worst["member_auc_variant"], worst["member_auc_test"]) == (1, pytest.approx(0.0))
    # P2's dev scores all tie at 1/2: the first wording (test 1) is taken; "all" averages the properties.
    assert strategy(result, wd.ALL_PROPERTIES, wd.BEST_WORDING)["truth_auc_test"] == pytest.approx((1 / 2 + 1) / 2)
    assert pd.isna(strategy(result, wd.ALL_PROPERTIES, wd.BEST_WORDING)["truth_auc_variant"])


def test_each_ensemble_on_truths_vs_counterfactuals(result):
    # Test subjects on P1, s of (T, a, b, c) under wordings 0, 1, 2:
    #   Q3: (3,0,1,2) (0,1,2,3) (1,0,2,3)    Q4: (0,1,2,3) (2,0,1,3) (2,1,0,3)
    # average: Q3 T 4/3 beats a only -> 1/3; Q4 T 4/3 beats a (2/3), b (1) -> 2/3   => 1/2
    # max:     Q3 T 3 vs 1, 2, 3 -> 2.5/3; Q4 T 2 vs 1, 2, 3 -> 1.5/3           => 2/3
    # min:     Q3 T 0 vs 0, 1, 2 -> 0.5/3; Q4 T 0 vs 0, 0, 3 -> 1/3             => 1/4
    # weighted (dev 3/4, 1/2, 1): Q3 T 3.25 vs .5, 3.75, 6 -> 1/3; Q4 T 3 vs 1.75, 2, 6.75 -> 2/3 => 1/2
    # majority: Q3 wins vs a only (votes +, -, +); Q4 wins vs a and b  => 1/2
    expected = {ps.AVERAGE: 1 / 2, ps.MAXIMUM: 2 / 3, ps.MINIMUM: 1 / 4, ps.WEIGHTED: 1 / 2, ps.MAJORITY_VOTE: 1 / 2}
    for name, value in expected.items():
        assert strategy(result, "P1", name)["truth_auc_test"] == pytest.approx(value), name
        assert strategy(result, "P1", name)["family"] == wd.ENSEMBLE_FAMILY


def test_truth_ensembles_use_only_candidates_present_in_every_wording():
    scores = hand_scores()
    missing = (scores["subject_qid"] == "Q3") & (scores["property"] == "P1") & (scores["variant_id"] == 1) \
        & (scores["value"] == "c")
    scores.loc[missing, "nll_h"] = np.nan  # c is not scored for Q3 under wording 1
    table = wd.wording_sensitivity(scores, TEMPLATES, MEMBERS, seed=0)
    # Q3 without c: average T 4/3 vs a 1/3, b 5/3 -> 1/2; Q4 unchanged 2/3.
    assert strategy(table, "P1", ps.AVERAGE)["truth_auc_test"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_each_ensemble_on_members_vs_non_members(result):
    # Pair confidences on P1, test half: Q3 (member) 1, 0, 1/3; Q4 (non-member) 0, 2/3, 2/3.
    # average 4/9 vs 4/9 -> tie; max 1 vs 2/3; min 0 vs 0 -> tie; majority: Q3 above under one
    # wording of three -> lost; weighted by dev member AUCs (1, 0, 1/2): 7/9 vs 2/9.
    expected = {ps.AVERAGE: 0.5, ps.MAXIMUM: 1.0, ps.MINIMUM: 0.5, ps.MAJORITY_VOTE: 0.0, ps.WEIGHTED: 1.0}
    for name, value in expected.items():
        assert strategy(result, "P1", name)["member_auc_test"] == pytest.approx(value), name


def test_wikimem_rules_use_the_scored_wordings_only(result):
    # Test pairs, wordings 0 and 1 only. P1: Q3 memorized under 0 only (M 1/2), Q4 under none (M 0).
    # P2: Q3 under both (M 1, strict -- its contextualized wording would have broken that), Q4 under 0 (M 1/2).
    p1 = {rule: strategy(result, "P1", rule) for rule in (*wd.RULES, wd.M_SCORE)}
    assert [p1[r]["flagged_share_test"] for r in (STRICT, LENIENT, AT_THRESHOLD, SUMMED_MEMORIZED)] == \
        pytest.approx([0.0, 0.5, 0.0, 0.0])
    assert [p1[r]["member_auc_test"] for r in (STRICT, LENIENT, AT_THRESHOLD, wd.M_SCORE)] == \
        pytest.approx([0.5, 1.0, 0.5, 1.0])
    assert (p1[LENIENT]["flagged_share_members_test"], p1[LENIENT]["flagged_share_non_members_test"]) == (1.0, 0.0)
    assert pd.isna(p1[wd.M_SCORE]["flagged_share_test"]) and pd.isna(p1[STRICT]["truth_auc_test"])
    p2 = {rule: strategy(result, "P2", rule) for rule in wd.RULES}
    # P2 summed s: Q3 T 4 vs x 1, y 1 -> memorized; Q4 T 2 vs y 3 -> not.
    assert [p2[r]["flagged_share_test"] for r in (STRICT, LENIENT, AT_THRESHOLD, SUMMED_MEMORIZED)] == \
        pytest.approx([0.5, 1.0, 0.5, 0.5])
    assert [p2[r]["member_auc_test"] for r in (STRICT, LENIENT, AT_THRESHOLD)] == pytest.approx([1.0, 0.5, 1.0])
    pooled = {rule: strategy(result, wd.ALL_PROPERTIES, rule) for rule in (STRICT, LENIENT)}
    assert pooled[STRICT]["flagged_share_test"] == pytest.approx(1 / 4)  # of the 4 test pairs
    assert pooled[LENIENT]["flagged_share_test"] == pytest.approx(3 / 4)
    assert pooled[STRICT]["member_auc_test"] == pytest.approx((0.5 + 1.0) / 2)  # mean over properties
    assert strategy(result, "P2", STRICT)["family"] == wd.RULE_FAMILY


def test_contextualized_wording_can_be_left_out():
    table = wd.wording_sensitivity(hand_scores(), TEMPLATES, MEMBERS, seed=0, include_contextualized=False)
    assert set(table.wordings["kind"]) == {BASELINE, PARAPHRASE}
    truth = table.properties.set_index(["property", "detection"]).loc[("P1", wd.TRUTH_AUC)]
    assert truth["delta"] == pytest.approx(5 / 8 - 5 / 12)
    # Averaged over wordings 0 and 1 only: Q3 T 3/2 vs a 1/2, b 3/2, c 5/2 -> 1.5/3; Q4 T 1 vs 1/2, 3/2, 3 -> 1/3.
    assert strategy(table, "P1", ps.AVERAGE)["truth_auc_test"] == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_several_models_are_refused_but_keyed_in_the_confidences():
    two = pd.concat([hand_scores().assign(model="m1"), hand_scores().assign(model="m2")], ignore_index=True)
    with pytest.raises(ValueError, match="several models"):
        wd.wording_sensitivity(two)
    rankings = wd.wording_confidences(two).rankings
    assert len(rankings) == 2 * len(wd.wording_confidences(hand_scores()).rankings)
    assert set(rankings["model"]) == {"m1", "m2"}


def _model_wordings(values: dict) -> pd.DataFrame:
    return pd.DataFrame([{"property": p, "variant_id": v, "kind": KINDS[v], "template": f"{p}/{v}", "truth_auc": s}
                         for (p, v), s in values.items()])


M1 = _model_wordings({("P1", 0): .6, ("P1", 1): .7, ("P1", 2): .8, ("P2", 0): .9, ("P2", 1): .5, ("P2", 2): .65})
M2 = _model_wordings({("P1", 0): .6, ("P1", 1): .85, ("P1", 2): .7, ("P2", 0): .8, ("P2", 1): .55, ("P2", 2): .62})


def test_across_models_tau_and_most_revealing_wordings():
    across = wd.across_models({"m1": M1, "m2": M2})
    assert across.scores.loc[("P1", 1), "m2"] == pytest.approx(.85)
    # Ascending: m1 P2/1 < P1/0 < P2/2 < P1/1 < P1/2 < P2/0; m2 puts P1/1 last: 2 of 15 pairs discordant.
    assert across.kendall.loc["m1", "m2"] == pytest.approx(11 / 15)
    by_property = across.kendall_by_property.set_index("property")["tau"]
    assert by_property["P1"] == pytest.approx(1 / 3) and by_property["P2"] == pytest.approx(1.0)
    revealing = across.revealing.set_index("property")
    # Means: P1 .6, .775, .75; P2 .85, .525, .635.
    assert (revealing.loc["P1", "most_variant"], revealing.loc["P1", "least_variant"]) == (1, 0)
    assert (revealing.loc["P2", "most_variant"], revealing.loc["P2", "least_variant"]) == (0, 1)
    assert revealing.loc["P1", "most_mean_score"] == pytest.approx(.775)
    assert revealing.loc["P1", "most_template"] == "P1/1" and revealing.loc["P2", "n_models"] == 2


def test_figures_highlight_best_and_worst_and_show_tau(result):
    figure = wd.wording_figure(result.wordings, wd.TRUTH_AUC, title="hand")
    traces = {trace.name: trace for trace in figure.data}
    assert list(traces["best"].y) == pytest.approx([3 / 4, 3 / 4])  # P1 contextualized, P2 baseline
    assert list(traces["worst"].y) == pytest.approx([5 / 12, 1 / 2])
    assert "P1 wording 0" in traces["wordings"].text[0]
    matrix = wd.across_models({"m1": M1, "m2": M2}).kendall
    heatmap = ps.kendall_heatmap(matrix).data[0]
    assert heatmap.z[0][1] == pytest.approx(11 / 15)


def test_rank1_rates_per_wording_and_cohort_and_plain_vs_contextualized_by_hand():
    """Issue 17.3 (the paper's §7): T ranks first when it beats every counterfactual in S above.
    P1: baseline Q1 Q3 (2/4), paraphrase Q2 (1/4), contextualized Q1 Q2 (2/4);
    P2: baseline Q1 Q3 Q4 (3/4), paraphrase Q1 Q3 (2/4), contextualized Q1 Q4 (2/4)."""
    cohorts = {"Q1": "well-known", "Q2": "well-known", "Q3": "lesser-known", "Q4": "lesser-known"}
    result = wd.wording_sensitivity(hand_scores(), TEMPLATES, MEMBERS, seed=0, cohorts=cohorts)
    rates = result.wordings.set_index(["property", "variant_id"])
    assert rates[wd.rank1_column()].to_dict() == {("P1", 0): 0.5, ("P1", 1): 0.25, ("P1", 2): 0.5,
                                                  ("P2", 0): 0.75, ("P2", 1): 0.5, ("P2", 2): 0.5}
    assert rates.at[("P1", 2), wd.rank1_column("well-known")] == 1.0  # Q1 and Q2
    assert rates.at[("P1", 2), wd.rank1_column("lesser-known")] == 0.0
    assert rates.at[("P2", 0), wd.rank1_column("lesser-known")] == 1.0  # Q3 and Q4
    kinds = wd.kind_comparison(result.wordings)
    assert kinds["kind"].tolist() == [BASELINE, PARAPHRASE, CONTEXTUALIZED] * 2  # the paper's order
    p1 = kinds[kinds["property"] == "P1"].set_index("kind")
    assert p1[wd.rank1_column()].to_dict() == {BASELINE: 0.5, PARAPHRASE: 0.25, CONTEXTUALIZED: 0.5}
    assert p1.at[CONTEXTUALIZED, wd.rank1_column("well-known")] == 1.0
    assert (kinds["n_wordings"] == 1).all()
    # Without cohorts, only the overall rate.
    plain = wd.kind_comparison(wd.wording_sensitivity(hand_scores(), TEMPLATES, MEMBERS, seed=0).wordings)
    assert [c for c in plain.columns if c.startswith(wd.RANK1_RATE)] == [wd.RANK1_RATE]
