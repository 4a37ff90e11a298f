"""A true value's other forms scored as the same truth (issue 33.5): the ranking with a form in
G by hand, the selection rule on real values of the bundled sample, and the controls getting the
person's forms."""

from __future__ import annotations

import functools

import pandas as pd
import pytest

from wikimem_platform.reference import bundled
from wikimem_platform.reference.counterfactuals import build_candidates, draw_counterfactuals
from wikimem_platform.reference.value_forms import (
    acceptable,
    form_of,
    form_sources,
    form_value,
    with_form_aliases,
    is_form,
    select_forms,
    with_truth_forms,
    without_forms,
)
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem.memorization import aliases_by_value, evaluate_wikimem

USA = "Q30"


@functools.lru_cache(maxsize=1)
def sample():
    return read_dump(bundled.SAMPLE_DUMP)


def _scores(rows):
    """One subject, property P27, two wordings; rows: (value, label, is_true, nll_h per wording)."""
    out = []
    for value, label, is_true, nlls in rows:
        for variant, nll in enumerate(nlls):
            out.append(dict(subject_qid="Qp", property="P27", variant_id=variant, kind="paraphrase" if variant else "baseline",
                            value=value, value_label=label, is_true=is_true, nll_h=nll, nll_h0=30.0,
                            nll_similar_mean=30.0))
    return pd.DataFrame(out)


def test_a_form_of_the_truth_ranks_as_the_truth_by_hand():
    """NLL(h0) = 30 for every row, so the compared score is s = 30 - NLL(h). The truth's label
    (5 tokens) is at NLL 20 and 21; "Italy" at 18 and 19, "France" at 19 and 22, the form "USA" at
    17 and 20. Label only: wording 0 ranks Italy, France above the truth (rank 3), wording 1 Italy
    (rank 2); summed s: Italy 23, truth 19, France 19 -> the truth is 3rd (the tie with France
    counts against it). With "USA" in G: wording 0 it is first (17 < 18), wording 1 Italy at 19
    beats it (20) -> rank 2; summed: USA 23, Italy 23 -> tied with a counterfactual, rank 2."""
    rows = [(USA, "United States of America", True, [20.0, 21.0]),
            ("Q38", "Italy", False, [18.0, 19.0]),
            ("Q142", "France", False, [19.0, 22.0]),
            (form_value(USA, "USA"), "USA", False, [17.0, 20.0])]
    scores = _scores(rows)
    before = evaluate_wikimem(without_forms(scores), alpha=0.0)
    after = evaluate_wikimem(scores, alpha=0.0)
    assert before.variants.sort_values("variant_id")["truth_rank"].tolist() == [3, 2]
    assert after.variants.sort_values("variant_id")["truth_rank"].tolist() == [1, 2]
    assert before.pairs["M"].item() == 0.0 and after.pairs["M"].item() == 0.5
    assert before.pairs["summed_truth_rank"].item() == 3 and after.pairs["summed_truth_rank"].item() == 2
    assert after.variants.sort_values("variant_id")["top_truth_value"].tolist()[0] == form_value(USA, "USA")
    # the form is in G without being a truth: never listed as a true value
    prepared = after.candidates.drop_duplicates("value").set_index("value")
    assert bool(prepared.at[form_value(USA, "USA"), "is_g"]) and not bool(prepared.at[form_value(USA, "USA"), "is_true"])
    # a form that clearly beats everything makes the fact memorized in both wordings
    rows[3] = (form_value(USA, "USA"), "USA", False, [10.0, 10.0])
    assert evaluate_wikimem(_scores(rows), alpha=0.0).pairs["M"].item() == 1.0


def test_form_ids_name_their_truth():
    assert form_of(form_value(USA, "United States")) == USA
    assert form_of(USA) is None
    assert is_form([USA, form_value(USA, "USA"), "1950-01-01"]).tolist() == [False, True, False]


def test_which_aliases_may_be_forms():
    assert acceptable("USA") and acceptable("United States") and acceptable("Guinea-Bissau") and acceptable("Türkiye")
    assert not acceptable("US")  # fewer than 3 letters
    assert not acceptable("U.S.") and not acceptable("U.S.A.")  # letters only
    assert not acceptable("Lou Gehrig's disease") and not acceptable("1918 flu")
    assert not acceptable("the US") and not acceptable("the States")  # the sentence has its own article
    assert select_forms("United States of America", ["U.S.", "US", "United States", "the US", "USA", "America"],
                        max_forms=3) == ["United States", "USA", "America"]
    assert select_forms("United States of America", ["United States", "USA"], max_forms=1) == ["United States"]
    # never a counterfactual's label, never twice, never the label itself
    assert select_forms("People's Republic of China", ["China", "PRC", "prc", "People's Republic of China"],
                        blocked={"china"}) == ["PRC"]
    # an alias that is the label without its accents is the label, not another form
    assert select_forms("Édith Piaf", ["Edith Piaf", "La Môme Piaf"]) == ["La Môme Piaf"]


