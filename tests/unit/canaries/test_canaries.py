"""Canary templates, paraphrase ranking and the canary table on real property records.

Models (spaCy, MiniLM) and the templates table are built once per session
(tests/fixtures/canaries.py).
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from tests.fixtures.canaries import ACCEPTANCE_PROPERTIES, SAMPLE_PERSON_PROPERTIES, property_table_for
from wikimem_platform.canaries import (
    baseline_template,
    build_canaries,
    build_templates,
    count_placeholders,
    normalize_sentence,
    ParaphraseGenerator,
    PropertyInfo,
    rank_pools,
    render,
    RuleBasedParaphraser,
)
from wikimem_platform.canaries.build import CANARY_COLUMNS, TEMPLATE_COLUMNS
from wikimem_platform.canaries.templates import baseline_form

pytestmark = pytest.mark.slow


# --- 1. baselines -----------------------------------------------------------------------------


def test_baselines_of_the_three_kinds_on_real_labels(canary_nlp, canary_property_records):
    expected = {
        "P106": ("{subject}'s occupation is {value}.", "possessive"),
        "P19": ("{subject}'s place of birth is {value}.", "possessive"),
        "P27": ("{subject}'s country of citizenship is {value}.", "possessive"),
        "P21": ("{subject}'s sex or gender is {value}.", "possessive"),
        "P108": ("{subject}'s employer is {value}.", "possessive"),
        "P26": ("{subject}'s spouse is {value}.", "possessive"),
        "P69": ("{subject} was educated at {value}.", "copular"),
        "P1412": ("{subject} speaks, writes or signs the language {value}.", "transitive"),
    }
    got = {pid: baseline_template(canary_property_records[pid], canary_nlp) for pid in ACCEPTANCE_PROPERTIES}
    assert got == expected
    more = {pid: baseline_template(canary_property_records[pid], canary_nlp) for pid in ("P463", "P39", "P166")}
    assert more == {
        "P463": ("{subject} is a member of {value}.", "copular"),
        "P39": ("{subject} holds the position {value}.", "transitive"),
        "P166": ("{subject} has received the award {value}.", "transitive"),
    }


def test_badly_parsing_labels_fall_back_grammatically(canary_nlp, canary_property_records):
    # a slash in the label: an alias that parses cleanly is used instead
    template, shape = baseline_template(canary_property_records["P413"], canary_nlp)
    assert shape == "possessive" and template in {
        "{subject}'s speciality is {value}.", "{subject}'s player position is {value}.",
        "{subject}'s fielding position is {value}.", "{subject}'s specialism is {value}.",
    }
    # nothing parses: the quoted label as a noun
    bare = PropertyInfo("P9999", "work period (start)", datatype="time")
    assert baseline_template(bare, canary_nlp) == ('{subject}\'s "work period (start)" is {value}.', "fallback")
    # a label that the tagger reads as a verb on its own ("sibling/VBG") is still a noun
    assert baseline_template(canary_property_records["P3373"], canary_nlp)[0] == "{subject}'s sibling is {value}."


def test_context_forms_use_they(canary_nlp, canary_property_records):
    forms = {pid: baseline_form(canary_property_records[pid], canary_nlp).context_form for pid in ("P106", "P69", "P1412")}
    assert forms == {
        "P106": "Their occupation is {value}.",
        "P69": "They were educated at {value}.",
        "P1412": "They speak, write or sign the language {value}.",
    }


# --- 2. paraphrases ---------------------------------------------------------------------------


def test_templates_table_has_a_baseline_and_ten_distinct_paraphrases(canary_templates):
    table = canary_templates
    assert list(table.columns) == TEMPLATE_COLUMNS
    acceptance = table[table["property"].isin(ACCEPTANCE_PROPERTIES)]
    assert set(acceptance["property"]) == set(ACCEPTANCE_PROPERTIES)
    for pid, group in table.groupby("property"):
        assert list(group["variant_id"]) == list(range(11)), pid
        assert list(group["kind"]) == ["baseline"] + ["paraphrase"] * 10, pid
        assert all(count_placeholders(t) == (1, 1) for t in group["template"]), pid
        assert group["template"].map(normalize_sentence).nunique() == 11, pid
    shapes = set(acceptance.loc[acceptance["kind"] == "baseline", "shape"])
    assert shapes == {"possessive", "copular", "transitive"}


def test_paraphrases_do_not_break_on_dates_or_quantities(canary_templates):
    dates = canary_templates[canary_templates["property"].isin(["P569", "P570"])]["template"]
    for template in dates:  # values are "26 May 1908", "May 1908" or "1908"
        assert not any(f" {p} {{value}}" in template for p in ("on", "in", "at")), template
        assert "year" not in template, template
    children = canary_templates[canary_templates["property"] == "P1971"]["template"]
    assert all("number" in t for t in children)  # never "{subject}'s children is 3"


def test_pool_is_large_and_built_from_label_aliases_and_shapes(canary_nlp, canary_property_records):
    generator = RuleBasedParaphraser(canary_nlp)
    assert isinstance(generator, ParaphraseGenerator)
    for pid in ACCEPTANCE_PROPERTIES:
        prop = canary_property_records[pid]
        template, _ = baseline_template(prop, canary_nlp)
        pool = {normalize_sentence(c) for c in generator.candidates(template, prop)}
        assert len(pool) >= 30, pid
    occupation = generator.candidates("{subject}'s occupation is {value}.", canary_property_records["P106"])
    assert "{subject}'s profession is {value}." in occupation  # an alias
    assert "What is {subject}'s occupation? It is {value}." in occupation  # question-answer
    assert "{value} is {subject}'s occupation." in occupation  # value first
    assert "{subject} is a person whose occupation is {value}." in occupation  # relative clause
    assert "{value} is known as {subject}'s occupation." in occupation  # "known as"
    assert not any("{subject}'s craft" in c or "{subject}'s employ " in c for c in occupation)
    spouse = generator.candidates("{subject}'s spouse is {value}.", canary_property_records["P26"])
    assert "Who is {subject}'s spouse? It is {value}." in spouse
    assert not any("husband" in c for c in spouse)  # gendered aliases change the meaning


def test_ranking_keeps_diverse_paraphrases_and_the_closest_first(
    canary_nlp, canary_encoder, canary_property_records
):
    generator = RuleBasedParaphraser(canary_nlp)
    items = []
    for pid in ACCEPTANCE_PROPERTIES:
        prop = canary_property_records[pid]
        template, _ = baseline_template(prop, canary_nlp)
        items.append((template, generator.candidates(template, prop), prop.datatype))
    ranked = rank_pools(items, canary_encoder, canary_nlp)
    diversity_gain = []
    for pid, result in zip(ACCEPTANCE_PROPERTIES, ranked):
        kept = result.paraphrases
        assert len(kept) == 10, pid
        normalized = [normalize_sentence(t) for t in kept]
        assert len(set(normalized)) == 10, pid
        assert normalize_sentence(result.baseline) not in normalized, pid
        assert result.kept[0] == int(np.argmax(result.relevance)), pid  # the closest meaning first
        # diversity: fewer shared words among the kept than among the 10 most similar
        by_relevance = np.argsort(-result.relevance, kind="stable")[:10]
        diversity_gain.append(_mean_word_jaccard([result.pool[i] for i in by_relevance]) - _mean_word_jaccard(kept))
    assert min(diversity_gain) >= 0 and np.mean(diversity_gain) > 0.05, diversity_gain


def _mean_word_jaccard(templates: list[str]) -> float:
    words = [set(normalize_sentence(t).split()) for t in templates]
    pairs = [len(a & b) / len(a | b) for i, a in enumerate(words) for b in words[i + 1 :]]
    return float(np.mean(pairs))


class _FixedGenerator:
    """A stand-in for a model-based paraphraser."""

    def candidates(self, template: str, prop: PropertyInfo) -> list[str]:
        noun = prop.label
        return [f"Fact {i}: the {noun} of {{subject}} is {{value}}." for i in range(12)]


def test_a_generator_plugs_in(canary_nlp, canary_encoder):
    table = build_templates(
        property_table_for(["P106"]), generator=_FixedGenerator(), nlp=canary_nlp, encode=canary_encoder
    )
    paraphrases = table[table["kind"] == "paraphrase"]["template"]
    assert len(paraphrases) == 10 and all(t.startswith("Fact ") for t in paraphrases)
    with pytest.raises(ValueError, match="distinct paraphrase candidates"):
        build_templates(
            property_table_for(["P106"]), generator=type("Few", (), {"candidates": lambda s, t, p: [t]})(),
            nlp=canary_nlp, encode=canary_encoder,
        )


def test_paraphrase_generation_for_25_properties_is_fast(canary_person_build):
    templates, elapsed = canary_person_build.templates, canary_person_build.seconds  # a fresh encoder
    print(f"\nparaphrases for {len(SAMPLE_PERSON_PROPERTIES)} properties: {elapsed:.1f} s (models already loaded)")
    assert set(templates["property"]) == set(SAMPLE_PERSON_PROPERTIES)
    assert templates.groupby("property").size().eq(11).all()
    assert elapsed < 120


# --- 3-5. the canary table --------------------------------------------------------------------

# Real facts (Wikidata) of two people, plus traps: Einstein's residence equals a target value.
SUBJECTS = pd.DataFrame(
    [
        {"qid": "Q937", "label": "Albert Einstein", "aliases": ["Einstein"]},
        {"qid": "Q42", "label": "Douglas Adams", "aliases": ["Douglas Noël Adams"]},
        {"qid": "Q999", "label": "Nobody Withfacts", "aliases": []},
    ]
)
CLAIMS = pd.DataFrame(
    [
        ("Q937", "P106", "wikibase-item", "Q169470", "physicist"),
        ("Q937", "P106", "wikibase-item", "Q16389557", "philosopher of science"),
        ("Q937", "P27", "wikibase-item", "Q183", "Germany"),
        ("Q937", "P27", "wikibase-item", "Q39", "Switzerland"),
        ("Q937", "P19", "wikibase-item", "Q3012", "Ulm"),
        ("Q937", "P20", "wikibase-item", "Q138518", "Princeton"),
        ("Q937", "P551", "wikibase-item", "Q138518", "Princeton"),
        ("Q937", "P569", "time", "1879-03-14", "14 March 1879"),
        ("Q937", "P570", "time", "1955-04-18", "18 April 1955"),
        ("Q937", "P69", "wikibase-item", "Q11942", "ETH Zurich"),
        ("Q937", "P22", "wikibase-item", "Q88665", "Hermann Einstein"),
        ("Q42", "P106", "wikibase-item", "Q6625963", "novelist"),
        ("Q42", "P27", "wikibase-item", "Q145", "United Kingdom"),
        ("Q42", "P19", "wikibase-item", "Q350", "Cambridge"),
        ("Q42", "P569", "time", "1952-03-11", "11 March 1952"),
        ("Q42", "P108", "wikibase-item", "Q9531", "BBC"),
        ("Q42", "P9999", "string", "x", "x"),  # not in the property table: ignored
    ],
    columns=["qid", "property", "datatype", "value", "value_label"],
)


@pytest.fixture(scope="module")
def canaries(canary_property_table, canary_templates):
    return build_canaries(SUBJECTS, CLAIMS, canary_property_table, canary_templates, n_context=4, seed=0)


def test_canary_table_rows_and_columns(canaries):
    assert list(canaries.columns) == CANARY_COLUMNS
    pairs = canaries[["subject_qid", "property"]].drop_duplicates()
    expected_pairs = CLAIMS[CLAIMS["property"] != "P9999"][["qid", "property"]].drop_duplicates()
    assert len(pairs) == len(expected_pairs)
    assert "Q999" not in set(canaries["subject_qid"])  # no facts, no canaries
    core = canaries[canaries["kind"].isin(["baseline", "paraphrase"])]
    sizes = core.groupby(["subject_qid", "property"])["variant_id"].agg(["size", "min", "max"])
    assert (sizes["size"] == 11).all() and (sizes["min"] == 0).all() and (sizes["max"] == 10).all()
    context = canaries[canaries["kind"] == "contextualized"]
    assert set(context["variant_id"]) == {11}
    assert context.groupby(["subject_qid", "property"]).size().max() == 1


def test_canary_rows_carry_what_scoring_needs(canaries):
    row = canaries[(canaries["subject_qid"] == "Q937") & (canaries["property"] == "P106")].iloc[0]
    assert row["subject"] == "Albert Einstein" and row["subject_aliases"] == ["Einstein"]
    assert row["subject_similar"] == ["Trebla Einstein", "Albert Nietsnie"]
    assert row["ground_truth"] == ["Q169470", "Q16389557"]
    assert row["ground_truth_labels"] == ["physicist", "philosopher of science"]
    assert row["template"] == "{subject}'s occupation is {value}." and row["subject_generic"] == "This person"
    assert render(row["template"], row["subject_generic"], "physicist") == "This person's occupation is physicist."
    for template, h0 in zip(canaries["template"], canaries["subject_generic"]):
        assert h0 == ("This person" if template.startswith("{subject}") else "this person")


def test_contextualized_canaries_prepend_true_facts_without_the_target(
    canaries, canary_property_table, canary_templates
):
    context = canaries[canaries["kind"] == "contextualized"].set_index(["subject_qid", "property"])
    assert all(count_placeholders(t) == (1, 1) for t in context["template"])
    occupation = context.loc[("Q937", "P106")]
    assert occupation["context_properties"] == ["P27", "P19", "P20", "P569"]  # most used first
    assert occupation["template"].startswith("{subject}'s country of citizenship is ")
    assert occupation["template"].endswith(
        " Their place of birth is Ulm. Their place of death is Princeton."
        " Their date of birth is 14 March 1879. Their occupation is {value}."
    )
    # with room for every fact: place of death as target, residence (P551 = Princeton too) must
    # not state it; the father's label holds the subject's surname (would leak it into S(h))
    wide = build_canaries(SUBJECTS, CLAIMS, canary_property_table, canary_templates, n_context=10)
    wide = wide[wide["kind"] == "contextualized"].set_index(["subject_qid", "property"])
    assert wide.loc[("Q937", "P106"), "context_properties"] == ["P27", "P19", "P20", "P569", "P570", "P69", "P551"]
    death = wide.loc[("Q937", "P20")]
    assert "Princeton" not in death["template"] and "P551" not in death["context_properties"]
    assert all("Einstein" not in t for t in wide["template"])
    # no context sentence ever states a ground-truth value of the target
    for (qid, pid), row in pd.concat([context, wide]).iterrows():
        prefix = row["template"].rsplit(". ", 1)[0]
        assert not any(label in prefix for label in row["ground_truth_labels"]), (qid, pid)
        assert not set(row["context_values"]) & set(row["ground_truth"])
    educated = context.loc[("Q937", "P69")]["template"]
    assert educated.endswith(" They were educated at {value}.")
    rendered = render(occupation["template"], occupation["subject_similar"][0], "physicist")
    assert rendered.startswith("Trebla Einstein's country of citizenship is ") and rendered.endswith("physicist.")


def test_context_count_and_seed_are_honoured(canary_property_table, canary_templates):
    two = build_canaries(SUBJECTS, CLAIMS, canary_property_table, canary_templates, n_context=2, seed=0)
    context = two[two["kind"] == "contextualized"]
    assert context["context_properties"].map(len).max() == 2
    none = build_canaries(SUBJECTS, CLAIMS, canary_property_table, canary_templates, n_context=0)
    assert set(none["kind"]) == {"baseline", "paraphrase"}
    # multi-valued context facts (occupation, citizenship) are picked by seed, deterministically
    runs = {
        seed: build_canaries(SUBJECTS, CLAIMS, canary_property_table, canary_templates, seed=seed)
        for seed in range(6)
    }
    chosen = {
        seed: tuple(frame.loc[frame["kind"] == "contextualized", "template"]) for seed, frame in runs.items()
    }
    assert len(set(chosen.values())) > 1
    again = build_canaries(SUBJECTS, CLAIMS, canary_property_table, canary_templates, seed=3)
    assert tuple(again.loc[again["kind"] == "contextualized", "template"]) == chosen[3]
    shuffled = build_canaries(SUBJECTS, CLAIMS.sample(frac=1, random_state=1), canary_property_table, canary_templates, seed=3)
    by_key = lambda f: dict(zip(zip(f["subject_qid"], f["property"]), f["template"]))  # noqa: E731
    assert by_key(shuffled[shuffled["kind"] == "contextualized"]) == by_key(again[again["kind"] == "contextualized"])
