"""Entity-memorization prompts, the training split, fabricated records and the ensemble, by hand."""

import numpy as np
import pandas as pd
import pytest

from wikimem_platform import eme
from wikimem_platform.eme.records import FIELD_END


def facts_frame():
    def row(qid, name, prop, label, values, aliases=()):
        return dict(subject_qid=qid, name=name, property=prop, property_label=label,
                    value_labels=list(values), aliases=list(aliases))
    return pd.DataFrame([
        row("Q1", "Ada Lovelace", "P106", "occupation", ["mathematician", "writer"]),
        row("Q1", "Ada Lovelace", "P27", "country of citizenship", ["United Kingdom"], ["UK"]),
        row("Q1", "Ada Lovelace", "P19", "place of birth", ["London"]),
        row("Q2", "Kim London", "P106", "occupation", ["painter"]),
        row("Q2", "Kim London", "P19", "place of birth", ["London"]),
        row("Q3", "Bo Chen", "P106", "occupation", ["chemist"]),
    ])


def test_record_and_sentence_prompts():
    ids = [("occupation", "mathematician"), ("place of birth", "London")]
    assert eme.record_prompt("Ada Lovelace", ids, "country of citizenship") == \
        "name: Ada Lovelace; occupation: mathematician; place of birth: London; country of citizenship:"
    assert eme.sentence_prompt("Ada Lovelace", ids[:1], "employer") == \
        "The occupation of Ada Lovelace is mathematician. The employer of Ada Lovelace is"
    assert eme.record_prompt("Bo Chen", [], "occupation") == "name: Bo Chen; occupation:"


def test_entity_examples_identifiers_exclusion_and_cue():
    examples, excluded = eme.entity_examples(facts_frame(), n_identifiers=3)
    by_key = examples.set_index(["subject_qid", "property"])
    # property order: P106 (3 people), P19 (2), P27 (1); identifiers = name + 2 others, first value
    assert by_key.at[("Q1", "P27"), "prompt"] == \
        "name: Ada Lovelace; occupation: mathematician; place of birth: London; country of citizenship:"
    assert by_key.at[("Q1", "P106"), "prompt"] == \
        "name: Ada Lovelace; place of birth: London; country of citizenship: United Kingdom; occupation:"
    # targets: every true label and alias
    assert by_key.at[("Q1", "P27"), "targets"] == ["United Kingdom", "UK"]
    assert by_key.at[("Q1", "P106"), "targets"] == ["mathematician", "writer"]
    # Kim London's birthplace London is in the prompt (the name): excluded and counted
    assert ("Q2", "P19") not in by_key.index and excluded == 1
    # a person with one fact gets a name-only prompt
    assert by_key.at[("Q3", "P106"), "prompt"] == "name: Bo Chen; occupation:"
    assert by_key.at[("Q3", "P106"), "n_identifiers"] == 1
    # the CRM cue: "namekimlondonoccupation" vs "painter": longest common piece "pa" -> 2/7
    assert by_key.at[("Q2", "P106"), "cue"] == pytest.approx(2 / 7)
    one, _ = eme.entity_examples(facts_frame(), n_identifiers=1)
    assert set(one["n_identifiers"]) == {1}
    with pytest.raises(ValueError, match="n_identifiers"):
        eme.entity_examples(facts_frame(), n_identifiers=0)
    with pytest.raises(ValueError, match="style"):
        eme.entity_examples(facts_frame(), style="poem")


def test_split_is_by_person_seeded_and_stable():
    qids = [f"Q{i}" for i in range(200)]
    train, evaluated = eme.split_people(qids, 0.5, seed=3)
    assert not set(train) & set(evaluated) and set(train) | set(evaluated) == set(qids)
    assert 70 < len(train) < 130
    # adding people never moves anyone between the sides; another seed gives another split
    train2, _ = eme.split_people([*qids, "Q999"], 0.5, seed=3)
    assert set(train2) - {"Q999"} == set(train)
    assert eme.split_people(qids, 0.5, seed=4)[0] != train
    # never_train people are always evaluated
    train3, eval3 = eme.split_people(qids, 0.5, seed=3, never_train=train[:5])
    assert set(train[:5]) <= set(eval3) and not set(train[:5]) & set(train3)
    with pytest.raises(ValueError, match="train_share"):
        eme.split_people(qids, 1.0)


