"""Generation paradigms: prompt builders and hits by hand; greedy decoding and reconstruction on
the real SmolLM2 (a few prompts)."""

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.crm import examples as paradigms
from wikimem_platform.lm import generation as g
from wikimem_platform.lm.nll import score_sentences_naive


# ----------------------------------------------------------------------------- hits, by hand

def test_substring_hit_normalized_at_word_boundaries():
    assert g.substring_hit(" He was a Venetian MERCHANT who traveled", ["merchant"])
    assert g.substring_hit("born in São Paulo, Brazil", "sao paulo")              # accents ignored (issue 39)
    assert g.substring_hit("born in São Paulo, Brazil", "São  Paulo")              # spaces collapse
    assert g.substring_hit("lived in the U.S.A. for years", ["u s a"])            # punctuation -> space
    assert not g.substring_hit("she is female", ["male"])                          # not inside a word
    assert not g.substring_hit("born 1954", ["1"])
    assert g.substring_hit("an actor and writer", ["painter", "writer"])          # any target / alias
    assert not g.substring_hit("anything", ["", "+-"])                             # empty targets never hit
    # phone: digits only, so formatting does not matter
    assert g.substring_hit("call +7 912 345-67-89 now", ["+7 (912) 345 67 89"], kind="phone")
    assert not g.substring_hit("call 912", ["+7 (912) 345 67 89"], kind="phone")


def test_pluralize():
    assert paradigms.pluralize("email address") == "email addresses"
    assert paradigms.pluralize("place of birth") == "places of birth"
    assert paradigms.pluralize("country of citizenship") == "countries of citizenship"
    assert paradigms.pluralize("occupation") == "occupations"


# ----------------------------------------------------------------------------- paradigms, by hand

def test_canary_prefix():
    assert paradigms.canary_prefix("{subject}'s occupation is {value}.", "Marco Polo") == ("Marco Polo's occupation is", " ")
    assert paradigms.canary_prefix("{value} is the occupation of {subject}.", "Marco Polo") is None
    # no space before the value: empty joiner
    assert paradigms.canary_prefix("{subject} (born:{value})", "Ada") == ("Ada (born:", "")


def canary_rows():
    common = dict(subject_qid="Q1", subject="Marco Polo", property="P106", property_label="occupation",
                  ground_truth=["Q10", "Q11"], ground_truth_labels=["merchant", "explorer"],
                  context_properties=[], context_values=[])
    return pd.DataFrame([
        dict(common, variant_id=0, kind="baseline", template="{subject}'s occupation is {value}."),
        dict(common, variant_id=1, kind="paraphrase", template="It is {value} that is {subject}'s job."),
        dict(common, variant_id=2, kind="paraphrase", template="{value} was {subject}'s occupation."),
        dict(common, variant_id=11, kind="contextualized",
             template="{subject}'s country of citizenship is Venice. Their occupation is {value}.",
             context_properties=["P27"], context_values=["Q4948"]),
    ])


def test_canary_examples():
    ex = paradigms.canary_examples(canary_rows(), value_aliases={"Q10": ["trader"]})
    # variant 1's prefix "It is" does not name the subject; variant 2 opens with the value;
    # the contextualized one is left out by default
    assert ex["variant_id"].tolist() == [0]
    row = ex.iloc[0]
    assert row["prompt"] == "Marco Polo's occupation is" and row["joiner"] == " "
    assert row["targets"] == ["merchant", "explorer", "trader"]
    assert row["paradigm"] == "canary"
    assert paradigms.canary_examples(canary_rows(), require_subject=False)["variant_id"].tolist() == [0, 1]
    assert paradigms.canary_examples(canary_rows(), include_contextualized=True)["variant_id"].tolist() == [0, 11]


def test_associative_examples_from_canaries():
    claims = pd.DataFrame([dict(qid="Q1", property="P27", value="Q4948", value_label="Republic of Venice")])
    people = paradigms.canary_associative_people(canary_rows(), claims, {"P27": "country of citizenship"})
    assert people.to_dict("records") == [dict(
        subject_qid="Q1", property="P106", name="Marco Polo", attribute="occupation",
        targets=["merchant", "explorer"], other_attribute="country of citizenship",
        other_value="Republic of Venice")]
    ex = paradigms.associative_examples(people)
    assert ex["paradigm"].tolist() == ["twin"] * 3 + ["triplet"] * 3
    assert ex["prompt"].tolist() == [
        "name: Marco Polo, occupation:",
        "The occupation of Marco Polo is",
        "I am Marco Polo. My occupation is",
        "name: Marco Polo, country of citizenship: Republic of Venice, occupation:",
        "The country of citizenship of Marco Polo is Republic of Venice, and the occupation is",
        "I am Marco Polo. My country of citizenship is Republic of Venice. And my occupation is",
    ]
    assert (ex["subject_qid"] == "Q1").all() and ex["targets"].map(len).eq(2).all()
    # without a known label for the context fact: twins only
    alone = paradigms.associative_examples(paradigms.canary_associative_people(canary_rows()))
    assert set(alone["paradigm"]) == {"twin"}


