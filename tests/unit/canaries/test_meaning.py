"""The meaning-preservation filter of canary paraphrases (issue 17, item 4) on real property records.

Models and template builds are shared per session (tests/fixtures/canaries.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.canaries import SAMPLE_PERSON_PROPERTIES, property_table_for
from wikimem_platform.canaries import (
    baseline_template,
    build_template_tables,
    DROPPED_COLUMNS,
    filter_paraphrases,
    filter_pools,
    MIN_MEANING_SIMILARITY,
    normalize_sentence,
    PropertyInfo,
)
from wikimem_platform.canaries.meaning import (
    disjunctions,
    qualified_noun,
    QualifiedNoun,
    RELATION_CHANGING_WORDS,
    RULES,
    TENSELESS_PAST_LEMMAS,
)
from wikimem_platform.canaries.text import render_neutral

pytestmark = pytest.mark.slow


MADE_UP = {
    "P0": (PropertyInfo("P0", "tea or coffee", "what the subject drinks in the morning"), "{subject}'s tea or coffee is {value}."),
    "P102": (PropertyInfo("P102", "member of political party"), "{subject} is a member of the political party {value}."),
}
# Every hand-made case of this module: (property, candidates). One filter run judges them all
# (one spaCy batch, one encoder batch), the tests read their verdicts.
CASES = {
    "issue P69": ("P69", [
        "The faculty of {subject} was {value}.", "{subject} is a person who graduated from {value}.",
        "{subject} is a person who was educated at {value}.", "According to public records, {subject} studied at {value}.",
        "The person named {subject} attended {value}.",
    ]),
    "issue P39": ("P39", [
        "{value} happens to be {subject}'s political seat.", "{subject} occupies the position {value}.",
        "Records show that {subject} holds the position {value}.",
    ]),
    "issue P1412": ("P1412", [
        "{subject} is a person who writes the language {value}.",
        "According to public records, {subject} signs the language {value}.",
        "Records show that {subject} speaks the language {value}.",
        "The person named {subject} speaks, writes or signs the language {value}.",
        "{subject} uses the language {value}.", "{subject}'s language is {value}.",
    ]),
    "tense P106": ("P106", ["{subject}'s occupation was {value}.", "The occupation of {subject} is {value}."]),
    "tense P26": ("P26", ["{subject} married {value}.", "{subject} is married to {value}."]),
    "tense P19": ("P19", ["{subject} was born in {value}."]),
    "tense P20": ("P20", ["{subject} died in {value}."]),
    "tense P69": ("P69", [
        "{subject} is educated at {value}.", "{subject} attends the school {value}.",
        "{subject} has {value} as their education.", "It is known that {subject} was educated at {value}.",
    ]),
    "disjunction P21": ("P21", [
        "{subject}'s gender is {value}.", "{subject} has {value} as their sex.", "The sex or gender of {subject} is {value}.",
    ]),
    "disjunction P1303": ("P1303", ["{subject} plays the instrument {value}.", "{subject}'s musical instrument is {value}."]),
    "disjunction made up": ("P0", ["{subject}'s tea is {value}.", "{subject}'s tea or coffee is known to be {value}."]),
    "word P166": ("P166", [
        "{subject} has awarded the prize {value}.", "{subject} has {value} as their medal.",
        "{subject} has received the prize {value}.",
    ]),
    "word P22": ("P22", ["{value} is {subject}'s parent.", "{subject} is a child of {value}.", "{value} is the father of {subject}."]),
    "word P509": ("P509", ["{subject}'s method of murder is {value}."]),
    "word in label": ("P102", ["{subject} is someone who is a member of the political party {value}."]),
    "qualifier P735": ("P735", [
        "{subject}'s name is {value}.", "{subject}'s first name is {value}.", "The given name of {subject} is {value}.",
    ]),
    "qualifier P101": ("P101", ["The field of {subject} is {value}.", "The field of work of {subject} is {value}."]),
    "qualifier P1971": ("P1971", ["The number of kids of {subject} is {value}."]),
}


@pytest.fixture(scope="module")
def verdicts(canary_nlp, canary_encoder, canary_property_records) -> dict[str, dict[str, str]]:
    """Per case: {template: the rule that dropped it, or "kept"}, against the real baseline."""
    items = []
    for pid, candidates in CASES.values():
        prop, baseline = MADE_UP.get(pid, (canary_property_records.get(pid), None))
        items.append((baseline or baseline_template(prop, canary_nlp)[0], prop, candidates))
    out = {}
    for name, result in zip(CASES, filter_pools(items, canary_nlp, canary_encoder)):
        out[name] = {t: "kept" for t in result.kept} | {d.template: d.rule for d in result.dropped}
        assert set(out[name]) == set(CASES[name][1])
    return out


# --- the issue's examples and known-good wordings ---------------------------------------------


def test_the_issue_examples_are_dropped_and_faithful_wordings_kept(verdicts):
    assert verdicts["issue P69"] == {
        "The faculty of {subject} was {value}.": "relation_word",
        "{subject} is a person who graduated from {value}.": "relation_word",
        "{subject} is a person who was educated at {value}.": "kept",
        "According to public records, {subject} studied at {value}.": "kept",
        "The person named {subject} attended {value}.": "kept",
    }
    assert verdicts["issue P39"] == {
        "{value} happens to be {subject}'s political seat.": "relation_word",
        "{subject} occupies the position {value}.": "kept",
        "Records show that {subject} holds the position {value}.": "kept",
    }
    assert verdicts["issue P1412"] == {
        "{subject} is a person who writes the language {value}.": "disjunction",
        "According to public records, {subject} signs the language {value}.": "disjunction",
        "Records show that {subject} speaks the language {value}.": "disjunction",
        "The person named {subject} speaks, writes or signs the language {value}.": "kept",
        "{subject} uses the language {value}.": "kept",  # keeps none of the verbs: broader, not narrower
        "{subject}'s language is {value}.": "kept",
    }


def test_dropped_paraphrases_carry_a_readable_reason(canary_nlp, canary_encoder, canary_property_records):
    prop = canary_property_records["P1412"]
    baseline = "{subject} speaks, writes or signs the language {value}."
    result = filter_paraphrases(
        baseline, prop, ["{subject} is a person who writes the language {value}."], nlp=canary_nlp, encode=canary_encoder
    )
    (dropped,) = result.dropped
    assert dropped.detail == "keeps only 'writes' of 'speaks, writes or signs'"
    assert result.kept == []


# --- one rule at a time, hand-made cases ------------------------------------------------------


def test_tense_rule(verdicts):
    # a present baseline: the past dates the fact ("was" = no longer), except events past in any life
    assert verdicts["tense P106"] == {
        "{subject}'s occupation was {value}.": "tense", "The occupation of {subject} is {value}.": "kept",
    }
    assert verdicts["tense P26"] == {"{subject} married {value}.": "tense", "{subject} is married to {value}.": "kept"}
    assert verdicts["tense P19"] == {"{subject} was born in {value}.": "kept"}
    assert verdicts["tense P20"] == {"{subject} died in {value}.": "kept"}
    assert {"bear", "die", "educate"} <= TENSELESS_PAST_LEMMAS
    # a past baseline ("was educated at"): a relation verb in the present makes a current student
    assert verdicts["tense P69"] == {
        "{subject} is educated at {value}.": "tense", "{subject} attends the school {value}.": "tense",
        "{subject} has {value} as their education.": "kept", "It is known that {subject} was educated at {value}.": "kept",
    }


def test_disjunctions_are_read_from_label_and_description(canary_nlp, canary_property_records):
    def groups(text, **kw):
        return disjunctions([_token(t) for t in canary_nlp(text)], **kw)

    assert groups("languages spoken, written or signed") == [("speak", "write", "sign")]
    assert groups("sex or gender") == [("sex", "gender")]
    records = canary_property_records
    assert groups(records["P1303"].description, verbal_only=True) == [("play", "teach", "use")]
    assert groups(records["P108"].description, verbal_only=True) == []  # "works or worked": one verb
    assert groups(records["P39"].description, verbal_only=True) == []  # "currently or formerly": no verb
    assert groups("place of birth") == []


def _token(t):
    from wikimem_platform.canaries.meaning import Token

    return Token(t.text, t.tag_, t.lemma_.lower())


def test_disjunction_rule(verdicts):
    assert verdicts["disjunction P21"] == {
        "{subject}'s gender is {value}.": "disjunction", "{subject} has {value} as their sex.": "disjunction",
        "The sex or gender of {subject} is {value}.": "kept",
    }
    # a description's verbs: an instrument "plays or teaches or used" -> "plays" alone narrows
    assert verdicts["disjunction P1303"] == {
        "{subject} plays the instrument {value}.": "disjunction", "{subject}'s musical instrument is {value}.": "kept",
    }
    # a made-up property "tea or coffee": the rule needs no list of properties
    assert verdicts["disjunction made up"] == {
        "{subject}'s tea is {value}.": "disjunction", "{subject}'s tea or coffee is known to be {value}.": "kept",
    }


def test_relation_word_rule(verdicts):
    assert verdicts["word P166"] == {
        "{subject} has awarded the prize {value}.": "relation_word",  # the subject gives the prize
        "{subject} has {value} as their medal.": "relation_word",
        "{subject} has received the prize {value}.": "kept",
    }
    assert verdicts["word P22"] == {
        "{value} is {subject}'s parent.": "relation_word", "{subject} is a child of {value}.": "relation_word",
        "{value} is the father of {subject}.": "kept",
    }
    assert verdicts["word P509"] == {"{subject}'s method of murder is {value}.": "relation_word"}
    # a listed word that the label itself has ("member of political party") changes nothing
    assert verdicts["word in label"] == {"{subject} is someone who is a member of the political party {value}.": "kept"}
    assert all(reason and word == word.lower() for word, reason in RELATION_CHANGING_WORDS.items())


def test_dropped_qualifier_rule(verdicts):
    assert qualified_noun("{subject}'s given name is {value}.") == QualifiedNoun("name", ("given",), before=True)
    assert qualified_noun("{subject}'s field of work is {value}.") == QualifiedNoun("field", ("of", "work"), before=False)
    assert qualified_noun("{subject}'s occupation is {value}.") is None
    assert qualified_noun("{subject} was educated at {value}.") is None
    assert verdicts["qualifier P735"] == {
        "{subject}'s name is {value}.": "dropped_qualifier", "{subject}'s first name is {value}.": "kept",
        "The given name of {subject} is {value}.": "kept",
    }
    assert verdicts["qualifier P101"] == {
        "The field of {subject} is {value}.": "dropped_qualifier", "The field of work of {subject} is {value}.": "kept",
    }
    # "number of kids" keeps an "of" phrase of its own: a synonym, not a bare head
    assert verdicts["qualifier P1971"] == {"The number of kids of {subject} is {value}.": "kept"}


def test_similarity_rule_is_the_cosine_of_neutral_renderings(canary_nlp, canary_encoder, canary_property_records):
    prop = canary_property_records["P101"]
    baseline, trade = "{subject}'s field of work is {value}.", "{value} is {subject}'s trade."
    result = filter_paraphrases(baseline, prop, [trade], nlp=canary_nlp, encode=canary_encoder)
    # by hand: both sentences with the neutral fillers, unit vectors, dot product
    a, b = canary_encoder([render_neutral(baseline), render_neutral(trade)])
    assert render_neutral(trade) == "X is Alex Smith's trade."
    expected = float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))
    (dropped,) = result.dropped
    assert dropped.rule == "similarity" and dropped.similarity == pytest.approx(expected, abs=1e-6)
    assert expected < MIN_MEANING_SIMILARITY
    assert dropped.detail == f"cosine {expected:.3f} < {MIN_MEANING_SIMILARITY:.2f} to the baseline"
    loose = filter_paraphrases(baseline, prop, [trade], nlp=canary_nlp, encode=canary_encoder, min_similarity=0.0)
    assert loose.kept == [trade]
    with pytest.raises(ValueError, match="min_similarity must lie in"):
        filter_paraphrases(baseline, prop, [trade], nlp=canary_nlp, encode=canary_encoder, min_similarity=1.5)


# --- the filter inside the template build -----------------------------------------------------


def test_every_kept_paraphrase_of_every_property_passes_every_rule(canary_person_build, canary_nlp):
    templates, dropped, encoder = canary_person_build.templates, canary_person_build.dropped, canary_person_build.encoder
    assert list(dropped.columns) == DROPPED_COLUMNS
    assert set(templates["property"]) == set(SAMPLE_PERSON_PROPERTIES)
    records = {p.property: p for p in map(PropertyInfo.from_record, property_table_for(SAMPLE_PERSON_PROPERTIES).to_dict("records"))}
    for pid, group in templates.groupby("property"):
        baseline = group.loc[group["kind"] == "baseline", "template"].iloc[0]
        paraphrases = group.loc[group["kind"] == "paraphrase", "template"].tolist()
        assert len(paraphrases) == 10, pid
        # every rule, not just the first failing one: none of them objects to a kept wording
        again = filter_paraphrases(baseline, records[pid], paraphrases, nlp=canary_nlp, encode=encoder)
        assert again.kept == paraphrases, (pid, again.dropped)
        # and the same judged by plain text, independently of the tagger
        words = [set(normalize_sentence(t).split()) for t in paraphrases]
        allowed = set(normalize_sentence(baseline).split()) | set(normalize_sentence(records[pid].label).split())
        changing = {word for word in RELATION_CHANGING_WORDS if " " not in word} - allowed
        for template, sentence_words in zip(paraphrases, words):
            assert not changing & sentence_words, template
            if " was " not in baseline:  # a present baseline: no past tense but of birth and death
                past = {"was", "were", "held", "spoke", "wrote", "worked", "resided", "lived"} & sentence_words
                assert not past or {"born", "died"} & sentence_words, template
        assert group.loc[group["kind"] == "paraphrase", "similarity"].ge(MIN_MEANING_SIMILARITY).all(), pid
    verbs = {"speaks", "writes", "signs", "speak", "write", "sign"}
    for template in templates.loc[templates["property"] == "P1412", "template"]:
        present = verbs & set(normalize_sentence(template).split())
        assert len(present) in (0, 3), template  # all three verbs or none
    for template in templates.loc[templates["property"] == "P21", "template"]:
        present = {"sex", "gender"} & set(normalize_sentence(template).split())
        assert len(present) in (0, 2), template


def test_the_build_reports_what_it_dropped_and_still_keeps_ten(canary_person_build):
    dropped = canary_person_build.dropped
    reasons = dropped.set_index(["property", "template"])["rule"]
    # the issue's wordings were in the pools and were dropped there, with their rule
    assert reasons[("P69", "The faculty of {subject} was {value}.")] == "relation_word"
    assert reasons[("P69", "{subject} is a person who graduated from {value}.")] == "relation_word"
    assert reasons[("P39", "{value} happens to be {subject}'s political seat.")] == "relation_word"
    assert reasons[("P1412", "{subject} is a person who writes the language {value}.")] == "disjunction"
    assert reasons[("P1412", "According to public records, {subject} signs the language {value}.")] == "disjunction"
    counts = dropped.groupby("rule").size()
    assert set(counts.index) == set(RULES)  # every rule removed something from these pools
    assert dropped["detail"].str.len().gt(10).all()


class _MostlyPast:
    """Twelve candidates of which only five state the fact in the baseline's tense."""

    def candidates(self, template: str, prop: PropertyInfo) -> list[str]:
        past = [f"Fact {i}: the occupation of {{subject}} was {{value}}." for i in range(7)]
        present = [f"Fact {i}: the occupation of {{subject}} is {{value}}." for i in range(7, 12)]
        return past + present


def test_too_few_faithful_candidates_raise_with_the_reasons(canary_nlp, canary_encoder):
    with pytest.raises(ValueError, match=r"12 distinct paraphrase candidates, 5 of them stating the same relation.*'tense': 7"):
        build_template_tables(property_table_for(["P106"]), generator=_MostlyPast(), nlp=canary_nlp, encode=canary_encoder)
    # without the filter the same pool fills ten wordings, past tense included
    templates, dropped = build_template_tables(
        property_table_for(["P106"]), generator=_MostlyPast(), nlp=canary_nlp, encode=canary_encoder, filter_meaning=False
    )
    assert len(templates) == 11 and dropped.empty and isinstance(dropped, pd.DataFrame)