def test_the_rule_on_real_values_of_the_sample():
    """Q30 of the bundled sample: "United States of America" gets "United States" by default and
    "United States", "USA", "America" when three forms are allowed (the sample's value_aliases has
    none for it; the shipped short forms fill in). A
    form equal to a counterfactual's label ("Italy" for the Kingdom of Italy when Italy is in the
    pool) or to an alias of a counterfactual value is never scored as the truth."""
    extract = sample()
    sources = form_sources(aliases_by_value(extract.value_aliases))
    assert extract.value_aliases[extract.value_aliases["value"] == USA].empty  # not from the extract
    pool = draw_counterfactuals(extract.claims, extract.humans, ["P27"], per_property=100, seed=0,
                                exclude_humans={"Q76"})
    obama = extract.humans[extract.humans["qid"] == "Q76"]
    assert with_truth_forms(build_candidates(obama, extract.claims, pool), sources).pipe(
        lambda c: c.loc[is_form(c["value"]), "value_label"].tolist()) == ["United States"]  # the default: one form
    candidates = with_truth_forms(build_candidates(obama, extract.claims, pool), sources, 3)
    forms = candidates[is_form(candidates["value"])]
    assert forms["value_label"].tolist() == ["United States", "USA", "America"]
    assert {form_of(v) for v in forms["value"]} == {USA} and not forms["is_true"].any()
    assert len(without_forms(candidates)) == len(candidates) - 3
    # the Kingdom of Italy against a pool holding Italy: "Italy" is a counterfactual, not a form
    assert "Q38" in set(pool["value"])
    italian = extract.claims[(extract.claims["property"] == "P27") & (extract.claims["value"] == "Q172579")]["qid"]
    who = extract.humans[extract.humans["qid"] == italian.iloc[0]]
    rows = with_truth_forms(build_candidates(who, extract.claims[extract.claims["property"] == "P27"], pool), sources, 3)
    assert "Italy" not in set(rows.loc[is_form(rows["value"]), "value_label"])
    assert "Italian Kingdom" in set(rows.loc[is_form(rows["value"]), "value_label"])
    # an alias shared with a counterfactual value blocks the form
    shared = {**sources, "Q38": ["USA"]}
    rows = with_truth_forms(build_candidates(obama, extract.claims, pool), shared, 3)
    assert rows.loc[is_form(rows["value"]), "value_label"].tolist() == ["United States", "America"]
    # idempotent, and off at 0
    assert with_truth_forms(candidates, sources, 3).equals(candidates)
    assert with_truth_forms(build_candidates(obama, extract.claims, pool), sources, 0).equals(
        build_candidates(obama, extract.claims, pool))


@pytest.mark.parametrize("truth_forms", [3, 0])
def test_controls_get_the_persons_forms(truth_forms):
    """A request audit's plan: each invented control carries exactly the person's forms of the
    true value (same property, value and pool), so more forms give the person no chance the
    controls do not get."""
    from wikimem_platform.canaries import build_templates
    from wikimem_platform.reference.properties import build_property_table
    from wikimem_platform.subject_requests.audit import plan_person_audit
    from wikimem_platform.subject_requests.reference import property_metadata

    extract = sample()
    metadata = property_metadata()
    table = build_property_table(extract.claims, metadata, min_humans=5)
    table = table[table["property"] == "P27"]
    subject = extract.humans[extract.humans["qid"] == "Q76"][["qid", "label", "aliases", "description"]] \
        .assign(in_wikidata=True).reset_index(drop=True)
    facts = extract.claims[extract.claims["qid"] == "Q76"]
    plan = plan_person_audit(subject, facts, property_table=table, templates=build_templates(table),
                             counterfactuals=draw_counterfactuals(extract.claims, extract.humans, ["P27"], per_property=30,
                                                                  exclude_humans={"Q76"}),
                             claims=extract.claims, humans=extract.humans, metadata=metadata, on_demand=False,
                             n_controls=3, value_aliases=aliases_by_value(extract.value_aliases), truth_forms=truth_forms,
                             max_controls=3, kin_per_token=0)  # the 3 controls only: no candidates to match, no more
    person = plan.candidates[is_form(plan.candidates["value"])]
    assert person["value_label"].tolist() == (["United States", "USA", "America"] if truth_forms else [])
    theirs = plan.control_candidates
    assert theirs["subject_qid"].nunique() == 3
    for _, block in theirs.groupby("subject_qid"):
        assert block.loc[is_form(block["value"]), ["property", "value", "value_label"]].values.tolist() == \
            person[["property", "value", "value_label"]].values.tolist()
        assert sorted(block["value"]) == sorted(plan.candidates["value"])


def test_a_wording_that_shows_a_form_gives_the_value_away():
    """The forms scored as the truth are aliases to the giveaway rules: "America Jones"'s wordings
    show "America", a form of Q30, so they are left out as if they showed the label."""
    from wikimem_platform.crm.giveaways import find_giveaways

    candidates = pd.DataFrame({"subject_qid": ["Qp"] * 3, "property": ["P27"] * 3,
                               "value": [USA, "Q38", form_value(USA, "America")],
                               "value_label": ["United States of America", "Italy", "America"],
                               "is_true": [True, False, False]})
    assert with_form_aliases({"Q38": ["Italia"]}, candidates) == {"Q38": ["Italia"], USA: ["America"]}
    canaries = pd.DataFrame([{"subject_qid": "Qp", "property": "P27", "variant_id": 0, "kind": "baseline",
                              "subject": "America Jones", "template": "{subject}'s country of citizenship is {value}.",
                              "ground_truth": [USA], "ground_truth_labels": ["United States of America"],
                              "context_properties": []}])
    assert find_giveaways(canaries).wordings.empty
    assert len(find_giveaways(canaries, with_form_aliases({}, candidates)).wordings) == 1


def test_forms_are_neither_wrong_answers_nor_negatives():
    """A form is the truth under another name: never among the wrong answers an unlearning set
    perturbs with, never a negative of the privacy-leak AUROC."""
    from wikimem_platform.unlearning.export import top_counterfactuals
    from wikimem_platform.unlearning.verify import privleak_auroc

    scores = _scores([(USA, "United States of America", True, [10.0]), ("Q38", "Italy", False, [20.0]),
                      (form_value(USA, "USA"), "USA", False, [5.0])])
    assert top_counterfactuals(scores, n=2) == {("Qp", "P27", "en"): ["Italy"]}
    assert privleak_auroc(scores, [("Qp", "P27")]) == 1.0  # 0.5 if "USA" were a negative
