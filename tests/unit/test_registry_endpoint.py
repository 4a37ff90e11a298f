"""Endpoint releases: `wikimem models register NAME --endpoint URL ...` probes the server and
stores the release (the key's variable name, never the key) or refuses with the numbers and
stores nothing; a stored endpoint release is scored through the server at the scoring seam, with
the NLL engine's meaning. Against a real HTTP server on 127.0.0.1 that answers as a toy LM whose
log-probabilities are known (`tests.support.endpoint_server`); vLLM itself is
`tests/e2e/test_endpoint_audit.py`."""

from __future__ import annotations

import json
import socket

import pandas as pd
import pytest

from resources.scoring import ScoringResource
from tests.support.endpoint_server import ScriptedServer, toy_nll
from cli.main import main
from wikimem_platform.lm.endpoint import EndpointError, EndpointModel
from wikimem_platform.lm.loading import ModelLoadError
from wikimem_platform.registry import Registry, RegistryError
from wikimem_platform.wikimem.scoring import expand_canaries, score_canaries, ShardStore


@pytest.fixture
def registry_url(tmp_path):
    return f"sqlite:///{tmp_path / 'registry.db'}"


def register_argv(registry_url, url, tokenizer_dir, *extra):
    return ["--registry-url", registry_url, "models", "register", "toy-served", "--endpoint", url,
            "--served-model", "toy", "--tokenizer", tokenizer_dir, *extra]


def test_an_endpoint_is_probed_then_registered_with_the_key_variable_name_only(registry_url, smollm2, monkeypatch, capsys):
    monkeypatch.setenv("TOY_SERVER_KEY", "k-secret-4711")
    with ScriptedServer(tokenizer=smollm2.tokenizer) as server:
        argv = register_argv(registry_url, f"{server.url}/v1", smollm2.details["load_dir"], "--api-key-env", "TOY_SERVER_KEY")
        assert main(argv) == 0
    assert {headers.get("Authorization") for _, _, headers in server.requests} == {"Bearer k-secret-4711"}
    entry = Registry(registry_url).get("toy-served")
    assert (entry.key, entry.source_kind, entry.source) == ("toy-served@1", "endpoint", f"{server.url}/v1")
    assert "k-secret-4711" not in entry.model_dump_json()
    stored = json.loads(entry.endpoint)
    assert (stored["served_model"], stored["access"], stored["api_key_env"]) == ("toy", "prompt-logprobs", "TOY_SERVER_KEY")
    ids = smollm2.encode(["Paris is the capital of France."])[0]
    assert stored["probe"]["local_token_count"] == len(ids) and stored["probe"]["text_token_count"] == len(ids) - 1
    assert stored["probe"]["nll_token_ids"] == pytest.approx(toy_nll(ids))
    out = capsys.readouterr().out
    assert "registered toy-served@1" in out and "note: text prompts do not align (7 tokens vs 8" in out


def test_a_server_that_is_down_at_registration_is_refused_and_nothing_is_stored(registry_url, smollm2, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert main(register_argv(registry_url, f"http://127.0.0.1:{port}", smollm2.details["load_dir"])) == 2
    err = capsys.readouterr().err
    assert f"endpoint: endpoint http://127.0.0.1:{port}/v1/models: gave up after 2 attempt(s): cannot connect" in err
    assert "nothing was registered" in err
    assert Registry(registry_url).list() == []


def test_a_tokenizer_that_is_not_the_servers_is_refused_with_the_numbers(registry_url, smollm2, gemma3, capsys):
    with ScriptedServer(tokenizer=gemma3.tokenizer) as server:
        assert main(register_argv(registry_url, server.url, smollm2.details["load_dir"])) == 2
    assert "the local tokenizer" in capsys.readouterr().err
    assert Registry(registry_url).list() == []
    with ScriptedServer(tokenizer=gemma3.tokenizer) as server, pytest.raises(RegistryError, match="is not the server's") as refused:
        Registry(registry_url).register_endpoint("toy-served", server.url, "toy", tokenizer=smollm2.details["load_dir"])
    assert refused.value.field == "endpoint"
    assert Registry(registry_url).list() == []


def test_endpoint_options_without_an_endpoint_and_an_endpoint_without_a_served_model_are_user_errors(registry_url, capsys):
    base = ["--registry-url", registry_url, "models", "register"]
    assert main([*base, "smollm2-135m-instruct", "--served-model", "x"]) == 2
    assert main([*base, "toy-served", "--endpoint", "http://127.0.0.1:9"]) == 2
    assert main([*base, "toy-served", "--endpoint", "ftp://host", "--served-model", "x"]) == 2
    err = capsys.readouterr().err
    assert "go with --endpoint URL" in err and "needs --served-model" in err and "must start with http://" in err
    assert Registry(registry_url).list() == []


CANARIES = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "variant_id": 0, "kind": "baseline",
                          "template": "{subject}'s occupation is {value}.", "subject": "Ilse Marwitz",
                          "subject_generic": "This person", "subject_similar": ["Esli Marwitz", "Ilse Ztiwram"]}])
