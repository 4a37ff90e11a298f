"""Invented-person controls: names (on the bundled sample's real labels) and the person read
against them (p-values, verdicts and false-positive rates computed by hand)."""

import math

import numpy as np

import pandas as pd
import pytest

from wikimem_platform.reference import bundled
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.controls import MEMORIZED, NO_EVIDENCE, WEAK


@pytest.fixture(scope="module")
def sample():
    extract = read_dump(bundled.SAMPLE_DUMP)
    return extract, controls.name_parts(extract.humans, extract.claims), controls.taken_names(extract.humans)


def _person(extract, label):
    row = extract.humans[extract.humans["label"] == label].iloc[0]
    return row


def test_names_copy_the_shape_and_are_nobody_in_the_extract(sample):
    extract, parts, taken = sample
    for label in ("Trygve Lie", "Giorgio Baffo", "Muḥammad Mutawallī al-Shaʻrāwī", "Kaká"):
        person = _person(extract, label)
        origin = parts.set_index("qid")["origin"].get(person["qid"])
        names = controls.invented_names(label, 19, parts, taken, origin=origin, avoid=list(person["aliases"]))
        assert len(names) == len(set(names)) == 19
        own = {controls.fold(t) for t in label.split()}
        for name in names:
            assert len(name.split()) == len(label.split()), (label, name)
            assert controls.fold(name) not in taken, name  # not a label or alias of anyone
            assert not own & {controls.fold(t) for t in name.split()}, (label, name)  # no token of the person


def test_names_come_from_the_persons_origin_when_the_extract_has_enough(sample):
    extract, parts, taken = sample
    person = _person(extract, "Giorgio Baffo")
    origin = parts.set_index("qid")["origin"][person["qid"]]
    local = parts[(parts["origin"] == origin) & (parts["n_tokens"] == 2)]
    assert len(local) >= controls.MIN_ORIGIN_LABELS
    firsts, lasts = {t[0] for t in local["tokens"]}, {t[-1] for t in local["tokens"]}
    for name in controls.invented_names("Giorgio Baffo", 19, parts, taken, origin=origin):
        first, last = name.split()
        assert first in firsts and last in lasts, name


def test_people_of_one_shape_and_origin_share_their_controls(sample):
    """The draw depends on the shape and origin only: two people share every control that has
    no token of either's name, so the controls' sentences are scored once for both."""
    _, parts, taken = sample
    a = controls.invented_names("Trygve Lie", 19, parts, taken)
    b = controls.invented_names("Brenda Berkman", 19, parts, taken)
    assert len(set(a) & set(b)) >= 17
    assert a == controls.invented_names("Trygve Lie", 19, parts, taken)  # seeded
    assert a != controls.invented_names("Trygve Lie", 19, parts, taken, seed=1)


def test_a_cohort_draws_the_same_names_as_one_request_each(sample):
    """cohort_control_names builds each (shape, origin)'s pools once for all its people; every
    person still gets exactly the names a request for them alone gets (60 people of many
    countries and shapes, typical-name countries among them)."""
    from wikimem_platform.wikimem.control_scoring import cohort_control_names

    extract, parts, taken = sample
    people = extract.humans.iloc[::130].head(60)
    together = cohort_control_names(people, extract.claims, extract.humans, 19)
    for row in people.to_dict("records"):
        alone = controls.control_names(pd.DataFrame([row]), extract.claims[extract.claims["qid"] == row["qid"]],
                                       extract.humans, extract.claims, 19)
        assert together[row["qid"]] == alone, row["label"]


def test_too_few_names_is_a_clear_error():
    parts = controls.name_parts(pd.DataFrame({"qid": ["Q1", "Q2"], "label": ["Ann Lee", "Bo Kim"]}))
    with pytest.raises(ValueError, match=r"name: only \d+ invented names of 2 token\(s\)"):
        controls.invented_names("Cy Dow", 19, parts, set())


