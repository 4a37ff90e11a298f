"""A request in several languages (`subject_requests.languages`): the default languages, the
person's gender, the values in the language's labels, and on the planted model a request in
English and German whose English half is exactly the English-only request's and whose German half
is scored, judged and named apart."""

import pandas as pd
import pytest

from tests.fixtures.planted import Release
from wikimem_platform.canaries.languages import FEMALE, MALE
from wikimem_platform.canaries.languages.localize import LABEL_FALLBACK, language_labels, localize_values
from wikimem_platform.canaries.text import render
from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.reference import bundled
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer import compose_answer, release_outcomes
from wikimem_platform.subject_requests.audit import audit_person_on_releases, NOT_COVERED
from wikimem_platform.vocabulary import LANGUAGE
from wikimem_platform.subject_requests.languages import default_languages, person_gender, plan_request
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem.scoring import SentenceNllCache
from wikimem_platform.wikimem import controls as control_rules
from wikimem_platform.wikimem.typical_names import gender_anywhere

SETTINGS = {"dtype": "float32"}


@pytest.fixture(scope="module")
def sample_terms() -> pd.DataFrame:
    return read_dump(bundled.SAMPLE_DUMP).terms


def claims(*rows) -> pd.DataFrame:
    return pd.DataFrame([("Q1", p, "wikibase-item", v, label) for p, v, label in rows],
                        columns=["qid", "property", "datatype", "value", "value_label"])


def test_a_request_names_english_and_the_languages_of_the_persons_citizenship():
    assert default_languages(claims(("P27", "Q183", "Germany"))) == ["en", "de"]
    assert default_languages(claims(("P27", "Q39", "Switzerland"), ("P27", "Q36", "Poland"))) == ["en", "de", "fr", "pl"]
    assert default_languages(claims(("P27", "Q145", "United Kingdom"))) == ["en"]
    assert default_languages(claims(("P106", "Q36180", "writer"))) == ["en"]  # no citizenship: English


def test_the_persons_gender_comes_from_the_facts_else_from_the_first_name():
    assert person_gender(claims(("P21", FEMALE, "female")), "Jean Dupont") == FEMALE
    assert person_gender(claims(("P27", "Q142", "France")), "Jean Dupont") == MALE  # French lists: male
    assert person_gender(claims(), "Maria Kowalska") == FEMALE  # most countries' lists: female
    assert person_gender(claims(), "Laozi") is None


def test_values_in_german_agree_with_the_person_and_unlabelled_ones_fall_back_or_go(sample_terms):
    labels = language_labels(sample_terms, "de")
    facts = claims(("P106", "Q33999", "actor"), ("P27", "Q39", "Switzerland"), ("P19", "Q999999999", "Nowhere"))
    facts = pd.concat([facts, pd.DataFrame([("Q1", "P569", "time", "1952-03-01", "1 March 1952")], columns=facts.columns)])
    out = localize_values(facts, "de", labels, FEMALE)
    assert list(out["value_label"]) == ["Schauspielerin", "Schweiz", "Nowhere", "1. März 1952"]
    assert list(out[LABEL_FALLBACK]) == [False, False, True, False]
    pool = localize_values(facts, "de", labels, FEMALE, keep_unlabelled=False)
    assert "Nowhere" not in set(pool["value_label"])  # a counterfactual without a German label is left out
    # the French label "acteur ou actrice" is split by gender
    assert localize_values(facts.head(1), "fr", language_labels(sample_terms, "fr"), MALE)["value_label"].tolist() == ["acteur"]


def test_dates_at_every_precision_are_written_the_languages_way():
    """Day, month and year precision, as the extract writes them (`entities.format_time`); a
    decade or century stays as the English label (no pack writes those)."""
    dates = pd.DataFrame([("Q1", "P569", "time", v, lab) for v, lab in [
        ("1952-03-11", "11 March 1952"), ("1952-03", "March 1952"), ("1952", "1952"), ("-0500", "500 BC"),
        ("1950s", "1950s"), ("C19", "19th century")]], columns=["subject_qid", "property", "datatype", "value", "value_label"])
    written = {code: localize_values(dates, code, {}, None)["value_label"].tolist() for code in ("de", "fr", "pl")}
    assert written["de"] == ["11. März 1952", "März 1952", "1952", "500 v. Chr.", "1950s", "19th century"]
    assert written["fr"][:2] == ["11 mars 1952", "mars 1952"]
    assert written["pl"][:2] == ["11 marca 1952", "marzec 1952"]


@pytest.fixture(scope="module")
def planted_terms(sample_terms):
    """German labels of the planted world's values, as the bundled sample's terms give them (the
    planted world writes its facts with real occupations, places and countries)."""
    return sample_terms


@pytest.fixture(scope="module")
def two_languages(planted_model, planted_reference, planted_terms):
    qid = next(p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] == 16)
    subject, facts = planted_reference.person(qid)
    options = dict(property_table=planted_reference.table, templates=planted_reference.templates,
                   counterfactuals=planted_reference.pool, claims=planted_reference.extract.claims,
                   humans=planted_reference.extract.humans, metadata=planted_reference.metadata, n_controls=3)
    english = plan_request(subject, facts, ["en"], terms=planted_terms, **options)
    both = plan_request(subject, facts, ["en", "de"], terms=planted_terms, **options)
    return english, both