CANDIDATES = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "value": v, "value_label": v, "is_true": v == "journalist"}
                           for v in ("journalist", "baker", "pilot")])


def test_an_endpoint_release_is_scored_through_its_server_at_the_scoring_seam(registry_url, smollm2, tmp_path):
    with ScriptedServer(tokenizer=smollm2.tokenizer) as server:
        entry = Registry(registry_url).register_endpoint("toy-served", server.url, "toy", tokenizer=smollm2.details["load_dir"])
        with pytest.raises(ModelLoadError, match=r"toy-served@1 is served at .* this step needs the model's weights"):
            ScoringResource().load(entry)  # the MIA pass, CRM generation, ...: never a wrong number
        lm = ScoringResource(endpoint_concurrency=3, endpoint_timeout_seconds=30).load(entry, served=True)
        assert isinstance(lm, EndpointModel) and lm.fingerprint.startswith("endpoint:")
        assert (lm.config.concurrency, lm.config.timeout_seconds, lm.config.tokenizer) == (3, 30, smollm2.details["load_dir"])
        with pytest.raises(ModelLoadError, match=r"endpoint_concurrency must be >= 0 \(0: from the server\)"):
            ScoringResource(endpoint_concurrency=-1).validate()
        scores, report = score_canaries(lm, CANARIES, CANDIDATES, ShardStore(tmp_path / "shards"), log=lambda m: None)
        sent = len(server.requests)
        again, reused = score_canaries(lm, CANARIES, CANDIDATES, ShardStore(tmp_path / "shards"), log=lambda m: None)
    rows = expand_canaries(CANARIES, CANDIDATES)
    by_hand = lambda sentences: [toy_nll(smollm2.encode([s])[0]) for s in sentences]  # noqa: E731
    assert scores["nll_h"].tolist() == pytest.approx(by_hand(rows["sentence_h"]))
    assert scores["nll_h0"].tolist() == pytest.approx(by_hand(rows["sentence_h0"]))
    assert [list(x) for x in scores["nll_similar"]] == [pytest.approx(by_hand(s)) for s in rows["sentences_similar"]]
    assert report.precision == "endpoint:prompt-logprobs" and report.sentences_distinct == 12
    assert (reused.shards_reused, len(server.requests)) == (1, sent)  # a finished shard sends nothing again
    assert again["nll_h"].tolist() == scores["nll_h"].tolist()


def test_a_run_that_fails_mid_shard_sends_again_only_what_was_not_persisted(smollm2, tmp_path, monkeypatch):
    from wikimem_platform.lm.endpoint import EndpointConfig
    from wikimem_platform.wikimem import scoring
    from wikimem_platform.wikimem.scoring import SentenceNllCache

    monkeypatch.setattr(scoring, "ENDPOINT_CHUNK_SENTENCES", 4)  # 12 sentences: 3 chunks of 2 requests
    cache = SentenceNllCache(tmp_path / "nll.sqlite")

    def served(url):
        return EndpointModel(EndpointConfig(url=url, served_model="toy", concurrency=1, prompts_per_request=2),
                             tokenizer=smollm2.tokenizer)

    with ScriptedServer(tokenizer=smollm2.tokenizer, fail_after=3) as server:
        with pytest.raises(EndpointError, match="quota exhausted"):
            score_canaries(served(server.url), CANARIES, CANDIDATES, ShardStore(tmp_path / "shards"),
                           sentence_cache=cache, log=lambda m: None)
    assert len(cache) == 4 and not list((tmp_path / "shards").glob("*.parquet"))  # one chunk kept, no half shard
    with ScriptedServer(tokenizer=smollm2.tokenizer) as server:
        lm = served(server.url)
        scores, report = score_canaries(lm, CANARIES, CANDIDATES, ShardStore(tmp_path / "shards"),
                                        sentence_cache=cache, log=lambda m: None)
    assert (lm.client.usage.prompts, report.sentences_computed, len(cache)) == (8, 8, 12)
    rows = expand_canaries(CANARIES, CANDIDATES)
    assert scores["nll_h"].tolist() == pytest.approx([toy_nll(smollm2.encode([s])[0]) for s in rows["sentence_h"]])


def test_a_server_that_serves_other_weights_than_at_registration_is_refused_before_scoring(registry_url, smollm2):
    with ScriptedServer(tokenizer=smollm2.tokenizer) as server:
        entry = Registry(registry_url).register_endpoint("toy-served", server.url, "toy", tokenizer=smollm2.details["load_dir"])
    with ScriptedServer(tokenizer=smollm2.tokenizer) as same:
        entry.source = same.url  # the same model behind another address: accepted
        assert isinstance(ScoringResource().load(entry, served=True), EndpointModel)
    with ScriptedServer(tokenizer=smollm2.tokenizer, logprob_shift=-0.01) as other:
        entry.source = other.url
        with pytest.raises(EndpointError, match=r"the served model changed since registration: .* NLL \d+\.\d+ nats in 8 tokens now, "
                                                r"\d+\.\d+ in 8 when registered"):
            ScoringResource().load(entry, served=True)