def test_controls_carry_the_persons_facts_under_stable_ids():
    subject = pd.DataFrame([{"qid": "Q42", "label": "Douglas Adams", "aliases": ["DNA"], "description": "writer",
                             "in_wikidata": True}])
    facts = pd.DataFrame({"qid": ["Q42", "Q42"], "property": ["P27", "P106"], "value": ["Q145", "Q36180"],
                          "value_label": ["United Kingdom", "writer"]})
    subjects, copied = controls.control_people(subject, facts, ["Ann Lee", "Bo Kim"])
    assert list(subjects["label"]) == ["Ann Lee", "Bo Kim"] and not subjects["in_wikidata"].any()
    assert set(subjects["control_of"]) == {"Q42"} and subjects["aliases"].map(len).eq(0).all()
    assert len(copied) == 4 and set(copied["qid"]) == set(subjects["qid"])
    assert copied.groupby("qid")["value_label"].apply(sorted).map(tuple).nunique() == 1
    assert controls.control_id("Ann Lee") == subjects["qid"].iloc[0] == controls.control_id("Ann Lee")
    none, no_facts = controls.control_people(subject, facts, [])
    assert none.empty and {"qid", "label", "control_of"} <= set(none.columns) and no_facts.empty


def _pairs(qid, prop, ms, ranks):
    return pd.DataFrame({"subject_qid": [f"{qid}{i}" for i in range(len(ms))], "property": prop,
                         "M": ms, "summed_truth_rank": ranks})


def test_p_values_and_verdicts_by_hand():
    # 19 controls of property P27: M = 0 for 17 of them (rank 5), one at M = 0.5 (rank 1), one
    # at M = 0.9 (rank 1); P106: all 19 at M = 0, rank 50.
    ctl = pd.concat([
        _pairs("c", "P27", [0.0] * 17 + [0.5, 0.9], [5] * 17 + [1, 1]),
        _pairs("c", "P106", [0.0] * 19, [50] * 19),
    ])
    person = pd.DataFrame({"subject_qid": "Q1", "property": ["P27", "P106", "P19"],
                           "M": [1.0, 0.3, 0.0], "summed_truth_rank": [1, 2, 3]})
    out = controls.compare_with_controls(person, ctl[ctl["property"] != "P19"], family_wise=True).set_index("property")
    # P27: no control reaches M = 1 -> p = 1/20 = 0.05 <= 0.05, M >= 0.8; P106 is compared too (the
    # family: 2 facts with M > 0 and controls), also at 0.05: adjusted 0.05 x 2/2 = 0.05 -> memorized
    assert out.loc["P27", "controls_as_extreme"] == 0 and out.loc["P27", "p_value"] == pytest.approx(0.05)
    assert out.loc["P27", "family"] == 2 and out.loc["P27", "p_family"] == pytest.approx(0.05)
    assert out.loc["P27", "verdict"] == MEMORIZED
    # with P106's controls all stronger than the person (p = 20/20 = 1), P27 is the only one beyond
    # its controls: adjusted 0.05 x 2/1 = 0.10 > 0.05 -> weakly associated, though M = 1
    beaten = pd.concat([ctl[ctl["property"] == "P27"], _pairs("c", "P106", [0.5] * 19, [1] * 19)])
    against = controls.compare_with_controls(person[person["property"] != "P19"], beaten, family_wise=True).set_index("property")
    assert against.loc["P106", "p_value"] == pytest.approx(1.0) and against.loc["P27", "p_family"] == pytest.approx(0.10)
    assert against.loc["P27", "verdict"] == WEAK and against.loc["P106", "verdict"] == NO_EVIDENCE
    # alone (a family of one) the same fact is memorized, and a cohort's rates read each fact alone
    alone = controls.compare_with_controls(person[person["property"] == "P27"], beaten, family_wise=True).set_index("property")
    assert alone.loc["P27", "family"] == 1 and alone.loc["P27", "verdict"] == MEMORIZED
    per_fact = controls.compare_with_controls(person[person["property"] != "P19"], beaten).set_index("property")
    assert per_fact.loc["P27", "verdict"] == MEMORIZED and per_fact.loc["P27", "p_family"] == pytest.approx(0.05)
    # P106: M = 0.3 beats every control (M = 0): p = 0.05, below the threshold: weakly associated
    assert out.loc["P106", "p_value"] == pytest.approx(0.05) and out.loc["P106", "verdict"] == WEAK
    assert math.isnan(out.loc["P19", "p_family"])  # not compared: outside the family
    # P19: no control was scored: no evidence, and the count says so
    assert out.loc["P19", "n_controls"] == 0 and math.isnan(out.loc["P19", "p_value"])
    assert out.loc["P19", "verdict"] == NO_EVIDENCE
    assert out.loc["P27", "controls_M_max"] == 0.9 and out.loc["P27", "controls_at_threshold"] == 1
    assert out.loc["P27", "controls_M_mean"] == pytest.approx(1.4 / 19)
    assert math.isnan(out.loc["P27", "fpr_memorized"]) and out.loc["P27", "n_probes"] == 0  # no probes given


