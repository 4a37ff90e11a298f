"""Property table, web presence, cohorts and counterfactuals on hand-built frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.labels import fold, normalize_label
from wikimem_platform.reference.cohorts import add_web_presence, draw_cohorts
from wikimem_platform.reference.counterfactuals import build_candidates, draw_counterfactuals, flag_truth_clashes
from wikimem_platform.reference.properties import build_property_table, merge_property_metadata, metadata_sources


def claims_frame(rows):
    return pd.DataFrame(rows, columns=["qid", "property", "datatype", "value", "value_label"])


def test_property_table_filters_usage_datatype_and_unlabelled():
    claims = claims_frame(
        [("Q1", "P106", "wikibase-item", "Q10", "writer"), ("Q2", "P106", "wikibase-item", "Q11", "poet"),
         ("Q2", "P106", "wikibase-item", "Q10", "writer"),  # same human twice: counts once
         ("Q1", "P31", "wikibase-item", "Q5", "human"), ("Q2", "P31", "wikibase-item", "Q5", "human"),
         ("Q1", "P214", "string", "123", "123"), ("Q2", "P214", "string", "456", "456"),
         ("Q1", "P999", "wikibase-item", "Q12", "x"), ("Q2", "P999", "wikibase-item", "Q12", "x"),
         ("Q1", "P19", "wikibase-item", "Q13", "Ulm")]
    )
    metadata = pd.DataFrame(
        [("P106", "occupation", "job", ["profession"], "wikibase-item"),
         ("P31", "instance of", "", [], "wikibase-item"),
         ("P214", "VIAF ID", "", [], "external-id"),  # typed "string" in old entities
         ("P999", None, None, [], "wikibase-item"),  # no English label: no template possible
         ("P19", "place of birth", "", [], "wikibase-item")],
        columns=["property", "label", "description", "aliases", "datatype"],
    )
    table = build_property_table(claims, metadata, min_humans=2)
    assert table.to_dict("records") == [
        {"property": "P106", "label": "occupation", "description": "job", "aliases": ["profession"],
         "datatype": "wikibase-item", "n_humans": 2}
    ]
    assert list(build_property_table(claims, metadata, min_humans=1)["property"]) == ["P106", "P19"]


def test_property_metadata_from_the_dump_first_then_the_side_file():
    columns = ["property", "label", "description", "aliases", "datatype"]
    dump = pd.DataFrame([("P106", "occupation (dump)", "what they do", ["job"], "wikibase-item"),
                         ("P19", None, None, [], "wikibase-item")],  # no English label in the dump
                        columns=columns)
    side = pd.DataFrame([("P106", "occupation", "job", ["profession"], "wikibase-item", 9),
                         ("P19", "place of birth", "", [], "wikibase-item", 8),
                         ("P27", "citizenship", "", [], "wikibase-item", 7)], columns=[*columns, "usage_count"])
    metadata = merge_property_metadata(dump, side)
    assert metadata[["property", "label", "source"]].values.tolist() == [
        ["P106", "occupation (dump)", "dump"], ["P19", "place of birth", "side file"], ["P27", "citizenship", "side file"]]
    claims = claims_frame([("Q1", "P106", "wikibase-item", "Q10", "writer"), ("Q1", "P19", "wikibase-item", "Q13", "Ulm")])
    table = build_property_table(claims, metadata, min_humans=1)
    assert table.set_index("property")["label"].to_dict() == {"P106": "occupation (dump)", "P19": "place of birth"}
    assert metadata_sources(table, metadata) == {"dump": 1, "side file": 1}
    no_dump = merge_property_metadata(dump.iloc[:0], side)  # the bundled sample: no property entities
    assert list(no_dump["source"]) == ["side file"] * 3
    assert metadata_sources(build_property_table(claims, no_dump, min_humans=1), no_dump) == {"dump": 0, "side file": 2}


def test_web_presence_unknown_is_nan_and_dump_sitelinks_win():
    humans = pd.DataFrame(
        {"qid": ["Q1", "Q2", "Q3", "Q4"], "label": list("abcd"), "aliases": [[]] * 4,
         "sitelinks": pd.array([10, pd.NA, pd.NA, 0], dtype="Int64")}
    )
    signals = pd.DataFrame({"qid": ["Q1", "Q2"], "sitelinks": [99, 5], "page_views": [pd.NA, 1000]})
    out = add_web_presence(humans, signals).set_index("qid")
    assert out.loc["Q1", "sitelinks"] == 10  # the dump's own count beats the sidecar
    assert out.loc["Q2", "sitelinks"] == 5
    assert np.isnan(out.loc["Q3", "web_presence"])  # nothing known: unknown, not low
    # sitelinks ranks among {10, 5, 0}: Q1 1.0, Q2 2/3, Q4 1/3; Q2's page views rank 1.0 alone.
    assert out.loc["Q1", "web_presence"] == pytest.approx(1.0)
    assert out.loc["Q2", "web_presence"] == pytest.approx((2 / 3 + 1.0) / 2)
    assert out.loc["Q4", "web_presence"] == pytest.approx(1 / 3)


def test_cohorts_top_and_bottom_disjoint_reproducible():
    humans = pd.DataFrame({"qid": [f"Q{i}" for i in range(1, 11)], "label": [f"P{i}" for i in range(1, 11)],
                           "aliases": [[]] * 10, "web_presence": [0.1 * i for i in range(1, 11)]})
    humans.loc[humans["qid"] == "Q5", "web_presence"] = np.nan  # unknown: never drawn
    cohorts = draw_cohorts(humans, size=3)
    assert cohorts[cohorts["cohort"] == "well-known"]["qid"].tolist() == ["Q10", "Q9", "Q8"]
    assert cohorts[cohorts["cohort"] == "lesser-known"]["qid"].tolist() == ["Q3", "Q2", "Q1"]
    sampled = draw_cohorts(humans, size=2, pool_factor=2, seed=7)
    assert sampled.equals(draw_cohorts(humans, size=2, pool_factor=2, seed=7))
    assert set(sampled[sampled["cohort"] == "well-known"]["qid"]) <= {"Q10", "Q9", "Q8", "Q7"}
    assert set(draw_cohorts(humans, eligible_qids={"Q1", "Q2", "Q9", "Q10"}, size=2)["qid"]) == {"Q1", "Q2", "Q9", "Q10"}
    with pytest.raises(ValueError, match="only 9 subjects have a known web presence"):
        draw_cohorts(humans, size=5)


def test_counterfactuals_dedupe_names_and_values_and_skip_subjects():
    humans = pd.DataFrame({"qid": ["Q1", "Q2", "Q3", "Q4", "Q5"],
                           "label": ["John Smith", "John  smith", "Ada", "Bo", "Cy"]})
    claims = claims_frame(
        [("Q1", "P106", "wikibase-item", "Q10", "writer"), ("Q2", "P106", "wikibase-item", "Q11", "poet"),
         ("Q3", "P106", "wikibase-item", "Q10", "writer"), ("Q4", "P106", "wikibase-item", "Q12", "Writer"),
         ("Q5", "P106", "wikibase-item", "Q13", "painter")]
    )
    cfs = draw_counterfactuals(claims, humans, ["P106"], per_property=100, seed=1, exclude_humans={"Q5"})
    assert "Q5" not in set(cfs["human_qid"])
    assert cfs["human_label"].map(normalize_label).is_unique  # "John Smith" once
    assert cfs["value_label"].map(normalize_label).is_unique  # "writer" once
    assert len(draw_counterfactuals(claims, humans, ["P106"], per_property=1)) == 1
    assert cfs.equals(draw_counterfactuals(claims, humans, ["P106"], seed=1, exclude_humans={"Q5"}))


def test_candidates_drop_counterfactuals_equal_to_a_truth():
    subjects = pd.DataFrame({"qid": ["Q1"]})
    claims = claims_frame([("Q1", "P27", "wikibase-item", "Q30", "United States")])
    cfs = pd.DataFrame(
        {"property": ["P27"] * 3, "human_qid": ["Q7", "Q8", "Q9"], "human_label": list("abc"),
         "value": ["Q30", "Q99", "Q183"], "value_label": ["United States", "united  states", "Germany"]}
    )
    candidates = build_candidates(subjects, claims, cfs)
    assert candidates[["value", "is_true"]].values.tolist() == [["Q30", True], ["Q183", False]]
    assert not flag_truth_clashes(candidates)["clashes_with_truth"].any()
    planted = pd.concat([candidates, pd.DataFrame([{"subject_qid": "Q1", "property": "P27", "value": "Q99",
                                                    "value_label": "UNITED STATES", "is_true": False}])])
    assert flag_truth_clashes(planted)["clashes_with_truth"].tolist() == [False, False, True]


def test_labels_that_differ_only_by_accents_are_the_same_value_and_name():
    """"Krakow" under another id is the truth "Kraków" written without its accent: never a wrong
    answer against it, never a second candidate; "Jose Perez" reads as "José Pérez"."""
    subjects = pd.DataFrame({"qid": ["Q1"]})
    claims = claims_frame([("Q1", "P19", "wikibase-item", "Q31487", "Kraków")])
    cfs = pd.DataFrame({"property": ["P19"] * 3, "human_qid": ["Q7", "Q8", "Q9"], "human_label": list("abc"),
                        "value": ["Q99", "Q270", "Q1748"], "value_label": ["Krakow", "Warsaw", "Łódź"]})
    candidates = build_candidates(subjects, claims, cfs)
    assert candidates["value_label"].tolist() == ["Kraków", "Warsaw", "Łódź"]
    clash = pd.concat([candidates, pd.DataFrame([{"subject_qid": "Q1", "property": "P19", "value": "Q98",
                                                  "value_label": "KRAKOW", "is_true": False}])])
    assert flag_truth_clashes(clash)["clashes_with_truth"].tolist() == [False, False, False, True]
    humans = pd.DataFrame({"qid": ["Q1", "Q2", "Q3", "Q4"], "label": ["José Pérez", "Jose Perez", "Ana", "Bo"]})
    claims = claims_frame([("Q1", "P19", "wikibase-item", "Q1748", "Łódź"), ("Q2", "P19", "wikibase-item", "Q5", "Paris"),
                           ("Q3", "P19", "wikibase-item", "Q6", "Lodz"), ("Q4", "P19", "wikibase-item", "Q7", "Rome")])
    drawn = draw_counterfactuals(claims, humans, ["P19"], per_property=100, seed=0)
    # one José Pérez and one Łódź at most (which of each is the seed's draw); Rome always
    assert drawn["human_label"].map(fold).is_unique and drawn["value_label"].map(fold).is_unique
    assert len(drawn) in (2, 3) and "Rome" in set(drawn["value_label"])
