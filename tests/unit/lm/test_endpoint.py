"""The OpenAI-compatible client's own logic, against a real HTTP server on 127.0.0.1
(`tests.support.endpoint_server`) that answers from a script (429 then 200, malformed JSON, no
log-probabilities, an altered echo) or like a toy language model whose log-probabilities are a
known function of the token ids, so every NLL here is computed by hand. The real vLLM server is
`tests/e2e/test_endpoint_audit.py`."""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest

from wikimem_platform.lm.endpoint import (
    check_probe,
    EndpointConfig,
    EndpointError,
    EndpointModel,
    ordered_choices,
    prompt_nll,
    RetryPolicy,
)
from tests.support.endpoint_server import ScriptedServer, toy_logprob, toy_nll

FAST_RETRY = RetryPolicy(attempts=3, base_seconds=0.0, max_seconds=0.0)


def config(url: str, **overrides) -> EndpointConfig:
    return EndpointConfig(url=url, served_model="toy", retry=FAST_RETRY, **overrides)


# --------------------------------------------------------------------------- parsing

def test_prompt_nll_sums_the_prompt_tokens_after_the_first_and_leaves_out_the_generated_one():
    choice = {"logprobs": {"token_logprobs": [None, -1.0, -2.5, -7.0]}}  # 3 prompt tokens + 1 generated
    assert prompt_nll(choice, 3) == pytest.approx(3.5)


def test_a_choice_without_log_probabilities_or_with_too_few_is_an_error_not_a_zero():
    with pytest.raises(EndpointError, match="no prompt log-probabilities"):
        prompt_nll({"text": "x", "logprobs": None}, 3, "http://h")
    with pytest.raises(EndpointError, match="echoed 2 token log-probabilities for a prompt of 3"):
        prompt_nll({"logprobs": {"token_logprobs": [None, -1.0]}}, 3, "http://h")
    with pytest.raises(EndpointError, match="missing or non-numeric"):
        prompt_nll({"logprobs": {"token_logprobs": [None, None, -1.0, -1.0]}}, 3, "http://h")


def test_choices_come_back_in_prompt_order_and_a_missing_one_is_refused():
    body = {"choices": [{"index": 1, "text": "b"}, {"index": 0, "text": "a"}]}
    assert [c["text"] for c in ordered_choices(body, 2, "u")] == ["a", "b"]
    with pytest.raises(EndpointError, match="1 choices for 2 prompts"):
        ordered_choices({"choices": [{"index": 0}]}, 2, "u")


def test_backoff_doubles_up_to_its_cap_and_honours_retry_after():
    policy = RetryPolicy(attempts=6, base_seconds=0.5, max_seconds=3.0)
    assert [policy.delay(k) for k in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(1, "2") == 2.0
    assert policy.delay(1, "120") == 3.0
    assert policy.delay(2, "Wed, 21 Oct 2026 07:28:00 GMT") == 1.0


def test_the_config_stores_the_key_variable_name_never_a_key():
    with pytest.raises(EndpointError, match="NAME of an environment variable"):
        EndpointConfig(url="http://h:1", served_model="m", api_key_env="sk-live-1234")
    with pytest.raises(EndpointError, match="unknown access level"):
        EndpointConfig(url="http://h:1", served_model="m", access="top-secret")
    stored = EndpointConfig(url="http://h:1/v1", served_model="m", api_key_env="MY_KEY").stored()
    assert stored == {"served_model": "m", "access": "prompt-logprobs", "api_key_env": "MY_KEY", "tokenizer": None}
    back = EndpointConfig.from_stored("http://h:1/v1", json.dumps(stored), concurrency=3)
    assert (back.base_url, back.api_key_env, back.concurrency) == ("http://h:1", "MY_KEY", 3)


# --------------------------------------------------------------------------- against a real local server

def test_a_429_is_retried_after_its_retry_after_and_then_scored(monkeypatch):
    slept = []
    script = [(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "0"})]
    with ScriptedServer(script) as server:
        model = EndpointModel(config(server.url))
        model.client._sleep = slept.append
        nll = model.score_token_ids([[0, 10, 20, 30]])
    assert nll[0] == pytest.approx(toy_nll([0, 10, 20, 30]))
    assert slept == [0.0]
    assert (model.client.usage.requests, model.client.usage.retries, model.client.usage.prompt_tokens) == (2, 1, 4)


def test_a_5xx_burst_longer_than_the_policy_fails_with_the_last_status():
    script = [(503, b'{"message": "overloaded"}', {})] * 3
    with ScriptedServer(script) as server:
        model = EndpointModel(config(server.url))
        with pytest.raises(EndpointError, match=r"gave up after 3 attempt\(s\): HTTP 503: overloaded"):
            model.score_token_ids([[0, 1, 2]])


