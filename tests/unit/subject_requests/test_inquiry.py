"""Person inquiry (Art. 15) and release diff on hand-made stored results.

The tables are written where the Parquet IO manager puts them (<storage>/parquet/<asset>.parquet,
<storage>/parquet/<asset>/<name@revision>.parquet); expectations are worked out by hand below.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.subject_requests import inquiry as inq
from wikimem_platform.wikimem.release_diff import diff_summary, diff_utility, release_diff
from wikimem_platform.storage import StoredResults, to_json


def pair(qid, subject, prop, n_memorized, z=np.nan, cohort="well-known"):
    m = n_memorized / 11
    return {"subject_qid": qid, "property": prop, "cohort": cohort, "n_variants": 11, "n_memorized": n_memorized,
            "M": m, "strict": m == 1.0, "lenient": m > 0, "at_threshold": m >= 0.8, "z_star": z,
            "summed_truth_rank": 1, "n_candidates": 5, "subject": subject}


# Release a@1 -> a@2, at_threshold (M >= 0.8) / lenient (M > 0):
#   Q1 P106  10/11 -> 0/11    forgotten under both
#   Q1 P27    0/11 -> 11/11   newly memorized under both
#   Q2 P27    2/11 -> 3/11    not memorized (at_threshold) / still memorized (lenient)
#   Q2 P106   1/11 -> absent  only in old
#   Q3 P19    absent -> 10/11 only in new
OLD = [pair("Q1", "Ada Lovelace", "P106", 10, 2.5), pair("Q1", "Ada Lovelace", "P27", 0),
       pair("Q2", "Bob Example", "P27", 2, 1.0, "lesser-known"), pair("Q2", "Bob Example", "P106", 1, 0.5, "lesser-known")]
NEW = [pair("Q1", "Ada Lovelace", "P106", 0), pair("Q1", "Ada Lovelace", "P27", 11, 3.0),
       pair("Q2", "Bob Example", "P27", 3, 1.2, "lesser-known"), pair("Q3", "Cleo Third", "P19", 10, 1.5, "lesser-known")]


@pytest.fixture
def storage(tmp_path):
    root = tmp_path / "storage"
    parquet = root / "parquet"
    (parquet / "memorization").mkdir(parents=True)
    pd.DataFrame(OLD).to_parquet(parquet / "memorization" / "a@1.parquet")
    pd.DataFrame(NEW).to_parquet(parquet / "memorization" / "a@2.parquet")
    pd.DataFrame({"qid": ["Q1", "Q2", "Q3"], "label": ["Ada Lovelace", "Bob Example", "Cleo Third"],
                  "aliases": [["Countess of Lovelace"], [], []], "cohort": ["well-known", "lesser-known", "lesser-known"],
                  "web_presence": [0.9, 0.1, 0.1], "cohort_rank": [0, 0, 1]}).to_parquet(parquet / "subjects.parquet")
    pd.DataFrame({"qid": ["Q1", "Q2", "Q3", "Q4"], "label": ["Ada Lovelace", "Bob Example", "Cleo Third", "Charles Babbage"],
                  "aliases": [[], [], [], ["Babbage"]]}).to_parquet(parquet / "humans.parquet")
    pd.DataFrame({
        "subject_qid": ["Q1", "Q1", "Q1", "Q1", "Q2"],
        "property": ["P106", "P106", "P106", "P27", "P27"],
        "value": ["Q11", "Q12", "Q13", "Q145", "Q99"],
        "value_label": ["mathematician", "writer", "painter", "United Kingdom", "Example"],
        "is_true": [True, True, False, True, True],
    }).to_parquet(parquet / "candidates.parquet")
    pd.DataFrame({"property": ["P106", "P27", "P19"], "label": ["occupation", "country of citizenship", "place of birth"]}
                 ).to_parquet(parquet / "property_table.parquet")
    pd.DataFrame({
        "subject_qid": ["Q1", "Q2"], "property": ["P106", "P27"], "variant_id": [0, 0], "kind": ["baseline", "baseline"],
        "template": ["{subject} worked as a {value}.", "{subject} is a citizen of {value}."],
        "subject": ["Ada Lovelace", "Bob Example"], "ground_truth_labels": [["mathematician", "writer"], ["Example"]],
    }).to_parquet(parquet / "canaries.parquet")
    return root


MODELS = [inq.ModelRef("a@1", "smollm2-135m-instruct", "instruct"), inq.ModelRef("a@2", "smollm2-135m-instruct", "instruct"),
          inq.ModelRef("b@1", "gemma-3-270m", "base")]


@pytest.mark.parametrize("query", ["Q1", "q1", "ada  LOVELACE", "Countess of Lovelace"])
def test_inquiry_finds_the_person_by_qid_label_or_alias(storage, query):
    answer = inq.person_inquiry(query, StoredResults(storage), MODELS)
    assert [s["qid"] for s in answer["subjects"]] == ["Q1"]
    by_model = {m["model"]: m for m in answer["models"]}
    assert by_model["b@1"]["audited"] is False and by_model["b@1"]["facts"] == []
    old = {f["property"]: f for f in by_model["a@1"]["facts"]}
    assert set(old) == {"P106", "P27"}
    assert old["P106"]["memorized"] is True and old["P27"]["memorized"] is False
    assert math.isclose(old["P106"]["M"], 10 / 11) and old["P106"]["z_star"] == 2.5 and old["P27"]["z_star"] is None
    assert old["P106"]["property_label"] == "occupation"
    assert [v["value_label"] for v in old["P106"]["values"]] == ["mathematician", "writer"]  # painter is a counterfactual
    # cue: "Ada Lovelace worked as a ." shares one letter with "mathematician" (1/13) and with "writer" (1/6)
    assert math.isclose(old["P106"]["cue"], 1 / 6) and old["P106"]["cue_flag"] is False
    assert old["P27"]["cue"] is None and old["P27"]["cue_flag"] is None  # no canary stored for it
    new = {f["property"]: f for f in by_model["a@2"]["facts"]}
    assert new["P27"]["memorized"] is True and new["P106"]["memorized"] is False
    assert by_model["a@1"]["n_memorized"] == 1 and by_model["a@2"]["n_memorized"] == 1
    json.loads(to_json(answer))  # serializable (NaN -> null)


def test_inquiry_flags_cued_facts_and_people_never_audited(storage):
    answer = inq.person_inquiry("Bob Example", StoredResults(storage), MODELS, criterion="lenient")
    fact = {f["property"]: f for f in answer["models"][0]["facts"]}["P27"]
    assert fact["cue"] == 1.0 and fact["cue_flag"] is True  # the name "Bob Example" shows the value "Example"
    assert fact["memorized"] is True  # 2/11 > 0 under lenient
    nobody = inq.person_inquiry("Babbage", StoredResults(storage), MODELS)
    assert nobody["subjects"] == [] and nobody["known_but_not_audited"] == [{"qid": "Q4", "label": "Charles Babbage"}]
    assert all(m["facts"] == [] for m in nobody["models"])
    page = inq.inquiry_html(nobody)
    assert "Charles Babbage (Q4)" in page and "not among the audited subjects" in page


def test_release_diff_under_both_criteria():
    old, new = pd.DataFrame(OLD), pd.DataFrame(NEW)
    diff = release_diff(old, new)
    change = {(r["subject_qid"], r["property"]): r["change"] for r in diff.to_dict("records")}
    assert change == {("Q1", "P106"): "forgotten", ("Q1", "P27"): "newly memorized", ("Q2", "P27"): "not memorized",
                      ("Q2", "P106"): "only in old", ("Q3", "P19"): "only in new"}
    assert diff_summary(diff) == {"newly memorized": 1, "forgotten": 1, "still memorized": 0, "not memorized": 1,
                                      "only in old": 1, "only in new": 1}
    row = diff[diff["property"] == "P19"].iloc[0]
    assert row["subject"] == "Cleo Third" and np.isnan(row["M_old"]) and math.isclose(row["M_new"], 10 / 11)
    lenient = release_diff(old, new, "lenient")
    assert lenient.set_index(["subject_qid", "property"]).loc[("Q2", "P27"), "change"] == "still memorized"
    with pytest.raises(ValueError, match="criterion"):
        release_diff(old, new, "sometimes")


def test_diff_utility_hand_computed():
    """Q1/P1 forgotten, Q1/P2 and Q2/P1 kept, Q3/P1 newly memorized: 2 of the 3 facts memorized
    before still are; on a retain set of Q1/P1 and Q2/P1, 1 of 2."""

    old = pd.DataFrame({"subject_qid": ["Q1", "Q1", "Q2", "Q3"], "property": ["P1", "P2", "P1", "P1"],
                        "M": [1.0, 0.9, 0.8, 0.1], "z_star": 1.0, "at_threshold": [True, True, True, False],
                        "lenient": True, "strict": False})
    diff = release_diff(old, old.assign(at_threshold=[False, True, True, True]))
    assert diff_utility(diff) == {"scope": "every fact both audited", "memorized_before": 3, "still_memorized": 2,
                                  "utility": 2 / 3}
    assert diff_utility(diff, [("Q2", "P1"), ("Q1", "P1")])["utility"] == 0.5