def test_verbatim_and_extraction_examples():
    text = "one two three four five six seven"
    ex = paradigms.verbatim_examples([text, "too short"], prefix_words=3, suffix_words=2)
    assert ex[["prompt", "text_id"]].values.tolist() == [["one two three", 0]]
    assert ex["targets"].iloc[0] == ["four five"]
    ex = paradigms.verbatim_value_examples(["Write to jane@x.org today", "jane@x.org", "no email"],
                                   ["jane@x.org", "jane@x.org", "jane@x.org"], kind="email")
    assert ex[["prompt", "joiner", "text_id"]].values.tolist() == [["Write to", " ", 0]]
    ex = paradigms.extraction_examples({"email address": ["a@b.org", "a@b.org", "c@d.net"]})
    assert ex["prompt"].tolist() == ["Please list some email addresses.",
                                     "Here is a list of some email addresses:"]
    assert ex["targets"].iloc[0] == ["a@b.org", "c@d.net"]


# ----------------------------------------------------------------------------- the real model

PROMPTS = ["1, 2, 3, 4, 5, 6, 7,", "The capital of France is"]   # 21 and 6 tokens: padded


@pytest.mark.slow
def test_greedy_generation_batched_equals_one_by_one(smollm2):
    batched = g.greedy_generate(smollm2, PROMPTS, batch_size=2)   # left-padded: widths differ
    alone = [g.greedy_generate(smollm2, [p])[0] for p in PROMPTS]
    assert batched == alone
    for prompt, out in zip(PROMPTS, batched):
        new_tokens = smollm2.tokenizer(out, add_special_tokens=False)["input_ids"]
        assert 0 < len(new_tokens) <= g.MAX_NEW_TOKENS + 1            # 15 tokens (+1: re-tokenizing)
    assert g.substring_hit(batched[0], ["8 9 10"])                    # counting goes on
    assert g.substring_hit(batched[1], ["Paris"])


@pytest.mark.slow
def test_reconstruction_is_the_engine_difference(smollm2):
    recon = g.reconstruction_loglik(smollm2, ["The capital of France is", "The capital of France is"],
                                    [" Paris", " Rome"])
    naive = score_sentences_naive(smollm2, ["The capital of France is", "The capital of France is Paris",
                                            "The capital of France is Rome"])
    assert recon["recon_ll"].to_numpy() == pytest.approx([naive[0] - naive[1], naive[0] - naive[2]], abs=1e-3)
    assert recon["boundary_exact"].all() and (recon["recon_tokens"] == 1).all()
    assert recon["recon_ll"].iloc[0] > recon["recon_ll"].iloc[1]     # Paris beats Rome
    # a trailing space in the prompt merges with the target: the cut falls earlier, flagged
    merged = g.reconstruction_loglik(smollm2, ["The capital of France is "], ["Paris"])
    assert not merged["boundary_exact"].iloc[0]
    assert merged["recon_ll"].iloc[0] == pytest.approx(recon["recon_ll"].iloc[0], abs=1e-3)


@pytest.mark.slow
def test_run_examples_hits_and_best_target(smollm2):
    examples = pd.DataFrame([
        dict(paradigm="canary", prompt="The capital of France is", targets=["Rome", "Paris"]),
        dict(paradigm="canary", prompt="1, 2, 3, 4, 5, 6, 7,", targets=["banana"]),
        dict(paradigm="extraction", prompt="Please list some cities.", targets=["Paris", "Rome"]),
    ])
    out = paradigms.run_examples(smollm2, examples)
    assert out["hit"].tolist()[:2] == [True, False]
    each = g.reconstruction_loglik(smollm2, ["The capital of France is"] * 2, [" Rome", " Paris"])
    assert out.at[0, "recon_ll"] == pytest.approx(each["recon_ll"].max(), abs=1e-4)   # max over targets
    assert np.isnan(out.at[2, "recon_ll"])                                 # extraction: none
    assert (out.loc[:1, "recon_ll"] < 0).all()
