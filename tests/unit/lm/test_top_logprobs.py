"""top-logprobs access (issue 36): a served model that gives only its k most likely next tokens.
The planted model is served by a real HTTP server on 127.0.0.1 (`tests.support.endpoint_server`:
its own forward pass, top k from its log-softmax, keyed "token_id:N" as vLLM's
return_tokens_as_token_ids or by token text), and every continuation NLL here is recomputed by
hand from the same model's log-probabilities: read in full it is the whole sentence's NLL minus its
prefix's; censored, the tokens read plus the k-th log-probability where it left the top k. The
vLLM check is in `tests/e2e/test_endpoint_audit.py`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from tests.support.endpoint_server import ScriptedServer
from wikimem_platform.canaries.text import text_before_value, value_follows_subject
from wikimem_platform.lm.endpoint import (
    check_probe,
    common_prefix_length,
    EndpointConfig,
    EndpointError,
    EndpointModel,
    RetryPolicy,
    top_logprobs,
)
from wikimem_platform.lm.loading import load_model
from wikimem_platform.lm.nll import score_sentences
from wikimem_platform.wikimem.memorization import H_CENSORED, prepare_scores, variant_metrics

FAST_RETRY = RetryPolicy(attempts=2, base_seconds=0.0, max_seconds=0.0)
TOLERANCE = 1e-4  # nats: the same float32 forward pass on both sides


@pytest.fixture(scope="module")
def planted_lm(planted_model):
    return load_model(str(planted_model), device="cpu")


def served(server, lm, planted_model, **overrides) -> EndpointModel:
    config = EndpointConfig(url=f"{server.url}/v1", served_model="toy", tokenizer=str(planted_model),
                            access="top-logprobs", retry=FAST_RETRY, **overrides)
    return EndpointModel(config, tokenizer=lm.tokenizer)


def by_hand(lm, ids: list[int], split: int, k: int) -> tuple[float, bool, list[tuple[int, ...]]]:
    """(continuation NLL, censored?, the prefixes whose top k was read) from the model's own
    log-softmax: each token of ids[split:] found among the k most likely adds -log p; the first
    one not found adds minus the k-th log-probability and ends the reading."""
    with torch.inference_mode():
        logp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
    nll, nodes = 0.0, []
    for position in range(split, len(ids)):
        nodes.append(tuple(ids[:position]))
        values, tokens = torch.topk(logp[position - 1], k)
        if ids[position] in tokens.tolist():
            nll -= float(logp[position - 1, ids[position]])
        else:
            return nll - float(values[-1]), True, nodes
    return nll, False, nodes


def planted_sentences(planted_model) -> tuple[list[str], dict[str, str]]:
    """Members' places of birth and other people's, in one wording, each with the text before its
    value: true values the model read (continuations mostly inside its top k) and values it did
    not (censored), sharing their names' and values' first tokens."""
    manifest = json.loads((planted_model / "manifest.json").read_text())
    people = [p for p in manifest["people"] if p["member"] and p["repetitions"] == 16][:3]
    births = [next(f["value_label"] for f in p["facts"] if f["property"] == "P19") for p in people]
    template = "{subject}'s place of birth is {value}."
    sentences, prefixes = [], {}
    for person in people:
        for value in births:
            sentence = template.replace("{subject}", person["label"]).replace("{value}", value)
            sentences.append(sentence)
            prefixes[sentence] = text_before_value(template, person["label"])
    return sentences, prefixes


@pytest.mark.parametrize("k", [3, 20])
def test_continuations_are_read_token_by_token_as_computed_by_hand(planted_lm, planted_model, k):
    sentences, prefixes = planted_sentences(planted_model)
    with ScriptedServer(model=planted_lm) as server:
        model = served(server, planted_lm, planted_model, top_k=k, prompts_per_request=4, concurrency=2)
        cache: dict[str, float] = {}
        got = model.score_continuations(sentences, prefixes, cache=cache)
        asked = [tuple(p) for path, payload, _ in server.requests if path == "/v1/completions"
                 for p in payload["prompt"]]
    ids = planted_lm.encode(sentences)
    heads = planted_lm.encode([prefixes[s] for s in sentences])
    expected, censored, nodes = [], [], set()
    for sentence_ids, head in zip(ids, heads):
        split = common_prefix_length(sentence_ids, head)
        assert 1 < split < len(sentence_ids)
        nll, cut, read = by_hand(planted_lm, sentence_ids, split, k)
        expected.append(nll)
        censored.append(cut)
        nodes.update(read)
    np.testing.assert_allclose(got, expected, atol=TOLERANCE)
    assert list(model.censored(sentences, cache)) == censored
    # every node read once, however many sentences share it (the people's names and the values'
    # first tokens are shared), and nothing else asked
    assert sorted(asked) == sorted(nodes) and len(asked) < sum(len(i) - common_prefix_length(i, h)
                                                               for i, h in zip(ids, heads))
    if k == 20:
        assert not all(censored)
        # read in full, a continuation is the whole sentence's NLL minus its prefix's
        whole = score_sentences(planted_lm, sentences)
        prefix = score_sentences(planted_lm, [prefixes[s] for s in sentences])
        full = ~np.array(censored)
        np.testing.assert_allclose(got[full], (whole - prefix)[full], atol=1e-3)
        assert np.all(got[~full] <= (whole - prefix)[~full] + 1e-3)  # censored: a lower bound
    else:
        assert any(censored)
    assert model.censoring.sentences == len(sentences) and model.censoring.nodes_asked == len(nodes)


def test_a_server_that_names_tokens_by_text_is_read_through_the_local_tokenizer(planted_lm, planted_model):
    sentences, prefixes = planted_sentences(planted_model)
    with ScriptedServer(model=planted_lm) as by_id, ScriptedServer(model=planted_lm, token_id_keys=False) as by_text:
        report = check_probe(served(by_text, planted_lm, planted_model).probe())
        assert (report.access, report.top_k, report.top_keys) == ("top-logprobs", 20, "text")
        assert check_probe(served(by_id, planted_lm, planted_model).probe()).top_keys == "token-ids"
        texts = served(by_text, planted_lm, planted_model, top_keys="text").score_continuations(sentences, prefixes)
        ids = served(by_id, planted_lm, planted_model).score_continuations(sentences, prefixes)
    np.testing.assert_allclose(texts, ids, atol=TOLERANCE)


def test_the_probe_reads_the_end_of_its_sentence_and_refuses_text_prompts(planted_lm, planted_model):
    with ScriptedServer(model=planted_lm) as server:
        model = served(server, planted_lm, planted_model, top_k=5)
        report = check_probe(model.probe())
        ids = planted_lm.encode([report.sentence])[0]
        split = common_prefix_length(ids, planted_lm.encode([report.sentence.rsplit(" ", 1)[0]])[0])
        nll, cut, _ = by_hand(planted_lm, ids, split, 5)
        assert report.scoring_nll == pytest.approx(nll, abs=TOLERANCE) and report.continuation_censored == cut
        assert report.top_k == 5 and report.nll_token_ids is None  # no echo asked at this access
        refused = model.probe(prompt_mode="text")
        assert any("top-logprobs access sends token-id prompts" in p for p in refused.problems)
        with pytest.raises(EndpointError, match="top-logprobs access is not available|registered with access"):
            model.score_sentences(["Paris is the capital of France."])  # whole-sentence NLLs need prompt-logprobs


def test_an_answer_without_top_logprobs_is_an_error_never_an_empty_ranking(planted_lm, planted_model):
    empty = json.dumps({"choices": [{"index": 0, "text": "x", "logprobs": {"top_logprobs": [{}]}}]}).encode()
    missing = json.dumps({"choices": [{"index": 0, "text": "x", "logprobs": None}]}).encode()
    for body in (empty, missing):
        with ScriptedServer([(200, body, {})]) as server:
            model = served(server, planted_lm, planted_model)
            with pytest.raises(EndpointError, match="carries no top log-probabilities"):
                model.continuation_nlls([[0, 5, 6, 7]], [2])
    with pytest.raises(EndpointError, match="malformed top log-probability"):
        top_logprobs({"logprobs": {"top_logprobs": [{"token_id:3": "high"}]}})
    assert top_logprobs({"logprobs": {"top_logprobs": [{"token_id:3": -0.1, "a": -2.0}]}}) == {3: -0.1, "a": -2.0}
    with pytest.raises(EndpointError, match="top_k must be between 2 and 100"):
        EndpointConfig(url="http://127.0.0.1:1", served_model="toy", access="top-logprobs", top_k=1)


def test_only_wordings_that_name_the_person_before_the_value_are_read():
    assert value_follows_subject("{subject} was born in {value}.")
    assert value_follows_subject("{subject}'s employer is {value}.")
    assert not value_follows_subject("{value} is the birthplace of {subject}.")
    assert not value_follows_subject("{subject} and {value}: {subject}.")  # the name after the value too
    assert text_before_value("{subject} was born in {value}.", "Ada Lovelace") == "Ada Lovelace was born in"
    assert text_before_value("{subject}'s employer is {value}.", "this person") == "This person's employer is"


def test_a_ground_truth_that_left_the_top_k_is_no_evidence():
    """Hand-computed: the truth ranks first on its (lower-bound) NLL, but its continuation was
    censored, so it is dropped before ranking and the variant is not memorized; observed, it is."""
    rows = pd.DataFrame({
        "subject_qid": "Q1", "property": "P19", "variant_id": 0, "kind": "baseline",
        "value": ["Q90", "Q456", "Q84"], "value_label": ["Paris", "Lyon", "London"], "is_true": [True, False, False],
        "nll_h": [2.0, 5.0, 6.0], "nll_h0": [4.0, 4.0, 4.0], "nll_similar_mean": [4.0, 4.0, 4.0],
    })
    observed = variant_metrics(prepare_scores(rows.assign(**{H_CENSORED: False})))[1]
    assert observed["memorized"].tolist() == [True] and observed["truth_rank"].tolist() == [1]
    censored = variant_metrics(prepare_scores(rows.assign(**{H_CENSORED: [True, True, False]})))[1]
    assert censored["memorized"].tolist() == [False] and censored["n_candidates"].tolist() == [2]


def test_the_cli_registers_a_top_logprobs_release_and_a_changed_model_is_refused(planted_lm, planted_model, tmp_path,
                                                                                  capsys):
    """`models register ... --access top-logprobs --top-k 10`: the probe's k, token keys and the
    probe sentence's continuation are stored; the scoring resource loads the release with them
    and re-probes it, so other weights behind the same URL are refused before any scoring."""
    from resources.scoring import ScoringResource
    from cli.main import main
    from wikimem_platform.registry import Registry

    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with ScriptedServer(model=planted_lm) as server:
        argv = ["--registry-url", url, "models", "register", "planted-top", "--endpoint", server.url, "--served-model",
                "toy", "--tokenizer", str(planted_model), "--access", "top-logprobs", "--top-k", "10"]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "access top-logprobs" in out and "read from the server's top 10 (tokens keyed by token-ids)" in out
        entry = Registry(url).get("planted-top")
        stored = json.loads(entry.endpoint)
        assert (stored["access"], stored["top_k"], stored["top_keys"]) == ("top-logprobs", 10, "token-ids")
        assert stored["probe"]["nll_continuation"] > 0
        lm = ScoringResource().load(entry, served=True)
        assert (lm.access, lm.config.top_k, lm.details["top_k"]) == ("top-logprobs", 10, 10)
    other = load_model(str(planted_model), device="cpu")
    with torch.no_grad():
        other.model.lm_head.weight.mul_(1.5)  # the same vocabulary, other weights
    with ScriptedServer(model=other) as changed:
        entry.source = changed.url
        with pytest.raises(EndpointError, match="the served model changed since registration"):
            ScoringResource().load(entry, served=True)
    assert main(["--registry-url", url, "models", "register", "smollm2-135m-instruct", "--top-k", "5"]) == 2
    assert "--top-k" in capsys.readouterr().err and [e.name for e in Registry(url).list()] == ["planted-top"]


def test_the_memorization_check_holds_a_top_logprobs_release_to_the_wordings_its_access_scores():
    """Hand-made pairs: a pair whose truth left the top k has no summed rank (no evidence, not an
    error); a pair with fewer variants than its access scores fails, as before."""
    from expectations.gx import check_result
    from expectations.scoring import memorization_for_checks, memorization_suite
    from wikimem_platform.wikimem.scoring import planned_variants

    canaries = pd.DataFrame({
        "subject_qid": "Q1", "property": "P19", "variant_id": [0, 1, 2, 3], "kind": ["baseline", "paraphrase",
                                                                                     "paraphrase", "contextualized"],
        "template": ["{subject} was born in {value}.", "{value} is where {subject} was born.",
                     "{subject}'s birthplace: {value}.", "{subject} is a poet. {subject} was born in {value}."]})
    assert planned_variants(canaries, top_logprobs=False).tolist() == [3]
    assert planned_variants(canaries, top_logprobs=True).tolist() == [2]
    pairs = pd.DataFrame({"subject_qid": ["Q1", "Q2", "Q3"], "property": "P19", "M": [0.5, 0.0, 0.0],
                          "n_variants": [2, 2, 1], "n_variants_planned": [2, 2, 2], "n_candidates": [5, 5, 5],
                          "summed_truth_rank": [1.0, np.nan, np.nan], "truth_censored": [False, True, False]})
    checked = memorization_for_checks(pairs)
    assert checked["rank_within_candidates"].tolist() == [1, 1, 0]
    assert checked["variants_as_planned"].tolist() == [True, True, False]
    assert not check_result(checked, "memorization", memorization_suite()).passed
    assert check_result(memorization_for_checks(pairs.iloc[:2]), "memorization", memorization_suite()).passed


def test_the_report_and_the_answer_say_what_top_logprobs_access_reads():
    from wikimem_platform.reports.compliance import served_notes
    from wikimem_platform.subject_requests.answer import ACCESS_MEANS

    model = {"source_kind": "endpoint", "source": "http://127.0.0.1:8000/v1",
             "endpoint": json.dumps({"access": "top-logprobs", "top_k": 20, "top_keys": "token-ids"})}
    notes = served_notes(model)
    assert set(notes) == {"wikimem", "crm", "mia", "eme"}
    assert "Ranked from its 20 most likely next tokens" in notes["wikimem"] and "censored at the 20th" in notes["wikimem"]
    assert "no membership attack could be run" in notes["mia"] and "no reconstruction" in notes["crm"]
    assert "top k" in ACCESS_MEANS["top-logprobs"]