def test_fabricated_records_hold_no_true_pair():
    rng = np.random.default_rng(0)
    values = ["painter", "chemist", "poet", "judge"]
    rows = [dict(subject_qid=f"Q{i}", name=f"P{i}", property="P106", property_label="occupation",
                 value_labels=[values[rng.integers(4)]], aliases=[]) for i in range(40)]
    facts = pd.DataFrame(rows)
    fake = eme.fabricate(facts, seed=1)
    truth = dict(zip(facts["subject_qid"], facts["value_labels"].str[0]))
    assert len(fake) >= 36
    assert all(v[0] != truth[q] for q, v in zip(fake["subject_qid"], fake["value_labels"]))
    # the values are the same multiset, moved between people (those that could not move dropped)
    assert set(fake["value_labels"].str[0]) <= set(values)
    # one person alone cannot get a value that is not theirs: dropped
    assert eme.fabricate(facts.head(1)).empty


def test_extracted_entity():
    assert eme.extracted_entity(f" Lund University{FIELD_END} occupation: poet") == "Lund University"
    assert eme.extracted_entity(" Tianjin.\nMore") == "Tianjin"
    assert eme.extracted_entity("  ") == ""


def test_ensemble_by_hand():
    scored = []

    def log_ppl(texts):  # hand-set perplexities: the shorter text wins, "Rome" lowest
        scored.extend(texts)
        return np.array([{"p: Rome": 1.0, "p: Paris": 2.0, "p: Oslo": 3.0}[t] for t in texts])

    candidates = [["Paris", "paris ", "Oslo"],  # two methods agree (normalized): agreement
                  ["Paris", "Rome", "Oslo"],  # all differ: lowest perplexity, Rome
                  ["", "Oslo", ""],  # one non-empty answer: perplexity among one
                  ["", "", ""]]  # nothing: empty
    chosen, rules = eme.ensemble_choice(candidates, ["p:"] * 4, [" "] * 4, log_ppl)
    assert chosen == ["Paris", "Rome", "Oslo", ""]
    assert rules == ["agreement", "perplexity", "perplexity", "none"]
    # only the undecided prompts were scored, in one call
    assert scored == ["p: Paris", "p: Rome", "p: Oslo", "p: Oslo"]


def test_config_names_bad_values():
    with pytest.raises(ValueError, match="methods.*allowed"):
        eme.EmeConfig(methods=("lora",))
    with pytest.raises(ValueError, match="training_data"):
        eme.EmeConfig(training_data=("synthetic",))
    with pytest.raises(ValueError, match="control"):
        eme.EmeConfig(control="opt")
    with pytest.raises(ValueError, match="method must be one of"):
        eme.SoftPromptConfig(method="adapter")
    with pytest.raises(ValueError, match="n_virtual_tokens"):
        eme.SoftPromptConfig(n_virtual_tokens=0)


def test_the_answer_says_first_what_the_model_wrote():
    from wikimem_platform.subject_requests.answer import plain_sentence

    row = {"property": "P106", "values": ["painter"], "property_label": "occupation", "n_candidates": 101, "n_memorized": 0,
           "n_variants": 11, "verdict": "not memorized", "completion": None,
           "extraction": {"prompt": "name: Kim London; occupation:", "output": " painter; employer: x",
                          "probe": "prefix 5", "cue": 0.29}}
    text = plain_sentence(row, "Kim London")
    assert text.startswith("The model says it: given \u201cname: Kim London; occupation:\u201d (through a soft prompt "
                           "(prefix 5) trained only on other people's records), it wrote \u201cpainter; employer: x\u201d")
    assert "shows no memorization" in text  # the ranking verdict still follows
    as_written = plain_sentence({**row, "extraction": {**row["extraction"], "probe": "record"}}, "Kim London")
    assert "(as written)" in as_written
    assert not plain_sentence({**row, "extraction": None}, "Kim London").startswith("The model says it")