def test_malformed_json_is_an_error_naming_the_url():
    with ScriptedServer([(200, b'{"choices": [', {})]) as server:
        model = EndpointModel(config(server.url))
        with pytest.raises(EndpointError, match=rf"endpoint {server.url}/v1/completions: malformed response: not JSON"):
            model.score_token_ids([[0, 1, 2]])


def test_a_refusal_is_not_retried_and_says_what_the_server_said():
    with ScriptedServer([(400, b'{"error": {"message": "logprobs not allowed"}}', {})]) as server:
        model = EndpointModel(config(server.url))
        with pytest.raises(EndpointError, match="refused the request .HTTP 400: logprobs not allowed") as raised:
            model.score_token_ids([[0, 1, 2]])
    assert raised.value.status == 400 and len(server.requests) == 1


def test_a_server_without_prompt_log_probabilities_is_refused():
    body = json.dumps({"choices": [{"index": 0, "text": "x", "logprobs": None}]}).encode()
    with ScriptedServer([(200, body, {})]) as server:
        with pytest.raises(EndpointError, match="no prompt log-probabilities"):
            EndpointModel(config(server.url)).score_token_ids([[0, 1, 2]])


def test_a_server_that_alters_token_id_prompts_is_refused():
    with ScriptedServer(echo_extra_token=True) as server:
        with pytest.raises(EndpointError, match="echoed 4 prompt tokens for a token-id prompt of 3: it altered"):
            EndpointModel(config(server.url)).score_token_ids([[0, 1, 2]])


def test_a_server_that_is_down_fails_after_the_retries_with_a_clear_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    model = EndpointModel(config(f"http://127.0.0.1:{port}"))
    with pytest.raises(EndpointError, match=r"gave up after 3 attempt\(s\): cannot connect"):
        model.score_token_ids([[0, 1, 2]])


def test_many_sentences_go_concurrently_in_batches_and_come_back_in_order():
    rng = np.random.default_rng(0)
    prompts = [[0, *rng.integers(1, 500, size=rng.integers(1, 12)).tolist()] for _ in range(37)]
    prompts += prompts[:5]  # repeats are sent once
    seen = []
    with ScriptedServer(reverse_choices=True) as server:
        model = EndpointModel(config(server.url, concurrency=4, prompts_per_request=3))
        nll = model.score_token_ids(prompts, progress=lambda done, total: seen.append((done, total)))
    assert nll == pytest.approx([toy_nll(p) for p in prompts])
    assert len(server.requests) == 13 and model.client.usage.prompts == 37  # ceil(37 / 3)
    assert max(seen) == (37, 37)


def test_the_token_budget_is_refused_before_it_is_exceeded():
    with ScriptedServer() as server:
        model = EndpointModel(config(server.url, max_prompt_tokens=10, prompts_per_request=1, concurrency=1))
        model.score_token_ids([[0, 1, 2, 3, 4, 5]])
        with pytest.raises(EndpointError, match="token budget reached: 6 prompt tokens sent, 6 more"):
            model.score_token_ids([[0, 9, 8, 7, 6, 5]])


def test_the_key_is_sent_from_the_named_variable_and_a_missing_variable_is_named(monkeypatch):
    with ScriptedServer() as server:
        model = EndpointModel(config(server.url, api_key_env="WIKIMEM_TEST_KEY"))
        monkeypatch.delenv("WIKIMEM_TEST_KEY", raising=False)
        with pytest.raises(EndpointError, match="WIKIMEM_TEST_KEY is not set"):
            model.score_token_ids([[0, 1]])
        monkeypatch.setenv("WIKIMEM_TEST_KEY", "k-123")
        model.score_token_ids([[0, 1, 2]])
    assert server.requests[-1][2]["Authorization"] == "Bearer k-123"


def test_generation_access_gives_no_scores():
    with ScriptedServer() as server:
        model = EndpointModel(config(server.url, access="generation"))
        with pytest.raises(EndpointError, match="registered with access 'generation'"):
            model.score_token_ids([[0, 1, 2]])
        assert model.complete_greedy(["Paris is the capital of"], max_new_tokens=3) == ["x"]


# --------------------------------------------------------------------------- the registration probe

@pytest.fixture(scope="module")
def smollm2_tokenizer(smollm2):
    return smollm2.tokenizer