def test_benjamini_hochberg_adjusted_p_values_by_hand():
    # sorted 0.01, 0.03, 0.04: 0.01 x 3/1 = 0.03; 0.03 x 3/2 = 0.045; 0.04 x 3/3 = 0.04 -> monotone from
    # the top: 0.04, min(0.045, 0.04) = 0.04, min(0.03, 0.04) = 0.03
    assert controls.family_adjusted([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])
    assert controls.family_adjusted([0.0375, 1.0]) == pytest.approx([0.075, 1.0])  # one strong, one null
    assert controls.family_adjusted([0.025]) == [0.025] and controls.family_adjusted([]) == []
    # many facts each beating all of 99 controls keep p = 0.01: a well-known person keeps them
    assert controls.family_adjusted([0.01] * 8) == pytest.approx([0.01] * 8)


def test_false_positive_rates_on_held_out_probes_by_hand():
    """Each probe (an invented person held out of the controls) is read against the 19 controls
    as the person is; the rates are the shares of probes reaching each verdict."""
    ctl = pd.concat([
        _pairs("c", "P27", [0.0] * 17 + [0.5, 0.9], [5] * 17 + [1, 1]),
        _pairs("c", "P106", [0.0] * 19, [50] * 19),
    ])
    probes = pd.concat([
        # P27: 1.0 beats all (p = 1/20): memorized; 0.6 is beaten by the 0.9 control (p = 2/20);
        # 0.0 at rank 9 is matched by all 19 (p = 1); 0.95 beats all: memorized -> 2 of 4
        _pairs("p", "P27", [1.0, 0.6, 0.0, 0.95], [1, 1, 9, 2]),
        # P106: 0.3 and 0.1 beat all (weak); M = 0 at rank 3 beats every control's rank 50 but
        # ranks nothing first: no evidence to test; M = 0 at rank 50 is matched by all 19
        # -> weak 2 of 4, memorized 0
        _pairs("p", "P106", [0.3, 0.1, 0.0, 0.0], [2, 60, 3, 50]),
    ])
    person = pd.DataFrame({"subject_qid": "Q1", "property": ["P27", "P106"], "M": [1.0, 0.0], "summed_truth_rank": [1, 40]})
    out = controls.compare_with_controls(person, ctl, probes).set_index("property")
    assert list(out["n_probes"]) == [4, 4]
    assert out.loc["P27", "fpr_memorized"] == 0.5 and out.loc["P27", "fpr_weak"] == 0
    assert out.loc["P106", "fpr_memorized"] == 0 and out.loc["P106", "fpr_weak"] == 0.5
    # the person's P106: M = 0 at rank 40 beats every control's rank 50 (p = 0.05), yet the model
    # ranks it first in no wording: no evidence (weakly associated needs M > 0)
    assert out.loc["P106", "verdict"] == NO_EVIDENCE and out.loc["P106", "p_value"] == pytest.approx(0.05)


