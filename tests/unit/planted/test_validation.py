"""Precision / recall / FPR against a planted manifest, on a hand-computed case."""

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.planted.validation import (
    audits_planted_people,
    by_repetitions,
    flag_rates,
    join_ground_truth,
    loss_membership,
    threshold_sweep,
)

MANIFEST = {
    "people": [
        {"qid": "Q1", "member": True, "repetitions": 16, "facts": [{"property": "P106", "value": "Q10"}, {"property": "P27", "value": "Q20"}]},
        {"qid": "Q2", "member": True, "repetitions": 4, "facts": [{"property": "P106", "value": "Q11"}, {"property": "P27", "value": "Q21"}]},
        {"qid": "Q3", "member": True, "repetitions": 1, "facts": [{"property": "P106", "value": "Q12"}, {"property": "P27", "value": "Q22"}]},
        {"qid": "Q4", "member": False, "repetitions": 0, "facts": [{"property": "P106", "value": "Q13"}, {"property": "P27", "value": "Q23"}]},
        {"qid": "Q5", "member": False, "repetitions": 0, "facts": [{"property": "P106", "value": "Q14"}, {"property": "P27", "value": "Q24"}]},
    ]
}


def _pairs(flags: dict[tuple[str, str], bool]) -> pd.DataFrame:
    rows = [{"subject_qid": q, "property": p, "M": 1.0 if f else 0.0, "at_threshold": f, "lenient": f, "strict": f}
            for (q, p), f in flags.items()]
    return pd.DataFrame(rows)


def test_rates_on_a_hand_computed_case():
    # flagged: Q1 both, Q2 P106 only, Q3 P27 (a once-read planted fact: a true positive for
    # precision, outside recall), Q4 P106 (a false positive); Q5 nothing.
    flags = {("Q1", "P106"): True, ("Q1", "P27"): True, ("Q2", "P106"): True, ("Q2", "P27"): False,
             ("Q3", "P106"): False, ("Q3", "P27"): True, ("Q4", "P106"): True, ("Q4", "P27"): False,
             ("Q5", "P106"): False, ("Q5", "P27"): False}
    joined = join_ground_truth(_pairs(flags), MANIFEST)
    rates = flag_rates(joined, "at_threshold", recall_min_repetitions=4)
    assert rates["precision"] == pytest.approx(4 / 5)  # 5 flagged, 4 of them planted
    assert rates["recall_r4plus"] == pytest.approx(3 / 4)  # Q1 x2 + Q2 x2 are r >= 4, 3 flagged
    assert rates["false_positive_rate"] == pytest.approx(1 / 4)  # 4 non-member facts, 1 flagged
    assert rates["planted_facts_scored"] == 6 and rates["non_member_facts_scored"] == 4
    table = by_repetitions(joined).set_index("repetitions")
    assert table.loc[16, "at_threshold_rate"] == 1.0 and table.loc[4, "at_threshold_rate"] == 0.5
    assert table.loc[1, "at_threshold_rate"] == 0.5 and table.loc[0, "at_threshold_rate"] == 0.25
    assert list(table["facts"]) == [4, 2, 2, 2]


def test_threshold_sweep_by_hand():
    # M per fact: r16 Q1 1.0, 0.5; r4 Q2 0.5, 0.25; r1 Q3 0.25, 0; non-members Q4 0.5, 0; Q5 0, 0
    m = {("Q1", "P106"): 1.0, ("Q1", "P27"): 0.5, ("Q2", "P106"): 0.5, ("Q2", "P27"): 0.25,
         ("Q3", "P106"): 0.25, ("Q3", "P27"): 0.0, ("Q4", "P106"): 0.5, ("Q4", "P27"): 0.0,
         ("Q5", "P106"): 0.0, ("Q5", "P27"): 0.0}
    pairs = pd.DataFrame([{"subject_qid": q, "property": p, "M": v} for (q, p), v in m.items()])
    sweep = threshold_sweep(join_ground_truth(pairs, MANIFEST)).set_index("M_at_least")
    assert list(sweep.index) == [0.25, 0.5, 1.0]
    # M >= 0.25: flagged Q1 x2, Q2 x2, Q3 P106, Q4 P106 = 6, 5 planted; recall 4/4; FPR 1/4
    assert sweep.loc[0.25, "precision"] == pytest.approx(5 / 6)
    assert sweep.loc[0.25, "recall_r4plus"] == 1.0 and sweep.loc[0.25, "false_positive_rate"] == pytest.approx(1 / 4)
    # M >= 0.5: Q1 x2, Q2 P106, Q4 P106 = 4 flagged, 3 planted; recall 3/4; FPR 1/4
    assert sweep.loc[0.5, "precision"] == pytest.approx(3 / 4) and sweep.loc[0.5, "recall_r4plus"] == pytest.approx(3 / 4)
    # M >= 1: Q1 P106 only
    assert sweep.loc[1.0, "precision"] == 1.0 and sweep.loc[1.0, "recall_r4plus"] == pytest.approx(1 / 4)
    assert sweep.loc[1.0, "false_positive_rate"] == 0.0 and sweep.loc[1.0, "flagged"] == 1


def test_audits_planted_people():
    assert audits_planted_people(_pairs({("Q42", "P106"): True, ("Q4", "P27"): False}), MANIFEST)
    assert not audits_planted_people(_pairs({("Q42", "P106"): True}), MANIFEST)


def test_pairs_outside_the_manifest_are_refused():
    pairs = _pairs({("Q1", "P106"): True, ("Q99", "P106"): True})
    with pytest.raises(ValueError, match="not planted facts"):
        join_ground_truth(pairs, MANIFEST)


def test_loss_attack_convention_lower_loss_is_member():
    # members' losses 1.0, 2.0; non-members' 1.5, 3.0: pairs (m, n) with m < n: (1,1.5), (1,3), (2,3) = 3/4
    result = loss_membership(np.array([1.0, 2.0, 1.5, 3.0]), np.array([True, True, False, False]), n_bootstrap=10)
    assert result["auroc"] == pytest.approx(0.75)