def test_a_server_refusing_token_ids_is_registered_with_aligned_text_prompts_and_scored_through_them(
        registry_url, smollm2, tmp_path, capsys):
    """Registered through the CLI on a server that refuses token-id prompts: the probe stores
    prompt mode "text" and the start token's text as prefix; the release then scores through
    text prompts with the token ids' NLLs (by hand), and is re-probed in that mode before scoring."""
    with ScriptedServer(tokenizer=smollm2.tokenizer, token_ids=False) as server:
        assert main(register_argv(registry_url, server.url, smollm2.details["load_dir"])) == 0
        out = capsys.readouterr().out
        assert "scoring sends text prompts, '<|endoftext|>' in front: 8 tokens" in out
        entry = Registry(registry_url).get("toy-served")
        stored = json.loads(entry.endpoint)
        assert (stored["prompt_mode"], stored["text_prefix"]) == ("text", "<|endoftext|>")
        lm = ScoringResource().load(entry, served=True)
        assert (lm.config.prompt_mode, lm.config.text_prefix) == ("text", "<|endoftext|>")
        before = len(server.requests)  # the probes' token-id tries (refused) come before
        scores, _ = score_canaries(lm, CANARIES, CANDIDATES, ShardStore(tmp_path / "shards"), log=lambda m: None)
        scoring = [p for path, payload, _ in server.requests[before:] if path == "/v1/completions" for p in payload["prompt"]]
        assert scoring and all(isinstance(p, str) and p.startswith("<|endoftext|>") for p in scoring)
    rows = expand_canaries(CANARIES, CANDIDATES)
    assert scores["nll_h"].tolist() == pytest.approx([toy_nll(smollm2.encode([s])[0]) for s in rows["sentence_h"]])
    with ScriptedServer(tokenizer=smollm2.tokenizer, token_ids=False, logprob_shift=-0.01) as other:
        entry.source = other.url
        with pytest.raises(EndpointError, match="the served model changed since registration"):
            ScoringResource().load(entry, served=True)


def test_a_generation_release_keeps_token_id_completions(registry_url, smollm2):
    """Generation access: completions go as token ids with the start-token rule (the local
    model's completions); the registration stores no text prompt mode for it."""
    with ScriptedServer(tokenizer=smollm2.tokenizer) as server:
        entry = Registry(registry_url).register_endpoint("said", server.url, "toy", access="generation",
                                                         tokenizer=smollm2.details["load_dir"])
        stored = json.loads(entry.endpoint)
        assert "prompt_mode" not in stored and stored["probe"]["prompt_mode"] == "token-ids"
        lm = ScoringResource().load(entry, served=True)
        lm.complete_greedy(["Paris is the capital of"], max_new_tokens=2)
    assert server.requests[-1][1]["prompt"] == [smollm2.encode(["Paris is the capital of"])[0]]


VLLM_METRICS = (  # the shape of vLLM 0.32's gauge (labels abridged)
    '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n'
    'vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",num_cpu_blocks="None",'
    'num_gpu_blocks="1456",prefix_caching_hash_algo="sha256"} 1.0\n')


def test_requests_in_flight_follow_the_servers_kv_cache_unless_set(registry_url, smollm2):
    """Default (0): from the server's limits — vLLM's KV cache of 1,456 blocks x 16 = 23,296
    tokens over 16 prompts x 32 tokens a request = 45 requests; a server that publishes no KV
    cache size gets the default 8; a number set in the resource is used as it is."""
    with ScriptedServer(tokenizer=smollm2.tokenizer, metrics=VLLM_METRICS) as server:
        entry = Registry(registry_url).register_endpoint("toy-served", server.url, "toy", tokenizer=smollm2.details["load_dir"])
        lm = ScoringResource().load(entry, served=True)
        assert lm.config.concurrency == lm.client.config.concurrency == 23_296 // (16 * 32) == 45
        assert lm.details["concurrency"].startswith("45 (the server's KV cache holds 23,296 tokens, 512 per request")
        assert ScoringResource(endpoint_concurrency=3).load(entry, served=True).config.concurrency == 3
        small = ScoringResource(endpoint_prompts_per_request=2000)._load(entry)  # one request fills the cache
        assert small.config.concurrency == 1
    with ScriptedServer(tokenizer=smollm2.tokenizer) as server:  # no /metrics
        entry.source = server.url
        lm = ScoringResource().load(entry, served=True)
        assert lm.config.concurrency == 8 and "publishes no KV cache size" in lm.details["concurrency"]