def test_the_probe_sends_token_ids_and_measures_what_text_prompts_would_lose(smollm2, smollm2_tokenizer):
    """The toy server tokenizes text without SmolLM2's start token, as vLLM does: the probe
    accepts token-id prompts, and reports the text prompt's missing token and NLL gap."""
    with ScriptedServer(tokenizer=smollm2_tokenizer) as server:
        model = EndpointModel(config(server.url), tokenizer=smollm2_tokenizer)
        report = check_probe(model.probe())
        ids = smollm2.encode([report.sentence])[0]
        assert ids[0] == 0 and report.start_token_ids == [0]
        assert (report.local_token_count, report.token_ids_echoed, report.text_token_count) == (len(ids), len(ids), len(ids) - 1)
        assert report.nll_token_ids == pytest.approx(toy_nll(ids))
        assert report.text_nll_gap == pytest.approx(toy_logprob(ids[1]))  # the first real token goes unscored
        assert report.server_tokenizer_agrees is True
        # text prompts, asked for: the start token's text in front makes the server's tokens the rule's
        text = check_probe(model.probe(prompt_mode="text"))
        assert (text.prompt_mode, text.text_prefix, text.aligned_text_token_count) == ("text", "<|endoftext|>", len(ids))
        assert text.nll_aligned_text == pytest.approx(report.nll_token_ids) == text.scoring_nll


def test_a_server_refusing_token_ids_is_sent_text_that_its_tokenize_aligns(smollm2, smollm2_tokenizer):
    """Auto mode: token ids refused (HTTP 400), so the probe finds the text the server's /tokenize
    turns into the start-token rule's ids; scoring then sends that text and every NLL is the
    token ids' (by hand), and a server that tokenizes a scored prompt differently is refused."""
    sentences = ["Paris is the capital of France.", "Ada Lovelace was a mathematician.", "Paris is the capital of France."]
    with ScriptedServer(tokenizer=smollm2_tokenizer, token_ids=False) as server:
        model = EndpointModel(config(server.url), tokenizer=smollm2_tokenizer)
        report = check_probe(model.probe())
        assert report.nll_token_ids is None and any("token-id prompts refused" in n for n in report.notes)
        assert (report.prompt_mode, report.text_prefix) == ("text", "<|endoftext|>")
        served = EndpointModel(config(server.url, prompt_mode="text", text_prefix=report.text_prefix),
                               tokenizer=smollm2_tokenizer)
        nll = served.score_sentences(sentences)
        sent = [p for path, payload, _ in server.requests[-1:] for p in payload["prompt"]]
        assert sent == ["<|endoftext|>" + s for s in sentences[:2]]  # each distinct sentence once, as text
        assert nll.tolist() == pytest.approx([toy_nll(smollm2.encode([s])[0]) for s in sentences])
        with pytest.raises(EndpointError, match="refuses token-id prompts .prompt mode 'text'"):
            served.score_token_ids([[0, 1, 2]])
        assert served.fingerprint != EndpointModel(config(server.url), tokenizer=smollm2_tokenizer).fingerprint
    with ScriptedServer(tokenizer=smollm2_tokenizer, token_ids=False, echo_extra_token=True) as server:
        served = EndpointModel(config(server.url, prompt_mode="text", text_prefix="<|endoftext|>"), tokenizer=smollm2_tokenizer)
        with pytest.raises(EndpointError, match="echoed 9 prompt tokens for a text prompt tokenized locally into 8: it altered"):
            served.score_sentences(sentences[:1])


def test_text_prompts_without_tokenize_or_with_another_tokenization_are_refused(smollm2_tokenizer, gemma3):
    with ScriptedServer(tokenizer=smollm2_tokenizer, token_ids=False, has_tokenize=False) as server:
        model = EndpointModel(config(server.url), tokenizer=smollm2_tokenizer)
        with pytest.raises(EndpointError, match=r"server makes 7 tokens .* the start-token rule 8 .*no /tokenize to check"):
            check_probe(model.probe())
    # a server whose tokenizer splits the sentence otherwise: no prefix aligns, both tries shown
    with ScriptedServer(tokenizer=gemma3.tokenizer, token_ids=False) as server:
        model = EndpointModel(config(server.url), tokenizer=smollm2_tokenizer)
        with pytest.raises(EndpointError, match=r"no text the server tokenizes into the start-token rule's 8 ids .*"
                                                r"'Paris is the capital of France.': \d+ tokens; '<\|endoftext\|>Paris"):
            check_probe(model.probe())


def test_the_probe_refuses_a_local_tokenizer_that_is_not_the_servers(smollm2_tokenizer, gemma3):
    with ScriptedServer(tokenizer=gemma3.tokenizer) as server:
        model = EndpointModel(config(server.url), tokenizer=smollm2_tokenizer)
        with pytest.raises(EndpointError, match="the local tokenizer .* is not the server's"):
            check_probe(model.probe())


def test_the_probe_refuses_a_model_the_server_does_not_serve():
    with ScriptedServer() as server:
        model = EndpointModel(EndpointConfig(url=server.url, served_model="other", retry=FAST_RETRY))
        with pytest.raises(EndpointError, match="serves no model 'other' .it serves: toy"):
            model.probe()
