"""The Scorer protocol (`wikimem_platform.lm.scorer`): the WikiMem ranking, the membership pass and
a data-subject request's audit run unchanged at every access level, asked of the scorer's
capabilities (`lm.access`), on a scorer whose NLLs are scripted (`tests.support.fake_scorer`), so
every number is computed by hand; the sentence cache in front of any scorer (`CachingScorer`)
sends only what it lacks and keeps the cache file's format."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from tests.support.fake_scorer import FakeScorer
from wikimem_platform.lm.access import (
    ACCESS_LEVELS,
    CAPABILITIES,
    capabilities_of,
    GENERATION,
    NO_TEXT_PROBABILITY,
    PROMPT_LOGPROBS,
    RANKING_ACCESS,
    TOP_LOGPROBS,
    WEIGHTS,
)
from wikimem_platform.lm.endpoint import EndpointConfig, EndpointError, EndpointModel
from wikimem_platform.lm.scorer import CachingScorer
from wikimem_platform.mia.model_pass import run_attacks, token_stats, unavailable_attacks
from wikimem_platform.security.keys import purpose_key
from wikimem_platform.subject_requests.audit import audit_person_on_model, COVERAGE_COLUMNS, PersonPlan
from wikimem_platform.wikimem import scoring
from wikimem_platform.wikimem.memorization import H_CENSORED, prepare_scores, variant_metrics
from wikimem_platform.wikimem.scoring import score_canaries, SENTENCE_KEY_PURPOSE, SentenceNllCache, ShardStore

CANARIES = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "variant_id": 0, "kind": "baseline",
                          "template": "{subject}'s occupation is {value}.", "subject": "Ilse Marwitz",
                          "subject_generic": "This person", "subject_similar": ["Esli Marwitz", "Ilse Ztiwram"],
                          "ground_truth": ["journalist"], "ground_truth_labels": ["journalist"]}])
CANDIDATES = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "value": v, "value_label": v, "is_true": v == "journalist"}
                           for v in ("journalist", "baker", "pilot")])
TRUE_SENTENCE = "Ilse Marwitz's occupation is journalist."


def script(sentence: str) -> float:
    """10 nats for every sentence but the person's with their true value (4): s(h, v) = mean
    NLL(h~, v) - NLL(h, v) is 6 for the truth and 0 for either counterfactual."""
    return 4.0 if sentence == TRUE_SENTENCE else 10.0


def served(access: str, prompt_mode: str = "token-ids") -> EndpointModel:
    """A served model at `access` (no server is asked anything: no tokenizer, nothing sent)."""
    return EndpointModel(EndpointConfig(url="http://127.0.0.1:9", served_model="toy", access=access,
                                        prompt_mode=prompt_mode))


# --------------------------------------------------------------------------- the one table

def test_what_each_access_level_can_do_is_one_table_the_scorers_answer_from():
    assert set(CAPABILITIES) == {WEIGHTS, *ACCESS_LEVELS}
    assert [a for a in CAPABILITIES if CAPABILITIES[a].ranks] == [WEIGHTS, *RANKING_ACCESS]
    assert [a for a in CAPABILITIES if not CAPABILITIES[a].scores_text] == list(NO_TEXT_PROBABILITY)
    assert [a for a in CAPABILITIES if CAPABILITIES[a].has_distribution] == [WEIGHTS]
    assert [a for a in CAPABILITIES if CAPABILITIES[a].reads_continuations] == [TOP_LOGPROBS]
    assert all(can.generates for can in CAPABILITIES.values())
    for access in ACCESS_LEVELS:
        model = served(access)
        assert model.capabilities == capabilities_of(access) and model.access == access and model.usage()["requests"] == 0
        assert model.rescoring_plan({}) == (f"endpoint:{access}", None)
    text_only = served(PROMPT_LOGPROBS, prompt_mode="text")
    assert not text_only.capabilities.scores_token_ids and text_only.capabilities.scores_text
    with pytest.raises(ValueError, match="unknown access level 'weights-ish'"):
        capabilities_of("weights-ish")


def test_a_model_loaded_here_is_a_scorer_at_weights_access(smollm2):
    assert smollm2.access == WEIGHTS and smollm2.capabilities == CAPABILITIES[WEIGHTS] and smollm2.usage() == {}
    assert smollm2.context_length() == smollm2.model.config.max_position_embeddings
    assert smollm2.rescoring_plan(None) == ("float32", None)
    from wikimem_platform.lm.nll import score_sentences

    sentences = [TRUE_SENTENCE, "Ilse Marwitz's occupation is baker."]
    assert smollm2.sentence_nlls(sentences).tolist() == score_sentences(smollm2, sentences).tolist()
    assert smollm2.score_token_ids(smollm2.encode(sentences)).tolist() == score_sentences(smollm2, sentences).tolist()
    assert not smollm2.censored(sentences, {}).any()


# --------------------------------------------------------------------------- the WikiMem ranking

@pytest.mark.parametrize("access", [WEIGHTS, PROMPT_LOGPROBS, TOP_LOGPROBS])
def test_the_true_value_with_the_lowest_nll_ranks_first_of_three_at_every_ranking_access(access, tmp_path):
    fake = FakeScorer(script, access)
    scores, report = score_canaries(fake, CANARIES, CANDIDATES, ShardStore(tmp_path), log=lambda m: None)
    by_value = scores.set_index("value")
    assert by_value["nll_h"].to_dict() == {"journalist": 4.0, "baker": 10.0, "pilot": 10.0}
    assert by_value["nll_h0"].tolist() == [10.0] * 3 and by_value["nll_similar_mean"].tolist() == [10.0] * 3
    assert (H_CENSORED in scores) == (access == TOP_LOGPROBS)
    candidates, variants = variant_metrics(prepare_scores(scores))
    assert variants["truth_rank"].tolist() == [1] and variants["n_candidates"].tolist() == [3]
    assert candidates.set_index("value")["s"].to_dict() == {"journalist": 6.0, "baker": 0.0, "pilot": 0.0}
    assert report.precision == ("float32" if access == WEIGHTS else f"endpoint:{access}")
    # 3 candidates x (h, h0, 2 look-alikes), h0 shared: 3 + 3 + 6 distinct sentences, each sent once
    assert report.sentences_computed == report.sentences_distinct == 12 and sum(map(len, fake.calls)) == 12
    assert fake.usage() == ({} if access == WEIGHTS else {**fake.usage(), "requests": len(fake.calls), "prompts": 12})


def test_a_censored_continuation_is_flagged_and_ranked_by_its_bound(tmp_path):
    fake = FakeScorer(script, TOP_LOGPROBS, censored=["Ilse Marwitz's occupation is pilot."])
    scores, report = score_canaries(fake, CANARIES, CANDIDATES, ShardStore(tmp_path), log=lambda m: None)
    assert scores.set_index("value")[H_CENSORED].to_dict() == {"journalist": False, "baker": False, "pilot": True}
    assert scores.set_index("value").loc["pilot", "nll_h"] == 10.0  # |the negated cache entry|
    assert (report.continuations, report.continuations_censored) == (12, 1)


def test_generation_access_refuses_ranking_with_the_served_models_message(tmp_path):
    refusal = r"registered with access 'generation': prompt-logprobs is not available"
    for model in (FakeScorer(script, GENERATION), served(GENERATION)):
        with pytest.raises(EndpointError, match=refusal):
            score_canaries(model, CANARIES, CANDIDATES, ShardStore(tmp_path / model.name), log=lambda m: None)


# --------------------------------------------------------------------------- the sentence cache

def test_the_sentence_cache_wraps_any_scorer_and_sends_only_what_it_lacks(tmp_path):
    cache = SentenceNllCache(tmp_path / "nll.sqlite")
    cache.put_many({TRUE_SENTENCE: 4.0, "This person's occupation is baker.": 10.0})
    fake = FakeScorer(script, WEIGHTS)
    scores, report = score_canaries(fake, CANARIES, CANDIDATES, ShardStore(tmp_path / "a"), log=lambda m: None,
                                    sentence_cache=cache)
    sent = [s for call in fake.calls for s in call]
    assert TRUE_SENTENCE not in sent and len(sent) == len(set(sent)) == 10 == report.sentences_computed
    assert len(fake.calls) == 1  # weights: one engine call per shard (the engine shares work across it)
    assert len(cache) == 12
    # the file's format: 16-byte keyed BLAKE2b of each sentence under the cache's purpose key, the NLL
    key = hashlib.blake2b(TRUE_SENTENCE.encode(), key=purpose_key(SENTENCE_KEY_PURPOSE, None), digest_size=16).digest()
    with cache._connect() as conn:
        assert conn.execute("SELECT nll FROM nll WHERE key = ?", (key,)).fetchone() == (4.0,)
    again = FakeScorer(script, WEIGHTS)
    rescored, report = score_canaries(again, CANARIES, CANDIDATES, ShardStore(tmp_path / "b"), log=lambda m: None,
                                      sentence_cache=cache)
    assert again.calls == [] and report.sentences_computed == 0 and rescored.equals(scores)
    assert cache.forget([TRUE_SENTENCE]) == 1 and TRUE_SENTENCE not in cache.get_many([TRUE_SENTENCE])


def test_a_served_scorer_persists_each_chunk_so_a_failed_run_resends_only_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(scoring, "ENDPOINT_CHUNK_SENTENCES", 5)
    cache = SentenceNllCache(tmp_path / "nll.sqlite")
    calls = []

    def failing(sentence):
        calls.append(sentence)
        if len(calls) > 10:
            raise EndpointError("http://fake.invalid", "the server went away")
        return script(sentence)

    with pytest.raises(EndpointError, match="the server went away"):
        score_canaries(FakeScorer(failing, PROMPT_LOGPROBS), CANARIES, CANDIDATES, ShardStore(tmp_path), log=lambda m: None,
                       sentence_cache=cache)
    assert len(cache) == 10  # two chunks of 5 were back and persisted before the third failed
    retry = FakeScorer(script, PROMPT_LOGPROBS)
    scores, report = score_canaries(retry, CANARIES, CANDIDATES, ShardStore(tmp_path), log=lambda m: None,
                                    sentence_cache=cache)
    assert [len(c) for c in retry.calls] == [2] and report.sentences_computed == 2
    assert scores.set_index("value")["nll_h"].to_dict() == {"journalist": 4.0, "baker": 10.0, "pilot": 10.0}


def test_a_caching_scorer_without_a_store_counts_and_passes_everything_else_through():
    fake = FakeScorer(script, TOP_LOGPROBS)
    wrapped = CachingScorer(fake, None, persist_every=2)
    run: dict[str, float] = {}
    values = wrapped.sentence_nlls([TRUE_SENTENCE, TRUE_SENTENCE, "x y"], cache=run, prefixes={TRUE_SENTENCE: "Ilse",
                                                                                               "x y": "x"})
    assert values.tolist() == [4.0, 4.0, 10.0] and wrapped.computed == 2 and fake.calls == [[TRUE_SENTENCE, "x y"]]
    assert wrapped.capabilities == fake.capabilities and wrapped.fingerprint == fake.fingerprint
    assert wrapped.details["top_k"] == 20 and not wrapped.censored([TRUE_SENTENCE], run).any()


# --------------------------------------------------------------------------- the membership pass

MIA_TEXTS = ["a b c d", "e f", "a b c d"]  # 4 and 2 scored tokens (a word each); the repeat is run once


def mia_script(text: str) -> float:
    return {"a b c d": 8.0, "e f": 10.0}[text]


@pytest.mark.parametrize("access", [WEIGHTS, PROMPT_LOGPROBS])
def test_the_membership_pass_gives_every_attack_the_access_level_allows(access):
    fake = FakeScorer(mia_script, access)
    stats = token_stats(fake, MIA_TEXTS)
    assert [st.mean_nll for st in stats] == [2.0, 5.0, 2.0] and stats[0] is stats[2] and len(fake.calls) == 1
    frame = run_attacks(fake, MIA_TEXTS[:2], lowercase=False)
    assert frame["loss"].tolist() == [-2.0, -5.0]
    assert ("min_k_pp" in frame) == (access == WEIGHTS)  # the distribution: weights only
    if access == WEIGHTS:
        assert frame["min_k_pp"].tolist() == [1.0, 1.0]  # log p 1 nat above the scripted mean, variance 1
        assert unavailable_attacks(fake) == {}
    else:
        assert set(unavailable_attacks(fake)) == {"min_k_pp", "gradient_norm", "samia"}
        with pytest.raises(ValueError, match="gradient_norm: not available for fake, served at an endpoint"):
            run_attacks(fake, MIA_TEXTS, gradient_norm=True)
    text_only = FakeScorer(mia_script, access, prompt_mode="text")
    assert ("recall" in unavailable_attacks(text_only)) == (access != WEIGHTS)


def test_the_membership_pass_refuses_access_without_text_probabilities():
    for access in NO_TEXT_PROBABILITY:
        with pytest.raises(EndpointError, match=f"registered with access '{access}': prompt-logprobs is not available"):
            token_stats(FakeScorer(mia_script, access), MIA_TEXTS)


# --------------------------------------------------------------------------- a request's audit

def person_plan() -> PersonPlan:
    subject = pd.DataFrame([{"qid": "Q1", "label": "Ilse Marwitz"}])
    facts = pd.DataFrame([{"qid": "Q1", "property": "P106", "datatype": "wikibase-item", "value": "journalist",
                           "value_label": "journalist"}])
    coverage = pd.DataFrame([{"property": "P106", "property_label": "occupation", "coverage": "covered", "reason": ""}],
                            columns=COVERAGE_COLUMNS)
    return PersonPlan(subject, facts, CANARIES, CANDIDATES, coverage)


@pytest.mark.parametrize("access", [WEIGHTS, PROMPT_LOGPROBS, TOP_LOGPROBS])
def test_a_request_audit_ranks_through_any_scorer_and_names_its_access(access, tmp_path):
    fake = FakeScorer(script, access, completions={"Ilse Marwitz's occupation is": " journalist, in Berlin"})
    audit = audit_person_on_model(fake, person_plan(), ShardStore(tmp_path), SentenceNllCache(tmp_path / "nll.sqlite"),
                                  log=lambda m: None, extract=False)
    assert audit.access == access and audit.fingerprint == fake.fingerprint
    assert audit.scores.set_index("value")["nll_h"].to_dict() == {"journalist": 4.0, "baker": 10.0, "pilot": 10.0}
    _, variants = variant_metrics(prepare_scores(audit.scores))
    assert variants["truth_rank"].tolist() == [1]
    said = audit.completions.set_index("variant_id")
    assert said.loc[0, "completion"] == " journalist, in Berlin" and bool(said.loc[0, "hit"])


def test_a_request_audit_at_generation_access_reads_what_the_model_says(tmp_path):
    fake = FakeScorer(script, GENERATION, completions={"Ilse Marwitz's occupation is": " a baker"})
    audit = audit_person_on_model(fake, person_plan(), ShardStore(tmp_path), None, log=lambda m: None, extract=False)
    assert audit.access == GENERATION and audit.scores.empty
    assert audit.completions["completion"].tolist() == [" a baker"] and not audit.completions["hit"].any()
    assert all(call == ["Ilse Marwitz's occupation is"] for call in fake.calls)  # nothing scored, only completed
