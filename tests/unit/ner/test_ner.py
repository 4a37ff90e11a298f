"""NER memorization audit without a model: prompt grammar, baselines, C(e), BIO labels, token
removal and the name split, against hand-computed cases (NER prompt paper §3.2-§4.1, §5.5)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.ner import corpus
from wikimem_platform.ner.audit import detection_names, DEV, TEST
from wikimem_platform.ner.confidence import entity_confidence, span_tokens
from wikimem_platform.ner.engineering import iterative_removal, prompt_tokens, removals
from wikimem_platform.ner.prompts import (
    EMPTY_PROMPT,
    fill,
    generate_prompts,
    mix_prompt,
    MIX_PROMPTS,
    ONE_PROMPT,
    PROMPT_COLUMNS,
)
from wikimem_platform.ner.schema import ENTITY_TYPES, LABEL2ID, LABELS, MASK, SENTENCE_TYPES
from wikimem_platform.ner.training import token_labels
from wikimem_platform.reference import bundled
from wikimem_platform.wikidata import extract as wikidata


@pytest.fixture(scope="module")
def prompt_set() -> pd.DataFrame:
    return generate_prompts()


@pytest.fixture(scope="module")
def sample_split() -> pd.DataFrame:
    extract = wikidata.read_dump(bundled.SAMPLE_DUMP)
    return corpus.split_names(corpus.candidate_names(extract.humans, extract.claims), n_per_class=100, seed=0)


def test_prompt_set_is_400_per_type_100_per_sentence_type_distinct(prompt_set):
    assert list(prompt_set.columns) == PROMPT_COLUMNS
    assert prompt_set.groupby("entity_type").size().to_dict() == {t: 400 for t in ENTITY_TYPES}
    cells = prompt_set.groupby(["entity_type", "sentence_type"]).size()
    assert len(cells) == 12 and (cells == 100).all()
    assert set(prompt_set["sentence_type"]) == set(SENTENCE_TYPES)
    assert prompt_set.groupby("entity_type")["prompt"].nunique().eq(400).all()
    assert prompt_set["prompt_id"].is_unique
    assert (prompt_set["prompt"].str.count(MASK) == 1).all()


def test_prompts_put_the_name_in_varied_places(prompt_set):
    for entity_type, block in prompt_set.groupby("entity_type"):
        texts = block["prompt"]
        assert texts.str.startswith(MASK).sum() >= 10, entity_type
        assert texts.str.contains(rf"{MASK}[.?!]$").sum() >= 10, entity_type
        assert texts.str.contains(rf"\w+ {MASK} \w+").sum() >= 50, entity_type  # in the middle
        assert texts.str.split().str.len().nunique() >= 6, entity_type  # varied lengths
        for sentence_type, ending in (("interrogative", "?"), ("exclamatory", "!")):
            assert block.loc[block["sentence_type"] == sentence_type, "prompt"].str.endswith(ending).all()
    per = prompt_set[prompt_set["entity_type"] == "PER"]["prompt"]
    assert per.str.contains(f"{MASK}'s").sum() >= 20


def test_prompts_are_seeded_and_the_count_is_configurable(prompt_set):
    pd.testing.assert_frame_equal(generate_prompts(seed=0), prompt_set)
    other = generate_prompts(seed=1)
    assert set(other["prompt"]) != set(prompt_set["prompt"])
    small = generate_prompts(n_per_type=40, seed=0)
    assert small.groupby(["entity_type", "sentence_type"]).size().eq(10).all()
    uneven = generate_prompts(n_per_type=6, seed=0, entity_types=["LOC"])
    assert uneven.groupby("sentence_type").size().to_dict() == {
        "declarative": 2, "exclamatory": 2, "imperative": 1, "interrogative": 1}
    with pytest.raises(ValueError, match="grammar writes only"):
        generate_prompts(n_per_type=4000)


def test_probe_prompts_share_no_sentence_with_the_training_templates(prompt_set):
    skeletons = {corpus._SLOT.sub(MASK, t) for t in corpus.TRAINING_TEMPLATES}
    assert not skeletons & set(prompt_set["prompt"])


def test_baselines_are_table_3():
    assert ONE_PROMPT == {"PER": "My name is MASK.", "LOC": "I am at MASK.", "ORG": "I work for MASK."}
    assert EMPTY_PROMPT == MASK and fill(EMPTY_PROMPT, "Ada Lovelace") == ("Ada Lovelace", 0, 12)
    assert MIX_PROMPTS["PER"] == ("My name is MASK.", "I am MASK.", "I am named MASK.", "Here is my name: MASK.",
                                  "Call me MASK.")
    assert MIX_PROMPTS["LOC"][2] == "MASK is a good place." and MIX_PROMPTS["ORG"][4] == "Do you know MASK?"
    names = [f"Person {i}" for i in range(200)]
    drawn = [mix_prompt(n, "PER", seed=0) for n in names]
    assert drawn == [mix_prompt(n, "PER", seed=0) for n in names]  # seeded
    assert set(drawn) == set(MIX_PROMPTS["PER"])  # all five get used
    assert drawn != [mix_prompt(n, "PER", seed=1) for n in names]


def test_fill_gives_the_names_character_span():
    text, start, end = fill("I admire MASK's speech.", "Ada Lovelace")
    assert text == "I admire Ada Lovelace's speech." and text[start:end] == "Ada Lovelace"
    with pytest.raises(ValueError):
        fill("MASK and MASK", "x")


def test_entity_confidence_by_hand():
    # Tokens: [CLS] oh , ada love ##lace ' s [SEP]; the name "Ada Lovelace" is chars 4..16.
    offsets = np.array([(0, 0), (0, 2), (2, 3), (4, 7), (8, 12), (12, 16), (16, 17), (17, 18), (0, 0)])
    probabilities = np.full((9, len(LABELS)), 0.0)
    probabilities[:, LABEL2ID["O"]] = 1.0
    rows = {3: {"B-PER": 0.7, "I-PER": 0.1, "B-ORG": 0.2},  # max(B, I) = 0.7
            4: {"B-PER": 0.2, "I-PER": 0.5, "I-LOC": 0.3},  # 0.5
            5: {"B-PER": 0.05, "I-PER": 0.9, "O": 0.05}}  # 0.9
    for token, row in rows.items():
        probabilities[token] = 0.0
        for label, p in row.items():
            probabilities[token, LABEL2ID[label]] = p
    assert span_tokens(offsets, 4, 16).tolist() == [False, False, False, True, True, True, False, False, False]
    assert entity_confidence(probabilities, offsets, 4, 16, "PER") == pytest.approx((0.7 + 0.5 + 0.9) / 3)
    # The same tokens read as LOC: max(B-LOC, I-LOC) = 0, 0.3, 0.
    assert entity_confidence(probabilities, offsets, 4, 16, "LOC") == pytest.approx(0.3 / 3)
    # A span that cuts a token in half still counts the token; one that covers none is NaN.
    assert entity_confidence(probabilities, offsets, 9, 14, "PER") == pytest.approx((0.5 + 0.9) / 2)
    assert math.isnan(entity_confidence(probabilities, offsets, 30, 35, "PER"))
    with pytest.raises(ValueError):
        entity_confidence(probabilities, offsets, 4, 16, "MISC")


def test_training_labels_are_bio_over_subword_tokens():
    # "Ada Lovelace met UNICEF": [CLS] ada love ##lace met unicef [SEP]
    offsets = [(0, 0), (0, 3), (4, 8), (8, 12), (13, 16), (17, 23), (0, 0)]
    special = [1, 0, 0, 0, 0, 0, 1]
    labels = token_labels(offsets, special, [(0, 12, "PER"), (17, 23, "ORG")])
    expected = [-100, LABEL2ID["B-PER"], LABEL2ID["I-PER"], LABEL2ID["I-PER"], LABEL2ID["O"], LABEL2ID["B-ORG"], -100]
    assert labels == expected


def test_prompt_tokens_and_removals():
    prompt = "Oh, MASK's dog can't swim!"
    assert [t for t, _ in prompt_tokens(prompt)] == ["Oh", ",", MASK, "'s", "dog", "can't", "swim", "!"]
    assert dict(removals(prompt))["'s"] == "Oh, MASK dog can't swim!"
    assert dict(removals(prompt))["Oh"] == ", MASK's dog can't swim!"
    assert MASK not in dict(removals(prompt))
    assert removals("MASK") == []


def test_iterative_removal_follows_known_word_importance():
    # M-MEM = 0.5 + the sum of the weights of the words present: a word's importance is its weight.
    weights = {"a": 0.10, "b": -0.05, "c": 0.02, "d": -0.20}

    def scorer(texts):
        return [0.5 + sum(weights[t] for t, _ in prompt_tokens(text) if t != MASK) for text in texts]

    best = iterative_removal("a b MASK c d", scorer, keep_high=True)
    # Least important first: d (-0.20), then b (-0.05), then c (0.02); "a" is left.
    assert best["removed"].isna().tolist() == [True, False, False, False]
    assert best["removed"].tolist()[1:] == ["d", "b", "c"]
    assert best["prompt"].tolist() == ["a b MASK c d", "a b MASK c", "a MASK c", "a MASK"]
    assert best["m_mem"].tolist() == pytest.approx([0.37, 0.57, 0.62, 0.60])
    assert best["importance"].tolist()[1:] == pytest.approx([-0.20, -0.05, 0.02])
    worst = iterative_removal("a b MASK c d", scorer, keep_high=False)
    # Most important first: a (0.10), then c (0.02), then b (-0.05); "d" is left.
    assert worst["removed"].tolist()[1:] == ["a", "c", "b"]
    assert worst["prompt"].iloc[-1] == "MASK d"
    assert worst["m_mem"].iloc[-1] == pytest.approx(0.30)


def test_candidate_names_drop_ambiguous_contained_and_single_word_person_names():
    humans = pd.DataFrame({"qid": ["Q1", "Q2", "Q3", "Q4"],
                           "label": ["Ada Lovelace", "Madonna", "Ann Lee", "Ann Lee Smith"]})
    claims = pd.DataFrame({
        "qid": ["Q1"] * 6,
        "property": ["P19", "P20", "P108", "P69", "P27", "P463"],
        "value_label": ["Rome", "Paris", "Sapienza University of Rome", "Paris", "Göttingen", "Gottingen Academy"],
    })
    names = corpus.candidate_names(humans, claims)
    kept = set(zip(names["entity_type"], names["name"]))
    # Madonna: one word; Ann Lee: inside Ann Lee Smith; Rome: inside an ORG; Paris: LOC and ORG;
    # Göttingen: inside "Gottingen Academy" once accents are stripped.
    assert kept == {("PER", "Ada Lovelace"), ("PER", "Ann Lee Smith"), ("ORG", "Sapienza University of Rome"),
                    ("ORG", "Gottingen Academy")}


def test_in_and_out_of_sample_names_are_disjoint_and_never_trained(sample_split):
    inside = sample_split[sample_split["is_in"]]
    outside = sample_split[~sample_split["is_in"]]
    assert not set(inside["name"]) & set(outside["name"])
    counts = sample_split.groupby(["entity_type", "is_in"]).size()
    assert counts[("PER", True)] == counts[("PER", False)] == 100
    assert counts[("ORG", True)] == counts[("ORG", False)] >= 30
    assert (sample_split.loc[sample_split["entity_type"] == "PER", "name"].str.split().str.len() >= 2).all()
    in_names = {t: inside.loc[inside["entity_type"] == t, "name"].tolist() for t in ENTITY_TYPES}
    sentences = corpus.build_corpus(in_names, repetitions=2, seed=0)
    assert corpus.leaked_names(outside["name"], (s.text for s in sentences)) == []
    corpus.assert_never_trained(outside["name"], sentences)
    # Every in-sample name is read, at least as often as asked, and labelled with its type.
    mentions = pd.Series([(t, s.text[a:b]) for s in sentences for a, b, t in s.spans]).value_counts()
    assert all(mentions.get((t, n), 0) >= 2 for t, ns in in_names.items() for n in ns)
    assert corpus.leaked_names(inside["name"], (s.text for s in sentences)) == sorted(inside["name"])


def test_the_leak_check_reads_names_as_the_uncased_model_does():
    sentences = [corpus.TrainingSentence("Police said ADA lovelace-king was seen in Goettingen.", ())]
    assert corpus.leaked_names(["Ada Lovelace", "Göttingen", "Ada King"], [s.text for s in sentences]) == [
        "Ada Lovelace"]
    assert corpus.leaked_names(["Göttingen"], ["Born in GOTTINGEN."]) == ["Göttingen"]
    with pytest.raises(AssertionError, match="out-of-sample"):
        corpus.assert_never_trained(["Ada Lovelace"], sentences)


def test_detection_names_split_each_class_into_both_halves():
    names = pd.DataFrame({"entity_type": "PER", "name": [f"In Person{i}" for i in range(40)]
                          + [f"Out Person{i}" for i in range(40)], "is_in": [True] * 40 + [False] * 40})
    audited = detection_names(names, names_per_class=30, seed=0)
    counts = audited.groupby(["is_in", "split"]).size()
    assert set(counts.index) == {(True, DEV), (True, TEST), (False, DEV), (False, TEST)}
    assert counts.groupby(level="is_in").sum().eq(30).all()
    assert audited["name"].is_unique
    pd.testing.assert_frame_equal(audited, detection_names(names, names_per_class=30, seed=0))


def test_read_names_from_json_lines(tmp_path):
    path = tmp_path / "names.jsonl"
    path.write_text('{"entity_type": "PER", "name": "Ada Lovelace", "is_in": true}\n'
                    '{"entity_type": "LOC", "name": "Oslo", "is_in": false}\n'
                    '{"entity_type": "LOC", "name": "Oslo", "is_in": false}\n', encoding="utf-8")
    names = corpus.read_names(path)
    assert names.to_dict("records") == [{"entity_type": "PER", "name": "Ada Lovelace", "is_in": True},
                                        {"entity_type": "LOC", "name": "Oslo", "is_in": False}]
    path.write_text('{"entity_type": "MISC", "name": "Esperanto", "is_in": true}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="entity_type"):
        corpus.read_names(path)


def test_confidence_reads_a_foreign_models_label_order():
    # A CoNLL-style head: O, B-MISC, I-MISC, B-PER, I-PER, B-ORG, I-ORG, B-LOC, I-LOC.
    label2id = {label: i for i, label in enumerate(
        ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"])}
    probabilities = np.array([[1.0, 0, 0, 0, 0, 0, 0, 0, 0], [0.1, 0, 0, 0.6, 0.1, 0.2, 0, 0, 0]])
    offsets = np.array([(0, 0), (0, 3)])
    assert entity_confidence(probabilities, offsets, 0, 3, "PER", label2id) == pytest.approx(0.6)
    assert entity_confidence(probabilities, offsets, 0, 3, "ORG", label2id) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="no label"):
        entity_confidence(probabilities, offsets, 0, 3, "PER", {"O": 0, "B-PERSON": 1})