def test_the_english_half_is_the_english_request_and_the_german_half_is_german(two_languages):
    english, both = two_languages
    assert LANGUAGE not in english.canaries and english.languages == ["en"]
    assert both.languages == ["en", "de"]
    en = both.in_language("en")
    pd.testing.assert_frame_equal(en.canaries.drop(columns=[LANGUAGE, LABEL_FALLBACK]), english.canaries)
    pd.testing.assert_frame_equal(en.candidates.drop(columns=LANGUAGE), english.candidates)
    de = both.in_language("de")
    assert set(de.canaries["property"]) <= {"P106", "P19"} and len(de.canaries)
    # the planted countries: 8 of 11 have a German label, too few values to rank against
    coverage = de.coverage.set_index("property")
    if "P27" in coverage.index:
        assert coverage.loc["P27", "coverage"] == NOT_COVERED and "German label" in coverage.loc["P27", "reason"]
    name = english.subject["label"].iloc[0]
    gender = person_gender(english.facts, name)
    assert set(de.canaries["subject_generic"]) == {"diese Frau" if gender == FEMALE else "dieser Mann"}
    rendered = [render(t, h, "Rom") for t, h in zip(de.canaries["template"], de.canaries["subject"])]
    assert all("⟦" not in s and "{" not in s for s in rendered)
    other = MALE if gender == FEMALE else FEMALE
    controls = de.control_canaries  # 3 planned, more for a fact without margin: the candidates they are drawn from
    assert de.n_controls == 3 and de.max_controls == control_rules.MAX_CONTROLS
    assert controls["subject_qid"].nunique() == max(control_rules.POOL_FACTOR * 3, control_rules.MAX_CONTROLS)
    assert not any(gender_anywhere(n.split()[0]) == other for n in controls["subject"].unique())
    # the kin names that measure the name prior agree with the person's gender too
    kin = de.kin_canaries["subject"].unique()
    assert len(kin) == 2 * control_rules.KIN_PER_TOKEN and not any(gender_anywhere(n.split()[0]) == other for n in kin)


@pytest.mark.slow
def test_a_request_in_two_languages_is_answered_per_language(planted_model, two_languages, tmp_path):
    english, both = two_languages
    lm = load_model(str(planted_model), device="cpu")
    cache = SentenceNllCache(tmp_path / "cache.sqlite")
    run = lambda plan: audit_person_on_releases(  # noqa: E731
        [Release("planted@main")], lambda release: lm, plan, shards_for=lambda key: tmp_path / "shards",
        sentence_cache=lambda model: cache, settings=SETTINGS, label="dsr-1", log=lambda m: None)
    alone, result = run(english), run(both)
    assert set(result.scores[LANGUAGE]) == {"en", "de"}
    pd.testing.assert_frame_equal(  # the English half from the shards and cache: the same scores
        result.scores[result.scores[LANGUAGE] == "en"].drop(columns=LANGUAGE).reset_index(drop=True), alone.scores)
    entries = {"planted@main": Release("planted@main")}
    request = intake.SubjectRequest(id="dsr-1", kind="erasure", subject_key=english.subject["qid"].iloc[0],
                                    subject_qid=english.subject["qid"].iloc[0], subject_label=english.subject["label"].iloc[0],
                                    received_at=pd.Timestamp("2026-11-01", tz="UTC"), due_at=pd.Timestamp("2026-12-01", tz="UTC"))
    labels = dict(zip(english.canaries["property"], english.canaries["property_label"]))
    [alone_outcome] = release_outcomes(alone.audits, alone.scores, alone.completions, alone.control_scores, entries)
    [outcome] = release_outcomes(result.audits, result.scores, result.completions, result.control_scores, entries)
    only_en, _ = compose_answer(request, english, [alone_outcome], labels, {})
    document, table = compose_answer(request, both, [outcome], labels, {}, letter_language="de")
    assert document["languages"] == ["en", "de"] and document["letter_language"] == "de"
    facts = document["models"][0]["facts"]
    assert {(f["property"], f[LANGUAGE]) for f in facts} == {
        *((p, "en") for p in set(english.canaries["property"])), *((p, "de") for p in set(both.in_language("de").canaries["property"]))}
    # English verdicts unchanged by the German half; every German fact says its language
    before = {f["property"]: (f["verdict"], f["M"]) for f in only_en["models"][0]["facts"]}
    assert {f["property"]: (f["verdict"], f["M"]) for f in facts if f[LANGUAGE] == "en"} == before
    assert all(f["sentence"].startswith("Asked in German: ") for f in facts if f[LANGUAGE] == "de")
    assert set(table[LANGUAGE]) == {"en", "de"}
    # the answer's check: one row per (release, fact, language); per (release, fact) alone it fails
    from expectations.gx import check_result
    from expectations.requests import answer_suite

    columns = ["model", "property", "verdict", "M", "n_candidates", LANGUAGE]
    assert check_result(table[columns], "request_answer", answer_suite(languages=True)).passed
    assert not check_result(table[columns[:-1]], "request_answer", answer_suite()).passed
    # the forget set: each language's facts the model ranks first somewhere, named by language
    forget = {(e["property"], e[LANGUAGE]) for e in document["forget_set"]}
    assert forget == {(f["property"], f[LANGUAGE]) for f in facts if f["M"] > 0}