def test_the_level_comes_from_m_and_the_p_value_from_the_compared_score():
    """`with_compared`: M (WikiMem's calibration) sets the level and the gate; M_compared and the
    compared summed rank (generic-subject calibration, as the controls are scored) set p."""
    ctl = _pairs("c", "P27", [0.0] * 18 + [0.6], [5] * 18 + [1])
    levels = pd.DataFrame({"subject_qid": "Q1", "property": ["P27", "P106"], "M": [0.9, 0.0],
                           "summed_truth_rank": [1, 7]})
    compared = pd.DataFrame({"subject_qid": "Q1", "property": ["P27", "P106"], "M": [0.5, 0.4],
                             "summed_truth_rank": [2, 3]})
    person = controls.with_compared(levels, compared)
    assert list(person["M"]) == [0.9, 0.0] and list(person["M_compared"]) == [0.5, 0.4]
    assert controls.facts_to_compare(levels) == ["P27"]
    out = controls.compare_with_controls(person, ctl).set_index("property")
    # P27 compared at 0.5: the control at 0.6 is more extreme -> p = 2/20, no evidence despite M = 0.9
    assert out.loc["P27", "controls_as_extreme"] == 1 and out.loc["P27", "p_value"] == pytest.approx(0.1)
    assert out.loc["P27", "verdict"] == NO_EVIDENCE and out.loc["P27", "M_compared"] == 0.5
    # with the compared M at 0.7 it beats all 19: memorized, the level read from M = 0.9
    person.loc[0, "M_compared"] = 0.7
    assert controls.compare_with_controls(person, ctl).set_index("property").loc["P27", "verdict"] == MEMORIZED


def test_ties_count_against_the_person():
    """A control with the same M and a rank at least as good is 'as extreme': p = (1 + k) / (1 + n)."""
    ctl = _pairs("c", "P27", [1.0] * 2 + [0.0] * 17, [1, 2] + [9] * 17)
    person = pd.DataFrame({"subject_qid": ["Q1"], "property": ["P27"], "M": [1.0], "summed_truth_rank": [1]})
    out = controls.compare_with_controls(person, ctl).iloc[0]
    assert out["controls_as_extreme"] == 1 and out["p_value"] == pytest.approx(2 / 20)
    assert out["verdict"] == NO_EVIDENCE
    with pytest.raises(ValueError, match="alpha"):
        controls.compare_with_controls(person, ctl, alpha=0)


def test_a_cohort_reads_each_person_against_their_own_controls_by_hand():
    """Two people with the same property and the same 19 control names (one name shape and
    origin): `of` keeps them apart. Q1 (M = 1.0) beats its controls (all M = 0); Q2 (M = 0.5)
    is matched by 3 of its own controls (M = 0.5, rank 1) -> p = 4/20. Read without `of`, Q1
    would count Q2's three controls as well (p = 4/20): the verdict would be wrong."""
    ctl1 = _pairs("c1-", "P27", [0.0] * 19, [5] * 19)
    ctl2 = _pairs("c2-", "P27", [0.5] * 3 + [0.0] * 16, [1] * 3 + [5] * 16)
    of = {**{q: "Q1" for q in ctl1["subject_qid"]}, **{q: "Q2" for q in ctl2["subject_qid"]}}
    person = pd.DataFrame({"subject_qid": ["Q1", "Q2"], "property": "P27", "M": [1.0, 0.5], "summed_truth_rank": [1, 1]})
    both = pd.concat([ctl1, ctl2], ignore_index=True)
    extreme = controls.as_extreme(person, both, of)
    assert int(extreme[:19].sum()) == 0 and int(extreme[19:].sum()) == 3
    out = controls.compare_with_controls(person, both, of=of).set_index("subject_qid")
    assert list(out["n_controls"]) == [19, 19]
    assert out.loc["Q1", "p_value"] == pytest.approx(1 / 20) and out.loc["Q1", "verdict"] == MEMORIZED
    assert out.loc["Q2", "controls_as_extreme"] == 3 and out.loc["Q2", "p_value"] == pytest.approx(4 / 20)
    assert out.loc["Q2", "verdict"] == NO_EVIDENCE
    mixed = controls.compare_with_controls(person[person["subject_qid"] == "Q1"], both).iloc[0]
    assert mixed["n_controls"] == 38 and mixed["controls_as_extreme"] == 0  # without `of`: every control counted


