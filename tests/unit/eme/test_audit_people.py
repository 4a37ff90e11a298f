"""Whom an entity-level probe evaluates and trains on (`eme.audit_people`): the planted people of
a planted model audited on them, else the audited cohorts."""

import pandas as pd

from wikimem_platform import eme
from wikimem_platform.planted import load_manifest

SUBJECTS = pd.DataFrame({"qid": ["Q1", "Q2"], "cohort": ["well-known", "lesser-known"]})
HUMANS = pd.DataFrame({"qid": ["Q1", "Q2", "Q3"], "label": ["Ada One", "Bo Two", "Cy Three"]})
CLAIMS = pd.DataFrame({"qid": ["Q1", "Q2", "Q3"], "property": ["P19"] * 3, "value": ["Q90", "Q64", "Q84"],
                       "value_label": ["Paris", "Berlin", "London"]})
PROPERTIES = pd.DataFrame({"property": ["P19"], "label": ["place of birth"]})


def test_real_people_the_audited_cohorts_are_evaluated_and_never_trained_on():
    people = eme.audit_people("HuggingFaceTB/SmolLM2-135M", SUBJECTS, CLAIMS, HUMANS, PROPERTIES)
    assert not people.planted and people.group == "cohort"
    assert people.never_train == ["Q1", "Q2"] and people.evaluate_only == ["Q1", "Q2"]
    assert people.cohorts.to_dict("records") == [{"subject_qid": "Q1", "cohort": "well-known"},
                                                 {"subject_qid": "Q2", "cohort": "lesser-known"}]
    pd.testing.assert_frame_equal(people.facts, eme.facts_from_claims(CLAIMS, HUMANS, {"P19": "place of birth"}))


def test_a_planted_model_on_its_people_uses_the_ground_truth(planted_model):
    """Planted model: the manifest and membership files its training wrote are what is read (slow: trained once)."""
    manifest = load_manifest(planted_model)
    subjects = pd.DataFrame({"qid": [p["qid"] for p in manifest["people"][:3]], "cohort": "planted"})
    people = eme.audit_people(planted_model, subjects, CLAIMS, HUMANS, PROPERTIES)
    assert people.planted and people.group == "repetitions" and people.evaluate_only is None
    assert people.never_train == [p["qid"] for p in manifest["people"] if not p["member"]]
    facts, cohorts = eme.planted_inputs(planted_model)
    pd.testing.assert_frame_equal(people.cohorts, cohorts)
    pd.testing.assert_frame_equal(people.facts, facts)


def test_a_planted_model_audited_on_real_people_has_no_ground_truth(planted_model):
    """Planted model: a real planted directory, audited on other people (slow: trained once)."""
    people = eme.audit_people(planted_model, SUBJECTS, CLAIMS, HUMANS, PROPERTIES)
    assert not people.planted and people.group == "cohort"