def test_a_german_plan_says_why_a_fact_is_not_covered_in_german(sample_terms):
    """Emily Ruete (Q438662) in German on the bundled sample: German names and labels, a
    contextualized wording in German, and per property not covered the reason — no German
    templates (a property outside the 32), or not among the audited properties, as in English."""
    from wikimem_platform.reference.counterfactuals import draw_counterfactuals
    from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
    from wikimem_platform.subject_requests.reference import property_metadata

    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = property_metadata()
    studied = ["P106", "P27", "P19", "P20"]
    table = build_property_table(extract.claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    table = table[table["property"].isin(studied)]
    pool = draw_counterfactuals(extract.claims, extract.humans, studied, per_property=60, seed=0)
    subject = extract.humans[extract.humans["qid"] == "Q438662"][["qid", "label", "aliases", "description"]]
    facts = extract.claims[extract.claims["qid"] == "Q438662"]
    facts = pd.concat([facts, pd.DataFrame([("Q438662", "P1477", "string", "Sayyida Salme", "Sayyida Salme")],
                                           columns=facts.columns)], ignore_index=True)
    plan = plan_request(subject.reset_index(drop=True), facts, ["de"], terms=sample_terms, property_table=table,
                        templates=pd.DataFrame(), counterfactuals=pool, claims=extract.claims,
                        humans=extract.humans, metadata=metadata)
    coverage = plan.coverage.set_index("property")
    assert set(coverage.index[coverage["coverage"] == "audited"]) == set(studied)
    assert coverage.loc["P1477", "reason"] == "no German templates for it"
    assert coverage.loc["P569", "reason"] == "not among the audited properties"  # a template, not in the table
    context = plan.canaries[plan.canaries["kind"] == "contextualized"]
    rendered = {p: render(t, h, truths[0]) for p, t, h, truths in
                zip(context["property"], context["template"], context["subject"], context["ground_truth_labels"])}
    assert rendered["P19"].startswith("Emily Ruete ") and rendered["P19"].endswith("Sie wurde auf Sansibar geboren.")
    assert "Sie starb in Jena." in rendered["P27"] and rendered["P27"].endswith("Sie ist Staatsbürgerin von Deutschland.")


def test_a_fact_a_served_model_said_in_german_enters_the_forget_set_in_german():
    """Generation access (`said_forget_set`): a fact said in German and in English gives two
    entries, each naming its language and the true value's label in it — never the English label
    under the German entry."""
    from wikimem_platform.subject_requests.answer import said_forget_set
    from wikimem_platform.subject_requests.audit import PersonPlan

    subject = pd.DataFrame({"qid": ["Q438662"], "label": ["Emily Ruete"]})
    candidates = pd.DataFrame(
        [("P106", "Q36180", "writer", True, "en"), ("P106", "Q37226", "teacher", True, "en"),
         ("P106", "Q36180", "Schriftstellerin", True, "de"), ("P106", "Q37226", "Lehrerin", True, "de"),
         ("P106", "Q1028181", "Malerin", False, "de")],
        columns=["property", "value", "value_label", "is_true", LANGUAGE])
    plan = PersonPlan(subject, pd.DataFrame(), pd.DataFrame(), candidates, pd.DataFrame())
    table = pd.DataFrame([
        {"property": "P106", "property_label": "occupation", "wordings_said": 2, "n_controls": None, "p_value": None,
         "control_alpha": None, "verdict": "said", "cue": 0.1, "cue_flag": False, LANGUAGE: "en",
         "completion": {"output": "a teacher in Hamburg"}},
        {"property": "P106", "property_label": "occupation", "wordings_said": 1, "n_controls": None, "p_value": None,
         "control_alpha": None, "verdict": "said", "cue": 0.1, "cue_flag": False, LANGUAGE: "de",
         "completion": {"output": "eine Dichterin aus Sansibar"}}])  # names no true value: the first German one
    entries = said_forget_set("m@1", table, plan)
    assert list(zip(entries[LANGUAGE], entries["value_label"])) == [("en", "teacher"), ("de", "Schriftstellerin")]
    assert list(said_forget_set("m@1", table.drop(columns=LANGUAGE).head(1), plan.__class__(
        subject, pd.DataFrame(), pd.DataFrame(), candidates[candidates[LANGUAGE] == "en"].drop(columns=LANGUAGE),
        pd.DataFrame())).columns) == [c for c in entries.columns if c != LANGUAGE]  # English only: no language column