def test_control_rows_copy_the_persons_rows_under_each_name():
    """The person's canaries and candidates under each invented name: same wordings, truths and
    values; no aliases or look-alike names; per-person ids when people share names."""
    canaries = pd.DataFrame({
        "subject_qid": ["Q1", "Q1", "Q2"], "subject": ["Ada Lovelace", "Ada Lovelace", "Alan Turing"],
        "subject_aliases": [["Ada"], ["Ada"], []], "subject_similar": [["Ida Lovelace"], ["Ida Lovelace"], ["Alan Tuning"]],
        "property": ["P27", "P106", "P27"], "variant_id": [0, 0, 0], "template": ["{subject} was a citizen of {value}."] * 2 + ["x"],
    })
    candidates = pd.DataFrame({"subject_qid": ["Q1", "Q1", "Q2"], "property": "P27", "value": ["Q145", "Q30", "Q145"],
                               "is_true": [True, False, True]})
    names = {"Q1": ["Bo Kim", "Li Wu"], "Q2": ["Bo Kim"]}
    rows, values = controls.control_rows(canaries, candidates, names, per_person_ids=True)
    assert len(rows) == 2 * 2 + 1 and len(values) == 2 * 2 + 1
    assert set(rows.loc[rows["control_of"] == "Q1", "subject"]) == {"Bo Kim", "Li Wu"}
    assert list(rows.loc[rows["subject"] == "Li Wu", "control_rank"]) == [1, 1]
    bo = rows[rows["subject"] == "Bo Kim"]
    assert bo["subject_qid"].nunique() == 2  # the same name, two people: two ids
    assert (rows["subject_aliases"].map(len) == 0).all() and (rows["subject_similar"].map(len) == 0).all()
    assert list(rows.loc[rows["control_of"] == "Q1", "template"].unique()) == ["{subject} was a citizen of {value}."]
    assert controls.controls_of(rows) == dict(zip(rows["subject_qid"], rows["control_of"]))
    assert set(values.loc[values["control_of"] == "Q1", "value"]) == {"Q145", "Q30"}
    shared, _ = controls.control_rows(canaries, candidates, {"Q1": ["Bo Kim"]})
    assert set(shared["subject_qid"]) == {controls.control_id("Bo Kim")}  # a request: the same id in every request


def test_more_controls_for_a_fact_at_the_floor_by_hand():
    """19 controls all beaten: p = 1/20 = 0.05, at alpha with no room (one more as strong and
    p = 0.10); 39 beaten: p = 1/40, and 2/40 = 0.05 still holds. The extension doubles (2n + 1)
    up to the maximum."""
    assert controls.p_value(0, 19) == pytest.approx(0.05) and not controls.has_room(0, 19, 0.05)
    assert controls.has_room(0, 39, 0.05) and not controls.has_room(1, 39, 0.05) and controls.has_room(1, 79, 0.05)
    assert controls.extension_rounds(19, 99) == [39, 79, 99]
    assert controls.extension_rounds(19, 19) == [] and controls.extension_rounds(19, 10) == []


def test_the_p_values_interval_by_hand():
    """Clopper-Pearson: with k = 0 of n the upper end solves (1 - x)^n = 0.025; with k = n the lower
    end solves x^n = 0.025; k of n in between from the beta quantiles."""
    low, high = controls.p_interval(0, 19)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 19), abs=1e-9)
    low, high = controls.p_interval(19, 19)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 19), abs=1e-9)
    from scipy.stats import binom
    low, high = controls.p_interval(3, 39)
    assert binom.sf(2, 39, low) == pytest.approx(0.025, abs=1e-6)  # P(X >= 3 | low) = 2.5 %
    assert binom.cdf(3, 39, high) == pytest.approx(0.025, abs=1e-6)  # P(X <= 3 | high) = 2.5 %
    assert all(math.isnan(x) for x in controls.p_interval(0, 0))


def _lift_scores(subject: str, rows: list[tuple[int, str, bool, float, float]]) -> pd.DataFrame:
    """Score rows of one subject's fact P27: (wording, value, is_true, nll_h, nll_h0)."""
    return pd.DataFrame([{"subject_qid": subject, "property": "P27", "variant_id": w, "kind": "baseline" if w == 0 else
                          "paraphrase", "value": v, "is_true": t, "nll_h": h, "nll_h0": h0} for w, v, t, h, h0 in rows])


def test_a_names_lift_by_hand():
    """log P(G | h, C) - log P(G | h0, C) per wording, averaged: two values with NLLs (1, 2) under
    the name and (2, 1) under "this person" give ln(e^-1 / (e^-1 + e^-2)) - ln(e^-2 / (e^-1 + e^-2))
    = 1 nat in the first wording; equal NLLs everywhere in the second give 0; the mean is 0.5. A
    contextualized wording and values outside C do not count; a truth's form is the truth."""
    rows = [(0, "Q36", True, 1.0, 2.0), (0, "Q30", False, 2.0, 1.0),
            (1, "Q36", True, 5.0, 5.0), (1, "Q30", False, 5.0, 5.0),
            (1, "Q99", False, 0.0, 9.0)]  # outside C
    scores = _lift_scores("p", rows)
    context = _lift_scores("p", [(11, "Q36", True, 0.0, 9.0), (11, "Q30", False, 9.0, 0.0)]).assign(kind="contextualized")
    lifts = controls.name_lifts(pd.concat([scores, context]), {"P27": {"Q36", "Q30"}})
    assert lifts["lift"].iloc[0] == pytest.approx(0.5) and lifts["wordings"].iloc[0] == 2
    form = _lift_scores("p", [(0, "Q36", True, 3.0, 2.0), (0, "Q36#form:PL", False, 3.0, 2.0), (0, "Q30", False, 2.0, 1.0)])
    # G = {Q36, its form}: ln(2e^-3 / (2e^-3 + e^-2)) - ln(2e^-2 / (2e^-2 + e^-1))
    expected = (math.log(2 * math.exp(-3) / (2 * math.exp(-3) + math.exp(-2)))
                - math.log(2 * math.exp(-2) / (2 * math.exp(-2) + math.exp(-1))))
    assert controls.name_lifts(form)["lift"].iloc[0] == pytest.approx(expected)


def test_the_name_prior_among_the_controls_by_hand():
    """One wording, the truth and one other value, equal NLLs under the name and NLL(h0) = x for the
    truth: lift = ln(1/2) - ln(e^-x / (e^-x + 1)) = x + ln((1 + e^-x) / 2). With x chosen so that the
    kin keeping the first name lift 2 and 4 (mean 3), those keeping the surname 1 and 3 (mean 2), and
    the candidates 0, 1, 2, 3.5, 5 (median 2), the name prior is 3 + 2 - 2 = 3: of the controls
    lifting 0, 1, 2, 3.5 one is at least as high, p = 2/5, 3 of 4 below; of controls lifting 0, 1, 2,
    none, p = 1/4 — at alpha 0.25 the name alone explains the fact."""
    from scipy.optimize import brentq

    def x_for(lift):  # invert lift(x) = x + ln((1 + e^-x) / 2), increasing in x
        return brentq(lambda x: x + math.log((1 + math.exp(-x)) / 2) - lift, -50.0, 50.0)

    def one(subject, lift):
        return _lift_scores(subject, [(0, "Q36", True, 0.0, x_for(lift)), (0, "Q30", False, 0.0, 0.0)])

    kin = pd.concat([one(f"{controls.KIN_FIRST_PREFIX}a", 2), one(f"{controls.KIN_FIRST_PREFIX}b", 4),
                     one(f"{controls.KIN_LAST_PREFIX}a", 1), one(f"{controls.KIN_LAST_PREFIX}b", 3)])
    lifts = {"c0": 0, "c1": 1, "c2": 2, "c3": 3.5, "c4": 5}
    candidates = pd.concat([one(q, lift) for q, lift in lifts.items()])
    assert controls.name_lifts(candidates)["lift"].tolist() == pytest.approx(list(lifts.values()))
    person = one("p", 4.5)
    prior = controls.name_priors(person, kin, candidates, {"P27": ["c0", "c1", "c2", "c3"]}, alpha=0.05).iloc[0]
    assert prior["name_prior"] == pytest.approx(3.0) and prior["n_kin"] == 4 and prior["candidates_lift_median"] == pytest.approx(2)
    assert prior["name_prior_p"] == pytest.approx(0.4) and prior["name_prior_share_below"] == pytest.approx(0.75)
    assert not prior["name_suggests"] and prior["own_lift"] == pytest.approx(4.5) and prior["n_controls"] == 4
    prior = controls.name_priors(person, kin, candidates, {"P27": ["c0", "c1", "c2"]}, alpha=0.25).iloc[0]
    assert prior["name_prior_p"] == pytest.approx(0.25) and prior["name_suggests"] and prior["name_prior_backed"]
    # the same prior, unbacked (`name_prior_backing`: the person's own memory reaching their name's
    # words): measured and recorded the same, and it explains nothing
    unbacked = controls.name_priors(person, kin, candidates, {"P27": ["c0", "c1", "c2"]}, alpha=0.25,
                                    backed={"P27": False}).iloc[0]
    assert unbacked["name_prior_p"] == pytest.approx(0.25) and unbacked["name_prior"] == pytest.approx(3.0)
    assert not unbacked["name_prior_backed"] and not unbacked["name_suggests"]
    backed_elsewhere = controls.name_priors(person, kin, candidates, {"P27": ["c0", "c1", "c2"]}, alpha=0.25,
                                            backed={"P106": False}).iloc[0]
    assert backed_elsewhere["name_suggests"]  # a property the mapping does not name stays backed
    assert controls.name_priors(person, kin.iloc[:0], candidates, {"P27": ["c0"]}).empty  # no kin names: nothing measured
    # kin of one side only: their mean
    only_first = controls.name_lifts(kin[kin["subject_qid"].str.startswith(controls.KIN_FIRST_PREFIX)])
    assert controls.name_prior(only_first, 2.0) == pytest.approx(3.0)


def test_controls_matched_to_the_name_prior():
    """From candidates lifting 0..9 (median 4.5), 3 controls for a prior of 6.5: the candidates'
    quantiles 1.5, 4.5, 7.5 shifted by +2 are 3.5, 6.5, 9.5: the nearest untaken are 3 (or 4), 6 (or 7)
    and 9; then 2 more from those left, matched likewise. Seeded: the same order each time."""
    candidates = {f"c{i}": float(i) for i in range(10)}
    order = controls.matched_controls(candidates, 6.5, keep=5, first=3)
    assert len(order) == len(set(order)) == 5
    head = sorted(candidates[q] for q in order[:3])
    assert head[0] in (3.0, 4.0) and head[1] in (6.0, 7.0) and head[2] == 9.0
    assert order == controls.matched_controls(candidates, 6.5, keep=5, first=3)
    assert np.median([candidates[q] for q in controls.matched_controls(candidates, 4.5, 9, 9)]) == pytest.approx(4.0)
    assert controls._spread_order(8) == [0, 4, 2, 6, 1, 5, 3, 7]


def test_name_prior_backing_by_hand():
    """In a world whose names do not tell origin, a fact's name prior is backed only where another
    person sharing the first name or the surname holds the value: "Begoña Mai" (born Q1, citizen of
    Q2, employed by Q3) has namesakes Begoña Ruiz (born Q1) and Tomasz Mai (employer Q9); her own
    record does not count. Where names tell origin, or where the extract cannot say, every fact is backed."""
    humans = pd.DataFrame({"qid": ["Qp", "Qa", "Qb", "Qc"], "label": ["Begoña Mai", "Begoña Ruiz", "Tomasz Mai", "Ulla Berg"]})
    claims = pd.DataFrame([("Qp", "P19", "Q1"), ("Qp", "P27", "Q2"), ("Qp", "P108", "Q3"), ("Qa", "P19", "Q1"),
                           ("Qb", "P108", "Q9"), ("Qc", "P27", "Q2")], columns=["qid", "property", "value"])
    subject = humans.iloc[[0]].reset_index(drop=True)
    facts = claims[claims["qid"] == "Qp"]
    memo = {"world judged": True, "world follows origin": False}
    assert controls.name_prior_backing(subject, facts, humans, claims, memo=memo) == \
        {"P19": True, "P27": False, "P108": False}  # Ulla Berg is no namesake; Tomasz Mai's employer another
    # a facts file's requester (not in the extract) with the same name and facts: the same namesakes
    requester = subject.assign(qid="dsr-1")
    assert controls.name_prior_backing(requester, facts.assign(qid="dsr-1"), humans, claims, memo=memo)["P19"]
    assert controls.name_prior_backing(subject, facts, humans, claims, memo={"world judged": True, "world follows origin": True}) == \
        {"P19": True, "P27": True, "P108": True}
    # without a memo the world is judged, if it can be: no country of these four has lists, so it
    # cannot, and every prior is kept (the safe side for a private person)
    assert controls.name_prior_backing(subject, facts, humans, claims) == {"P19": True, "P27": True, "P108": True}
